//! The operations of one stress thread, each checked against the expected
//! state.
//!
//! Keys live in `--column_families` families (the same key bytes in each;
//! the expected state and the locks are per (family, key) index). Every
//! operation holds the locks of the keys it touches, so while it runs the
//! expected state of those keys is exact: writes mark the new record pending
//! before the DB call and commit it after; reads must return what the
//! committed record allows (`expect.rs`: exactly its state, but for the
//! forms the compaction filter may leave and an expiry that may pass
//! during the read). Operations, each on a random family: get (`get_cf`, or
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
//! present, whatever the operation asked for. `--ttl_percent` of the other
//! puts put an expiring value (see [`Ttl`]), through the batch with the
//! expiry second, or for a lone unsynced put expired or far, half the time
//! through `Db::put_cf_with_ttl` (TTL 0: expired from the second written).
//! A read-modify-write merge needs the state it meets: it is not written
//! over a value that may still expire or that the filter may remove (a put
//! instead), but is over one that has certainly expired (it meets nothing).
//!
//! Thread safety: all shared state is in [`Shared`] (atomics, the DB handle,
//! the expected state behind key locks).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::Rng;
use shale::{Cf, Db, ReadOptions, WriteBatch, WriteOptions};

use super::compaction_filter::FilterClass;
use super::expect::{now_secs, Expect, ReadWindow, EXPIRY_TOLERANCE_SECS};
use super::expected::{ExpectedState, Record, ValueState};
use super::key_locks::KeyLocks;
use super::merge_op::{self, merged_state};
use super::value::{encode, key_bytes, key_index, owner};

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
    /// A change of a family's options at run time (see [`set_options`]).
    SetOptions,
    /// A bulk load of a few keys (`ops::ingest`).
    Ingest,
    /// A checkpoint beside the writers (`ops::checkpoint`).
    Checkpoint,
}

/// Names of [`OpType`], in order.
pub const OP_NAMES: [&str; 11] = [
    "get",
    "put",
    "delete",
    "batch",
    "scan",
    "snapshot_read",
    "compact",
    "delete_range",
    "set_options",
    "ingest",
    "checkpoint",
];

/// The kinds of entries written, for statistics (see [`Entry`]; range
/// deletions are not per key).
pub const WRITE_NAMES: [&str; 9] = [
    "put",
    "put_merge",
    "merge",
    "delete",
    "single_delete",
    "range_deletion",
    "put_ttl_expired",
    "put_ttl_near",
    "put_ttl_far",
];

/// Index of range deletions in [`WRITE_NAMES`].
const RANGE_DELETION: usize = 5;

/// Seconds after the write that a far expiring put expires (30 days: never
/// within a run).
const FAR_TTL_SECS: u64 = 30 * 24 * 3600;

/// The kinds of expiring puts (`--ttl_percent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ttl {
    /// Expired when written (the second before, an hour before, or at the
    /// epoch's second 0): reads as deleted, the expected state has the key
    /// absent.
    Expired,
    /// Expires 1-4 s after the write: read as the value before, absent
    /// after, either around the second (`expect.rs`).
    Near,
    /// Expires in [`FAR_TTL_SECS`]: reads as the value.
    Far,
}

/// What a write does to one key.
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// Put the value of the new base.
    Put,
    /// Merge an overwrite operand holding that value (`--use_merge`).
    PutMerge,
    /// Merge an affine operand (`--merge_percent`) onto the state it
    /// `meets` (see [`merge_base`]).
    Merge {
        mul: u32,
        add: u32,
        meets: ValueState,
    },
    /// Delete.
    Delete,
    /// Single delete (no-overwrite keys only, while present).
    SingleDelete,
    /// Put the value of the new base, expiring at Unix second `expires`.
    PutTtl { ttl: Ttl, expires: u64 },
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
            Entry::PutTtl {
                ttl: Ttl::Expired, ..
            } => 6,
            Entry::PutTtl { ttl: Ttl::Near, .. } => 7,
            Entry::PutTtl { ttl: Ttl::Far, .. } => 8,
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
    /// Opens a checkpoint of the DB read-only.
    pub open_copy: super::ops::OpenCopy<'a>,
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
    /// `--ttl_percent`: share of puts that put an expiring value.
    pub ttl_percent: u32,
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

    /// The committed record of `key` in family `cf`.
    fn committed(&self, cf: u32, key: u64) -> Record {
        self.expected.get(self.expected.index(cf, key)).committed
    }

    /// What a read of `key` in family `cf` may return (its committed
    /// record and filter class).
    fn expect(&self, cf: u32, key: u64) -> Expect {
        Expect {
            record: self.committed(cf, key),
            class: self.expected.filter_class(key),
        }
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
            // About one op in 6,000 (1 in 500 of this 8% share) flushes,
            // compacts a range (each waits for its job and holds automatic
            // compactions back meanwhile), changes options, ingests a file
            // or checkpoints.
            _ if rng.gen_ratio(1, 500) => match rng.gen_range(0..20) {
                0..=5 => (OpType::SetOptions, set_options(sh, cf, rng)),
                6..=8 => (OpType::Ingest, super::ops::ingest(sh, cf, key, rng)),
                9 => (
                    OpType::Checkpoint,
                    super::ops::checkpoint(sh, sh.open_copy, cf, key, rng),
                ),
                _ => (OpType::Compact, compact(sh, cf, key, rng)),
            },
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

/// Checks a read of `key` in family `cf`, done in window `w`, against
/// `expected`.
fn check_read(
    cf: u32,
    key: u64,
    value: Option<&[u8]>,
    expected: Expect,
    w: ReadWindow,
) -> Result<(), String> {
    expected.check(cf, key, owner(cf, key), value, w)
}

/// A point read of `key` with `get_cf`, or with `multi_get_cf` together
/// with up to 3 more keys of the family.
fn get(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let c = &sh.cfs[cf as usize];
    if rng.gen_bool(0.7) {
        let _g = sh.locks.lock(sh.expected.index(cf, key));
        let w = ReadWindow::open();
        let v = sh
            .db
            .get_cf(c, &key_bytes(key))
            .map_err(|e| format!("cf {cf} key {key}: {e}"))?;
        return check_read(cf, key, v.as_deref(), sh.expect(cf, key), w.close());
    }
    let max_key = sh.expected.max_key();
    let keys: Vec<u64> = std::iter::once(key)
        .chain((0..rng.gen_range(0..=3)).map(|_| rng.gen_range(0..max_key)))
        .collect();
    let mut idx: Vec<u64> = keys.iter().map(|&k| sh.expected.index(cf, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let kb: Vec<[u8; 8]> = keys.iter().map(|&k| key_bytes(k)).collect();
    let refs: Vec<&[u8]> = kb.iter().map(|k| &k[..]).collect();
    let w = ReadWindow::open();
    let got = sh.db.multi_get_cf(c, &refs, &ReadOptions::new());
    let w = w.close();
    if got.len() != keys.len() {
        return Err(format!(
            "multi_get_cf: {} results for {} keys",
            got.len(),
            keys.len()
        ));
    }
    for (&k, v) in keys.iter().zip(got) {
        let v = v.map_err(|e| format!("multi_get_cf cf {cf} key {k}: {e}"))?;
        check_read(cf, k, v.as_deref(), sh.expect(cf, k), w)
            .map_err(|e| format!("multi_get_cf: {e}"))?;
    }
    Ok(())
}

/// Puts (or with `delete`, deletes) `keys` ((family, key) pairs): one key as
/// a single op, several as one batch, possibly across families, where each
/// key is put (all with one value base) or, 1 time in 5, deleted; each put
/// and delete then becomes the key's [`Entry`] (see the module header). A
/// batch's keys carry its random tag in the expected state while pending.
/// The new records are marked pending before the DB call and committed
/// after it, whichever way the write goes (batch or `put_cf_with_ttl`).
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
    let now = now_secs();
    let mut entries = Vec::with_capacity(keys.len());
    let mut records: Vec<Record> = Vec::with_capacity(keys.len());
    for &(cf, k) in &keys {
        // Exact: the key is locked and nothing is pending.
        let committed = sh.committed(cf, k);
        let meets = merge_base(sh, k, committed, now);
        let entry = if sh.expected.no_overwrite(k) {
            if committed.state == 0 {
                Entry::Put
            } else {
                Entry::SingleDelete
            }
        } else if delete || (multi && rng.gen_ratio(1, 5)) {
            Entry::Delete
        } else if let Some(meets) = meets.filter(|_| rng.gen_range(0..100) < sh.merge_percent) {
            Entry::Merge {
                mul: rng.gen_range(2..merge_op::P),
                add: rng.gen_range(0..merge_op::P),
                meets,
            }
        } else if sh.ttl_percent > 0 && rng.gen_range(0..100) < sh.ttl_percent {
            expiring_put(rng, now)
        } else if sh.use_merge {
            Entry::PutMerge
        } else {
            Entry::Put
        };
        entries.push(entry);
        records.push(match entry {
            Entry::Put | Entry::PutMerge => Record::lasting(base),
            Entry::Merge { mul, add, meets } => Record::lasting(merged_state(meets, mul, add)),
            Entry::Delete | Entry::SingleDelete => Record::ABSENT,
            Entry::PutTtl {
                ttl: Ttl::Expired, ..
            } => Record::ABSENT,
            Entry::PutTtl { expires, .. } => Record {
                state: base,
                expires: expires as u32,
            },
        });
    }
    // A lone unsynced expiring put, expired or far, goes through
    // `put_cf_with_ttl` half the time (a near one needs its exact second).
    let through_ttl_api = match entries.as_slice() {
        [Entry::PutTtl { ttl, .. }] if *ttl != Ttl::Near && !sh.write_options.sync => {
            rng.gen_bool(0.5).then_some(*ttl)
        }
        _ => None,
    };
    let mut batch = WriteBatch::new();
    for ((&(cf, k), r), &entry) in keys.iter().zip(&records).zip(&entries) {
        sh.expected
            .begin(sh.expected.index(cf, k), *r, tag)
            .map_err(io)?;
        let c = &sh.cfs[cf as usize];
        let (kb, own) = (key_bytes(k), owner(cf, k));
        let s = r.state;
        match entry {
            Entry::Put => batch.put_cf(c, &kb, &encode(own, s)),
            Entry::PutMerge => batch.merge_cf(c, &kb, &merge_op::overwrite(&encode(own, s))),
            Entry::Merge { mul, add, .. } => {
                batch.merge_cf(c, &kb, &merge_op::affine(own, mul, add))
            }
            Entry::Delete => batch.delete_cf(c, &kb),
            Entry::SingleDelete => batch.single_delete_cf(c, &kb),
            // Expired puts write a base too (the state says absent).
            Entry::PutTtl { expires, .. } => {
                batch.put_cf_with_expiry(c, &kb, &encode(own, base), expires)
            }
        }
    }
    let r = match (through_ttl_api, keys.as_slice()) {
        (Some(ttl), [(cf, k)]) => {
            let secs = if ttl == Ttl::Far { FAR_TTL_SECS } else { 0 };
            sh.db.put_cf_with_ttl(
                &sh.cfs[*cf as usize],
                &key_bytes(*k),
                &encode(owner(*cf, *k), base),
                Duration::from_secs(secs),
            )
        }
        _ => sh.db.write(batch, &sh.write_options),
    };
    r.map_err(|e| format!("(cf, key) {keys:?} entries {entries:?}: {e}"))?;
    for (&(cf, k), r) in keys.iter().zip(&records) {
        sh.expected
            .commit(sh.expected.index(cf, k), *r)
            .map_err(io)?;
    }
    for e in entries {
        sh.written[e.kind()].fetch_add(1, Ordering::Relaxed);
    }
    Ok(())
}

/// The state a read-modify-write merge on `key` (committed record
/// `committed`, at Unix second `now`) meets, if known: the committed state
/// when it does not expire, nothing once it has certainly expired (the DB
/// reads the same clock, later); unknown while it may still expire or when
/// the filter may remove the value.
fn merge_base(sh: &Shared<'_>, key: u64, committed: Record, now: u64) -> Option<ValueState> {
    let expires = u64::from(committed.expires);
    if sh.expected.filter_class(key) == FilterClass::Removed {
        None
    } else if expires == 0 {
        Some(committed.state)
    } else if now >= expires + EXPIRY_TOLERANCE_SECS {
        Some(0)
    } else {
        None
    }
}

/// An expiring put of a random [`Ttl`] kind, from Unix second `now`.
fn expiring_put(rng: &mut SmallRng, now: u64) -> Entry {
    let (ttl, expires) = match rng.gen_range(0..8) {
        0 => (Ttl::Expired, 0),
        1 => (Ttl::Expired, now.saturating_sub(1)),
        2 => (Ttl::Expired, now.saturating_sub(3600)),
        3 | 4 => (Ttl::Far, now + FAR_TTL_SECS),
        _ => (Ttl::Near, now + rng.gen_range(1..=4)),
    };
    Entry::PutTtl { ttl, expires }
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
        sh.expected.begin(i, Record::ABSENT, tag).map_err(io)?;
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
        sh.expected.commit(i, Record::ABSENT).map_err(io)?;
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
    let w = ReadWindow::open();
    let range = sh
        .db
        .range_cf(&sh.cfs[cf as usize], lo.as_slice()..hi.as_slice());
    let items: Vec<(Vec<u8>, Vec<u8>)> = if reverse {
        range.rev().collect::<shale::Result<_>>()
    } else {
        range.collect::<shale::Result<_>>()
    }
    .map_err(|e| format!("cf {cf} range {start}..{end}: {e}"))?;
    let w = w.close();
    let expected: Vec<Expect> = (start..end).map(|k| sh.expect(cf, k)).collect();
    check_listing(cf, start, end, reverse, &items, &expected, w)
        .map_err(|e| format!("range_cf: {e}"))
}

/// Checks the items a scan of keys `start..end` of family `cf` returned
/// (in reverse order with `reverse`), in window `w`, against what their
/// records allow.
fn check_listing(
    cf: u32,
    start: u64,
    end: u64,
    reverse: bool,
    items: &[(Vec<u8>, Vec<u8>)],
    expected: &[Expect],
    w: ReadWindow,
) -> Result<(), String> {
    let mut seen = Vec::with_capacity(items.len());
    for (k, v) in items {
        let ki = key_index(k).ok_or_else(|| format!("malformed key {k:02x?}"))?;
        if !(start..end).contains(&ki) {
            return Err(format!("cf {cf} {start}..{end} returned key {ki}"));
        }
        check_read(cf, ki, Some(v), expected[(ki - start) as usize], w)
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
        if expected[(k - start) as usize].must_be_present(w) && !seen.contains(&k) {
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
        let states: Vec<Expect> = (key..end).map(|k| sh.expect(cf, k)).collect();
        (sh.db.snapshot(), states, sh.expect(cf2, key2))
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
    // Expiry is judged by the clock at the read, also at a snapshot.
    let w = ReadWindow::open();
    let v = sh
        .db
        .get_cf_opt(c, &key_bytes(key), &ro)
        .map_err(|e| format!("cf {cf} key {key} at snapshot: {e}"))?;
    check_read(cf, key, v.as_deref(), at_snapshot[0], w.close())
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
    check_listing(cf, key, end, reverse, &items, &at_snapshot, w.close())
        .map_err(|e| format!("bounded iter_cf at snapshot {at}: {e}"))?;
    ro.iterate_lower_bound = None;
    ro.iterate_upper_bound = None;
    let kb: Vec<[u8; 8]> = (key..end).map(key_bytes).collect();
    let refs: Vec<&[u8]> = kb.iter().map(|k| &k[..]).collect();
    for (i, r) in sh.db.multi_get_cf(c, &refs, &ro).into_iter().enumerate() {
        let r = r.map_err(|e| format!("multi_get_cf at snapshot: {e}"))?;
        check_read(cf, key + i as u64, r.as_deref(), at_snapshot[i], w.close())
            .map_err(|e| format!("multi_get_cf at snapshot {at}: {e}"))?;
    }
    let v2 = sh
        .db
        .get_cf_opt(&sh.cfs[cf2 as usize], &key_bytes(key2), &ro)
        .map_err(|e| format!("cf {cf2} key {key2} at snapshot: {e}"))?;
    check_read(cf2, key2, v2.as_deref(), other_at_snapshot, w.close())
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

/// Changes a DB-wide option (`set_db_options`, a quarter of the calls), or
/// one or two of family `cf`'s options at run time (`set_options_cf`), drawn from ranges that keep the run's shape
/// (memtable and table sizes, triggers, compression, block size, blob
/// extraction, auto compactions mostly on). A change the family's fixed
/// options make invalid (compression under `block_align`, blob files
/// under FIFO, a compaction trigger above the slowdown trigger) must be
/// refused whole with `InvalidArgument`; any other must apply.
fn set_options(sh: &Shared<'_>, cf: u32, rng: &mut SmallRng) -> Result<(), String> {
    let pick = |rng: &mut SmallRng, xs: &[&'static str]| xs[rng.gen_range(0..xs.len())];
    if rng.gen_bool(0.25) {
        // DB-wide: every drawn value is valid.
        let changes = [match rng.gen_range(0..5) {
            0 => ("max_background_jobs", pick(rng, &["1", "2", "4"])),
            1 => ("delayed_write_rate", pick(rng, &["2097152", "16777216"])),
            2 => ("max_total_wal_size", pick(rng, &["0", "4194304"])),
            3 => ("bytes_per_sync", pick(rng, &["0", "1048576"])),
            _ => ("compaction_readahead_size", pick(rng, &["0", "2097152"])),
        }];
        return sh
            .db
            .set_db_options_from_strings(&changes)
            .map_err(|e| format!("set_db_options({changes:?}): {e}"));
    }
    let c = &sh.cfs[cf as usize];
    let before = sh
        .db
        .cf_options(c)
        .map_err(|e| format!("cf_options {cf}: {e}"))?;
    let changes: Vec<(&str, &str)> = (0..rng.gen_range(1..=2))
        .map(|_| match rng.gen_range(0..12) {
            0 => (
                "write_buffer_size",
                pick(rng, &["65536", "1048576", "4194304"]),
            ),
            1 => ("max_write_buffer_number", pick(rng, &["2", "3", "4"])),
            2 => (
                "level0_file_num_compaction_trigger",
                pick(rng, &["2", "4", "8"]),
            ),
            3 => (
                "disable_auto_compactions",
                pick(rng, &["false", "false", "true"]),
            ),
            4 => ("target_file_size_base", pick(rng, &["65536", "1048576"])),
            5 => (
                "max_bytes_for_level_base",
                pick(rng, &["262144", "4194304"]),
            ),
            6 => (
                "compression_per_level",
                pick(rng, &["NoCompression", "LZ4", "ZSTD:LZ4"]),
            ),
            7 => ("block_size", pick(rng, &["1024", "4096", "16384"])),
            8 => ("enable_blob_files", pick(rng, &["false", "true"])),
            9 => ("min_blob_size", pick(rng, &["0", "64", "1024"])),
            // Point reads then go through prefix-only filters built with
            // the extractor of their table or memtable, or another.
            10 => (
                "prefix_extractor",
                pick(
                    rng,
                    &["nullptr", "rocksdb.FixedPrefix.4", "rocksdb.CappedPrefix.6"],
                ),
            ),
            _ => ("whole_key_filtering", pick(rng, &["false", "true"])),
        })
        .collect();
    let mut want = before.clone();
    let valid =
        changes.iter().all(|(k, v)| want.set_option(k, v).is_ok()) && want.validate().is_ok();
    match (valid, sh.db.set_options_cf_from_strings(c, &changes)) {
        (true, Ok(())) | (false, Err(shale::Error::InvalidArgument(_))) => Ok(()),
        (_, r) => Err(format!(
            "set_options_cf({cf}, {changes:?}) (valid: {valid}): {r:?}"
        )),
    }
}
