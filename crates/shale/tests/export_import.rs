//! Export and import of one column family (issue 39): RocksDB's
//! `Checkpoint::ExportColumnFamily` and `DB::CreateColumnFamilyWithImport`
//! as `Db::export_column_family` and `Db::create_column_family_with_import`.
//! Round trips with every kind of entry (tables over several levels, range
//! deletions, merges, blob values), the refusals, and crash atomicity on
//! the crash-simulating file system.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::fs::{FileSystem, MemFileSystem};
use shale::{
    BlobOptions, Cf, CfOptions, Db, Error, ExportMetadata, ImportOptions, Options, ReadOptions,
    StringAppendOperator, EXPORT_METADATA_FILE,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

fn cf_opts(blobs: bool) -> CfOptions {
    CfOptions {
        merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
        write_buffer_size: 64 << 10,
        level0_file_num_compaction_trigger: 16,
        level0_slowdown_writes_trigger: 40,
        level0_stop_writes_trigger: 60,
        blob: BlobOptions {
            enable_blob_files: blobs,
            min_blob_size: 200,
            ..BlobOptions::default()
        },
        ..CfOptions::default()
    }
}

fn db_opts() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

/// Forward and backward walks of `cf`, which must agree.
fn contents(db: &Db, cf: &Cf) -> Model {
    let ro = ReadOptions::default();
    let mut it = db.iter_cf(cf, &ro);
    let mut m = Model::new();
    it.seek_to_first();
    while it.valid() {
        m.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    back.reverse();
    assert_eq!(back, m.clone().into_iter().collect::<Vec<_>>());
    m
}

/// Fills `cf` with tables over several levels: puts (long values go to
/// blob files when enabled), deletes, a range deletion and merges.
fn fill(db: &Db, cf: &Cf) {
    for round in 0..4u32 {
        for i in (round..400).step_by(3) {
            let long = i % 5 == 0;
            let v = if long {
                format!("{i}-{round}-").repeat(40)
            } else {
                format!("v{i}-{round}")
            };
            db.put_cf(cf, &k(i), v.as_bytes()).unwrap();
        }
        for i in (round * 10..400).step_by(37) {
            db.delete_cf(cf, &k(i)).unwrap();
        }
        for i in (0..400).step_by(50) {
            db.merge_cf(cf, &k(i + 1), format!("m{round}").as_bytes())
                .unwrap();
        }
        if round == 1 {
            db.delete_range_cf(cf, &k(100), &k(130)).unwrap();
        }
        db.flush_cf(cf).unwrap();
        if round == 1 {
            db.compact_range_cf(cf, None, None).unwrap();
        }
    }
}

fn levels_of(db: &Db, family: &str) -> BTreeSet<usize> {
    db.live_files()
        .unwrap()
        .files
        .iter()
        .filter(|f| f.column_family == family)
        .filter_map(|f| f.level)
        .collect()
}

fn sst_files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sst") || n.ends_with(".blob"))
        .collect()
}

/// Exports a filled family of DB A (with blob values or not), imports it
/// into a fresh DB B: the same contents both ways, after a reopen, after a
/// compaction; writes after the import are newer than every imported entry.
fn round_trip(blobs: bool, move_files: bool) {
    let a_dir = tempfile::tempdir().unwrap();
    let b_dir = tempfile::tempdir().unwrap();
    let exp_root = tempfile::tempdir().unwrap();
    let a = Db::open(a_dir.path(), db_opts()).unwrap();
    let src = a.create_cf("src", cf_opts(blobs)).unwrap();
    fill(&a, &src);
    assert!(
        levels_of(&a, "src").len() >= 2,
        "{:?}",
        levels_of(&a, "src")
    );
    let blob_count = a
        .live_files()
        .unwrap()
        .files
        .iter()
        .filter(|f| f.kind == shale::LiveFileKind::Blob)
        .count();
    assert_eq!(blob_count > 0, blobs);
    // Unflushed writes are exported too (the export flushes).
    a.put_cf(&src, &k(999), b"unflushed").unwrap();
    let want = contents(&a, &src);
    let dir = exp_root.path().join("export");
    let meta = a.export_column_family(&src, &dir).unwrap();
    assert!(dir.join(EXPORT_METADATA_FILE).exists());
    assert!(!exp_root.path().join("export.tmp").exists());
    assert_eq!(meta.column_family, "src");
    assert_eq!(meta.blob_files.is_empty(), !blobs);
    assert_eq!(meta.merge_operator.as_deref(), Some("stringappend:2c"));
    let loaded = ExportMetadata::load(&dir).unwrap();
    assert_eq!(loaded, meta);
    // The export does not disturb the source.
    assert_eq!(contents(&a, &src), want);

    let b = Db::open(b_dir.path(), db_opts()).unwrap();
    b.put(b"other", b"data").unwrap();
    let io = ImportOptions { move_files };
    let dst = b
        .create_column_family_with_import("dst", &cf_opts(blobs), &loaded, &io)
        .unwrap();
    assert_eq!(contents(&b, &dst), want);
    for (key, v) in want.iter().take(50) {
        assert_eq!(b.get_cf(&dst, key).unwrap().unwrap().to_vec(), *v);
    }
    assert_eq!(levels_of(&b, "dst"), levels_of(&a, "src"));
    let left = sst_files(&dir);
    if move_files {
        assert!(left.is_empty(), "{left:?}");
    } else {
        assert_eq!(left.len(), meta.tables.len() + meta.blob_files.len());
    }
    // A write after the import is newer than every imported entry.
    let mut model = want.clone();
    b.put_cf(&dst, &k(3), b"after").unwrap();
    model.insert(k(3), b"after".to_vec());
    b.merge_cf(&dst, &k(1), b"after").unwrap();
    let merged = [model[&k(1)].clone(), b",after".to_vec()].concat();
    model.insert(k(1), merged);
    assert_eq!(contents(&b, &dst), model);
    drop(dst);
    b.close().unwrap();
    let o = Options {
        column_families: vec![("dst".into(), cf_opts(blobs))],
        ..db_opts()
    };
    let b = Db::open(b_dir.path(), o).unwrap();
    let dst = b.cf("dst").unwrap();
    assert_eq!(contents(&b, &dst), model);
    assert_eq!(b.get(b"other").unwrap().unwrap().to_vec(), b"data");
    b.compact_range_cf(&dst, None, None).unwrap();
    b.wait_for_compaction().unwrap();
    assert_eq!(contents(&b, &dst), model);
    // The source is untouched by all of it.
    assert_eq!(contents(&a, &src), want);
}

#[test]
fn round_trip_with_tables_only() {
    round_trip(false, false);
}

#[test]
fn round_trip_with_blob_files() {
    round_trip(true, false);
}

#[test]
fn round_trip_moving_the_files() {
    round_trip(true, true);
}

/// An export imported into its own DB under another name (tables only:
/// blob files keep their numbers, which the source family holds).
#[test]
fn import_into_the_same_db() {
    let d = tempfile::tempdir().unwrap();
    let e = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), db_opts()).unwrap();
    let src = db.create_cf("src", cf_opts(false)).unwrap();
    fill(&db, &src);
    let meta = db.export_column_family(&src, e.path().join("x")).unwrap();
    let copy = db
        .create_column_family_with_import("copy", &cf_opts(false), &meta, &ImportOptions::default())
        .unwrap();
    assert_eq!(contents(&db, &copy), contents(&db, &src));
    db.put_cf(&src, &k(7), b"only in src").unwrap();
    assert_ne!(contents(&db, &copy), contents(&db, &src));
    // With blob files, the numbers are taken: refused, nothing created.
    let bsrc = db.create_cf("bsrc", cf_opts(true)).unwrap();
    fill(&db, &bsrc);
    let bmeta = db.export_column_family(&bsrc, e.path().join("y")).unwrap();
    let before = sst_files(d.path());
    let err = db
        .create_column_family_with_import(
            "bcopy",
            &cf_opts(true),
            &bmeta,
            &ImportOptions::default(),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("blob file")),
        "{err}"
    );
    assert!(db.cf("bcopy").is_none());
    assert_eq!(sst_files(d.path()), before);
}

fn exported(dir: &Path) -> (Db, ExportMetadata, PathBuf) {
    let a = Db::open(dir.join("a"), db_opts()).unwrap();
    let src = a.create_cf("src", cf_opts(false)).unwrap();
    fill(&a, &src);
    let e = dir.join("export");
    let meta = a.export_column_family(&src, &e).unwrap();
    (a, meta, e)
}

#[test]
fn refusals_create_nothing() {
    let root = tempfile::tempdir().unwrap();
    let (a, meta, e) = exported(root.path());
    // Export into an existing directory.
    let src = a.cf("src").unwrap();
    assert!(matches!(
        a.export_column_family(&src, &e),
        Err(Error::InvalidArgument(_))
    ));
    let b_dir = root.path().join("b");
    let b = Db::open(&b_dir, db_opts()).unwrap();
    b.create_cf("taken", CfOptions::default()).unwrap();
    let io = ImportOptions::default();
    let before = sst_files(&b_dir);
    let refuse = |name: &str, opts: &CfOptions, m: &ExportMetadata| -> Error {
        let err = b
            .create_column_family_with_import(name, opts, m, &io)
            .unwrap_err();
        assert!(b.cf(name).is_none() || name == "taken", "{name} created");
        assert_eq!(sst_files(&b_dir), before, "{err}");
        err
    };
    let o = cf_opts(false);
    // An existing name.
    let err = refuse("taken", &o, &meta);
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("already exists")),
        "{err}"
    );
    // Another comparator.
    let mut m = meta.clone();
    m.comparator = "rocksdb.ReverseBytewiseComparator".into();
    let err = refuse("x", &o, &m);
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("comparator")),
        "{err}"
    );
    // Another merge operator, or none.
    let none = CfOptions {
        merge_operator: None,
        ..o.clone()
    };
    let err = refuse("x", &none, &meta);
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("merge operator")),
        "{err}"
    );
    // Overlapping files in a level ≥ 1 (two L0 tables claimed for L1).
    let mut m = meta.clone();
    let l0: Vec<usize> = (0..m.tables.len())
        .filter(|&i| m.tables[i].level == 0)
        .collect();
    assert!(l0.len() >= 2, "{:?}", m.tables);
    for &i in &l0 {
        m.tables[i].level = 1;
    }
    let err = refuse("x", &o, &m);
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("overlap")),
        "{err}"
    );
    // A level this DB does not have.
    let mut m = meta.clone();
    m.tables[0].level = 40;
    assert!(matches!(refuse("x", &o, &m), Error::InvalidArgument(_)));
    // A metadata version this build does not know.
    let text = std::fs::read_to_string(e.join(EXPORT_METADATA_FILE)).unwrap();
    let future = root.path().join("future");
    std::fs::create_dir(&future).unwrap();
    std::fs::write(
        future.join(EXPORT_METADATA_FILE),
        text.replace("\"format_version\": 1", "\"format_version\": 2"),
    )
    .unwrap();
    assert!(matches!(
        ExportMetadata::load(&future),
        Err(Error::NotSupported(_))
    ));
    std::fs::write(future.join(EXPORT_METADATA_FILE), &text[..text.len() / 2]).unwrap();
    assert!(matches!(
        ExportMetadata::load(&future),
        Err(Error::Corruption { .. })
    ));
    assert!(ExportMetadata::load(root.path().join("nowhere")).is_err());
}

/// A damaged table of the export is `Corruption` naming it, and nothing
/// is created or copied.
fn damaged(damage: impl Fn(&Path)) {
    let root = tempfile::tempdir().unwrap();
    let (_a, meta, e) = exported(root.path());
    let victim = meta.tables.iter().max_by_key(|t| t.file_size).unwrap();
    let path = e.join(&victim.name);
    damage(&path);
    let b_dir = root.path().join("b");
    let b = Db::open(&b_dir, db_opts()).unwrap();
    let before = sst_files(&b_dir);
    let err = b
        .create_column_family_with_import("x", &cf_opts(false), &meta, &ImportOptions::default())
        .unwrap_err();
    match &err {
        Error::Corruption { file, .. } => assert!(file.contains(&victim.name), "{err}"),
        other => panic!("{other}"),
    }
    assert!(b.cf("x").is_none());
    assert_eq!(sst_files(&b_dir), before);
    drop(b);
    let b = Db::open(
        &b_dir,
        Options {
            create_if_missing: false,
            ..db_opts()
        },
    )
    .unwrap();
    assert!(b.cf("x").is_none());
}

#[test]
fn a_truncated_table_is_refused_naming_it() {
    damaged(|p| {
        let len = std::fs::metadata(p).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        f.set_len(len - 10).unwrap();
    });
}

#[test]
fn a_flipped_byte_is_refused_naming_the_table() {
    damaged(|p| {
        let mut b = std::fs::read(p).unwrap();
        // Inside the first data block.
        b[40] ^= 0x20;
        std::fs::write(p, b).unwrap();
    });
}

/// Power loss at every IO call of an import into the same DB: each image
/// opens with the family absent, or present with every key.
#[test]
fn a_crash_mid_import_leaves_the_family_absent_or_complete() {
    let fs = MemFileSystem::new();
    let o = Options {
        fs: Arc::new(fs.clone()),
        ..db_opts()
    };
    let db = Db::open("/db", o.clone()).unwrap();
    let src = db.create_cf("src", cf_opts(false)).unwrap();
    fill(&db, &src);
    let want = contents(&db, &src);
    let meta = db.export_column_family(&src, "/exp/x").unwrap();
    fs.sync_dir(Path::new("/exp")).unwrap();
    let start = fs.op_count();
    fs.capture_at(start..=start + 10_000);
    db.create_column_family_with_import("copy", &cf_opts(false), &meta, &ImportOptions::default())
        .unwrap();
    // A write after: the family is complete in images after it too.
    db.put_cf(&src, b"z", b"z").unwrap();
    let end = fs.op_count();
    drop(src);
    drop(db);
    let (mut present, mut absent) = (0, 0);
    for (at, image) in fs.take_captures() {
        if at > end {
            continue;
        }
        let crashed = image.crash(0.0, at);
        let db = Db::open(
            "/db",
            Options {
                fs: Arc::new(crashed.clone()),
                // An absent "copy" is created empty (its options hold the
                // merge operator, which no persisted text can).
                create_missing_column_families: true,
                column_families: vec![
                    ("src".into(), cf_opts(false)),
                    ("copy".into(), cf_opts(false)),
                ],
                ..o.clone()
            },
        )
        .unwrap_or_else(|e| panic!("image after call {at}: {e}"));
        let got = contents(&db, &db.cf("copy").unwrap());
        if got.is_empty() {
            absent += 1;
        } else {
            assert_eq!(got, want, "image after call {at}");
            present += 1;
        }
    }
    println!(
        "{} IO calls: {present} images with the family, {absent} without",
        end - start
    );
    assert!(
        present > 0 && absent > 0,
        "present {present}, absent {absent}"
    );
}

/// `repair_db` keeps what an imported table's MANIFEST entry says of its
/// original number (sub-field `WRITTEN_AS`), so the table still opens.
#[test]
fn repair_keeps_imported_tables_readable() {
    let root = tempfile::tempdir().unwrap();
    let (_a, meta, _e) = exported(root.path());
    let b_dir = root.path().join("b");
    let b = Db::open(&b_dir, db_opts()).unwrap();
    let copy = b
        .create_column_family_with_import("copy", &cf_opts(false), &meta, &ImportOptions::default())
        .unwrap();
    let want = contents(&b, &copy);
    drop(copy);
    b.close().unwrap();
    shale::tools::repair_db(&b_dir).unwrap();
    let o = Options {
        column_families: vec![("copy".into(), cf_opts(false))],
        ..db_opts()
    };
    let b = Db::open(&b_dir, o).unwrap();
    assert_eq!(contents(&b, &b.cf("copy").unwrap()), want);
}
