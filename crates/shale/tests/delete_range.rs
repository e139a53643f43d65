//! `delete_range` (issue 13): range tombstones in memtables and in tables'
//! range-deletion blocks, honoured by gets, `multi_get` and iterators at
//! every snapshot, through flush, compaction, reopen and recovery; space
//! comes back when compaction drops what they cover.

use std::sync::Arc;

use shale::{
    CfOptions, Db, Error, Options, ReadOptions, StringAppendOperator, WriteBatch, WriteOptions,
};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 64 << 10,
            target_file_size_base: 32 << 10,
            max_bytes_for_level_base: 128 << 10,
            merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
            ..Default::default()
        },
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

fn get(db: &Db, k: &[u8], ro: &ReadOptions<'_>) -> Option<Vec<u8>> {
    db.get_opt(k, ro).unwrap().map(|v| v.to_vec())
}

fn scan(db: &Db, ro: &ReadOptions<'_>) -> Vec<Vec<u8>> {
    let mut it = db.iter(ro);
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next();
    }
    it.status().unwrap();
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push(it.key().to_vec());
        it.prev();
    }
    it.status().unwrap();
    back.reverse();
    assert_eq!(out, back, "forward and reverse scans differ");
    out
}

fn num(db: &Db, p: &str) -> u64 {
    db.property(p).unwrap().parse().unwrap()
}

/// Every stage the tombstone and the keys can be in: both in the memtable,
/// keys flushed below it, both flushed, compacted together, reopened.
#[test]
fn a_range_is_deleted_at_every_stage_and_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..200 {
        db.put(&key(i), b"v1").unwrap();
    }
    let before = db.snapshot();
    db.flush().unwrap();
    db.delete_range(&key(50), &key(150)).unwrap();
    let after = db.snapshot();
    // Newer writes inside the range are visible.
    db.put(&key(60), b"v2").unwrap();
    db.merge(&key(70), b"m").unwrap();
    let check = |db: &Db, stage: &str| {
        let mut ro = ReadOptions::new();
        assert_eq!(
            get(db, &key(49), &ro).as_deref(),
            Some(&b"v1"[..]),
            "{stage}"
        );
        assert_eq!(get(db, &key(50), &ro), None, "{stage}");
        assert_eq!(get(db, &key(149), &ro), None, "{stage}");
        assert_eq!(
            get(db, &key(150), &ro).as_deref(),
            Some(&b"v1"[..]),
            "{stage}"
        );
        assert_eq!(
            get(db, &key(60), &ro).as_deref(),
            Some(&b"v2"[..]),
            "{stage}"
        );
        assert_eq!(
            get(db, &key(70), &ro).as_deref(),
            Some(&b"m"[..]),
            "{stage}"
        );
        let keys = scan(db, &ro);
        let want: Vec<Vec<u8>> = (0..200)
            .filter(|&i| !(50..150).contains(&i) || i == 60 || i == 70)
            .map(key)
            .collect();
        assert_eq!(keys, want, "{stage}: scan");
        let ks: Vec<Vec<u8>> = (45..155).map(key).collect();
        let refs: Vec<&[u8]> = ks.iter().map(|k| k.as_slice()).collect();
        for (k, r) in ks.iter().zip(db.multi_get(&refs, &ro)) {
            let got = r.unwrap().is_some();
            let i: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
            assert_eq!(
                got,
                !(50..150).contains(&i) || i == 60 || i == 70,
                "{stage}: multi_get {i}"
            );
        }
        for (s, n) in [(&before, 200), (&after, 100)] {
            ro.snapshot = Some(s);
            assert_eq!(
                scan(db, &ro).len(),
                n,
                "{stage}: at snapshot {}",
                s.sequence()
            );
        }
    };
    check(&db, "memtable over table");
    db.flush().unwrap();
    check(&db, "both flushed");
    db.compact_range(None, None).unwrap();
    check(&db, "compacted with snapshots");
    drop((before, after));
    db.compact_range(None, None).unwrap();
    let ro = ReadOptions::new();
    assert_eq!(scan(&db, &ro).len(), 102);
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(scan(&db, &ro).len(), 102);
    assert_eq!(get(&db, &key(100), &ro), None);
}

#[test]
fn a_range_deletion_survives_wal_replay_and_recovery_flush() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..100 {
        db.put(&key(i), b"v").unwrap();
    }
    db.flush().unwrap();
    let mut b = WriteBatch::new();
    b.delete_range(&key(10), &key(20));
    b.put(&key(15), b"again");
    db.write(b, &WriteOptions::default()).unwrap();
    drop(db); // not flushed: the WAL holds the tombstone
    let db = Db::open(dir.path(), opts()).unwrap();
    let ro = ReadOptions::new();
    assert_eq!(get(&db, &key(12), &ro), None);
    assert_eq!(get(&db, &key(15), &ro).as_deref(), Some(&b"again"[..]));
    assert_eq!(scan(&db, &ro).len(), 91);
}

#[test]
fn bad_ranges_are_refused_and_empty_ones_delete_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put(b"b", b"1").unwrap();
    assert!(matches!(
        db.delete_range(b"c", b"a"),
        Err(Error::InvalidArgument(_))
    ));
    let mut batch = WriteBatch::new();
    batch.put(b"x", b"1");
    batch.delete_range(b"z", b"y");
    assert!(matches!(
        db.write(batch, &WriteOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    assert!(db.get(b"x").unwrap().is_none(), "the batch failed whole");
    db.delete_range(b"b", b"b").unwrap();
    assert!(db.get(b"b").unwrap().is_some());
    db.flush().unwrap();
    assert!(db.get(b"b").unwrap().is_some());
}

#[test]
fn families_have_their_own_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let cf = db.create_cf("other", CfOptions::default()).unwrap();
    for i in 0..10 {
        db.put(&key(i), b"d").unwrap();
        db.put_cf(&cf, &key(i), b"o").unwrap();
    }
    db.delete_range_cf(&cf, &key(0), &key(5)).unwrap();
    db.flush_cf(&cf).unwrap();
    assert!(db.get(&key(2)).unwrap().is_some());
    assert!(db.get_cf(&cf, &key(2)).unwrap().is_none());
    assert!(db.get_cf(&cf, &key(7)).unwrap().is_some());
}

/// Write a lot, delete 90% by one range, and the space comes back by
/// automatic compaction alone.
#[test]
fn space_comes_back_after_a_range_deletion() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let value = vec![7u8; 400];
    for i in 0..20_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let peak = num(&db, "shale.total-sst-files-size");
    db.delete_range(&key(1000), &key(19_000)).unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let after = num(&db, "shale.total-sst-files-size");
    let ro = ReadOptions::new();
    assert_eq!(scan(&db, &ro).len(), 2000);
    println!(
        "range delete: {after} bytes left of {peak} ({:.3})",
        after as f64 / peak as f64
    );
    assert!(
        after * 100 <= peak * 15,
        "{after} bytes after deleting 90% of {peak}"
    );
}

/// Point tombstones over half the keys: files that are mostly tombstones
/// are compacted on their own until the tombstones meet what they delete
/// and vanish, though no level is over its target.
#[test]
fn tombstone_dense_files_are_compacted_away() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = opts();
        Options {
            cf: CfOptions {
                // Level targets far above the data: only the tombstone trigger
                // can move the deletes down.
                max_bytes_for_level_base: 256 << 20,
                level_compaction_dynamic_level_bytes: false,
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    let value = vec![7u8; 200];
    for i in 0..20_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let full = num(&db, "shale.total-sst-files-size");
    for i in 5_000..15_000 {
        db.delete(&key(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let after = num(&db, "shale.total-sst-files-size");
    let ro = ReadOptions::new();
    assert_eq!(scan(&db, &ro).len(), 10_000);
    assert!(after * 100 <= full * 60, "{after} bytes left of {full}");
}

/// `reclaim` removes every byte no read can return (overwritten and
/// deleted versions, point and range tombstones) from the range, reports
/// its steps and the bytes freed, and keeps what reads return.
#[test]
fn reclaim_frees_what_no_read_can_return() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let value = vec![9u8; 300];
    for round in 0..3 {
        for i in 0..3000 {
            db.put(&key(i), &value).unwrap();
        }
        db.flush().unwrap();
        if round == 0 {
            db.compact_range(None, None).unwrap();
        }
    }
    for i in 0..500 {
        db.delete(&key(i)).unwrap();
    }
    db.delete_range(&key(1000), &key(2000)).unwrap();
    db.flush().unwrap();
    let before = num(&db, "shale.total-sst-files-size");
    let estimate = db.property("shale.estimate-reclaimable-bytes").unwrap();
    let mut steps = Vec::new();
    let freed = db
        .reclaim_cf(&db.default_cf(), None, None, |p| steps.push(*p))
        .unwrap();
    let after = num(&db, "shale.total-sst-files-size");
    assert!(!steps.is_empty());
    assert_eq!(steps.last().unwrap().bytes_in_range, after);
    assert_eq!(freed, before - after, "estimate was {estimate}");
    // One version of 1500 live keys is left.
    let ro = ReadOptions::new();
    assert_eq!(scan(&db, &ro).len(), 1500);
    assert!(
        after < 1500 * 316 * 11 / 10,
        "{after} of {before}: about one version of 1500 keys"
    );
    let left = db.property("shale.estimate-reclaimable-bytes").unwrap();
    assert!(left.starts_with("0 "), "{left}");
    // Nothing more to gain: a second pass frees nothing.
    assert_eq!(db.reclaim(Some(&key(0)), Some(&key(3000))).unwrap(), 0);
}
