//! `Options::rate_limiter` on a DB: flush and compaction writes follow the
//! limit (measured by the limiter's counters and, independently, by the
//! sizes of the table files in the directory), every table byte and
//! nothing else goes through the limiter, flushes go first when both wait, and a DB
//! whose jobs wait on a tiny rate still closes at once (without losing the
//! writes made without the WAL).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{Db, Options, RateLimiter, WriteBatch, WriteOptions};

const MIB: u64 = 1 << 20;

/// Waits (at most a minute) until `cond` holds.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "waited a minute for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Bytes written to tables by flushes and compactions, from the stats
/// (booked when each job ends).
fn table_bytes(db: &Db) -> u64 {
    let c = db.stats().compaction;
    c.flush_bytes + c.compaction_bytes_written
}

fn limiter_bytes(db: &Db) -> u64 {
    let r = db.stats().rate_limiter.expect("a rate limiter");
    r.flush_bytes + r.compaction_bytes
}

/// Watches the table files of a directory every 20 ms, keeping the largest
/// size seen of each (deleted ones included): the bytes written to tables,
/// measured outside the engine.
struct TableWatcher {
    sizes: Arc<Mutex<HashMap<String, u64>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TableWatcher {
    fn start(dir: &Path) -> TableWatcher {
        let sizes = Arc::new(Mutex::new(HashMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (sizes, stop, dir) = (Arc::clone(&sizes), Arc::clone(&stop), dir.to_path_buf());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for e in std::fs::read_dir(&dir).unwrap().flatten() {
                        let name = e.file_name().to_string_lossy().into_owned();
                        if !name.ends_with(".sst") {
                            continue;
                        }
                        if let Ok(m) = e.metadata() {
                            let mut s = sizes.lock().unwrap();
                            let seen = s.entry(name).or_insert(0);
                            *seen = (*seen).max(m.len());
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            })
        };
        TableWatcher {
            sizes,
            stop,
            thread: Some(thread),
        }
    }

    fn bytes(&self) -> u64 {
        self.sizes.lock().unwrap().values().sum()
    }
}

impl Drop for TableWatcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn flush_and_compaction_writes_follow_the_limit_for_30_seconds() {
    let rate = 4 * MIB;
    let limiter = Arc::new(RateLimiter::new(rate).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cf: shale::CfOptions {
                write_buffer_size: MIB as usize,
                target_file_size_base: MIB,
                max_bytes_for_level_base: 4 * MIB,
                ..Default::default()
            },
            rate_limiter: Some(Arc::clone(&limiter)),
            ..Options::default()
        },
    )
    .unwrap();
    let watcher = TableWatcher::start(dir.path());
    // Large values: the background work is bytes, not CPU per entry, so a
    // busy machine still has more to write than the limit lets through.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (db, stop, written) = (db.clone(), Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || {
            let mut rng = SmallRng::seed_from_u64(16);
            let mut value = vec![0u8; 1000];
            while !stop.load(Ordering::Relaxed) {
                let key = format!("key{:010}", rng.gen_range(0..1_000_000u32));
                rng.fill(&mut value[..]);
                db.put(key.as_bytes(), &value).unwrap();
                written.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    // Measure from 2 s (the first flushes have started) to 30 s.
    std::thread::sleep(Duration::from_secs(2));
    let (t0, lim0, files0) = (Instant::now(), limiter_bytes(&db), watcher.bytes());
    std::thread::sleep(Duration::from_secs(18));
    let puts_at_20s = written.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_secs(10));
    let (secs, lim1, files1) = (
        t0.elapsed().as_secs_f64(),
        limiter_bytes(&db),
        watcher.bytes(),
    );
    let puts_at_30s = written.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let r = db.stats().rate_limiter.unwrap();
    let through = (lim1 - lim0) as f64 / secs;
    let files = (files1 - files0) as f64 / secs;
    let report = format!(
        "limiter {:.2} MiB/s, table files {:.2} MiB/s over {secs:.1} s; {r:?}",
        through / MIB as f64,
        files / MIB as f64,
    );
    eprintln!("{report}");
    let limit = rate as f64;
    assert!(
        (0.9 * limit..=1.1 * limit).contains(&through),
        "limiter counters: {report}"
    );
    assert!(
        (0.9 * limit..=1.1 * limit).contains(&files),
        "sizes of the table files: {report}"
    );
    // Both kinds of job went through it, and it made them wait.
    assert!(r.flush_bytes > 0 && r.compaction_bytes > 0, "{report}");
    assert!(r.compaction_wait_micros > 0, "{report}");
    assert_eq!(r.bytes_per_second, rate);
    // Writes kept going in the last 10 seconds.
    assert!(puts_at_30s > puts_at_20s, "{puts_at_20s} -> {puts_at_30s}");
    let prop = db.property("shale.rate-limiter").unwrap();
    assert!(
        prop.contains(&format!("bytes_per_second: {rate}")),
        "{prop}"
    );
    // Lift the limit and let the jobs finish: every byte of every table
    // went through the limiter, and nothing else did (not the WAL, as
    // large as the user's writes).
    limiter.set_bytes_per_second(1 << 40).unwrap();
    db.wait_for_compaction().unwrap();
    let s = db.stats();
    assert_eq!(limiter_bytes(&db), table_bytes(&db), "wal {}", s.wal.bytes);
    assert!(s.wal.bytes > 8 * MIB, "{}", s.wal.bytes);
    db.close().unwrap();
}

#[test]
fn a_flush_goes_first_while_a_compaction_waits() {
    let limiter = Arc::new(RateLimiter::new(1 << 30).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 100,
                level0_slowdown_writes_trigger: 100,
                level0_stop_writes_trigger: 100,
                ..Default::default()
            },
            rate_limiter: Some(Arc::clone(&limiter)),
            ..Options::default()
        },
    )
    .unwrap();
    // Four 512 KiB tables written fast, then 512 KiB/s for the 2 MiB
    // compaction of them (about 4 s) and a 32 KiB flush.
    let value = vec![b'v'; 1000];
    for t in 0..4 {
        for i in 0..512 {
            db.put(format!("key{i:06}.{t}").as_bytes(), &value).unwrap();
        }
        db.flush().unwrap();
    }
    limiter.set_bytes_per_second(512 << 10).unwrap();
    let compaction = {
        let db = db.clone();
        std::thread::spawn(move || db.compact_range(None, None).unwrap())
    };
    wait_until("the compaction to wait on the limiter", || {
        limiter.get_total_wait_micros(Some(shale::IoPriority::Low)) > 0
    });
    for i in 0..32 {
        db.put(format!("new{i:06}").as_bytes(), &value).unwrap();
    }
    db.flush().unwrap();
    let s = db.stats();
    assert_eq!(s.compaction.flushes, 5);
    assert_eq!(
        (s.background.compactions_running, s.compaction.compactions),
        (1, 0),
        "the compaction was still writing when the flush finished"
    );
    compaction.join().unwrap();
    let s = db.stats();
    assert!(s.compaction.compactions >= 1);
    let r = s.rate_limiter.unwrap();
    assert!(r.flush_bytes > 32 << 10, "{r:?}");
    assert!(r.compaction_bytes > 2 * MIB, "{r:?}");
}

/// A DB whose flush waits on a 1 KiB/s limiter (about 10 minutes for its
/// memtables) closes at once.
fn close_while_a_flush_waits(disable_wal: bool) {
    let limiter = Arc::new(RateLimiter::new(1024).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 256 << 10,
            max_write_buffer_number: 4,
            ..Default::default()
        },
        rate_limiter: Some(Arc::clone(&limiter)),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let value = vec![b'v'; 1000];
    for i in 0..600 {
        let mut b = WriteBatch::new();
        b.put(format!("key{i:06}").as_bytes(), &value);
        db.write(
            b,
            &WriteOptions {
                disable_wal,
                ..WriteOptions::default()
            },
        )
        .unwrap();
    }
    // The first memtable's flush is waiting on the limiter.
    wait_until("the flush to wait on the limiter", || {
        limiter.get_total_requests(None) >= 2
    });
    std::thread::sleep(Duration::from_millis(200));
    assert!(db.stats().compaction.flushes == 0, "no flush finished yet");
    let t = Instant::now();
    db.close().unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(20), "close took {took:?}");
    // Nothing was lost: from the WAL, or (without it) from the tables the
    // close flushed.
    let db = Db::open(
        dir.path(),
        Options {
            rate_limiter: None,
            ..opts
        },
    )
    .unwrap();
    for i in 0..600 {
        assert!(db.get(format!("key{i:06}").as_bytes()).unwrap().is_some());
    }
}

#[test]
fn closing_while_a_flush_waits_on_a_tiny_rate_is_prompt() {
    close_while_a_flush_waits(false);
}

#[test]
fn closing_flushes_unlogged_writes_without_waiting_on_the_limiter() {
    close_while_a_flush_waits(true);
}
