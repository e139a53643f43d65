//! Which entries of a sorted stream a flush or compaction writes, and what
//! they become: [`EntryFilter`] pulls entries from the merged input and
//! positions on each entry to write.
//!
//! Rules (RocksDB's, with snapshot stripes): for each user key, entries come
//! newest first. A *stripe* is the set of sequence numbers between two
//! adjacent live snapshots; readers in one stripe see the same newest
//! version. The newest entry of a key in each stripe is kept, older entries in
//! the same stripe are dropped (nobody can see them). A tombstone is dropped
//! too when every snapshot sees it (it lies in the oldest stripe) and no
//! older data for the key can exist below the output level.
//!
//! Within one stripe, the newest entry may also be rewritten:
//! - **Merge operands** are collected down to the key's value or tombstone
//!   in the same stripe and replaced by one value (full merge). Without a
//!   base, they are fully merged when nothing older can exist (end of the
//!   key in the input and no data below the output level), else combined
//!   into one operand by the operator's partial merge, else kept as they
//!   are. A failed merge keeps every operand and the base unchanged.
//! - **A single delete** meeting a value in its stripe drops both; one
//!   meeting anything else counts a mismatch (misuse) and stays. Its
//!   contract is "a key written exactly once since it was last deleted", so
//!   a tombstone right under the newest value of its stripe is not dropped
//!   as shadowed: a single delete may remove that value later, and the
//!   tombstone must then still hide older data (it goes where tombstones
//!   may go).
//! - **The user's compaction filter** sees values (and merge results) of
//!   the newest stripe only, which no snapshot the job knows can read:
//!   `Remove` turns the value into a tombstone, `ChangeValue` replaces it.
//!   The counts record the oldest sequence number it changed, for the
//!   runner to check against snapshots taken since (`SnapshotList::admit`).
//!
//! A value that has expired (by the clock when the job started) is a
//! tombstone: dropped where tombstones may go, else written as one. A merge
//! stack over a value that expires later is not merged into it (the result
//! could not expire as the value does): its operands stay operands.
//!
//! An entry under a range tombstone of the job's inputs that is newer and
//! in the same stripe (every reader that sees the entry sees the
//! tombstone) is dropped; to a merge stack it is the tombstone base.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::base::{parse_internal_key, SeqNo, ValueKind, TRAILER_LEN};
use crate::blob::source::{BlobSource, Fill};
use crate::build::user_filter::{CompactionFilter, FilterDecision};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::merge::MergeOperator;
use crate::range_del::Fragments;

/// Decides, per key, whether data may exist below the output level.
pub(crate) type BaseLevelCheck<'a> = Box<dyn Fn(&[u8]) -> bool + Send + 'a>;

pub(crate) struct EntryFilter<'a> {
    /// Live snapshots, ascending.
    snapshots: Vec<SeqNo>,
    /// Returns true when no data for the user key exists below the output.
    is_base_level: Option<BaseLevelCheck<'a>>,
    merge_op: Option<Arc<dyn MergeOperator>>,
    user_filter: Option<(Arc<dyn CompactionFilter>, usize)>,
    /// Range tombstones of the inputs.
    range_dels: Option<Arc<Fragments>>,
    /// Where blob references are resolved when a merge or the user's
    /// filter needs the value (`None`: a DB without blob files).
    blobs: Option<Arc<BlobSource>>,
    /// The clock (Unix seconds) for expiring values; `u64::MAX` until set
    /// would expire everything, so the default is 0 (nothing expired).
    now: u64,
    cur_key: Vec<u8>,
    has_cur: bool,
    last_stripe: usize,
    /// A single delete and its value were dropped for `cur_key`: another
    /// entry of the key in that stripe is a misuse.
    after_single_delete: bool,
    /// The newest entry of `cur_key` in `last_stripe` is a value that a
    /// single delete may remove later; a tombstone under it must stay (once).
    value_over_tombstone: bool,
    /// The entry to write is the input's current one (else `out`).
    on_input: bool,
    out: (Vec<u8>, Vec<u8>),
    /// Rewritten entries still to hand out, in order.
    pending: VecDeque<(Vec<u8>, Vec<u8>)>,
    /// Entries read / not written.
    pub keys_in: u64,
    pub keys_dropped: u64,
    /// Merges that failed, single-delete misuses, filtered values.
    pub counts: FilterCounts,
}

/// What an [`EntryFilter`] met besides dropped entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FilterCounts {
    /// Merges that failed (operands kept).
    pub merge_failures: u64,
    /// Single deletes that met something other than one value.
    pub single_delete_mismatches: u64,
    /// Values the user's filter removed or changed.
    pub filtered: u64,
    /// The oldest sequence number of those values: a snapshot at or above
    /// it may read one of them (see `SnapshotList::admit`).
    pub oldest_filtered: Option<SeqNo>,
}

impl FilterCounts {
    pub(crate) fn add(&mut self, o: FilterCounts) {
        self.merge_failures += o.merge_failures;
        self.single_delete_mismatches += o.single_delete_mismatches;
        self.filtered += o.filtered;
        self.oldest_filtered = match (self.oldest_filtered, o.oldest_filtered) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// Counts the value at `ikey` as removed or changed by the user's
    /// filter.
    fn count_filtered(&mut self, ikey: &[u8]) {
        self.filtered += 1;
        // An unparsable key cannot be here (the caller parsed it); 0 would
        // only make every newer snapshot count as reading it.
        let seq = parse_internal_key(ikey).map_or(0, |p| p.seq);
        self.oldest_filtered = Some(self.oldest_filtered.map_or(seq, |s| s.min(seq)));
    }
}

/// `ikey` with its kind byte replaced.
fn with_kind(ikey: &[u8], kind: ValueKind) -> Vec<u8> {
    let mut k = ikey.to_vec();
    let at = k.len() - TRAILER_LEN;
    k[at] = kind as u8;
    k
}

fn malformed(file: &str) -> Error {
    Error::corruption(file, 0, "malformed internal key in compaction input")
}

impl<'a> EntryFilter<'a> {
    /// `is_base_level = None` never drops tombstones (flushes, and levels
    /// with data below).
    pub(crate) fn new(
        mut snapshots: Vec<SeqNo>,
        is_base_level: Option<BaseLevelCheck<'a>>,
    ) -> Self {
        snapshots.sort_unstable();
        snapshots.dedup();
        EntryFilter {
            snapshots,
            is_base_level,
            merge_op: None,
            user_filter: None,
            range_dels: None,
            blobs: None,
            now: 0,
            cur_key: Vec::new(),
            has_cur: false,
            last_stripe: 0,
            after_single_delete: false,
            value_over_tombstone: false,
            on_input: false,
            out: (Vec::new(), Vec::new()),
            pending: VecDeque::new(),
            keys_in: 0,
            keys_dropped: 0,
            counts: FilterCounts::default(),
        }
    }

    /// Combines merge operands with `op` (none: operands pass unchanged).
    pub(crate) fn with_merge_operator(mut self, op: Option<Arc<dyn MergeOperator>>) -> Self {
        self.merge_op = op;
        self
    }

    /// Asks `filter` about values written to `level`.
    pub(crate) fn with_user_filter(
        mut self,
        filter: Option<Arc<dyn CompactionFilter>>,
        level: usize,
    ) -> Self {
        self.user_filter = filter.map(|f| (f, level));
        self
    }

    /// Resolves blob references through `source` where a value is needed.
    pub(crate) fn with_blob_source(mut self, source: Option<Arc<BlobSource>>) -> Self {
        self.blobs = source;
        self
    }

    /// The value a `BlobIndex` entry's stored bytes point to.
    fn blob_value(&self, index: &[u8], file: &str) -> Result<Vec<u8>> {
        let Some(src) = &self.blobs else {
            return Err(Error::corruption(
                file,
                0,
                "blob reference in a DB opened without blob files",
            ));
        };
        Ok(src.get(index, &self.cur_key, Fill::No, file)?.to_vec())
    }

    /// Treats values expiring at or before `now` (Unix seconds) as gone.
    pub(crate) fn with_now(mut self, now: u64) -> Self {
        self.now = now;
        self
    }

    /// True for an expiring value's stored bytes that have expired (or
    /// cannot hold an expiry).
    fn expired(&self, stored: &[u8]) -> bool {
        crate::base::expiry::split_expiring(stored)
            .is_none_or(|(_, e)| crate::base::expiry::expired(e, self.now))
    }

    /// Drops entries covered by `frags` (the inputs' range tombstones).
    pub(crate) fn with_range_dels(mut self, frags: Option<Arc<Fragments>>) -> Self {
        self.range_dels = frags.filter(|f| !f.is_empty());
        self
    }

    fn stripe(&self, seq: SeqNo) -> usize {
        self.snapshots.partition_point(|&s| s < seq)
    }

    /// `(user_key, seq)` lies under a newer range tombstone of its stripe.
    #[inline]
    fn covered(&self, user_key: &[u8], seq: SeqNo) -> bool {
        let Some(f) = self.range_dels.as_ref().and_then(|r| r.find(user_key)) else {
            return false;
        };
        let st = self.stripe(seq);
        f.seqs.iter().any(|&t| t > seq && self.stripe(t) == st)
    }

    /// A tombstone of `cur_key` in `stripe` can go: every snapshot sees it
    /// and nothing older lies below.
    fn drops_tombstone(&self, stripe: usize) -> bool {
        stripe == 0
            && self
                .is_base_level
                .as_ref()
                .is_some_and(|check| check(&self.cur_key))
    }

    /// The entry to write, once [`EntryFilter::advance`] returned true.
    pub(crate) fn entry<'s>(&'s self, input: &'s dyn InternalIterator) -> (&'s [u8], &'s [u8]) {
        if self.on_input {
            (input.key(), input.value())
        } else {
            (&self.out.0, &self.out.1)
        }
    }

    /// Moves to the next entry to write (reading `input`, which must be
    /// positioned at its start on the first call); false at the end.
    pub(crate) fn advance(&mut self, input: &mut dyn InternalIterator, file: &str) -> Result<bool> {
        if self.on_input {
            self.on_input = false;
            input.next();
        }
        loop {
            if let Some(e) = self.pending.pop_front() {
                self.out = e;
                return Ok(true);
            }
            if !input.valid() {
                input.status()?;
                return Ok(false);
            }
            let ikey = input.key();
            let Some(p) = parse_internal_key(ikey) else {
                return Err(malformed(file));
            };
            self.keys_in += 1;
            let stripe = self.stripe(p.seq);
            let first_of_key = !self.has_cur || self.cur_key.as_slice() != p.user_key;
            if first_of_key {
                self.cur_key.clear();
                self.cur_key.extend_from_slice(p.user_key);
                self.has_cur = true;
                self.after_single_delete = false;
            } else if stripe == self.last_stripe {
                if std::mem::take(&mut self.after_single_delete) {
                    // A single delete and its value vanished as if never
                    // written: this entry is the newest of the stripe now.
                    // Only another single delete or a tombstone keeps the
                    // contract (a value means the key was written twice).
                    if !matches!(p.kind, ValueKind::SingleDeletion | ValueKind::Deletion) {
                        self.counts.single_delete_mismatches += 1;
                    }
                } else if p.kind == ValueKind::Deletion
                    && std::mem::take(&mut self.value_over_tombstone)
                    && !self.drops_tombstone(stripe)
                {
                    // A tombstone under the newest value: a single delete
                    // may remove that value later ("written once since it
                    // was last deleted"), and then this tombstone must
                    // still hide what lies below, perhaps below the output
                    // level. Kept until it can be dropped.
                } else if p.kind != ValueKind::SingleDeletion || self.drops_tombstone(stripe) {
                    // Shadowed by a newer entry that every reader of this
                    // stripe sees. (A tombstone under it is no longer
                    // right under the newest value.)
                    self.value_over_tombstone = false;
                    self.keys_dropped += 1;
                    input.next();
                    continue;
                }
                // Else a single delete under a newer value: it still
                // deletes the value written before it, perhaps below the
                // output level, which must not come back when the newer
                // value is single-deleted in turn.
            }
            self.last_stripe = stripe;
            self.value_over_tombstone = matches!(
                p.kind,
                ValueKind::Value | ValueKind::ValueWithExpiry | ValueKind::BlobIndex
            );
            if self.covered(p.user_key, p.seq) {
                self.keys_dropped += 1;
                input.next();
                continue;
            }
            let top = stripe == self.snapshots.len();
            match p.kind {
                ValueKind::Value => {
                    if top && self.user_filter.is_some() {
                        let (ikey, value) = (ikey.to_vec(), input.value().to_vec());
                        input.next();
                        self.write_filtered(ikey, value, stripe);
                        continue;
                    }
                    self.on_input = true;
                    return Ok(true);
                }
                ValueKind::ValueWithExpiry if self.expired(input.value()) => {
                    // Gone for every reader: a tombstone now.
                    let ikey = with_kind(ikey, ValueKind::Deletion);
                    input.next();
                    if self.drops_tombstone(stripe) {
                        self.keys_dropped += 1;
                    } else {
                        self.pending.push_back((ikey, Vec::new()));
                    }
                    continue;
                }
                ValueKind::ValueWithExpiry => {
                    if top && self.user_filter.is_some() {
                        let ikey = ikey.to_vec();
                        let stored = input.value().to_vec();
                        input.next();
                        if let Some((v, expiry)) = crate::base::expiry::split_expiring(&stored) {
                            self.write_filtered_with(ikey, v.to_vec(), stripe, Some(expiry));
                        }
                        continue;
                    }
                    self.on_input = true;
                    return Ok(true);
                }
                ValueKind::BlobIndex => {
                    if top && self.user_filter.is_some() {
                        // The filter sees the value; what it keeps goes
                        // out as a plain value (the output moves it to a
                        // blob file again if it is large).
                        let value = self.blob_value(input.value(), file)?;
                        let ikey = with_kind(ikey, ValueKind::Value);
                        input.next();
                        self.write_filtered(ikey, value, stripe);
                        continue;
                    }
                    self.on_input = true;
                    return Ok(true);
                }
                ValueKind::Deletion => {
                    if self.drops_tombstone(stripe) {
                        self.keys_dropped += 1;
                        input.next();
                        continue;
                    }
                    self.on_input = true;
                    return Ok(true);
                }
                ValueKind::SingleDeletion => self.single_delete(input, stripe, file)?,
                ValueKind::Merge => self.merge(input, stripe, top, file)?,
                other => {
                    return Err(Error::NotSupported(format!(
                        "value kind {other:?} in {file}"
                    )))
                }
            }
        }
    }

    /// Queues a value of the newest stripe after asking the user's filter.
    fn write_filtered(&mut self, ikey: Vec<u8>, value: Vec<u8>, stripe: usize) {
        self.write_filtered_with(ikey, value, stripe, None);
    }

    /// [`EntryFilter::write_filtered`] for a value that keeps its `expiry`
    /// (the filter sees the value without it).
    fn write_filtered_with(
        &mut self,
        ikey: Vec<u8>,
        value: Vec<u8>,
        stripe: usize,
        expiry: Option<u64>,
    ) {
        let decision = match &self.user_filter {
            Some((f, level)) => f.filter(*level, &self.cur_key, &value),
            None => FilterDecision::Keep,
        };
        let stored = |mut v: Vec<u8>| {
            if let Some(e) = expiry {
                v.extend_from_slice(&e.to_le_bytes());
            }
            v
        };
        match decision {
            FilterDecision::Keep => self.pending.push_back((ikey, stored(value))),
            FilterDecision::ChangeValue(v) => {
                self.counts.count_filtered(&ikey);
                self.pending.push_back((ikey, stored(v)));
            }
            FilterDecision::Remove => {
                self.counts.count_filtered(&ikey);
                if self.drops_tombstone(stripe) {
                    self.keys_dropped += 1;
                } else {
                    self.pending
                        .push_back((with_kind(&ikey, ValueKind::Deletion), Vec::new()));
                }
            }
        }
    }

    /// On a single delete (the newest entry of its stripe): drops it with
    /// the value it deletes, or where nothing lies below, or queues it.
    fn single_delete(
        &mut self,
        input: &mut dyn InternalIterator,
        stripe: usize,
        file: &str,
    ) -> Result<()> {
        let sd = input.key().to_vec();
        input.next();
        let mut next_of_key = None;
        if input.valid() {
            let p = parse_internal_key(input.key()).ok_or_else(|| malformed(file))?;
            if p.user_key == self.cur_key.as_slice() {
                // An entry under a range tombstone is not the value this
                // single delete deletes.
                let kind = if self.covered(p.user_key, p.seq) {
                    ValueKind::RangeDeletion
                } else {
                    p.kind
                };
                next_of_key = Some((kind, self.stripe(p.seq)));
            }
        } else {
            input.status()?;
        }
        match next_of_key {
            Some((ValueKind::Value | ValueKind::ValueWithExpiry | ValueKind::BlobIndex, s))
                if s == stripe =>
            {
                // The value it deletes: both go.
                self.keys_in += 1;
                self.keys_dropped += 2;
                self.after_single_delete = true;
                input.next();
            }
            Some((_, s)) if s == stripe => {
                // A tombstone, a merge or another single delete under it:
                // not RocksDB's contract. Keep it (the entry below is
                // shadowed).
                self.counts.single_delete_mismatches += 1;
                self.pending.push_back((sd, Vec::new()));
            }
            // A snapshot sees the value below: keep the tombstone.
            Some(_) => self.pending.push_back((sd, Vec::new())),
            None if self.drops_tombstone(stripe) => self.keys_dropped += 1,
            None => self.pending.push_back((sd, Vec::new())),
        }
        Ok(())
    }

    /// On a merge operand (the newest entry of its stripe): collects the
    /// stripe's operands and base, and queues what replaces them.
    fn merge(
        &mut self,
        input: &mut dyn InternalIterator,
        stripe: usize,
        top: bool,
        file: &str,
    ) -> Result<()> {
        // Operands newest first, with their internal keys.
        let mut operands = vec![(input.key().to_vec(), input.value().to_vec())];
        input.next();
        // The entry ending the stack in this stripe: a value or tombstone.
        let mut base: Option<(Vec<u8>, ValueKind, Vec<u8>)> = None;
        let mut end_of_key = false;
        loop {
            if !input.valid() {
                input.status()?;
                end_of_key = true;
                break;
            }
            let p = parse_internal_key(input.key()).ok_or_else(|| malformed(file))?;
            if p.user_key != self.cur_key.as_slice() {
                end_of_key = true;
                break;
            }
            if self.stripe(p.seq) != stripe {
                break;
            }
            if self.covered(p.user_key, p.seq) {
                // Deleted by a range tombstone: the stack starts from
                // nothing (the entry is dropped by the main loop).
                base = Some((Vec::new(), ValueKind::Deletion, Vec::new()));
                break;
            }
            self.keys_in += 1;
            match p.kind {
                ValueKind::Merge => {
                    operands.push((input.key().to_vec(), input.value().to_vec()));
                }
                ValueKind::Value
                | ValueKind::Deletion
                | ValueKind::SingleDeletion
                | ValueKind::ValueWithExpiry
                | ValueKind::BlobIndex => {
                    base = Some((input.key().to_vec(), p.kind, input.value().to_vec()));
                    input.next();
                    break;
                }
                other => {
                    return Err(Error::NotSupported(format!(
                        "value kind {other:?} in {file}"
                    )))
                }
            }
            input.next();
        }
        // A range tombstone's base is not an entry: nothing to consume or
        // keep.
        let ranged = base.as_ref().is_some_and(|(k, _, _)| k.is_empty());
        let consumed = operands.len() as u64 + u64::from(base.is_some() && !ranged);
        let written_before = self.pending.len();
        // A blob reference under the operands merges with its value.
        let blob_base = match &base {
            Some((_, ValueKind::BlobIndex, idx)) if self.merge_op.is_some() => {
                Some(self.blob_value(idx, file)?)
            }
            _ => None,
        };
        let full = match &base {
            // A value that expires later: no merge into it (see the module
            // comment); an expired one is nothing.
            Some((_, ValueKind::ValueWithExpiry, v)) if !self.expired(v) => None,
            Some((_, ValueKind::BlobIndex, _)) => blob_base.as_deref().map(Some),
            Some((_, kind, v)) => Some((*kind == ValueKind::Value).then_some(v.as_slice())),
            None if end_of_key && self.drops_tombstone(0) => Some(None),
            None => None,
        };
        let head = operands[0].0.clone();
        let ops: Vec<&[u8]> = operands.iter().rev().map(|(_, v)| v.as_slice()).collect();
        match (full, &self.merge_op) {
            (Some(existing), Some(op)) => match op.full_merge(&self.cur_key, existing, &ops) {
                Ok(v) => {
                    let ikey = with_kind(&head, ValueKind::Value);
                    if top && self.user_filter.is_some() {
                        self.write_filtered(ikey, v, stripe);
                    } else {
                        self.pending.push_back((ikey, v));
                    }
                }
                Err(_) => {
                    self.counts.merge_failures += 1;
                    self.pending.extend(operands);
                    if let Some((k, _, v)) = base.filter(|_| !ranged) {
                        self.pending.push_back((k, v));
                    }
                }
            },
            (None, Some(op)) if ops.len() > 1 => {
                match op.partial_merge(&self.cur_key, &ops) {
                    Some(v) => self.pending.push_back((head, v)),
                    None => self.pending.extend(operands),
                }
                if let Some((k, _, v)) = base.filter(|_| !ranged) {
                    self.pending.push_back((k, v));
                }
            }
            // One operand and no base, or no operator: as they are.
            _ => {
                self.pending.extend(operands);
                if let Some((k, _, v)) = base.filter(|_| !ranged) {
                    self.pending.push_back((k, v));
                }
            }
        }
        let written = (self.pending.len() - written_before) as u64;
        self.keys_dropped += consumed.saturating_sub(written);
        Ok(())
    }
}

#[cfg(test)]
mod tests;
