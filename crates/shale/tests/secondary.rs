//! The secondary instance (issue 39): `Db::open_secondary` and
//! `SecondaryDb::try_catch_up_with_primary` beside a writing primary, in
//! this process and in another one. After every catch-up what the
//! secondary reads is a prefix of the primary's writes that includes every
//! write acknowledged before the catch-up began; views stay readable while
//! the primary flushes, compacts, deletes files and restarts.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::quiet_options;
use shale::{Db, Error, Options};

const KEYS: u64 = 300;

fn key(i: u64) -> Vec<u8> {
    format!("key{:05}", i % KEYS).into_bytes()
}

/// A primary that flushes and compacts often.
fn primary_options() -> Options {
    let mut o = Options {
        create_if_missing: true,
        ..Options::default()
    };
    o.cf.write_buffer_size = 32 << 10;
    o.cf.level0_file_num_compaction_trigger = 2;
    o.cf.target_file_size_base = 32 << 10;
    o.cf.max_bytes_for_level_base = 128 << 10;
    o
}

/// A temporary directory with an empty primary DB (`db`) and the path of
/// its secondary's directory (`sec`).
fn new_primary() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (primary, secondary) = (dir.path().join("db"), dir.path().join("sec"));
    Db::open(&primary, primary_options())
        .unwrap()
        .close()
        .unwrap();
    (dir, primary, secondary)
}

/// Checks that `db` holds exactly the writes `0..=m` of the sequence
/// "write i puts key(i) = i" for some m, and returns m + 1 (0: none).
fn prefix_len(db: &Db) -> u64 {
    let mut max = None::<u64>;
    let mut seen = std::collections::BTreeMap::new();
    for r in db.range(..) {
        let (k, v) = r.unwrap();
        let i: u64 = std::str::from_utf8(&v).unwrap().parse().unwrap();
        assert_eq!(&*k, key(i).as_slice(), "value {i} under the wrong key");
        max = Some(max.map_or(i, |m: u64| m.max(i)));
        seen.insert(k.to_vec(), i);
    }
    let Some(m) = max else { return 0 };
    // Every key holds the newest write of it at or below m: no hole.
    for k in 0..KEYS.min(m + 1) {
        let newest = m - ((m - k) % KEYS);
        assert_eq!(
            seen.get(&key(k)),
            Some(&newest),
            "key{k:05}: not the prefix up to write {m}"
        );
    }
    assert_eq!(seen.len() as u64, KEYS.min(m + 1));
    m + 1
}

#[test]
fn follows_a_writing_primary_across_flushes_compactions_and_restarts() {
    let (_dir, primary, secondary) = new_primary();
    let acked = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (acked, done, primary) = (Arc::clone(&acked), Arc::clone(&done), primary.clone());
        std::thread::spawn(move || {
            let mut db = Db::open(&primary, primary_options()).unwrap();
            for i in 0..12_000u64 {
                if i == 6_000 {
                    // A restart: recovery, a new WAL, obsolete files gone.
                    db.close().unwrap();
                    db = Db::open(&primary, primary_options()).unwrap();
                }
                db.put(&key(i), i.to_string().as_bytes()).unwrap();
                acked.store(i + 1, Ordering::Release);
            }
            db.close().unwrap();
            done.store(true, Ordering::Release);
        })
    };
    let sec = Db::open_secondary(&primary, &secondary, Options::default()).unwrap();
    let mut catch_ups = 0;
    let mut last = 0;
    let mut old_views = Vec::new();
    while !done.load(Ordering::Acquire) {
        let before = acked.load(Ordering::Acquire);
        match sec.try_catch_up_with_primary() {
            Ok(()) => catch_ups += 1,
            // The primary rewrote its MANIFEST during every try.
            Err(Error::TryAgain(_)) => continue,
            Err(e) => panic!("catch-up: {e}"),
        }
        let view = sec.db();
        let n = prefix_len(&view);
        assert!(
            n >= before,
            "catch-up {catch_ups}: read {n} writes, {before} were acknowledged"
        );
        assert!(n >= last, "went back from {last} to {n}");
        last = n;
        // Older views stay readable while the primary deletes their files.
        if catch_ups % 4 == 0 {
            old_views.push((view, n));
        }
        for (v, n) in &old_views {
            assert_eq!(prefix_len(v), *n, "an old view changed");
        }
    }
    writer.join().unwrap();
    sec.try_catch_up_with_primary().unwrap();
    assert_eq!(prefix_len(&sec.db()), 12_000);
    assert!(catch_ups >= 3, "only {catch_ups} catch-ups ran");
    assert!(secondary.join("LOG").exists(), "the secondary's LOG");
    eprintln!(
        "{catch_ups} catch-ups, {} old views checked",
        old_views.len()
    );
}

/// The primary of `primary_in_another_process` (run as a child).
#[test]
#[ignore = "the child of primary_in_another_process"]
fn primary_child() {
    let Ok(dir) = std::env::var("SHALE_PRIMARY_DIR") else {
        return;
    };
    let db = Db::open(&dir, primary_options()).unwrap();
    for i in 0..8_000u64 {
        db.put(&key(i), i.to_string().as_bytes()).unwrap();
        if i % 1000 == 999 {
            db.flush().unwrap();
        }
    }
    db.close().unwrap();
}

#[test]
fn primary_in_another_process() {
    let (_dir, primary, secondary) = new_primary();
    let sec = Db::open_secondary(&primary, &secondary, Options::default()).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "primary_child", "--test-threads=1"])
        .env("SHALE_PRIMARY_DIR", &primary)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut last = 0;
    loop {
        let exited = child.try_wait().unwrap();
        match sec.try_catch_up_with_primary() {
            Ok(()) => {}
            Err(Error::TryAgain(_)) if exited.is_none() => continue,
            Err(e) => panic!("catch-up: {e}"),
        }
        let n = prefix_len(&sec.db());
        assert!(n >= last, "went back from {last} to {n}");
        last = n;
        if let Some(status) = exited {
            assert!(status.success());
            break;
        }
    }
    assert_eq!(
        last, 8_000,
        "after the primary exited, the last catch-up sees all"
    );
}

#[test]
fn options_that_cannot_keep_views_valid_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let primary = dir.path().join("db");
    Db::open(&primary, quiet_options())
        .unwrap()
        .close()
        .unwrap();
    let sec = dir.path().join("sec");
    let o = Options {
        max_open_files: 100,
        ..Options::default()
    };
    let r = Db::open_secondary(&primary, &sec, o);
    assert!(matches!(r, Err(Error::InvalidArgument(ref m)) if m.contains("max_open_files")));
    let o = Options {
        paranoid_checks: false,
        ..Options::default()
    };
    assert!(matches!(
        Db::open_secondary(&primary, &sec, o),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        Db::open_secondary(&primary, &primary, Options::default()),
        Err(Error::InvalidArgument(_))
    ));
    let r = Db::open_secondary(dir.path().join("none"), &sec, Options::default());
    assert!(matches!(r, Err(Error::InvalidArgument(_))), "{r:?}");
}

#[test]
fn a_view_survives_the_primary_compacting_its_files_away() {
    let dir = tempfile::tempdir().unwrap();
    let (primary, secondary) = (dir.path().join("db"), dir.path().join("sec"));
    let db = Db::open(&primary, quiet_options()).unwrap();
    for i in 0..KEYS {
        db.put(&key(i), i.to_string().as_bytes()).unwrap();
        if i % 50 == 49 {
            db.flush().unwrap();
        }
    }
    let sec = Db::open_secondary(&primary, &secondary, Options::default()).unwrap();
    let view = sec.db();
    let mut it = view.range(..);
    let first = it.next().unwrap().unwrap();
    assert_eq!(&*first.0, key(0).as_slice());
    // The primary rewrites everything and deletes the files the view reads.
    for i in 0..KEYS {
        db.put(&key(i), (i + KEYS).to_string().as_bytes()).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let live: Vec<String> = std::fs::read_dir(&primary)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    assert_eq!(live.len(), 1, "old tables deleted: {live:?}");
    assert_eq!(it.count() as u64, KEYS - 1);
    assert_eq!(prefix_len(&view), KEYS);
    sec.try_catch_up_with_primary().unwrap();
    assert_eq!(prefix_len(&sec.db()), 2 * KEYS);
}

/// CPU seconds of this process so far (user + system, /proc/self/stat).
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// A measurement, not a check: one catch-up after N MiB of primary writes
/// (16-byte keys, 100-byte values, default options), median of 3.
/// `SHALE_CATCH_UP_MB` (default "64,256"). Run with `--release`:
/// cargo test --release -p shale --test secondary -- --ignored catch_up_cost --nocapture
#[test]
#[ignore = "a measurement; see docs/perf/operations.md"]
fn catch_up_cost() {
    let sizes = std::env::var("SHALE_CATCH_UP_MB").unwrap_or_else(|_| "64,256".into());
    for mb in sizes.split(',').map(|s| s.trim().parse::<u64>().unwrap()) {
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        for round in 0..3 {
            let dir = tempfile::tempdir().unwrap();
            let (primary, secondary) = (dir.path().join("db"), dir.path().join("sec"));
            let db = Db::open(
                &primary,
                Options {
                    create_if_missing: true,
                    ..Options::default()
                },
            )
            .unwrap();
            let sec = Db::open_secondary(&primary, &secondary, Options::default()).unwrap();
            let n = (mb << 20) / 116;
            let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ round;
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                db.put(format!("{x:016x}").as_bytes(), &[b'v'; 100])
                    .unwrap();
            }
            let (t, c) = (std::time::Instant::now(), cpu_secs());
            sec.try_catch_up_with_primary().unwrap();
            walls.push(t.elapsed().as_secs_f64());
            cpus.push(cpu_secs() - c);
            drop(sec);
            drop(db);
        }
        walls.sort_by(f64::total_cmp);
        cpus.sort_by(f64::total_cmp);
        println!(
            "catch-up after {mb} MiB: wall {:.3} s (runs {walls:.3?}), cpu {:.2} s",
            walls[1], cpus[1]
        );
    }
}
