//! Which entries of a sorted stream a flush or compaction keeps.
//!
//! Rules (RocksDB's, with snapshot stripes): for each user key, entries come
//! newest first. A *stripe* is the set of sequence numbers between two
//! adjacent live snapshots; readers in one stripe see the same newest
//! version. The newest entry of a key in each stripe is kept, older entries in
//! the same stripe are dropped (nobody can see them). A tombstone is dropped
//! too when every snapshot sees it (it lies in the oldest stripe) and no
//! older data for the key can exist below the output level.

use crate::base::{parse_internal_key, SeqNo, ValueKind};
use crate::error::{Error, Result};

/// Decides, per key, whether data may exist below the output level.
pub(crate) type BaseLevelCheck<'a> = Box<dyn Fn(&[u8]) -> bool + Send + 'a>;

pub(crate) struct EntryFilter<'a> {
    /// Live snapshots, ascending.
    snapshots: Vec<SeqNo>,
    /// Returns true when no data for the user key exists below the output.
    is_base_level: Option<BaseLevelCheck<'a>>,
    cur_key: Vec<u8>,
    has_cur: bool,
    last_stripe: usize,
    /// Entries seen / dropped.
    pub keys_in: u64,
    pub keys_dropped: u64,
}

/// What to do with one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Keep,
    Drop,
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
            cur_key: Vec::new(),
            has_cur: false,
            last_stripe: 0,
            keys_in: 0,
            keys_dropped: 0,
        }
    }

    fn stripe(&self, seq: SeqNo) -> usize {
        self.snapshots.partition_point(|&s| s < seq)
    }

    /// Decides for the next entry (internal keys must arrive in order).
    pub(crate) fn decide(&mut self, ikey: &[u8], file: &str) -> Result<Decision> {
        self.keys_in += 1;
        let Some(p) = parse_internal_key(ikey) else {
            return Err(Error::corruption(
                file,
                0,
                "malformed internal key in compaction input",
            ));
        };
        let stripe = self.stripe(p.seq);
        let first_of_key = !self.has_cur || self.cur_key.as_slice() != p.user_key;
        if first_of_key {
            self.cur_key.clear();
            self.cur_key.extend_from_slice(p.user_key);
            self.has_cur = true;
        } else if stripe == self.last_stripe {
            // Shadowed by a newer entry that every reader of this stripe sees.
            self.keys_dropped += 1;
            return Ok(Decision::Drop);
        }
        self.last_stripe = stripe;
        if p.kind == ValueKind::Deletion && stripe == 0 {
            if let Some(check) = &self.is_base_level {
                if check(p.user_key) {
                    self.keys_dropped += 1;
                    return Ok(Decision::Drop);
                }
            }
        }
        Ok(Decision::Keep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::make_internal_key;

    fn ik(k: &str, s: u64, kind: ValueKind) -> Vec<u8> {
        let mut v = Vec::new();
        make_internal_key(&mut v, k.as_bytes(), s, kind as u8);
        v
    }

    fn run(f: &mut EntryFilter, entries: &[(&str, u64, ValueKind)]) -> Vec<u64> {
        entries
            .iter()
            .filter(|(k, s, kind)| f.decide(&ik(k, *s, *kind), "t").unwrap() == Decision::Keep)
            .map(|e| e.1)
            .collect()
    }

    const V: ValueKind = ValueKind::Value;
    const D: ValueKind = ValueKind::Deletion;

    #[test]
    fn drops_shadowed_without_snapshots() {
        let mut f = EntryFilter::new(vec![], None);
        let kept = run(
            &mut f,
            &[("a", 9, V), ("a", 5, V), ("a", 1, D), ("b", 3, V)],
        );
        assert_eq!(kept, vec![9, 3]);
        assert_eq!(f.keys_dropped, 2);
        assert_eq!(f.keys_in, 4);
    }

    #[test]
    fn keeps_versions_visible_to_snapshots() {
        // Snapshot at 6 sees a@5; snapshot at 2 sees a@1.
        let mut f = EntryFilter::new(vec![6, 2], None);
        let kept = run(
            &mut f,
            &[
                ("a", 9, V),
                ("a", 8, V),
                ("a", 5, V),
                ("a", 4, V),
                ("a", 1, V),
            ],
        );
        assert_eq!(kept, vec![9, 5, 1]);
    }

    #[test]
    fn tombstones_dropped_only_at_base_level_and_oldest_stripe() {
        let mut f = EntryFilter::new(vec![], Some(Box::new(|_| true)));
        let kept = run(&mut f, &[("a", 9, D), ("a", 5, V), ("b", 4, V)]);
        assert_eq!(kept, vec![4]);
        // Not at the base level: the tombstone must stay.
        let mut f = EntryFilter::new(vec![], Some(Box::new(|_| false)));
        assert_eq!(run(&mut f, &[("a", 9, D), ("a", 5, V)]), vec![9]);
        // A snapshot older than the tombstone still needs a@5 and the
        // tombstone hides it from newer readers: both stay.
        let mut f = EntryFilter::new(vec![6], Some(Box::new(|_| true)));
        assert_eq!(run(&mut f, &[("a", 9, D), ("a", 5, V)]), vec![9, 5]);
    }
}
