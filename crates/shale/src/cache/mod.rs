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
mod base;
#[cfg(test)]
mod bench;
mod clock;
mod counters;
mod lru;
#[cfg(test)]
mod test_util;

pub(crate) use base::{
    hash_key, shard_of, CacheKey, CacheOptions, CacheValue, KeyHashBuilder, Priority,
};
pub(crate) use clock::ClockCache;
pub(crate) use counters::CacheStats;
pub(crate) use lru::LruCache;

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
    use super::base::default_shard_bits;
    use super::*;
    use std::collections::HashSet;
    use std::sync::Arc;

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
