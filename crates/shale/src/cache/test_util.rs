//! Test helpers shared by the cache tests: reproducible seeds and a value
//! type that counts its constructions and drops.
//!
//! Thread-safety: `Tracker` counters are atomics; `Tracked` values may be
//! cloned and dropped on any thread.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use super::CacheKey;

/// A seed for a randomized test: `SHALE_SEED` if set, else from the clock.
/// Printed so that a failure can be replayed.
pub(crate) fn seed(test: &str) -> u64 {
    let s = std::env::var("SHALE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(42)
        });
    println!("{test}: SHALE_SEED={s}");
    s
}

/// Counts values made and dropped.
#[derive(Default)]
pub(crate) struct Tracker {
    made: AtomicUsize,
    dropped: AtomicUsize,
}

impl Tracker {
    pub(crate) fn new() -> Arc<Tracker> {
        Arc::new(Tracker::default())
    }

    /// A new cache value carrying `key`.
    pub(crate) fn make(self: &Arc<Self>, key: CacheKey) -> Arc<Tracked> {
        self.made.fetch_add(1, SeqCst);
        Arc::new(Tracked {
            key,
            tracker: self.clone(),
        })
    }

    pub(crate) fn made(&self) -> usize {
        self.made.load(SeqCst)
    }

    pub(crate) fn dropped(&self) -> usize {
        self.dropped.load(SeqCst)
    }

    /// Values alive now.
    pub(crate) fn live(&self) -> usize {
        self.made() - self.dropped()
    }
}

/// A value that remembers its key and reports its drop.
pub(crate) struct Tracked {
    pub(crate) key: CacheKey,
    tracker: Arc<Tracker>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.tracker.dropped.fetch_add(1, SeqCst);
        assert!(
            before < self.tracker.made.load(SeqCst),
            "more drops than values made"
        );
    }
}
