//! [`BatchIndex`]: the ordered index of a `WriteBatchWithIndex`, and what
//! the batch alone says about a key ([`Delta`]).
//!
//! Point entries (puts, deletes, single deletes, merges) are kept in a
//! `BTreeMap` ordered by (column family id, user key, position of the
//! record in the batch), each mapped to the record's byte offset in the
//! batch: keys are copied once, values are read from the batch when
//! needed, so the index is bounded by the batch. Range deletions are kept
//! apart, per family, in batch order, and fragmented on the first read
//! after one is added (a sweep, O(r log r) for r of them, O(r) pieces
//! each with the newest position over it); a read finds a key's piece by
//! binary search, so lookups stay O(log n + log r).
//!
//! Reading a key (`resolve`): a range deletion at position p over a key
//! acts as a deletion of that key at p, as it does once the batch is
//! written (its entries get increasing sequence numbers in batch order).
//! The entries of the key newer than every such deletion are read newest
//! first: merges stack until a put, a deletion (single or not), a covering
//! range deletion, or the end of the batch (then what is below is the
//! DB's).
//!
//! With `overwrite_key` (RocksDB's flag) a put or a deletion replaces
//! every entry its key had in the index (they can no longer be read);
//! merges always stack. Reads are the same either way; only the
//! batch-only iteration and the index's size differ.
//!
//! Thread safety: a plain owned value, changed through `&mut`.
//! Invariant: every offset is that of a record of the batch the index was
//! built from, of the kind recorded beside it.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::OnceLock;

use crate::base::ValueKind;
use crate::batch::{BatchEntry, WriteBatch};
use crate::error::Result;

/// An index key: family id, user key, position in the batch.
type Slot = (u32, Vec<u8>, u32);

/// One range deletion of the batch.
#[derive(Debug, Clone)]
struct RangeDel {
    start: Vec<u8>,
    end: Vec<u8>,
    pos: u32,
}

/// The range deletions of one family.
#[derive(Debug, Clone, Default)]
struct Ranges {
    /// As added, in batch order (non-empty ranges only).
    added: Vec<RangeDel>,
    /// Disjoint pieces in key order, each with the newest position over
    /// it; built on the first read after a change.
    pieces: OnceLock<Vec<RangeDel>>,
}

impl Ranges {
    /// The newest position of a range deletion over `key`.
    fn newest_over(&self, key: &[u8]) -> Option<u32> {
        let pieces = self.pieces.get_or_init(|| fragment(&self.added));
        let i = pieces.partition_point(|p| p.end.as_slice() <= key);
        pieces
            .get(i)
            .filter(|p| p.start.as_slice() <= key)
            .map(|p| p.pos)
    }
}

/// Cuts `ranges` at every start and end into disjoint pieces, each with
/// the newest (largest) position among the ranges over it; adjacent
/// pieces with the same position are joined.
fn fragment(ranges: &[RangeDel]) -> Vec<RangeDel> {
    // (key, is_start, position): ends sort before starts at one key.
    let mut events: Vec<(&[u8], bool, u32)> = ranges
        .iter()
        .flat_map(|r| {
            [
                (r.start.as_slice(), true, r.pos),
                (r.end.as_slice(), false, r.pos),
            ]
        })
        .collect();
    events.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
    let mut active: BTreeMap<u32, usize> = BTreeMap::new();
    let mut out: Vec<RangeDel> = Vec::new();
    let mut open_at: Option<&[u8]> = None;
    let mut i = 0;
    while let Some(&(key, _, _)) = events.get(i) {
        if let (Some(start), Some((&pos, _))) = (open_at, active.last_key_value()) {
            if start < key {
                match out.last_mut() {
                    Some(last) if last.end.as_slice() == start && last.pos == pos => {
                        last.end = key.to_vec();
                    }
                    _ => out.push(RangeDel {
                        start: start.to_vec(),
                        end: key.to_vec(),
                        pos,
                    }),
                }
            }
        }
        while let Some(&(k, is_start, pos)) = events.get(i) {
            if k != key {
                break;
            }
            if is_start {
                *active.entry(pos).or_insert(0) += 1;
            } else if let Some(n) = active.get_mut(&pos) {
                *n -= 1;
                if *n == 0 {
                    active.remove(&pos);
                }
            }
            i += 1;
        }
        open_at = Some(key);
    }
    out
}

/// The index of a batch (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct BatchIndex {
    /// Point entries → (offset of the record in the batch, its kind).
    points: BTreeMap<Slot, (usize, ValueKind)>,
    /// Range deletions per family.
    ranges: BTreeMap<u32, Ranges>,
    overwrite_key: bool,
}

/// What lies below a key's merges in the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Below<'a> {
    /// Nothing in the batch: the DB's value.
    Db,
    /// A deletion (or a covering range deletion).
    Deleted,
    /// A put.
    Value(&'a [u8]),
}

/// What the batch says about one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delta<'a> {
    /// Merge operands above `below`, oldest first.
    pub(crate) operands: Vec<&'a [u8]>,
    pub(crate) below: Below<'a>,
}

#[cfg(test)]
impl Delta<'_> {
    /// True when the batch says nothing of the key.
    pub(crate) fn is_absent(&self) -> bool {
        self.operands.is_empty() && self.below == Below::Db
    }
}

impl BatchIndex {
    pub(crate) fn new(overwrite_key: bool) -> Self {
        BatchIndex {
            overwrite_key,
            ..Default::default()
        }
    }

    /// Forgets every entry.
    pub(crate) fn clear(&mut self) {
        self.points.clear();
        self.ranges.clear();
    }

    /// Indexes record `e`, the `pos`-th of the batch, at byte `offset`.
    pub(crate) fn insert(&mut self, pos: u32, offset: usize, e: &BatchEntry<'_>) {
        if e.kind == ValueKind::RangeDeletion {
            if e.key < e.value {
                let r = self.ranges.entry(e.cf).or_default();
                r.added.push(RangeDel {
                    start: e.key.to_vec(),
                    end: e.value.to_vec(),
                    pos,
                });
                r.pieces = OnceLock::new();
            }
            return;
        }
        if self.overwrite_key && e.kind != ValueKind::Merge {
            let old: Vec<Slot> = self
                .points
                .range(span(e.cf, e.key))
                .map(|(k, _)| k.clone())
                .collect();
            for k in old {
                self.points.remove(&k);
            }
        }
        self.points
            .insert((e.cf, e.key.to_vec(), pos), (offset, e.kind));
    }

    /// Rebuilds the index of `batch` (after a rollback).
    pub(crate) fn rebuild(&mut self, batch: &WriteBatch) -> Result<()> {
        self.clear();
        let mut it = batch.iter();
        let mut pos = 0u32;
        loop {
            let offset = it.offset();
            match it.next() {
                None => return Ok(()),
                Some(e) => self.insert(pos, offset, &e?),
            }
            pos += 1;
        }
    }

    /// Number of point entries indexed.
    #[cfg(test)]
    pub(crate) fn points(&self) -> usize {
        self.points.len()
    }

    /// The position of the newest range deletion of family `cf` over
    /// `key`.
    fn newest_range_del(&self, cf: u32, key: &[u8]) -> Option<u32> {
        self.ranges.get(&cf)?.newest_over(key)
    }

    /// True when some range deletion of family `cf` covers `key`.
    pub(crate) fn range_deleted(&self, cf: u32, key: &[u8]) -> bool {
        self.newest_range_del(cf, key).is_some()
    }

    /// What the batch says about `key` in family `cf` (module docs).
    pub(crate) fn resolve<'b>(
        &self,
        batch: &'b WriteBatch,
        cf: u32,
        key: &[u8],
    ) -> Result<Delta<'b>> {
        let rd = self.newest_range_del(cf, key);
        let mut operands = Vec::new();
        let mut below = if rd.is_some() {
            Below::Deleted
        } else {
            Below::Db
        };
        for ((_, _, pos), &(offset, kind)) in self.points.range(span(cf, key)).rev() {
            if rd.is_some_and(|r| *pos < r) {
                break;
            }
            let e = batch.entry_at(offset)?;
            match kind {
                ValueKind::Merge => operands.push(e.value),
                ValueKind::Value => {
                    below = Below::Value(e.value);
                    break;
                }
                _ => {
                    below = Below::Deleted;
                    break;
                }
            }
        }
        operands.reverse();
        Ok(Delta { operands, below })
    }

    /// The first key of family `cf` with point entries at or after
    /// (`Included`) or after (`Excluded`) `from`, below `upper`.
    pub(crate) fn next_key(
        &self,
        cf: u32,
        from: Bound<&[u8]>,
        upper: Option<&[u8]>,
    ) -> Option<&[u8]> {
        let start = match from {
            Bound::Included(k) => Bound::Included((cf, k.to_vec(), 0)),
            Bound::Excluded(k) => Bound::Excluded((cf, k.to_vec(), u32::MAX)),
            Bound::Unbounded => Bound::Included((cf, Vec::new(), 0)),
        };
        let ((c, k, _), _) = self.points.range((start, Bound::Unbounded)).next()?;
        (*c == cf && upper.is_none_or(|u| k.as_slice() < u)).then_some(k.as_slice())
    }

    /// The last key of family `cf` with point entries at or before
    /// (`Included`) or before (`Excluded`) `from`, at or above `lower`.
    pub(crate) fn prev_key(
        &self,
        cf: u32,
        from: Bound<&[u8]>,
        lower: Option<&[u8]>,
    ) -> Option<&[u8]> {
        let end = match from {
            Bound::Included(k) => Bound::Included((cf, k.to_vec(), u32::MAX)),
            Bound::Excluded(k) => Bound::Excluded((cf, k.to_vec(), 0)),
            Bound::Unbounded => match cf.checked_add(1) {
                Some(next) => Bound::Excluded((next, Vec::new(), 0)),
                None => Bound::Unbounded,
            },
        };
        let ((c, k, _), _) = self.points.range((Bound::Unbounded, end)).next_back()?;
        (*c == cf && lower.is_none_or(|l| k.as_slice() >= l)).then_some(k.as_slice())
    }

    /// Every point entry of family `cf`: by key, then in batch order, as
    /// (key, kind, offset).
    pub(crate) fn entries(&self, cf: u32) -> impl Iterator<Item = (&[u8], ValueKind, usize)> {
        let start = (cf, Vec::new(), 0);
        self.points
            .range((Bound::Included(start), Bound::Unbounded))
            .take_while(move |((c, _, _), _)| *c == cf)
            .map(|((_, k, _), &(offset, kind))| (k.as_slice(), kind, offset))
    }
}

/// The index keys of `key` in family `cf`, every position.
fn span(cf: u32, key: &[u8]) -> (Bound<Slot>, Bound<Slot>) {
    (
        Bound::Included((cf, key.to_vec(), 0)),
        Bound::Included((cf, key.to_vec(), u32::MAX)),
    )
}

#[cfg(test)]
mod tests;
