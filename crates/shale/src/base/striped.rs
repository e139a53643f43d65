//! Counters striped across cache lines, so threads that count at the same
//! time (two readers probing the same table) do not bounce one line between
//! cores on every operation; in the spirit of RocksDB's `CoreLocalArray`.
//!
//! Each thread is given a stripe once (round robin) and always updates that
//! stripe's copy; readers sum the stripes. Sums are not atomic snapshots
//! (each stripe is read on its own), which statistics do not need.
//!
//! Thread-safety: `Striped<T>` is `Sync` when `T` is; the stripe choice is a
//! thread-local read.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes per counter set: enough for the few threads that read one table
/// at once; more would only cost memory per open table.
const STRIPES: usize = 4;

/// One stripe, alone on its (pair of adjacent) cache lines.
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

/// `STRIPES` copies of `T`; see the module comment.
#[derive(Default)]
pub(crate) struct Striped<T> {
    cells: [Padded<T>; STRIPES],
}

fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    MINE.with(|m| {
        if m.get() == usize::MAX {
            m.set(NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES);
        }
        m.get()
    })
}

impl<T> Striped<T> {
    /// This thread's copy.
    #[inline]
    pub(crate) fn local(&self) -> &T {
        &self.cells[stripe()].0
    }

    /// Every copy, to be summed.
    pub(crate) fn all(&self) -> impl Iterator<Item = &T> {
        self.cells.iter().map(|c| &c.0)
    }
}

/// A `u64` counter on stripes: `add` touches only this thread's stripe,
/// `get` sums them (for the write path's statistics, bumped once per write
/// group by every writer).
#[derive(Default)]
pub(crate) struct Counter(Striped<AtomicU64>);

impl Counter {
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.local().fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.all().map(|c| c.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests;
