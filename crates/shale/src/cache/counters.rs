//! Per-shard cache counters and the summed [`CacheStats`] snapshot.
//!
//! Thread-safety: every counter is an atomic updated with `Relaxed`
//! ordering; each shard has its own cache-line-aligned block so that threads
//! working on different shards do not contend. A read sums the shards one
//! after the other, so a snapshot taken during traffic is not atomic across
//! counters (fine for statistics).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use super::Priority;

/// Counters of one shard.
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct ShardCounters {
    hits: [AtomicU64; 3],
    misses: [AtomicU64; 3],
    bytes_inserted: AtomicU64,
    bytes_evicted: AtomicU64,
    /// Charge held by the shard (mirrors the shard's own accounting so that
    /// `usage()` reads without a lock).
    pub(crate) usage: AtomicUsize,
    /// Entries held by the shard.
    pub(crate) entries: AtomicUsize,
}

impl ShardCounters {
    #[inline]
    pub(crate) fn hit(&self, pri: Priority) {
        self.hits[pri.index()].fetch_add(1, Relaxed);
    }

    #[inline]
    pub(crate) fn miss(&self, pri: Priority) {
        self.misses[pri.index()].fetch_add(1, Relaxed);
    }

    #[inline]
    pub(crate) fn inserted(&self, charge: usize) {
        self.bytes_inserted.fetch_add(charge as u64, Relaxed);
    }

    #[inline]
    pub(crate) fn evicted(&self, charge: usize) {
        self.bytes_evicted.fetch_add(charge as u64, Relaxed);
    }

    /// Adds this shard's counters to `s`.
    pub(crate) fn add_to(&self, s: &mut CacheStats) {
        for i in 0..3 {
            s.hits[i] += self.hits[i].load(Relaxed);
            s.misses[i] += self.misses[i].load(Relaxed);
        }
        s.bytes_inserted += self.bytes_inserted.load(Relaxed);
        s.bytes_evicted += self.bytes_evicted.load(Relaxed);
        s.usage += self.usage.load(Relaxed);
        s.entries += self.entries.load(Relaxed);
    }
}

/// A snapshot of a cache's counters, summed over shards.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct CacheStats {
    /// Lookups that found the key, indexed by [`Priority::index`].
    pub hits: [u64; 3],
    /// Lookups that did not, indexed by [`Priority::index`].
    pub misses: [u64; 3],
    /// Charge of every value accepted by `insert` (including ones dropped at
    /// once because nothing could be evicted and they were not pinned).
    pub bytes_inserted: u64,
    /// Charge of every value evicted to make room (erase is not counted).
    pub bytes_evicted: u64,
    /// Charge held now.
    pub usage: usize,
    /// Entries held now.
    pub entries: usize,
}

impl CacheStats {
    /// Hits for one priority.
    pub(crate) fn hits_for(&self, pri: Priority) -> u64 {
        self.hits[pri.index()]
    }

    /// Misses for one priority.
    pub(crate) fn misses_for(&self, pri: Priority) -> u64 {
        self.misses[pri.index()]
    }

    /// Hits over all priorities.
    pub(crate) fn total_hits(&self) -> u64 {
        self.hits.iter().sum()
    }

    /// Misses over all priorities.
    pub(crate) fn total_misses(&self) -> u64 {
        self.misses.iter().sum()
    }
}

#[cfg(test)]
mod tests;
