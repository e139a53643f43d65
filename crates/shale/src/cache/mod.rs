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
mod tests;
