//! `shale-stress` (expected-state mode) killed with SIGKILL over several
//! column families (issue 11): each cycle runs the binary on the same DB with
//! `--column_families=3` and a new seed (new options), kills it at a random
//! moment, and runs `--verify_only`: every acknowledged write must be in its
//! family, a write in flight may be there or not, and a batch cut by the kill
//! must be in all its families or in none (`verify.rs`). The DB has 10% of
//! its keys no-overwrite (single-deleted), and the cycles turn merges on in
//! turn: read-modify-write merges (`--merge_percent`), puts as merges
//! (`--use_merge`), both, neither; each kill then cuts writes whose
//! operands the verification must find applied exactly once or not at all.
//! Range deletions take turns too (`--delrangepercent` 10 of 10 keys, 0,
//! 3 of 150 keys): a range cut by a kill must be found all deleted or not
//! at all (its keys share one batch tag).
//! The child must die of the SIGKILL. Seeds are printed; `SHALE_SEED=<n>`
//! replays the choices (thread timing is not reproducible).
//!
//! A second test kills runs with expiring puts (`--ttl_percent=50`, half of
//! them expiring 1-4 s after the write) on a DB with the compaction filter:
//! values expire between the kill and the next verification, and writes
//! cut by a kill carry expiries that verification must resolve.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

mod common;
use common::{field, seed, show, BIN, SIGKILL};

fn args(dir: &Path, seed: u64) -> Vec<String> {
    vec![
        format!("--db={}", dir.join("db").display()),
        "--max_key=2000".into(),
        "--column_families=3".into(),
        "--nooverwritepercent=10".into(),
        format!("--seed={seed}"),
    ]
}

/// The merge flags of cycle `cycle`.
fn merge_flags(cycle: usize) -> [&'static str; 2] {
    match cycle % 4 {
        0 => ["--merge_percent=30", "--use_merge=false"],
        1 => ["--merge_percent=0", "--use_merge=true"],
        2 => ["--merge_percent=50", "--use_merge=true"],
        _ => ["--merge_percent=0", "--use_merge=false"],
    }
}

/// The range-deletion flags of cycle `cycle` (turns of 3, against the 4
/// of the merge flags, so each pairing comes up).
fn range_flags(cycle: usize) -> [&'static str; 2] {
    match cycle % 3 {
        0 => ["--delrangepercent=10", "--range_deletion_width=10"],
        1 => ["--delrangepercent=0", "--range_deletion_width=10"],
        _ => ["--delrangepercent=3", "--range_deletion_width=150"],
    }
}

/// Kills a run of `cmd` after `after` (the child must not exit by itself);
/// returns its output and the ops its last progress line counted.
fn run_and_kill(mut cmd: Command, after: Duration, what: &str) -> (std::process::Output, u64) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn shale-stress");
    let start = Instant::now();
    while start.elapsed() < after {
        if child.try_wait().expect("try_wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().expect("kill");
    let run = child.wait_with_output().expect("wait");
    assert_eq!(
        run.status.signal(),
        Some(SIGKILL),
        "{what}: the child exited by itself: {}",
        show(&run)
    );
    let ops = String::from_utf8_lossy(&run.stdout)
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("progress: ops="))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    (run, ops)
}

/// Kill cycles; returns (ops at least, batches cut, of them cross-family).
fn kill_cycles(cycles: usize, seed: u64) -> (u64, u64, u64) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut ops, mut cut, mut cross) = (0, 0, 0);
    for cycle in 0..cycles {
        let run_seed: u64 = rng.gen();
        let sync = cycle % 4 == 3;
        let after = Duration::from_millis(rng.gen_range(300..1200));
        let mut cmd = Command::new(BIN);
        cmd.args(args(dir, run_seed))
            .args(["--threads=3", "--ops_per_thread=100000000", "--duration=60"])
            .args(merge_flags(cycle))
            .args(range_flags(cycle));
        if sync {
            cmd.arg("--sync");
        }
        let (run, run_ops) = run_and_kill(cmd, after, &format!("seed {seed} cycle {cycle}"));
        ops += run_ops;
        let v = Command::new(BIN)
            .args(args(dir, rng.gen()))
            .arg("--verify_only")
            .output()
            .expect("run --verify_only");
        assert!(
            v.status.success(),
            "seed {seed} cycle {cycle} (run seed {run_seed}, sync {sync}, killed after \
             {after:?}):\nverify failed: {}\nrun output:\n{}",
            show(&v),
            show(&run)
        );
        assert_eq!(field(&v, "verify", "column_families"), 3);
        cut += field(&v, "verify", "batches_cut");
        cross += field(&v, "verify", "batches_cut_cross_family");
        println!(
            "cycle {cycle}: sync {sync}, {:?} {:?}, killed after {after:?}; {}",
            merge_flags(cycle),
            range_flags(cycle),
            String::from_utf8_lossy(&v.stdout)
                .lines()
                .filter(|l| l.starts_with("verify"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    println!("{cycles} kills: ops>={ops}, batches cut {cut} ({cross} across families)");
    (ops, cut, cross)
}

#[test]
fn kill9_over_three_column_families_keeps_batches_whole() {
    // The checks are in `kill_cycles` (each verify must pass). Progress
    // lines come about once a second, so on a loaded machine every cycle
    // may be killed before its first one: that is not a failure (the
    // verify lines above show the keys written).
    let (ops, cut, cross) = kill_cycles(5, seed());
    println!("ops>={ops}, batches cut {cut} ({cross} across families)");
}

/// Kill cycles with expiring puts (every kind, half of them 1-4 s after
/// the write) and the compaction filter, beside merges and single deletes
/// over two families: each verification after a kill passes, and across
/// the cycles values written before a kill are found expired after it.
#[test]
fn kill9_with_near_expiries_and_the_filter() {
    let seed = seed();
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", tmp.path().join("db").display());
    let common = [
        db.as_str(),
        "--max_key=600",
        "--column_families=2",
        "--nooverwritepercent=10",
        "--compaction_filter",
    ];
    let mut rng = SmallRng::seed_from_u64(seed);
    let (mut expired, mut expiring, mut filtered) = (0, 0, 0);
    for cycle in 0..3 {
        let run_seed: u64 = rng.gen();
        let after = Duration::from_millis(rng.gen_range(1000..1600));
        let mut cmd = Command::new(BIN);
        cmd.args(common)
            .args(["--threads=3", "--ops_per_thread=100000000", "--duration=60"])
            .args(["--ttl_percent=50", "--merge_percent=20"])
            .arg(format!("--seed={run_seed}"));
        let what = format!("seed {seed} cycle {cycle} (run seed {run_seed})");
        let (run, _) = run_and_kill(cmd, after, &what);
        assert_eq!(
            field(&run, "options:", "compaction_filter"),
            1,
            "{}",
            show(&run)
        );
        let v = Command::new(BIN)
            .args(common)
            .args(["--verify_only", &format!("--seed={}", rng.gen::<u64>())])
            .output()
            .expect("run --verify_only");
        assert!(
            v.status.success(),
            "{what}, killed after {after:?}:\nverify failed: {}\nrun output:\n{}",
            show(&v),
            show(&run)
        );
        expired += field(&v, "verify", "expired");
        expiring += field(&v, "verify", "expiring");
        filtered += field(&v, "verify", "filtered");
        println!(
            "cycle {cycle}: killed after {after:?}; {}",
            String::from_utf8_lossy(&v.stdout)
                .lines()
                .filter(|l| l.starts_with("verify"))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if expired == 0 {
        // A loaded machine may have run too little before the kills for a
        // value to expire by now; every near expiry has passed in 5 s.
        std::thread::sleep(Duration::from_secs(5));
        let v = Command::new(BIN)
            .args(common)
            .arg("--verify_only")
            .output()
            .expect("run --verify_only");
        assert!(v.status.success(), "seed {seed}: {}", show(&v));
        expired += field(&v, "verify", "expired");
    }
    println!("expired {expired}, expiring {expiring}, filtered {filtered}");
    assert!(
        expired > 0 && expiring > 0,
        "seed {seed}: no expired ({expired}) or no expiring ({expiring}) key verified"
    );
}

#[test]
#[ignore = "long: 30 kill cycles over three column families"]
fn kill9_over_three_column_families_long() {
    kill_cycles(30, seed());
}
