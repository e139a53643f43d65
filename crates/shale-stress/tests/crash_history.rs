//! Linearizability across real crashes (RELIABILITY.md test 12, crash part):
//! `shale-stress --history` runs as a child process and is killed with
//! SIGKILL at random moments; each `--verify_only` run reopens the DB, reads
//! every key back (the recovery read, part of the history) and checks the
//! whole history recorded so far, across every kill: per key with the WGL
//! checker (writes cut by a kill may or may not have applied, but only
//! before the kill) and across keys with the cut check (batches atomic,
//! snapshot reads and scans one consistent cut). Every other cycle runs
//! with `--use_merge` (puts written as merges of the whole value), so the
//! checks also cover merge operands resolved across kills and recoveries,
//! and cycles take turns with range deletions (`--delrangepercent` 0, 5,
//! 10, recorded as batches of deletes), so the checks cover range
//! tombstones over values and operands in memtables and tables, and ranges
//! cut by a kill (all deleted or none).
//!
//! The child must die of the SIGKILL: a child that exits by itself (a panic,
//! a failure) fails the test. Tampered histories must fail the check, so it
//! is not vacuous. Seeds are printed; `SHALE_SEED=<n>` replays the choices
//! (thread timing is not reproducible).

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale_stress::history_log::HistoryDir;

mod common;
use common::{field, seed, show, BIN, SIGKILL};

fn base_args(dir: &Path, seed: u64) -> Vec<String> {
    vec![
        format!("--db={}", dir.join("db").display()),
        format!("--history={}", dir.join("history").display()),
        "--max_key=48".into(),
        format!("--seed={seed}"),
    ]
}

/// Runs `--verify_only` (a recovery read plus the whole-history check).
fn verify(dir: &Path, seed: u64) -> Output {
    Command::new(BIN)
        .args(base_args(dir, seed))
        .arg("--verify_only")
        .output()
        .expect("run shale-stress --verify_only")
}

/// One kill cycle: the child runs until killed after `after` (counted from
/// when its first writes are on disk); returns its stdout. `cfs` column
/// families (fixed by the first run of a history); `use_merge`: puts as
/// merges; `delrange`: percent of range deletions.
fn run_and_kill(
    dir: &Path,
    seed: u64,
    (sync, use_merge, delrange): (bool, bool, u32),
    after: Duration,
    cfs: u32,
) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(base_args(dir, seed))
        .arg(format!("--column_families={cfs}"))
        .arg(format!("--use_merge={use_merge}"))
        .arg(format!("--delrangepercent={delrange}"))
        .args(["--threads=4", "--ops_per_thread=100000000", "--duration=60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if sync {
        cmd.arg("--sync");
    }
    let mut child = cmd.spawn().expect("spawn shale-stress");
    let segment = HistoryDir::open(&dir.join("history"))
        .and_then(|h| h.next_segment())
        .expect("history dir");
    let first_client = dir
        .join("history")
        .join(format!("seg-{segment:06}-c001.jsonl"));
    let started = Instant::now();
    // Wait until a client of this run has recorded something.
    let has_client_file = || std::fs::metadata(&first_client).is_ok_and(|m| m.len() > 0);
    while !has_client_file() && started.elapsed() < Duration::from_secs(30) {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(after);
    child.kill().expect("kill");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(
        out.status.signal(),
        Some(SIGKILL),
        "the child exited by itself instead of dying of SIGKILL: {}",
        show(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Kill cycles on one DB with `cfs` column families, checking the whole
/// history after each.
fn kill_cycles(cycles: usize, seed: u64, cfs: u32) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut last = None;
    for cycle in 0..cycles {
        let sync = cycle % 3 == 2;
        let use_merge = cycle % 2 == 0;
        let delrange = [5, 0, 10][cycle % 3];
        let after = Duration::from_millis(rng.gen_range(50..400));
        let run_seed = rng.gen();
        let stdout = run_and_kill(dir, run_seed, (sync, use_merge, delrange), after, cfs);
        let o = verify(dir, rng.gen());
        assert!(
            o.status.success(),
            "seed {seed} cycle {cycle} (run seed {run_seed}, sync {sync}, use_merge {use_merge}, \
             delrangepercent {delrange}, killed after {after:?} past its first writes; run \
             output:\n{stdout}):\nverify failed: {}",
            show(&o)
        );
        println!(
            "cycle {cycle}: sync {sync}, use_merge {use_merge}, delrangepercent {delrange}, \
             killed {after:?} in; {}",
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| l.starts_with("history") || l.starts_with("check"))
                .collect::<Vec<_>>()
                .join("; ")
        );
        last = Some(o);
    }
    let o = last.expect("at least one cycle");
    // Each cycle adds a run segment and a verify segment.
    assert_eq!(field(&o, "history:", "segments"), 2 * cycles as u64);
    assert!(field(&o, "history:", "acked") > 100, "{}", show(&o));
    assert!(field(&o, "check:", "violations") == 0);
}

#[test]
fn kill9_histories_are_linearizable_across_crashes() {
    kill_cycles(4, seed(), 1);
}

/// The same over three column families: batches and snapshot reads span
/// families, so the cut check covers cross-family atomicity across kills.
#[test]
fn kill9_histories_over_three_column_families_are_linearizable() {
    kill_cycles(3, seed(), 3);
}

#[test]
#[ignore = "long: 40 kill cycles, the history of all of them checked after each"]
fn kill9_histories_long() {
    kill_cycles(40, seed(), 1);
}

#[test]
#[ignore = "long: 20 kill cycles over three column families"]
fn kill9_histories_over_three_column_families_long() {
    kill_cycles(20, seed(), 3);
}

/// A short clean run (no kill) whose history is then extended by hand.
fn clean_history(seed: u64) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let o = Command::new(BIN)
        .args(base_args(tmp.path(), seed))
        .args(["--threads=3", "--ops_per_thread=400"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", show(&o));
    tmp
}

fn append(dir: &Path, segment: u32, lines: &[String]) {
    let path = dir
        .join("history")
        .join(format!("seg-{segment:06}-c099.jsonl"));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open history file");
    for l in lines {
        writeln!(f, "{l}").expect("append");
    }
}

/// The last time recorded in `segment` (its events are JSON lines).
fn last_time(dir: &Path, segment: u32) -> u64 {
    let mut max = 0;
    for e in std::fs::read_dir(dir.join("history")).expect("history dir") {
        let p = e.expect("entry").path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if !name.is_some_and(|n| n.starts_with(&format!("seg-{segment:06}-"))) {
            continue;
        }
        for line in std::fs::read_to_string(&p).expect("read").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("json");
            for f in ["call", "ret"] {
                max = max.max(v.get(f).and_then(|t| t.as_u64()).unwrap_or(0));
            }
        }
    }
    max
}

/// A write acknowledged before the kill that the recovery read does not see
/// (a lost write) is not linearizable.
#[test]
fn lost_acknowledged_write_is_caught() {
    let tmp = clean_history(seed());
    let dir = tmp.path();
    let t = last_time(dir, 1);
    // A put acknowledged after every other event of segment 1.
    append(
        dir,
        1,
        &[
            format!(
                r#"{{"e":"w","id":0,"call":{},"w":[["k0003","lost"]]}}"#,
                t + 5
            ),
            format!(r#"{{"e":"a","id":0,"ret":{}}}"#, t + 10),
        ],
    );
    let o = verify(dir, 1);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("illegal keys [\"k0003\"]"), "{}", show(&o));
}

/// A snapshot read that sees a batch on one key and, on another key of the
/// batch, a value older than the batch is caught by the cut check, although
/// each key alone is linearizable. (The keys are outside the DB's key
/// space, so the real recovery read that follows does not involve them.)
#[test]
fn half_visible_batch_is_caught() {
    let tmp = clean_history(seed());
    let dir = tmp.path();
    let next = HistoryDir::open(&dir.join("history"))
        .and_then(|h| h.next_segment())
        .expect("history");
    append(
        dir,
        next,
        &[
            r#"{"e":"w","id":0,"call":0,"w":[["x1","old"]]}"#.into(),
            r#"{"e":"a","id":0,"ret":1}"#.into(),
            r#"{"e":"w","id":1,"call":2,"w":[["x1","t"],["x2","t"]]}"#.into(),
            r#"{"e":"a","id":1,"ret":10}"#.into(),
            r#"{"e":"r","call":3,"ret":12,"r":[["x1","old"],["x2","t"]]}"#.into(),
        ],
    );
    let o = verify(dir, 1);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(field(&o, "check:", "violations") >= 1, "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("linearizability=Ok"), "{}", show(&o));
}
