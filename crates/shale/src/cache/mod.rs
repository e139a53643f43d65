//! The block cache: decoded SST blocks (and later blob values) kept in memory,
//! keyed by `(file number, offset)` and charged against a byte capacity.
//!
//! Two implementations share one API ([`BlockCache`]):
//! - [`lru::LruCache`]: sharded LRU with RocksDB's three priority pools
//!   (high / low / bottom). Every operation takes its shard's mutex.
//! - [`clock::ClockCache`]: a fixed-size open-addressing table in the spirit
//!   of RocksDB's HyperClockCache. Lookups take no lock (atomics only);
//!   inserts and erases take a per-shard mutex.
//!
//! The cache is generic over the cached value `V` so that it does not depend
//! on `sst/`; the engine instantiates it with `Arc<sst::Block>`.
//!
//! Pinning: a lookup returns a clone of `V` (an `Arc`). An entry is *pinned*
//! while some clone of its value is alive outside the cache
//! ([`CacheValue::is_pinned`], `Arc::strong_count > 1`). Pinned entries are
//! never evicted (as in RocksDB, where referenced handles are not evictable);
//! their charge stays in `usage()`, so when everything is pinned `usage()` may
//! exceed `capacity()` unless `strict_capacity_limit` is set.
//!
//! Insert of a key that is already present keeps the existing entry and drops
//! the new value: a block under a given `(file, offset)` never changes, and
//! file numbers are never reused.
//!
//! Thread-safety: every type here is `Send + Sync` for `V: CacheValue`; all
//! methods take `&self`. Counters are per-shard atomics summed on read, so
//! [`CacheStats`] is a consistent-enough snapshot, not an atomic one.

// Only exercised by the (ignored) cache benchmark table test.
#[cfg(test)]
mod bench;
mod clock;
mod counters;
mod lru;
#[cfg(test)]
mod test_util;

pub(crate) use clock::ClockCache;
pub(crate) use counters::CacheStats;
pub(crate) use lru::LruCache;

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
fn default_shard_bits(capacity: usize) -> u32 {
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

/// The engine's block cache: one of the two implementations.
pub(crate) enum BlockCache<V: CacheValue> {
    /// Sharded LRU with priority pools.
    Lru(LruCache<V>),
    /// Clock cache with lock-free lookups.
    Clock(ClockCache<V>),
}

impl<V: CacheValue> BlockCache<V> {
    /// A sharded LRU cache.
    pub(crate) fn lru(opts: &CacheOptions) -> Self {
        BlockCache::Lru(LruCache::new(opts))
    }

    /// A clock cache.
    pub(crate) fn clock(opts: &CacheOptions) -> Self {
        BlockCache::Clock(ClockCache::new(opts))
    }

    /// Inserts `value` under `key`, charging `charge` bytes. `Err(value)`
    /// when `strict_capacity_limit` is set and no room can be made. If `key`
    /// is present, keeps the existing entry and drops `value`.
    pub(crate) fn insert(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> std::result::Result<(), V> {
        match self {
            BlockCache::Lru(c) => c.insert(key, value, charge, pri),
            BlockCache::Clock(c) => c.insert(key, value, charge, pri),
        }
    }

    /// A clone of the value under `key`. `pri` is the kind of block looked
    /// up; it only selects the hit/miss counters.
    pub(crate) fn lookup(&self, key: &CacheKey, pri: Priority) -> Option<V> {
        match self {
            BlockCache::Lru(c) => c.lookup(key, pri),
            BlockCache::Clock(c) => c.lookup(key, pri),
        }
    }

    /// Bytes of charge currently held (pinned entries included).
    pub(crate) fn usage(&self) -> usize {
        match self {
            BlockCache::Lru(c) => c.usage(),
            BlockCache::Clock(c) => c.usage(),
        }
    }

    /// Bytes of charge of pinned entries. Walks every entry: for statistics,
    /// not for hot paths.
    pub(crate) fn pinned_usage(&self) -> usize {
        match self {
            BlockCache::Lru(c) => c.pinned_usage(),
            BlockCache::Clock(c) => c.pinned_usage(),
        }
    }

    /// The configured capacity.
    pub(crate) fn capacity(&self) -> usize {
        match self {
            BlockCache::Lru(c) => c.capacity(),
            BlockCache::Clock(c) => c.capacity(),
        }
    }

    /// Sets the capacity; unpinned entries are evicted to fit (the clock
    /// cache's slot table keeps the size it was built with).
    pub(crate) fn set_capacity(&self, capacity: usize) {
        match self {
            BlockCache::Lru(c) => c.set_capacity(capacity),
            BlockCache::Clock(c) => c.set_capacity(capacity),
        }
    }

    /// Counters summed over shards.
    pub(crate) fn stats(&self) -> CacheStats {
        match self {
            BlockCache::Lru(c) => c.stats(),
            BlockCache::Clock(c) => c.stats(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn default_shard_bits_follow_rocksdb() {
        assert_eq!(default_shard_bits(0), 0);
        assert_eq!(default_shard_bits(512 << 10), 0);
        assert_eq!(default_shard_bits(1 << 20), 1);
        assert_eq!(default_shard_bits((1 << 20) - 1), 0);
        assert_eq!(default_shard_bits(8 << 20), 4);
        assert_eq!(default_shard_bits(32 << 20), 6);
        assert_eq!(default_shard_bits(1 << 40), 6);
        let o = CacheOptions {
            num_shard_bits: 3,
            ..CacheOptions::default()
        };
        assert_eq!(o.shard_bits(), 3);
        assert_eq!(CacheOptions::per_shard(10, 2), 3);
    }

    #[test]
    fn defaults_match_rocksdb_lru_cache_options() {
        let o = CacheOptions::default();
        assert_eq!(o.num_shard_bits, -1);
        assert!(!o.strict_capacity_limit);
        assert_eq!(o.high_pri_pool_ratio, 0.5);
        assert_eq!(o.low_pri_pool_ratio, 0.0);
        assert!(o.validate().is_ok());
    }

    #[test]
    fn validate_rejects_bad_ratios_and_bits() {
        let bad = [
            CacheOptions {
                high_pri_pool_ratio: 1.5,
                ..CacheOptions::default()
            },
            CacheOptions {
                high_pri_pool_ratio: 0.6,
                low_pri_pool_ratio: 0.6,
                ..CacheOptions::default()
            },
            CacheOptions {
                low_pri_pool_ratio: -0.1,
                ..CacheOptions::default()
            },
            CacheOptions {
                num_shard_bits: 21,
                ..CacheOptions::default()
            },
            CacheOptions {
                estimated_entry_charge: 0,
                ..CacheOptions::default()
            },
        ];
        for o in bad {
            assert!(o.validate().is_err(), "{o:?}");
        }
    }

    #[test]
    fn hash_spreads_block_offsets_over_shards() {
        // Typical keys: a few files, offsets every ~4 KiB.
        let mut per_shard = [0usize; 64];
        let mut seen = HashSet::new();
        for f in 1..5u64 {
            for i in 0..4096u64 {
                let h = hash_key(&CacheKey::new(f, i * 4133));
                seen.insert(h);
                per_shard[shard_of(h, 6)] += 1;
            }
        }
        assert_eq!(seen.len(), 4 * 4096);
        let (min, max) = (
            per_shard.iter().min().copied(),
            per_shard.iter().max().copied(),
        );
        // 256 expected per shard.
        assert!(
            min.unwrap_or(0) > 180 && max.unwrap_or(0) < 340,
            "{min:?} {max:?}"
        );
    }

    #[test]
    fn arc_is_pinned_while_cloned() {
        let a = Arc::new(5u32);
        assert!(!a.is_pinned());
        let b = a.clone();
        assert!(a.is_pinned());
        drop(b);
        assert!(!a.is_pinned());
    }
}
