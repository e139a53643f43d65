//! Files written by earlier on-disk format versions stay readable: DB
//! directories made by older builds are committed under
//! `tests/fixtures/` and opened, read, written and compacted here.
//!
//! - `format-v1/`: SST format version 1 (before tables recorded their
//!   column family), written by `write_format_v1_fixture` at commit
//!   f5336bc: two families (`default`, `users`), each with one table and
//!   writes left in the WAL, compression none, its OPTIONS file.
//!
//! - `ingest-v3/`: SST format version 3 (external tables written by
//!   `SstFileWriter`) and MANIFEST edit format 5 (an ingested table's
//!   global sequence number, file sub-field 1), written by
//!   `write_ingest_v3_fixture`: see `ingest_expected`.
//!
//! A new fixture is made the same way before each format bump: an ignored
//! test that writes the DB to `$SHALE_FIXTURE_OUT`, run once with the old
//! build, its output committed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use shale::{CfOptions, Db, Options};

/// (family, key) → value the fixture holds.
fn expected() -> BTreeMap<(String, Vec<u8>), Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..101 {
        m.insert(
            ("default".to_string(), format!("d{i:03}").into_bytes()),
            format!("default-{i}").into_bytes(),
        );
    }
    for i in 0..51 {
        m.insert(
            ("users".to_string(), format!("u{i:03}").into_bytes()),
            format!("user-{i}").into_bytes(),
        );
    }
    m
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of fixture `name` in a temporary directory (tests never write
/// the committed files).
fn copy_of(name: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(fixture(name)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    d
}

fn options() -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        cf: CfOptions {
            compression_per_level: vec![shale::Compression::None],
            ..Default::default()
        },
        column_families: vec![("users".to_string(), CfOptions::default())],
        ..Options::default()
    }
}

fn contents(db: &Db) -> BTreeMap<(String, Vec<u8>), Vec<u8>> {
    let mut m = BTreeMap::new();
    for cf in db.cfs() {
        for kv in db.range_cf(&cf, ..) {
            let (k, v) = kv.unwrap();
            m.insert((cf.name().to_string(), k), v);
        }
    }
    m
}

/// Writes the `format-v1` fixture to `$SHALE_FIXTURE_OUT` (run once, at
/// SST format version 1; see the module comment).
#[test]
#[ignore]
fn write_format_v1_fixture() {
    let Ok(out) = std::env::var("SHALE_FIXTURE_OUT") else {
        panic!("set SHALE_FIXTURE_OUT to the directory to write");
    };
    let db = Db::open(&out, options()).unwrap();
    let users = db.cf("users").unwrap();
    for ((cf, k), v) in expected() {
        let in_wal = k == b"d100" || k == b"u050";
        if in_wal {
            continue;
        }
        match cf.as_str() {
            "default" => db.put(&k, &v).unwrap(),
            _ => db.put_cf(&users, &k, &v).unwrap(),
        }
    }
    db.flush().unwrap();
    db.flush_cf(&users).unwrap();
    db.put(b"d100", b"default-100").unwrap();
    db.put_cf(&users, b"u050", b"user-50").unwrap();
    db.flush_wal(true).unwrap();
    drop(db);
    // The LOCK file is not part of the fixture.
    let _ = std::fs::remove_file(Path::new(&out).join("LOCK"));
}

#[test]
fn a_format_v1_db_opens_reads_writes_and_compacts() {
    let d = copy_of("format-v1");
    let mut o = options();
    o.create_if_missing = false;
    let db = Db::open(d.path(), o.clone()).unwrap();
    assert_eq!(contents(&db), expected());
    // New writes, flushed into tables of the current format beside the old.
    db.put(b"d200", b"new").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let users = db.cf("users").unwrap();
    db.compact_range_cf(&users, None, None).unwrap();
    let mut want = expected();
    want.insert(("default".into(), b"d200".to_vec()), b"new".to_vec());
    assert_eq!(contents(&db), want);
    db.close().unwrap();
    let db = Db::open(d.path(), o).unwrap();
    assert_eq!(contents(&db), want);
    db.close().unwrap();
}

#[test]
fn a_format_v1_db_checks_clean_and_its_tables_dump() {
    let d = copy_of("format-v1");
    let r = shale::tools::check_db(d.path()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let tables: Vec<PathBuf> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    assert_eq!(tables.len(), 2);
    for t in tables {
        let r = shale::tools::SstReader::open(&t).unwrap();
        assert!(r.verify().unwrap().is_empty());
    }
}

/// Tables of format version 1 record no column family: a repair without a
/// MANIFEST places them in `default` and says so with a warning (the
/// documented limit of version 1); version-2 tables record theirs.
#[test]
fn repair_places_format_v1_tables_in_default_with_a_warning() {
    let d = copy_of("format-v1");
    for n in ["CURRENT", "MANIFEST-000001"] {
        std::fs::remove_file(d.path().join(n)).unwrap();
    }
    let r = shale::tools::repair_db(d.path()).unwrap();
    assert!(
        r.notes
            .iter()
            .any(|n| n.starts_with("WARNING") && n.contains("record no column family")),
        "{:?}",
        r.notes
    );
    // The two version-1 tables join `default`; the WAL's records of family
    // id 1 (no table names it) go to `recovered_cf_1`.
    for (t, f, _) in &r.tables {
        let want = match t.as_str() {
            "000005.sst" | "000006.sst" => "default",
            _ => f.as_str(),
        };
        assert_eq!(f, want, "{:?}", r.tables);
    }
    assert!(
        r.tables.iter().any(|(_, f, _)| f == "recovered_cf_1"),
        "{:?}",
        r.tables
    );
}

#[test]
fn tables_of_the_current_format_record_their_family() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), options()).unwrap();
    let users = db.cf("users").unwrap();
    db.put_cf(&users, b"u", b"1").unwrap();
    db.flush_cf(&users).unwrap();
    db.put(b"d", b"1").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let mut seen = Vec::new();
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "sst") {
            let props = shale::tools::SstReader::open(&p).unwrap().properties();
            assert_eq!(props.format_version, 2);
            seen.push(props.column_family.expect("recorded"));
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        vec![(0, "default".to_string()), (1, "users".to_string())]
    );
}

/// (key → value) the `ingest-v3` fixture holds: `d000..d099` put and
/// flushed (`old-i`), then an external file of `d050..d149` ingested over
/// them (`ing-i`, with a global sequence number), a non-overlapping one of
/// `e000..e009` (`e-i`, sequence number 0, the bottom level), and `d120`
/// put again afterwards, left in the WAL.
fn ingest_expected() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..50 {
        m.insert(
            format!("d{i:03}").into_bytes(),
            format!("old-{i}").into_bytes(),
        );
    }
    for i in 50..150 {
        m.insert(
            format!("d{i:03}").into_bytes(),
            format!("ing-{i}").into_bytes(),
        );
    }
    for i in 0..10 {
        m.insert(
            format!("e{i:03}").into_bytes(),
            format!("e-{i}").into_bytes(),
        );
    }
    m.insert(b"d120".to_vec(), b"after".to_vec());
    m
}

fn ingest_options() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            compression_per_level: vec![shale::Compression::None],
            ..Default::default()
        },
        ..Options::default()
    }
}

/// Writes the `ingest-v3` fixture (SST format 3, MANIFEST edit format 5)
/// to `$SHALE_FIXTURE_OUT` (see the module comment).
#[test]
#[ignore]
fn write_ingest_v3_fixture() {
    let Ok(out) = std::env::var("SHALE_FIXTURE_OUT") else {
        panic!("set SHALE_FIXTURE_OUT to the directory to write");
    };
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(&out, ingest_options()).unwrap();
    for i in 0..100 {
        db.put(format!("d{i:03}").as_bytes(), format!("old-{i}").as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    let mut w = shale::SstFileWriter::new(&ingest_options());
    let a = src.path().join("a.sst");
    w.open(&a).unwrap();
    for i in 50..150 {
        w.put(format!("d{i:03}").as_bytes(), format!("ing-{i}").as_bytes())
            .unwrap();
    }
    w.finish().unwrap();
    let b = src.path().join("b.sst");
    w.open(&b).unwrap();
    for i in 0..10 {
        w.put(format!("e{i:03}").as_bytes(), format!("e-{i}").as_bytes())
            .unwrap();
    }
    w.finish().unwrap();
    db.ingest_external_file(&[a, b], &shale::IngestOptions::default())
        .unwrap();
    db.put(b"d120", b"after").unwrap();
    db.flush_wal(true).unwrap();
    drop(db);
    let _ = std::fs::remove_file(Path::new(&out).join("LOCK"));
}

/// A DB with ingested tables (one with a global sequence number in the
/// MANIFEST) opens, reads newest-wins, compacts and reopens.
#[test]
fn an_ingest_v3_db_opens_reads_and_compacts() {
    let d = copy_of("ingest-v3");
    let mut o = ingest_options();
    o.create_if_missing = false;
    let read =
        |db: &Db| -> BTreeMap<Vec<u8>, Vec<u8>> { db.range(..).map(|kv| kv.unwrap()).collect() };
    let db = Db::open(d.path(), o.clone()).unwrap();
    assert_eq!(read(&db), ingest_expected());
    assert_eq!(db.get(b"d060").unwrap().unwrap().to_vec(), b"ing-60");
    let externals = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .filter(|p| {
            let props = shale::tools::SstReader::open(p).unwrap().properties();
            props.external_version == 1 && props.format_version == 3
        })
        .count();
    assert_eq!(externals, 2);
    drop(db);
    let r = shale::tools::check_db(d.path()).unwrap();
    assert!(r.is_clean(), "{:?}", r.problems);
    let db = Db::open(d.path(), o.clone()).unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(read(&db), ingest_expected());
    db.close().unwrap();
    let db = Db::open(d.path(), o).unwrap();
    assert_eq!(read(&db), ingest_expected());
}

/// Repair keeps an ingested table's global sequence number (from the old
/// MANIFEST: the table does not hold it), so the ingested values still win.
#[test]
fn repair_keeps_an_ingested_tables_global_seqno() {
    let d = copy_of("ingest-v3");
    let r = shale::tools::repair_db(d.path()).unwrap();
    assert!(
        !r.set_aside.iter().any(|n| n.ends_with(".sst")),
        "{:?} {:?}",
        r.set_aside,
        r.notes
    );
    let mut o = ingest_options();
    o.create_if_missing = false;
    let db = Db::open(d.path(), o).unwrap();
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db.range(..).map(|kv| kv.unwrap()).collect();
    assert_eq!(got, ingest_expected());
}

/// Writes the `backup-v1` fixture (backup `meta/<id>` format 1) to
/// `$SHALE_FIXTURE_OUT`: backup 1 of a DB holding `expected()` without
/// `d100`, backup 2 after `d100` was written (so it shares backup 1's
/// tables), application metadata "first" and "second".
#[test]
#[ignore]
fn write_backup_v1_fixture() {
    let Ok(out) = std::env::var("SHALE_FIXTURE_OUT") else {
        panic!("set SHALE_FIXTURE_OUT to the directory to write");
    };
    let src = tempfile::tempdir().unwrap();
    let db = Db::open(src.path(), options()).unwrap();
    let users = db.cf("users").unwrap();
    for ((cf, k), v) in expected() {
        if k == b"d100" {
            continue;
        }
        match cf.as_str() {
            "default" => db.put(&k, &v).unwrap(),
            _ => db.put_cf(&users, &k, &v).unwrap(),
        }
    }
    db.flush().unwrap();
    db.flush_cf(&users).unwrap();
    let engine = shale::BackupEngine::open(&out, shale::fs::default_fs()).unwrap();
    engine.create_backup_with_metadata(&db, "first").unwrap();
    db.put(b"d100", b"default-100").unwrap();
    engine.create_backup_with_metadata(&db, "second").unwrap();
    drop(engine);
    db.close().unwrap();
    let _ = std::fs::remove_file(Path::new(&out).join("LOCK"));
}
