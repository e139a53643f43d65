//! Crash test: a child process writes batches with `sync=true` and reports
//! each acknowledged batch on its stdout pipe; the parent kills it with
//! SIGKILL at random moments, reopens, and checks that every acknowledged
//! batch is present whole and no batch is half-applied.
//!
//! Each batch `n` writes keys `b{n}-{j}` for j in 0..4 plus `last = n`, all
//! with value `n`. A batch is visible whole or not at all; acknowledged
//! batches must be visible; at most the in-flight batch beyond the last ack
//! may additionally appear.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{Db, Options, WriteBatch, WriteOptions};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 64 * 1024,
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 256 * 1024,
        target_file_size_base: 64 * 1024,
        ..Options::default()
    }
}

/// The child's body: runs only when the parent sets SHALE_CRASH_DIR.
#[test]
#[ignore = "child process of the crash tests"]
fn crash_child() {
    let Ok(dir) = std::env::var("SHALE_CRASH_DIR") else {
        return;
    };
    let sync = std::env::var("SHALE_CRASH_SYNC").map_or(true, |v| v == "1");
    let db = Db::open(&dir, opts()).unwrap();
    let start: u64 = db.get(b"last").unwrap().map_or(0, |v| {
        std::str::from_utf8(&v).unwrap().parse::<u64>().unwrap() + 1
    });
    let mut n = start;
    loop {
        let mut b = WriteBatch::new();
        let v = n.to_string();
        for j in 0..4 {
            b.put(format!("b{n}-{j}").as_bytes(), v.as_bytes());
        }
        b.put(b"last", v.as_bytes());
        db.write(
            b,
            &WriteOptions {
                sync,
                disable_wal: false,
            },
        )
        .unwrap();
        println!("ack {n}");
        n += 1;
    }
}

fn verify(dir: &Path, acked: Option<u64>) -> u64 {
    let db = Db::open(dir, opts()).unwrap();
    let last = db
        .get(b"last")
        .unwrap()
        .map(|v| std::str::from_utf8(&v).unwrap().parse::<u64>().unwrap());
    if let Some(a) = acked {
        let l = last.expect("acknowledged batches lost: no 'last' key");
        assert!(l >= a, "acknowledged batch {a} lost (recovered last = {l})");
        assert!(
            l <= a + 1,
            "recovered batch {l} beyond the in-flight one ({a} + 1)"
        );
    }
    let upto = last.unwrap_or(0);
    for n in 0..=upto {
        if last.is_none() {
            break;
        }
        for j in 0..4 {
            let k = format!("b{n}-{j}");
            let got = db.get(k.as_bytes()).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(n.to_string().as_bytes()),
                "batch {n} not whole ({k})"
            );
        }
    }
    // Nothing beyond `last` exists.
    let beyond = format!("b{}-0", upto + 1);
    assert!(
        db.get(beyond.as_bytes()).unwrap().is_none(),
        "half-applied batch beyond last"
    );
    db.close().unwrap();
    last.map_or(0, |l| l + 1)
}

fn run_kills(kills: usize, sync: bool, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = SmallRng::seed_from_u64(seed);
    for round in 0..kills {
        let mut child = Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "crash_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SHALE_CRASH_DIR", dir.path())
            .env("SHALE_CRASH_SYNC", if sync { "1" } else { "0" })
            .stdout(Stdio::piped())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("child.stderr")).unwrap(),
            ))
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line.strip_prefix("ack ") {
                    if let Ok(n) = n.trim().parse::<u64>() {
                        let _ = tx.send(n);
                    }
                }
            }
        });
        // Wait for the first ack (the child opened the DB), then a random time.
        let first = rx.recv_timeout(Duration::from_secs(30));
        if first.is_err() {
            let _ = child.kill();
            let _ = child.wait();
            let err = std::fs::read_to_string(dir.path().join("child.stderr")).unwrap_or_default();
            panic!("round {round}: child produced no ack; its stderr:\n{err}");
        }
        let wait = Duration::from_millis(rng.gen_range(0..150));
        let t = Instant::now();
        while t.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        reader.join().unwrap();
        let acked = rx.try_iter().last().or(first.ok());
        verify(dir.path(), acked);
    }
}

#[test]
fn kill9_sync_writes_survive() {
    run_kills(20, true, 7);
}

#[test]
fn kill9_nosync_writes_survive_process_crash() {
    run_kills(10, false, 8);
}

#[test]
#[ignore = "long: 200 kills"]
fn kill9_many() {
    run_kills(200, true, 9);
    run_kills(200, false, 10);
}
