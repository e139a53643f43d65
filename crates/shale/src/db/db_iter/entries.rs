//! How a [`DbIterator`] finds the entry it stands on: past the versions a
//! newer one shadows, tombstones (point and range) and expired values,
//! merging operands onto their base, within the bounds and the prefix,
//! forward (`find_next_user_entry`) and backward (`find_prev_user_entry`).

use crate::base::{make_internal_key, parse_internal_key, ValueKind, KIND_FOR_SEEK, MAX_SEQNO};
use crate::error::Error;
use crate::iter::InternalIterator;

use super::{DbIterator, Direction};

impl DbIterator {
    /// Sets `seek_buf` to the first internal key of `saved_key` (above
    /// every version of it): `seek` lands on its newest entry,
    /// `seek_for_prev` on the last entry before the key.
    pub(super) fn seek_buf_to_saved_key(&mut self) {
        self.seek_buf.clear();
        make_internal_key(
            &mut self.seek_buf,
            &self.saved_key,
            MAX_SEQNO,
            KIND_FOR_SEEK,
        );
    }

    pub(super) fn corrupt_key(&mut self) {
        self.valid = false;
        self.err.get_or_insert(Error::corruption(
            "<iterator>",
            0,
            "malformed internal key in iterator",
        ));
    }

    pub(super) fn above_upper(&self, user_key: &[u8]) -> bool {
        self.upper.as_deref().is_some_and(|u| user_key >= u)
    }

    pub(super) fn below_lower(&self, user_key: &[u8]) -> bool {
        self.lower.as_deref().is_some_and(|l| user_key < l)
    }

    /// Forward: stops at the newest visible value of the next user key. With
    /// `skipping`, every entry of `saved_key` (and smaller) is skipped.
    pub(super) fn find_next_user_entry(&mut self, mut skipping: bool) {
        self.merged = false;
        self.expiring = false;
        self.clear_blob();
        while self.iter.valid() {
            let Some(p) = parse_internal_key(self.iter.key()) else {
                return self.corrupt_key();
            };
            if self.above_upper(p.user_key) || self.out_of_prefix(p.user_key) {
                break;
            }
            if p.seq <= self.seq {
                let hidden = skipping && p.user_key <= self.saved_key.as_slice();
                if !hidden {
                    match p.kind {
                        ValueKind::Value => {
                            self.valid = true;
                            return;
                        }
                        ValueKind::BlobIndex => {
                            self.blob_ref = true;
                            self.valid = true;
                            return;
                        }
                        ValueKind::ValueWithExpiry if self.live(self.iter.value()) => {
                            self.expiring = true;
                            self.valid = true;
                            return;
                        }
                        ValueKind::Deletion
                        | ValueKind::SingleDeletion
                        | ValueKind::ValueWithExpiry => {
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(p.user_key);
                            skipping = true;
                        }
                        ValueKind::Merge => {
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(p.user_key);
                            return self.merge_forward();
                        }
                        other => return self.unsupported(other),
                    }
                }
            }
            self.iter.next();
        }
        self.valid = false;
    }

    /// Forward, on the newest visible entry of `saved_key`, a merge
    /// operand: collects the key's operands (newest first) down to its
    /// value or tombstone, resolves them into `saved_value`, and leaves the
    /// inner iterator past the operands.
    pub(super) fn merge_forward(&mut self) {
        self.operands.clear();
        let mut base: Option<Vec<u8>> = None;
        while self.iter.valid() {
            let Some(p) = parse_internal_key(self.iter.key()) else {
                return self.corrupt_key();
            };
            if p.user_key != self.saved_key.as_slice() {
                break;
            }
            match p.kind {
                ValueKind::Merge => self.operands.push(self.iter.value().to_vec()),
                ValueKind::Value => {
                    base = Some(self.iter.value().to_vec());
                    break;
                }
                ValueKind::BlobIndex => {
                    match self.db.blobs.get(
                        self.iter.value(),
                        &self.saved_key,
                        self.blob_fill,
                        "<iterator>",
                    ) {
                        Ok(v) => base = Some(v.to_vec()),
                        Err(e) => {
                            self.valid = false;
                            self.err.get_or_insert(e);
                            return;
                        }
                    }
                    break;
                }
                ValueKind::ValueWithExpiry => {
                    base = self.live_value(self.iter.value()).map(<[u8]>::to_vec);
                    break;
                }
                ValueKind::Deletion | ValueKind::SingleDeletion => break,
                other => return self.unsupported(other),
            }
            self.iter.next();
        }
        if let Err(e) = self.iter.status() {
            self.valid = false;
            self.err.get_or_insert(e);
            return;
        }
        self.operands.reverse();
        self.finish_merge(base.as_deref(), Direction::Forward);
    }

    /// Resolves `operands` (oldest first) over `base` for `saved_key` into
    /// `saved_value`; on failure the iterator stops with the error.
    pub(super) fn finish_merge(&mut self, base: Option<&[u8]>, dir: Direction) {
        let ops: Vec<&[u8]> = self.operands.iter().map(Vec::as_slice).collect();
        match crate::merge::resolve(self.merge_op.as_ref(), &self.saved_key, base, &ops) {
            Ok(v) => {
                self.saved_value = v;
                self.merged = dir == Direction::Forward;
                self.valid = true;
            }
            Err(e) => {
                self.valid = false;
                self.err.get_or_insert(e);
            }
        }
    }

    /// The value of an expiring entry's stored bytes, if it has not
    /// expired (at the iterator's creation).
    pub(super) fn live_value<'v>(&self, stored: &'v [u8]) -> Option<&'v [u8]> {
        crate::base::expiry::split_expiring(stored)
            .filter(|&(_, e)| !crate::base::expiry::expired(e, self.now))
            .map(|(v, _)| v)
    }

    pub(super) fn live(&self, stored: &[u8]) -> bool {
        self.live_value(stored).is_some()
    }

    pub(super) fn unsupported(&mut self, kind: ValueKind) {
        self.valid = false;
        self.err.get_or_insert(Error::NotSupported(format!(
            "value kind {kind:?} in iterator"
        )));
    }

    /// Reverse: collects the newest visible version of the previous user key
    /// into `saved_key`/`saved_value` (resolving merge operands, which
    /// arrive oldest first), leaving the inner iterator before it.
    pub(super) fn find_prev_user_entry(&mut self) {
        /// The newest visible state of `saved_key` seen so far.
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum State {
            /// Nothing, or a tombstone.
            Absent,
            Value,
            /// Operands in `operands`, over the value in `saved_value`
            /// when `base`.
            Merge {
                base: bool,
            },
        }
        self.merged = false;
        self.clear_blob();
        // `saved_value` holds a blob index, not a value.
        let mut saved_blob = false;
        let mut state = State::Absent;
        self.saved_key.clear();
        self.saved_value.clear();
        self.operands.clear();
        while self.iter.valid() {
            let Some(p) = parse_internal_key(self.iter.key()) else {
                return self.corrupt_key();
            };
            if p.seq <= self.seq {
                if state != State::Absent && p.user_key < self.saved_key.as_slice() {
                    break; // passed the entry we collected
                }
                if self.below_lower(p.user_key) || self.out_of_prefix(p.user_key) {
                    break;
                }
                let live = match p.kind {
                    ValueKind::Value | ValueKind::BlobIndex => Some(self.iter.value()),
                    ValueKind::ValueWithExpiry => self.live_value(self.iter.value()),
                    _ => None,
                };
                match p.kind {
                    ValueKind::Deletion | ValueKind::SingleDeletion => {
                        state = State::Absent;
                        saved_blob = false;
                        self.saved_key.clear();
                        self.saved_value.clear();
                        self.operands.clear();
                    }
                    ValueKind::ValueWithExpiry if live.is_none() => {
                        saved_blob = false;
                        state = State::Absent;
                        self.saved_key.clear();
                        self.saved_value.clear();
                        self.operands.clear();
                    }
                    ValueKind::Value | ValueKind::ValueWithExpiry | ValueKind::BlobIndex => {
                        state = State::Value;
                        saved_blob = p.kind == ValueKind::BlobIndex;
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(live.unwrap_or_default());
                        self.operands.clear();
                    }
                    ValueKind::Merge => {
                        if saved_blob {
                            // A merge over a blob: the base is the value.
                            let v = match self.db.blobs.get(
                                &self.saved_value,
                                &self.saved_key,
                                self.blob_fill,
                                "<iterator>",
                            ) {
                                Ok(v) => v,
                                Err(e) => {
                                    self.valid = false;
                                    self.err.get_or_insert(e);
                                    return;
                                }
                            };
                            self.saved_value.clear();
                            self.saved_value.extend_from_slice(&v);
                            saved_blob = false;
                        }
                        state = match state {
                            State::Absent => {
                                self.saved_key.clear();
                                self.saved_key.extend_from_slice(p.user_key);
                                self.saved_value.clear();
                                self.operands.clear();
                                State::Merge { base: false }
                            }
                            State::Value => State::Merge { base: true },
                            merge => merge,
                        };
                        self.operands.push(self.iter.value().to_vec());
                    }
                    other => return self.unsupported(other),
                }
            }
            self.iter.prev();
        }
        if let Err(e) = self.iter.status() {
            // The inner iterator stopped on an error, not at the start of
            // the data: what was collected may be an older version.
            self.valid = false;
            self.err.get_or_insert(e);
            return;
        }
        match state {
            State::Absent => {
                self.valid = false;
                self.saved_key.clear();
                self.saved_value.clear();
                self.dir = Direction::Forward;
            }
            State::Value => {
                self.valid = !self.above_upper(&self.saved_key);
                self.blob_ref = saved_blob;
            }
            State::Merge { base } => {
                if self.above_upper(&self.saved_key) {
                    self.valid = false;
                    return;
                }
                let base = base.then(|| std::mem::take(&mut self.saved_value));
                self.finish_merge(base.as_deref(), Direction::Reverse);
            }
        }
    }
}
