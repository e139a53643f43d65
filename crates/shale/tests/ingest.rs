//! Bulk load (issue 39): `SstFileWriter` writes external table files and
//! `Db::ingest_external_file` links them into the LSM, with RocksDB's
//! placement, global sequence numbers and atomicity, checked against a
//! model where it matters.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::fs::{FileSystem, MemFileSystem};
use shale::{
    CfOptions, CompactionStyle, Db, Error, IngestOptions, Options, ReadOptions, SstFileWriter,
    StringAppendOperator,
};

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// Writes `path` with puts of `keys` (sorted) to value `v{i}-{tag}`.
fn write_sst(path: &Path, keys: impl IntoIterator<Item = u32>, tag: &str) -> PathBuf {
    let mut w = SstFileWriter::new(&Options::default());
    w.open(path).unwrap();
    for i in keys {
        w.put(&k(i), format!("v{i}-{tag}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

#[test]
fn writer_rejects_keys_out_of_order_and_duplicates() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SstFileWriter::new(&Options::default());
    w.open(d.path().join("a.sst")).unwrap();
    w.put(b"b", b"1").unwrap();
    assert!(matches!(w.put(b"a", b"2"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.put(b"b", b"2"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.delete(b"b"), Err(Error::InvalidArgument(_))));
    // Range deletions come in any order.
    w.delete_range(b"x", b"z").unwrap();
    w.delete_range(b"a", b"c").unwrap();
    assert!(matches!(
        w.delete_range(b"c", b"a"),
        Err(Error::InvalidArgument(_))
    ));
    w.merge(b"c", b"m").unwrap();
    let info = w.finish().unwrap();
    assert_eq!(info.smallest_key, b"b");
    assert_eq!(info.largest_key, b"c");
    assert_eq!(info.smallest_range_del_key, b"a");
    assert_eq!(info.largest_range_del_key, b"z");
    assert_eq!(info.num_entries, 2);
    assert_eq!(info.num_range_del_entries, 2);
    assert_eq!(
        info.file_size,
        std::fs::metadata(&info.file_path).unwrap().len()
    );
    // An empty file is refused; so is finish without open.
    w.open(d.path().join("b.sst")).unwrap();
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    assert!(!d.path().join("b.sst").exists());
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
}

#[test]
fn written_files_read_back_with_the_sst_reader() {
    let d = tempfile::tempdir().unwrap();
    let p = write_sst(&d.path().join("x.sst"), 0..1000, "a");
    let r = shale::tools::SstReader::open(&p).unwrap();
    assert!(r.verify().unwrap().is_empty());
    let props = r.properties();
    assert_eq!(props.external_version, 1);
    assert_eq!(props.format_version, 3);
    assert_eq!(props.num_entries, 1000);
    assert_eq!((props.smallest_seqno, props.largest_seqno), (0, 0));
    let got: Vec<(Vec<u8>, Vec<u8>)> = r
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.key.user_key, e.value)
        })
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = (0..1000)
        .map(|i| (k(i), format!("v{i}-a").into_bytes()))
        .collect();
    assert_eq!(got, want);
}

// ---- ingestion ----

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn db_opts() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
            ..Default::default()
        },
        ..Options::default()
    }
}

fn contents(db: &Db, ro: &ReadOptions<'_>) -> Model {
    let mut it = db.iter(ro);
    let mut m = Model::new();
    it.seek_to_first();
    while it.valid() {
        m.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    m
}

fn sst_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sst"))
        .collect()
}

fn files_at(db: &Db, level: usize) -> usize {
    db.property(&format!("shale.num-files-at-level{level}"))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn ingest_into_an_empty_db_lands_in_the_bottom_level_at_sequence_zero() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let f = write_sst(&src.path().join("a.sst"), 0..100, "a");
    db.ingest_external_file(std::slice::from_ref(&f), &IngestOptions::default())
        .unwrap();
    assert!(f.exists(), "copied, not moved");
    assert_eq!(files_at(&db, 6), 1);
    assert_eq!(files_at(&db, 0), 0);
    let want: Model = (0..100)
        .map(|i| (k(i), format!("v{i}-a").into_bytes()))
        .collect();
    assert_eq!(contents(&db, &ReadOptions::default()), want);
    assert_eq!(db.get(&k(7)).unwrap().unwrap().to_vec(), b"v7-a".to_vec());
    // Reopen: the file is in the MANIFEST.
    db.close().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), want);
}

#[test]
fn ingest_over_memtable_data_flushes_and_newer_wins_like_a_model() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let mut model = Model::new();
    // Older data: a table at the bottom, more in L0 and in the memtable.
    for i in (0..300).step_by(2) {
        db.put(&k(i), b"old").unwrap();
        model.insert(k(i), b"old".to_vec());
    }
    db.compact_range(None, None).unwrap();
    for i in (0..300).step_by(3) {
        db.put(&k(i), b"mem").unwrap();
        model.insert(k(i), b"mem".to_vec());
    }
    let before = db.snapshot();
    let at_snapshot = model.clone();
    let f = write_sst(&src.path().join("a.sst"), (100..200).step_by(5), "ing");
    db.ingest_external_file(&[f], &IngestOptions::default())
        .unwrap();
    for i in (100..200).step_by(5) {
        model.insert(k(i), format!("v{i}-ing").into_bytes());
    }
    // The memtable was flushed first; the file went to L0 above it.
    assert_eq!(
        db.property("shale.num-entries-active-mem-table").as_deref(),
        Some("0")
    );
    assert!(files_at(&db, 0) >= 2);
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    let ro = ReadOptions {
        snapshot: Some(&before),
        ..ReadOptions::default()
    };
    assert_eq!(contents(&db, &ro), at_snapshot);
    assert_eq!(
        db.get_opt(&k(105), &ro).unwrap().map(|v| v.to_vec()),
        at_snapshot.get(&k(105)).cloned()
    );
    // Writes after the ingestion win over it.
    db.put(&k(105), b"after").unwrap();
    model.insert(k(105), b"after".to_vec());
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    // Compaction and reopen keep the order.
    drop(before);
    db.compact_range(None, None).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    db.close().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    for (key, v) in &model {
        assert_eq!(db.get(key).unwrap().map(|x| x.to_vec()).as_ref(), Some(v));
    }
}

#[test]
fn a_global_seqno_survives_reopen_without_compaction() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    db.put(&k(1), b"old").unwrap();
    db.flush().unwrap();
    let f = write_sst(&src.path().join("a.sst"), [1, 2], "new");
    db.ingest_external_file(&[f], &IngestOptions::default())
        .unwrap();
    db.close().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    assert_eq!(db.get(&k(1)).unwrap().unwrap().to_vec(), b"v1-new");
    // A write after reopen is numbered past the ingested file.
    db.put(&k(2), b"later").unwrap();
    assert_eq!(db.get(&k(2)).unwrap().unwrap().to_vec(), b"later");
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(&k(1)).unwrap().unwrap().to_vec(), b"v1-new");
    assert_eq!(db.get(&k(2)).unwrap().unwrap().to_vec(), b"later");
}

#[test]
fn snapshots_taken_before_an_ingestion_do_not_see_it() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    db.put(b"a", b"1").unwrap();
    let snap = db.snapshot();
    // No overlap with anything: the snapshot alone asks for a global
    // sequence number (snapshot_consistency).
    let f = write_sst(&src.path().join("a.sst"), 0..10, "x");
    db.ingest_external_file(&[f], &IngestOptions::default())
        .unwrap();
    let ro = ReadOptions {
        snapshot: Some(&snap),
        ..ReadOptions::default()
    };
    assert!(db.get_opt(&k(3), &ro).unwrap().is_none());
    assert_eq!(contents(&db, &ro).len(), 1);
    assert_eq!(contents(&db, &ReadOptions::default()).len(), 11);
    // Without snapshot consistency the snapshot sees sequence-0 data.
    let f = write_sst(&src.path().join("b.sst"), 20..30, "y");
    let o = IngestOptions {
        snapshot_consistency: false,
        ..IngestOptions::default()
    };
    db.ingest_external_file(&[f], &o).unwrap();
    assert!(db.get_opt(&k(25), &ro).unwrap().is_some());
}

#[test]
fn iterators_with_bounds_walk_ingested_data_both_ways() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let mut model = Model::new();
    for i in (0..1000).step_by(3) {
        db.put(&k(i), b"old").unwrap();
        model.insert(k(i), b"old".to_vec());
    }
    db.flush().unwrap();
    let f1 = write_sst(&src.path().join("1.sst"), (0..500).step_by(2), "a");
    let f2 = write_sst(&src.path().join("2.sst"), (500..1000).step_by(7), "b");
    db.ingest_external_file(&[f2, f1], &IngestOptions::default())
        .unwrap();
    for i in (0..500).step_by(2) {
        model.insert(k(i), format!("v{i}-a").into_bytes());
    }
    for i in (500..1000).step_by(7) {
        model.insert(k(i), format!("v{i}-b").into_bytes());
    }
    for (lo, hi) in [(0, 1000), (123, 777), (499, 501), (600, 601)] {
        let ro = ReadOptions {
            iterate_lower_bound: Some(k(lo)),
            iterate_upper_bound: Some(k(hi)),
            ..ReadOptions::default()
        };
        let want: Vec<(Vec<u8>, Vec<u8>)> = model
            .range(k(lo)..k(hi))
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect();
        let mut it = db.iter(&ro);
        let mut fwd = Vec::new();
        it.seek_to_first();
        while it.valid() {
            fwd.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        assert_eq!(fwd, want, "forward {lo}..{hi}");
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() {
            back.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        back.reverse();
        assert_eq!(back, want, "backward {lo}..{hi}");
        // Seeks into the middle.
        let mid = k((lo + hi) / 2);
        it.seek(&mid);
        assert_eq!(
            it.valid().then(|| it.key().to_vec()),
            model
                .range(mid.clone()..k(hi))
                .next()
                .map(|(a, _)| a.clone())
        );
        it.seek_for_prev(&mid);
        assert_eq!(
            it.valid().then(|| it.key().to_vec()),
            model
                .range(k(lo)..=mid.clone())
                .next_back()
                .map(|(a, _)| a.clone())
        );
    }
}

#[test]
fn merges_deletes_and_range_deletions_in_ingested_files() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    for i in 0..100 {
        db.put(&k(i), b"base").unwrap();
    }
    db.flush().unwrap();
    let p = src.path().join("m.sst");
    let mut w = SstFileWriter::new(&db_opts());
    w.open(&p).unwrap();
    w.delete_range(&k(10), &k(20)).unwrap();
    w.merge(&k(5), b"m5").unwrap();
    w.delete(&k(6)).unwrap();
    // A key of the file inside its own range deletion stays: the
    // tombstone deletes only older data.
    w.put(&k(15), b"kept").unwrap();
    w.merge(&k(200), b"alone").unwrap();
    w.delete_range(&k(50), &k(60)).unwrap();
    w.finish().unwrap();
    db.ingest_external_file(&[p], &IngestOptions::default())
        .unwrap();
    let mut model = Model::new();
    for i in 0..100 {
        model.insert(k(i), b"base".to_vec());
    }
    for i in (10..20).chain(50..60) {
        model.remove(&k(i));
    }
    model.insert(k(5), b"base,m5".to_vec());
    model.remove(&k(6));
    model.insert(k(15), b"kept".to_vec());
    model.insert(k(200), b"alone".to_vec());
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    assert!(db.get(&k(12)).unwrap().is_none());
    assert_eq!(db.get(&k(5)).unwrap().unwrap().to_vec(), b"base,m5");
    db.compact_range(None, None).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    // Writes after the file are not covered by its tombstones.
    db.put(&k(55), b"new").unwrap();
    assert_eq!(db.get(&k(55)).unwrap().unwrap().to_vec(), b"new");
}

#[test]
fn overlapping_files_in_one_ingestion_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let a = write_sst(&src.path().join("a.sst"), 0..10, "a");
    let b = write_sst(&src.path().join("b.sst"), 9..20, "b");
    let before = sst_files(d.path());
    let e = db
        .ingest_external_file(&[a, b], &IngestOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert_eq!(sst_files(d.path()), before);
    assert!(db.get(&k(1)).unwrap().is_none());
}

/// A good file and a damaged one in one ingestion: Corruption naming the
/// damaged file, nothing linked in.
fn refused(damage: impl Fn(&Path), verify: bool) {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    db.put(b"x", b"1").unwrap();
    db.flush().unwrap();
    let good = write_sst(&src.path().join("good.sst"), 0..100, "g");
    let bad = write_sst(&src.path().join("bad.sst"), 200..3000, "b");
    damage(&bad);
    let before = sst_files(d.path());
    let o = IngestOptions {
        verify_checksums_before_ingest: verify,
        ..IngestOptions::default()
    };
    let e = db.ingest_external_file(&[good, bad], &o).unwrap_err();
    match &e {
        Error::Corruption { file, .. } => assert!(file.contains("bad.sst"), "{e}"),
        _ => panic!("not corruption: {e}"),
    }
    assert_eq!(sst_files(d.path()), before);
    assert!(db.get(&k(1)).unwrap().is_none());
    assert!(db.get(&k(300)).unwrap().is_none());
    db.close().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()).len(), 1);
}

#[test]
fn a_truncated_file_is_refused_naming_it() {
    refused(
        |p| {
            let len = std::fs::metadata(p).unwrap().len();
            let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            f.set_len(len - 100).unwrap();
        },
        false,
    );
}

#[test]
fn a_flipped_byte_is_refused_naming_the_file() {
    let flip = |at: fn(u64) -> u64| {
        move |p: &Path| {
            let mut b = std::fs::read(p).unwrap();
            let i = at(b.len() as u64) as usize;
            b[i] ^= 0x40;
            std::fs::write(p, b).unwrap();
        }
    };
    // In a data block: found by verify_checksums_before_ingest.
    refused(flip(|_| 100), true);
    // In the meta blocks at the end (found at open either way).
    refused(flip(|len| len - 70), false);
}

#[test]
fn files_written_by_something_else_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let junk = src.path().join("junk.sst");
    std::fs::write(&junk, vec![7u8; 4096]).unwrap();
    let e = db
        .ingest_external_file(&[junk], &IngestOptions::default())
        .unwrap_err();
    assert!(
        matches!(&e, Error::Corruption { file, .. } if file.contains("junk.sst")),
        "{e}"
    );
    // A table of a DB (not external) is refused too.
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    let own = sst_files(d.path()).into_iter().next().unwrap();
    std::fs::copy(d.path().join(&own), src.path().join("own.sst")).unwrap();
    let e = db
        .ingest_external_file(&[src.path().join("own.sst")], &IngestOptions::default())
        .unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

#[test]
fn move_files_renames_the_files_in() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let f = write_sst(&src.path().join("a.sst"), 0..50, "m");
    let o = IngestOptions {
        move_files: true,
        ..IngestOptions::default()
    };
    db.ingest_external_file(std::slice::from_ref(&f), &o)
        .unwrap();
    assert!(!f.exists());
    assert_eq!(db.get(&k(49)).unwrap().unwrap().to_vec(), b"v49-m");
    // A failed move puts the files back.
    db.put(&k(100), b"x").unwrap();
    let g = write_sst(&src.path().join("b.sst"), 100..110, "m");
    let o = IngestOptions {
        move_files: true,
        allow_blocking_flush: false,
        ..IngestOptions::default()
    };
    assert!(db
        .ingest_external_file(std::slice::from_ref(&g), &o)
        .is_err());
    assert!(g.exists());
}

#[test]
fn options_refuse_what_they_forbid() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    db.put(&k(5), b"x").unwrap();
    let f = write_sst(&src.path().join("a.sst"), 0..10, "a");
    let bad = |o: IngestOptions| {
        let e = db
            .ingest_external_file(std::slice::from_ref(&f), &o)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    };
    bad(IngestOptions {
        allow_blocking_flush: false,
        ..IngestOptions::default()
    });
    // The DB was not opened with allow_ingest_behind.
    bad(IngestOptions {
        ingest_behind: true,
        ..IngestOptions::default()
    });
    db.flush().unwrap();
    bad(IngestOptions {
        allow_global_seqno: false,
        ..IngestOptions::default()
    });
    bad(IngestOptions {
        fail_if_not_bottommost_level: true,
        ..IngestOptions::default()
    });
    assert_eq!(contents(&db, &ReadOptions::default()).len(), 1);
    // Not overlapping: the bottom level, allowed by all of them.
    let g = write_sst(&src.path().join("b.sst"), 100..110, "b");
    let o = IngestOptions {
        allow_blocking_flush: false,
        allow_global_seqno: false,
        fail_if_not_bottommost_level: true,
        ..IngestOptions::default()
    };
    db.ingest_external_file(&[g], &o).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()).len(), 11);
}

#[test]
fn several_families_ingest_atomically() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let mut o = db_opts();
    o.create_missing_column_families = true;
    o.column_families = vec![("users".into(), CfOptions::default())];
    let db = Db::open(d.path(), o.clone()).unwrap();
    let users = db.cf("users").unwrap();
    db.put_cf(&users, &k(3), b"old").unwrap();
    let a = write_sst(&src.path().join("a.sst"), 0..10, "d");
    let b = write_sst(&src.path().join("b.sst"), 0..10, "u");
    let def = db.default_cf();
    db.ingest_external_files(
        &[(&def, &[a][..]), (&users, &[b.clone()][..])],
        &IngestOptions::default(),
    )
    .unwrap();
    assert_eq!(db.get(&k(3)).unwrap().unwrap().to_vec(), b"v3-d");
    assert_eq!(db.get_cf(&users, &k(3)).unwrap().unwrap().to_vec(), b"v3-u");
    // One bad family's file: neither family gets anything.
    let c = write_sst(&src.path().join("c.sst"), 20..30, "d");
    let e = write_sst(&src.path().join("e.sst"), 20..30, "u");
    std::fs::write(&e, b"garbage").unwrap();
    assert!(db
        .ingest_external_files(
            &[(&def, &[c][..]), (&users, &[e][..])],
            &IngestOptions::default()
        )
        .is_err());
    assert!(db.get(&k(25)).unwrap().is_none());
    db.close().unwrap();
    let db = Db::open(d.path(), o).unwrap();
    let users = db.cf("users").unwrap();
    assert_eq!(db.get_cf(&users, &k(3)).unwrap().unwrap().to_vec(), b"v3-u");
    assert_eq!(db.get(&k(9)).unwrap().unwrap().to_vec(), b"v9-d");
}

fn styled(style: CompactionStyle) {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let mut o = db_opts();
    o.cf.compaction_style = style;
    let db = Db::open(d.path(), o.clone()).unwrap();
    let mut model = Model::new();
    for round in 0..6u32 {
        for i in (round * 7..400).step_by(11) {
            db.put(&k(i), format!("w{round}").as_bytes()).unwrap();
            model.insert(k(i), format!("w{round}").into_bytes());
        }
        if round % 2 == 0 {
            db.flush().unwrap();
        }
        let lo = round * 50;
        let f = write_sst(
            &src.path().join(format!("{round}.sst")),
            (lo..lo + 100).step_by(3),
            &format!("r{round}"),
        );
        db.ingest_external_file(&[f], &IngestOptions::default())
            .unwrap();
        for i in (lo..lo + 100).step_by(3) {
            model.insert(k(i), format!("v{i}-r{round}").into_bytes());
        }
        assert_eq!(
            contents(&db, &ReadOptions::default()),
            model,
            "round {round}"
        );
    }
    if style == CompactionStyle::Fifo {
        assert_eq!(
            (1..7).map(|l| files_at(&db, l)).sum::<usize>(),
            0,
            "FIFO keeps every table in L0"
        );
    }
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    db.close().unwrap();
    let db = Db::open(d.path(), o).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
}

#[test]
fn ingestion_under_universal_compaction() {
    styled(CompactionStyle::Universal);
}

#[test]
fn ingestion_under_fifo_compaction() {
    styled(CompactionStyle::Fifo);
}

#[test]
fn ingestion_under_leveled_compaction() {
    styled(CompactionStyle::Level);
}

/// Power loss at every IO call of an ingestion of three files (with a
/// memtable flush first), into one family or two (one MANIFEST atomic
/// group), copied or moved: each image opens with all three files' keys or
/// none, and the ingested entries newer than the older ones.
fn crash_mid_ingestion(two_families: bool, move_files: bool) {
    let fs = MemFileSystem::new();
    let o = Options {
        fs: Arc::new(fs.clone()),
        create_missing_column_families: true,
        column_families: vec![("users".into(), CfOptions::default())],
        ..db_opts()
    };
    let db = Db::open("/db", o.clone()).unwrap();
    let users = db.cf("users").unwrap();
    // Keys 0..20 live in `default`, 20..30 in `users` (or `default`).
    let fam = |i: u32| {
        if two_families && i >= 20 {
            users.clone()
        } else {
            db.default_cf()
        }
    };
    for i in 0..30 {
        db.put_cf(&fam(i), &k(i), b"old").unwrap();
    }
    db.flush_wal(true).unwrap();
    fs.create_dir_all(Path::new("/src")).unwrap();
    let mut files = Vec::new();
    for (n, r) in [(0u32, 0..10u32), (1, 10..20), (2, 20..30)] {
        let p = PathBuf::from(format!("/src/{n}.sst"));
        let mut w = SstFileWriter::new(&o);
        w.open(&p).unwrap();
        for i in r {
            w.put(&k(i), b"new").unwrap();
        }
        w.finish().unwrap();
        files.push(p);
    }
    let start = fs.op_count();
    fs.capture_at(start..=start + 10_000);
    let io = IngestOptions {
        move_files,
        ..IngestOptions::default()
    };
    let def = db.default_cf();
    if two_families {
        db.ingest_external_files(&[(&def, &files[..2]), (&users, &files[2..])], &io)
            .unwrap();
    } else {
        db.ingest_external_file(&files, &io).unwrap();
    }
    let end = fs.op_count();
    drop((users, def));
    drop(db);
    let captures = fs.take_captures();
    let (mut all, mut none) = (0, 0);
    for (at, image) in captures {
        if at > end {
            continue;
        }
        let crashed = image.crash(0.0, at);
        let db = Db::open(
            "/db",
            Options {
                fs: Arc::new(crashed.clone()),
                ..o.clone()
            },
        )
        .unwrap_or_else(|e| panic!("image after call {at}: {e}"));
        let users = db.cf("users").unwrap();
        let vals: BTreeSet<Vec<u8>> = (0..30)
            .map(|i| {
                let cf = if two_families && i >= 20 {
                    users.clone()
                } else {
                    db.default_cf()
                };
                db.get_cf(&cf, &k(i)).unwrap().unwrap().to_vec()
            })
            .collect();
        assert_eq!(vals.len(), 1, "image after call {at}: {vals:?}");
        if vals.contains(b"new".as_slice()) {
            all += 1;
        } else {
            none += 1;
        }
    }
    println!(
        "{} IO calls: {all} images with every file, {none} with none",
        end - start
    );
    assert!(all > 0 && none > 0, "all {all}, none {none}");
}

#[test]
fn a_crash_mid_ingestion_leaves_all_or_none() {
    crash_mid_ingestion(false, false);
}

#[test]
fn a_crash_mid_ingestion_into_two_families_leaves_all_or_none() {
    crash_mid_ingestion(true, false);
}

#[test]
fn a_crash_mid_ingestion_with_move_files_leaves_all_or_none() {
    crash_mid_ingestion(false, true);
}

/// Bytes this process handed to `write(2)` so far (`wchar` of
/// /proc/self/io; 0 where there is none).
fn written_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("wchar: ")
                    .and_then(|n| n.trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

/// Bytes the DB wrote by purpose (its own accounting: memory-mapped WAL
/// appends included), in MB.
fn accounted(db: &Db) -> String {
    let io = db.stats().io;
    let total: u64 = io.purposes.iter().map(|p| p.write_bytes).sum();
    let parts: Vec<String> = io
        .purposes
        .iter()
        .filter(|p| p.write_bytes > 0)
        .map(|p| format!("{} {} MB", p.purpose, p.write_bytes >> 20))
        .collect();
    format!("{} MB ({})", total >> 20, parts.join(", "))
}

/// The measurement of issue 39's bulk load: `SHALE_BULK_KEYS` (default
/// 1M) sorted 16-byte keys with 100-byte values, written with
/// `SstFileWriter` and ingested (copied, then moved), against the same
/// keys by `put` into a fresh DB (then flushed, compactions waited for).
/// Time and bytes handed to the OS. Run:
/// `cargo test --release -p shale --test ingest -- --ignored --nocapture bulk_load`.
#[test]
#[ignore = "measurement"]
fn bulk_load_measurement() {
    let n: u64 = std::env::var("SHALE_BULK_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let key = |i: u64| format!("{i:016}");
    let value = |i: u64| {
        let mut v = format!("{i:020}").into_bytes();
        v.resize(100, b'v');
        v
    };
    let raw = n * 116;
    println!("{n} keys, {} MB of keys and values", raw >> 20);
    for move_files in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let src = d.path().join("load.sst");
        let (t0, w0) = (std::time::Instant::now(), written_bytes());
        let mut w = SstFileWriter::new(&Options::default());
        w.open(&src).unwrap();
        for i in 0..n {
            w.put(key(i).as_bytes(), &value(i)).unwrap();
        }
        let info = w.finish().unwrap();
        let (t1, w1) = (std::time::Instant::now(), written_bytes());
        let db = Db::open(
            d.path().join("db"),
            Options {
                create_if_missing: true,
                ..Options::default()
            },
        )
        .unwrap();
        let (t2, w2) = (std::time::Instant::now(), written_bytes());
        let o = IngestOptions {
            move_files,
            ..IngestOptions::default()
        };
        db.ingest_external_file(&[src], &o).unwrap();
        let (t3, w3) = (std::time::Instant::now(), written_bytes());
        println!("  DB-accounted writes: {}", accounted(&db));
        assert_eq!(
            db.get(key(n / 2).as_bytes()).unwrap().unwrap().to_vec(),
            value(n / 2)
        );
        println!(
            "SstFileWriter + ingest (move_files {move_files}): write {:.2} s {} MB, ingest {:.3} s {} MB; \
             total {:.2} s, {} MB written (write-amp {:.2}); file {} MB",
            (t1 - t0).as_secs_f64(),
            (w1 - w0) >> 20,
            (t3 - t2).as_secs_f64(),
            (w3 - w2) >> 20,
            (t1 - t0 + (t3 - t2)).as_secs_f64(),
            ((w1 - w0) + (w3 - w2)) >> 20,
            ((w1 - w0) + (w3 - w2)) as f64 / raw as f64,
            info.file_size >> 20
        );
    }
    for random in [false, true] {
        put_load(n, random, &key, &value, raw);
    }
}

/// The put side of `bulk_load_measurement`: the keys in order, or in a
/// random order (a full-period LCG over `n`: fillrandom without repeats).
fn put_load(
    n: u64,
    random: bool,
    key: &dyn Fn(u64) -> String,
    value: &dyn Fn(u64) -> Vec<u8>,
    raw: u64,
) {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(
        d.path(),
        Options {
            create_if_missing: true,
            ..Options::default()
        },
    )
    .unwrap();
    let m = n.next_power_of_two();
    let (t0, w0) = (std::time::Instant::now(), written_bytes());
    let mut x = 0u64;
    for i in 0..n {
        let j = if random {
            // x -> 5x + 1 mod m visits every value below m once.
            loop {
                x = (x * 5 + 1) % m;
                if x < n {
                    break x;
                }
            }
        } else {
            i
        };
        db.put(key(j).as_bytes(), &value(j)).unwrap();
    }
    let t1 = std::time::Instant::now();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let (t2, w2) = (std::time::Instant::now(), written_bytes());
    println!("  DB-accounted writes: {}", accounted(&db));
    println!(
        "put ({}): {:.2} s to acknowledge, {:.2} s with flush and compactions; {} MB written (write-amp {:.2})",
        if random { "random order" } else { "sorted" },
        (t1 - t0).as_secs_f64(),
        (t2 - t0).as_secs_f64(),
        (w2 - w0) >> 20,
        (w2 - w0) as f64 / raw as f64
    );
}

/// Ingestions while a writer puts the same keys: no deadlock (the memtable
/// flush, the stopped writes), and for every key the newest of the file
/// and the puts wins: a put acknowledged before the ingestion started
/// loses to the file, one started after it returned wins.
#[test]
fn ingestion_orders_with_concurrent_writes() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let mut o = db_opts();
    o.cf.write_buffer_size = 64 << 10;
    let db = Db::open(d.path(), o).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // When each put was acknowledged, by value.
    let acks = Arc::new(std::sync::Mutex::new(BTreeMap::<Vec<u8>, Instant>::new()));
    let writer = {
        let (db, stop, acks) = (db.clone(), Arc::clone(&stop), Arc::clone(&acks));
        std::thread::spawn(move || {
            // (key, value, started, acknowledged)
            let mut log = Vec::new();
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let i = (n % 50) as u32;
                let v = format!("w{n}");
                let t0 = Instant::now();
                db.put(&k(i), v.as_bytes()).unwrap();
                let at = Instant::now();
                acks.lock().unwrap().insert(v.clone().into_bytes(), at);
                log.push((i, v, t0, at));
                n += 1;
            }
            log
        })
    };
    let mut windows = Vec::new();
    for round in 0..5u32 {
        std::thread::sleep(std::time::Duration::from_millis(15));
        let f = write_sst(
            &src.path().join(format!("{round}.sst")),
            0..50,
            &format!("i{round}"),
        );
        let t0 = Instant::now();
        db.ingest_external_file(&[f], &IngestOptions::default())
            .unwrap();
        windows.push((round, t0, Instant::now()));
        // Right after: no key shows a put acknowledged before the
        // ingestion started.
        for i in 0..50u32 {
            let got = db.get(&k(i)).unwrap().unwrap().to_vec();
            if got.starts_with(b"w") {
                let acked = acks.lock().unwrap().get(&got).copied();
                assert!(
                    acked.is_none_or(|a| a > t0),
                    "round {round} key {i}: {got:?}, acknowledged before the ingestion, beat it"
                );
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(15));
    stop.store(true, Ordering::Relaxed);
    let log = writer.join().unwrap();
    for i in 0..50u32 {
        let got = db.get(&k(i)).unwrap().unwrap().to_vec();
        // The last event for the key: a put or an ingestion, by time.
        let last_put = log.iter().rfind(|e| e.0 == i);
        let (round, t0, t1) = *windows.last().unwrap();
        match last_put {
            Some((_, v, started, _)) if *started > t1 => {
                assert_eq!(got, v.as_bytes(), "key {i}: a later put lost")
            }
            Some((_, _, _, acked)) if *acked < t0 => {
                assert_eq!(got, format!("v{i}-i{round}").into_bytes(), "key {i}")
            }
            _ => {} // concurrent with the last ingestion: either
        }
    }
    assert!(log.len() > 100, "the writer ran: {}", log.len());
}

/// The writer uses the family's table options: compression (the
/// bottommost level's), bloom filter, block size.
#[test]
fn the_writer_uses_a_familys_table_options() {
    let d = tempfile::tempdir().unwrap();
    let cf = CfOptions {
        compression_per_level: vec![shale::Compression::None, shale::Compression::Lz4],
        bottommost_compression: Some(shale::Compression::Zstd),
        block_size: 1024,
        bloom_bits_per_key: 0,
        ..CfOptions::default()
    };
    let mut w = SstFileWriter::with_cf_options(&cf);
    let p = d.path().join("z.sst");
    w.open(&p).unwrap();
    for i in 0..2000 {
        w.put(&k(i), b"a value that compresses, a value that compresses")
            .unwrap();
    }
    w.finish().unwrap();
    let r = shale::tools::SstReader::open(&p).unwrap();
    let props = r.properties();
    assert_eq!(props.compression, "ZSTD");
    assert_eq!(props.filter_size, 0);
    assert!(props.num_data_blocks > 20, "{}", props.num_data_blocks);
    assert!(r.verify().unwrap().is_empty());
    // Ingested, it reads back.
    let db = Db::open(d.path().join("db"), db_opts()).unwrap();
    db.ingest_external_file(&[p], &IngestOptions::default())
        .unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()).len(), 2000);
}

fn behind_opts(style: CompactionStyle) -> Options {
    let mut o = db_opts();
    o.allow_ingest_behind = true;
    o.num_levels = 5;
    o.cf.compaction_style = style;
    o.cf.write_buffer_size = 64 << 10;
    o.cf.level0_file_num_compaction_trigger = 2;
    o
}

/// Levels holding tables of the default family, from `live_files`.
fn table_levels(db: &Db) -> Vec<(u64, usize)> {
    db.live_files()
        .unwrap()
        .files
        .iter()
        .filter_map(|f| Some((f.number, f.level?)))
        .collect()
}

fn ingest_behind(db: &Db, files: &[PathBuf]) -> shale::Result<()> {
    let o = IngestOptions {
        ingest_behind: true,
        ..IngestOptions::default()
    };
    db.ingest_external_file(files, &o)
}

/// Values ingested behind lie beneath every version already in the DB: a
/// put (even compacted to the lowest level compactions use), a tombstone
/// (kept by compactions though nothing lay below it then), a range
/// deletion, and merge operands (applied to the ingested base). Compactions
/// never write or read the reserved last level, before or after, and a
/// reopen keeps it all.
fn behind_shadowing(style: CompactionStyle) {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let o = behind_opts(style);
    let last = o.num_levels - 1;
    let db = Db::open(d.path(), o.clone()).unwrap();
    let mut model = Model::new();
    for round in 0..4u32 {
        for i in (round..300).step_by(4) {
            db.put(&k(i), format!("w{round}").as_bytes()).unwrap();
            model.insert(k(i), format!("w{round}").into_bytes());
        }
        db.flush().unwrap();
    }
    for i in (0..300).step_by(10) {
        db.delete(&k(i)).unwrap();
        model.remove(&k(i));
    }
    db.delete_range(&k(300), &k(320)).unwrap();
    for i in (400..410).step_by(2) {
        db.merge(&k(i), b"m").unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    assert!(
        table_levels(&db).iter().all(|&(_, l)| l < last),
        "compactions wrote the reserved level: {:?}",
        table_levels(&db)
    );
    // Two files: one under every kind of existing key, one past them.
    let a = write_sst(&src.path().join("a.sst"), 0..420, "behind");
    let b = write_sst(&src.path().join("b.sst"), 500..520, "behind");
    ingest_behind(&db, &[b, a]).unwrap();
    for i in 0..420 {
        let deleted = i % 10 == 0 && i < 300;
        if (300..320).contains(&i) || deleted {
            continue;
        }
        let behind = format!("v{i}-behind").into_bytes();
        if (400..410).contains(&i) && i % 2 == 0 {
            model.insert(k(i), [behind, b",m".to_vec()].concat());
        } else {
            model.entry(k(i)).or_insert(behind);
        }
    }
    for i in 500..520 {
        model.insert(k(i), format!("v{i}-behind").into_bytes());
    }
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    let behind: Vec<(u64, usize)> = table_levels(&db)
        .into_iter()
        .filter(|&(_, l)| l == last)
        .collect();
    assert_eq!(behind.len(), 2, "{:?}", table_levels(&db));
    // More writes and compactions leave the ingested files alone.
    for i in (0..600).step_by(7) {
        db.put(&k(i), b"late").unwrap();
        model.insert(k(i), b"late".to_vec());
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    let now: Vec<(u64, usize)> = table_levels(&db)
        .into_iter()
        .filter(|&(_, l)| l == last)
        .collect();
    assert_eq!(now, behind, "the last level's files changed");
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    db.close().unwrap();
    let db = Db::open(d.path(), o).unwrap();
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    // A reversed walk agrees.
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_last();
    let mut back = Vec::new();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    back.reverse();
    assert_eq!(back, model.into_iter().collect::<Vec<_>>());
}

#[test]
fn ingest_behind_under_leveled_compaction() {
    behind_shadowing(CompactionStyle::Level);
}

#[test]
fn ingest_behind_under_universal_compaction() {
    behind_shadowing(CompactionStyle::Universal);
}

#[test]
fn with_allow_ingest_behind_ordinary_ingestion_stays_above_the_last_level() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let o = behind_opts(CompactionStyle::Level);
    let db = Db::open(d.path(), o.clone()).unwrap();
    let a = write_sst(&src.path().join("a.sst"), 0..10, "a");
    db.ingest_external_file(&[a], &IngestOptions::default())
        .unwrap();
    assert_eq!(table_levels(&db).iter().map(|x| x.1).max(), Some(3));
    // fail_if_not_bottommost_level means the lowest level compactions use.
    let b = write_sst(&src.path().join("b.sst"), 20..30, "b");
    let strict = IngestOptions {
        fail_if_not_bottommost_level: true,
        ..IngestOptions::default()
    };
    db.ingest_external_file(&[b], &strict).unwrap();
    // Over a file ingested behind: above it, newer (a global seqno).
    let c = write_sst(&src.path().join("c.sst"), 40..50, "behind");
    ingest_behind(&db, &[c]).unwrap();
    let e = write_sst(&src.path().join("e.sst"), 45..46, "over");
    db.ingest_external_file(&[e], &IngestOptions::default())
        .unwrap();
    assert_eq!(db.get(&k(45)).unwrap().unwrap().to_vec(), b"v45-over");
    assert_eq!(db.get(&k(44)).unwrap().unwrap().to_vec(), b"v44-behind");
    assert!(table_levels(&db).iter().filter(|x| x.1 == 4).count() == 1);
}

#[test]
fn ingest_behind_refusals() {
    let src = tempfile::tempdir().unwrap();
    let invalid = |r: shale::Result<()>, what: &str| match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{what}: {other:?}"),
    };
    // Options: FIFO (at open and for a new family) and too few levels.
    for (style, levels) in [(CompactionStyle::Fifo, 5), (CompactionStyle::Level, 2)] {
        let d = tempfile::tempdir().unwrap();
        let mut o = behind_opts(style);
        o.num_levels = levels;
        let m = invalid(Db::open(d.path(), o).map(|_| ()), "open");
        assert!(m.contains("allow_ingest_behind"), "{m}");
    }
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), behind_opts(CompactionStyle::Level)).unwrap();
    let fifo = CfOptions {
        compaction_style: CompactionStyle::Fifo,
        ..CfOptions::default()
    };
    invalid(db.create_cf("f", fifo).map(|_| ()), "create_cf");
    // Overlapping each other, then overlapping the last level.
    let a = write_sst(&src.path().join("a.sst"), 0..10, "a");
    let b = write_sst(&src.path().join("b.sst"), 5..15, "b");
    invalid(ingest_behind(&db, &[a.clone(), b.clone()]), "overlap");
    ingest_behind(&db, std::slice::from_ref(&a)).unwrap();
    let m = invalid(ingest_behind(&db, &[b]), "last level");
    assert!(m.contains("last level"), "{m}");
    let n = contents(&db, &ReadOptions::default());
    assert_eq!(n.len(), 10);
    assert_eq!(n.get(&k(5)).unwrap(), b"v5-a");
    // A DB opened without the option refuses it.
    let d2 = tempfile::tempdir().unwrap();
    let plain = Db::open(d2.path(), db_opts()).unwrap();
    let m = invalid(ingest_behind(&plain, &[a]), "no option");
    assert!(m.contains("allow_ingest_behind"), "{m}");
}

/// A DB whose last level holds data, reopened with allow_ingest_behind
/// newly set (RocksDB accepts it): its last-level files stay where they
/// are, untouched by compactions; files ingested behind must not overlap
/// them.
#[test]
fn allow_ingest_behind_newly_set_keeps_the_last_level() {
    let d = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    let mut o = behind_opts(CompactionStyle::Level);
    o.allow_ingest_behind = false;
    let db = Db::open(d.path(), o.clone()).unwrap();
    let mut model = Model::new();
    for i in 0..100 {
        db.put(&k(i), b"old").unwrap();
        model.insert(k(i), b"old".to_vec());
    }
    db.compact_range(None, None).unwrap();
    let bottom: Vec<(u64, usize)> = table_levels(&db);
    assert!(bottom.iter().all(|x| x.1 == 4), "{bottom:?}");
    db.close().unwrap();
    o.allow_ingest_behind = true;
    let db = Db::open(d.path(), o.clone()).unwrap();
    for i in (0..100).step_by(3) {
        db.delete(&k(i)).unwrap();
        model.remove(&k(i));
    }
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    let now: Vec<(u64, usize)> = table_levels(&db).into_iter().filter(|x| x.1 == 4).collect();
    assert_eq!(now, bottom);
    assert_eq!(contents(&db, &ReadOptions::default()), model);
    let over = write_sst(&src.path().join("o.sst"), 50..60, "x");
    assert!(matches!(
        ingest_behind(&db, &[over]),
        Err(Error::InvalidArgument(_))
    ));
    let past = write_sst(&src.path().join("p.sst"), 200..210, "x");
    ingest_behind(&db, &[past]).unwrap();
    for i in 200..210 {
        model.insert(k(i), format!("v{i}-x").into_bytes());
    }
    assert_eq!(contents(&db, &ReadOptions::default()), model);
}
