//! What a read of one key may return, given its expected [`Record`] and
//! filter class: the record's value, in the plain form or (a changed key)
//! the filtered form; or nothing, when the record is absent, when the
//! compaction filter may have removed the value (a removed key), or when
//! the value's expiry may have passed during the read.
//!
//! Expiry: the DB reads an expiring value as deleted from its expiry second
//! on, by its clock, the system clock in whole Unix seconds. The verifier
//! brackets each read with two readings of the same clock (a
//! [`ReadWindow`]): the DB read the time somewhere in between. The value
//! must be there if even the first reading is more than
//! [`EXPIRY_TOLERANCE_SECS`] before the expiry second, must be gone if even
//! the last is that far past it, and may be either in between (the
//! tolerance absorbs a clock stepped by a second, not more).

use std::time::{SystemTime, UNIX_EPOCH};

use super::compaction_filter::FilterClass;
use super::expected::Record;
use super::value::{read, Read};

/// Seconds on either side of an expiry second in which a read may find
/// the value present or absent.
pub const EXPIRY_TOLERANCE_SECS: u64 = 1;

/// The system clock in whole Unix seconds (what the DB's clock reads).
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The clock readings before and after one or more reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadWindow {
    first: u64,
    last: u64,
}

impl ReadWindow {
    /// A window opened now; close it with [`ReadWindow::close`] after the
    /// reads.
    pub fn open() -> ReadWindow {
        let t = now_secs();
        ReadWindow { first: t, last: t }
    }

    /// The window from its opening to now.
    pub fn close(self) -> ReadWindow {
        ReadWindow {
            last: now_secs().max(self.first),
            ..self
        }
    }

    /// A window of the given readings (tests).
    #[cfg(test)]
    pub fn at(first: u64, last: u64) -> ReadWindow {
        ReadWindow { first, last }
    }
}

/// What one key may read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expect {
    /// The key's expected record.
    pub record: Record,
    /// What the DB's compaction filter does to the key.
    pub class: FilterClass,
}

impl Expect {
    /// True if a read in window `w` may find the value present.
    fn may_be_present(&self, w: ReadWindow) -> bool {
        let e = u64::from(self.record.expires);
        self.record.state != 0 && (e == 0 || w.first < e + EXPIRY_TOLERANCE_SECS)
    }

    /// True if a read in window `w` may find the key absent.
    fn may_be_absent(&self, w: ReadWindow) -> bool {
        let e = u64::from(self.record.expires);
        self.record.state == 0
            || self.class == FilterClass::Removed
            || (e != 0 && w.last + EXPIRY_TOLERANCE_SECS >= e)
    }

    /// True if a read in window `w` must find the key (a scan that misses
    /// it fails).
    pub fn must_be_present(&self, w: ReadWindow) -> bool {
        !self.may_be_absent(w)
    }

    /// True if a read in window `w` may return `got`.
    pub fn allows(&self, got: Read, w: ReadWindow) -> bool {
        if got.state == 0 {
            return self.may_be_absent(w);
        }
        got.state == self.record.state
            && self.may_be_present(w)
            && (!got.filtered || self.class == FilterClass::Changed)
    }

    /// Checks `value` read for `key` of family `cf` (whose values carry
    /// `owner`) in window `w`.
    pub fn check(
        &self,
        cf: u32,
        key: u64,
        owner: u64,
        value: Option<&[u8]>,
        w: ReadWindow,
    ) -> Result<(), String> {
        let got = read(owner, value).map_err(|e| format!("cf {cf}: {e}"))?;
        if self.allows(got, w) {
            return Ok(());
        }
        Err(format!(
            "cf {cf} key {key}: read state {}{}, expected {}",
            got.state,
            if got.filtered { " (filtered form)" } else { "" },
            self.describe(w)
        ))
    }

    /// The expectation in words, for failure messages.
    pub fn describe(&self, w: ReadWindow) -> String {
        let mut s = self.record.state.to_string();
        if self.record.expires != 0 {
            s += &format!(
                " expiring at {} (read between {} and {})",
                self.record.expires, w.first, w.last
            );
        }
        match self.class {
            FilterClass::Kept => s,
            FilterClass::Changed => s + " (either form)",
            FilterClass::Removed => s + " (or removed by the filter)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress::value::encode;

    fn got(state: u32, filtered: bool) -> Read {
        Read { state, filtered }
    }

    #[test]
    fn forms_classes_and_expiry_windows() {
        let w = ReadWindow::at(1000, 1000);
        let plain = Expect {
            record: Record::lasting(5),
            class: FilterClass::Kept,
        };
        assert!(plain.allows(got(5, false), w));
        assert!(!plain.allows(got(5, true), w));
        assert!(!plain.allows(got(0, false), w) && !plain.allows(got(6, false), w));
        assert!(plain.must_be_present(w));
        let changed = Expect {
            class: FilterClass::Changed,
            ..plain
        };
        assert!(changed.allows(got(5, true), w) && changed.allows(got(5, false), w));
        assert!(!changed.allows(got(0, false), w));
        let removed = Expect {
            class: FilterClass::Removed,
            ..plain
        };
        assert!(removed.allows(got(0, false), w) && removed.allows(got(5, false), w));
        assert!(!removed.allows(got(5, true), w) && !removed.must_be_present(w));
        let absent = Expect {
            record: Record::ABSENT,
            class: FilterClass::Changed,
        };
        assert!(absent.allows(got(0, false), w) && !absent.allows(got(5, true), w));
        // Expiring at 1000: present until 999 for sure, absent from 1001
        // for sure; either within a second of 1000.
        let exp = Expect {
            record: Record {
                state: 5,
                expires: 1000,
            },
            class: FilterClass::Kept,
        };
        let at = |t| ReadWindow::at(t, t);
        assert!(exp.allows(got(5, false), at(998)) && !exp.allows(got(0, false), at(998)));
        assert!(exp.must_be_present(at(998)));
        for t in [999, 1000] {
            assert!(exp.allows(got(5, false), at(t)) && exp.allows(got(0, false), at(t)));
        }
        assert!(!exp.allows(got(5, false), at(1001)) && exp.allows(got(0, false), at(1001)));
        // A read spanning the deadline may see either.
        assert!(exp.allows(got(5, false), ReadWindow::at(990, 1005)));
        assert!(exp.allows(got(0, false), ReadWindow::at(990, 1005)));
        assert!(!exp.allows(got(6, false), ReadWindow::at(990, 1005)));
        // Checks decode the value under its owner.
        assert!(exp.check(0, 7, 7, Some(&encode(7, 5)), at(998)).is_ok());
        let e = exp.check(0, 7, 7, None, at(990)).unwrap_err();
        assert!(e.contains("expiring at 1000"), "{e}");
        assert!(exp.check(0, 7, 7, Some(&encode(8, 5)), at(990)).is_err());
    }

    #[test]
    fn windows_follow_the_clock() {
        let w = ReadWindow::open();
        let c = w.close();
        assert!(c.first == w.first && c.last >= c.first);
        assert!(now_secs() >= c.last && c.first > 1_700_000_000);
    }
}
