//! Linearizability and cross-key atomicity across simulated power losses
//! (RELIABILITY.md tests 3 and 12 together), on `MemFileSystem`.
//!
//! Each cycle: open the DB on the current image, read every key back (one
//! snapshot read of all keys, then a point read of each: the recovery read),
//! run 3 recording clients (gets, puts, deletes, batches, snapshot reads of
//! several keys; every write with `sync`) while a helper forces flushes and
//! compactions, and in the middle of it take `crash(p)`, p ∈ {0, 0.5, 1}: the
//! image a power loss would leave at that instant. The clients go on a little
//! on the doomed DB, then stop; the next cycle runs on the image.
//!
//! The history kept of a cycle is what happened before the image, seen from
//! the image: with the image taken between `t0` and `t1`,
//! - a write that returned before `t0` was acknowledged with `sync`, so it
//!   must be in the image: kept as completed;
//! - a write called before `t1` that had not returned by `t0` may be in the
//!   image or not: kept as cut by the crash at `t1`;
//! - a read that returned before `t0` is kept; later reads, and writes
//!   called after `t1`, happened on the abandoned DB and are dropped.
//!
//! Reads before the image may only have seen durable writes: a sync write
//! becomes visible only after its WAL sync, so a power loss can never take
//! back a value some reader saw. Only `sync` writes are used because an
//! unsynced write that a reader saw may legally vanish in a power loss, which
//! no linearizable history explains (the prefix property of unsynced writes
//! is checked by `crates/shale/tests/power_loss.rs`).
//!
//! The whole history, over all cycles, must pass the per-key check and the
//! cut check. Seeds are printed; `SHALE_SEED=<n>` replays the choices.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::fs::MemFileSystem;
use shale::{Db, Options, WriteBatch, WriteOptions};
use shale_stress::clock::Clock;
use shale_stress::lincheck::cut::check_cuts;
use shale_stress::lincheck::{check, sub_history, CheckResult, OpKind, Operation};
use shale_stress::recorder::{ClientLog, Recorder};
use shale_stress::store::{BatchWrite, Store};

const DIR: &str = "/db";
const CLIENTS: usize = 3;
const KEYS: usize = 24;

fn opts(fs: &MemFileSystem) -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 4096,
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 16 << 10,
            target_file_size_base: 4 << 10,
            block_size: 256,
            ..Default::default()
        },
        fs: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn key(i: usize) -> Vec<u8> {
    format!("key{i:02}").into_bytes()
}

/// The DB with every write synced.
struct SyncDb(Db);

impl Store for SyncDb {
    fn put(&self, key: &[u8], value: &[u8]) -> shale::Result<()> {
        self.write(&[(key.to_vec(), Some(value.to_vec()))])
    }
    fn delete(&self, key: &[u8]) -> shale::Result<()> {
        self.write(&[(key.to_vec(), None)])
    }
    fn get(&self, key: &[u8]) -> shale::Result<Option<Vec<u8>>> {
        Store::get(&self.0, key)
    }
    fn snapshot_get(&self, keys: &[Vec<u8>]) -> shale::Result<Vec<Option<Vec<u8>>>> {
        Store::snapshot_get(&self.0, keys)
    }
    fn write(&self, writes: &[BatchWrite]) -> shale::Result<()> {
        let mut b = WriteBatch::new();
        for (k, v) in writes {
            match v {
                Some(v) => b.put(k, v),
                None => b.delete(k),
            }
        }
        let wo = WriteOptions {
            sync: true,
            ..WriteOptions::default()
        };
        self.0.write(b, &wo)
    }
}

/// What of `ops` (recorded on a DB whose power-loss image was taken in
/// `t0..t1`) the image's history keeps (see the module comment).
fn seen_from_image(ops: &[Operation], t0: u64, t1: u64) -> Vec<Operation> {
    ops.iter()
        .filter_map(|op| {
            let read = matches!(op.kind, OpKind::Get(_));
            match op.ret {
                Some(r) if r < t0 => Some(op.clone()),
                _ if read || op.call >= t1 => None,
                _ => Some(Operation {
                    ret: None,
                    crash: Some(t1),
                    ..op.clone()
                }),
            }
        })
        .collect()
}

/// The recovery read: all keys at one snapshot, then each alone.
fn recovery_read(rec: &Recorder<SyncDb>, log: &mut ClientLog) {
    let all: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
    rec.snapshot_get(log, &all).expect("recovery snapshot read");
    for k in &all {
        rec.get(log, k).expect("recovery read");
    }
}

fn cycles(seed: u64, n: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let clock = Clock::start();
    let mut fs = MemFileSystem::new();
    // Client CLIENTS does the recovery reads.
    let mut logs: Vec<ClientLog> = (0..=CLIENTS).map(ClientLog::new).collect();
    let mut history: Vec<Operation> = Vec::new();
    for cycle in 0..=n {
        let db = Db::open(DIR, opts(&fs))
            .unwrap_or_else(|e| panic!("seed {seed} cycle {cycle}: open: {e}"));
        let rec = Recorder::new(SyncDb(db.clone()), clock);
        let marks: Vec<usize> = logs.iter().map(|l| l.ops().len()).collect();
        recovery_read(&rec, &mut logs[CLIENTS]);
        if cycle == n {
            history.extend(logs[CLIENTS].ops()[marks[CLIENTS]..].iter().cloned());
            break;
        }
        let p = [0.0, 0.5, 1.0][cycle % 3];
        let crash_after = Duration::from_millis(rng.gen_range(20..120));
        let crash_seed: u64 = rng.gen();
        let op_seed: u64 = rng.gen();
        let stop = AtomicBool::new(false);
        let (image, t0, t1) = std::thread::scope(|s| {
            let (stop, rec, db) = (&stop, &rec, &db);
            s.spawn(move || {
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    // Errors here would also surface in client ops.
                    let _ = if i % 4 == 3 {
                        db.compact_range(None, None)
                    } else {
                        db.flush()
                    };
                    i += 1;
                    std::thread::sleep(Duration::from_millis(3));
                }
            });
            for (t, log) in logs[..CLIENTS].iter_mut().enumerate() {
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(op_seed ^ (t as u64 + 1));
                    while !stop.load(Ordering::Relaxed) {
                        let k = key(rng.gen_range(0..KEYS));
                        let r = match rng.gen_range(0..100) {
                            0..=34 => rec.get(log, &k).map(drop),
                            35..=44 => {
                                let n = rng.gen_range(2..=5);
                                let keys: Vec<Vec<u8>> =
                                    rand::seq::index::sample(&mut rng, KEYS, n)
                                        .iter()
                                        .map(key)
                                        .collect();
                                rec.snapshot_get(log, &keys).map(drop)
                            }
                            45..=74 => rec.put(log, &k).map(drop),
                            75..=84 => rec.delete(log, &k),
                            _ => {
                                let n = rng.gen_range(2..=4);
                                let keys: Vec<(Vec<u8>, bool)> =
                                    rand::seq::index::sample(&mut rng, KEYS, n)
                                        .iter()
                                        .map(|i| (key(i), rng.gen_ratio(4, 5)))
                                        .collect();
                                rec.write_batch(log, &keys).map(drop)
                            }
                        };
                        if let Err(e) = r {
                            panic!("seed {seed} cycle {cycle}: client {t}: {e}");
                        }
                    }
                });
            }
            std::thread::sleep(crash_after);
            let t0 = clock.now();
            let image = fs.crash(p, crash_seed);
            let t1 = clock.now();
            // Let the doomed DB run on a little, then stop.
            std::thread::sleep(Duration::from_millis(5));
            stop.store(true, Ordering::Relaxed);
            (image, t0, t1)
        });
        for (log, &mark) in logs.iter().zip(&marks) {
            history.extend(seen_from_image(&log.ops()[mark..], t0, t1));
        }
        drop(rec);
        drop(db);
        fs = image;
    }
    let report = check(&history, Duration::from_secs(60));
    let cuts = check_cuts(&history);
    let cut_writes = history.iter().filter(|o| o.crash.is_some()).count();
    println!(
        "seed {seed}: {n} power losses, {} ops ({cut_writes} cut by a crash) over {} keys: \
         {:?} in {:?}; cut check: {} groups, {} pairs, {} violations",
        report.operations,
        report.partitions,
        report.result,
        report.elapsed,
        cuts.groups,
        cuts.pairs,
        cuts.violation_count
    );
    if report.result != CheckResult::Ok {
        let first = report.illegal_keys.first().cloned().unwrap_or_default();
        let mut ops = sub_history(&history, &first);
        ops.sort_by_key(|o| o.call);
        panic!(
            "seed {seed}: {:?}, illegal keys {:?}; first key's ops: {ops:#?}",
            report.result,
            report
                .illegal_keys
                .iter()
                .map(|k| String::from_utf8_lossy(k))
                .collect::<Vec<_>>()
        );
    }
    assert!(
        cuts.violation_count == 0,
        "seed {seed}: cut check: {:#?}",
        cuts.violations
    );
}

fn seed() -> u64 {
    let seed = std::env::var("SHALE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!("SHALE_SEED={seed}");
    seed
}

#[test]
fn histories_across_power_losses() {
    cycles(seed(), 6);
}

#[test]
#[ignore = "long: 50 seeds x 10 power losses"]
fn histories_across_power_losses_long() {
    let s = seed();
    for i in 0..50 {
        cycles(s.wrapping_add(i), 10);
    }
}
