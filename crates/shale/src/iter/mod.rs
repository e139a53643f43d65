//! The one internal iterator trait, shared by block, table, memtable, level,
//! merging and DB iterators.
//!
//! Keys are internal keys (`user_key ++ trailer`) ordered by
//! `base::compare_internal`. An iterator that hits an error becomes invalid
//! and reports the error from `status()`; it never panics on bad bytes.

use crate::error::Result;

pub(crate) mod error;
pub(crate) mod level;
pub(crate) mod merging;
pub(crate) mod prefix_gate;

/// A bidirectional cursor over internal keys.
pub(crate) trait InternalIterator: Send {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Positions on the first entry.
    fn seek_to_first(&mut self);
    /// Positions on the last entry.
    fn seek_to_last(&mut self);
    /// Positions on the first entry with key >= `target` (an internal key).
    fn seek(&mut self, target: &[u8]);
    /// Positions on the last entry with key <= `target` (an internal key).
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous entry. Requires `valid()`.
    fn prev(&mut self);
    /// The current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// The current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// Boxed iterators are iterators too, so combinators take `Box<dyn ...>`.
impl<I: InternalIterator + ?Sized> InternalIterator for Box<I> {
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        (**self).seek_for_prev(target)
    }
    fn next(&mut self) {
        (**self).next()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}
