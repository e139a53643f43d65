//! FIFO compaction (`compaction_style = Fifo`, issue 15): every table stays
//! in L0; the oldest are dropped by a MANIFEST edit past
//! `max_table_files_size` or once older than `ttl` (under an injected
//! clock), small newest tables merge with `allow_compaction`; iterators
//! made before a drop keep reading the dropped tables (a snapshot alone
//! pins no table, as in RocksDB, whose FIFO does not honour snapshots:
//! it reads what is left of its state); the style survives a
//! reopen; and the option combinations this build refuses are
//! `InvalidArgument`.
//!
//! The randomized test (`fifo_model_reads_a_suffix_of_the_writes`) checks
//! the invariant FIFO users rely on: tables are dropped oldest first and a
//! family's L0 tables hold disjoint, ordered sequence ranges, so the DB
//! always reads exactly the result of replaying *a suffix* of the writes
//! (every write after some cut point, the cut only moving forward). Hence
//! a key reads its latest value or, when all its writes were dropped,
//! nothing; a dropped tombstone never resurrects an older value (that
//! value's table went first). Merges are left out there: a merge whose
//! older operands were dropped reads only the newer ones, by design.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{
    CfOptions, Clock, CompactionStyle, Db, Error, FifoCompactionOptions, Options, ReadOptions,
};

struct ManualClock(AtomicU64);

impl Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn fifo(max: u64, allow_compaction: bool, ttl_secs: u64) -> FifoCompactionOptions {
    FifoCompactionOptions {
        max_table_files_size: max,
        allow_compaction,
        ttl_secs,
    }
}

fn options(f: FifoCompactionOptions) -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 64 << 10,
            compaction_style: CompactionStyle::Fifo,
            compaction_options_fifo: f,
            ..Default::default()
        },
        ..Options::default()
    }
}

fn num(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().parse().unwrap()
}

fn l0_files(db: &Db) -> u64 {
    num(db, "shale.num-files-at-level0")
}

fn deeper_files(db: &Db) -> u64 {
    (1..7)
        .map(|l| num(db, &format!("shale.num-files-at-level{l}")))
        .sum()
}

/// Writes `n` keys `{prefix}{i:06}` of `size`-byte values, then flushes.
fn fill(db: &Db, prefix: &str, n: usize, size: usize) {
    for i in 0..n {
        db.put(format!("{prefix}{i:06}").as_bytes(), &vec![b'v'; size])
            .unwrap();
    }
    db.flush().unwrap();
}

fn log_text(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("LOG")).unwrap()
}

#[test]
fn size_cap_holds_after_many_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let cap = 96 << 10;
    let db = Db::open(dir.path(), options(fifo(cap, false, 0))).unwrap();
    let mut largest = 0;
    for round in 0..30 {
        fill(&db, &format!("r{round:03}-"), 100, 200);
        db.wait_for_compaction().unwrap();
        let total = num(&db, "shale.total-sst-files-size");
        largest = largest.max(total / l0_files(&db).max(1));
        assert!(
            total <= cap + largest,
            "round {round}: {total} bytes of tables, cap {cap} + a table"
        );
        assert_eq!(deeper_files(&db), 0, "FIFO keeps every table in L0");
    }
    let dropped = num(&db, "shale.fifo-dropped-files");
    assert!(dropped > 0);
    assert!(num(&db, "shale.fifo-dropped-bytes") > 0);
    // The newest round reads whole; the oldest is gone.
    assert_eq!(db.get(b"r029-000099").unwrap().unwrap().len(), 200);
    assert!(db.get(b"r000-000000").unwrap().is_none());
    let log = log_text(dir.path());
    assert!(log.contains("fifo_compaction"), "no fifo event in the LOG");
    assert!(log.contains("max_table_files_size"));
}

#[test]
fn ttl_drops_old_tables_under_an_injected_clock() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock(AtomicU64::new(1_000)));
    let o = Options {
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
        ..options(fifo(1 << 30, false, 100))
    };
    let db = Db::open(dir.path(), o).unwrap();
    fill(&db, "old-", 50, 100);
    clock.0.store(1_060, Ordering::SeqCst);
    fill(&db, "mid-", 50, 100);
    db.wait_for_compaction().unwrap();
    assert_eq!(l0_files(&db), 2);
    // 1 s past the first table's TTL: it goes, the second stays.
    clock.0.store(1_101, Ordering::SeqCst);
    db.compact_range(None, None).unwrap();
    assert_eq!(l0_files(&db), 1);
    assert!(db.get(b"old-000000").unwrap().is_none());
    assert!(db.get(b"mid-000049").unwrap().is_some());
    // The background threads drop by age too, without a new write.
    clock.0.store(1_200, Ordering::SeqCst);
    let start = std::time::Instant::now();
    while l0_files(&db) > 0 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(10),
            "the expired table was never dropped"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(num(&db, "shale.fifo-dropped-files"), 2);
    assert!(log_text(dir.path()).contains("\"reason\": \"ttl\""));
    // The times survive a reopen (MANIFEST field 72).
    fill(&db, "new-", 10, 100);
    db.close().unwrap();
    clock.0.store(1_250, Ordering::SeqCst);
    let o = Options {
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
        ..options(fifo(1 << 30, false, 100))
    };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(l0_files(&db), 1, "written at 1200, alive at 1250");
    db.close().unwrap();
    clock.0.store(1_301, Ordering::SeqCst);
    let db = Db::open(dir.path(), o).unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(l0_files(&db), 0, "written at 1200, expired at 1301");
}

#[test]
fn allow_compaction_lowers_the_l0_file_count() {
    let count = |allow: bool| {
        let dir = tempfile::tempdir().unwrap();
        let o = {
            let base = options(fifo(1 << 30, allow, 0));
            Options {
                cf: CfOptions {
                    level0_file_num_compaction_trigger: 4,
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open(dir.path(), o).unwrap();
        for round in 0..12 {
            fill(&db, &format!("r{round:02}-"), 20, 100);
            db.wait_for_compaction().unwrap();
        }
        assert_eq!(deeper_files(&db), 0);
        for round in 0..12 {
            let k = format!("r{round:02}-000019");
            assert!(db.get(k.as_bytes()).unwrap().is_some(), "{k}");
        }
        let n = l0_files(&db);
        (n, num(&db, "shale.fifo-dropped-files"))
    };
    let (without, _) = count(false);
    let (with, dropped) = count(true);
    assert_eq!(without, 12);
    assert!(with < without / 2, "{with} L0 files with allow_compaction");
    assert_eq!(dropped, 0, "merging drops nothing");
}

/// Bug (found by bench/styles.sh): W-Amp was counted over L0's written
/// bytes, which hold the intra-L0 merges of FIFO (and universal) as well
/// as the flushes, so a FIFO DB that rewrote its tables showed W-Amp 1.0
/// (RocksDB 1.9 for the same work). It is over the bytes flushed.
#[test]
fn intra_l0_merges_count_in_write_amp() {
    let dir = tempfile::tempdir().unwrap();
    let o = {
        let base = options(fifo(1 << 30, true, 0));
        Options {
            cf: CfOptions {
                level0_file_num_compaction_trigger: 4,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o).unwrap();
    for round in 0..12 {
        fill(&db, &format!("r{round:02}-"), 20, 100);
        db.wait_for_compaction().unwrap();
    }
    let c = db.stats().compaction;
    assert!(c.compactions > 0 && c.compaction_bytes_written > 0, "{c:?}");
    let want = (c.flush_bytes + c.compaction_bytes_written) as f64 / c.flush_bytes as f64;
    assert!(want > 1.2, "{c:?}");
    assert!(
        (c.write_amp - want).abs() < 0.01,
        "W-Amp {} vs {want}: {c:?}",
        c.write_amp
    );
    // The L0 row and the Sum row of `shale.stats` say the same.
    let text = db.property("shale.stats").unwrap();
    let row = |name: &str| -> f64 {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row in {text}"));
        // W-Amp is the 11th column (after Level, Files, Size (2), Score,
        // Read, Rn, Rnp1, Write, Wnew, Moved).
        let cols: Vec<&str> = line.split_whitespace().collect();
        cols[11].parse().unwrap_or_else(|_| panic!("{line}"))
    };
    assert!((row("L0") - want).abs() < 0.06, "{text}");
    assert!((row("Sum") - want).abs() < 0.06, "{text}");
}

#[test]
fn readers_opened_before_a_drop_still_read_everything() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(fifo(48 << 10, false, 0))).unwrap();
    fill(&db, "a-", 100, 100);
    fill(&db, "b-", 100, 100);
    db.wait_for_compaction().unwrap();
    let snap = db.snapshot();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let ro = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    let mut at_snap = db.iter(&ro);
    at_snap.seek_to_first();
    // Newer tables push the first two out.
    let mut round = 0;
    while db.get(b"b-000000").unwrap().is_some() {
        fill(&db, &format!("c{round:03}-"), 100, 100);
        db.wait_for_compaction().unwrap();
        round += 1;
        assert!(round < 100, "never dropped");
    }
    assert!(db.get(b"a-000000").unwrap().is_none());
    // The iterator made before the drop reads all 200 keys.
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 200);
    // So does the iterator made at the snapshot before the drop.
    let mut m = 0;
    while at_snap.valid() {
        m += 1;
        at_snap.next();
    }
    at_snap.status().unwrap();
    assert_eq!(m, 200);
    // A snapshot alone pins no table (RocksDB: FIFO does not honour
    // snapshots): read after the drop it sees what is left of its state,
    // a suffix of the writes it saw.
    assert!(db.get_opt(b"a-000000", &ro).unwrap().is_none());
    let mut after = db.iter(&ro);
    after.seek_to_first();
    assert!(
        !after.valid(),
        "nothing written before the snapshot is left"
    );
    after.status().unwrap();
    drop(after);
    let ssts = || common::files_ending(dir.path(), ".sst") as u64;
    assert!(
        ssts() > l0_files(&db),
        "the dropped tables are still on disk"
    );
    drop(at_snap);
    drop(it);
    drop(ro);
    drop(snap);
    // Released: the dropped tables are deleted by the next sweep.
    fill(&db, "d-", 10, 10);
    db.wait_for_compaction().unwrap();
    assert_eq!(ssts(), l0_files(&db));
}

#[test]
fn reopen_keeps_the_style_of_a_family() {
    let dir = tempfile::tempdir().unwrap();
    let cf_opts = CfOptions {
        write_buffer_size: 64 << 10,
        level0_file_num_compaction_trigger: 2,
        compaction_style: CompactionStyle::Fifo,
        compaction_options_fifo: fifo(40 << 10, false, 0),
        ..CfOptions::default()
    };
    let base = Options {
        create_if_missing: true,
        ..Options::default()
    };
    let db = Db::open(dir.path(), base.clone()).unwrap();
    let cf = db.create_cf("events", cf_opts).unwrap();
    drop(cf);
    db.close().unwrap();
    // Reopened without listing the family: its persisted options apply.
    let db = Db::open(dir.path(), base).unwrap();
    let cf = db.cf("events").unwrap();
    for round in 0..10 {
        for i in 0..100 {
            let k = format!("r{round:02}-{i:04}");
            db.put_cf(&cf, k.as_bytes(), &[b'x'; 100]).unwrap();
        }
        db.flush_cf(&cf).unwrap();
        db.wait_for_compaction().unwrap();
    }
    let at = |l: usize| -> u64 {
        db.property_cf(&cf, &format!("shale.num-files-at-level{l}"))
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(at(1), 0, "a leveled family would have compacted into L1");
    assert!(num(&db, "shale.fifo-dropped-files") > 0);
}

#[test]
fn refused_option_combinations_are_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let invalid = |r: shale::Result<Db>, what: &str| match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains(what), "{m}"),
        Err(e) => panic!("{what}: {e:?}"),
        Ok(_) => panic!("{what}: opened"),
    };
    // A zero cap.
    invalid(
        Db::open(dir.path(), options(fifo(0, false, 0))),
        "max_table_files_size",
    );
    // Incremental universal compaction is refused with two levels (no
    // level between L0 and the last to cut slices from).
    invalid(
        Db::open(dir.path(), {
            let base = options(fifo(1 << 30, false, 0));
            Options {
                num_levels: 2,
                cf: CfOptions {
                    compaction_style: CompactionStyle::Universal,
                    compaction_options_universal: shale::UniversalCompactionOptions {
                        incremental: true,
                        ..Default::default()
                    },
                    ..base.cf
                },
                ..base
            }
        }),
        "incremental",
    );
    // create_cf validates too.
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    let bad = CfOptions {
        compaction_style: CompactionStyle::Fifo,
        compaction_options_fifo: fifo(0, false, 0),
        ..CfOptions::default()
    };
    assert!(matches!(
        db.create_cf("bad", bad),
        Err(Error::InvalidArgument(_))
    ));
    // A leveled family with tables below L0 reopened as FIFO: refused,
    // naming the family.
    let leveled = db.create_cf("logs", CfOptions::default()).unwrap();
    for i in 0..100 {
        db.put_cf(&leveled, format!("k{i:04}").as_bytes(), b"v")
            .unwrap();
    }
    db.flush_cf(&leveled).unwrap();
    db.compact_range_cf(&leveled, None, None).unwrap();
    drop(leveled);
    db.close().unwrap();
    let as_fifo = Options {
        column_families: vec![(
            "logs".to_string(),
            CfOptions {
                compaction_style: CompactionStyle::Fifo,
                ..CfOptions::default()
            },
        )],
        ..Options::default()
    };
    match Db::open(dir.path(), as_fifo) {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("\"logs\"") && m.contains("L0"), "{m}")
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    // Still opens as leveled.
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn l0_stall_triggers_do_not_stop_a_fifo_family() {
    let dir = tempfile::tempdir().unwrap();
    let o = {
        let base = options(fifo(1 << 30, false, 0));
        Options {
            cf: CfOptions {
                level0_file_num_compaction_trigger: 2,
                level0_slowdown_writes_trigger: 2,
                level0_stop_writes_trigger: 3,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o).unwrap();
    for round in 0..8 {
        fill(&db, &format!("r{round}-"), 10, 10);
    }
    // Eight tables, over the stop trigger, and writes still go through.
    assert_eq!(l0_files(&db), 8);
    db.put(b"after", b"ok").unwrap();
    assert_eq!(db.stats().stalls_now.len(), 0);
}

/// One write of the randomized test.
#[derive(Clone, Debug)]
enum W {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

const KEYS: u32 = 48;

fn key(i: u32) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

/// The smallest cut `c >= from` such that replaying `writes[c..]` on an
/// empty DB gives `got`, if any.
fn find_cut(writes: &[W], from: usize, got: &BTreeMap<Vec<u8>, Vec<u8>>) -> Option<usize> {
    // Newest first: the first write met for a key decides it.
    let mut decided: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
    let mut matches = Vec::new();
    let state = |d: &BTreeMap<Vec<u8>, Option<Vec<u8>>>| -> BTreeMap<Vec<u8>, Vec<u8>> {
        d.iter()
            .filter_map(|(k, v)| v.clone().map(|v| (k.clone(), v)))
            .collect()
    };
    if state(&decided) == *got {
        matches.push(writes.len());
    }
    for c in (from..writes.len()).rev() {
        match &writes[c] {
            W::Put(k, v) => {
                decided.entry(k.clone()).or_insert(Some(v.clone()));
            }
            W::Delete(k) => {
                decided.entry(k.clone()).or_insert(None);
            }
            W::DeleteRange(lo, hi) => {
                for i in 0..KEYS {
                    let k = key(i);
                    if &k >= lo && &k < hi {
                        decided.entry(k).or_insert(None);
                    }
                }
            }
        }
        if state(&decided) == *got {
            matches.push(c);
        }
    }
    matches.into_iter().min()
}

#[test]
fn fifo_model_reads_a_suffix_of_the_writes() {
    let seed: u64 = std::env::var("SHALE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    eprintln!("fifo model seed {seed} (rerun with SHALE_SEED={seed})");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock(AtomicU64::new(10_000)));
    let draw = |rng: &mut SmallRng| {
        let base = options(fifo(
            rng.gen_range(8 << 10..48 << 10),
            rng.gen_bool(0.5),
            [0, 30][rng.gen_range(0..2)],
        ));
        Options {
            create_if_missing: true,
            cf: CfOptions {
                write_buffer_size: rng.gen_range(4096..16 << 10),
                level0_file_num_compaction_trigger: [2, 4][rng.gen_range(0..2)],
                ..base.cf
            },
            max_background_jobs: rng.gen_range(1..=3),
            clock: Arc::clone(&clock) as Arc<dyn Clock>,
            ..base
        }
    };
    let mut db = Db::open(dir.path(), draw(&mut rng)).unwrap();
    let mut writes: Vec<W> = Vec::new();
    let mut cut = 0;
    let mut dropped = 0;
    for step in 0..1500 {
        match rng.gen_range(0..100) {
            0..=69 => {
                let k = key(rng.gen_range(0..KEYS));
                let v = format!("{step}-{}", "x".repeat(rng.gen_range(0..200))).into_bytes();
                db.put(&k, &v).unwrap();
                writes.push(W::Put(k, v));
            }
            70..=84 => {
                let k = key(rng.gen_range(0..KEYS));
                db.delete(&k).unwrap();
                writes.push(W::Delete(k));
            }
            85..=87 => {
                let a = rng.gen_range(0..KEYS);
                let (lo, hi) = (key(a), key(a + rng.gen_range(1..6)));
                db.delete_range(&lo, &hi).unwrap();
                writes.push(W::DeleteRange(lo, hi));
            }
            88..=91 => db.flush().unwrap(),
            92..=93 => {
                clock.0.fetch_add(rng.gen_range(1..20), Ordering::SeqCst);
            }
            94 => db.compact_range(None, None).unwrap(),
            95 => {
                dropped += num(&db, "shale.fifo-dropped-files");
                db.close().unwrap();
                db = Db::open(dir.path(), draw(&mut rng)).unwrap();
            }
            _ => {
                db.wait_for_compaction().unwrap();
                // The whole DB against the model: a suffix of the writes,
                // cut no earlier than before.
                let got: BTreeMap<Vec<u8>, Vec<u8>> = db
                    .range(..)
                    .map(|r| {
                        let (k, v) = r.unwrap();
                        (k.to_vec(), v.to_vec())
                    })
                    .collect();
                cut = find_cut(&writes, cut, &got).unwrap_or_else(|| {
                    panic!("seed {seed} step {step}: the DB is no suffix of the writes after {cut}: {got:?}")
                });
                // Point reads agree with the scan.
                for i in 0..KEYS {
                    let k = key(i);
                    assert_eq!(
                        db.get(&k).unwrap().map(|v| v.to_vec()),
                        got.get(&k).cloned(),
                        "seed {seed} step {step} key {i}"
                    );
                }
                assert_eq!(deeper_files(&db), 0);
            }
        }
    }
    dropped += num(&db, "shale.fifo-dropped-files");
    eprintln!(
        "fifo model: cut at write {cut} of {}, {dropped} tables dropped",
        writes.len(),
    );
}
