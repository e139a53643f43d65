//! Event listeners (`Options::listeners`): call order under concurrent
//! flushes and compactions, listeners calling back into the DB, panicking
//! listeners, background error and recovery callbacks, stall changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use shale::fs::{FaultInjectionFs, FaultKind, FaultOp, FaultRule, MemFileSystem, Trigger};
use shale::sync_point;
use shale::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionJobInfo, Db, ErrorRecoveryCompletedInfo,
    ErrorRecoveryInfo, ErrorSeverity, EventListener, FlushJobInfo, Options, TableFileCreationInfo,
    TableFileDeletionInfo, WriteStallCondition, WriteStallInfo,
};

mod common;
use common::Pause;

/// One recorded callback.
#[derive(Debug, Clone, PartialEq)]
enum Ev {
    FlushBegin(u64),
    FlushDone(u64, Vec<u64>, bool),
    CompactionBegin(u64, Vec<u64>),
    CompactionDone(u64, Vec<u64>, Vec<u64>, bool),
    Created(u64, u64),
    Deleted(u64),
    Stall(WriteStallCondition, WriteStallCondition),
    BgError(BackgroundErrorReason, ErrorSeverity),
    RecoveryBegin(bool),
    RecoveryDone(bool, bool),
}

/// Records every callback in order; optionally calls into the DB from
/// inside the callbacks (which must not deadlock).
#[derive(Default)]
struct Recorder {
    events: Mutex<Vec<Ev>>,
    db: OnceLock<Db>,
    callbacks_into_db: AtomicU64,
}

impl Recorder {
    fn push(&self, e: Ev) {
        self.events.lock().push(e);
    }

    fn snapshot(&self) -> Vec<Ev> {
        self.events.lock().clone()
    }

    /// Reads the DB from inside a callback, when a DB was given.
    fn call_into_db(&self) {
        if let Some(db) = self.db.get() {
            // Both take the DB mutex: a callback under it would deadlock.
            let _ = db.property("shale.num-files-at-level0");
            let _ = db.get(b"key0");
            self.callbacks_into_db.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn numbers(files: &[shale::TableFileInfo]) -> Vec<u64> {
    files.iter().map(|f| f.file_number).collect()
}

impl EventListener for Recorder {
    fn on_flush_begin(&self, i: &FlushJobInfo) {
        assert!(i.output_files.is_empty() && i.status.is_ok());
        self.push(Ev::FlushBegin(i.job_id));
    }
    fn on_flush_completed(&self, i: &FlushJobInfo) {
        self.push(Ev::FlushDone(
            i.job_id,
            numbers(&i.output_files),
            i.status.is_ok(),
        ));
        self.call_into_db();
    }
    fn on_compaction_begin(&self, i: &CompactionJobInfo) {
        assert!(!i.input_files.is_empty(), "{i:?}");
        self.push(Ev::CompactionBegin(i.job_id, numbers(&i.input_files)));
    }
    fn on_compaction_completed(&self, i: &CompactionJobInfo) {
        for f in &i.output_files {
            assert_eq!(f.level, i.output_level, "{i:?}");
        }
        self.push(Ev::CompactionDone(
            i.job_id,
            numbers(&i.input_files),
            numbers(&i.output_files),
            i.status.is_ok(),
        ));
        self.call_into_db();
    }
    fn on_table_file_created(&self, i: &TableFileCreationInfo) {
        assert!(i.file.file_size > 0, "{i:?}");
        assert!(i
            .file_path
            .ends_with(format!("{:06}.sst", i.file.file_number)));
        self.push(Ev::Created(i.job_id, i.file.file_number));
    }
    fn on_table_file_deleted(&self, i: &TableFileDeletionInfo) {
        assert!(i.status.is_ok(), "{i:?}");
        self.push(Ev::Deleted(i.file_number));
    }
    fn on_stall_conditions_changed(&self, i: &WriteStallInfo) {
        assert_ne!(i.prev, i.cur);
        assert_eq!(i.cf_name, "default");
        self.push(Ev::Stall(i.prev, i.cur));
    }
    fn on_background_error(&self, i: &BackgroundErrorInfo) {
        self.push(Ev::BgError(i.reason, i.severity));
    }
    fn on_error_recovery_begin(&self, i: &ErrorRecoveryInfo) {
        self.push(Ev::RecoveryBegin(i.automatic));
    }
    fn on_error_recovery_completed(&self, i: &ErrorRecoveryCompletedInfo) {
        self.push(Ev::RecoveryDone(i.automatic, i.result.is_ok()));
    }
}

/// Checks the ordering guarantees of `crate::events` on a whole run:
/// per job begin < created < completed, one begin and one completed per
/// job, a file deleted only after it was created (if this open created
/// it) and at most once. Returns (created, deleted) file numbers.
fn check_order(evs: &[Ev]) -> (BTreeSet<u64>, BTreeSet<u64>) {
    let mut begun: BTreeSet<u64> = BTreeSet::new();
    let mut done: BTreeSet<u64> = BTreeSet::new();
    let mut created: BTreeMap<u64, u64> = BTreeMap::new(); // file -> job
    let mut deleted: BTreeSet<u64> = BTreeSet::new();
    for (i, e) in evs.iter().enumerate() {
        match e {
            Ev::FlushBegin(j) | Ev::CompactionBegin(j, _) => {
                assert!(begun.insert(*j), "job {j} begun twice (event {i})");
            }
            Ev::FlushDone(j, outs, ok) | Ev::CompactionDone(j, _, outs, ok) => {
                assert!(begun.contains(j), "job {j} completed before it began");
                assert!(done.insert(*j), "job {j} completed twice");
                if *ok {
                    for f in outs {
                        // A trivial move's outputs are its inputs.
                        let moved =
                            matches!(e, Ev::CompactionDone(_, ins, _, _) if ins.contains(f));
                        assert!(
                            moved || created.get(f) == Some(j),
                            "job {j} installed {f}, not created by it before: {evs:?}"
                        );
                    }
                }
            }
            Ev::Created(j, f) => {
                assert!(begun.contains(j), "file {f} created before job {j} began");
                assert!(
                    !done.contains(j),
                    "file {f} created after job {j} completed"
                );
                assert!(created.insert(*f, *j).is_none(), "{f} created twice");
            }
            Ev::Deleted(f) => {
                assert!(deleted.insert(*f), "{f} deleted twice");
            }
            _ => {}
        }
        if let Ev::Deleted(f) = e {
            // Created by this open (all are, in these tests) before.
            assert!(created.contains_key(f), "{f} deleted, never created");
        }
    }
    assert_eq!(begun, done, "every job begun is completed");
    (created.keys().copied().collect(), deleted)
}

/// File numbers of the live tables (the `shale.sstables` property).
fn live_tables(db: &Db) -> BTreeSet<u64> {
    db.property("shale.sstables")
        .expect("sstables")
        .lines()
        .filter_map(|l| l.trim().split(':').next()?.parse().ok())
        .collect()
}

fn tables_on_disk(dir: &Path) -> BTreeSet<u64> {
    std::fs::read_dir(dir)
        .expect("list")
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.strip_suffix(".sst")?.parse().ok()
        })
        .collect()
}

#[test]
fn listener_order_under_concurrent_flushes_and_compactions() {
    // Keeps the stall test's pause off this test's compactions.
    let _x = sync_point::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Arc::new(Recorder::default());
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cf: shale::CfOptions {
                write_buffer_size: 32 << 10,
                max_write_buffer_number: 4,
                level0_file_num_compaction_trigger: 2,
                max_bytes_for_level_base: 128 << 10,
                target_file_size_base: 32 << 10,
                ..Default::default()
            },
            max_background_jobs: 4,
            listeners: vec![rec.clone() as Arc<dyn EventListener>],
            ..Options::default()
        },
    )
    .expect("open");
    let _ = rec.db.set(db.clone());
    std::thread::scope(|s| {
        for t in 0..4u32 {
            let db = &db;
            s.spawn(move || {
                for i in 0..3000u32 {
                    let k = format!("key{}", (i * 7919 + t * 13) % 5000);
                    db.put(
                        k.as_bytes(),
                        format!("{t}-{i}-{}", "x".repeat(40)).as_bytes(),
                    )
                    .expect("put");
                }
            });
        }
    });
    db.flush().expect("flush");
    db.wait_for_compaction().expect("idle");
    let evs = rec.snapshot();
    let (created, deleted) = check_order(&evs);
    let flushes = evs
        .iter()
        .filter(|e| matches!(e, Ev::FlushDone(..)))
        .count();
    let compactions = evs
        .iter()
        .filter(|e| matches!(e, Ev::CompactionDone(..)))
        .count();
    assert!(flushes >= 5, "{flushes} flushes");
    assert!(compactions >= 2, "{compactions} compactions");
    let live = live_tables(&db);
    for f in &created {
        assert!(
            deleted.contains(f) || live.contains(f),
            "table {f} created, neither deleted nor live"
        );
    }
    for f in &deleted {
        assert!(!live.contains(f), "table {f} deleted but live");
    }
    assert_eq!(tables_on_disk(dir.path()), live, "on disk = live");
    assert!(rec.callbacks_into_db.load(Ordering::Relaxed) as usize >= flushes);
    db.close().expect("close");
}

/// Panics in every callback it gets.
struct Panicker(AtomicU64);

impl EventListener for Panicker {
    fn on_flush_begin(&self, _: &FlushJobInfo) {
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("listener boom (flush begin)");
    }
    fn on_flush_completed(&self, _: &FlushJobInfo) {
        self.0.fetch_add(1, Ordering::Relaxed);
        panic!("listener boom (flush completed)");
    }
}

#[test]
fn a_panicking_listener_does_not_take_the_db_down() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().expect("tempdir");
    let boom = Arc::new(Panicker(AtomicU64::new(0)));
    let rec = Arc::new(Recorder::default());
    let db = Db::open(
        dir.path(),
        Options {
            listeners: vec![
                boom.clone() as Arc<dyn EventListener>,
                rec.clone() as Arc<dyn EventListener>,
            ],
            ..common::quiet_options()
        },
    )
    .expect("open");
    for round in 0..3u32 {
        db.put(format!("k{round}").as_bytes(), b"v").expect("put");
        db.flush().expect("flush");
    }
    // The panicking listener kept being called; the one after it too.
    assert_eq!(boom.0.load(Ordering::Relaxed), 6);
    let flushes = rec
        .snapshot()
        .iter()
        .filter(|e| matches!(e, Ev::FlushDone(_, _, true)))
        .count();
    assert_eq!(flushes, 3);
    assert_eq!(
        db.property("shale.num-files-at-level0").as_deref(),
        Some("3")
    );
    assert_eq!(db.get(b"k2").expect("get").as_deref(), Some(&b"v"[..]));
    db.close().expect("close");
    let log = std::fs::read_to_string(dir.path().join("LOG")).expect("LOG");
    let panics = log
        .lines()
        .filter(|l| l.contains("event listener panicked in on_flush_completed: listener boom"))
        .count();
    assert_eq!(panics, 3, "{log}");
}

/// Polls `cond` for up to 20 s.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn position(evs: &[Ev], what: impl Fn(&Ev) -> bool) -> usize {
    evs.iter()
        .position(what)
        .unwrap_or_else(|| panic!("event missing: {evs:?}"))
}

#[test]
fn flush_write_error_then_resume_reports_error_and_recovery() {
    let _shared = shale::sync_point::shared();
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let rec = Arc::new(Recorder::default());
    let db = Db::open(
        "/db",
        Options {
            listeners: vec![rec.clone() as Arc<dyn EventListener>],
            ..common::fault_options(Arc::new(fs.clone()))
        },
    )
    .expect("open");
    db.put(b"a", b"1").expect("put");
    fs.add_rule(
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(0))
            .ops(&[FaultOp::Create])
            .path(".sst"),
    );
    db.flush().expect_err("flush with a full disk");
    let evs = rec.snapshot();
    let failed = position(&evs, |e| matches!(e, Ev::FlushDone(_, _, false)));
    let bg = position(&evs, |e| {
        *e == Ev::BgError(BackgroundErrorReason::Flush, ErrorSeverity::Hard)
    });
    assert!(failed < bg, "{evs:?}");

    fs.clear_rules();
    db.resume().expect("resume");
    let evs = rec.snapshot();
    let begin = position(&evs, |e| *e == Ev::RecoveryBegin(false));
    let flushed = position(
        &evs,
        |e| matches!(e, Ev::FlushDone(_, f, true) if f.len() == 1),
    );
    let done = position(&evs, |e| *e == Ev::RecoveryDone(false, true));
    assert!(bg < begin && begin < flushed && flushed < done, "{evs:?}");
    check_order(&evs);
    assert_eq!(db.get(b"a").expect("get").as_deref(), Some(&b"1"[..]));
    db.close().expect("close");
}

#[test]
fn automatic_recovery_is_reported_as_automatic() {
    let _shared = shale::sync_point::shared();
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    let rec = Arc::new(Recorder::default());
    let db = Db::open(
        "/db",
        Options {
            listeners: vec![rec.clone() as Arc<dyn EventListener>],
            max_bgerror_resume_count: 100,
            bgerror_resume_retry_interval: 20_000,
            ..common::fault_options(Arc::new(fs.clone()))
        },
    )
    .expect("open");
    db.put(b"a", b"1").expect("put");
    fs.add_rule(
        FaultRule::new(FaultKind::Eio, Trigger::OnIndex(0))
            .ops(&[FaultOp::Create])
            .path(".sst"),
    );
    let _ = db.flush();
    wait_until("an automatic recovery", || {
        rec.snapshot().contains(&Ev::RecoveryDone(true, true))
    });
    let evs = rec.snapshot();
    let bg = position(&evs, |e| {
        matches!(e, Ev::BgError(BackgroundErrorReason::Flush, _))
    });
    let begin = position(&evs, |e| *e == Ev::RecoveryBegin(true));
    assert!(bg < begin, "{evs:?}");
    assert_eq!(
        db.property("shale.background-error-severity").as_deref(),
        Some("none")
    );
    db.close().expect("close");
}

#[test]
fn stall_condition_changes_at_the_slowdown_trigger_and_back() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = Arc::new(Recorder::default());
    let db = Db::open(dir.path(), {
        let base = common::quiet_options();
        Options {
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 3,
                level0_slowdown_writes_trigger: 3,
                ..base.cf
            },
            listeners: vec![rec.clone() as Arc<dyn EventListener>],
            ..base
        }
    })
    .expect("open");
    let stalls = |r: &Recorder| -> Vec<Ev> {
        r.snapshot()
            .into_iter()
            .filter(|e| matches!(e, Ev::Stall(..)))
            .collect()
    };
    let delayed = Ev::Stall(WriteStallCondition::Normal, WriteStallCondition::Delayed);
    let normal = Ev::Stall(WriteStallCondition::Delayed, WriteStallCondition::Normal);
    // Overlapping files: no trivial move.
    let flush = |i: u32| {
        db.put(b"a", format!("{i}").as_bytes()).expect("put");
        db.put(b"z", format!("{i}").as_bytes()).expect("put");
        db.flush().expect("flush");
    };
    flush(0);
    flush(1);
    assert!(stalls(&rec).is_empty(), "{:?}", rec.snapshot());
    // The third L0 file reaches the trigger; the compaction it starts is
    // held after writing its output, so L0 stays at 3.
    let pause = Pause::at("CompactionJob::AfterOutputs");
    flush(2);
    pause.reached();
    assert_eq!(stalls(&rec), vec![delayed.clone()]);
    assert_eq!(
        db.property("shale.num-files-at-level0").as_deref(),
        Some("3")
    );
    pause.release();
    db.wait_for_compaction().expect("idle");
    assert_eq!(
        db.property("shale.num-files-at-level0").as_deref(),
        Some("0")
    );
    assert_eq!(stalls(&rec), vec![delayed, normal]);
    sync_point::reset();
    db.close().expect("close");
    let log = std::fs::read_to_string(dir.path().join("LOG")).expect("LOG");
    assert!(
        log.contains(
            "\"event\": \"stall_condition_changed\", \"cf\": 0, \"prev\": \"Normal\", \"cur\": \"Delayed\", \"cause\": \"level0_slowdown\""
        ),
        "{log}"
    );
}

// ------------------------------------------ the LOG and the listeners agree

/// Every info the listeners got, in order.
#[derive(Default)]
struct Infos(Mutex<Vec<Heard>>);

#[derive(Debug, Clone)]
enum Heard {
    FlushBegin(FlushJobInfo),
    FlushDone(FlushJobInfo),
    CompactionBegin(CompactionJobInfo),
    CompactionDone(CompactionJobInfo),
    Created(TableFileCreationInfo),
    Deleted(TableFileDeletionInfo),
    Stall(WriteStallInfo),
}

impl EventListener for Infos {
    fn on_flush_begin(&self, i: &FlushJobInfo) {
        self.0.lock().push(Heard::FlushBegin(i.clone()));
    }
    fn on_flush_completed(&self, i: &FlushJobInfo) {
        self.0.lock().push(Heard::FlushDone(i.clone()));
    }
    fn on_compaction_begin(&self, i: &CompactionJobInfo) {
        self.0.lock().push(Heard::CompactionBegin(i.clone()));
    }
    fn on_compaction_completed(&self, i: &CompactionJobInfo) {
        self.0.lock().push(Heard::CompactionDone(i.clone()));
    }
    fn on_table_file_created(&self, i: &TableFileCreationInfo) {
        self.0.lock().push(Heard::Created(i.clone()));
    }
    fn on_table_file_deleted(&self, i: &TableFileDeletionInfo) {
        self.0.lock().push(Heard::Deleted(i.clone()));
    }
    fn on_stall_conditions_changed(&self, i: &WriteStallInfo) {
        self.0.lock().push(Heard::Stall(i.clone()));
    }
}

/// The JSON objects of the `EVENT_LOG_v1` lines of `dir/LOG`.
fn log_events(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("LOG"))
        .expect("LOG")
        .lines()
        .filter_map(|l| l.split_once(" EVENT_LOG_v1 "))
        .map(|(_, json)| serde_json::from_str(json).expect("an event line is JSON"))
        .collect()
}

/// The line of event `name` whose `key` is `value`: exactly one.
fn line<'a>(
    lines: &'a [serde_json::Value],
    name: &str,
    key: &str,
    value: u64,
) -> &'a serde_json::Value {
    let found: Vec<_> = lines
        .iter()
        .filter(|l| l["event"] == name && l[key] == value)
        .collect();
    assert_eq!(found.len(), 1, "{name} with {key} = {value}: {found:?}");
    found[0]
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn nums(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(u)
        .collect()
}

/// The fields every family-scoped job line shares with its info.
fn same_job(l: &serde_json::Value, cf_name: &str, cf_id: u32, job_id: u64) {
    assert_eq!(l["cf_name"], cf_name, "{l}");
    assert_eq!(u(&l["cf"]), u64::from(cf_id), "{l}");
    assert_eq!(u(&l["job"]), job_id, "{l}");
}

/// Checks every listener call of a run against the LOG line of the same
/// event; returns the names of the lines matched.
fn check_agreement(heard: &[Heard], lines: &[serde_json::Value]) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    let mut stalls = lines
        .iter()
        .filter(|l| l["event"] == "stall_condition_changed");
    for h in heard {
        match h {
            Heard::FlushBegin(i) => {
                let l = line(lines, "flush_started", "job", i.job_id);
                same_job(l, &i.cf_name, i.cf_id, i.job_id);
                assert_eq!(u(&l["total_num_input_entries"]), i.num_entries, "{l}");
                assert_eq!(u(&l["num_deletes"]), i.num_deletes, "{l}");
                kinds.insert("flush_started");
            }
            Heard::FlushDone(i) => {
                assert!(i.status.is_ok(), "{i:?}");
                let l = line(lines, "flush_finished", "job", i.job_id);
                same_job(l, &i.cf_name, i.cf_id, i.job_id);
                assert_eq!(u(&l["num_entries"]), i.num_entries, "{l}");
                assert_eq!(u(&l["num_deletes"]), i.num_deletes, "{l}");
                assert_eq!(nums(&l["output_files"]), numbers(&i.output_files), "{l}");
                kinds.insert("flush_finished");
            }
            Heard::CompactionBegin(i) => {
                let logged: Vec<_> = lines
                    .iter()
                    .filter(|l| l["event"] == "compaction_started" && l["job"] == i.job_id)
                    .collect();
                let drop_job = matches!(
                    i.reason,
                    shale::CompactionReason::DeleteOnly
                        | shale::CompactionReason::FifoMaxSize
                        | shale::CompactionReason::FifoTtl
                );
                if i.trivial_move || drop_job {
                    // Their LOG line is the end's.
                    assert!(logged.is_empty(), "{logged:?}");
                    continue;
                }
                let l = line(lines, "compaction_started", "job", i.job_id);
                same_job(l, &i.cf_name, i.cf_id, i.job_id);
                assert_eq!(l["compaction_reason"], i.reason.name(), "{l}");
                assert_eq!(u(&l["input_level"]), i.base_input_level as u64, "{l}");
                assert_eq!(u(&l["output_level"]), i.output_level as u64, "{l}");
                let mut by_level: BTreeMap<String, Vec<u64>> = BTreeMap::new();
                for f in &i.input_files {
                    by_level
                        .entry(format!("files_L{}", f.level))
                        .or_default()
                        .push(f.file_number);
                }
                for (k, files) in &by_level {
                    assert_eq!(&nums(&l[k.as_str()]), files, "{k} in {l}");
                }
                let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
                assert_eq!(u(&l["input_data_size"]), size, "{l}");
                kinds.insert("compaction_started");
            }
            Heard::CompactionDone(i) => {
                assert!(i.status.is_ok(), "{i:?}");
                let name = match i.reason {
                    _ if i.trivial_move => "trivial_move",
                    shale::CompactionReason::DeleteOnly => "delete_only_compaction",
                    shale::CompactionReason::FifoMaxSize | shale::CompactionReason::FifoTtl => {
                        "fifo_compaction"
                    }
                    _ => "compaction_finished",
                };
                let l = line(lines, name, "job", i.job_id);
                same_job(l, &i.cf_name, i.cf_id, i.job_id);
                assert_eq!(l["compaction_reason"], i.reason.name(), "{l}");
                match name {
                    "compaction_finished" => {
                        assert_eq!(u(&l["input_level"]), i.base_input_level as u64, "{l}");
                        assert_eq!(u(&l["output_level"]), i.output_level as u64, "{l}");
                        assert_eq!(u(&l["num_input_files"]), i.input_files.len() as u64);
                        assert_eq!(nums(&l["output_files"]), numbers(&i.output_files));
                        assert_eq!(u(&l["num_output_files"]), i.output_files.len() as u64);
                        assert_eq!(u(&l["num_input_records"]), i.num_input_records);
                        assert_eq!(u(&l["num_dropped_records"]), i.num_dropped_records);
                    }
                    "trivial_move" => {
                        assert_eq!(u(&l["from_level"]), i.base_input_level as u64, "{l}");
                        assert_eq!(u(&l["destination_level"]), i.output_level as u64);
                        let mut inputs = nums(&l["files"]);
                        if !l["files_at_destination"].is_null() {
                            inputs.extend(nums(&l["files_at_destination"]));
                        }
                        assert_eq!(inputs, numbers(&i.input_files), "{l}");
                        assert_eq!(nums(&l["files"]), numbers(&i.output_files), "{l}");
                        let size: u64 = i.output_files.iter().map(|f| f.file_size).sum();
                        assert_eq!(u(&l["total_files_size"]), size, "{l}");
                    }
                    _ => {
                        assert_eq!(nums(&l["files"]), numbers(&i.input_files), "{l}");
                        assert!(i.output_files.is_empty(), "{i:?}");
                        assert_eq!(u(&l["num_dropped_records"]), i.num_dropped_records);
                        let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
                        assert_eq!(u(&l["bytes"]), size, "{l}");
                    }
                }
                kinds.insert(name);
            }
            Heard::Created(i) => {
                let l = line(
                    lines,
                    "table_file_creation",
                    "file_number",
                    i.file.file_number,
                );
                same_job(l, &i.cf_name, i.cf_id, i.job_id);
                assert_eq!(u(&l["file_size"]), i.file.file_size, "{l}");
                assert_eq!(u(&l["level"]), i.file.level as u64, "{l}");
                assert_eq!(u(&l["num_entries"]), i.num_entries, "{l}");
                assert_eq!(u(&l["table_properties"]["num_entries"]), i.num_entries);
                assert_eq!(l["reason"], format!("{:?}", i.reason), "{l}");
                kinds.insert("table_file_creation");
            }
            Heard::Deleted(i) => {
                let l = line(lines, "table_file_deletion", "file_number", i.file_number);
                assert_eq!(l["status"], "OK", "{l}");
                assert!(i.status.is_ok(), "{i:?}");
                kinds.insert("table_file_deletion");
            }
            Heard::Stall(i) => {
                let l = stalls.next().expect("a stall_condition_changed line");
                assert_eq!(l["cf_name"], i.cf_name.as_str(), "{l}");
                assert_eq!(u(&l["cf"]), u64::from(i.cf_id), "{l}");
                assert_eq!(l["prev"], format!("{:?}", i.prev), "{l}");
                assert_eq!(l["cur"], format!("{:?}", i.cur), "{l}");
                kinds.insert("stall_condition_changed");
            }
        }
    }
    assert!(stalls.next().is_none(), "a stall line no listener heard");
    kinds.into_iter().map(str::to_string).collect()
}

/// The LOG's `EVENT_LOG_v1` lines and the listener infos are built from
/// one record per event: for every kind with a listener call (flush begin
/// and end, compaction begin and end, trivial move, FIFO and delete-only
/// drops, table creation and deletion, stall changes) they agree on every
/// field both carry, and every line of those kinds was heard.
#[test]
fn log_lines_and_listener_infos_agree() {
    let _shared = shale::sync_point::shared();
    let mut seen = BTreeSet::new();
    let mut check = |dir: &Path, infos: &Infos| {
        let heard = infos.0.lock().clone();
        let lines = log_events(dir);
        seen.extend(check_agreement(&heard, &lines));
        // Every line of a kind the listeners hear was heard.
        let jobs_heard = heard.len();
        assert!(jobs_heard > 0);
        for l in &lines {
            let name = l["event"].as_str().expect("event");
            let heard_it = |f: &dyn Fn(&Heard) -> bool| heard.iter().any(f);
            let ok = match name {
                "flush_started" | "flush_finished" => heard_it(&|h| match h {
                    Heard::FlushDone(i) => l["job"] == i.job_id,
                    _ => false,
                }),
                "compaction_started"
                | "compaction_finished"
                | "trivial_move"
                | "fifo_compaction"
                | "delete_only_compaction" => heard_it(&|h| match h {
                    Heard::CompactionDone(i) => l["job"] == i.job_id,
                    _ => false,
                }),
                "table_file_creation" => heard_it(&|h| match h {
                    Heard::Created(i) => l["file_number"] == i.file.file_number,
                    _ => false,
                }),
                "table_file_deletion" => heard_it(&|h| match h {
                    Heard::Deleted(i) => l["file_number"] == i.file_number,
                    _ => false,
                }),
                _ => true,
            };
            assert!(ok, "no listener call for {l}");
        }
    };

    // Leveled: flushes (with deletions) up to the slowdown trigger (a
    // stall, lifted by the compaction), a manual compaction, then
    // sequential flushes that move down trivially.
    let dir = tempfile::tempdir().expect("tempdir");
    let infos = Arc::new(Infos::default());
    let db = Db::open(dir.path(), {
        let mut o = common::quiet_options();
        o.listeners = vec![infos.clone() as Arc<dyn EventListener>];
        o.level0_file_num_compaction_trigger = 2;
        o.level0_slowdown_writes_trigger = 2;
        o
    })
    .expect("open");
    for round in 0..2u32 {
        for i in 0..200u32 {
            db.put(
                format!("k{i:04}").as_bytes(),
                format!("v{round}").as_bytes(),
            )
            .expect("put");
        }
        for i in (0..200u32).step_by(7) {
            db.delete(format!("k{i:04}").as_bytes()).expect("delete");
        }
        db.flush().expect("flush");
    }
    db.compact_range(None, None).expect("compact");
    db.set_options_from_strings(&[("level0_file_num_compaction_trigger", "1")])
        .expect("trigger");
    for round in 0..3u32 {
        for i in 0..50u32 {
            db.put(format!("z{round}-{i:04}").as_bytes(), b"v")
                .expect("put");
        }
        db.flush().expect("flush");
        db.wait_for_compaction().expect("idle");
    }
    db.close().expect("close");
    check(dir.path(), &infos);

    // FIFO: the oldest tables dropped past the size cap.
    let dir = tempfile::tempdir().expect("tempdir");
    let infos = Arc::new(Infos::default());
    let db = Db::open(dir.path(), {
        let mut o = common::quiet_options();
        o.listeners = vec![infos.clone() as Arc<dyn EventListener>];
        o.compaction_style = shale::CompactionStyle::Fifo;
        o.compaction_options_fifo = shale::FifoCompactionOptions {
            max_table_files_size: 16 << 10,
            allow_compaction: false,
            ttl_secs: 0,
        };
        o
    })
    .expect("open");
    for round in 0..8u32 {
        for i in 0..100u32 {
            db.put(format!("r{round}-{i:04}").as_bytes(), &[b'v'; 100])
                .expect("put");
        }
        db.flush().expect("flush");
        db.wait_for_compaction().expect("idle");
    }
    db.close().expect("close");
    check(dir.path(), &infos);

    // Delete-only: last-level tables wholly under a range tombstone.
    let dir = tempfile::tempdir().expect("tempdir");
    let infos = Arc::new(Infos::default());
    let db = Db::open(
        dir.path(),
        Options {
            listeners: vec![infos.clone() as Arc<dyn EventListener>],
            create_if_missing: true,
            cf: shale::CfOptions {
                write_buffer_size: 64 << 10,
                target_file_size_base: 16 << 10,
                ..Default::default()
            },
            ..Options::default()
        },
    )
    .expect("open");
    for i in 0..2000u32 {
        db.put(format!("k{i:06}").as_bytes(), &[b'v'; 100])
            .expect("put");
    }
    db.flush().expect("flush");
    db.compact_range(None, None).expect("compact");
    db.delete_range(b"k", b"l").expect("delete range");
    db.flush().expect("flush");
    db.wait_for_compaction().expect("idle");
    db.close().expect("close");
    check(dir.path(), &infos);

    let want = [
        "compaction_finished",
        "compaction_started",
        "delete_only_compaction",
        "fifo_compaction",
        "flush_finished",
        "flush_started",
        "stall_condition_changed",
        "table_file_creation",
        "table_file_deletion",
        "trivial_move",
    ];
    let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
    assert_eq!(seen, want, "kinds checked");
}
