//! Fragmented range tombstones: disjoint, sorted `[start, end)` pieces, each
//! with the sequence numbers (descending) of every tombstone over it.
//!
//! Built by a sweep over the tombstones' starts and ends; adjacent pieces
//! with the same sequence numbers are joined. Queries are binary searches.

use std::collections::BTreeMap;

use super::RangeTombstone;
use crate::base::SeqNo;

/// One piece: `[start, end)` covered by tombstones at `seqs` (descending,
/// never empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fragment {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub seqs: Vec<SeqNo>,
}

impl Fragment {
    /// The newest tombstone sequence number visible at `read_seq`.
    #[inline]
    pub(crate) fn newest_at(&self, read_seq: SeqNo) -> Option<SeqNo> {
        // Descending: the first one <= read_seq.
        let i = self.seqs.partition_point(|&s| s > read_seq);
        self.seqs.get(i).copied()
    }
}

/// Disjoint fragments in key order (see the module comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Fragments {
    frags: Vec<Fragment>,
}

impl Fragments {
    /// Fragments of `tombstones` (any order; empty ranges ignored).
    pub(crate) fn build<'a>(tombstones: impl IntoIterator<Item = &'a RangeTombstone>) -> Fragments {
        // Events: (key, is_start, seq); ends sort before starts at one key
        // (a piece ends where the next begins).
        let mut events: Vec<(&[u8], bool, SeqNo)> = Vec::new();
        for t in tombstones {
            if t.start < t.end {
                events.push((&t.start, true, t.seq));
                events.push((&t.end, false, t.seq));
            }
        }
        events.sort_unstable_by(|a, b| a.0.cmp(b.0).then(a.1.cmp(&b.1)));
        let mut active: BTreeMap<SeqNo, usize> = BTreeMap::new();
        let mut frags: Vec<Fragment> = Vec::new();
        let mut i = 0;
        let mut open_at: Option<&[u8]> = None;
        while i < events.len() {
            let key = events[i].0;
            // Close the piece running up to `key`.
            if let Some(start) = open_at {
                if start < key && !active.is_empty() {
                    let seqs: Vec<SeqNo> = active.keys().rev().copied().collect();
                    match frags.last_mut() {
                        Some(last) if last.end.as_slice() == start && last.seqs == seqs => {
                            last.end = key.to_vec();
                        }
                        _ => frags.push(Fragment {
                            start: start.to_vec(),
                            end: key.to_vec(),
                            seqs,
                        }),
                    }
                }
            }
            while i < events.len() && events[i].0 == key {
                let (_, is_start, seq) = events[i];
                if is_start {
                    *active.entry(seq).or_insert(0) += 1;
                } else if let Some(n) = active.get_mut(&seq) {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(&seq);
                    }
                }
                i += 1;
            }
            open_at = Some(key);
        }
        Fragments { frags }
    }

    /// Fragments already disjoint and sorted (as stored in a table).
    pub(crate) fn from_sorted(frags: Vec<Fragment>) -> Fragments {
        debug_assert!(frags.windows(2).all(|w| w[0].end <= w[1].start));
        Fragments { frags }
    }

    /// The same pieces, every one at sequence number `seq` only (an
    /// ingested table's tombstones, all written at 0, read at its global
    /// sequence number).
    pub(crate) fn at_seqno(mut self, seq: SeqNo) -> Fragments {
        for f in &mut self.frags {
            f.seqs = vec![seq];
        }
        self
    }

    /// True when there are none.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.frags.is_empty()
    }

    /// The fragments in key order.
    pub(crate) fn fragments(&self) -> &[Fragment] {
        &self.frags
    }

    /// Number of (fragment, sequence number) pairs: the tombstones a table
    /// stores for these fragments.
    #[cfg(test)]
    pub(crate) fn num_tombstones(&self) -> usize {
        self.frags.iter().map(|f| f.seqs.len()).sum()
    }

    /// The fragment holding `key`, if any.
    #[inline]
    pub(crate) fn find(&self, key: &[u8]) -> Option<&Fragment> {
        let i = self.frags.partition_point(|f| f.end.as_slice() <= key);
        self.frags.get(i).filter(|f| f.start.as_slice() <= key)
    }

    /// The newest tombstone over `key` visible at `read_seq`.
    #[inline]
    pub(crate) fn max_covering(&self, key: &[u8], read_seq: SeqNo) -> Option<SeqNo> {
        self.find(key).and_then(|f| f.newest_at(read_seq))
    }

    /// The first fragment ending after `key` (the one holding it, or the
    /// next), for walking fragments in order.
    pub(crate) fn first_ending_after(&self, key: &[u8]) -> usize {
        self.frags.partition_point(|f| f.end.as_slice() <= key)
    }

    /// Fragments cut to `[lo, hi)` (`None`: unbounded on that side).
    #[cfg(test)]
    pub(crate) fn clipped(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Vec<Fragment> {
        clip(&self.frags, lo, hi)
    }

    /// What a flush or compaction writes of these tombstones, for readers
    /// at `snapshots` (ascending): per fragment, the newest sequence number
    /// of each snapshot stripe (older ones in a stripe hide nothing more);
    /// with `drop_oldest_stripe` (nothing lies below the output), none of
    /// the oldest stripe, whose covered entries the job drops itself.
    pub(crate) fn for_output(
        &self,
        snapshots: &[SeqNo],
        drop_oldest_stripe: bool,
    ) -> Vec<Fragment> {
        let stripe = |seq: SeqNo| snapshots.partition_point(|&s| s < seq);
        let mut out: Vec<Fragment> = Vec::new();
        for f in &self.frags {
            let mut seqs: Vec<SeqNo> = Vec::new();
            let mut last_stripe = None;
            for &seq in &f.seqs {
                let st = stripe(seq);
                if last_stripe == Some(st) || (drop_oldest_stripe && st == 0) {
                    continue;
                }
                last_stripe = Some(st);
                seqs.push(seq);
            }
            if seqs.is_empty() {
                continue;
            }
            match out.last_mut() {
                Some(last) if last.end == f.start && last.seqs == seqs => last.end = f.end.clone(),
                _ => out.push(Fragment {
                    start: f.start.clone(),
                    end: f.end.clone(),
                    seqs,
                }),
            }
        }
        out
    }
}

/// `frags` (disjoint, sorted) cut to `[lo, hi)`.
pub(crate) fn clip(frags: &[Fragment], lo: Option<&[u8]>, hi: Option<&[u8]>) -> Vec<Fragment> {
    let mut out = Vec::new();
    for f in frags {
        let start = match lo {
            Some(lo) if f.start.as_slice() < lo => lo,
            _ => f.start.as_slice(),
        };
        let end = match hi {
            Some(hi) if f.end.as_slice() > hi => hi,
            _ => f.end.as_slice(),
        };
        if start < end {
            out.push(Fragment {
                start: start.to_vec(),
                end: end.to_vec(),
                seqs: f.seqs.clone(),
            });
        }
    }
    out
}

impl Fragments {
    /// The fragments of several disjoint-or-not sets, fragmented together.
    pub(crate) fn merge<'a>(sets: impl IntoIterator<Item = &'a Fragments>) -> Fragments {
        let tombstones: Vec<RangeTombstone> = sets
            .into_iter()
            .flat_map(|s| s.frags.iter())
            .flat_map(|f| {
                f.seqs.iter().map(|&seq| RangeTombstone {
                    start: f.start.clone(),
                    end: f.end.clone(),
                    seq,
                })
            })
            .collect();
        Fragments::build(&tombstones)
    }
}

#[cfg(test)]
mod tests;
