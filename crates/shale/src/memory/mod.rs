//! One memory ledger per DB, and the memory budget it enforces
//! (`Options::memory_budget`, RocksDB's write buffer manager with cache
//! charging, generalised).
//!
//! The owners of memory charge it here themselves, by part:
//! - [`Part::Memtables`]: arena chunks, memtable filters and range
//!   tombstones (charged by the memtable and its arena while they live);
//! - [`Part::TableReaders`]: what an open table reader keeps outside the
//!   block cache (its index, index search keys and filter; charged at open,
//!   released when the last user of the reader drops it);
//! - [`Part::Buffers`]: IO buffers of background work (compaction
//!   readahead, the pending index and filter of a table being built).
//!
//! The block cache is the fourth consumer and the only elastic one: with a
//! budget, its capacity is set to `budget - charged` (never above the
//! configured `cache_size`), so it evicts unpinned blocks as the other parts
//! grow and takes the room back when they shrink. The memtables' share is
//! held for them even while they use less: a cache that grew into the room
//! of every flushed memtable and gave it back as the next one filled would
//! churn the allocator's heap, whose freed holes stay resident (measured:
//! RSS 1.5x the budget at 64 MiB), where a steady cache keeps RSS at the
//! budget. The write path reads the
//! ledger to flush memtables early and, as a last resort, to stop writers
//! (`db/write/room.rs`). The sum can pass the budget only by blocks pinned by
//! readers and by what a single allocation adds before the cache shrinks.
//!
//! Thread-safety: every method takes `&self`; a read of the sum is a
//! snapshot of each part, not of the sum. Resizing the
//! cache is serialised by a mutex and happens only when the target moved by
//! a granule (1/128 of the budget), so charging is a counter update almost
//! always.
//!
//! Invariant: every charge is released exactly once ([`Charge`] releases on
//! drop; [`Meter`] users pair `add` with `sub`), so with no memtable, no
//! open table and no job the ledger reads zero.

pub(crate) mod pages;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

/// What a charge is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// Memtables of every column family.
    Memtables = 0,
    /// Open table readers' own memory.
    TableReaders = 1,
    /// IO buffers of flushes and compactions.
    Buffers = 2,
}

/// Sets the block cache's capacity (given by the DB at open).
type CacheResizer = Box<dyn Fn(usize) + Send + Sync>;

/// The elastic block cache, as the ledger sees it.
struct ElasticCache {
    /// The configured `cache_size`: the capacity never goes above it.
    max: usize,
    resize: CacheResizer,
    /// The capacity last set (read without the lock for the fast check).
    current: AtomicUsize,
    /// Serialises resizes; bytes the cache shrank by since the heap was
    /// last trimmed.
    lock: Mutex<usize>,
}

/// The DB's memory ledger (see the module comment).
pub(crate) struct Ledger {
    parts: [AtomicUsize; 3],
    /// The budget in bytes; 0: none (the ledger only counts).
    limit: usize,
    /// The smallest move of the cache's target capacity that resizes it.
    granule: usize,
    /// Bytes held for the memtables whether they use them or not (their
    /// share of the budget): the cache gives room back only for memtables
    /// beyond it. Set again when families come and go or their write
    /// buffers are resized ([`Ledger::set_memtable_reserve`]).
    memtable_reserve: AtomicUsize,
    cache: OnceLock<ElasticCache>,
}

impl Ledger {
    /// A ledger enforcing `limit` bytes (0: counting only).
    #[cfg(test)]
    pub(crate) fn new(limit: usize) -> Arc<Ledger> {
        Ledger::with_memtable_reserve(limit, 0)
    }

    /// A ledger enforcing `limit` bytes that holds `memtable_reserve` of
    /// them for the memtables.
    pub(crate) fn with_memtable_reserve(limit: usize, memtable_reserve: usize) -> Arc<Ledger> {
        Arc::new(Ledger {
            parts: Default::default(),
            limit,
            granule: (limit / 128).max(64 << 10),
            memtable_reserve: AtomicUsize::new(memtable_reserve.min(limit)),
            cache: OnceLock::new(),
        })
    }

    /// Holds `bytes` (at most the budget) for the memtables from now on,
    /// and resizes the block cache if its room moved by a granule.
    pub(crate) fn set_memtable_reserve(&self, bytes: usize) {
        self.memtable_reserve
            .store(bytes.min(self.limit), Ordering::SeqCst);
        self.rebalance();
    }

    /// Bytes held for the memtables.
    pub(crate) fn memtable_reserve(&self) -> usize {
        self.memtable_reserve.load(Ordering::SeqCst)
    }

    /// The budget (0: none).
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes charged to `part` now.
    pub(crate) fn get(&self, part: Part) -> usize {
        self.parts[part as usize].load(Ordering::SeqCst)
    }

    /// Bytes charged to every part (the block cache not included).
    #[cfg(test)]
    pub(crate) fn charged(&self) -> usize {
        self.parts.iter().map(|p| p.load(Ordering::SeqCst)).sum()
    }

    /// Bytes of the budget left to the block cache: neither charged to a
    /// part nor held for the memtables (0 without a budget).
    pub(crate) fn room(&self) -> usize {
        let memtables = self.get(Part::Memtables).max(self.memtable_reserve());
        let others = self.get(Part::TableReaders) + self.get(Part::Buffers);
        self.limit.saturating_sub(memtables + others)
    }

    /// A handle that charges `part`.
    pub(crate) fn meter(self: &Arc<Self>, part: Part) -> Meter {
        Meter {
            ledger: Arc::clone(self),
            part,
        }
    }

    /// Gives the block cache to the budget: from now on its capacity is
    /// `min(max, room())`, set through `resize` (called at once). Without a
    /// budget, or a second time, does nothing.
    pub(crate) fn attach_cache(&self, max: usize, resize: impl Fn(usize) + Send + Sync + 'static) {
        if self.limit == 0 {
            return;
        }
        let cache = ElasticCache {
            max,
            resize: Box::new(resize),
            current: AtomicUsize::new(usize::MAX),
            lock: Mutex::new(0),
        };
        if self.cache.set(cache).is_ok() {
            self.rebalance();
        }
    }

    /// The capacity the block cache should have now (`None` when the
    /// budget does not manage it).
    #[cfg(test)]
    pub(crate) fn cache_target(&self) -> Option<usize> {
        let c = self.cache.get()?;
        Some(c.max.min(self.room()))
    }

    fn add(&self, part: Part, bytes: usize) {
        if bytes == 0 {
            return;
        }
        self.parts[part as usize].fetch_add(bytes, Ordering::SeqCst);
        self.rebalance();
    }

    fn sub(&self, part: Part, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let prev = self.parts[part as usize].fetch_sub(bytes, Ordering::SeqCst);
        debug_assert!(prev >= bytes, "{part:?} released more than charged");
        self.rebalance();
    }

    /// Resizes the cache when its target moved by a granule or more. The
    /// counters and `current` are sequentially consistent: a charge made
    /// while another thread resizes is either seen by that thread's recheck
    /// or sees its new `current` (and resizes again itself), so the cache
    /// never rests at a stale target.
    fn rebalance(&self) {
        let Some(c) = self.cache.get() else { return };
        let target = || c.max.min(self.room());
        let moved = |t: usize| c.current.load(Ordering::SeqCst).abs_diff(t) >= self.granule;
        if !moved(target()) {
            return;
        }
        let mut shrunk = c.lock.lock();
        loop {
            let t = target();
            if !moved(t) {
                break;
            }
            let was = c.current.load(Ordering::SeqCst);
            (c.resize)(t);
            c.current.store(t, Ordering::SeqCst);
            if t < was && was != usize::MAX {
                *shrunk += was - t;
            }
        }
        // What the cache evicted is free heap among live blocks: hand it
        // back once 1/64 of the budget was evicted this way (outside the
        // lock: other threads' resizes do not wait for the trim).
        if *shrunk >= (self.limit / 64).max(1 << 20) {
            *shrunk = 0;
            drop(shrunk);
            pages::release_free_heap();
        }
    }
}

/// Charges one part of a ledger (cheap to clone).
#[derive(Clone)]
pub(crate) struct Meter {
    ledger: Arc<Ledger>,
    part: Part,
}

impl Meter {
    /// Charges `bytes`.
    pub(crate) fn add(&self, bytes: usize) {
        self.ledger.add(self.part, bytes);
    }

    /// Releases `bytes` charged before by `add`.
    pub(crate) fn sub(&self, bytes: usize) {
        self.ledger.sub(self.part, bytes);
    }

    /// A charge of zero bytes to this meter's part.
    pub(crate) fn charge(&self) -> Charge {
        Charge {
            meter: self.clone(),
            bytes: 0,
        }
    }
}

/// Bytes charged while this value lives: set to the owner's current size
/// with [`Charge::set`], released on drop.
pub(crate) struct Charge {
    meter: Meter,
    bytes: usize,
}

impl Charge {
    /// Makes the charge `bytes` (charging or releasing the difference).
    pub(crate) fn set(&mut self, bytes: usize) {
        if bytes > self.bytes {
            self.meter.add(bytes - self.bytes);
        } else if bytes < self.bytes {
            self.meter.sub(self.bytes - bytes);
        }
        self.bytes = bytes;
    }

    /// The bytes charged.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.meter.sub(self.bytes);
    }
}

#[cfg(test)]
mod tests;
