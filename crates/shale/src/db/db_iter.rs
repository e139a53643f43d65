//! The user-facing iterators.
//!
//! [`DbIterator`] is the raw cursor RocksDB users know (seek, next, prev,
//! bounds). It wraps a merging iterator over every source of a super version
//! and hides what a reader at its sequence number must not see: entries newer
//! than the snapshot, versions shadowed by newer ones, and tombstones; and
//! it resolves merge operands with the family's merge operator (forward:
//! collecting a key's operands moves the inner iterator past them, so the
//! merged entry is served from `saved_key`/`saved_value` with `merged`
//! set; reverse: operands arrive oldest first and are resolved when the
//! walk leaves the key).
//! [`DbRange`] adapts two cursors into a double-ended Rust `Iterator`.
//!
//! Expiry: a cursor judges values with a TTL at one clock reading, taken
//! when it is created (`Pinned::now`), for every seek and move.
//!
//! Thread safety: an iterator is `Send`, used by one thread at a time. It keeps
//! its super version (memtables and tables) alive until dropped.

use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

use crate::base::PrefixExtractor;
use crate::base::{make_internal_key, parse_internal_key, SeqNo, KIND_FOR_SEEK, MAX_SEQNO};
use crate::blob::source::Fill;
use crate::error::{Error, Result};
use crate::iter::prefix_gate::PrefixGate;
use crate::iter::InternalIterator;
use crate::merge::MergeOperator;

use super::DbInner;
use crate::cf::SuperVersion;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// The state a cursor reads, fixed at its creation: the super version
/// (pinned), the sequence number, the clock reading expiry is judged at,
/// and the family's merge operator. A second cursor made from a first's
/// (`DbIterator::pinned`: the back half of a `DbRange`) reads exactly what
/// the first does, however late it is made.
pub(crate) struct Pinned {
    pub(crate) sv: Arc<SuperVersion>,
    pub(crate) seq: SeqNo,
    /// Seconds of the DB's clock: values expiring by then are gone.
    pub(crate) now: u64,
    pub(crate) merge_op: Option<Arc<dyn MergeOperator>>,
}

/// A cursor over the DB at one sequence number and one clock reading.
pub struct DbIterator {
    iter: Box<dyn InternalIterator>,
    sv: Arc<SuperVersion>,
    /// The DB, to stop (`ShutdownInProgress`) once it is closed.
    db: Arc<DbInner>,
    seq: SeqNo,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    dir: Direction,
    valid: bool,
    // Reverse direction: the current entry is saved here because the inner
    // iterator has already moved before it.
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
    // Reused buffer for internal seek keys.
    seek_buf: Vec<u8>,
    err: Option<Error>,
    /// Forward: the current entry is a resolved merge held in
    /// `saved_key`/`saved_value`; the inner iterator is past its operands.
    merged: bool,
    /// Merge operands of the key being resolved.
    operands: Vec<Vec<u8>>,
    merge_op: Option<Arc<dyn MergeOperator>>,
    /// Forward: the current entry is an expiring value (its stored bytes
    /// end with the expiry, which `value` leaves out).
    expiring: bool,
    /// The current entry's value is in a blob file; its index is the inner
    /// iterator's value (forward) or `saved_value` (reverse). `value`
    /// reads it on its first call only, so a walk over keys reads no blob.
    blob_ref: bool,
    blob_value: OnceLock<Arc<[u8]>>,
    /// An error reading the blob (`value` cannot return one): reported by
    /// `status`; `blob_failed` makes the iterator invalid at that entry.
    blob_err: Mutex<Option<Error>>,
    blob_failed: std::cell::Cell<bool>,
    /// Blob reads fill the block cache (`ReadOptions::fill_cache`).
    blob_fill: Fill,
    /// The clock at creation (`Pinned::now`): values expiring by then are
    /// gone, for every positioning of this cursor.
    now: u64,
    /// `prefix_same_as_start`: the family's extractor.
    prefix_mode: Option<PrefixExtractor>,
    /// The prefix every returned key must have (set by the last
    /// positioning; `None`: total order).
    cur_prefix: Option<Vec<u8>>,
    /// Opened while `cur_prefix` holds a seek target's prefix, so the
    /// sources skip seeks their prefix filters rule out.
    gate: Option<Arc<PrefixGate>>,
}

impl Drop for DbIterator {
    /// An iterator over a super version that is no longer current may be
    /// the last holder of tables nothing else needs (compacted away, or of a
    /// dropped family): release them now and ask the background threads to
    /// delete the files, rather than wait for the next flush or compaction.
    fn drop(&mut self) {
        self.iter = Box::new(crate::iter::error::ErrorIterator(Error::ShutdownInProgress));
        let stale = Arc::strong_count(&self.sv) == 1;
        if stale {
            self.sv = self.db.default_cf.super_version.load_full();
            self.db.request_purge();
        }
    }
}

mod entries;

impl DbIterator {
    pub(crate) fn new(
        iter: Box<dyn InternalIterator>,
        db: Arc<DbInner>,
        at: Pinned,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        let Pinned {
            sv,
            seq,
            now,
            merge_op,
        } = at;
        DbIterator {
            merged: false,
            operands: Vec::new(),
            merge_op,
            expiring: false,
            blob_ref: false,
            blob_value: OnceLock::new(),
            blob_err: Mutex::new(None),
            blob_failed: std::cell::Cell::new(false),
            blob_fill: Fill::Yes,
            now,
            iter,
            sv,
            db,
            seq,
            lower,
            upper,
            dir: Direction::Forward,
            valid: false,
            saved_key: Vec::new(),
            saved_value: Vec::new(),
            seek_buf: Vec::new(),
            err: None,
            prefix_mode: None,
            cur_prefix: None,
            gate: None,
        }
    }

    /// Bounds every positioning to the prefix (by `extractor`) of its seek
    /// key, or of the first key found by `seek_to_first`/`seek_to_last`
    /// (`ReadOptions::prefix_same_as_start`); `gate` is opened for seeks
    /// with a prefix (see `iter::prefix_gate`).
    pub(crate) fn with_prefix_mode(
        mut self,
        extractor: Option<PrefixExtractor>,
        gate: Option<Arc<PrefixGate>>,
    ) -> Self {
        self.prefix_mode = extractor;
        self.gate = gate;
        self
    }

    /// Blob reads fill the block cache only with `fill` (`fill_cache`).
    pub(crate) fn with_blob_fill(mut self, fill: bool) -> Self {
        self.blob_fill = if fill { Fill::Yes } else { Fill::No };
        self
    }

    /// Forgets the current entry's blob (called by every positioning).
    fn clear_blob(&mut self) {
        if self.blob_ref || self.blob_value.get().is_some() {
            self.blob_ref = false;
            self.blob_value = OnceLock::new();
        }
        self.blob_failed.set(false);
    }

    /// Reads the current entry's value now if it is in a blob file
    /// (RocksDB's `PrepareValue`): false when that read fails, and then the
    /// iterator is no longer valid and `status` says why. `value` reads it
    /// on first use otherwise (a keys-only walk reads no blob).
    pub fn prepare_value(&mut self) -> bool {
        if self.valid() && self.blob_ref {
            let _ = self.value();
        }
        self.valid()
    }

    /// The value a blob index points to for the current key (an error
    /// is kept for `status`).
    fn read_blob(&self, index: &[u8]) -> Arc<[u8]> {
        match self
            .db
            .blobs
            .get(index, self.key(), self.blob_fill, "<iterator>")
        {
            Ok(v) => v,
            Err(e) => {
                self.blob_err.lock().get_or_insert(e);
                self.blob_failed.set(true);
                Arc::from(&[][..])
            }
        }
    }

    /// Sets the prefix bound from seek key `key` (`None` without prefix
    /// mode or out of domain) and opens the gate when there is one.
    fn bound_to_prefix_of(&mut self, key: Option<&[u8]>) {
        self.cur_prefix = match (self.prefix_mode, key) {
            (Some(e), Some(k)) => e.prefix(k).map(<[u8]>::to_vec),
            _ => None,
        };
        if let Some(g) = &self.gate {
            g.set_open(key.is_some() && self.cur_prefix.is_some());
        }
    }

    /// After `seek_to_first`/`seek_to_last`: bound to the found key's
    /// prefix.
    fn bound_to_found(&mut self) {
        if self.prefix_mode.is_some() && self.valid {
            let k = self.key().to_vec();
            self.bound_to_prefix_of(Some(&k));
            if let Some(g) = &self.gate {
                // The sources were positioned without the gate; keep it
                // closed (no filtered reseeks into them).
                g.set_open(false);
            }
        }
    }

    fn out_of_prefix(&self, user_key: &[u8]) -> bool {
        match (&self.prefix_mode, &self.cur_prefix) {
            (Some(e), Some(p)) => e.prefix(user_key) != Some(p.as_slice()),
            _ => false,
        }
    }

    /// True when positioned on an entry (false once reading its value
    /// from a blob file failed: see `value`).
    pub fn valid(&self) -> bool {
        self.valid && !self.blob_failed.get()
    }

    /// The current user key. Requires `valid()`.
    pub fn key(&self) -> &[u8] {
        debug_assert!(self.valid);
        match self.dir {
            Direction::Forward if !self.merged => {
                parse_internal_key(self.iter.key()).map_or(&[], |p| p.user_key)
            }
            _ => &self.saved_key,
        }
    }

    /// The current value. Requires `valid()`. A value in a blob file is
    /// read here, on first use; if that read fails the result is empty,
    /// the iterator becomes invalid and `status` returns the error (check
    /// `valid()` after `value()`, or call `prepare_value` first).
    pub fn value(&self) -> &[u8] {
        debug_assert!(self.valid);
        if self.blob_ref {
            return self.blob_value.get_or_init(|| {
                let index = match self.dir {
                    Direction::Forward => self.iter.value(),
                    Direction::Reverse => &self.saved_value,
                };
                self.read_blob(index)
            });
        }
        match self.dir {
            Direction::Forward if !self.merged => {
                let v = self.iter.value();
                if self.expiring {
                    &v[..v.len().saturating_sub(crate::base::expiry::EXPIRY_LEN)]
                } else {
                    v
                }
            }
            _ => &self.saved_value,
        }
    }

    /// The first error met (corruption, IO), if any. An iterator that met an
    /// error is not valid.
    pub fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.clone());
        }
        if let Some(e) = &*self.blob_err.lock() {
            return Err(e.clone());
        }
        self.iter.status()
    }

    /// After the DB was closed every move fails with `ShutdownInProgress`.
    fn stopped(&mut self) -> bool {
        if !self.db.shutting_down.load(Ordering::Acquire) {
            return false;
        }
        self.valid = false;
        self.err.get_or_insert(Error::ShutdownInProgress);
        true
    }

    /// The state this cursor reads (for a second cursor over the same
    /// state, expiry judged at the same time).
    pub(crate) fn pinned(&self) -> Pinned {
        Pinned {
            sv: Arc::clone(&self.sv),
            seq: self.seq,
            now: self.now,
            merge_op: self.merge_op.clone(),
        }
    }

    /// Positions on the first key >= `key` (and >= the lower bound).
    pub fn seek(&mut self, key: &[u8]) {
        if self.stopped() {
            return;
        }
        self.bound_to_prefix_of(Some(key));
        self.seek_inner(key);
    }

    fn seek_inner(&mut self, key: &[u8]) {
        let key: &[u8] = match &self.lower {
            Some(l) if key < l.as_slice() => l,
            _ => key,
        };
        self.dir = Direction::Forward;
        self.seek_buf.clear();
        make_internal_key(&mut self.seek_buf, key, self.seq, KIND_FOR_SEEK);
        self.iter.seek(&self.seek_buf);
        self.find_next_user_entry(false);
    }

    /// Positions on the last key <= `key` (and < the upper bound).
    pub fn seek_for_prev(&mut self, key: &[u8]) {
        if self.stopped() {
            return;
        }
        self.bound_to_prefix_of(Some(key));
        self.seek_for_prev_inner(key);
    }

    fn seek_for_prev_inner(&mut self, key: &[u8]) {
        self.dir = Direction::Reverse;
        self.seek_buf.clear();
        match &self.upper {
            Some(u) if key >= u.as_slice() => {
                // Last key strictly below the exclusive upper bound.
                make_internal_key(&mut self.seek_buf, u, MAX_SEQNO, KIND_FOR_SEEK);
                self.iter.seek_for_prev(&self.seek_buf);
            }
            _ => {
                make_internal_key(&mut self.seek_buf, key, 0, 0);
                self.iter.seek_for_prev(&self.seek_buf);
            }
        }
        self.find_prev_user_entry();
    }

    /// Positions on the first key (>= the lower bound).
    pub fn seek_to_first(&mut self) {
        if self.stopped() {
            return;
        }
        self.bound_to_prefix_of(None);
        if let Some(l) = self.lower.clone() {
            self.seek_inner(&l);
        } else {
            self.dir = Direction::Forward;
            self.iter.seek_to_first();
            self.find_next_user_entry(false);
        }
        self.bound_to_found();
    }

    /// Positions on the last key (< the upper bound).
    pub fn seek_to_last(&mut self) {
        if self.stopped() {
            return;
        }
        self.bound_to_prefix_of(None);
        if let Some(u) = self.upper.clone() {
            self.seek_for_prev_inner(&u);
        } else {
            self.dir = Direction::Reverse;
            self.iter.seek_to_last();
            self.find_prev_user_entry();
        }
        self.bound_to_found();
    }

    /// Moves to the next key. Requires `valid()`.
    pub fn next(&mut self) {
        debug_assert!(self.valid);
        if self.stopped() {
            return;
        }
        if self.dir == Direction::Reverse {
            // The inner iterator is before the current entry: move it to the
            // first entry of the current user key, then skip past that key.
            self.dir = Direction::Forward;
            self.seek_buf_to_saved_key();
            self.iter.seek(&self.seek_buf);
            // saved_key holds the current key; skip every version of it.
            self.find_next_user_entry(true);
            return;
        }
        if self.merged {
            // The inner iterator is already past the merged key's operands;
            // saved_key holds the key: skip what is left of it.
            self.merged = false;
            self.find_next_user_entry(true);
            return;
        }
        // Skip the remaining versions of the current key.
        self.saved_key.clear();
        let cur = parse_internal_key(self.iter.key()).map(|p| p.user_key.to_vec());
        match cur {
            Some(k) => self.saved_key = k,
            None => return self.corrupt_key(),
        }
        self.iter.next();
        self.find_next_user_entry(true);
    }

    /// Moves to the previous key. Requires `valid()`.
    pub fn prev(&mut self) {
        debug_assert!(self.valid);
        if self.stopped() {
            return;
        }
        if self.dir == Direction::Forward {
            // Move the inner iterator before every version of the current key.
            if self.merged {
                // saved_key holds the key; the inner iterator is past its
                // operands: at the end, or on the next key, perhaps past
                // the prefix's run, where moving back would re-seek the
                // gated sources to a key of another prefix and drop those
                // whose filter rules that prefix out, with their keys of
                // this run. Seek back to just before every version of the
                // key (RocksDB's `ReverseToBackward`), a target in the run.
                self.merged = false;
                if !self.iter.valid() || self.gate.is_some() {
                    self.seek_buf_to_saved_key();
                    self.iter.seek_for_prev(&self.seek_buf);
                }
            } else {
                let cur = match parse_internal_key(self.iter.key()) {
                    Some(p) => p.user_key.to_vec(),
                    None => return self.corrupt_key(),
                };
                self.saved_key = cur;
            }
            while self.iter.valid() {
                match parse_internal_key(self.iter.key()) {
                    Some(p) if p.user_key < self.saved_key.as_slice() => break,
                    Some(_) => self.iter.prev(),
                    None => return self.corrupt_key(),
                }
            }
            self.dir = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }
}

/// A double-ended Rust iterator over a key range, built on two cursors that
/// stop when they meet. The back cursor, made on the first `next_back()`,
/// reads the front's `Pinned` state (its expiry clock reading included).
pub struct DbRange {
    front: DbIterator,
    back: Option<DbIterator>,
    make_back: Option<Box<dyn FnOnce() -> DbIterator + Send>>,
    front_started: bool,
    last_front: Option<Vec<u8>>,
    last_back: Option<Vec<u8>>,
    done: bool,
}

impl DbRange {
    pub(crate) fn new(
        front: DbIterator,
        make_back: Box<dyn FnOnce() -> DbIterator + Send>,
    ) -> Self {
        DbRange {
            front,
            back: None,
            make_back: Some(make_back),
            front_started: false,
            last_front: None,
            last_back: None,
            done: false,
        }
    }

    fn crossed(&self, key: &[u8], from_front: bool) -> bool {
        if from_front {
            self.last_back.as_deref().is_some_and(|b| key >= b)
        } else {
            self.last_front.as_deref().is_some_and(|f| key <= f)
        }
    }
}

impl Iterator for DbRange {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.front_started {
            if self.front.valid() {
                self.front.next();
            }
        } else {
            self.front.seek_to_first();
            self.front_started = true;
        }
        if !self.front.valid() {
            self.done = true;
            return self.front.status().err().map(Err);
        }
        let k = self.front.key();
        if self.crossed(k, true) {
            self.done = true;
            return None;
        }
        let item = (k.to_vec(), self.front.value().to_vec());
        if !self.front.valid() {
            // Its value's blob could not be read.
            self.done = true;
            return self.front.status().err().map(Err);
        }
        self.last_front = Some(item.0.clone());
        Some(Ok(item))
    }
}

impl DoubleEndedIterator for DbRange {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.back.as_mut() {
            Some(b) => {
                if b.valid() {
                    b.prev();
                }
            }
            None => {
                let make = self.make_back.take()?;
                let mut b = make();
                b.seek_to_last();
                self.back = Some(b);
            }
        }
        let b = self.back.as_ref()?;
        if !b.valid() {
            self.done = true;
            return b.status().err().map(Err);
        }
        let k = b.key();
        if self.crossed(k, false) {
            self.done = true;
            return None;
        }
        let item = (k.to_vec(), b.value().to_vec());
        if !b.valid() {
            self.done = true;
            return b.status().err().map(Err);
        }
        self.last_back = Some(item.0.clone());
        Some(Ok(item))
    }
}

/// Converts Rust range bounds on user keys to (inclusive lower, exclusive
/// upper) bounds as the cursor takes them.
pub(crate) fn bounds_to_cursor(
    start: Bound<&[u8]>,
    end: Bound<&[u8]>,
) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let lower = match start {
        Bound::Included(k) => Some(k.to_vec()),
        Bound::Excluded(k) => {
            // The smallest key greater than k is k ++ 0x00.
            let mut v = k.to_vec();
            v.push(0);
            Some(v)
        }
        Bound::Unbounded => None,
    };
    let upper = match end {
        Bound::Excluded(k) => Some(k.to_vec()),
        Bound::Included(k) => {
            let mut v = k.to_vec();
            v.push(0);
            Some(v)
        }
        Bound::Unbounded => None,
    };
    (lower, upper)
}

/// The exclusive upper bound of all keys starting with `prefix`, or `None`
/// when no such bound exists (prefix of 0xff bytes only).
pub(crate) fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut v = prefix.to_vec();
    while let Some(&last) = v.last() {
        if last < 0xff {
            let n = v.len();
            v[n - 1] = last + 1;
            return Some(v);
        }
        v.pop();
    }
    None
}

#[cfg(test)]
mod tests;
