//! Point-in-time restore (issue 39): WAL archiving (`wal_ttl_seconds`,
//! `wal_size_limit_mb`), `BackupEngine::backup_wals`, `restore_to` at
//! every recorded sequence number across WAL switches, flushes and
//! backups (compared with the contents the DB had then), `restore_to_time`
//! with the test's clock, and each refusal: a point inside a batch, past
//! the kept WALs, after a write without the WAL or an ingestion, before
//! every backup, a format-1 backup; archiving with recycling.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use common::{family_contents, quiet_options, FamilyContents, TestClock};
use shale::{BackupEngine, Db, Error, IngestOptions, Options, WriteBatch, WriteOptions};

fn options(clock: Option<Arc<TestClock>>) -> Options {
    let mut o = quiet_options();
    o.wal_size_limit_mb = 1024;
    o.cf.write_buffer_size = 64 << 10;
    o.column_families = vec![("other".into(), o.cf.clone())];
    o.create_missing_column_families = true;
    if let Some(c) = clock {
        o.clock = c;
    }
    o
}

/// Writes `n` batches of three entries over both families (some deletes
/// and a range deletion), returning (sequence, contents) after each of
/// every `every` batches.
fn write(db: &Db, from: u32, n: u32, every: u32) -> Vec<(u64, FamilyContents)> {
    let other = db.cf("other").unwrap();
    let mut points = Vec::new();
    for i in from..from + n {
        let mut b = WriteBatch::new();
        let k = format!("k{:04}", i % 700);
        b.put(k.as_bytes(), format!("v{i}").repeat(30).as_bytes());
        b.put_cf(&other, k.as_bytes(), format!("o{i}").as_bytes());
        if i % 7 == 0 {
            b.delete(format!("k{:04}", (i * 13) % 700).as_bytes());
        } else if i % 50 == 0 {
            b.delete_range(b"k0100", b"k0110");
        } else {
            b.put(b"last", format!("{i}").as_bytes());
        }
        db.write(b, &WriteOptions::default()).unwrap();
        if (i - from) % every == every - 1 {
            points.push((db.latest_sequence_number(), family_contents(db)));
        }
    }
    points
}

/// Flushes both families (an idle family's memtable keeps its WALs).
fn flush_all(db: &Db) {
    db.flush().unwrap();
    db.flush_cf(&db.cf("other").unwrap()).unwrap();
}

fn restored(engine: &BackupEngine, dir: &Path, seq: u64) -> FamilyContents {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let target = dir.join(format!("restored-{seq}-{n}"));
    let r = engine.restore_to(&target, seq).unwrap();
    assert_eq!(r.sequence, seq);
    let db = Db::open(&target, options(None)).unwrap();
    assert!(db.latest_sequence_number() >= seq);
    let c = family_contents(&db);
    db.close().unwrap();
    c
}

#[test]
fn restore_to_every_point_across_wal_switches_flushes_and_backups() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    let before = family_contents(&db);
    engine.create_backup(&db).unwrap();
    let mut points = vec![(db.latest_sequence_number(), before)];
    points.extend(write(&db, 0, 600, 37));
    flush_all(&db);
    points.extend(write(&db, 600, 300, 41));
    engine.create_backup(&db).unwrap();
    points.extend(write(&db, 900, 400, 29));
    engine.backup_wals(&db).unwrap();
    assert!(
        std::fs::read_dir(db_dir.join("archive")).unwrap().count() > 0,
        "WALs were archived"
    );
    db.close().unwrap();
    for (seq, want) in &points {
        assert_eq!(&restored(&engine, dir.path(), *seq), want, "at {seq}");
    }
    // A purge keeps what the remaining backup needs: points after it
    // still restore, points before it no longer do.
    engine.purge_old(1).unwrap();
    let (late, want) = points.last().unwrap();
    assert_eq!(&restored(&engine, dir.path(), *late), want);
    let early = points[1].0;
    let e = engine
        .restore_to(dir.path().join("early"), early)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("no backup")),
        "{e}"
    );
}

#[test]
fn a_point_inside_a_batch_or_past_the_kept_wals_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    engine.create_backup(&db).unwrap();
    let points = write(&db, 0, 10, 1);
    engine.backup_wals(&db).unwrap();
    let later = write(&db, 10, 1, 1);
    // Each batch holds three entries: the second of one is inside it.
    let inside = points[4].0 - 1;
    let e = engine.restore_to(dir.path().join("a"), inside).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("inside a write batch")),
        "{e}"
    );
    assert_eq!(restored(&engine, dir.path(), points[9].0), points[9].1);
    // Not copied yet.
    let last = later[0].0;
    let e = engine.restore_to(dir.path().join("b"), last).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("reach sequence")),
        "{e}"
    );
    assert!(!dir.path().join("b").exists() && !dir.path().join("b.tmp").exists());
    engine.backup_wals(&db).unwrap();
    assert_eq!(restored(&engine, dir.path(), last), later[0].1);
    db.close().unwrap();
}

#[test]
fn writes_without_the_wal_and_ingestions_stop_restores_until_a_later_backup() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    engine.create_backup(&db).unwrap();
    let before = write(&db, 0, 5, 5);
    let unlogged = WriteOptions {
        disable_wal: true,
        ..WriteOptions::default()
    };
    let mut b = WriteBatch::new();
    b.put(b"nowal", b"x");
    db.write(b, &unlogged).unwrap();
    let after = write(&db, 5, 5, 5);
    engine.backup_wals(&db).unwrap();
    // Up to the unlogged write: fine.
    assert_eq!(restored(&engine, dir.path(), before[0].0), before[0].1);
    let e = engine
        .restore_to(dir.path().join("x"), after[0].0)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("without the WAL")),
        "{e}"
    );
    // A backup after a flush holds it.
    flush_all(&db);
    engine.create_backup(&db).unwrap();
    let later = write(&db, 10, 5, 5);
    engine.backup_wals(&db).unwrap();
    assert_eq!(restored(&engine, dir.path(), later[0].0), later[0].1);

    // An ingested file is in no WAL either.
    let sst = dir.path().join("in.sst");
    let mut w = shale::SstFileWriter::new(&options(None));
    w.open(&sst).unwrap();
    w.put(b"zz-ingested", b"1").unwrap();
    w.finish().unwrap();
    db.ingest_external_file(&[sst], &IngestOptions::default())
        .unwrap();
    let past = write(&db, 15, 5, 5);
    engine.backup_wals(&db).unwrap();
    let e = engine
        .restore_to(dir.path().join("y"), past[0].0)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("ingestion")),
        "{e}"
    );
    engine.create_backup(&db).unwrap();
    let (seq, want) = (db.latest_sequence_number(), family_contents(&db));
    assert_eq!(restored(&engine, dir.path(), seq), want);
    db.close().unwrap();
}

#[test]
fn restore_to_time_takes_the_last_time_record_at_or_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let clock = TestClock::at(1_000_000);
    let db = Db::open(&db_dir, options(Some(Arc::clone(&clock)))).unwrap();
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    engine.create_backup(&db).unwrap();
    // Ten seconds of writes, a batch every 100 ms.
    let mut at_second = Vec::new();
    for s in 0..10u32 {
        at_second.push((db.latest_sequence_number(), family_contents(&db)));
        for t in 0..10 {
            write(&db, s * 10 + t, 1, 1);
            clock.advance_micros(100_000);
        }
    }
    engine.backup_wals(&db).unwrap();
    db.close().unwrap();
    for s in [1u64, 4, 9] {
        // Half a second into second `s`: the record written at its start
        // (holding the writes of the seconds before) is the latest.
        let t = UNIX_EPOCH + Duration::from_micros((1_000_000 + s) * 1_000_000 + 500_000);
        let target = dir.path().join(format!("t{s}"));
        let r = engine.restore_to_time(&target, t).unwrap();
        let (seq, want) = &at_second[s as usize];
        assert_eq!(r.sequence, *seq, "second {s}");
        let db = Db::open(&target, options(None)).unwrap();
        assert_eq!(&family_contents(&db), want);
        db.close().unwrap();
    }
    let e = engine
        .restore_to_time(dir.path().join("old"), UNIX_EPOCH + Duration::from_secs(5))
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("no backup or WAL time record")),
        "{e}"
    );
}

#[test]
fn archiving_keeps_obsolete_wals_within_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let clock = TestClock::at(5_000);
    let mut o = options(Some(Arc::clone(&clock)));
    o.wal_size_limit_mb = 0;
    o.wal_ttl_seconds = 60;
    let db = Db::open(dir.path(), o.clone()).unwrap();
    write(&db, 0, 400, 400);
    flush_all(&db);
    let archive = dir.path().join("archive");
    let archived = || std::fs::read_dir(&archive).unwrap().count();
    assert!(archived() > 0);
    clock.advance_micros(61_000_000);
    write(&db, 400, 5, 5);
    flush_all(&db);
    // Only WALs archived by the last flush are left.
    assert!(archived() <= 2, "{}", archived());
    db.close().unwrap();
    // Without archiving a backup cannot keep WALs; with recycling the
    // options are refused.
    let db = Db::open(dir.path(), quiet_like(&o)).unwrap();
    let engine = BackupEngine::open(dir.path().join("bk"), shale::fs::default_fs()).unwrap();
    let e = engine.backup_wals(&db).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("archive")),
        "{e}"
    );
    db.close().unwrap();
    let mut bad = o;
    bad.recycle_log_file_num = 2;
    let e = Db::open(dir.path(), bad).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("recycle_log_file_num")),
        "{e}"
    );
}

/// `o` without WAL archiving.
fn quiet_like(o: &Options) -> Options {
    let mut o = o.clone();
    o.wal_ttl_seconds = 0;
    o.wal_size_limit_mb = 0;
    o
}

#[test]
fn a_format_1_backup_restores_but_not_to_a_point() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/backup-v1");
    let dir = tempfile::tempdir().unwrap();
    let bk = dir.path().join("bk");
    copy_tree(&src, &bk);
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    let list = engine.list().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[1].app_metadata, "second");
    engine.verify(1).unwrap();
    engine.restore(2, dir.path().join("db")).unwrap();
    let mut o = quiet_options();
    o.column_families = vec![("users".into(), o.cf.clone())];
    let db = Db::open(dir.path().join("db"), o).unwrap();
    assert_eq!(
        db.get(b"d100").unwrap().as_deref(),
        Some(&b"default-100"[..])
    );
    let users = db.cf("users").unwrap();
    assert_eq!(
        db.get_cf(&users, b"u050").unwrap().as_deref(),
        Some(&b"user-50"[..])
    );
    // A backup made now records its largest sequence number, and sits in
    // the same directory beside the old ones.
    let id = engine.create_backup(&db).unwrap();
    assert_eq!(id, 3);
    let e = engine
        .restore_to(dir.path().join("p"), list[0].sequence)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("format 1")),
        "{e}"
    );
    db.close().unwrap();
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_family_created_or_dropped_after_the_backup_bounds_the_restore() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    let engine = BackupEngine::open(&bk, shale::fs::default_fs()).unwrap();
    engine.create_backup(&db).unwrap();
    let before = write(&db, 0, 5, 5);
    let extra = db
        .create_cf("extra", db.cf_options(&db.default_cf()).unwrap())
        .unwrap();
    db.put_cf(&extra, b"e", b"1").unwrap();
    let after = write(&db, 5, 5, 5);
    engine.backup_wals(&db).unwrap();
    // Right up to the change: the state then.
    assert_eq!(restored(&engine, dir.path(), before[0].0), before[0].1);
    let e = engine
        .restore_to(dir.path().join("x"), after[0].0)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("column family")),
        "{e}"
    );
    // A backup made after the change serves, and so after a drop.
    engine.create_backup(&db).unwrap();
    let later = write(&db, 10, 5, 5);
    engine.backup_wals(&db).unwrap();
    let target = dir.path().join("later");
    engine.restore_to(&target, later[0].0).unwrap();
    let mut o = options(None);
    o.column_families.push(("extra".into(), o.cf.clone()));
    let copy = Db::open(&target, o).unwrap();
    assert_eq!(family_contents(&copy), later[0].1);
    copy.close().unwrap();
    db.drop_cf(&extra).unwrap();
    let gone = write(&db, 15, 5, 5);
    engine.backup_wals(&db).unwrap();
    let e = engine
        .restore_to(dir.path().join("y"), gone[0].0)
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("column family")),
        "{e}"
    );
    db.close().unwrap();
}

/// A power loss after every file-system call while the DB writes, flushes
/// (archiving WALs) and `backup_wals` copies them: on every image the DB
/// opens, and every point that was restorable before (the WALs copied by
/// an earlier `backup_wals`, which syncs) still restores exactly.
#[test]
fn power_loss_while_archiving_and_copying_wals_keeps_earlier_points() {
    use shale::fs::{FileSystem, MemFileSystem};
    let mem = MemFileSystem::new();
    let fs: Arc<dyn FileSystem> = Arc::new(mem.clone());
    mem.create_dir_all(Path::new("/db")).unwrap();
    let with_fs = |fs: &Arc<dyn FileSystem>| {
        let mut o = options(None);
        o.fs = Arc::clone(fs);
        o
    };
    let db = Db::open("/db", with_fs(&fs)).unwrap();
    let engine = BackupEngine::open("/bk", Arc::clone(&fs)).unwrap();
    engine.create_backup(&db).unwrap();
    let mut points = write(&db, 0, 300, 60);
    flush_all(&db);
    points.extend(write(&db, 300, 100, 50));
    engine.backup_wals(&db).unwrap();
    let start = mem.op_count();
    mem.capture_at(start + 1..start + 20_000);
    write(&db, 400, 300, 300);
    flush_all(&db);
    engine.backup_wals(&db).unwrap();
    mem.capture_at(std::iter::empty());
    let captures = mem.take_captures();
    drop(engine);
    let last = captures.keys().next_back().copied();
    let images: Vec<(u64, MemFileSystem)> = captures
        .into_iter()
        .filter(|(k, _)| k % 17 == 0 || Some(*k) == last)
        .collect();
    assert!(images.len() > 10, "{} images", images.len());
    for (k, img) in &images {
        let img: Arc<dyn FileSystem> = Arc::new(img.clone());
        let reopened = Db::open("/db", with_fs(&img)).unwrap_or_else(|e| panic!("image {k}: {e}"));
        reopened.close().unwrap();
        let engine = BackupEngine::open("/bk", Arc::clone(&img)).unwrap();
        for (i, (seq, want)) in points
            .iter()
            .enumerate()
            .filter(|(i, _)| *i as u64 % 3 == k % 3)
        {
            let target = format!("/r{k}-{i}");
            engine
                .restore_to(&target, *seq)
                .unwrap_or_else(|e| panic!("image {k}: restore_to({seq}): {e}"));
            let r = Db::open(&target, with_fs(&img)).unwrap();
            assert_eq!(&family_contents(&r), want, "image {k}: point {seq}");
            r.close().unwrap();
        }
    }
    db.close().unwrap();
}
