//! Range deletions on the Shale engine (and the memory engine as a
//! reference):
//!
//! * fills with db_bench's range tombstones (`--writes_per_range_tombstone`
//!   and friends): a model replaying db_bench's `DoWrite` (the thread's
//!   key draws, the tombstone rule, the extra key a tombstone takes from
//!   the generator) gives the live key numbers; the DB, reopened through
//!   the shale crate after the run, holds exactly those, by iteration and
//!   by point lookups over the whole key space; the result line counts
//!   only the puts and the summary the tombstones. With
//!   `--expand_range_tombstones` (point deletes) the same keys remain;
//! * deleterange, deleteseq from `--delete_range_start`, and seekrandom
//!   confined by `--seek_key_range_start/end` into the deleted range;
//! * engines without DeleteRange are refused before anything runs.

#![cfg(feature = "shale-engine")]

use std::collections::BTreeSet;
use std::path::Path;

use shale_bench::engine::memory::MemoryEngine;
use shale_bench::engine::Engine;
use shale_bench::keys::KeyGen;
use shale_bench::mt19937::Mt19937_64;

const SEED: u64 = 777;

mod common;
use common::{run, run_ok};

fn args(engine: &str, db: &str, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        format!("--engine={engine}"),
        format!("--db={db}"),
        format!("--seed={SEED}"),
        "--progress_reports=0".to_string(),
    ];
    if engine == "shale" {
        a.push("--compression_type=none".to_string());
        a.push("--write_buffer_size=65536".to_string());
    }
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// The key number of a 16-byte db_bench key (no prefix).
fn key_number(k: &[u8]) -> u64 {
    u64::from_be_bytes(k[..8].try_into().expect("16-byte key"))
}

/// The key numbers left by the DB at `db`: reopened through the shale
/// crate (or the memory engine's shared map), by iteration; every number
/// of `0..space` is also looked up and must be found exactly when listed.
fn live_keys(engine: &str, db: &str, space: u64) -> BTreeSet<u64> {
    let keys = KeyGen::new(16, 0, 0, space).unwrap();
    let mut found = BTreeSet::new();
    let mut got = BTreeSet::new();
    if engine == "shale" {
        let sdb = shale::Db::open(Path::new(db), shale::Options::default()).unwrap();
        let mut it = sdb.iter(&shale::ReadOptions::new());
        it.seek_to_first();
        while it.valid() {
            got.insert(key_number(it.key()));
            it.next();
        }
        it.status().unwrap();
        drop(it);
        for v in 0..space {
            if sdb.get(&keys.key(v)).unwrap().is_some() {
                found.insert(v);
            }
        }
        sdb.close().unwrap();
    } else {
        let m = MemoryEngine::open(Path::new(db));
        let mut it = m.new_iterator(0, &Default::default()).unwrap();
        it.seek_to_first();
        while it.valid() {
            got.insert(key_number(it.key()));
            it.next();
        }
        drop(it);
        let mut out = Vec::new();
        for v in 0..space {
            if m.get(0, &keys.key(v), &mut out, true).unwrap() {
                found.insert(v);
            }
        }
    }
    assert_eq!(got, found, "iteration and point lookups disagree");
    got
}

/// The fill settings a model replays.
#[derive(Clone, Copy)]
struct FillCfg {
    random: bool,
    num: u64,
    batch: u64,
    before: u64,
    per: u64,
    width: u64,
    max: u64,
}

impl FillCfg {
    fn flags(&self) -> Vec<String> {
        vec![
            format!("--num={}", self.num),
            format!("--batch_size={}", self.batch),
            format!("--writes_before_delete_range={}", self.before),
            format!("--writes_per_range_tombstone={}", self.per),
            format!("--range_tombstone_width={}", self.width),
            format!("--max_num_range_tombstones={}", self.max),
        ]
    }

    /// db_bench's DoWrite on one thread (seed SEED + 1): the live key
    /// numbers, the number of tombstones and of live keys they removed.
    fn model(&self) -> (BTreeSet<u64>, u64, usize) {
        let space = self.num + self.max;
        let mut rng = Mt19937_64::new(SEED + 1);
        let mut next = 0u64;
        let mut key = |rng: &mut Mt19937_64| {
            if self.random {
                rng.next_u64() % space
            } else {
                next += 1;
                next - 1
            }
        };
        let mut live = BTreeSet::new();
        let (mut written, mut tombstones, mut removed) = (0u64, 0u64, 0);
        for _ in 0..self.num / self.batch {
            if self.random {
                rng.next_u64(); // DB choice
            }
            for _ in 0..self.batch {
                live.insert(key(&mut rng));
                written += 1;
                let n = written.saturating_sub(self.before);
                if written > self.before && n % self.per == 0 && n / self.per <= self.max {
                    let b = key(&mut rng);
                    let before = live.len();
                    live.retain(|v| !(b..b + self.width).contains(v));
                    removed += before - live.len();
                    tombstones += 1;
                }
            }
        }
        (live, tombstones, removed)
    }
}

fn check_fill(engine: &str, db: &str, bench: &str, cfg: FillCfg, extra: &[&str]) {
    let (want, tombstones, removed) = cfg.model();
    assert!(tombstones > 0 && tombstones <= cfg.max);
    if cfg.random {
        assert!(removed > 100, "the tombstones must delete written keys");
    }
    let flags = cfg.flags();
    let mut all: Vec<&str> = flags.iter().map(String::as_str).collect();
    let benchmarks = format!("--benchmarks={bench}");
    all.push(&benchmarks);
    all.extend_from_slice(extra);
    let (recs, out) = run_ok(&args(engine, db, &all));
    let fill = &recs[0];
    // Only the puts are ops, and only their bytes count (db_bench).
    assert_eq!(fill.ops, cfg.num / cfg.batch * cfg.batch, "{out}");
    assert_eq!(fill.user_bytes_written, fill.ops * 116);
    assert_eq!(fill.range_tombstones, tombstones, "{out}");
    let summary = out.lines().find(|l| l.starts_with("Summary ")).unwrap();
    assert!(
        summary.contains(&format!(" range_tombstones={tombstones}")),
        "{summary}"
    );
    let got = live_keys(engine, db, cfg.num + cfg.max + cfg.width);
    assert_eq!(got, want, "{engine} {bench} {extra:?}");
}

#[test]
fn fillrandom_range_tombstones_delete_exactly_the_modelled_keys() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = FillCfg {
        random: true,
        num: 3000,
        batch: 1,
        before: 100,
        per: 40,
        width: 25,
        max: 30,
    };
    // Tombstones still in the memtable (recovered from the WAL at reopen),
    // and flushed and compacted.
    for (i, bench) in ["fillrandom", "fillrandom,flush,compactall"]
        .iter()
        .enumerate()
    {
        let db = dir.path().join(format!("db{i}"));
        check_fill("shale", db.to_str().unwrap(), bench, cfg, &[]);
    }
    check_fill("memory", "/memtest/rt-fillrandom", "fillrandom", cfg, &[]);
    // Batches of 4 with the tombstone between puts of one batch, and the
    // expanded form (point deletes): the same keys remain.
    let batched = FillCfg { batch: 4, ..cfg };
    for (i, extra) in [&[][..], &["--expand_range_tombstones=1"][..]]
        .iter()
        .enumerate()
    {
        let db = dir.path().join(format!("batched{i}"));
        check_fill(
            "shale",
            db.to_str().unwrap(),
            "fillrandom,flush",
            batched,
            extra,
        );
    }
}

#[test]
fn fillseq_tombstones_take_the_next_sequence_number() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = FillCfg {
        random: false,
        num: 2000,
        batch: 1,
        before: 0,
        per: 100,
        width: 10,
        max: 5,
    };
    let (want, _, _) = cfg.model();
    // Puts follow each tombstone's begin, so only the begins themselves
    // (skipped by the sequence) are missing below the last put.
    let begins: Vec<u64> = (1..=5).map(|k| k * 100 + k - 1).collect();
    assert_eq!(begins, vec![100, 201, 302, 403, 504]);
    assert_eq!(want.len(), 2000);
    for b in &begins {
        assert!(!want.contains(b));
    }
    let db = dir.path().join("db");
    check_fill("shale", db.to_str().unwrap(), "fillseq", cfg, &[]);
}

#[test]
fn deleterange_deleteseq_and_seek_key_range() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let all = |a: u64, b: u64| (a..b).collect::<BTreeSet<u64>>();
    // One DeleteRange over [100, 900), flushed: 200 keys remain.
    let (recs, out) = run_ok(&args(
        "shale",
        db,
        &[
            "--num=1000",
            "--benchmarks=fillseq,deleterange,flush,readseq",
            "--delete_range_start=100",
            "--delete_range_end=900",
        ],
    ));
    let dr = &recs[1];
    assert_eq!(dr.benchmark, "deleterange");
    assert_eq!((dr.ops, dr.threads, dr.range_tombstones), (1, 1, 1));
    assert_eq!(dr.message, "(key numbers [100, 900) in one DeleteRange)");
    assert!(out.contains("deleterange  : "), "{out}");
    assert_eq!(recs[2].ops, 200, "readseq sees what is left");
    let mut want = all(0, 100);
    want.extend(900..1000);
    assert_eq!(live_keys("shale", db, 1000), want);

    // deleteseq: 300 point deletes from key number 500; seekrandom into the
    // deleted range finds nothing, next to it everything.
    let (recs, _) = run_ok(&args(
        "shale",
        db,
        &[
            "--num=1000",
            "--benchmarks=fillseq,deleteseq,flush",
            "--delete_range_start=500",
            "--deletes=300",
            "--batch_size=7",
        ],
    ));
    // --batch_size applies to fillseq too: floor(1000 / 7) batches of 7.
    assert_eq!(recs[0].ops, 994);
    assert_eq!(recs[1].benchmark, "deleteseq");
    assert_eq!(recs[1].ops, 294, "floor(300 / 7) batches of 7");
    let mut want = all(0, 500);
    want.extend(794..994);
    assert_eq!(live_keys("shale", db, 1000), want);
    for (range, found) in [
        (["500", "794"], "(0 of 400 found)"),
        (["0", "500"], "(400 of 400 found)"),
    ] {
        let (recs, _) = run_ok(&args(
            "shale",
            db,
            &[
                "--num=1000",
                "--use_existing_db=1",
                "--benchmarks=seekrandom",
                "--reads=400",
                &format!("--seek_key_range_start={}", range[0]),
                &format!("--seek_key_range_end={}", range[1]),
            ],
        ));
        assert_eq!(recs[0].message, found, "{range:?}");
    }
}

#[test]
fn engines_without_delete_range_are_refused_before_running() {
    let (r, out) = run(&args(
        "fjall",
        "/tmp/shale-bench-never-created",
        &[
            "--benchmarks=fillseq",
            "--writes_per_range_tombstone=10",
            "--max_num_range_tombstones=2",
        ],
    ));
    // Without the fjall feature the engine itself is refused; with it, the
    // missing DeleteRange is.
    let e = r.unwrap_err().0;
    assert!(e.contains("fjall"), "{e}");
    assert!(!out.contains("DB path"));
}
