//! Prefix-filtered seeks: [`PrefixGated`] wraps one source (a memtable or
//! a table iterator) and, while its [`PrefixGate`] is open, answers a seek
//! whose target's prefix the source's filter rules out by becoming invalid
//! without touching the source.
//!
//! Requires (the user iterator's contract, `db::db_iter`): the gate is open
//! only while the user iterator returns nothing but keys of one prefix `P`
//! and every seek it (or the merging iterator below it) issues targets a
//! key in `P`'s run or beyond it in the direction of travel. Since the keys
//! of one prefix form one contiguous run (`base::PrefixExtractor`), what a
//! gated seek drops is never a key of `P`: either the source has no key of
//! `P`, or every dropped key lies past `P`'s run.
//!
//! `seek_to_first` / `seek_to_last` are never filtered.
//!
//! Thread-safety: the gate is shared by the iterators of one user iterator
//! (one thread at a time); relaxed atomics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::base::{extract_user_key, PrefixExtractor, TRAILER_LEN};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;

/// Shared switch of a user iterator's gated sources.
#[derive(Debug)]
pub(crate) struct PrefixGate {
    extractor: PrefixExtractor,
    open: AtomicBool,
}

impl PrefixGate {
    /// A closed gate for `extractor`.
    pub(crate) fn new(extractor: PrefixExtractor) -> Arc<PrefixGate> {
        Arc::new(PrefixGate {
            extractor,
            open: AtomicBool::new(false),
        })
    }

    /// Opens (filtering seeks) or closes the gate.
    pub(crate) fn set_open(&self, open: bool) {
        self.open.store(open, Ordering::Relaxed);
    }

    /// The extractor.
    pub(crate) fn extractor(&self) -> PrefixExtractor {
        self.extractor
    }
}

/// False when the source holds no key with this prefix.
pub(crate) type PrefixCheck = Box<dyn Fn(&[u8]) -> Result<bool> + Send>;

/// See the module comment.
pub(crate) struct PrefixGated<I> {
    inner: I,
    gate: Arc<PrefixGate>,
    check: PrefixCheck,
    /// The last seek was ruled out: invalid until the next positioning.
    out: bool,
    err: Option<Error>,
}

impl<I: InternalIterator> PrefixGated<I> {
    pub(crate) fn new(inner: I, gate: Arc<PrefixGate>, check: PrefixCheck) -> Self {
        PrefixGated {
            inner,
            gate,
            check,
            out: false,
            err: None,
        }
    }

    /// True when a seek to internal key `target` may skip the source.
    fn ruled_out(&mut self, target: &[u8]) -> bool {
        self.err = None;
        if !self.gate.open.load(Ordering::Relaxed) || target.len() < TRAILER_LEN {
            return false;
        }
        let Some(p) = self.gate.extractor.prefix(extract_user_key(target)) else {
            return false;
        };
        match (self.check)(p) {
            Ok(may) => !may,
            Err(e) => {
                self.err = Some(e);
                true
            }
        }
    }
}

impl<I: InternalIterator> InternalIterator for PrefixGated<I> {
    fn valid(&self) -> bool {
        !self.out && self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.out = false;
        self.err = None;
        self.inner.seek_to_first();
    }
    fn seek_to_last(&mut self) {
        self.out = false;
        self.err = None;
        self.inner.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.out = self.ruled_out(target);
        if !self.out {
            self.inner.seek(target);
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.out = self.ruled_out(target);
        if !self.out {
            self.inner.seek_for_prev(target);
        }
    }
    fn next(&mut self) {
        debug_assert!(!self.out);
        self.inner.next();
    }
    fn prev(&mut self) {
        debug_assert!(!self.out);
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.clone());
        }
        if self.out {
            return Ok(());
        }
        self.inner.status()
    }
}
