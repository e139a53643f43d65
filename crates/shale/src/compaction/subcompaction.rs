//! Subcompactions: one compaction split by user key into ranges that run
//! on parallel threads (RocksDB's `max_subcompactions`), so a large
//! L0→base or Ln→Ln+1 job uses more than one core.
//!
//! `split_points` chooses the boundaries from anchors sampled from every
//! input table's index (a user key and the bytes of input up to it); each
//! range gets about the same share of input bytes. `RangeIter` limits a
//! merged input stream to one range.
//!
//! Invariants: split keys are user keys, strictly increasing. A range
//! `[lo, hi)` holds every version of each of its user keys (the entries
//! whose user key k has lo <= k < hi), so each range's entry filter sees
//! whole keys and the outputs of consecutive ranges never share a user
//! key: concatenated in range order, they are sorted and disjoint exactly
//! as one job's outputs would be.

use std::cmp::Ordering;

use crate::base::{
    compare_internal, extract_user_key, make_internal_key, KIND_FOR_SEEK, MAX_SEQNO,
};
use crate::error::Result;
use crate::iter::InternalIterator;

/// A sample point of an input table: a user key and the input bytes that
/// lie at or below it since the table's previous anchor.
pub(crate) type Anchor = (Vec<u8>, u64);

/// At most `n - 1` user keys that split the input sampled by `anchors` into
/// at most `n` ranges of about equal bytes, each of at least `min_bytes`
/// (so small compactions are not split). Empty: run as one range.
pub(crate) fn split_points(mut anchors: Vec<Anchor>, n: usize, min_bytes: u64) -> Vec<Vec<u8>> {
    let total: u64 = anchors.iter().map(|(_, b)| b).sum();
    let parts = (n as u64).min(total / min_bytes.max(1));
    if parts <= 1 || anchors.is_empty() {
        return Vec::new();
    }
    anchors.sort_by(|a, b| a.0.cmp(&b.0));
    let per_part = total / parts;
    let mut splits: Vec<Vec<u8>> = Vec::new();
    let mut seen = 0u64;
    let last_key = anchors.last().map(|(k, _)| k.clone()).unwrap_or_default();
    for (key, bytes) in anchors {
        seen += bytes;
        if splits.len() as u64 + 1 >= parts {
            break;
        }
        if seen < per_part * (splits.len() as u64 + 1) {
            continue;
        }
        // A range starts just past this anchor: its bytes lie at or below
        // it. Keys must increase, and a split at the largest anchor would
        // leave an empty last range.
        let increasing = splits.last().is_none_or(|s| s.as_slice() < key.as_slice());
        if increasing && key < last_key {
            splits.push(key);
        }
    }
    splits
}

/// A range of user keys `[lo, hi)`; `None` is unbounded on that side.
pub(crate) type SubRange = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The ranges that `splits` (from `split_points`) cut the key space into.
pub(crate) fn ranges(splits: &[Vec<u8>]) -> Vec<SubRange> {
    let mut out = Vec::with_capacity(splits.len() + 1);
    let mut lo: Option<Vec<u8>> = None;
    for s in splits {
        out.push((lo.take(), Some(s.clone())));
        lo = Some(s.clone());
    }
    out.push((lo, None));
    out
}

/// An iterator limited to the entries whose user key lies in `[lo, hi)`.
pub(crate) struct RangeIter<I> {
    inner: I,
    /// Smallest internal key of `lo` (every version of `lo` sorts after).
    lo_seek: Option<Vec<u8>>,
    hi: Option<Vec<u8>>,
}

impl<I: InternalIterator> RangeIter<I> {
    pub(crate) fn new(inner: I, lo: Option<&[u8]>, hi: Option<Vec<u8>>) -> Self {
        let lo_seek = lo.map(|k| {
            let mut s = Vec::with_capacity(k.len() + 8);
            make_internal_key(&mut s, k, MAX_SEQNO, KIND_FOR_SEEK);
            s
        });
        RangeIter { inner, lo_seek, hi }
    }

    fn below_hi(&self) -> bool {
        self.hi
            .as_deref()
            .is_none_or(|hi| extract_user_key(self.inner.key()) < hi)
    }

    fn at_or_above_lo(&self) -> bool {
        self.lo_seek
            .as_deref()
            .is_none_or(|lo| extract_user_key(self.inner.key()) >= extract_user_key(lo))
    }
}

impl<I: InternalIterator> InternalIterator for RangeIter<I> {
    fn valid(&self) -> bool {
        self.inner.valid() && self.below_hi() && self.at_or_above_lo()
    }
    fn seek_to_first(&mut self) {
        match &self.lo_seek {
            Some(lo) => self.inner.seek(lo),
            None => self.inner.seek_to_first(),
        }
    }
    fn seek_to_last(&mut self) {
        match &self.hi {
            Some(hi) => {
                let mut t = Vec::with_capacity(hi.len() + 8);
                make_internal_key(&mut t, hi, MAX_SEQNO, KIND_FOR_SEEK);
                self.inner.seek(&t);
                if self.inner.valid() {
                    self.inner.prev();
                } else if self.inner.status().is_ok() {
                    self.inner.seek_to_last();
                }
            }
            None => self.inner.seek_to_last(),
        }
    }
    fn seek(&mut self, target: &[u8]) {
        match &self.lo_seek {
            Some(lo) if compare_internal(target, lo) == Ordering::Less => self.inner.seek(lo),
            _ => self.inner.seek(target),
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
        while self.inner.valid() && !self.below_hi() {
            self.inner.prev();
        }
    }
    fn next(&mut self) {
        self.inner.next()
    }
    fn prev(&mut self) {
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests;
