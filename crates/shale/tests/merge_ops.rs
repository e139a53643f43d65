//! Data operations beyond put and delete (issue 13): the merge operator,
//! SingleDelete and the compaction filter, at the edges the randomized
//! model test reaches only by chance: missing and failing operators,
//! snapshots against collapsing and filtering, reopen with persisted
//! operators, and cursor moves around resolved merges.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::{
    CfOptions, CompactionFilter, Db, Error, FilterDecision, MaxOperator, Options, ReadOptions,
    StringAppendOperator, UInt64AddOperator, WriteBatch, WriteOptions,
};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

fn counter_opts() -> Options {
    {
        let base = opts();
        Options {
            cf: CfOptions {
                merge_operator: Some(Arc::new(UInt64AddOperator)),
                ..base.cf
            },
            ..base
        }
    }
}

fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

fn get(db: &Db, k: &[u8]) -> Option<Vec<u8>> {
    db.get(k).unwrap().map(|v| v.to_vec())
}

fn num(db: &Db, p: &str) -> u64 {
    db.property(p).unwrap().parse().unwrap()
}

fn compact(db: &Db) {
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
}

#[test]
fn merge_without_an_operator_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let e = db.merge(b"k", b"x").unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("merge_operator")),
        "{e}"
    );
    // A batch with a merge for a family without an operator fails whole.
    let cf = db
        .create_cf(
            "counters",
            CfOptions {
                merge_operator: Some(Arc::new(UInt64AddOperator)),
                ..CfOptions::default()
            },
        )
        .unwrap();
    let mut b = WriteBatch::new();
    b.put(b"p", b"1");
    b.merge_cf(&cf, b"c", &le(1));
    b.merge(b"k", b"x");
    assert!(matches!(
        db.write(b, &WriteOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(get(&db, b"p"), None);
    assert!(db.get_cf(&cf, b"c").unwrap().is_none());
    // The family with an operator takes merges.
    db.merge_cf(&cf, b"c", &le(2)).unwrap();
    db.merge_cf(&cf, b"c", &le(3)).unwrap();
    assert_eq!(db.get_cf(&cf, b"c").unwrap().unwrap().to_vec(), le(5));
}

#[test]
fn operands_survive_a_reopen_without_the_operator() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    db.put(b"k", &le(10)).unwrap();
    db.flush().unwrap();
    for i in 1..=3 {
        db.merge(b"k", &le(i)).unwrap();
    }
    db.flush().unwrap();
    db.merge(b"k", &le(100)).unwrap();
    db.close().unwrap();
    // Without the operator: reads fail clearly, compaction keeps every
    // operand.
    let db = Db::open(dir.path(), opts()).unwrap();
    let e = db.get(b"k").unwrap_err();
    assert!(
        matches!(&e, Error::MergeFailed(m) if m.contains("no merge operator")),
        "{e}"
    );
    let mut it = db.iter(&ReadOptions::new());
    it.seek_to_first();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::MergeFailed(_))));
    drop(it);
    compact(&db);
    assert!(matches!(db.get(b"k"), Err(Error::MergeFailed(_))));
    db.close().unwrap();
    // With it again: every operand is there.
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    assert_eq!(get(&db, b"k"), Some(le(116)));
    // A new operand over the key's file: compaction merges that file in.
    db.merge(b"k", &le(1)).unwrap();
    compact(&db);
    assert_eq!(get(&db, b"k"), Some(le(117)));
    assert_eq!(num(&db, "shale.estimate-num-keys"), 1, "operands collapsed");
}

#[test]
fn failing_merges_fail_reads_and_keep_their_operands() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    db.put(b"k", b"not eight bytes").unwrap();
    db.merge(b"k", &le(1)).unwrap();
    let e = db.get(b"k").unwrap_err();
    assert!(
        matches!(&e, Error::MergeFailed(m) if m.contains("uint64add")),
        "{e}"
    );
    compact(&db);
    assert!(num(&db, "shale.merge-failures") >= 1);
    assert!(matches!(db.get(b"k"), Err(Error::MergeFailed(_))));
    // Both entries are still there: a put over them reads normally, and
    // the key reads as the put after compaction.
    db.put(b"k", &le(7)).unwrap();
    db.merge(b"k", &le(1)).unwrap();
    assert_eq!(get(&db, b"k"), Some(le(8)));
    compact(&db);
    assert_eq!(get(&db, b"k"), Some(le(8)));
}

#[test]
fn collapsing_keeps_what_snapshots_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            cf: CfOptions {
                merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    db.put(b"k", b"a").unwrap();
    db.merge(b"k", b"b").unwrap();
    let s1 = db.snapshot();
    db.merge(b"k", b"c").unwrap();
    db.flush().unwrap();
    db.merge(b"k", b"d").unwrap();
    let s2 = db.snapshot();
    db.delete(b"k").unwrap();
    db.merge(b"k", b"e").unwrap();
    compact(&db);
    let at = |s| {
        let mut ro = ReadOptions::new();
        ro.snapshot = Some(s);
        db.get_opt(b"k", &ro).unwrap().map(|v| v.to_vec())
    };
    assert_eq!(at(&s1).as_deref(), Some(&b"a,b"[..]));
    assert_eq!(at(&s2).as_deref(), Some(&b"a,b,c,d"[..]));
    assert_eq!(get(&db, b"k").as_deref(), Some(&b"e"[..]));
    drop((s1, s2));
    // A new operand over the key's file: compaction merges that file in.
    db.merge(b"k", b"f").unwrap();
    compact(&db);
    assert_eq!(get(&db, b"k").as_deref(), Some(&b"e,f"[..]));
    assert_eq!(num(&db, "shale.estimate-num-keys"), 1, "one entry");
}

/// Regression: a forward merge leaves the inner cursor past the operands,
/// at the end of the data for the last key; `prev` from there must land on
/// the key before, and `next` after `prev` must come back.
#[test]
fn cursor_moves_around_resolved_merges() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            cf: CfOptions {
                merge_operator: Some(Arc::new(MaxOperator)),
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    for (k, ops) in [(b"a", ["3", "9"]), (b"b", ["1", "5"]), (b"c", ["7", "2"])] {
        for o in ops {
            db.merge(k, o.as_bytes()).unwrap();
        }
        if k == b"b" {
            db.flush().unwrap();
        }
    }
    let mut it = db.iter(&ReadOptions::new());
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = [("a", "9"), ("b", "5"), ("c", "7")]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    assert_eq!(seen, want);
    it.seek(b"c");
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"7"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"5"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (&b"a"[..], &b"9"[..]));
    it.next();
    assert_eq!((it.key(), it.value()), (&b"b"[..], &b"5"[..]));
    it.seek_to_last();
    assert_eq!((it.key(), it.value()), (&b"c"[..], &b"7"[..]));
    it.prev();
    it.next();
    assert_eq!(it.key(), b"c");
    it.next();
    assert!(!it.valid());
    it.status().unwrap();
    let back: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).rev().map(|r| r.unwrap()).collect();
    assert_eq!(back, want.into_iter().rev().collect::<Vec<_>>());
}

#[test]
fn single_delete_vanishes_with_its_value_at_the_first_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    for i in 0..100u32 {
        db.single_delete(format!("k{i:03}").as_bytes()).unwrap();
    }
    assert_eq!(get(&db, b"k005"), None);
    compact(&db);
    assert_eq!(num(&db, "shale.total-sst-files-size"), 0, "nothing left");
    assert_eq!(num(&db, "shale.single-delete-mismatches"), 0);
    // Written twice, then single-deleted: RocksDB's undefined case, counted.
    db.put(b"x", b"1").unwrap();
    db.put(b"x", b"2").unwrap();
    db.single_delete(b"x").unwrap();
    compact(&db);
    assert!(num(&db, "shale.single-delete-mismatches") >= 1);
}

/// Put, single delete, put, single delete (valid use) with the first put
/// at the last level and the rest compacted into L1 in two steps: the
/// second single delete must not bring the first put back (it did while a
/// single delete under a newer put was dropped as shadowed).
#[test]
fn single_delete_of_a_rewritten_key_keeps_the_older_put_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            num_levels: 3,
            cf: CfOptions {
                level_compaction_dynamic_level_bytes: false,
                level0_file_num_compaction_trigger: 1,
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    db.put(b"k", b"old").unwrap();
    db.put(b"z", b"z").unwrap();
    compact(&db);
    assert_eq!(
        db.property("shale.num-files-at-level2").as_deref(),
        Some("1")
    );
    db.single_delete(b"k").unwrap();
    db.put(b"k", b"new").unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap(); // L0 -> L1 only
    assert_eq!(
        db.property("shale.num-files-at-level1").as_deref(),
        Some("1")
    );
    db.single_delete(b"k").unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap(); // L0 -> L1: the second pair vanishes
    assert_eq!(
        db.property("shale.num-files-at-level2").as_deref(),
        Some("1")
    );
    assert_eq!(get(&db, b"k"), None);
    compact(&db);
    assert_eq!(get(&db, b"k"), None);
    assert_eq!(get(&db, b"z").as_deref(), Some(&b"z"[..]));
}

struct DropAll(AtomicUsize);

impl CompactionFilter for DropAll {
    fn name(&self) -> &str {
        "drop-all"
    }
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        self.0.fetch_add(1, Ordering::Relaxed);
        match value {
            b"shout" => FilterDecision::ChangeValue(b"SHOUT".to_vec()),
            _ => FilterDecision::Remove,
        }
    }
}

#[test]
fn compaction_filter_never_touches_what_a_snapshot_reads() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(DropAll(AtomicUsize::new(0)));
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            cf: CfOptions {
                compaction_filter: Some(Arc::clone(&filter) as Arc<dyn CompactionFilter>),
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    db.put(b"a", b"x").unwrap();
    db.put(b"b", b"shout").unwrap();
    let snap = db.snapshot();
    compact(&db);
    assert_eq!(filter.0.load(Ordering::Relaxed), 0, "a snapshot sees both");
    assert_eq!(get(&db, b"a").as_deref(), Some(&b"x"[..]));
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    assert_eq!(db.get_opt(b"b", &ro).unwrap().unwrap().to_vec(), b"shout");
    drop(snap);
    // Nothing protects either now; a manual compaction rewrites the last
    // level's single file because the family has a filter (RocksDB's
    // kIfHaveCompactionFilter).
    compact(&db);
    assert!(filter.0.load(Ordering::Relaxed) >= 2);
    assert_eq!(get(&db, b"a"), None);
    assert_eq!(get(&db, b"b").as_deref(), Some(&b"SHOUT"[..]));
    assert_eq!(num(&db, "shale.compaction-filter-changes"), 2);
}

/// Families opened with their persisted options get their shipped merge
/// operator back.
#[test]
fn a_shipped_operator_comes_back_with_persisted_options() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let cf = db
        .create_cf(
            "lists",
            CfOptions {
                merge_operator: Some(Arc::new(StringAppendOperator::new(b"|"))),
                ..CfOptions::default()
            },
        )
        .unwrap();
    db.merge_cf(&cf, b"l", b"x").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let cf = db.cf("lists").unwrap();
    db.merge_cf(&cf, b"l", b"y").unwrap();
    assert_eq!(db.get_cf(&cf, b"l").unwrap().unwrap().to_vec(), b"x|y");
}

/// Upper-cases every value (lower-case ASCII values in).
struct Upper;

impl CompactionFilter for Upper {
    fn name(&self) -> &str {
        "upper"
    }
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> FilterDecision {
        FilterDecision::ChangeValue(value.to_ascii_uppercase())
    }
}

/// Issue 13, without sync points: snapshots taken at any moment while
/// flushes and compactions filter read the same twice, with a job possibly
/// installed in between (`interleavings.rs` pins the windows down; this
/// runs them all at random, with subcompactions).
#[test]
fn snapshots_read_the_same_while_filtering_jobs_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            cf: CfOptions {
                compaction_filter: Some(Arc::new(Upper)),
                target_file_size_base: 1 << 10,
                block_size: 128,
                level0_file_num_compaction_trigger: 2,
                ..base.cf
            },
            // Small tables and blocks, so that jobs split into ranges.
            max_subcompactions: 2,
            ..base
        }
    })
    .unwrap();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let (db, done) = (db.clone(), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut checked = 0u64;
                let mut i = t;
                while !done.load(Ordering::Relaxed) {
                    let snap = db.snapshot();
                    let mut ro = ReadOptions::new();
                    ro.snapshot = Some(&snap);
                    let keys: Vec<String> = (0..8)
                        .map(|j| format!("k{:02}", (i + j * 7) % 40))
                        .collect();
                    let read = |db: &Db| -> Vec<Option<Vec<u8>>> {
                        keys.iter()
                            .map(|k| db.get_opt(k.as_bytes(), &ro).unwrap().map(|v| v.to_vec()))
                            .collect()
                    };
                    let first = read(&db);
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    assert_eq!(read(&db), first, "reads at snapshot {snap:?} changed");
                    drop(snap);
                    checked += 1;
                    i += 3;
                    // Gaps without a snapshot, so jobs find values to filter.
                    std::thread::sleep(std::time::Duration::from_micros(500));
                }
                checked
            })
        })
        .collect();
    for i in 0..3000u32 {
        let v = format!("v{i}");
        db.put(format!("k{:02}", i % 40).as_bytes(), v.as_bytes())
            .unwrap();
        if i % 50 == 49 {
            db.flush().unwrap();
        }
        if i % 700 == 699 {
            db.compact_range(None, None).unwrap();
        }
    }
    done.store(true, Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert!(
        num(&db, "shale.compaction-filter-changes") > 0,
        "the filter ran"
    );
}
