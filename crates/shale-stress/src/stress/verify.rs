//! Whole-DB verification against the expected state, run at start (after a
//! possible `kill -9`), after each reopen and with `--verify_only`.
//!
//! For each key, a point read must return the committed state, or, if a
//! write was pending when the process died, either the committed or the
//! pending state; the slot is then resolved to what the DB holds. A full
//! forward scan must agree with the point reads, in order, with no key
//! outside `0..max_key`.
//!
//! Requires: no concurrent writers (called between phases).

use shale::Db;

use super::expected::{ExpectedState, ValueState};
use super::value::{decode, key_bytes, key_index};

/// What verification found.
#[derive(Debug, Default)]
pub struct Verification {
    /// Keys checked.
    pub keys: u64,
    /// Keys present in the DB.
    pub live: u64,
    /// Pending keys resolved to their new state / to their old state.
    pub pending_new: u64,
    /// Pending keys that still held the old state.
    pub pending_old: u64,
    /// Failure descriptions (up to 20 kept; see `failures`).
    pub messages: Vec<String>,
    /// Number of failures.
    pub failures: u64,
}

impl Verification {
    fn fail(&mut self, msg: String) {
        self.failures += 1;
        if self.messages.len() < 20 {
            self.messages.push(msg);
        }
    }
}

/// Verifies `db` against `expected`, resolving pending slots. An IO error on
/// the expected-state file is returned as `Err`.
pub fn verify(db: &Db, expected: &ExpectedState) -> std::io::Result<Verification> {
    let mut out = Verification::default();
    let mut states: Vec<ValueState> = Vec::with_capacity(expected.max_key() as usize);
    for k in 0..expected.max_key() {
        out.keys += 1;
        let slot = expected.get(k);
        let got = match db.get(&key_bytes(k)) {
            Ok(v) => decode(k, v.as_deref()),
            Err(e) => Err(format!("get: {e}")),
        };
        let got = match got {
            Ok(s) => s,
            Err(e) => {
                out.fail(format!("key {k}: {e}"));
                states.push(slot.committed);
                continue;
            }
        };
        if !slot.allows(got) {
            out.fail(format!(
                "key {k}: DB state {got}, expected {}{}",
                slot.committed,
                slot.pending
                    .map_or(String::new(), |p| format!(" or pending {p}"))
            ));
        } else if let Some(p) = slot.pending {
            if got == p && p != slot.committed {
                out.pending_new += 1;
            } else {
                out.pending_old += 1;
            }
            expected.commit(k, got)?;
        }
        if got != 0 {
            out.live += 1;
        }
        states.push(got);
    }
    // The iterator must agree with the point reads.
    let mut prev: Option<u64> = None;
    let mut scanned = 0u64;
    for item in db.range(..) {
        let (k, v) = match item {
            Ok(kv) => kv,
            Err(e) => {
                out.fail(format!("scan: {e}"));
                break;
            }
        };
        let Some(ki) = key_index(&k).filter(|&i| i < expected.max_key()) else {
            out.fail(format!("scan: unexpected key {k:02x?}"));
            continue;
        };
        if prev.is_some_and(|p| p >= ki) {
            out.fail(format!("scan: key {ki} after {prev:?}"));
        }
        prev = Some(ki);
        scanned += 1;
        match decode(ki, Some(&v)) {
            Ok(s) if Some(&s) == states.get(ki as usize) => {}
            Ok(s) => out.fail(format!(
                "scan: key {ki} state {s}, point read gave {:?}",
                states.get(ki as usize)
            )),
            Err(e) => out.fail(format!("scan: {e}")),
        }
    }
    if scanned != out.live {
        out.fail(format!(
            "scan saw {scanned} keys, point reads {} live",
            out.live
        ));
    }
    Ok(out)
}
