//! The compaction filter of stress runs (`--compaction_filter`): a
//! deterministic filter over classes of keys, so verification knows what
//! each key may read as.
//!
//! Classes, by key number (the same in every family):
//! - key ≡ 3 (mod 8), *changed*: the value is rewritten to its filtered form
//!   (the same value base with the flag bit set, `value::filtered`); a
//!   filtered value is kept as it is, so asking twice changes nothing;
//! - key ≡ 6 (mod 8) and not a no-overwrite key, *removed*: the value
//!   becomes a tombstone (a no-overwrite key is single-deleted, whose
//!   contract is to meet its put, not a tombstone the filter made);
//! - any other key, *kept*.
//!
//! The engine asks only about values no live snapshot can see, at flush and
//! compaction, so a read of a changed key returns either form and a read
//! of a removed key the value or nothing; which one depends on timing, not
//! on the expected state. Read-modify-write merges accept either form as
//! their base (`value::decode`) and write the plain form; removed keys get
//! no such merges (`worker.rs`), since the base they meet is not known.
//!
//! Whether a DB has the filter is fixed when its expected state is created
//! (`expected.rs`): every run and every verification reopens it with the
//! same filter, so what the classes allow holds across kills.

use shale::{CompactionFilter, FilterDecision};

use super::expected::no_overwrite_key;
use super::value::{filtered, key_index};

/// The filter's name.
pub const NAME: &str = "shale-stress.residue-filter";

/// What the filter does to one key's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterClass {
    /// Left alone (also every key of a DB without the filter).
    Kept,
    /// Rewritten to the filtered form.
    Changed,
    /// Removed.
    Removed,
}

/// The class of `key` in a DB whose no-overwrite percent is
/// `no_overwrite_percent`.
pub fn class(key: u64, no_overwrite_percent: u32) -> FilterClass {
    match key % 8 {
        3 => FilterClass::Changed,
        6 if !no_overwrite_key(key, no_overwrite_percent) => FilterClass::Removed,
        _ => FilterClass::Kept,
    }
}

/// See the module documentation.
#[derive(Debug, Clone, Copy)]
pub struct StressFilter {
    /// The DB's no-overwrite percent (no-overwrite keys are never removed).
    pub no_overwrite_percent: u32,
}

impl CompactionFilter for StressFilter {
    fn name(&self) -> &str {
        NAME
    }

    fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> FilterDecision {
        let Some(k) = key_index(key) else {
            return FilterDecision::Keep;
        };
        match class(k, self.no_overwrite_percent) {
            FilterClass::Kept => FilterDecision::Keep,
            FilterClass::Changed => {
                filtered(value).map_or(FilterDecision::Keep, FilterDecision::ChangeValue)
            }
            FilterClass::Removed => FilterDecision::Remove,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress::value::{encode, key_bytes, read};

    #[test]
    fn classes_and_decisions() {
        let f = StressFilter {
            no_overwrite_percent: 0,
        };
        let v = encode(11, 5);
        assert_eq!(f.filter(1, &key_bytes(11), &v), {
            let w = filtered(&v).unwrap();
            assert_eq!(read(11, Some(&w)).unwrap().state, 5);
            assert!(read(11, Some(&w)).unwrap().filtered);
            FilterDecision::ChangeValue(w)
        });
        // A filtered value stays as it is.
        let w = filtered(&v).unwrap();
        assert_eq!(f.filter(0, &key_bytes(11), &w), FilterDecision::Keep);
        assert_eq!(
            f.filter(0, &key_bytes(14), &encode(14, 5)),
            FilterDecision::Remove
        );
        assert_eq!(
            f.filter(0, &key_bytes(12), &encode(12, 5)),
            FilterDecision::Keep
        );
        assert_eq!(f.filter(0, b"odd", b"x"), FilterDecision::Keep);
        let counts = (0..800).fold([0; 3], |mut c, k| {
            c[class(k, 0) as usize] += 1;
            c
        });
        assert_eq!(counts, [600, 100, 100]);
        // No-overwrite keys are never removed.
        assert!((0..800)
            .filter(|&k| no_overwrite_key(k, 50))
            .all(|k| class(k, 50) != FilterClass::Removed));
        assert!((0..800).any(|k| class(k, 50) == FilterClass::Removed));
    }
}
