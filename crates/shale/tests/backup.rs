//! `BackupEngine` (issue 39): incremental backups of every column family
//! (blob files too), list, verify, restore, delete, purge; a read-only
//! engine; a damaged file named by `verify`; and a power loss after every
//! file-system call of a backup, which leaves the earlier backups whole and
//! the new one absent or whole.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{family_contents as contents, quiet_options};
use shale::fs::{FileSystem, MemFileSystem};
use shale::{BackupEngine, Db, Error, Options, StringAppendOperator};

fn options(fs: Option<Arc<dyn FileSystem>>) -> Options {
    let mut o = quiet_options();
    o.cf.merge_operator = Some(Arc::new(StringAppendOperator::new(b",")));
    o.cf.blob.enable_blob_files = true;
    o.cf.blob.min_blob_size = 200;
    o.column_families = vec![("other".into(), o.cf.clone())];
    o.create_missing_column_families = true;
    if let Some(fs) = fs {
        o.fs = fs;
    }
    o
}

/// Writes keys `from..to` in both families (some values blobs), flushing
/// every 200, and leaves a tail in the memtables.
fn write(db: &Db, from: u32, to: u32, tag: &str) {
    let other = db.cf("other").unwrap();
    for i in from..to {
        let k = format!("k{i:05}");
        db.put(k.as_bytes(), format!("{tag}{i}").as_bytes())
            .unwrap();
        let big = format!("{tag}{i}").repeat(40);
        db.put_cf(&other, k.as_bytes(), big.as_bytes()).unwrap();
        if i % 200 == 199 {
            db.flush().unwrap();
            db.flush_cf(&other).unwrap();
        }
    }
    db.merge(b"m", tag.as_bytes()).unwrap();
    db.delete_range(
        format!("k{from:05}").as_bytes(),
        format!("k{:05}", from + 5).as_bytes(),
    )
    .unwrap();
}

fn shared_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("shared")).unwrap().count()
}

#[test]
fn incremental_backups_restore_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    write(&db, 0, 1000, "a");
    let fs = shale::fs::default_fs();
    let engine = BackupEngine::open(&bk, Arc::clone(&fs)).unwrap();
    let first = contents(&db);
    let id1 = engine.create_backup_with_metadata(&db, "first").unwrap();
    let shared_after_first = shared_files(&bk);
    assert!(shared_after_first >= 8, "{shared_after_first} shared files");
    // 10% of the keys overwritten: the second backup shares the rest.
    write(&db, 0, 100, "b");
    let second = contents(&db);
    let id2 = engine.create_backup(&db).unwrap();
    let added = shared_files(&bk) - shared_after_first;
    assert!(
        added < shared_after_first,
        "an incremental backup added {added} files to {shared_after_first}"
    );
    let list = engine.list().unwrap();
    assert_eq!(
        list.iter().map(|b| b.id).collect::<Vec<_>>(),
        vec![id1, id2]
    );
    assert_eq!(list[0].app_metadata, "first");
    assert!(list[1].sequence > list[0].sequence);
    assert!(list.iter().all(|b| b.size > 0 && b.file_count > 0));
    engine.verify(id1).unwrap();
    engine.verify(id2).unwrap();
    for (id, want) in [(id1, &first), (id2, &second)] {
        let target = dir.path().join(format!("restored{id}"));
        engine.restore(id, &target).unwrap();
        let r = Db::open(&target, options(None)).unwrap();
        assert_eq!(&contents(&r), want, "backup {id}");
        drop(r);
    }
    // An existing target is refused.
    let r = engine.restore(id1, dir.path().join("restored1"));
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");

    // Deleting the first keeps what the second needs.
    engine.delete(id1).unwrap();
    engine.verify(id2).unwrap();
    assert!(shared_files(&bk) <= shared_after_first + added);
    let target = dir.path().join("after-delete");
    engine.restore(id2, &target).unwrap();
    assert_eq!(contents(&Db::open(&target, options(None)).unwrap()), second);
    // Purge keeps the newest, and only its files stay shared (every table
    // of the DB is new after a full compaction).
    db.compact_range(None, None).unwrap();
    db.compact_range_cf(&db.cf("other").unwrap(), None, None)
        .unwrap();
    let id3 = engine.create_backup(&db).unwrap();
    engine.purge_old(1).unwrap();
    let live = db.live_files().unwrap().files.len();
    assert_eq!(shared_files(&bk), live, "unreferenced shared files left");
    assert_eq!(
        engine
            .list()
            .unwrap()
            .iter()
            .map(|b| b.id)
            .collect::<Vec<_>>(),
        vec![id3]
    );
    engine.verify(id3).unwrap();
    assert!(matches!(engine.verify(id2), Err(Error::InvalidArgument(_))));
}

#[test]
fn read_only_engine_and_a_damaged_file() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    write(&db, 0, 600, "a");
    let fs = shale::fs::default_fs();
    let engine = BackupEngine::open(&bk, Arc::clone(&fs)).unwrap();
    let id = engine.create_backup(&db).unwrap();
    // A read-only engine beside the writing one (which holds the LOCK).
    let ro = BackupEngine::open_read_only(&bk, Arc::clone(&fs)).unwrap();
    assert_eq!(ro.list().unwrap().len(), 1);
    ro.verify(id).unwrap();
    let r = ro.create_backup(&db);
    assert!(matches!(r, Err(Error::NotSupported(_))), "{r:?}");
    assert!(matches!(ro.delete(id), Err(Error::NotSupported(_))));
    assert!(matches!(ro.purge_old(0), Err(Error::NotSupported(_))));
    // A second writing engine is refused.
    assert!(matches!(
        BackupEngine::open(&bk, Arc::clone(&fs)),
        Err(Error::Locked(_))
    ));
    // A flipped byte in a shared table: verify names it, restore refuses.
    let table = std::fs::read_dir(bk.join("shared"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&table, &bytes).unwrap();
    match ro.verify(id) {
        Err(Error::Corruption { file, .. }) => {
            assert!(file.ends_with(table.file_name().unwrap().to_str().unwrap()))
        }
        r => panic!("{r:?}"),
    }
    let target = dir.path().join("restored");
    assert!(matches!(
        ro.restore(id, &target),
        Err(Error::Corruption { .. })
    ));
    assert!(!target.exists(), "a refused restore left a directory");
    // A damaged meta file is corruption naming it, not a panic.
    std::fs::write(bk.join("meta").join(id.to_string()), b"{ not json").unwrap();
    match ro.list() {
        Err(Error::Corruption { file, .. }) => assert!(file.contains("meta")),
        r => panic!("{r:?}"),
    }
}

/// A power loss after every file-system call of a second backup: on every
/// image, the first backup verifies and restores whole, and the second is
/// absent or verifies and restores whole.
#[test]
fn power_loss_during_a_backup() {
    let mem = MemFileSystem::new();
    let fs: Arc<dyn FileSystem> = Arc::new(mem.clone());
    mem.create_dir_all(Path::new("/db")).unwrap();
    let db = Db::open("/db", options(Some(Arc::clone(&fs)))).unwrap();
    write(&db, 0, 500, "a");
    let engine = BackupEngine::open("/bk", Arc::clone(&fs)).unwrap();
    let first = contents(&db);
    engine.create_backup(&db).unwrap();
    write(&db, 0, 60, "b");
    let second = contents(&db);
    let start = mem.op_count();
    mem.capture_at(start + 1..start + 5000);
    engine.create_backup(&db).unwrap();
    let end = mem.op_count();
    mem.capture_at(std::iter::empty());
    let captures = mem.take_captures();
    assert!(captures.len() as u64 >= end - start - 1);
    drop(engine);
    let (mut absent, mut whole) = (0, 0);
    let last = captures.keys().next_back().copied();
    let mut images: Vec<(u64, MemFileSystem)> = captures
        .into_iter()
        .filter(|(k, _)| k % 3 == 0 || Some(*k) == last)
        .collect();
    // And a power loss once the backup returned: it was synced.
    images.push((u64::MAX, mem.crash(0.0, 7)));
    for (k, img) in &images {
        let img: Arc<dyn FileSystem> = Arc::new(img.clone());
        let engine = BackupEngine::open("/bk", Arc::clone(&img))
            .unwrap_or_else(|e| panic!("image {k}: open: {e}"));
        let ids: Vec<u32> = engine.list().unwrap().iter().map(|b| b.id).collect();
        assert!(ids == [1] || ids == [1, 2], "image {k}: {ids:?}");
        for (id, want) in [(1, &first), (2, &second)] {
            if !ids.contains(&id) {
                absent += 1;
                continue;
            }
            engine
                .verify(id)
                .unwrap_or_else(|e| panic!("image {k}: verify {id}: {e}"));
            let target = format!("/restored{id}");
            engine.restore(id, &target).unwrap();
            let r = Db::open(&target, options(Some(Arc::clone(&img)))).unwrap();
            assert_eq!(&contents(&r), want, "image {k}: backup {id}");
            if id == 2 {
                whole += 1;
            }
        }
    }
    assert!(absent > 0 && whole > 0, "absent {absent}, whole {whole}");
}

/// `BackupEngineOptions` (issue 39): a backup's checksum reads and a
/// restore's copies go through their rate limiters (every byte counted),
/// and the progress callback sees every file, ending at the totals.
#[test]
fn backups_and_restores_are_paced_and_report_progress() {
    let dir = tempfile::tempdir().unwrap();
    let (db_dir, bk) = (dir.path().join("db"), dir.path().join("backups"));
    let db = Db::open(&db_dir, options(None)).unwrap();
    write(&db, 0, 600, "a");
    let backup_limiter = Arc::new(shale::RateLimiter::new(1 << 30).unwrap());
    let restore_limiter = Arc::new(shale::RateLimiter::new(1 << 30).unwrap());
    let seen = Arc::new(parking_lot::Mutex::new(Vec::<shale::BackupProgress>::new()));
    let s = Arc::clone(&seen);
    let engine = BackupEngine::open_with(
        &bk,
        shale::fs::default_fs(),
        shale::BackupEngineOptions {
            backup_rate_limiter: Some(Arc::clone(&backup_limiter)),
            restore_rate_limiter: Some(Arc::clone(&restore_limiter)),
            progress: Some(Arc::new(move |p: &shale::BackupProgress| s.lock().push(*p))),
        },
    )
    .unwrap();
    let id = engine.create_backup(&db).unwrap();
    let size = engine.list().unwrap()[0].size;
    let files = engine.list().unwrap()[0].file_count;
    let backup_progress = std::mem::take(&mut *seen.lock());
    assert_eq!(backup_progress.len(), files);
    let last = backup_progress.last().unwrap();
    assert_eq!((last.files_done, last.bytes_done), (files, size));
    assert_eq!((last.files_total, last.bytes_total), (files, size));
    assert!(backup_progress
        .windows(2)
        .all(|w| w[0].bytes_done <= w[1].bytes_done));
    assert!(
        backup_limiter.get_total_bytes_through(None) >= size,
        "{} bytes paced, {size} read",
        backup_limiter.get_total_bytes_through(None)
    );
    assert_eq!(restore_limiter.get_total_bytes_through(None), 0);
    engine.restore(id, dir.path().join("r")).unwrap();
    assert!(restore_limiter.get_total_bytes_through(None) >= size);
    let restore_progress = seen.lock().clone();
    assert_eq!(
        restore_progress
            .last()
            .map(|p| (p.files_done, p.bytes_done)),
        Some((files, size))
    );
    let copy = Db::open(dir.path().join("r"), options(None)).unwrap();
    assert_eq!(contents(&copy), contents(&db));
    copy.close().unwrap();
    db.close().unwrap();
}
