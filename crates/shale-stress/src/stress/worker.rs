//! The operations of one stress thread, each checked against the expected
//! state.
//!
//! Every operation holds the locks of the keys it touches, so while it runs
//! the expected state of those keys is exact: writes mark the new state
//! pending before the DB call and commit it after; reads must return exactly
//! the committed state. Operations: get, put, delete, batch (2–5 keys), scan
//! (forward or backward over up to 20 keys; order and every value checked)
//! and snapshot read (the state at the snapshot, read back after the key was
//! possibly overwritten).
//!
//! Thread safety: all shared state is in [`Shared`] (atomics, the DB handle,
//! the expected state behind key locks).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rand::rngs::SmallRng;
use rand::Rng;
use shale::{Db, ReadOptions, WriteBatch, WriteOptions};

use super::expected::{ExpectedState, ValueState};
use super::key_locks::KeyLocks;
use super::value::{decode, encode, key_bytes, key_index};

/// Operation kinds, for statistics.
#[derive(Debug, Clone, Copy)]
pub enum OpType {
    /// Point read.
    Get = 0,
    /// Single put.
    Put,
    /// Single delete.
    Delete,
    /// Write batch.
    Batch,
    /// Iterator scan.
    Scan,
    /// Read at a snapshot.
    SnapshotRead,
    /// Flush, or manual compaction of a random key range (either bound may
    /// be open).
    Compact,
}

/// Names of [`OpType`], in order.
pub const OP_NAMES: [&str; 7] = [
    "get",
    "put",
    "delete",
    "batch",
    "scan",
    "snapshot_read",
    "compact",
];

/// State shared by all stress threads.
pub struct Shared<'a> {
    /// The DB under test.
    pub db: &'a Db,
    /// The expected state of every key.
    pub expected: &'a ExpectedState,
    /// Per-key locks.
    pub locks: &'a KeyLocks,
    /// Write options (`sync`).
    pub write_options: WriteOptions,
    /// Operations done, per [`OpType`].
    pub counts: [AtomicU64; OP_NAMES.len()],
    /// Verification failures and unexpected errors.
    pub failures: AtomicU64,
    /// Set to stop all threads.
    pub stop: AtomicBool,
}

impl Shared<'_> {
    /// Total operations done.
    pub fn total_ops(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    fn fail(&self, msg: String) {
        eprintln!("VERIFICATION FAILURE: {msg}");
        self.failures.fetch_add(1, Ordering::Relaxed);
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A new random value base (never 0, which means absent).
fn new_base(rng: &mut SmallRng) -> ValueState {
    rng.gen_range(1..1 << 31)
}

/// Runs up to `ops` random operations (fewer if stopped).
pub fn run(sh: &Shared<'_>, rng: &mut SmallRng, ops: u64) {
    let max_key = sh.expected.max_key();
    for _ in 0..ops {
        if sh.stop.load(Ordering::Relaxed) {
            return;
        }
        let key = rng.gen_range(0..max_key);
        let (op, r) = match rng.gen_range(0..100) {
            0..=29 => (OpType::Get, get(sh, key)),
            30..=59 => (OpType::Put, write(sh, &mut vec![key], rng, false)),
            60..=67 => (OpType::Delete, write(sh, &mut vec![key], rng, true)),
            68..=77 => {
                let n = rng.gen_range(2..=5);
                let mut keys: Vec<u64> = (0..n).map(|_| rng.gen_range(0..max_key)).collect();
                (OpType::Batch, write(sh, &mut keys, rng, false))
            }
            78..=91 => (OpType::Scan, scan(sh, key, rng)),
            // About one op in 6,000 (1 in 500 of this 8% share) flushes or
            // compacts a range: each waits for its job and holds automatic
            // compactions back meanwhile.
            _ if rng.gen_ratio(1, 500) => (OpType::Compact, compact(sh, key, rng)),
            _ => (OpType::SnapshotRead, snapshot_read(sh, key, rng)),
        };
        match r {
            Ok(()) => {
                sh.counts[op as usize].fetch_add(1, Ordering::Relaxed);
            }
            Err(msg) => sh.fail(format!("{}: {msg}", OP_NAMES[op as usize])),
        }
    }
}

/// Checks a read of `key` against `expected`.
fn check_read(key: u64, value: Option<&[u8]>, expected: ValueState) -> Result<(), String> {
    let got = decode(key, value)?;
    if got != expected {
        return Err(format!("key {key}: read state {got}, expected {expected}"));
    }
    Ok(())
}

fn get(sh: &Shared<'_>, key: u64) -> Result<(), String> {
    let _g = sh.locks.lock(key);
    let v = sh
        .db
        .get(&key_bytes(key))
        .map_err(|e| format!("key {key}: {e}"))?;
    check_read(key, v.as_deref(), sh.expected.get(key).committed)
}

/// Puts (or with `delete`, deletes) `keys`: one key as a single op, several
/// as a batch where each key is put or, 1 time in 5, deleted.
fn write(
    sh: &Shared<'_>,
    keys: &mut Vec<u64>,
    rng: &mut SmallRng,
    delete: bool,
) -> Result<(), String> {
    let _held = sh.locks.lock_many(keys);
    let io = |e: std::io::Error| format!("expected-state file: {e}");
    let states: Vec<ValueState> = keys
        .iter()
        .map(|_| {
            if delete || (keys.len() > 1 && rng.gen_ratio(1, 5)) {
                0
            } else {
                new_base(rng)
            }
        })
        .collect();
    let mut batch = WriteBatch::new();
    for (&k, &s) in keys.iter().zip(&states) {
        sh.expected.begin(k, s).map_err(io)?;
        match s {
            0 => batch.delete(&key_bytes(k)),
            b => batch.put(&key_bytes(k), &encode(k, b)),
        }
    }
    sh.db
        .write(batch, &sh.write_options)
        .map_err(|e| format!("keys {keys:?}: {e}"))?;
    for (&k, &s) in keys.iter().zip(&states) {
        sh.expected.commit(k, s).map_err(io)?;
    }
    Ok(())
}

fn scan(sh: &Shared<'_>, start: u64, rng: &mut SmallRng) -> Result<(), String> {
    let end = (start + rng.gen_range(1..=20)).min(sh.expected.max_key());
    let mut keys: Vec<u64> = (start..end).collect();
    let _held = sh.locks.lock_many(&mut keys);
    let (lo, hi) = (key_bytes(start), key_bytes(end));
    let reverse = rng.gen_bool(0.3);
    let range = sh.db.range(lo.as_slice()..hi.as_slice());
    let items: Vec<(Vec<u8>, Vec<u8>)> = if reverse {
        range.rev().collect::<shale::Result<_>>()
    } else {
        range.collect::<shale::Result<_>>()
    }
    .map_err(|e| format!("range {start}..{end}: {e}"))?;
    let mut seen = Vec::with_capacity(items.len());
    for (k, v) in &items {
        let ki = key_index(k).ok_or_else(|| format!("malformed key {k:02x?}"))?;
        if !(start..end).contains(&ki) {
            return Err(format!("range {start}..{end} returned key {ki}"));
        }
        check_read(ki, Some(v), sh.expected.get(ki).committed)
            .map_err(|e| format!("range {start}..{end}: {e}"))?;
        seen.push(ki);
    }
    let ordered = seen
        .windows(2)
        .all(|w| if reverse { w[0] > w[1] } else { w[0] < w[1] });
    if !ordered {
        return Err(format!(
            "range {start}..{end} (reverse {reverse}) out of order: {seen:?}"
        ));
    }
    for k in start..end {
        if sh.expected.get(k).committed != 0 && !seen.contains(&k) {
            return Err(format!("range {start}..{end} missed live key {k}"));
        }
    }
    Ok(())
}

fn snapshot_read(sh: &Shared<'_>, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let (snap, at_snapshot) = {
        let _g = sh.locks.lock(key);
        (sh.db.snapshot(), sh.expected.get(key).committed)
    };
    if rng.gen_bool(0.5) {
        let delete = rng.gen_ratio(1, 4);
        write(sh, &mut vec![key], rng, delete)?;
    }
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    let v = sh
        .db
        .get_opt(&key_bytes(key), &ro)
        .map_err(|e| format!("key {key} at snapshot: {e}"))?;
    check_read(key, v.as_deref(), at_snapshot)
        .map_err(|e| format!("at snapshot {}: {e}", snap.sequence()))?;
    // The same key through a cursor bounded to it at the same snapshot,
    // forward or backward, and through multi_get.
    ro.iterate_lower_bound = Some(key_bytes(key).to_vec());
    ro.iterate_upper_bound = Some(key_bytes(key + 1).to_vec());
    let mut it = sh.db.iter(&ro);
    if rng.gen_bool(0.5) {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    let via_cursor = it.valid().then(|| it.value().to_vec());
    it.status()
        .map_err(|e| format!("bounded cursor at snapshot: {e}"))?;
    if via_cursor.as_deref() != v.as_deref() {
        return Err(format!(
            "key {key} at snapshot {}: bounded cursor {via_cursor:02x?} differs from get {:02x?}",
            snap.sequence(),
            v.as_deref()
        ));
    }
    ro.iterate_lower_bound = None;
    ro.iterate_upper_bound = None;
    let kb = key_bytes(key);
    let mg = sh.db.multi_get(&[&kb[..]], &ro).remove(0);
    let mg = mg.map_err(|e| format!("multi_get at snapshot: {e}"))?;
    if mg.as_deref() != v.as_deref() {
        return Err(format!("key {key} at snapshot: multi_get differs from get"));
    }
    Ok(())
}

/// A flush, or a manual compaction of a random key range with each bound
/// open or not (the parameters users pass; defect 1 of issue 10 lived in
/// the bounded case).
fn compact(sh: &Shared<'_>, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    if rng.gen_bool(0.3) {
        return sh.db.flush().map_err(|e| format!("flush: {e}"));
    }
    let max_key = sh.expected.max_key();
    let other = rng.gen_range(0..max_key);
    let (a, b) = (key_bytes(key.min(other)), key_bytes(key.max(other)));
    // Each side open one time in five.
    let lo = rng.gen_ratio(4, 5).then_some(a);
    let hi = rng.gen_ratio(4, 5).then_some(b);
    sh.db
        .compact_range(lo.as_ref().map(|k| &k[..]), hi.as_ref().map(|k| &k[..]))
        .map_err(|e| format!("compact_range({lo:02x?}, {hi:02x?}): {e}"))
}
