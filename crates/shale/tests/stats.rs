//! `Db::stats()`: typed statistics checked against known workloads (puts
//! and flushes, repeated reads, absent keys), and `stalls_now` checked by
//! driving the DB into each write slowdown or stop it explains: L0 files
//! (slowdown and stop), pending compaction bytes (soft and hard, with the
//! compaction paused by a sync point), the memtable count and the WAL size
//! and memtable memory budgets (with the flush paused), and a background
//! error. Sync-point tests hold `sync_point::exclusive()`.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::quiet_options;
use common::Pause;
use shale::sync_point;
use shale::{Db, Options, StallReason, StallState, Stats};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn fill(db: &Db, r: std::ops::Range<u32>, value_len: usize) {
    let v = vec![b'v'; value_len];
    for i in r {
        db.put(&key(i), &v).unwrap();
    }
}

/// Polls `db.stats()` until `f` holds (10 s at most).
fn wait_for(db: &Db, what: &str, f: impl Fn(&Stats) -> bool) -> Stats {
    let t = Instant::now();
    loop {
        let s = db.stats();
        if f(&s) {
            return s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "timed out waiting for {what}: {:#?}",
            s.stalls_now
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn puts_and_flushes_are_counted() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    let s0 = db.stats();
    assert_eq!(s0.compaction.flushes, 0);
    assert_eq!(s0.families.len(), 1);
    assert_eq!(s0.families[0].name, "default");
    assert!(s0.stalls_now.is_empty());
    for round in 0..3u32 {
        fill(&db, round * 100..round * 100 + 100, 100);
        db.flush().unwrap();
    }
    let s = db.stats();
    assert_eq!(s.compaction.flushes, 3);
    assert_eq!(s.families[0].levels[0].files, 3);
    let l0_bytes = s.families[0].levels[0].bytes;
    assert!(l0_bytes > 0);
    // Every flushed byte is an L0 table's.
    assert_eq!(s.compaction.flush_bytes, l0_bytes);
    assert_eq!(s.compaction.levels[0].bytes_written, l0_bytes);
    assert_eq!(s.compaction.compactions, 0);
    assert_eq!(s.compaction.write_amp, 1.0);
    assert_eq!(s.ops.writes, 300);
    assert_eq!(s.ops.keys_written, 300);
    // Each put's batch: its keys and values and their framing.
    assert!(s.ops.ingest_bytes >= 300 * (9 + 100), "{:?}", s.ops);
    assert!(s.wal.bytes >= s.ops.ingest_bytes);
    assert_eq!(s.families[0].estimated_num_keys, 300);
    assert_eq!(s.families[0].immutable_memtables, 0);
    // Overwrites count in the estimate: it is named one.
    fill(&db, 0..10, 10);
    assert_eq!(db.stats().families[0].estimated_num_keys, 310);

    // Compacting everything: one compaction into the last level, write-amp
    // (flushed + compacted) / flushed.
    db.compact_range(None, None).unwrap();
    let s = db.stats();
    assert!(s.compaction.compactions >= 1);
    assert!(s.compaction.compaction_bytes_written > 0);
    let expect = (s.compaction.flush_bytes + s.compaction.compaction_bytes_written) as f64
        / s.compaction.flush_bytes as f64;
    assert!((s.compaction.write_amp - expect).abs() < 1e-9);
    assert_eq!(s.families[0].levels[0].files, 0);
    let total: u64 = s.families[0].levels.iter().map(|l| l.bytes).sum();
    assert_eq!(
        db.property("shale.total-sst-files-size").unwrap(),
        total.to_string()
    );
}

#[test]
fn cache_hits_after_repeated_reads_and_bloom_useful_on_absent_keys() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        cache_size: 8 << 20,
        ..quiet_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    fill(&db, 0..500, 100);
    db.flush().unwrap();
    let before = db.stats().cache;
    for _ in 0..5 {
        assert!(db.get(&key(7)).unwrap().is_some());
    }
    let s = db.stats();
    assert_eq!(s.ops.keys_read, 5);
    // The first read misses the data block, the other four hit it.
    assert_eq!(s.cache.data_misses - before.data_misses, 1);
    assert_eq!(s.cache.data_hits - before.data_hits, 4);
    assert!(s.cache.usage > 0 && s.cache.capacity == 8 << 20);
    assert_eq!(s.memory.block_cache, s.cache.usage);
    assert_eq!(s.memory.open_tables, 1);
    // Keys in the table's range but absent: the bloom filter answers.
    let useful = s.cache.bloom_useful;
    let mut absent = 0;
    for i in 0..200u32 {
        let k = format!("key{:06}x", i * 2);
        if db.get(k.as_bytes()).unwrap().is_none() {
            absent += 1;
        }
    }
    assert_eq!(absent, 200);
    let s = db.stats();
    assert!(
        s.cache.bloom_useful - useful >= 190,
        "{} of 200",
        s.cache.bloom_useful - useful
    );
    assert_eq!(s.ops.keys_read, 205);
    let r = db.multi_get(&[&key(1), &key(2)], &shale::ReadOptions::new());
    assert_eq!(r.len(), 2);
    assert_eq!(db.stats().ops.keys_read, 207);
}

#[test]
fn stats_serialize_to_json() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), quiet_options()).unwrap();
    fill(&db, 0..10, 10);
    let s = db.stats();
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["ops"]["writes"], 10);
    assert_eq!(j["families"][0]["name"], "default");
    assert_eq!(j["families"][0]["write_stall"], "normal");
    assert_eq!(j["stalls"]["causes"][0]["cause"], "l0_slowdown");
    assert!(j["stalls_now"].as_array().unwrap().is_empty());
}

fn only(s: &Stats, reason: StallReason) -> &shale::StallExplanation {
    let e: Vec<_> = s.stalls_now.iter().filter(|e| e.reason == reason).collect();
    assert_eq!(e.len(), 1, "{:#?}", s.stalls_now);
    e[0]
}

/// Regression: delayed writes ran at one or two per millisecond whatever
/// `delayed_write_rate` said (a write the current interval's credit covered
/// still waited an interval): 20x below the rate for 400-byte writes. With
/// L0 at the slowdown trigger (its compaction paused), 512 KiB written in
/// 128-byte puts at 1 MiB/s takes about half a second (it took 2.45 s).
#[test]
fn delayed_writes_run_at_the_delayed_write_rate() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 8 << 20,
                level0_file_num_compaction_trigger: 2,
                level0_slowdown_writes_trigger: 2,
                level0_stop_writes_trigger: 100,
                ..base.cf
            },
            delayed_write_rate: 1 << 20,
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let p = Pause::at("CompactionJob::AfterOutputs");
    for _ in 0..2 {
        fill(&db, 0..100, 10);
        db.flush().unwrap();
    }
    p.reached();
    assert_eq!(
        only(&db.stats(), StallReason::L0Slowdown).state,
        StallState::Delayed
    );
    let value = vec![b'x'; 128 - key(0).len()];
    let started = Instant::now();
    let mut written = 0usize;
    let mut i = 0u32;
    while written < 512 << 10 {
        db.put(&key(i), &value).unwrap();
        written += 128;
        i += 1;
    }
    let took = started.elapsed().as_secs_f64();
    p.release();
    sync_point::reset();
    let want = written as f64 / f64::from(1u32 << 20);
    eprintln!("{written} bytes at 1 MiB/s in {took:.3} s (want {want:.3} s)");
    assert!(
        took >= want * 0.8 && took <= want * 2.0,
        "{written} bytes at 1 MiB/s took {took:.2} s (want about {want:.2} s)"
    );
}

/// L0 files over the slowdown, then the stop trigger, while the L0->L1
/// compaction of the first two is paused.
#[test]
fn l0_slowdown_and_stop_are_explained() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 2,
                level0_slowdown_writes_trigger: 3,
                level0_stop_writes_trigger: 4,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let p = Pause::at("CompactionJob::AfterOutputs");
    // Overlapping files: a real compaction, not a trivial move.
    for _ in 0..2 {
        fill(&db, 0..100, 10);
        db.flush().unwrap();
    }
    p.reached();
    assert!(db.stats().stalls_now.is_empty());
    fill(&db, 0..100, 10);
    db.flush().unwrap();
    let s = db.stats();
    let e = only(&s, StallReason::L0Slowdown);
    assert_eq!(e.state, StallState::Delayed);
    assert_eq!((e.value, e.threshold), (Some(3), Some(3)));
    assert_eq!(e.option, Some("level0_slowdown_writes_trigger"));
    assert_eq!(e.family.as_deref(), Some("default"));
    assert!(
        e.message.starts_with(
            "writes delayed in column family 'default': 3 L0 files >= level0_slowdown_writes_trigger 3; an L0->L1 compaction is running;"
        ),
        "{}",
        e.message
    );
    assert!(e.message.contains("max_background_jobs"), "{}", e.message);
    assert!(e.message.contains("write_buffer_size"), "{}", e.message);
    assert_eq!(s.families[0].write_stall, StallState::Delayed);
    assert_eq!(s.families[0].levels[0].files_compacting, 2);
    assert_eq!(s.stalls.causes[0].cause, StallReason::L0Slowdown);
    assert_eq!(s.stalls.causes[0].count, 1);

    fill(&db, 0..100, 10);
    db.flush().unwrap();
    let s = db.stats();
    let e = only(&s, StallReason::L0Stop);
    assert_eq!(e.state, StallState::Stopped);
    assert_eq!((e.value, e.threshold), (Some(4), Some(4)));
    assert!(
        e.message.starts_with(
            "writes stopped in column family 'default': 4 L0 files >= level0_stop_writes_trigger 4; an L0->L1 compaction is running;"
        ),
        "{}",
        e.message
    );
    assert_eq!(s.stalls.causes[1].count, 1);
    // The compaction catches up: no stall left.
    p.release();
    db.wait_for_compaction().unwrap();
    let s = db.stats();
    assert!(s.stalls_now.is_empty(), "{:#?}", s.stalls_now);
    assert_eq!(s.families[0].write_stall, StallState::Normal);
    sync_point::reset();
}

/// Pending compaction bytes over the soft, then the hard limit, while the
/// L0 compaction that would bring them down is paused.
#[test]
fn pending_compaction_bytes_are_explained() {
    for hard in [false, true] {
        let _x = sync_point::exclusive();
        sync_point::reset();
        let dir = tempfile::tempdir().unwrap();
        let opts = {
            let base = quiet_options();
            Options {
                cf: shale::CfOptions {
                    level0_file_num_compaction_trigger: 2,
                    soft_pending_compaction_bytes_limit: 1,
                    hard_pending_compaction_bytes_limit: if hard { 1 } else { 0 },
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open(dir.path(), opts).unwrap();
        let p = Pause::at("CompactionJob::AfterOutputs");
        fill(&db, 0..100, 100);
        db.flush().unwrap();
        fill(&db, 0..100, 100);
        db.flush().unwrap();
        p.reached();
        let s = db.stats();
        let (reason, option) = if hard {
            (
                StallReason::PendingCompactionStop,
                "hard_pending_compaction_bytes_limit",
            )
        } else {
            (
                StallReason::PendingCompactionSlowdown,
                "soft_pending_compaction_bytes_limit",
            )
        };
        let e = only(&s, reason);
        let pending = s.families[0].pending_compaction_bytes;
        assert!(pending > 0);
        assert_eq!((e.value, e.threshold), (Some(pending), Some(1)));
        assert_eq!(e.option, Some(option));
        let verb = if hard { "stopped" } else { "delayed" };
        assert!(
            e.message.starts_with(&format!(
                "writes {verb} in column family 'default': {pending} bytes of pending compaction >= {option} 1; 1 compactions running;"
            )),
            "{}",
            e.message
        );
        assert_eq!(s.background.compactions_running, 1);
        p.release();
        db.wait_for_compaction().unwrap();
        assert!(db.stats().stalls_now.is_empty());
        sync_point::reset();
    }
}

/// A writer blocked behind a flush paused at `FlushJob::AfterOutputs`:
/// opens a DB in `dir` with `opts`, starts a thread putting keys `0..n`,
/// and returns once `reason` is among the current stalls. `finish` lets the
/// flush and the writer go on.
struct BlockedWriter {
    db: Db,
    pause: Pause,
    writer: std::thread::JoinHandle<()>,
}

impl BlockedWriter {
    fn start(
        dir: &std::path::Path,
        opts: Options,
        n: u32,
        reason: StallReason,
    ) -> (BlockedWriter, Stats) {
        let db = Db::open(dir, opts).unwrap();
        let pause = Pause::at("FlushJob::AfterOutputs");
        let writer = {
            let db = db.clone();
            std::thread::spawn(move || fill(&db, 0..n, 100))
        };
        pause.reached();
        let s = wait_for(&db, &format!("a {reason:?} stall"), |s| {
            s.stalls_now.iter().any(|e| e.reason == reason)
        });
        (BlockedWriter { db, pause, writer }, s)
    }

    /// Releases the flush, joins the writer, waits for background work.
    fn finish(self) -> Db {
        self.pause.release();
        self.writer.join().unwrap();
        self.db.wait_for_compaction().unwrap();
        self.db
    }
}

/// `max_write_buffer_number` memtables with the flush paused: a writer
/// waits, and the stall is explained while it does.
#[test]
fn memtable_limit_is_explained() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 64 << 10,
                max_write_buffer_number: 2,
                ..base.cf
            },
            ..base
        }
    };
    let (blocked, s) = BlockedWriter::start(dir.path(), opts, 3000, StallReason::MemtableLimit);
    let e = only(&s, StallReason::MemtableLimit);
    assert_eq!(e.state, StallState::Stopped);
    assert_eq!((e.value, e.threshold), (Some(2), Some(2)));
    assert!(
        e.message.starts_with(
            "writes stopped in column family 'default': 2 memtables >= max_write_buffer_number 2 and the active one is full; its flush is running;"
        ),
        "{}",
        e.message
    );
    assert_eq!(s.families[0].immutable_memtables, 1);
    let db = blocked.finish();
    let s = db.stats();
    assert!(s.stalls_now.is_empty(), "{:#?}", s.stalls_now);
    // The writer's wait was counted and timed.
    let m = &s.stalls.causes[4];
    assert_eq!(m.cause, StallReason::MemtableLimit);
    assert!(m.count >= 1 && m.micros > 0, "{m:?}");
    sync_point::reset();
}

/// Live WALs past `max_total_wal_size` with the flush that frees them
/// paused: writers wait, explained.
#[test]
fn wal_size_limit_is_explained() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 64 << 10,
                max_write_buffer_number: 8,
                ..base.cf
            },
            max_total_wal_size: 1,
            ..base
        }
    };
    let (blocked, s) = BlockedWriter::start(dir.path(), opts, 3000, StallReason::WalSize);
    let e = only(&s, StallReason::WalSize);
    assert_eq!(e.family, None);
    assert_eq!(e.threshold, Some(1));
    assert!(e.value.unwrap() > (32 << 10), "{e:?}");
    assert!(
        e.message
            .contains("> max_total_wal_size 1 (plus half a write buffer)"),
        "{}",
        e.message
    );
    blocked.finish();
    sync_point::reset();
}

/// Memtables at twice `db_write_buffer_size` while the flush is paused.
#[test]
fn write_buffer_memory_is_explained() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 1 << 20,
                max_write_buffer_number: 16,
                ..base.cf
            },
            db_write_buffer_size: 64 << 10,
            ..base
        }
    };
    let (blocked, s) = BlockedWriter::start(dir.path(), opts, 5000, StallReason::WriteBufferMemory);
    let e = only(&s, StallReason::WriteBufferMemory);
    assert_eq!(e.threshold, Some(128 << 10));
    assert!(e.value.unwrap() >= 128 << 10);
    assert_eq!(e.value, Some(s.memory.memtables));
    assert!(
        e.message
            .contains(">= twice db_write_buffer_size 65536 while"),
        "{}",
        e.message
    );
    blocked.finish();
    sync_point::reset();
}

/// Under a `memory_budget`, the memtables' stop is their part of it, and
/// the explanation names the budget and what takes the rest.
#[test]
fn memory_budget_stall_is_explained() {
    let _x = sync_point::exclusive();
    sync_point::reset();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 1 << 20,
                max_write_buffer_number: 16,
                ..base.cf
            },
            db_write_buffer_size: 256 << 10,
            memory_budget: 1 << 20,
            ..base
        }
    };
    let (blocked, s) =
        BlockedWriter::start(dir.path(), opts, 20000, StallReason::WriteBufferMemory);
    let e = only(&s, StallReason::WriteBufferMemory);
    assert_eq!(e.option, Some("memory_budget"));
    // Twice the 256 KiB share (table readers and buffers leave more).
    assert_eq!(e.threshold, Some(512 << 10));
    assert_eq!(e.value, Some(s.memory.memtables));
    assert_eq!(s.memory.budget, 1 << 20);
    assert!(
        e.message
            .contains("their part of memory_budget 1048576 (table readers"),
        "{}",
        e.message
    );
    blocked.finish();
    sync_point::reset();
}

/// A hard background error (no space for the MANIFEST edit of a flush)
/// refuses writes: explained, and gone after the resume.
#[test]
fn background_error_is_explained() {
    let _shared = shale::sync_point::shared();
    use shale::fs::{FaultInjectionFs, FaultKind, FaultOp, FaultRule, MemFileSystem, Trigger};
    let mem = MemFileSystem::new();
    let fs = FaultInjectionFs::new(Arc::new(mem));
    let db = Db::open("/db", common::fault_options(Arc::new(fs.clone()))).unwrap();
    fill(&db, 0..100, 10);
    fs.add_rule(
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(0))
            .ops(&[FaultOp::Create, FaultOp::Append, FaultOp::Sync])
            .path("MANIFEST"),
    );
    db.flush().expect_err("flush with a full disk");
    let s = db.stats();
    let e = only(&s, StallReason::BackgroundError);
    assert_eq!(e.state, StallState::Stopped);
    assert_eq!((e.value, e.threshold, e.option), (None, None, None));
    let current = s.background.current_error.clone().expect("an error");
    assert!(
        e.message.starts_with(&format!(
            "writes stopped: background error ({current}); fix the cause, then call Db::resume"
        )),
        "{}",
        e.message
    );
    assert!(s.background.writes_stopped);
    assert_eq!(s.background.errors, 1);
    fs.clear_rules();
    db.resume().unwrap();
    let s = db.stats();
    assert!(s.stalls_now.is_empty(), "{:#?}", s.stalls_now);
    assert!(!s.background.writes_stopped);
}
