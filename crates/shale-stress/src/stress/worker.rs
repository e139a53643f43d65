//! The operations of one stress thread, each checked against the expected
//! state.
//!
//! Keys live in `--column_families` families (the same key bytes in each;
//! the expected state and the locks are per (family, key) index). Every
//! operation holds the locks of the keys it touches, so while it runs the
//! expected state of those keys is exact: writes mark the new state pending
//! before the DB call and commit it after; reads must return exactly the
//! committed state. Operations, each on a random family: get (`get_cf`, or
//! `multi_get_cf` of up to 4 keys), put, delete, batch (2–5 keys, each in a
//! random family: cross-family, tagged in the expected state so that a batch
//! cut by a kill can be checked to be all-or-nothing), scan (`range_cf`
//! forward or backward over up to 20 keys; order and every value checked),
//! snapshot read (the states of a few keys in one family and one key in
//! another, read back at the snapshot after possibly being overwritten,
//! through `get_cf_opt`, a bounded `iter_cf` both ways and `multi_get_cf`),
//! rarely `flush_cf` or `compact_range_cf` with random bounds, and, for
//! `--delrangepercent` of the operations, a range deletion (see
//! [`delete_range`]).
//!
//! Each key a write touches gets one entry (see [`Entry`]): a put becomes,
//! `--merge_percent` of the time, a read-modify-write merge whose new state
//! follows from the committed one (exact, since the key is locked), else
//! with `--use_merge` a merge of the whole value; a no-overwrite key
//! (`--nooverwritepercent`) is put when absent and single-deleted when
//! present, whatever the operation asked for.
//!
//! Thread safety: all shared state is in [`Shared`] (atomics, the DB handle,
//! the expected state behind key locks).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rand::rngs::SmallRng;
use rand::Rng;
use shale::{Cf, Db, ReadOptions, WriteBatch, WriteOptions};

use super::expected::{ExpectedState, ValueState};
use super::key_locks::KeyLocks;
use super::merge_op::{self, merged_state};
use super::value::{decode, encode, key_bytes, key_index, owner};

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
    /// Range deletion (`--delrangepercent`): one or more range tombstones
    /// (see [`delete_range`]).
    DeleteRange,
}

/// Names of [`OpType`], in order.
pub const OP_NAMES: [&str; 8] = [
    "get",
    "put",
    "delete",
    "batch",
    "scan",
    "snapshot_read",
    "compact",
    "delete_range",
];

/// The kinds of entries written, for statistics (see [`Entry`]; the last,
/// range deletions, are not per key).
pub const WRITE_NAMES: [&str; 6] = [
    "put",
    "put_merge",
    "merge",
    "delete",
    "single_delete",
    "range_deletion",
];

/// Index of range deletions in [`WRITE_NAMES`].
const RANGE_DELETION: usize = 5;

/// What a write does to one key.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// Put the value of the new base.
    Put,
    /// Merge an overwrite operand holding that value (`--use_merge`).
    PutMerge,
    /// Merge an affine operand (`--merge_percent`).
    Merge { mul: u32, add: u32 },
    /// Delete.
    Delete,
    /// Single delete (no-overwrite keys only, while present).
    SingleDelete,
}

impl Entry {
    /// Index in [`WRITE_NAMES`].
    fn kind(self) -> usize {
        match self {
            Entry::Put => 0,
            Entry::PutMerge => 1,
            Entry::Merge { .. } => 2,
            Entry::Delete => 3,
            Entry::SingleDelete => 4,
        }
    }
}

/// State shared by all stress threads.
pub struct Shared<'a> {
    /// The DB under test.
    pub db: &'a Db,
    /// Its column families, by family number (`default` first).
    pub cfs: &'a [Cf],
    /// The expected state of every key.
    pub expected: &'a ExpectedState,
    /// Per-key locks.
    pub locks: &'a KeyLocks,
    /// Write options (`sync`).
    pub write_options: WriteOptions,
    /// `--use_merge`: puts become merges of the whole value.
    pub use_merge: bool,
    /// `--merge_percent`: share of puts that merge an affine operand.
    pub merge_percent: u32,
    /// `--delrangepercent`: share of operations that delete a key range.
    pub delrange_percent: u32,
    /// `--range_deletion_width`: keys per range deletion.
    pub range_deletion_width: u64,
    /// Operations done, per [`OpType`].
    pub counts: [AtomicU64; OP_NAMES.len()],
    /// Entries written, per kind ([`WRITE_NAMES`]).
    pub written: [AtomicU64; WRITE_NAMES.len()],
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

    fn random_cf(&self, rng: &mut SmallRng) -> u32 {
        rng.gen_range(0..self.cfs.len() as u32)
    }

    /// The committed state of `key` in family `cf`.
    fn committed(&self, cf: u32, key: u64) -> ValueState {
        self.expected.get(self.expected.index(cf, key)).committed
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
        let cf = sh.random_cf(rng);
        // Drawn only when on, so runs without range deletions keep the
        // operation sequence of their seed.
        if sh.delrange_percent > 0 && rng.gen_range(0..100) < sh.delrange_percent {
            match delete_range(sh, cf, key, rng) {
                Ok(()) => {
                    sh.counts[OpType::DeleteRange as usize].fetch_add(1, Ordering::Relaxed);
                }
                Err(msg) => sh.fail(format!("delete_range: {msg}")),
            }
            continue;
        }
        let (op, r) = match rng.gen_range(0..100) {
            0..=29 => (OpType::Get, get(sh, cf, key, rng)),
            30..=59 => (OpType::Put, write(sh, vec![(cf, key)], rng, false)),
            60..=67 => (OpType::Delete, write(sh, vec![(cf, key)], rng, true)),
            68..=77 => {
                let n = rng.gen_range(2..=5);
                let keys = (0..n)
                    .map(|_| (sh.random_cf(rng), rng.gen_range(0..max_key)))
                    .collect();
                (OpType::Batch, write(sh, keys, rng, false))
            }
            78..=91 => (OpType::Scan, scan(sh, cf, key, rng)),
            // About one op in 6,000 (1 in 500 of this 8% share) flushes or
            // compacts a range: each waits for its job and holds automatic
            // compactions back meanwhile.
            _ if rng.gen_ratio(1, 500) => (OpType::Compact, compact(sh, cf, key, rng)),
            _ => (OpType::SnapshotRead, snapshot_read(sh, cf, key, rng)),
        };
        match r {
            Ok(()) => {
                sh.counts[op as usize].fetch_add(1, Ordering::Relaxed);
            }
            Err(msg) => sh.fail(format!("{}: {msg}", OP_NAMES[op as usize])),
        }
    }
}

/// Checks a read of `key` in family `cf` against `expected`.
fn check_read(cf: u32, key: u64, value: Option<&[u8]>, expected: ValueState) -> Result<(), String> {
    let got = decode(owner(cf, key), value).map_err(|e| format!("cf {cf}: {e}"))?;
    if got != expected {
        return Err(format!(
            "cf {cf} key {key}: read state {got}, expected {expected}"
        ));
    }
    Ok(())
}

/// A point read of `key` with `get_cf`, or with `multi_get_cf` together
/// with up to 3 more keys of the family.
fn get(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let c = &sh.cfs[cf as usize];
    if rng.gen_bool(0.7) {
        let _g = sh.locks.lock(sh.expected.index(cf, key));
        let v = sh
            .db
            .get_cf(c, &key_bytes(key))
            .map_err(|e| format!("cf {cf} key {key}: {e}"))?;
        return check_read(cf, key, v.as_deref(), sh.committed(cf, key));
    }
    let max_key = sh.expected.max_key();
    let keys: Vec<u64> = std::iter::once(key)
        .chain((0..rng.gen_range(0..=3)).map(|_| rng.gen_range(0..max_key)))
        .collect();
    let mut idx: Vec<u64> = keys.iter().map(|&k| sh.expected.index(cf, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let kb: Vec<[u8; 8]> = keys.iter().map(|&k| key_bytes(k)).collect();
    let refs: Vec<&[u8]> = kb.iter().map(|k| &k[..]).collect();
    let got = sh.db.multi_get_cf(c, &refs, &ReadOptions::new());
    if got.len() != keys.len() {
        return Err(format!(
            "multi_get_cf: {} results for {} keys",
            got.len(),
            keys.len()
        ));
    }
    for (&k, v) in keys.iter().zip(got) {
        let v = v.map_err(|e| format!("multi_get_cf cf {cf} key {k}: {e}"))?;
        check_read(cf, k, v.as_deref(), sh.committed(cf, k))
            .map_err(|e| format!("multi_get_cf: {e}"))?;
    }
    Ok(())
}

/// Puts (or with `delete`, deletes) `keys` ((family, key) pairs): one key as
/// a single op, several as one batch, possibly across families, where each
/// key is put (all with one value base) or, 1 time in 5, deleted; each put
/// and delete then becomes the key's [`Entry`] (see the module header). A
/// batch's keys carry its random tag in the expected state while pending.
fn write(
    sh: &Shared<'_>,
    mut keys: Vec<(u32, u64)>,
    rng: &mut SmallRng,
    delete: bool,
) -> Result<(), String> {
    keys.sort_unstable();
    keys.dedup();
    let mut idx: Vec<u64> = keys.iter().map(|&(c, k)| sh.expected.index(c, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let io = |e: std::io::Error| format!("expected-state file: {e}");
    let base = new_base(rng);
    let tag = if keys.len() > 1 {
        rng.gen::<u64>() | 1
    } else {
        0
    };
    let multi = keys.len() > 1;
    let mut entries = Vec::with_capacity(keys.len());
    let mut states: Vec<ValueState> = Vec::with_capacity(keys.len());
    for &(cf, k) in &keys {
        // Exact: the key is locked and nothing is pending.
        let committed = sh.committed(cf, k);
        let entry = if sh.expected.no_overwrite(k) {
            if committed == 0 {
                Entry::Put
            } else {
                Entry::SingleDelete
            }
        } else if delete || (multi && rng.gen_ratio(1, 5)) {
            Entry::Delete
        } else if rng.gen_range(0..100) < sh.merge_percent {
            Entry::Merge {
                mul: rng.gen_range(2..merge_op::P),
                add: rng.gen_range(0..merge_op::P),
            }
        } else if sh.use_merge {
            Entry::PutMerge
        } else {
            Entry::Put
        };
        entries.push(entry);
        states.push(match entry {
            Entry::Put | Entry::PutMerge => base,
            Entry::Merge { mul, add } => merged_state(committed, mul, add),
            Entry::Delete | Entry::SingleDelete => 0,
        });
    }
    let mut batch = WriteBatch::new();
    for ((&(cf, k), &s), &entry) in keys.iter().zip(&states).zip(&entries) {
        sh.expected
            .begin(sh.expected.index(cf, k), s, tag)
            .map_err(io)?;
        let c = &sh.cfs[cf as usize];
        let (kb, own) = (key_bytes(k), owner(cf, k));
        match entry {
            Entry::Put => batch.put_cf(c, &kb, &encode(own, s)),
            Entry::PutMerge => batch.merge_cf(c, &kb, &merge_op::overwrite(&encode(own, s))),
            Entry::Merge { mul, add } => batch.merge_cf(c, &kb, &merge_op::affine(own, mul, add)),
            Entry::Delete => batch.delete_cf(c, &kb),
            Entry::SingleDelete => batch.single_delete_cf(c, &kb),
        }
    }
    sh.db
        .write(batch, &sh.write_options)
        .map_err(|e| format!("(cf, key) {keys:?} entries {entries:?}: {e}"))?;
    for (&(cf, k), &s) in keys.iter().zip(&states) {
        sh.expected
            .commit(sh.expected.index(cf, k), s)
            .map_err(io)?;
    }
    for e in entries {
        sh.written[e.kind()].fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// Deletes `--range_deletion_width` keys from `key` (moved back if the
/// range would pass `max_key`, as db_stress does) in family `cf`: locks
/// them, marks each pending absent under one batch tag (so a range cut by a
/// kill must be found all deleted or not at all, as a batch), writes, and
/// commits every key absent. A no-overwrite key is never range-deleted (its
/// single delete must meet exactly its put): the range is cut around such
/// keys into runs, one range deletion each, all in one batch. (RocksDB's
/// db_stress range-deletes them anyway; here the keys' hash spreads them so
/// evenly that at 20% every 10 consecutive keys hold one, so skipping such
/// ranges would skip them all.) A bound is the key, or a point just past
/// the key before it (`key_bytes(k - 1) + [0]`: the same keys). A lone
/// unsynced range goes through `Db::delete_range_cf` half the time.
fn delete_range(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let max_key = sh.expected.max_key();
    let width = sh.range_deletion_width.min(max_key);
    let start = key.min(max_key - width);
    let end = start + width;
    // The runs of keys that may be range-deleted.
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for k in start..end {
        if sh.expected.no_overwrite(k) {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.1 == k => r.1 = k + 1,
            _ => runs.push((k, k + 1)),
        }
    }
    if runs.is_empty() {
        return Ok(());
    }
    let mut idx: Vec<u64> = (start..end).map(|k| sh.expected.index(cf, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let io = |e: std::io::Error| format!("expected-state file: {e}");
    let tag = rng.gen::<u64>() | 1;
    let deleted: Vec<u64> = runs
        .iter()
        .flat_map(|&(a, b)| a..b)
        .map(|k| sh.expected.index(cf, k))
        .collect();
    for &i in &deleted {
        sh.expected.begin(i, 0, tag).map_err(io)?;
    }
    let bound = |k: u64, rng: &mut SmallRng| -> Vec<u8> {
        if k > 0 && rng.gen_ratio(1, 4) {
            let mut b = key_bytes(k - 1).to_vec();
            b.push(0);
            b
        } else {
            key_bytes(k).to_vec()
        }
    };
    let ranges: Vec<(Vec<u8>, Vec<u8>)> = runs
        .iter()
        .map(|&(a, b)| (bound(a, rng), bound(b, rng)))
        .collect();
    let c = &sh.cfs[cf as usize];
    let r = match ranges.as_slice() {
        [(lo, hi)] if !sh.write_options.sync && rng.gen_bool(0.5) => {
            sh.db.delete_range_cf(c, lo, hi)
        }
        _ => {
            let mut b = WriteBatch::new();
            for (lo, hi) in &ranges {
                b.delete_range_cf(c, lo, hi);
            }
            sh.db.write(b, &sh.write_options)
        }
    };
    r.map_err(|e| format!("cf {cf} keys {start}..{end} as runs {runs:?}: {e}"))?;
    for &i in &deleted {
        sh.expected.commit(i, 0).map_err(io)?;
    }
    sh.written[RANGE_DELETION].fetch_add(ranges.len() as u64, Ordering::Relaxed);
    Ok(())
}

fn scan(sh: &Shared<'_>, cf: u32, start: u64, rng: &mut SmallRng) -> Result<(), String> {
    let end = (start + rng.gen_range(1..=20)).min(sh.expected.max_key());
    let mut idx: Vec<u64> = (start..end).map(|k| sh.expected.index(cf, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let (lo, hi) = (key_bytes(start), key_bytes(end));
    let reverse = rng.gen_bool(0.3);
    let range = sh
        .db
        .range_cf(&sh.cfs[cf as usize], lo.as_slice()..hi.as_slice());
    let items: Vec<(Vec<u8>, Vec<u8>)> = if reverse {
        range.rev().collect::<shale::Result<_>>()
    } else {
        range.collect::<shale::Result<_>>()
    }
    .map_err(|e| format!("cf {cf} range {start}..{end}: {e}"))?;
    let expected: Vec<ValueState> = (start..end).map(|k| sh.committed(cf, k)).collect();
    check_listing(cf, start, end, reverse, &items, &expected).map_err(|e| format!("range_cf: {e}"))
}

/// Checks the items a scan of keys `start..end` of family `cf` returned
/// (in reverse order with `reverse`) against their expected states.
fn check_listing(
    cf: u32,
    start: u64,
    end: u64,
    reverse: bool,
    items: &[(Vec<u8>, Vec<u8>)],
    expected: &[ValueState],
) -> Result<(), String> {
    let mut seen = Vec::with_capacity(items.len());
    for (k, v) in items {
        let ki = key_index(k).ok_or_else(|| format!("malformed key {k:02x?}"))?;
        if !(start..end).contains(&ki) {
            return Err(format!("cf {cf} {start}..{end} returned key {ki}"));
        }
        check_read(cf, ki, Some(v), expected[(ki - start) as usize])
            .map_err(|e| format!("{start}..{end}: {e}"))?;
        seen.push(ki);
    }
    let ordered = seen
        .windows(2)
        .all(|w| if reverse { w[0] > w[1] } else { w[0] < w[1] });
    if !ordered {
        return Err(format!(
            "cf {cf} {start}..{end} (reverse {reverse}) out of order: {seen:?}"
        ));
    }
    for k in start..end {
        if expected[(k - start) as usize] != 0 && !seen.contains(&k) {
            return Err(format!("cf {cf} {start}..{end} missed live key {k}"));
        }
    }
    Ok(())
}

/// Takes a snapshot while holding the locks of keys `key..key+w` of family
/// `cf` and of one key of another random family (so their states at the
/// snapshot are known), possibly overwrites one of them, then reads them at
/// the snapshot: `get_cf_opt`, an `iter_cf` bounded to `key..key+w` forward
/// or backward, `multi_get_cf`, and the other family's key.
fn snapshot_read(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let max_key = sh.expected.max_key();
    let end = (key + rng.gen_range(1..=8)).min(max_key);
    let (cf2, key2) = (sh.random_cf(rng), rng.gen_range(0..max_key));
    let (snap, at_snapshot, other_at_snapshot) = {
        let mut idx: Vec<u64> = (key..end)
            .map(|k| sh.expected.index(cf, k))
            .chain(std::iter::once(sh.expected.index(cf2, key2)))
            .collect();
        let _held = sh.locks.lock_many(&mut idx);
        let states: Vec<ValueState> = (key..end).map(|k| sh.committed(cf, k)).collect();
        (sh.db.snapshot(), states, sh.committed(cf2, key2))
    };
    if rng.gen_bool(0.5) {
        let delete = rng.gen_ratio(1, 4);
        let (wc, wk) = if rng.gen_bool(0.5) {
            (cf, rng.gen_range(key..end))
        } else {
            (cf2, key2)
        };
        write(sh, vec![(wc, wk)], rng, delete)?;
    }
    let c = &sh.cfs[cf as usize];
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    let at = snap.sequence();
    let v = sh
        .db
        .get_cf_opt(c, &key_bytes(key), &ro)
        .map_err(|e| format!("cf {cf} key {key} at snapshot: {e}"))?;
    check_read(cf, key, v.as_deref(), at_snapshot[0])
        .map_err(|e| format!("get_cf_opt at snapshot {at}: {e}"))?;
    // The range through a cursor bounded to it at the same snapshot.
    ro.iterate_lower_bound = Some(key_bytes(key).to_vec());
    ro.iterate_upper_bound = Some(key_bytes(end).to_vec());
    let reverse = rng.gen_bool(0.5);
    let mut it = sh.db.iter_cf(c, &ro);
    let mut items = Vec::new();
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        items.push((it.key().to_vec(), it.value().to_vec()));
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status()
        .map_err(|e| format!("bounded iter_cf at snapshot: {e}"))?;
    drop(it);
    check_listing(cf, key, end, reverse, &items, &at_snapshot)
        .map_err(|e| format!("bounded iter_cf at snapshot {at}: {e}"))?;
    ro.iterate_lower_bound = None;
    ro.iterate_upper_bound = None;
    let kb: Vec<[u8; 8]> = (key..end).map(key_bytes).collect();
    let refs: Vec<&[u8]> = kb.iter().map(|k| &k[..]).collect();
    for (i, r) in sh.db.multi_get_cf(c, &refs, &ro).into_iter().enumerate() {
        let r = r.map_err(|e| format!("multi_get_cf at snapshot: {e}"))?;
        check_read(cf, key + i as u64, r.as_deref(), at_snapshot[i])
            .map_err(|e| format!("multi_get_cf at snapshot {at}: {e}"))?;
    }
    let v2 = sh
        .db
        .get_cf_opt(&sh.cfs[cf2 as usize], &key_bytes(key2), &ro)
        .map_err(|e| format!("cf {cf2} key {key2} at snapshot: {e}"))?;
    check_read(cf2, key2, v2.as_deref(), other_at_snapshot)
        .map_err(|e| format!("other family at snapshot {at}: {e}"))
}

/// A `flush_cf`, or a `compact_range_cf` of a random key range with each
/// bound open or not (the parameters users pass; defect 1 of issue 10 lived
/// in the bounded case), on family `cf`.
fn compact(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let c = &sh.cfs[cf as usize];
    if rng.gen_bool(0.3) {
        return sh.db.flush_cf(c).map_err(|e| format!("flush_cf {cf}: {e}"));
    }
    let max_key = sh.expected.max_key();
    let other = rng.gen_range(0..max_key);
    let (a, b) = (key_bytes(key.min(other)), key_bytes(key.max(other)));
    // Each side open one time in five.
    let lo = rng.gen_ratio(4, 5).then_some(a);
    let hi = rng.gen_ratio(4, 5).then_some(b);
    sh.db
        .compact_range_cf(c, lo.as_ref().map(|k| &k[..]), hi.as_ref().map(|k| &k[..]))
        .map_err(|e| format!("compact_range_cf({cf}, {lo:02x?}, {hi:02x?}): {e}"))
}
