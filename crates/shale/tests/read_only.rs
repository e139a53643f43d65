//! `Db::open_read_only` (issue 39): the view recovers what a read-write
//! open would (tables, every family, the unflushed WAL tail, merges, range
//! deletions, blob files), changes no byte of the directory, takes no LOCK
//! (several views beside a writer), refuses every change with
//! `NotSupported`, and sees the DB as of its open.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use common::{family_contents as contents, quiet_options};
use shale::fs::{FileSystem, MemFileSystem};
use shale::{CfOptions, Db, Error, Options, StringAppendOperator, WriteBatch, WriteOptions};

/// Every file of `dir` (recursively one level, as the engine writes) with
/// its bytes.
fn snapshot_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn options(mmap_wal: bool) -> Options {
    let mut o = quiet_options();
    o.wal_mmap_writes = mmap_wal;
    o.cf.merge_operator = Some(Arc::new(StringAppendOperator::new(b",")));
    o.cf.blob.enable_blob_files = true;
    o.cf.blob.min_blob_size = 64;
    o.column_families = vec![("other".into(), o.cf.clone())];
    o.create_missing_column_families = true;
    o
}

/// Writes tables and an unflushed tail in two families.
fn populate(db: &Db) {
    let other = db.cf("other").unwrap();
    for i in 0..300u32 {
        let k = format!("k{i:04}");
        db.put(k.as_bytes(), format!("v{i}").as_bytes()).unwrap();
        db.put_cf(&other, k.as_bytes(), &vec![b'b'; 100 + i as usize])
            .unwrap();
    }
    db.flush().unwrap();
    db.flush_cf(&other).unwrap();
    db.merge(b"k0001", b"m1").unwrap();
    db.delete_range(b"k0100", b"k0150").unwrap();
    db.delete(b"k0002").unwrap();
    let mut b = WriteBatch::new();
    b.put_cf(&other, b"tail", b"unflushed");
    b.merge(b"k0003", b"m3");
    db.write(b, &WriteOptions::default()).unwrap();
}

#[test]
fn recovers_what_a_writer_sees_and_changes_nothing_on_disk() {
    for mmap_wal in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(mmap_wal)).unwrap();
        populate(&db);
        db.flush_wal(false).unwrap();
        let expected = contents(&db);
        let before = snapshot_dir(dir.path());
        // Beside the live writer (which holds the LOCK): two views.
        let ro1 = Db::open_read_only(dir.path(), options(mmap_wal)).unwrap();
        let ro2 = Db::open_read_only(dir.path(), options(mmap_wal)).unwrap();
        assert_eq!(contents(&ro1), expected, "mmap_wal {mmap_wal}");
        assert_eq!(contents(&ro2), expected);
        assert_eq!(ro1.get(b"k0001").unwrap().as_deref(), Some(&b"v1,m1"[..]));
        // Snapshots and bounded, reverse iteration work in the view.
        let snap = ro1.snapshot();
        let back: Vec<Vec<u8>> = ro1
            .range(&b"k0148"[..]..&b"k0152"[..])
            .rev()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        assert_eq!(back, vec![b"k0151".to_vec(), b"k0150".to_vec()]);
        drop(snap);
        ro1.close().unwrap();
        ro2.close().unwrap();
        assert_eq!(snapshot_dir(dir.path()), before, "a read-only open wrote");
        drop(db);
        // The same holds with no writer: the WAL replayed into memory.
        let before = snapshot_dir(dir.path());
        let ro = Db::open_read_only(dir.path(), options(mmap_wal)).unwrap();
        assert_eq!(contents(&ro), expected);
        drop(ro);
        assert_eq!(snapshot_dir(dir.path()), before);
    }
}

#[test]
fn every_change_is_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), options(true))
        .unwrap()
        .close()
        .unwrap();
    let ro = Db::open_read_only(dir.path(), options(true)).unwrap();
    let other = ro.cf("other").unwrap();
    let not_supported = |r: shale::Result<()>, what: &str| match r {
        Err(Error::NotSupported(m)) => assert!(m.contains("read-only"), "{what}: {m}"),
        r => panic!("{what}: {r:?}"),
    };
    not_supported(ro.put(b"a", b"b"), "put");
    not_supported(ro.put_cf(&other, b"a", b"b"), "put_cf");
    not_supported(ro.delete(b"a"), "delete");
    not_supported(ro.delete_range(b"a", b"b"), "delete_range");
    not_supported(ro.merge(b"a", b"b"), "merge");
    not_supported(ro.single_delete(b"a"), "single_delete");
    not_supported(
        ro.write(WriteBatch::new(), &WriteOptions::default()),
        "write",
    );
    not_supported(ro.flush(), "flush");
    not_supported(ro.flush_cf(&other), "flush_cf");
    not_supported(ro.compact_range(None, None), "compact_range");
    not_supported(ro.reclaim(None, None).map(drop), "reclaim");
    not_supported(
        ro.create_cf("new", CfOptions::default()).map(drop),
        "create_cf",
    );
    not_supported(ro.drop_cf(&other), "drop_cf");
    not_supported(
        ro.set_options_from_strings(&[("write_buffer_size", "1048576")]),
        "set_options",
    );
    not_supported(
        ro.set_db_options_from_strings(&[("max_background_jobs", "4")]),
        "set_db_options",
    );
    // Waiting for background work returns at once: there is none.
    ro.wait_for_compaction().unwrap();
    assert!(ro.get(b"a").unwrap().is_none());
}

#[test]
fn no_db_and_missing_families_are_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let r = Db::open_read_only(dir.path().join("none"), quiet_options());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
    assert!(!dir.path().join("none").exists(), "created a directory");
    Db::open(dir.path(), quiet_options())
        .unwrap()
        .close()
        .unwrap();
    let mut o = quiet_options();
    o.column_families = vec![("absent".into(), CfOptions::default())];
    o.create_missing_column_families = true;
    let r = Db::open_read_only(dir.path(), o);
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
}

#[test]
fn the_view_is_the_db_as_of_its_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    let ro = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    db.put(b"a", b"2").unwrap();
    db.put(b"b", b"2").unwrap();
    db.flush().unwrap();
    assert_eq!(ro.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(ro.get(b"b").unwrap().is_none());
    let ro2 = Db::open_read_only(dir.path(), quiet_options()).unwrap();
    assert_eq!(ro2.get(b"a").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(ro2.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
}

/// After a simulated power loss, a read-only open recovers exactly what a
/// read-write open then recovers, and leaves the crashed image as it was
/// (so the read-write open that follows still does the recovery).
#[test]
fn after_power_loss_recovers_as_a_read_write_open() {
    for seed in 0..6u64 {
        let mem = Arc::new(MemFileSystem::new());
        let dir = Path::new("/db");
        let mut o = options(seed % 2 == 0);
        o.fs = mem.clone();
        let db = Db::open(dir, o.clone()).unwrap();
        populate(&db);
        let sync = WriteOptions {
            sync: true,
            ..WriteOptions::default()
        };
        let mut b = WriteBatch::new();
        b.put(b"synced", b"yes");
        db.write(b, &sync).unwrap();
        db.put(b"unsynced", b"maybe").unwrap();
        let crashed = Arc::new(mem.crash(0.5, seed));
        drop(db);
        let mut o2 = options(seed % 2 == 0);
        o2.fs = crashed.clone();
        let names_before = crashed.list(dir).unwrap();
        let ro = Db::open_read_only(dir, o2.clone()).unwrap();
        let seen = contents(&ro);
        drop(ro);
        assert_eq!(crashed.list(dir).unwrap(), names_before, "seed {seed}");
        let rw = Db::open(dir, o2).unwrap();
        assert_eq!(contents(&rw), seen, "seed {seed}");
        assert_eq!(rw.get(b"synced").unwrap().as_deref(), Some(&b"yes"[..]));
    }
}

/// Found by shale-stress: a read-only open with direct reads probed
/// O_DIRECT on the LOCK file, which a checkpoint does not have: the open
/// failed with NotFound. It probes CURRENT there.
#[test]
fn read_only_open_of_a_checkpoint_with_direct_reads() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = quiet_options();
    o.use_direct_reads = true;
    let db = match Db::open(dir.path().join("db"), o.clone()) {
        Ok(db) => db,
        Err(Error::InvalidArgument(m)) if m.contains("O_DIRECT") => {
            eprintln!("skipped: no direct IO here ({m})");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.put(b"b", b"2").unwrap();
    let cp = dir.path().join("cp");
    db.checkpoint(&cp).unwrap();
    assert!(!cp.join("LOCK").exists());
    let ro = Db::open_read_only(&cp, o).unwrap();
    assert_eq!(ro.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(ro.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert!(!cp.join("LOCK").exists(), "the read-only open wrote a LOCK");
}
