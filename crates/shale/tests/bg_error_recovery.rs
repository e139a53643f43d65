//! Recovery from background errors without a reopen (issue 10, defect 6)
//! and MANIFEST IO outside the DB mutex (defect 4), on `MemFileSystem` with
//! `FaultInjectionFs`:
//!
//! - ENOSPC while a compaction writes its output: a soft error (visible in
//!   the properties), writes continue, automatic resumes retry while the
//!   disk is full, and once space returns the compaction succeeds, nothing
//!   is lost and no failed output is left behind.
//! - ENOSPC on the MANIFEST append of a flush: a hard error, writes refused
//!   with `WritesStopped`, `Db::resume` fails while the disk is full and
//!   afterwards rolls to a new MANIFEST; a reopen sees everything.
//! - A failed MANIFEST fsync whose edit did reach the file: a crash before
//!   the resume recovers the flushed table (it was not deleted).
//! - A failed WAL fsync is fatal: `Db::resume` refuses until a reopen.
//! - While a MANIFEST fsync is blocked, other threads get the DB mutex
//!   (properties, writes).

use std::path::Path;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
mod common;
use common::fault_options;
use shale::fs::{
    FaultInjectionFs, FaultKind, FaultOp, FaultRule, FileLock, FileSystem, MemFileSystem,
    RandomAccessFile, SequentialFile, Trigger, WritableFile,
};
use shale::{Db, Error, Options};

const DIR: &str = "/db";

fn kv(i: u32) -> (Vec<u8>, Vec<u8>) {
    (
        format!("key{i:05}").into_bytes(),
        format!("value{i}-{}", "v".repeat((i % 50) as usize)).into_bytes(),
    )
}

fn put(db: &Db, i: u32, sync: bool) -> shale::Result<()> {
    common::put_kv(db, kv(i), sync)
}

fn put_range(db: &Db, r: std::ops::Range<u32>) {
    for i in r {
        put(db, i, i % 7 == 0).unwrap_or_else(|e| panic!("put {i}: {e}"));
    }
}

fn check_all(db: &Db, r: std::ops::Range<u32>, ctx: &str) {
    for i in r {
        let got = db.get(&kv(i).0).expect("get").map(|v| v.to_vec());
        assert_eq!(got, Some(kv(i).1), "{ctx}: put {i}");
    }
}

fn prop(db: &Db, name: &str) -> String {
    db.property(name).unwrap_or_default()
}

/// Polls `cond` every 5 ms for up to 20 s.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn files_with(mem: &MemFileSystem, what: &str) -> Vec<String> {
    common::sorted_names(mem, DIR, |n| n.contains(what))
}

/// The SST files in the directory are exactly the live ones.
fn assert_no_stray_tables(db: &Db, mem: &MemFileSystem, ctx: &str) {
    let live: usize = (0..7)
        .map(|l| {
            prop(db, &format!("shale.num-files-at-level{l}"))
                .parse::<usize>()
                .expect("level count")
        })
        .sum();
    assert_eq!(
        files_with(mem, ".sst").len(),
        live,
        "{ctx}: {:?}",
        files_with(mem, ".sst")
    );
}

#[test]
fn enospc_during_compaction_is_soft_and_resumes_automatically() {
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let db = Db::open(DIR, {
        let base = fault_options(Arc::new(fs.clone()));
        Options {
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 2,
                ..base.cf
            },
            max_bgerror_resume_count: i32::MAX as u64,
            bgerror_resume_retry_interval: 100_000,
            ..base
        }
    })
    .expect("open");
    put_range(&db, 0..300);
    db.flush().expect("flush 1");
    // The disk fills up after the next flush's table: the compaction that
    // flush triggers (two L0 files) cannot write its output.
    fs.add_rule(
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(1))
            .ops(&[FaultOp::Create])
            .path(".sst"),
    );
    // Overlapping the first table's keys, so no trivial move.
    put_range(&db, 150..600);
    db.flush().expect("flush 2 (its table fits)");
    wait_until("a soft background error", || {
        prop(&db, "shale.background-error-severity") == "soft"
    });
    assert!(
        prop(&db, "shale.background-error").contains("No space")
            || prop(&db, "shale.background-error").contains("injected"),
        "{}",
        prop(&db, "shale.background-error")
    );
    // Writes continue under a soft error.
    assert_eq!(prop(&db, "shale.is-write-stopped"), "0");
    put_range(&db, 600..900);
    // Automatic resumes retry the compaction while the disk is still full.
    wait_until("two automatic resume attempts", || {
        prop(&db, "shale.bg-error-resume-attempts")
            .parse::<u64>()
            .unwrap_or(0)
            >= 2
    });
    assert_eq!(prop(&db, "shale.num-files-at-level0"), "2");
    let failures = fs.ledger().len();
    assert!(failures >= 2, "{failures} injected faults");

    // Space comes back: the next automatic resume succeeds, no reopen.
    fs.clear_rules();
    wait_until("the compaction after the resume", || {
        prop(&db, "shale.background-error-severity") == "none"
            && prop(&db, "shale.num-files-at-level0") == "0"
    });
    assert!(
        prop(&db, "shale.bg-error-recovery-count")
            .parse::<u64>()
            .unwrap_or(0)
            >= 1
    );
    db.wait_for_compaction().expect("idle");
    check_all(&db, 0..900, "after the automatic resume");
    assert_no_stray_tables(&db, &mem, "failed compaction outputs are deleted");
    db.close().expect("close");
    let db = Db::open(DIR, fault_options(Arc::new(mem.clone()))).expect("reopen");
    check_all(&db, 0..900, "after reopen");
}

#[test]
fn enospc_on_manifest_append_during_flush_is_hard_and_resume_rolls_the_manifest() {
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let db = Db::open(DIR, fault_options(Arc::new(fs.clone()))).expect("open");
    put_range(&db, 0..200);
    let manifest_before = files_with(&mem, "MANIFEST");
    assert_eq!(manifest_before.len(), 1);
    fs.add_rule(
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(0))
            .ops(&[FaultOp::Create, FaultOp::Append, FaultOp::Sync])
            .path("MANIFEST"),
    );
    let e = db.flush().expect_err("flush with a full disk");
    assert!(e.is_no_space(), "{e:?}");
    assert_eq!(prop(&db, "shale.background-error-severity"), "hard");
    assert_eq!(prop(&db, "shale.is-write-stopped"), "1");
    let refused = put(&db, 1000, false).expect_err("write under a hard error");
    assert!(matches!(refused, Error::WritesStopped(_)), "{refused:?}");
    check_all(&db, 0..200, "reads under a hard error");
    // Still full: the resume's MANIFEST roll fails and the error stays.
    let again = db.resume().expect_err("resume while the disk is full");
    assert!(again.is_no_space(), "{again:?}");
    assert_eq!(prop(&db, "shale.background-error-severity"), "hard");

    fs.clear_rules();
    db.resume().expect("resume after space returned");
    assert_eq!(prop(&db, "shale.background-error-severity"), "none");
    assert_eq!(prop(&db, "shale.is-write-stopped"), "0");
    assert_eq!(prop(&db, "shale.bg-error-recovery-count"), "1");
    assert_eq!(
        prop(&db, "shale.num-immutable-mem-table"),
        "0",
        "resume flushed"
    );
    let manifest_after = files_with(&mem, "MANIFEST");
    assert_eq!(manifest_after.len(), 1, "{manifest_after:?}");
    assert_ne!(
        manifest_after, manifest_before,
        "resume rolled the MANIFEST"
    );
    assert_no_stray_tables(&db, &mem, "after resume");
    put_range(&db, 200..300);
    db.flush().expect("flush after resume");
    check_all(&db, 0..300, "after resume");
    db.close().expect("close");
    let db = Db::open(DIR, fault_options(Arc::new(mem.clone()))).expect("reopen");
    check_all(&db, 0..300, "after reopen");
    assert_no_stray_tables(&db, &mem, "after reopen");
}

#[test]
fn failed_manifest_fsync_keeps_the_flushed_table_for_a_crash_before_resume() {
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let db = Db::open(DIR, fault_options(Arc::new(fs.clone()))).expect("open");
    put_range(&db, 0..200);
    // The edit is appended (and so may be on disk) but its fsync fails.
    fs.add_rule(
        FaultRule::new(FaultKind::Eio, Trigger::FromIndex(0))
            .ops(&[FaultOp::Sync])
            .path("MANIFEST"),
    );
    db.flush().expect_err("flush with a failing MANIFEST fsync");
    assert_eq!(prop(&db, "shale.background-error-severity"), "hard");
    // A resume that fails again must not drop what the first edit added.
    db.resume().expect_err("resume while fsync still fails");
    // A process crash keeps the appended edit: the table it names exists.
    let image = mem.crash_process();
    let db2 = Db::open(DIR, fault_options(Arc::new(image))).expect("open the crash image");
    check_all(&db2, 0..200, "crash image before resume");
    drop(db2);

    fs.clear_rules();
    db.resume().expect("resume");
    assert_no_stray_tables(&db, &mem, "after resume");
    check_all(&db, 0..200, "after resume");
    drop(db);
    let db = Db::open(DIR, fault_options(Arc::new(mem.crash_process()))).expect("reopen");
    check_all(&db, 0..200, "after resume and a crash");
}

#[test]
fn wal_fsync_failure_is_fatal_and_resume_refuses() {
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let db = Db::open(
        DIR,
        Options {
            // Automatic resumes on: they must not touch a fatal error.
            max_bgerror_resume_count: i32::MAX as u64,
            bgerror_resume_retry_interval: 1_000,
            ..fault_options(Arc::new(fs.clone()))
        },
    )
    .expect("open");
    put_range(&db, 0..50);
    fs.add_rule(
        FaultRule::new(FaultKind::Eio, Trigger::OnIndex(0))
            .ops(&[FaultOp::Sync])
            .path(".log"),
    );
    put(&db, 50, true).expect_err("sync write with a failing fsync");
    assert_eq!(prop(&db, "shale.background-error-severity"), "fatal");
    fs.clear_rules();
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(prop(&db, "shale.bg-error-resume-attempts"), "0");
    assert!(
        matches!(db.resume(), Err(Error::Poisoned(_))),
        "resume refuses"
    );
    assert!(matches!(put(&db, 51, false), Err(Error::Poisoned(_))));
    assert_eq!(prop(&db, "shale.background-error-severity"), "fatal");
    assert!(db.close().is_err(), "close reports the error");
    let db = Db::open(DIR, fault_options(Arc::new(mem.clone()))).expect("reopen");
    check_all(&db, 0..50, "after reopen");
    put(&db, 51, true).expect("write after reopen");
    db.resume().expect("nothing to resume");
}

#[test]
fn zero_resume_retry_interval_is_invalid() {
    let e = Db::open(
        DIR,
        Options {
            bgerror_resume_retry_interval: 0,
            ..fault_options(Arc::new(MemFileSystem::new()))
        },
    )
    .expect_err("interval 0");
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
}

// ---- the DB mutex during MANIFEST IO ---------------------------------------

/// Blocks every MANIFEST fsync while armed, until released.
#[derive(Default)]
struct Gate {
    state: Mutex<(bool, usize)>, // (armed, threads waiting)
    cv: Condvar,
}

impl Gate {
    fn pass(&self) {
        let mut s = self.state.lock();
        s.1 += 1;
        self.cv.notify_all();
        while s.0 {
            self.cv.wait(&mut s);
        }
        s.1 -= 1;
    }
    fn set(&self, armed: bool) {
        self.state.lock().0 = armed;
        self.cv.notify_all();
    }
    fn wait_for_waiter(&self) {
        let mut s = self.state.lock();
        while s.1 == 0 {
            self.cv.wait(&mut s);
        }
    }
}

struct GatedFs {
    inner: Arc<dyn FileSystem>,
    gate: Arc<Gate>,
}

struct GatedFile {
    inner: Box<dyn WritableFile>,
    gate: Arc<Gate>,
}

impl WritableFile for GatedFile {
    fn append(&mut self, data: &[u8]) -> shale::Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> shale::Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> shale::Result<()> {
        self.gate.pass();
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl FileSystem for GatedFs {
    fn create(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        let f = self.inner.create(path)?;
        if path.to_string_lossy().contains("MANIFEST") {
            return Ok(Box::new(GatedFile {
                inner: f,
                gate: Arc::clone(&self.gate),
            }));
        }
        Ok(f)
    }
    fn open_random(&self, path: &Path) -> shale::Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> shale::Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    fn link(&self, from: &Path, to: &Path) -> shale::Result<shale::fs::LinkKind> {
        self.inner.link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shale::Result<()> {
        self.inner.remove(path)
    }
    fn list(&self, dir: &Path) -> shale::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shale::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> shale::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn file_size(&self, path: &Path) -> shale::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> shale::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

/// Runs `f` on another thread; None if it does not finish within 10 s.
fn within_10s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10)).ok()
}

#[test]
fn manifest_fsync_does_not_hold_the_db_mutex() {
    let gate = Arc::new(Gate::default());
    let fs: Arc<dyn FileSystem> = Arc::new(GatedFs {
        inner: Arc::new(MemFileSystem::new()),
        gate: Arc::clone(&gate),
    });
    let db = Db::open(DIR, fault_options(fs)).expect("open");
    put_range(&db, 0..100);
    gate.set(true);
    let flusher = {
        let db = db.clone();
        std::thread::spawn(move || db.flush())
    };
    gate.wait_for_waiter();
    // The flush's MANIFEST fsync is blocked. Properties and writes take the
    // DB mutex: they must not wait for the fsync.
    let d = db.clone();
    let seen = within_10s(move || d.property("shale.num-immutable-mem-table"));
    let d = db.clone();
    let wrote = within_10s(move || put(&d, 100, false).is_ok());
    gate.set(false);
    flusher.join().expect("flusher").expect("flush");
    assert_eq!(
        seen,
        Some(Some("1".to_string())),
        "property blocked by the MANIFEST fsync"
    );
    assert_eq!(wrote, Some(true), "write blocked by the MANIFEST fsync");
    check_all(&db, 0..101, "after the flush");
}
