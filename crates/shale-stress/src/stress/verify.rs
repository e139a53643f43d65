//! Whole-DB verification against the expected state, run at start (after a
//! possible `kill -9`), after each reopen and with `--verify_only`.
//!
//! For each key of each column family, a point read must return what the
//! committed record allows (`expect.rs`: its state, in a form the
//! compaction filter may leave, present or absent as its expiry may have
//! passed during the read), or, if a write was pending when the process
//! died, what the committed or the pending record allows; the slot is then
//! resolved to the pending record if it allows the read, else to the
//! committed one. The pending keys of one batch (same tag in the expected
//! state, possibly in several families) must all hold their new record or
//! all their old one: a batch is atomic across families, also across a
//! kill. A read both records allow (absent when the filter may remove, or
//! an expiry may have passed) counts as either. A full forward scan of
//! each family must return what the resolved records allow, in order, with
//! no key outside `0..max_key` and no key missing that must be there.
//!
//! Requires: no concurrent writers (called between phases). Background
//! flushes and compactions may run, so the filter may act between the
//! point reads and the scan.

use std::collections::BTreeMap;

use shale::{Cf, Db};

use super::expect::{Expect, ReadWindow};
use super::expected::{ExpectedState, Record};
use super::value::{key_bytes, key_index, owner, read, Read};

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
    /// Pending keys (new record differing from the old) whose old or new
    /// record expires: writes of expiring values, or over them, cut by the
    /// kill.
    pub pending_expiring: u64,
    /// Batches cut by the kill (pending keys with one tag whose old and new
    /// records differ), and how many of them were applied.
    pub batches_cut: u64,
    /// Of `batches_cut`, those found applied (all keys new, or either).
    pub batches_applied: u64,
    /// Of `batches_cut`, those spanning several families.
    pub batches_cross_family: u64,
    /// Keys whose record expires, read present.
    pub expiring: u64,
    /// Keys whose record expires, read absent (expired).
    pub expired: u64,
    /// Values read in the filtered form.
    pub filtered: u64,
    /// Keys the filter removed (read absent, record present, not expired).
    pub filter_removed: u64,
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

    /// Counts what a read allowed by `e` shows of expiry and the filter.
    fn note(&mut self, e: &Expect, got: Read) {
        if got.filtered {
            self.filtered += 1;
        }
        match (e.record.state != 0, e.record.expires != 0, got.state != 0) {
            (true, true, true) => self.expiring += 1,
            (true, true, false) => self.expired += 1,
            (true, false, false) => self.filter_removed += 1,
            _ => {}
        }
    }
}

/// How the read of a pending key of a cut batch resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Only the new record allows it.
    Applied,
    /// Only the old record allows it.
    NotApplied,
    /// Both allow it.
    Either,
}

/// The pending keys of one cut batch: (family, key, outcome).
type CutBatch = Vec<(u32, u64, Outcome)>;

/// Verifies `db` (families `cfs`, by family number) against `expected`,
/// resolving pending slots. An IO error on the expected-state file is
/// returned as `Err`.
pub fn verify(db: &Db, cfs: &[Cf], expected: &ExpectedState) -> std::io::Result<Verification> {
    let mut out = Verification::default();
    let mut cut: BTreeMap<u64, CutBatch> = BTreeMap::new();
    for (cf, handle) in cfs.iter().enumerate() {
        let cf = cf as u32;
        let mut records: Vec<Record> = Vec::with_capacity(expected.max_key() as usize);
        for k in 0..expected.max_key() {
            out.keys += 1;
            let i = expected.index(cf, k);
            let slot = expected.get(i);
            let class = expected.filter_class(k);
            let expect = |record| Expect { record, class };
            let w = ReadWindow::open();
            let got = match db.get_cf(handle, &key_bytes(k)) {
                Ok(v) => read(owner(cf, k), v.as_deref()),
                Err(e) => Err(format!("get_cf: {e}")),
            };
            let w = w.close();
            let got = match got {
                Ok(r) => r,
                Err(e) => {
                    out.fail(format!("cf {cf} key {k}: {e}"));
                    records.push(slot.committed);
                    continue;
                }
            };
            let old = expect(slot.committed).allows(got, w);
            let new = slot.pending.map(|p| expect(p).allows(got, w));
            if !old && new != Some(true) {
                out.fail(format!(
                    "cf {cf} key {k}: DB state {}{}, expected {}{}",
                    got.state,
                    if got.filtered { " (filtered form)" } else { "" },
                    expect(slot.committed).describe(w),
                    slot.pending.map_or(String::new(), |p| format!(
                        " or pending {}",
                        expect(p).describe(w)
                    ))
                ));
                records.push(slot.committed);
                continue;
            }
            let resolved = match slot.pending {
                Some(p) if new == Some(true) => p,
                _ => slot.committed,
            };
            if let Some(p) = slot.pending {
                if p != slot.committed {
                    if p.expires != 0 || slot.committed.expires != 0 {
                        out.pending_expiring += 1;
                    }
                    let tag = expected.tag(i);
                    let outcome = match (old, new == Some(true)) {
                        (true, true) => Outcome::Either,
                        (false, _) => Outcome::Applied,
                        (true, false) => Outcome::NotApplied,
                    };
                    if tag != 0 {
                        cut.entry(tag).or_default().push((cf, k, outcome));
                    }
                    if outcome == Outcome::NotApplied {
                        out.pending_old += 1;
                    } else {
                        out.pending_new += 1;
                    }
                } else {
                    out.pending_old += 1;
                }
                expected.commit(i, resolved)?;
            }
            out.note(&expect(resolved), got);
            if got.state != 0 {
                out.live += 1;
            }
            records.push(resolved);
        }
        let expects: Vec<Expect> = records
            .iter()
            .enumerate()
            .map(|(k, &record)| Expect {
                record,
                class: expected.filter_class(k as u64),
            })
            .collect();
        scan_family(db, handle, cf, &expects, &mut out);
    }
    for (tag, keys) in cut {
        out.batches_cut += 1;
        let applied = keys.iter().any(|k| k.2 == Outcome::Applied);
        let not_applied = keys.iter().any(|k| k.2 == Outcome::NotApplied);
        if !not_applied {
            out.batches_applied += 1;
        }
        if keys.iter().any(|k| k.0 != keys[0].0) {
            out.batches_cross_family += 1;
        }
        if applied && not_applied {
            out.fail(format!(
                "batch {tag:#x} half applied after the kill: (cf, key, outcome) {keys:?}"
            ));
        }
    }
    Ok(out)
}

/// The iterator of family `cf` must return what `expects` (by key) allow.
fn scan_family(db: &Db, handle: &Cf, cf: u32, expects: &[Expect], out: &mut Verification) {
    let mut prev: Option<u64> = None;
    let mut seen = vec![false; expects.len()];
    let w = ReadWindow::open();
    let items: Vec<_> = db.range_cf(handle, ..).collect();
    let w = w.close();
    for item in items {
        let (k, v) = match item {
            Ok(kv) => kv,
            Err(e) => {
                out.fail(format!("cf {cf} scan: {e}"));
                break;
            }
        };
        let Some((ki, e)) = key_index(&k).and_then(|i| Some((i, expects.get(i as usize)?))) else {
            out.fail(format!("cf {cf} scan: unexpected key {k:02x?}"));
            continue;
        };
        if prev.is_some_and(|p| p >= ki) {
            out.fail(format!("cf {cf} scan: key {ki} after {prev:?}"));
        }
        prev = Some(ki);
        if let Some(s) = seen.get_mut(ki as usize) {
            *s = true;
        }
        if let Err(msg) = e.check(cf, ki, owner(cf, ki), Some(&v), w) {
            out.fail(format!("scan: {msg}"));
        }
    }
    for (k, e) in expects.iter().enumerate() {
        if e.must_be_present(w) && !seen[k] {
            out.fail(format!(
                "cf {cf} scan: missed key {k}, expected {}",
                e.describe(w)
            ));
        }
    }
}
