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
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn t(s: &str, e: &str, seq: SeqNo) -> RangeTombstone {
        RangeTombstone {
            start: s.as_bytes().to_vec(),
            end: e.as_bytes().to_vec(),
            seq,
        }
    }

    fn shape(f: &Fragments) -> Vec<(String, String, Vec<SeqNo>)> {
        f.fragments()
            .iter()
            .map(|f| {
                (
                    String::from_utf8(f.start.clone()).unwrap(),
                    String::from_utf8(f.end.clone()).unwrap(),
                    f.seqs.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn overlapping_tombstones_are_cut_at_every_edge() {
        let f = Fragments::build(&[t("a", "e", 5), t("c", "g", 9), t("x", "x", 3)]);
        assert_eq!(
            shape(&f),
            vec![
                ("a".into(), "c".into(), vec![5]),
                ("c".into(), "e".into(), vec![9, 5]),
                ("e".into(), "g".into(), vec![9]),
            ]
        );
        assert_eq!(f.max_covering(b"d", 100), Some(9));
        assert_eq!(f.max_covering(b"d", 8), Some(5));
        assert_eq!(f.max_covering(b"d", 4), None);
        assert_eq!(f.max_covering(b"g", 100), None, "end is exclusive");
        assert_eq!(f.max_covering(b"a", 100), Some(5));
        assert_eq!(f.num_tombstones(), 4);
    }

    #[test]
    fn adjacent_pieces_with_equal_seqs_join() {
        let f = Fragments::build(&[t("a", "c", 5), t("c", "e", 5)]);
        assert_eq!(shape(&f), vec![("a".into(), "e".into(), vec![5])]);
    }

    #[test]
    fn clipping_and_merging() {
        let f = Fragments::build(&[t("a", "m", 5)]);
        let c = f.clipped(Some(b"c"), Some(b"f"));
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].start.as_slice(), c[0].end.as_slice()),
            (&b"c"[..], &b"f"[..])
        );
        assert!(f.clipped(Some(b"m"), None).is_empty());
        let g = Fragments::build(&[t("k", "z", 7)]);
        let m = Fragments::merge([&f, &g]);
        assert_eq!(m.max_covering(b"l", 100), Some(7));
        assert_eq!(m.max_covering(b"l", 6), Some(5));
        assert_eq!(m.max_covering(b"y", 6), None);
    }

    #[test]
    fn output_keeps_the_newest_of_each_stripe() {
        let f = Fragments::build(&[
            t("a", "c", 3),
            t("a", "c", 5),
            t("a", "c", 9),
            t("c", "d", 2),
        ]);
        // Snapshot at 6: stripes {<=6} and {>6}.
        let out = f.for_output(&[6], false);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].seqs, vec![9, 5]);
        assert_eq!(out[1].seqs, vec![2]);
        // Nothing below: the oldest stripe goes.
        let out = f.for_output(&[6], true);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].seqs, vec![9]);
        assert!(f.for_output(&[], true).is_empty());
    }

    #[test]
    fn random_tombstones_match_a_brute_force_scan() {
        let mut rng = SmallRng::seed_from_u64(13);
        for _ in 0..200 {
            let n = rng.gen_range(0..12);
            let ts: Vec<RangeTombstone> = (0..n)
                .map(|_| {
                    let a = rng.gen_range(0..30u8);
                    let b = rng.gen_range(0..30u8);
                    RangeTombstone {
                        start: vec![a],
                        end: vec![b],
                        seq: rng.gen_range(1..20),
                    }
                })
                .collect();
            let f = Fragments::build(&ts);
            for w in f.fragments().windows(2) {
                assert!(w[0].end <= w[1].start);
            }
            for k in 0..32u8 {
                for read in [0, 5, 10, 25] {
                    let want = ts
                        .iter()
                        .filter(|t| {
                            t.start.as_slice() <= [k].as_slice()
                                && [k].as_slice() < t.end.as_slice()
                        })
                        .map(|t| t.seq)
                        .filter(|&s| s <= read)
                        .max();
                    assert_eq!(
                        f.max_covering(&[k], read),
                        want,
                        "key {k} at {read}: {ts:?}"
                    );
                }
            }
        }
    }
}
