//! [`ErrorIterator`]: an empty iterator whose status is an error, standing
//! in for an iterator that could not be built (a table that failed to
//! open, a DB that is closing).

use crate::error::{Error, Result};

use super::InternalIterator;

/// An empty iterator that reports an error (a table failed to open).
pub(crate) struct ErrorIterator(pub(crate) Error);

impl InternalIterator for ErrorIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _: &[u8]) {}
    fn seek_for_prev(&mut self, _: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        Err(self.0.clone())
    }
}
