//! A concatenating iterator over the files of one sorted level (L1+), whose
//! key ranges are sorted and disjoint. Files are opened lazily, one at a time.
//!
//! Requires: `LevelFiles::largest(i)` ascending in internal-key order and the
//! files' ranges disjoint.

use std::cmp::Ordering;

use super::InternalIterator;
use crate::base::compare_internal;
use crate::error::{Error, Result};

/// The files of a level, as the level iterator sees them.
pub(crate) trait LevelFiles: Send {
    /// Number of files.
    fn len(&self) -> usize;
    /// Largest internal key of file `i`.
    fn largest(&self, i: usize) -> &[u8];
    /// Opens an iterator over file `i`.
    fn open(&self, i: usize) -> Result<Box<dyn InternalIterator>>;
}

pub(crate) struct LevelIterator<F: LevelFiles> {
    files: F,
    idx: usize,
    cur: Option<Box<dyn InternalIterator>>,
    err: Option<Error>,
}

impl<F: LevelFiles> LevelIterator<F> {
    pub(crate) fn new(files: F) -> Self {
        LevelIterator {
            files,
            idx: 0,
            cur: None,
            err: None,
        }
    }

    fn open(&mut self, i: usize) -> bool {
        self.idx = i;
        if i >= self.files.len() {
            self.cur = None;
            return false;
        }
        match self.files.open(i) {
            Ok(it) => {
                self.cur = Some(it);
                true
            }
            Err(e) => {
                self.err.get_or_insert(e);
                self.cur = None;
                false
            }
        }
    }

    fn cur_valid(&self) -> bool {
        self.cur.as_ref().is_some_and(|c| c.valid())
    }

    /// Steps forward over exhausted files.
    fn skip_forward(&mut self) {
        while !self.cur_valid() {
            if let Some(c) = &self.cur {
                if let Err(e) = c.status() {
                    self.err.get_or_insert(e);
                    self.cur = None;
                    return;
                }
            }
            if self.cur.is_none() || self.idx + 1 >= self.files.len() {
                self.cur = None;
                return;
            }
            let next = self.idx + 1;
            if !self.open(next) {
                return;
            }
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_first();
            }
        }
    }

    /// Steps backward over exhausted files.
    fn skip_backward(&mut self) {
        while !self.cur_valid() {
            if let Some(c) = &self.cur {
                if let Err(e) = c.status() {
                    self.err.get_or_insert(e);
                    self.cur = None;
                    return;
                }
            }
            if self.cur.is_none() || self.idx == 0 {
                self.cur = None;
                return;
            }
            let prev = self.idx - 1;
            if !self.open(prev) {
                return;
            }
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_last();
            }
        }
    }

    /// Index of the first file whose largest key is >= target.
    fn find(&self, target: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.files.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if compare_internal(self.files.largest(mid), target) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

impl<F: LevelFiles> InternalIterator for LevelIterator<F> {
    fn valid(&self) -> bool {
        self.err.is_none() && self.cur_valid()
    }

    fn seek_to_first(&mut self) {
        if self.open(0) {
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        let n = self.files.len();
        if n > 0 && self.open(n - 1) {
            if let Some(c) = self.cur.as_mut() {
                c.seek_to_last();
            }
        } else {
            self.cur = None;
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let i = self.find(target);
        if self.open(i) {
            if let Some(c) = self.cur.as_mut() {
                c.seek(target);
            }
        }
        self.skip_forward();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        let i = self.find(target);
        let i = i.min(self.files.len().saturating_sub(1));
        if self.files.len() > 0 && self.open(i) {
            if let Some(c) = self.cur.as_mut() {
                c.seek_for_prev(target);
            }
        } else {
            self.cur = None;
        }
        self.skip_backward();
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if let Some(c) = self.cur.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if let Some(c) = self.cur.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        self.cur.as_ref().map_or(&[], |c| c.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.clone());
        }
        match &self.cur {
            Some(c) => c.status(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
