//! Whole-DB verification against the expected state, run at start (after a
//! possible `kill -9`), after each reopen and with `--verify_only`.
//!
//! For each key of each column family, a point read must return the
//! committed state, or, if a write was pending when the process died, either
//! the committed or the pending state; the slot is then resolved to what the
//! DB holds. The pending keys of one batch (same tag in the expected state,
//! possibly in several families) must all hold their new state or all their
//! old one: a batch is atomic across families, also across a kill. A full
//! forward scan of each family must agree with the point reads, in order,
//! with no key outside `0..max_key`.
//!
//! Requires: no concurrent writers (called between phases).

use std::collections::BTreeMap;

use shale::{Cf, Db};

use super::expected::{ExpectedState, ValueState};
use super::value::{decode, key_bytes, key_index, owner};

/// What verification found.
#[derive(Debug, Default)]
pub struct Verification {
    /// Keys checked (over every family).
    pub keys: u64,
    /// Keys present in the DB.
    pub live: u64,
    /// Pending keys resolved to their new state / to their old state.
    pub pending_new: u64,
    /// Pending keys that still held the old state.
    pub pending_old: u64,
    /// Batches cut by the kill (pending keys with one tag whose old and new
    /// states differ), and how many of them were applied.
    pub batches_cut: u64,
    /// Of `batches_cut`, those found applied (all keys new).
    pub batches_applied: u64,
    /// Of `batches_cut`, those spanning several families.
    pub batches_cross_family: u64,
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

/// The pending keys of one cut batch: (family, key, resolved to new).
type CutBatch = Vec<(u32, u64, bool)>;

/// Verifies `db` (families `cfs`, by family number) against `expected`,
/// resolving pending slots. An IO error on the expected-state file is
/// returned as `Err`.
pub fn verify(db: &Db, cfs: &[Cf], expected: &ExpectedState) -> std::io::Result<Verification> {
    let mut out = Verification::default();
    let mut cut: BTreeMap<u64, CutBatch> = BTreeMap::new();
    for (cf, handle) in cfs.iter().enumerate() {
        let cf = cf as u32;
        let mut states: Vec<ValueState> = Vec::with_capacity(expected.max_key() as usize);
        for k in 0..expected.max_key() {
            out.keys += 1;
            let i = expected.index(cf, k);
            let slot = expected.get(i);
            let got = match db.get_cf(handle, &key_bytes(k)) {
                Ok(v) => decode(owner(cf, k), v.as_deref()),
                Err(e) => Err(format!("get_cf: {e}")),
            };
            let got = match got {
                Ok(s) => s,
                Err(e) => {
                    out.fail(format!("cf {cf} key {k}: {e}"));
                    states.push(slot.committed);
                    continue;
                }
            };
            if !slot.allows(got) {
                out.fail(format!(
                    "cf {cf} key {k}: DB state {got}, expected {}{}",
                    slot.committed,
                    slot.pending
                        .map_or(String::new(), |p| format!(" or pending {p}"))
                ));
            } else if let Some(p) = slot.pending {
                if p != slot.committed {
                    let tag = expected.tag(i);
                    if tag != 0 {
                        cut.entry(tag).or_default().push((cf, k, got == p));
                    }
                }
                if got == p && p != slot.committed {
                    out.pending_new += 1;
                } else {
                    out.pending_old += 1;
                }
                expected.commit(i, got)?;
            }
            if got != 0 {
                out.live += 1;
            }
            states.push(got);
        }
        scan_family(db, handle, cf, expected.max_key(), &states, &mut out);
    }
    for (tag, keys) in cut {
        out.batches_cut += 1;
        let applied = keys.iter().filter(|k| k.2).count();
        if applied == keys.len() {
            out.batches_applied += 1;
        }
        if keys.iter().any(|k| k.0 != keys[0].0) {
            out.batches_cross_family += 1;
        }
        if applied != 0 && applied != keys.len() {
            out.fail(format!(
                "batch {tag:#x} half applied after the kill: (cf, key, applied) {keys:?}"
            ));
        }
    }
    Ok(out)
}

/// The iterator of family `cf` must agree with its point reads `states`.
fn scan_family(
    db: &Db,
    handle: &Cf,
    cf: u32,
    max_key: u64,
    states: &[ValueState],
    out: &mut Verification,
) {
    let live = states.iter().filter(|&&s| s != 0).count() as u64;
    let mut prev: Option<u64> = None;
    let mut scanned = 0u64;
    for item in db.range_cf(handle, ..) {
        let (k, v) = match item {
            Ok(kv) => kv,
            Err(e) => {
                out.fail(format!("cf {cf} scan: {e}"));
                break;
            }
        };
        let Some(ki) = key_index(&k).filter(|&i| i < max_key) else {
            out.fail(format!("cf {cf} scan: unexpected key {k:02x?}"));
            continue;
        };
        if prev.is_some_and(|p| p >= ki) {
            out.fail(format!("cf {cf} scan: key {ki} after {prev:?}"));
        }
        prev = Some(ki);
        scanned += 1;
        match decode(owner(cf, ki), Some(&v)) {
            Ok(s) if Some(&s) == states.get(ki as usize) => {}
            Ok(s) => out.fail(format!(
                "cf {cf} scan: key {ki} state {s}, point read gave {:?}",
                states.get(ki as usize)
            )),
            Err(e) => out.fail(format!("cf {cf} scan: {e}")),
        }
    }
    if scanned != live {
        out.fail(format!(
            "cf {cf} scan saw {scanned} keys, point reads {live} live"
        ));
    }
}
