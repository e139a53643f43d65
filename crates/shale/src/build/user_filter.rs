//! The user's compaction filter: a hook that sees each key's newest value
//! as flush and compaction rewrite it, and may keep it, remove it or change
//! it (RocksDB's `CompactionFilter`, without its `Decision` variants that
//! skip ranges).
//!
//! Invariant: a snapshot reads the same before and after any flush or
//! compaction. A job asks the filter only about entries newer than the
//! newest snapshot live when it started; a snapshot taken while it runs may
//! read them, so before installing, a job whose filter removed or changed
//! a value that such a snapshot reads discards its outputs and runs again
//! without the filter, and new snapshots wait while a job that filtered
//! installs (`base::snapshots`, `SnapshotList::admit`). The filter may be asked
//! about the same key more than once (each time the key is rewritten, and
//! by a run whose outputs are discarded) and must be deterministic for
//! results to be stable.

use std::fmt;

/// What a [`CompactionFilter`] does with one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterDecision {
    /// Keep the value.
    Keep,
    /// Remove the key: the value becomes a tombstone (which also hides its
    /// older versions, and is dropped itself where nothing lies below).
    Remove,
    /// Replace the value.
    ChangeValue(Vec<u8>),
}

/// A per-key hook run by flush and compaction (see the module comment).
pub trait CompactionFilter: Send + Sync {
    /// The filter's name (in the LOG and the OPTIONS file).
    fn name(&self) -> &str;

    /// Decides for the newest `value` of `key`, being written to `level`
    /// (0 for flushes). Merged values are passed after the merge.
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> FilterDecision;
}

impl fmt::Debug for dyn CompactionFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CompactionFilter({})", self.name())
    }
}

/// Filters compare by name: options are equal when they name the same
/// filter.
impl PartialEq for dyn CompactionFilter {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}
