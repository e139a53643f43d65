//! [`WbwiIterator`]: a cursor over a `WriteBatchWithIndex` laid over a DB
//! cursor (RocksDB's `BaseDeltaIterator`), and [`WbwiRange`], the
//! double-ended Rust iterator made of two of them.
//!
//! The base is a [`DbIterator`] of one family at the read's snapshot (it
//! hides the DB's tombstones and resolves its merges); the delta is the
//! batch's index for that family. Both walk in the same direction; the
//! current key is the smaller (forward) or larger (reverse) of their keys,
//! and its value is what the batch says of it over the base's value
//! (`BatchIndex::resolve`: a put or a deletion in the batch hides the
//! base's value, merges in the batch apply the family's merge operator to
//! it, a range deletion in the batch hides the base's keys it covers). A
//! key whose value comes out deleted is skipped.
//!
//! Invariants, forward: the base is at its first key >= the current key
//! and `delta` is the batch's first key >= it (reverse: last <=); a move
//! in the other direction re-seeks both. Bounds (`iterate_lower_bound`,
//! `iterate_upper_bound`) bound both sides.
//!
//! Thread safety: borrows the batch (which cannot change meanwhile) and
//! owns its base cursor; used by one thread at a time.

use std::ops::Bound;
use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::db::DbIterator;
use crate::error::{Error, Result};
use crate::merge::MergeOperator;

use super::index::{BatchIndex, Below};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// A cursor over a batch with its index, laid over a DB cursor (module
/// docs). Unpositioned when made: call a seek first.
pub struct WbwiIterator<'a> {
    batch: &'a WriteBatch,
    index: &'a BatchIndex,
    cf: u32,
    merge_op: Option<Arc<dyn MergeOperator>>,
    base: DbIterator,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    /// The delta side's key (see the invariants).
    delta: Option<&'a [u8]>,
    dir: Direction,
    valid: bool,
    key: Vec<u8>,
    /// The current value when the batch made it; `None`: the base's.
    value: Option<Vec<u8>>,
    err: Option<Error>,
}

impl<'a> WbwiIterator<'a> {
    /// A cursor over family `cf` of `batch`/`index` laid over `base` (a
    /// cursor of that family bounded by `lower`/`upper`); `err` (a refused
    /// read) makes every positioning invalid and is what `status` says.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        batch: &'a WriteBatch,
        index: &'a BatchIndex,
        cf: u32,
        merge_op: Option<Arc<dyn MergeOperator>>,
        base: DbIterator,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
        err: Option<Error>,
    ) -> Self {
        WbwiIterator {
            batch,
            index,
            cf,
            merge_op,
            base,
            lower,
            upper,
            delta: None,
            dir: Direction::Forward,
            valid: false,
            key: Vec::new(),
            value: None,
            err,
        }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. Requires `valid()`.
    pub fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        &self.key
    }

    /// The current value. Requires `valid()`.
    pub fn value(&self) -> &[u8] {
        debug_assert!(self.valid);
        match &self.value {
            Some(v) => v,
            None => self.base.value(),
        }
    }

    /// The first error met (the base cursor's, a merge that failed, a
    /// refused read), if any. An iterator that met an error is not valid.
    pub fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => self.base.status(),
        }
    }

    /// Positions on the first key >= `key` (and >= the lower bound).
    pub fn seek(&mut self, key: &[u8]) {
        let from = match &self.lower {
            Some(l) if key < l.as_slice() => Bound::Included(l.clone()),
            _ => Bound::Included(key.to_vec()),
        };
        self.base.seek(key);
        self.start_forward(from);
    }

    /// Positions on the last key <= `key` (and < the upper bound).
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        let from = match &self.upper {
            Some(u) if key >= u.as_slice() => Bound::Excluded(u.clone()),
            _ => Bound::Included(key.to_vec()),
        };
        self.base.seek_for_prev(key);
        self.start_reverse(from);
    }

    /// Positions on the first key (>= the lower bound).
    pub fn seek_to_first(&mut self) {
        let from = self.lower.clone().map_or(Bound::Unbounded, Bound::Included);
        self.base.seek_to_first();
        self.start_forward(from);
    }

    /// Positions on the last key (< the upper bound).
    pub fn seek_to_last(&mut self) {
        let from = self.upper.clone().map_or(Bound::Unbounded, Bound::Excluded);
        self.base.seek_to_last();
        self.start_reverse(from);
    }

    /// Moves to the next key. Requires `valid()`.
    pub fn next(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        let k = std::mem::take(&mut self.key);
        if self.dir == Direction::Reverse {
            self.dir = Direction::Forward;
            self.base.seek(&k);
        }
        if self.base.valid() && self.base.key() == k.as_slice() {
            self.base.next();
        }
        self.delta = self
            .index
            .next_key(self.cf, Bound::Excluded(&k), self.upper.as_deref());
        self.settle_forward();
    }

    /// Moves to the previous key. Requires `valid()`.
    pub fn prev(&mut self) {
        debug_assert!(self.valid);
        if !self.valid {
            return;
        }
        let k = std::mem::take(&mut self.key);
        if self.dir == Direction::Forward {
            self.dir = Direction::Reverse;
            self.base.seek_for_prev(&k);
        }
        if self.base.valid() && self.base.key() == k.as_slice() {
            self.base.prev();
        }
        self.delta = self
            .index
            .prev_key(self.cf, Bound::Excluded(&k), self.lower.as_deref());
        self.settle_reverse();
    }

    fn start_forward(&mut self, from: Bound<Vec<u8>>) {
        self.dir = Direction::Forward;
        let from = bound_ref(&from);
        self.delta = self.index.next_key(self.cf, from, self.upper.as_deref());
        self.settle_forward();
    }

    fn start_reverse(&mut self, from: Bound<Vec<u8>>) {
        self.dir = Direction::Reverse;
        let from = bound_ref(&from);
        self.delta = self.index.prev_key(self.cf, from, self.lower.as_deref());
        self.settle_reverse();
    }

    /// From the sides' positions, finds the first visible key forward.
    fn settle_forward(&mut self) {
        loop {
            let Some((k, from_base, from_delta)) = self.candidate(|b, d| b < d) else {
                return;
            };
            if self.load(&k, from_base, from_delta) {
                return;
            }
            if from_base {
                self.base.next();
            }
            if from_delta {
                self.delta =
                    self.index
                        .next_key(self.cf, Bound::Excluded(&k), self.upper.as_deref());
            }
        }
    }

    /// From the sides' positions, finds the first visible key backward.
    fn settle_reverse(&mut self) {
        loop {
            let Some((k, from_base, from_delta)) = self.candidate(|b, d| b > d) else {
                return;
            };
            if self.load(&k, from_base, from_delta) {
                return;
            }
            if from_base {
                self.base.prev();
            }
            if from_delta {
                self.delta =
                    self.index
                        .prev_key(self.cf, Bound::Excluded(&k), self.lower.as_deref());
            }
        }
    }

    /// The next key to consider (the base's when `base_first(base, delta)`
    /// or the delta is done) and which sides hold it; `None` (and the
    /// cursor invalid) when both are done or an error stopped the walk.
    fn candidate(
        &mut self,
        base_first: impl Fn(&[u8], &[u8]) -> bool,
    ) -> Option<(Vec<u8>, bool, bool)> {
        self.valid = false;
        self.value = None;
        if self.err.is_some() {
            return None;
        }
        if !self.base.valid() {
            if let Err(e) = self.base.status() {
                self.err = Some(e);
                return None;
            }
        }
        let b = self.base.valid().then(|| self.base.key());
        match (b, self.delta) {
            (None, None) => None,
            (Some(b), None) => Some((b.to_vec(), true, false)),
            (None, Some(d)) => Some((d.to_vec(), false, true)),
            (Some(b), Some(d)) if b == d => Some((d.to_vec(), true, true)),
            (Some(b), Some(d)) if base_first(b, d) => Some((b.to_vec(), true, false)),
            (Some(_), Some(d)) => Some((d.to_vec(), false, true)),
        }
    }

    /// Makes `k` current if it is visible: true when it is (or when an
    /// error stopped the walk).
    fn load(&mut self, k: &[u8], from_base: bool, from_delta: bool) -> bool {
        let made = if from_delta {
            self.delta_value(k, from_base)
        } else if self.index.range_deleted(self.cf, k) {
            Ok(None)
        } else {
            // The base's entry: read its value now (a blob) so that a
            // failure shows here rather than as an empty value.
            if !self.base.prepare_value() {
                self.err = Some(match self.base.status() {
                    Err(e) => e,
                    Ok(()) => Error::Corruption {
                        file: "<iterator>".into(),
                        offset: 0,
                        what: "base value unreadable".into(),
                    },
                });
                return true;
            }
            self.key = k.to_vec();
            self.valid = true;
            return true;
        };
        match made {
            Ok(Some(v)) => {
                self.key = k.to_vec();
                self.value = Some(v);
                self.valid = true;
                true
            }
            Ok(None) => false,
            Err(e) => {
                self.err = Some(e);
                true
            }
        }
    }

    /// The value of batch key `k` over the base's value (`from_base`: the
    /// base is on `k`); `None` when it is deleted.
    fn delta_value(&self, k: &[u8], from_base: bool) -> Result<Option<Vec<u8>>> {
        let d = self.index.resolve(self.batch, self.cf, k)?;
        let below: Option<&[u8]> = match d.below {
            Below::Value(v) => Some(v),
            Below::Deleted => None,
            Below::Db if from_base => {
                let v = self.base.value();
                if !self.base.valid() {
                    // Its blob could not be read.
                    return self.base.status().map(|()| None);
                }
                Some(v)
            }
            Below::Db => None,
        };
        if d.operands.is_empty() {
            return Ok(below.map(<[u8]>::to_vec));
        }
        crate::merge::resolve(self.merge_op.as_ref(), k, below, &d.operands).map(Some)
    }
}

fn bound_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// A double-ended Rust iterator over a key range of a batch laid over a
/// DB, made of two [`WbwiIterator`]s at one snapshot that stop when they
/// meet (as `DbRange`).
pub struct WbwiRange<'a> {
    front: WbwiIterator<'a>,
    back: WbwiIterator<'a>,
    front_started: bool,
    back_started: bool,
    last_front: Option<Vec<u8>>,
    last_back: Option<Vec<u8>>,
    done: bool,
}

impl<'a> WbwiRange<'a> {
    pub(crate) fn new(front: WbwiIterator<'a>, back: WbwiIterator<'a>) -> Self {
        WbwiRange {
            front,
            back,
            front_started: false,
            back_started: false,
            last_front: None,
            last_back: None,
            done: false,
        }
    }

    /// One step of `it` (`forward` or not); the item it yields, if any.
    fn step(&mut self, forward: bool) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        if self.done {
            return None;
        }
        let (it, started) = if forward {
            (&mut self.front, &mut self.front_started)
        } else {
            (&mut self.back, &mut self.back_started)
        };
        match (*started, forward) {
            (false, true) => it.seek_to_first(),
            (false, false) => it.seek_to_last(),
            (true, true) if it.valid() => it.next(),
            (true, false) if it.valid() => it.prev(),
            _ => {}
        }
        *started = true;
        if !it.valid() {
            self.done = true;
            return it.status().err().map(Err);
        }
        let k = it.key();
        let crossed = if forward {
            self.last_back.as_deref().is_some_and(|b| k >= b)
        } else {
            self.last_front.as_deref().is_some_and(|f| k <= f)
        };
        if crossed {
            self.done = true;
            return None;
        }
        let item = (k.to_vec(), it.value().to_vec());
        if forward {
            self.last_front = Some(item.0.clone());
        } else {
            self.last_back = Some(item.0.clone());
        }
        Some(Ok(item))
    }
}

impl Iterator for WbwiRange<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(true)
    }
}

impl DoubleEndedIterator for WbwiRange<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(false)
    }
}
