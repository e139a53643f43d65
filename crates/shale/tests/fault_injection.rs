//! IO error injection (RELIABILITY.md tests 5, 6 and 13) with
//! `FaultInjectionFs` over `MemFileSystem`.
//!
//! - `eio_at_every_write_path_call`: a fixed workload (open, puts with
//!   `sync` on some, a flush, a compaction, close) makes N mutating calls;
//!   for each i < N the i-th fails with EIO. Checks: the injected error
//!   surfaces (in an `Err` returned by some call, or the
//!   `shale.background-error` property); after a failure, later writes
//!   follow the error's severity (`shale.background-error-severity`): a
//!   failed WAL write (fatal) refuses them with `Error::Poisoned`, a failed
//!   flush or MANIFEST write (hard) with `Error::WritesStopped`, a failed
//!   compaction (soft) lets them continue; after a power loss (`crash(0)`) every write acknowledged with `sync` is present;
//!   after a process crash every acknowledged write is present; what is
//!   recovered is a prefix of the puts (a failed write is "unknown").
//! - The same with torn appends, and with read errors (which need not
//!   poison the DB but must surface and lose nothing).
//! - WAL fsync failure: the write fails, later writes and `flush_wal(true)`
//!   fail, nothing is reported OK after it, reopen has every earlier ack.
//! - ENOSPC on the WAL: a clean `is_no_space` error, writes refused,
//!   `Db::resume` refuses, and after space returns a reopen has every ack
//!   and works. ENOSPC on a flush: the same error, writes refused until
//!   space returns and `Db::resume` succeeds, without a reopen.
//!
//! Automatic resumes are off here (`max_bgerror_resume_count: 0`) so each
//! run is deterministic; tests/bg_error_recovery.rs covers them.
//!
//! Excluded from the sweeps: `LOG` (best effort by design), `remove` (the
//! obsolete-file sweep only logs a failed delete) and `list` (the sweep
//! skips a directory it cannot list).

use std::path::Path;
use std::sync::Arc;

mod common;
use common::fault_options;
use shale::fs::{
    FaultInjectionFs, FaultKind, FaultOp, FaultRule, FileSystem, MemFileSystem, Trigger,
};
use shale::{Db, Error};

const DIR: &str = "/db";
const PUTS: u32 = 60;

fn kv(i: u32) -> (Vec<u8>, Vec<u8>) {
    (
        format!("key{i:04}").into_bytes(),
        format!("value{i}-{}", "x".repeat((i % 40) as usize)).into_bytes(),
    )
}

fn put(db: &Db, i: u32, sync: bool) -> shale::Result<()> {
    common::put_kv(db, kv(i), sync)
}

/// What one run of the workload saw.
#[derive(Default, Debug)]
struct Run {
    /// Puts that returned Ok: (index, sync).
    acked: Vec<(u32, bool)>,
    /// Every error returned, with what returned it.
    errors: Vec<(String, Error)>,
    /// The `shale.background-error` property before close.
    bg_error: String,
    /// Violations of "refused after a failure".
    violations: Vec<String>,
    /// Calls matched by the first rule when each `close` returned.
    close_ends: Vec<u64>,
}

impl Run {
    fn surfaced(&self, marker: &str) -> bool {
        self.errors
            .iter()
            .any(|(_, e)| e.to_string().contains(marker))
            || self.bg_error.contains(marker)
    }
}

/// The error a put must fail with after a failure of `severity` (`None`:
/// the put may succeed).
fn refusal_for(severity: &str) -> Option<fn(&Error) -> bool> {
    match severity {
        "fatal" => Some(|e| matches!(e, Error::Poisoned(_))),
        "hard" => Some(|e| matches!(e, Error::WritesStopped(_))),
        _ => None,
    }
}

/// The fixed workload. With `poison_check`, once a write, flush or
/// compaction failed, every later write must be refused as the recorded
/// error's severity says (a soft error refuses nothing).
fn workload(faulty: &FaultInjectionFs, poison_check: bool) -> Run {
    let fs: Arc<dyn FileSystem> = Arc::new(faulty.clone());
    let mut run = Run::default();
    let db = match Db::open(DIR, fault_options(Arc::clone(&fs))) {
        Ok(db) => db,
        Err(e) => {
            run.errors.push(("open".into(), e));
            return run;
        }
    };
    // The severity recorded after the first failure.
    let mut failed: Option<String> = None;
    let severity = |db: &Db| {
        db.property("shale.background-error-severity")
            .unwrap_or_default()
    };
    for i in 0..PUTS {
        let sync = i % 4 == 3;
        let refuse = failed.as_deref().and_then(refusal_for);
        match put(&db, i, sync) {
            Ok(()) => {
                if refuse.is_some() && poison_check {
                    run.violations
                        .push(format!("put {i} returned Ok after a {failed:?} failure"));
                }
                run.acked.push((i, sync));
            }
            Err(e) => {
                if poison_check && failed.is_some() && !refuse.is_some_and(|ok| ok(&e)) {
                    run.violations
                        .push(format!("put {i} after a {failed:?} failure: {e:?}"));
                }
                run.errors.push((format!("put {i}"), e));
                failed.get_or_insert_with(|| severity(&db));
            }
        }
        if poison_check && failed.as_deref() == Some("none") {
            run.violations
                .push(format!("a failure before put {i} left no background error"));
        }
        if i % 10 == 9 {
            let k = kv(i / 2).0;
            if let Err(e) = db.get(&k) {
                run.errors.push((format!("get after {i}"), e));
            }
        }
        let job = match i {
            20 => Some(("flush", db.flush())),
            40 => Some(("compact_range", db.compact_range(None, None))),
            _ => None,
        };
        if let Some((what, Err(e))) = job {
            run.errors.push((what.into(), e));
            failed.get_or_insert_with(|| severity(&db));
        }
    }
    run.bg_error = db.property("shale.background-error").unwrap_or_default();
    if let Err(e) = db.close() {
        run.errors.push(("close".into(), e));
    }
    run.close_ends
        .push(faulty.rule_matches().first().copied().unwrap_or(0));
    // Recovery reads and writes too: reopen, read, close.
    match Db::open(DIR, fault_options(fs)) {
        Ok(db) => {
            for i in [0, PUTS / 2, PUTS - 1] {
                if let Err(e) = db.get(&kv(i).0) {
                    run.errors.push((format!("get {i} after reopen"), e));
                }
            }
            if let Err(e) = db.close() {
                run.errors.push(("close after reopen".into(), e));
            }
            run.close_ends
                .push(faulty.rule_matches().first().copied().unwrap_or(0));
        }
        Err(e) => run.errors.push(("reopen".into(), e)),
    }
    run
}

/// Reopens `image` and checks that the puts present are a prefix 0..m with
/// their values, with m covering `need`; returns m.
fn check_recovered(image: &MemFileSystem, need: u32, ctx: &str) -> u32 {
    let db = Db::open(DIR, fault_options(Arc::new(image.clone())))
        .unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e}"));
    let mut m = 0u32;
    for item in db.range(..) {
        let (k, v) = item.unwrap_or_else(|e| panic!("{ctx}: scan: {e}"));
        assert_eq!(
            (k.clone(), v),
            kv(m),
            "{ctx}: recovered puts are not a prefix (at {})",
            String::from_utf8_lossy(&k)
        );
        m += 1;
    }
    assert!(m >= need, "{ctx}: recovered {m} puts, acks need {need}");
    m
}

/// Number of acked puts that must survive: with `synced_only`, up to the
/// last acked put with sync.
fn need(run: &Run, synced_only: bool) -> u32 {
    run.acked
        .iter()
        .filter(|(_, s)| *s || !synced_only)
        .map(|(i, _)| i + 1)
        .max()
        .unwrap_or(0)
}

/// Runs the workload once per matching call of `rule(i)`, failing call i.
fn sweep(label: &str, base: FaultRule, make: impl Fn(u64) -> FaultRule, poison_check: bool) {
    // Count the calls the rules will see.
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    fs.add_rule(base);
    let clean = workload(&fs, poison_check);
    assert!(
        clean.errors.is_empty(),
        "{label}: clean run failed: {:?}",
        clean.errors
    );
    let n = fs.rule_matches()[0];
    assert!(n > 20, "{label}: only {n} calls");
    let mut surfaced_as = std::collections::BTreeMap::<String, u32>::new();
    for i in 0..n {
        let ctx = format!("{label}: fault at call {i} of {n}");
        let mem = MemFileSystem::new();
        let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
        fs.add_rule(make(i));
        let run = workload(&fs, poison_check);
        let ledger = fs.ledger();
        assert_eq!(ledger.len(), 1, "{ctx}: injected {ledger:?}");
        let f = &ledger[0];
        if clean.close_ends.contains(&(i + 1)) && f.op == FaultOp::Flush {
            // The last call of `close` is the WAL flush of the second
            // shutdown it runs when it drops the handle; nothing is left to
            // flush then, and its error is dropped with the handle.
            println!(
                "{ctx}: {:?} on {} after close, not surfaced",
                f.op,
                f.path.display()
            );
            continue;
        }
        assert!(
            run.surfaced(&f.marker()),
            "{ctx}: {:?} on {} never surfaced; errors {:?}",
            f.op,
            f.path.display(),
            run.errors
        );
        assert!(run.violations.is_empty(), "{ctx}: {:?}", run.violations);
        let first = run.errors.first().map_or("-".to_string(), |(w, _)| {
            w.split(' ').next().unwrap_or("").to_string()
        });
        *surfaced_as.entry(first).or_default() += 1;
        // Power loss: synced acks survive. Process crash: all acks survive.
        check_recovered(
            &mem.crash(0.0, i),
            need(&run, true),
            &format!("{ctx}, power loss"),
        );
        check_recovered(
            &mem.crash_process(),
            need(&run, false),
            &format!("{ctx}, process crash"),
        );
    }
    println!("{label}: {n} faults injected, first error returned by {surfaced_as:?}");
}

fn write_path_rule(trigger: Trigger) -> FaultRule {
    FaultRule::new(FaultKind::Eio, trigger)
        .ops(&[
            FaultOp::Create,
            FaultOp::Append,
            FaultOp::Flush,
            FaultOp::Sync,
            FaultOp::Rename,
            FaultOp::SyncDir,
        ])
        .except_path("LOG")
}

#[test]
fn eio_at_every_write_path_call() {
    sweep(
        "EIO",
        write_path_rule(Trigger::OnIndex(u64::MAX)),
        |i| write_path_rule(Trigger::OnIndex(i)),
        true,
    );
}

#[test]
fn torn_append_at_every_append() {
    let rule = |t| {
        FaultRule::new(FaultKind::Eio, t)
            .ops(&[FaultOp::Append])
            .except_path("LOG")
            .torn_writes()
    };
    sweep(
        "torn append",
        rule(Trigger::OnIndex(u64::MAX)),
        |i| rule(Trigger::OnIndex(i)),
        true,
    );
}

#[test]
fn read_error_at_every_read() {
    let rule = |t| {
        FaultRule::new(FaultKind::Eio, t)
            .ops(&[FaultOp::Open, FaultOp::Read])
            .except_path("LOG")
    };
    sweep(
        "read EIO",
        rule(Trigger::OnIndex(u64::MAX)),
        |i| rule(Trigger::OnIndex(i)),
        false,
    );
}

#[test]
fn wal_fsync_failure_poisons_and_is_never_reported_ok() {
    for nth in [0u64, 3, 7] {
        let ctx = format!("WAL fsync #{nth} fails");
        let mem = MemFileSystem::new();
        let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
        fs.add_rule(
            FaultRule::new(FaultKind::Eio, Trigger::OnIndex(nth))
                .ops(&[FaultOp::Sync])
                .path(".log"),
        );
        let db = Db::open(DIR, fault_options(Arc::new(fs.clone()))).expect("open");
        let mut acked = 0u32;
        let mut failed_at = None;
        for i in 0..20u32 {
            match put(&db, i, true) {
                Ok(()) => {
                    assert!(
                        failed_at.is_none(),
                        "{ctx}: put {i} Ok after the failed fsync"
                    );
                    acked = i + 1;
                }
                Err(e) => {
                    if failed_at.is_some() {
                        assert!(matches!(e, Error::Poisoned(_)), "{ctx}: put {i}: {e}");
                    } else {
                        assert!(e.to_string().contains("injected fault #1"), "{ctx}: {e}");
                        failed_at = Some(i);
                    }
                }
            }
        }
        assert_eq!(failed_at, Some(nth as u32), "{ctx}");
        // A retried fsync must not turn the failure into a success.
        assert!(
            db.flush_wal(true).is_err(),
            "{ctx}: flush_wal(true) after a failed fsync"
        );
        assert!(
            put(&db, 99, false).is_err(),
            "{ctx}: non-sync write after a failed fsync"
        );
        assert!(db.flush().is_err(), "{ctx}: flush after a failed fsync");
        assert_eq!(fs.ledger().len(), 1, "{ctx}");
        assert!(db.close().is_err(), "{ctx}: close reports the error");
        let m = check_recovered(&mem.crash(0.0, nth), acked, &format!("{ctx}, power loss"));
        assert!(m <= acked + 1, "{ctx}");
        check_recovered(
            &mem.crash_process(),
            acked,
            &format!("{ctx}, process crash"),
        );
        // The un-faulted file system reopens and takes writes again.
        let db = Db::open(DIR, fault_options(Arc::new(mem.clone()))).expect("reopen");
        put(&db, 1000, true).expect("write after reopen");
    }
}

/// A full disk: ENOSPC from call `from` of the selected kind on; then space
/// returns (`clear_rules`). With `resumable` (a hard error) writes are
/// refused with `WritesStopped` until `Db::resume` succeeds, which needs the
/// space back; otherwise (fatal) with `Poisoned`, `resume` refuses, and only
/// a reopen recovers.
fn no_space(label: &str, rule: FaultRule, job: impl Fn(&Db) -> shale::Result<()>, resumable: bool) {
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let db = Db::open(DIR, fault_options(Arc::new(fs.clone()))).expect("open");
    fs.add_rule(rule);
    let mut acked = 0u32;
    let mut first: Option<Error> = None;
    for i in 0..40u32 {
        let r = put(&db, i, i % 3 == 2).and_then(|()| if i % 10 == 9 { job(&db) } else { Ok(()) });
        match r {
            Ok(()) if first.is_none() => acked = i + 1,
            Ok(()) => panic!("{label}: put {i} Ok after ENOSPC"),
            Err(e) if first.is_none() => first = Some(e),
            Err(Error::WritesStopped(_)) if resumable => {}
            Err(Error::Poisoned(_)) if !resumable => {}
            Err(e) => panic!("{label}: put {i}: {e:?}"),
        }
    }
    let e = first.unwrap_or_else(|| panic!("{label}: no error"));
    assert!(e.is_no_space(), "{label}: first error is not ENOSPC: {e:?}");
    assert!(!fs.ledger().is_empty());
    let severity = db.property("shale.background-error-severity");
    let want = if resumable { "hard" } else { "fatal" };
    assert_eq!(severity.as_deref(), Some(want), "{label}");
    if resumable {
        let still_full = db.resume().expect_err("resume while the disk is full");
        assert!(still_full.is_no_space(), "{label}: {still_full:?}");
    }
    // Space comes back.
    fs.clear_rules();
    if resumable {
        db.resume().expect("resume after space returned");
        assert_eq!(
            db.property("shale.background-error-severity").as_deref(),
            Some("none")
        );
        assert_eq!(
            db.property("shale.bg-error-recovery-count").as_deref(),
            Some("1")
        );
        put(&db, 500, true).expect("write after resume");
        db.flush().expect("flush after resume");
        assert!(db.get(&kv(500).0).expect("get").is_some(), "{label}");
    } else {
        assert!(
            matches!(db.resume(), Err(Error::Poisoned(_))),
            "{label}: a fatal error is not resumable"
        );
        assert!(
            put(&db, 500, true).is_err(),
            "{label}: writes refused until reopen"
        );
    }
    assert!(db.get(&kv(0).0).is_ok(), "{label}: reads still work");
    let _ = db.close();
    let db =
        Db::open(DIR, fault_options(Arc::new(fs.clone()))).expect("reopen after space returned");
    for i in 0..acked {
        let got = db.get(&kv(i).0).expect("get").map(|v| v.to_vec());
        assert_eq!(got, Some(kv(i).1), "{label}: acked put {i} lost");
    }
    put(&db, 1000, true).expect("write after reopen");
    db.flush().expect("flush after reopen");
    db.compact_range(None, None).expect("compact after reopen");
    db.close().expect("close");
    // And a power loss afterwards loses nothing that was acked.
    let db =
        Db::open(DIR, fault_options(Arc::new(mem.crash(0.0, 1)))).expect("reopen after power loss");
    assert!(db.get(&kv(1000).0).expect("get").is_some(), "{label}");
    for i in 0..acked {
        assert!(
            db.get(&kv(i).0).expect("get").is_some(),
            "{label}: put {i} lost"
        );
    }
    println!("{label}: {acked} puts acked before ENOSPC: {e}");
}

#[test]
fn enospc_on_wal_append() {
    no_space(
        "ENOSPC on the WAL",
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(25))
            .ops(&[FaultOp::Append, FaultOp::Flush, FaultOp::Sync])
            .path(".log"),
        |_| Ok(()),
        false,
    );
}

#[test]
fn enospc_on_flush() {
    no_space(
        "ENOSPC on a flush",
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(0))
            .ops(&[
                FaultOp::Create,
                FaultOp::Append,
                FaultOp::Flush,
                FaultOp::Sync,
            ])
            .path(".sst"),
        Db::flush,
        true,
    );
}

#[test]
fn second_open_on_the_same_file_system_is_locked() {
    let mem = MemFileSystem::new();
    let db = Db::open(DIR, fault_options(Arc::new(mem.clone()))).expect("open");
    assert!(matches!(
        Db::open(DIR, fault_options(Arc::new(mem.clone()))),
        Err(Error::Locked(_))
    ));
    // A crash image starts with no lock held.
    drop(Db::open(DIR, fault_options(Arc::new(mem.crash(1.0, 0)))).expect("open image"));
    drop(db);
    drop(Db::open(DIR, fault_options(Arc::new(mem))).expect("reopen after close"));
    assert!(Path::new(DIR).is_absolute());
}
