//! What every cache implementation shares: the key ([`CacheKey`]) and its
//! hash and shard, the priority pools ([`Priority`]), the cached-value
//! contract ([`CacheValue`]: cloning is cheap, pinning is observable) and
//! the options ([`CacheOptions`]).

use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::error::{Error, Result};

/// Identity of a cached block: the SST (or blob) file number and the byte
/// offset of the block in that file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct CacheKey {
    /// File number of the table the block belongs to.
    pub file_number: u64,
    /// Offset of the block within that file.
    pub offset: u64,
}

impl CacheKey {
    /// Builds a key.
    pub(crate) fn new(file_number: u64, offset: u64) -> CacheKey {
        CacheKey {
            file_number,
            offset,
        }
    }
}

/// Eviction priority of an entry (RocksDB's `Cache::Priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Priority {
    /// Index and filter blocks: evicted last.
    High,
    /// Data blocks.
    Low,
    /// Blob values: evicted first.
    Bottom,
}

impl Priority {
    /// All priorities, in the order of [`Priority::index`].
    #[cfg(test)]
    pub(crate) const ALL: [Priority; 3] = [Priority::High, Priority::Low, Priority::Bottom];

    /// 0 for High, 1 for Low, 2 for Bottom (index into per-priority counters).
    pub(crate) fn index(self) -> usize {
        match self {
            Priority::High => 0,
            Priority::Low => 1,
            Priority::Bottom => 2,
        }
    }
}

/// A value the cache can hold: cheap to clone, shareable across threads, and
/// able to tell whether a clone of it is alive outside the cache.
pub(crate) trait CacheValue: Clone + Send + Sync {
    /// True while a clone of this value is held outside the cache. Called by
    /// the cache on its own copy; pinned entries are not evicted.
    fn is_pinned(&self) -> bool;

    /// Takes the cache's own copy of a value it evicted (not pinned), after
    /// the shard lock is released where the cache has one. The default
    /// drops it; blobs keep their buffer for reuse (`blob::recycle`).
    fn evicted(self)
    where
        Self: Sized,
    {
    }
}

impl<T: ?Sized + Send + Sync> CacheValue for Arc<T> {
    fn is_pinned(&self) -> bool {
        Arc::strong_count(self) > 1
    }
}

/// Options of a block cache (RocksDB's `LRUCacheOptions` /
/// `HyperClockCacheOptions`, same defaults).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CacheOptions {
    /// Total capacity in bytes of charge, split evenly across shards.
    pub capacity: usize,
    /// The cache has `2^num_shard_bits` shards, chosen by key hash. `-1`
    /// (default) picks automatically: shards of at least 512 KiB and at most
    /// 64 shards, as RocksDB does. Values above 20 are clamped to 20.
    pub num_shard_bits: i32,
    /// When true, an insert that cannot make room (everything else pinned)
    /// fails and gives the value back. Default false: the insert succeeds and
    /// usage may exceed capacity by pinned entries.
    pub strict_capacity_limit: bool,
    /// LRU only: share of each shard's capacity for the high-priority pool
    /// (index/filter blocks and entries that were hit). Default 0.5
    /// ("midpoint insertion").
    pub high_pri_pool_ratio: f64,
    /// LRU only: share of each shard's capacity for the low-priority pool.
    /// Default 0.0 (low-priority entries go to the bottom pool).
    pub low_pri_pool_ratio: f64,
    /// Clock only: the expected average charge of an entry; sizes the
    /// fixed hash table (`capacity / estimated_entry_charge / 0.7` slots).
    /// Too high and the table fills before the capacity does (hit rate
    /// suffers); too low and slots waste memory (~48 bytes each). A good
    /// value is the block size. Default 4096.
    pub estimated_entry_charge: usize,
}

impl Default for CacheOptions {
    fn default() -> Self {
        CacheOptions {
            capacity: 32 << 20,
            num_shard_bits: -1,
            strict_capacity_limit: false,
            high_pri_pool_ratio: 0.5,
            low_pri_pool_ratio: 0.0,
            estimated_entry_charge: 4096,
        }
    }
}

impl CacheOptions {
    /// Options with `capacity` bytes and every other field at its default.
    pub(crate) fn with_capacity(capacity: usize) -> CacheOptions {
        CacheOptions {
            capacity,
            ..CacheOptions::default()
        }
    }

    /// Checks the ratios (each in `[0, 1]`, sum at most 1), the shard bits
    /// (`-1..=20`) and the estimated entry charge (> 0). The constructors
    /// clamp bad values instead of failing; call this at open to reject them.
    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        let ok_ratio = |r: f64| (0.0..=1.0).contains(&r);
        if !ok_ratio(self.high_pri_pool_ratio) || !ok_ratio(self.low_pri_pool_ratio) {
            return bad(format!(
                "cache pool ratios must be in [0, 1]: high {} low {}",
                self.high_pri_pool_ratio, self.low_pri_pool_ratio
            ));
        }
        if self.high_pri_pool_ratio + self.low_pri_pool_ratio > 1.0 {
            return bad(format!(
                "cache pool ratios sum to more than 1: high {} + low {}",
                self.high_pri_pool_ratio, self.low_pri_pool_ratio
            ));
        }
        if !(-1..=MAX_SHARD_BITS).contains(&self.num_shard_bits) {
            return bad(format!(
                "num_shard_bits {} not in -1..=20",
                self.num_shard_bits
            ));
        }
        if self.estimated_entry_charge == 0 {
            return bad("estimated_entry_charge must be > 0".into());
        }
        Ok(())
    }

    /// The number of shard bits to use (resolves `-1`, clamps to 0..=20).
    pub(crate) fn shard_bits(&self) -> u32 {
        if self.num_shard_bits < 0 {
            default_shard_bits(self.capacity)
        } else {
            self.num_shard_bits.min(MAX_SHARD_BITS) as u32
        }
    }

    /// Capacity of one shard when the cache has `2^bits` shards (rounded up,
    /// as RocksDB does).
    pub(crate) fn per_shard(capacity: usize, bits: u32) -> usize {
        let n = 1usize << bits;
        capacity.div_ceil(n)
    }
}

const MAX_SHARD_BITS: i32 = 20;

/// RocksDB's automatic shard count: every shard at least 512 KiB, at most
/// 2^6 = 64 shards.
pub(crate) fn default_shard_bits(capacity: usize) -> u32 {
    const MIN_SHARD_SIZE: usize = 512 << 10;
    const MAX_BITS: u32 = 6;
    let mut bits = 0;
    let mut shards = capacity / MIN_SHARD_SIZE;
    loop {
        shards >>= 1;
        if shards == 0 {
            return bits;
        }
        bits += 1;
        if bits >= MAX_BITS {
            return bits;
        }
    }
}

/// A 64-bit hash of a key. The top bits choose the shard; the low bits are
/// used inside a shard.
#[inline]
pub(crate) fn hash_key(key: &CacheKey) -> u64 {
    fmix64(
        key.file_number.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ fmix64(key.offset ^ 0x2545_F491_4F6C_DD1D),
    )
}

/// MurmurHash3's 64-bit finalizer: a bijective mix with full avalanche.
#[inline]
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Shard index of `hash` for a cache of `2^bits` shards (top bits).
#[inline]
pub(crate) fn shard_of(hash: u64, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        (hash >> (64 - bits)) as usize
    }
}

/// `Hasher` for `HashMap<CacheKey, _>`: mixes the two words `CacheKey`'s
/// derived `Hash` writes. Not DoS-resistant; keys are file numbers and
/// offsets chosen by the engine, not by users.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    #[inline]
    fn write_u64(&mut self, x: u64) {
        self.0 = fmix64(self.0.rotate_left(29) ^ x);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// `BuildHasher` of [`KeyHasher`].
pub(crate) type KeyHashBuilder = BuildHasherDefault<KeyHasher>;
