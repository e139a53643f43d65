//! WAL retention with column families (issue 11): one WAL serves every
//! family, so a family written once and then left idle would keep every WAL
//! since its write alive (its memtable is never full, never flushed) unless
//! `max_total_wal_size` flushes it. These tests write once to an idle family,
//! then many megabytes to another family only, and sample after every write:
//! - the `.log` files in the directory and the properties
//!   `shale.live-wal-files` / `shale.live-wal-bytes` (which must agree with
//!   the directory);
//! - the live WAL bytes must stay at most `max_total_wal_size` plus one write
//!   buffer, and the number of WAL files bounded accordingly;
//!
//! with an explicit limit and with the default (0 = 4 × the sum of every
//! family's write buffer). The idle family's write must read back after a
//! reopen, and after a simulated power loss on `MemFileSystem`.

use std::path::Path;
use std::sync::Arc;

use shale::fs::{FileSystem, MemFileSystem};
use shale::{CfOptions, Db, Options};

const WRITE_BUFFER: usize = 64 << 10;
const VALUE: usize = 1000;
/// Bytes written to the busy family (each test).
const WRITTEN: usize = 8 << 20;

fn cf_opts() -> CfOptions {
    CfOptions {
        write_buffer_size: WRITE_BUFFER,
        ..CfOptions::default()
    }
}

/// What one run saw.
#[derive(Debug, Default)]
struct Peak {
    /// Most `.log` files in the directory at once.
    files: usize,
    /// Most bytes in `.log` files in the directory at once.
    dir_bytes: u64,
    /// Peaks of the properties.
    prop_files: u64,
    prop_bytes: u64,
    /// Samples taken.
    samples: u64,
    /// The bound on WAL files checked.
    max_files: usize,
}

/// `.log` files in `dir`: (count, bytes).
fn wal_files(fs: &dyn FileSystem, dir: &Path) -> (usize, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for name in fs.list(dir).expect("list") {
        if name.ends_with(".log") {
            n += 1;
            bytes += fs.file_size(&dir.join(&name)).unwrap_or(0);
        }
    }
    (n, bytes)
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name)
        .unwrap_or_else(|| panic!("property {name} missing"))
        .parse()
        .unwrap_or_else(|e| panic!("property {name}: {e}"))
}

/// Opens `dir` on `fs` with `max_total_wal_size` = `limit` and runs the
/// workload: "idle" written once, then `WRITTEN` bytes to `busy` (or to
/// `default` when `busy_is_default`). Every sample must keep the live WAL
/// bytes at most the limit in force plus `slack_buffers` write buffers.
/// Returns the DB and its peaks; panics if a sample breaks the bounds.
fn run(
    fs: Arc<dyn FileSystem>,
    dir: &Path,
    limit: u64,
    busy_is_default: bool,
    slack_buffers: u64,
) -> (Db, Peak) {
    let opts = Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: WRITE_BUFFER,
            ..Default::default()
        },
        max_total_wal_size: limit,
        fs: Arc::clone(&fs),
        ..Options::default()
    };
    let db = Db::open(dir, opts).expect("open");
    let idle = db.create_cf("idle", cf_opts()).expect("create idle");
    db.put_cf(&idle, b"once", b"written before everything else")
        .expect("put idle");
    let busy = if busy_is_default {
        db.default_cf()
    } else {
        db.create_cf("busy", cf_opts()).expect("create busy")
    };
    // The limit in force: the default is 4 x the sum of every family's
    // write buffer.
    let families = if busy_is_default { 2 } else { 3 };
    let effective = match limit {
        0 => 4 * families * WRITE_BUFFER as u64,
        n => n,
    };
    let max_bytes = effective + slack_buffers * WRITE_BUFFER as u64;
    // Files: a WAL holds up to about one write buffer of writes (a memtable's
    // overhead makes it less), but a switch forced by the limit can close a
    // WAL early; allow WALs of half a write buffer on average, plus the one
    // being written and one whose flush is finishing.
    let max_files = (2 * effective / WRITE_BUFFER as u64) as usize + 2;
    let value = vec![b'v'; VALUE];
    let mut peak = Peak {
        max_files,
        ..Peak::default()
    };
    for i in 0..(WRITTEN / VALUE) as u32 {
        db.put_cf(&busy, format!("key{i:08}").as_bytes(), &value)
            .expect("put busy");
        let (files, dir_bytes) = wal_files(fs.as_ref(), dir);
        let (prop_files, prop_bytes) = (
            prop(&db, "shale.live-wal-files"),
            prop(&db, "shale.live-wal-bytes"),
        );
        peak.files = peak.files.max(files);
        peak.dir_bytes = peak.dir_bytes.max(dir_bytes);
        peak.prop_files = peak.prop_files.max(prop_files);
        peak.prop_bytes = peak.prop_bytes.max(prop_bytes);
        peak.samples += 1;
        let ctx = format!("after put {i} (limit {limit}, in force {effective}): {peak:?}");
        // A memory-mapped WAL (`Options::wal_mmap_writes`, the default, on
        // the real file system) holds up to 1 MiB reserved ahead on disk
        // until its writer is dropped: the one being written, and a closed
        // one until it is synced or obsolete and the next obsolete-file
        // pass drops its writer outside the DB mutex (as RocksDB keeps a
        // WAL's preallocation until it closes the writer). The property
        // counts records only.
        let reserved = (1u64 << 20) * files as u64;
        assert!(
            prop_bytes <= max_bytes && dir_bytes <= max_bytes + reserved,
            "{ctx}: live WAL bytes {prop_bytes} (directory {dir_bytes}) above \
             max_total_wal_size + {slack_buffers} write buffer(s) = {max_bytes}"
        );
        assert!(
            prop_files as usize <= max_files && files <= max_files,
            "{ctx}: {prop_files} live WALs ({files} in the directory), bound {max_files}"
        );
    }
    // Once background work is done, the directory holds exactly the WALs
    // the properties count (obsolete WALs are deleted in the background, so
    // the directory may lag them while writes go on).
    db.flush_cf(&busy).expect("flush busy");
    db.wait_for_compaction().expect("wait for compaction");
    let (files, dir_bytes) = wal_files(fs.as_ref(), dir);
    let (prop_files, prop_bytes) = (
        prop(&db, "shale.live-wal-files"),
        prop(&db, "shale.live-wal-bytes"),
    );
    // (The open WAL's reserved megabyte shows in the directory only.)
    assert!(
        files as u64 == prop_files && dir_bytes >= prop_bytes && dir_bytes - prop_bytes <= 1 << 20,
        "WAL files in the directory ({files}, {dir_bytes} bytes) vs \
         shale.live-wal-files/-bytes ({prop_files}, {prop_bytes}) once idle"
    );
    println!("limit {limit} (in force {effective}): {peak:?}");
    (db, peak)
}

fn idle_value(db: &Db) -> Option<Vec<u8>> {
    let idle = db.cf("idle").expect("idle family exists");
    db.get_cf(&idle, b"once")
        .expect("get idle")
        .map(|v| v.to_vec())
}

fn reopen_opts(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        cf: CfOptions {
            write_buffer_size: WRITE_BUFFER,
            ..Default::default()
        },
        fs,
        ..Options::default()
    }
}

#[test]
fn idle_family_does_not_keep_old_wals_under_an_explicit_limit() {
    let d = tempfile::tempdir().expect("tempdir");
    let fs: Arc<dyn FileSystem> = Arc::new(shale::fs::PosixFileSystem::default());
    let (db, _) = run(Arc::clone(&fs), d.path(), 512 << 10, false, 1);
    db.close().expect("close");
    let db = Db::open(d.path(), reopen_opts(fs)).expect("reopen");
    assert_eq!(
        idle_value(&db).as_deref(),
        Some(&b"written before everything else"[..])
    );
}

#[test]
fn idle_family_does_not_keep_old_wals_under_the_default_limit() {
    let d = tempfile::tempdir().expect("tempdir");
    let fs: Arc<dyn FileSystem> = Arc::new(shale::fs::PosixFileSystem::default());
    let (db, _) = run(Arc::clone(&fs), d.path(), 0, true, 1);
    db.close().expect("close");
    let db = Db::open(d.path(), reopen_opts(fs)).expect("reopen");
    assert_eq!(
        idle_value(&db).as_deref(),
        Some(&b"written before everything else"[..])
    );
}

/// After the busy writes, a power loss that drops every unsynced byte: the
/// idle family's write was flushed (or its WAL synced at a memtable switch),
/// so it survives, and the recovered DB replays only the few live WALs.
#[test]
fn idle_family_write_survives_power_loss_after_its_wals_are_gone() {
    for (limit, busy_is_default) in [(256 << 10, false), (0, true)] {
        let mem = MemFileSystem::new();
        let dir = Path::new("/db");
        let (db, peak) = run(Arc::new(mem.clone()), dir, limit, busy_is_default, 1);
        let image = mem.crash(0.0, 7);
        drop(db);
        let (files, _) = wal_files(&image, dir);
        assert!(
            files <= peak.max_files,
            "limit {limit}: {files} WALs in the power-loss image, bound {}",
            peak.max_files
        );
        let db = Db::open(dir, reopen_opts(Arc::new(image))).expect("open after power loss");
        assert_eq!(
            idle_value(&db).as_deref(),
            Some(&b"written before everything else"[..]),
            "limit {limit}: the idle family's write was lost"
        );
    }
}

/// The bound of issue 11: while one family takes every write, the live WAL
/// bytes stay at most `max_total_wal_size` plus one write buffer.
///
/// Failed on 7e45678 in most runs: at put 569-570 the live WALs held
/// 590,070-590,534 bytes, 246-710 above 524,288 + 65,536, because the idle
/// family's flush waited behind the busy family's flushes while writes went
/// on. Since c0701f1 the flushes that free the oldest WAL go first and
/// writers wait once the live WALs pass the limit by half a write buffer.
#[test]
fn live_wal_bytes_stay_under_max_total_wal_size_plus_one_write_buffer() {
    for (limit, busy_is_default) in [(512 << 10, false), (0, true)] {
        let d = tempfile::tempdir().expect("tempdir");
        let fs: Arc<dyn FileSystem> = Arc::new(shale::fs::PosixFileSystem::default());
        let (db, _) = run(fs, d.path(), limit, busy_is_default, 1);
        db.close().expect("close");
    }
}
