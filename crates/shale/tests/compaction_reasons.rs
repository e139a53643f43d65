//! Every compaction reason a picker produces reaches the listeners
//! (`CompactionJobInfo::reason`) and the LOG (`"compaction_reason"`):
//! one scenario per reason, each built so that its trigger is the only
//! one that fires, asserting the reason the listener heard.
//!
//! Leveled: L0 file count, level size, manual, tombstone-dense files
//! (`FilesMarkedForCompaction`), last-level tombstones a released snapshot
//! no longer needs (`BottommostFiles`), mostly expired files (`Ttl`),
//! forced blob garbage collection (`ForcedBlobGc`), tables dropped unread
//! under a range tombstone (`DeleteOnly`). Universal: space
//! amplification, size ratio, sorted-run count. FIFO: size cap and TTL
//! drops, intra-L0 merges.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shale::{
    BlobOptions, Clock, CompactionJobInfo, CompactionReason, CompactionStyle, Db, EventListener,
    FifoCompactionOptions, Options, UniversalCompactionOptions,
};

/// One heard compaction: (reason, base input level, output level).
type Heard = (CompactionReason, usize, usize);

/// Records the reason of every compaction begin and completion.
#[derive(Default)]
struct Reasons {
    begun: Mutex<Vec<Heard>>,
    completed: Mutex<Vec<Heard>>,
}

impl Reasons {
    fn take(&self) -> Vec<Heard> {
        let begun = std::mem::take(&mut *self.begun.lock().unwrap());
        let completed = std::mem::take(&mut *self.completed.lock().unwrap());
        assert_eq!(begun, completed, "every begun job completes, same reason");
        begun
    }
    fn reasons(&self) -> Vec<CompactionReason> {
        self.take().into_iter().map(|h| h.0).collect()
    }
}

impl EventListener for Reasons {
    fn on_compaction_begin(&self, i: &CompactionJobInfo) {
        let h = (i.reason, i.base_input_level, i.output_level);
        self.begun.lock().unwrap().push(h);
    }
    fn on_compaction_completed(&self, i: &CompactionJobInfo) {
        assert!(i.status.is_ok(), "{:?}", i.status);
        let h = (i.reason, i.base_input_level, i.output_level);
        self.completed.lock().unwrap().push(h);
    }
}

struct ManualClock(AtomicU64);

impl Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn options(r: &Arc<Reasons>) -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 64 << 10,
            target_file_size_base: 64 << 10,
            ..Default::default()
        },
        listeners: vec![Arc::clone(r) as Arc<dyn EventListener>],
        ..Options::default()
    }
}

/// Writes keys `{prefix}{i:06}` for `i` in `range` with `size`-byte
/// values, then flushes.
fn fill(db: &Db, prefix: &str, range: std::ops::Range<u32>, size: usize) {
    for i in range {
        db.put(format!("{prefix}{i:06}").as_bytes(), &vec![b'v'; size])
            .unwrap();
    }
    db.flush().unwrap();
}

fn log_text(dir: &std::path::Path) -> String {
    std::fs::read_to_string(dir.join("LOG")).unwrap()
}

fn assert_logged(dir: &std::path::Path, name: &str) {
    let needle = format!("\"compaction_reason\": \"{name}\"");
    assert!(log_text(dir).contains(&needle), "no {needle} in the LOG");
}

#[test]
fn leveled_l0_count_and_level_size_compactions_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let o = {
        let base = options(&r);
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 16 << 10,
                target_file_size_base: 16 << 10,
                max_bytes_for_level_base: 32 << 10,
                level0_file_num_compaction_trigger: 2,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o).unwrap();
    // Keys in a scattered order, so every flush overlaps the levels below.
    for i in 0..3000u32 {
        let k = format!("k{:06}", (i * 7919) % 3000);
        db.put(k.as_bytes(), &[b'v'; 150]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    for &(reason, level, _) in &heard {
        let expected = if level == 0 {
            CompactionReason::LevelL0FilesNum
        } else {
            CompactionReason::LevelMaxLevelSize
        };
        assert_eq!(reason, expected, "{heard:?}");
    }
    assert!(heard.iter().any(|h| h.1 == 0), "{heard:?}");
    assert!(heard.iter().any(|h| h.1 > 0), "{heard:?}");
    assert_logged(dir.path(), "LevelL0FilesNum");
    assert_logged(dir.path(), "LevelMaxLevelSize");
}

#[test]
fn compact_range_is_a_manual_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = Db::open(dir.path(), options(&r)).unwrap();
    fill(&db, "k", 0..100, 100);
    db.compact_range(None, None).unwrap();
    let reasons = r.reasons();
    assert!(!reasons.is_empty());
    assert!(
        reasons
            .iter()
            .all(|&x| x == CompactionReason::ManualCompaction),
        "{reasons:?}"
    );
    assert_logged(dir.path(), "ManualCompaction");
}

#[test]
fn a_file_dense_with_tombstones_is_compacted_as_marked() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = Db::open(dir.path(), options(&r)).unwrap();
    fill(&db, "k", 0..1000, 50);
    db.compact_range(None, None).unwrap();
    r.take();
    // One L0 table (trigger 4) of 600 tombstones: compacted for them.
    for i in 0..600u32 {
        db.delete(format!("k{i:06}").as_bytes()).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    assert_eq!(heard.len(), 1, "{heard:?}");
    assert_eq!(heard[0].0, CompactionReason::FilesMarkedForCompaction);
    assert_eq!(heard[0].1, 0);
    assert_logged(dir.path(), "FilesMarkedForCompaction");
}

/// Regression (issue 14's note: delete-only compactions reached the LOG
/// but not the listeners): tables wholly under a range tombstone are
/// dropped unread, and the listeners hear it as a compaction with those
/// tables as inputs and no outputs.
#[test]
fn tables_dropped_under_a_range_tombstone_are_a_delete_only_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = Db::open(dir.path(), options(&r)).unwrap();
    fill(&db, "k", 0..3000, 100);
    db.compact_range(None, None).unwrap();
    r.take();
    let last = db.property("shale.num-files-at-level6").unwrap();
    assert!(last.parse::<u32>().unwrap() > 1, "last level: {last}");
    db.delete_range(b"k", b"l").unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    assert!(
        heard.contains(&(CompactionReason::DeleteOnly, 6, 6)),
        "{heard:?}"
    );
    assert!(db.property("shale.delete-only-bytes").unwrap() != "0");
    assert_eq!(db.property("shale.num-files-at-level6").unwrap(), "0");
    assert_logged(dir.path(), "DeleteOnly");
}

#[test]
fn last_level_tombstones_are_rewritten_once_no_snapshot_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = Db::open(dir.path(), options(&r)).unwrap();
    fill(&db, "k", 0..100, 50);
    db.compact_range(None, None).unwrap();
    let snap = db.snapshot();
    db.delete_range(b"k", b"l").unwrap();
    db.flush().unwrap();
    // The snapshot keeps the values and the tombstone in the last level.
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    r.take();
    drop(snap);
    // A flush makes the picker look again.
    fill(&db, "z", 0..1, 10);
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    assert_eq!(
        heard,
        vec![(CompactionReason::BottommostFiles, 6, 6)],
        "the last-level file rewritten in place"
    );
    assert!(db.get(b"k000001").unwrap().is_none());
    assert_logged(dir.path(), "BottommostFiles");
}

#[test]
fn a_mostly_expired_file_is_compacted_for_its_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let clock = Arc::new(ManualClock(AtomicU64::new(1_000)));
    let o = Options {
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
        ..options(&r)
    };
    let db = Db::open(dir.path(), o).unwrap();
    for i in 0..300u32 {
        let k = format!("k{i:06}");
        db.put_with_ttl(k.as_bytes(), b"short-lived", Duration::from_secs(10))
            .unwrap();
    }
    // A quarter stays: the file is mostly, not wholly, expired (a wholly
    // expired file is dropped without a compaction).
    fill(&db, "m", 0..100, 20);
    db.compact_range(None, None).unwrap();
    r.take();
    clock.0.store(1_100, Ordering::SeqCst);
    fill(&db, "z", 0..1, 10);
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    assert_eq!(heard, vec![(CompactionReason::Ttl, 6, 6)]);
    assert!(db.get(b"k000001").unwrap().is_none());
    assert!(db.get(b"m000001").unwrap().is_some());
    assert_logged(dir.path(), "Ttl");
}

#[test]
fn forced_blob_garbage_collection_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    // Cutoff 1: the oldest batch (file 1, and file 2 which no table names
    // as its oldest) lies below it (RocksDB's rule: a batch reaching past
    // the cutoff is not forced).
    let blob = |gc: bool| BlobOptions {
        enable_blob_files: true,
        min_blob_size: 100,
        enable_blob_garbage_collection: gc,
        blob_garbage_collection_age_cutoff: 1.0,
        blob_garbage_collection_force_threshold: 0.25,
        ..BlobOptions::default()
    };
    let o = {
        let base = options(&r);
        Options {
            cf: shale::CfOptions {
                blob: blob(false),
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    // Blob file 1 holds 100 values, blob file 2 their overwrites of half:
    // merged without collection, half of file 1 is garbage.
    fill(&db, "k", 0..100, 500);
    fill(&db, "k", 0..50, 500);
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    r.take();
    // With collection on, the batch of files 1 and 2 is a third garbage
    // (50 of 150 values), over the 25% threshold: the tables of file 1 are
    // forced (the compactions open schedules find it).
    let o = Options {
        cf: shale::CfOptions {
            blob: blob(true),
            ..o.cf
        },
        ..o
    };
    let db = Db::open(dir.path(), o).unwrap();
    db.wait_for_compaction().unwrap();
    let heard = r.take();
    assert!(
        heard.contains(&(CompactionReason::ForcedBlobGc, 6, 6)),
        "{heard:?}"
    );
    assert!(
        heard.iter().all(|h| h.0 == CompactionReason::ForcedBlobGc),
        "{heard:?}"
    );
    assert_eq!(db.get(b"k000099").unwrap().unwrap().len(), 500);
    assert_logged(dir.path(), "ForcedBlobGC");
}

fn universal(r: &Arc<Reasons>, trigger: usize) -> Options {
    {
        let base = options(r);
        Options {
            cf: shale::CfOptions {
                // The base run is written by one flush.
                write_buffer_size: 4 << 20,
                compaction_style: CompactionStyle::Universal,
                compaction_options_universal: UniversalCompactionOptions::default(),
                level0_file_num_compaction_trigger: trigger,
                level0_slowdown_writes_trigger: 20,
                level0_stop_writes_trigger: 36,
                ..base.cf
            },
            ..base
        }
    }
}

/// A universal DB whose only run is `keys` keys in the last level.
fn universal_base(dir: &std::path::Path, r: &Arc<Reasons>, trigger: usize, keys: u32) -> Db {
    let db = Db::open(dir, universal(r, trigger)).unwrap();
    fill(&db, "b", 0..keys, 100);
    db.compact_range(None, None).unwrap();
    assert_eq!(r.reasons(), vec![CompactionReason::ManualCompaction]);
    db
}

#[test]
fn universal_space_amplification_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = universal_base(dir.path(), &r, 4, 5);
    // Three runs of 200 values over 5: far past 200% amplification.
    for round in 0..3 {
        fill(&db, &format!("r{round}-"), 0..200, 100);
    }
    db.wait_for_compaction().unwrap();
    assert_eq!(
        r.take(),
        vec![(CompactionReason::UniversalSizeAmplification, 0, 6)]
    );
    assert_logged(dir.path(), "UniversalSizeAmplification");
}

#[test]
fn universal_size_ratio_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = universal_base(dir.path(), &r, 4, 2000);
    // Three small runs, each newer one a little larger: similar sizes.
    for (round, n) in [10, 11, 12].into_iter().enumerate() {
        fill(&db, &format!("r{round}-"), 0..n, 100);
    }
    db.wait_for_compaction().unwrap();
    assert_eq!(r.take(), vec![(CompactionReason::UniversalSizeRatio, 0, 5)]);
    assert_logged(dir.path(), "UniversalSizeRatio");
}

#[test]
fn universal_sorted_run_count_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let db = universal_base(dir.path(), &r, 3, 5000);
    // Runs of 500, 50 and 2 values over 5000: no two of similar size, no
    // amplification; the fourth run is one past the trigger of 3.
    for (round, n) in [500, 50, 2].into_iter().enumerate() {
        fill(&db, &format!("r{round}-"), 0..n, 100);
    }
    db.wait_for_compaction().unwrap();
    assert_eq!(
        r.take(),
        vec![(CompactionReason::UniversalSortedRunNum, 0, 0)]
    );
    assert_logged(dir.path(), "UniversalSortedRunNum");
}

fn fifo(r: &Arc<Reasons>, f: FifoCompactionOptions) -> Options {
    {
        let base = options(r);
        Options {
            cf: shale::CfOptions {
                compaction_style: CompactionStyle::Fifo,
                compaction_options_fifo: f,
                ..base.cf
            },
            ..base
        }
    }
}

#[test]
fn fifo_size_cap_drops_are_reported_as_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let f = FifoCompactionOptions {
        max_table_files_size: 16 << 10,
        allow_compaction: false,
        ttl_secs: 0,
    };
    let db = Db::open(dir.path(), fifo(&r, f)).unwrap();
    for round in 0..4 {
        fill(&db, &format!("r{round}-"), 0..100, 100);
        db.wait_for_compaction().unwrap();
    }
    let heard = r.take();
    assert!(!heard.is_empty());
    assert!(
        heard
            .iter()
            .all(|&h| h == (CompactionReason::FifoMaxSize, 0, 0)),
        "{heard:?}"
    );
    assert_logged(dir.path(), "FIFOMaxSize");
}

#[test]
fn fifo_ttl_drops_are_reported_as_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let clock = Arc::new(ManualClock(AtomicU64::new(1_000)));
    let f = FifoCompactionOptions {
        max_table_files_size: 1 << 30,
        allow_compaction: false,
        ttl_secs: 100,
    };
    let o = Options {
        clock: Arc::clone(&clock) as Arc<dyn Clock>,
        ..fifo(&r, f)
    };
    let db = Db::open(dir.path(), o).unwrap();
    fill(&db, "old-", 0..50, 100);
    clock.0.store(1_101, Ordering::SeqCst);
    db.compact_range(None, None).unwrap();
    assert_eq!(r.take(), vec![(CompactionReason::FifoTtl, 0, 0)]);
    assert_logged(dir.path(), "FIFOTtl");
}

#[test]
fn fifo_intra_l0_merges_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let r = Arc::new(Reasons::default());
    let f = FifoCompactionOptions {
        max_table_files_size: 1 << 30,
        allow_compaction: true,
        ttl_secs: 0,
    };
    let o = {
        let base = fifo(&r, f);
        Options {
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 4,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o).unwrap();
    for round in 0..6 {
        fill(&db, &format!("r{round}-"), 0..20, 100);
        db.wait_for_compaction().unwrap();
    }
    let heard = r.take();
    assert!(!heard.is_empty());
    assert!(
        heard
            .iter()
            .all(|&h| h == (CompactionReason::FifoReduceNumFiles, 0, 0)),
        "{heard:?}"
    );
    assert_logged(dir.path(), "FIFOReduceNumFiles");
}
