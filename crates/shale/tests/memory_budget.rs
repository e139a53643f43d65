//! `Options::memory_budget`: one budget over memtables, table readers,
//! background buffers and the block cache (issue 17). The accounting is
//! read through `Db::stats().memory` and the `shale.memory-*` properties.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use shale::{Db, Error, MemoryStats, Options};

const MIB: usize = 1 << 20;

fn key(i: u64) -> Vec<u8> {
    format!("key{:010}", i.wrapping_mul(0x9E37_79B9) % 1_000_000_007).into_bytes()
}

fn num(db: &Db, p: &str) -> u64 {
    db.property(p).unwrap().parse().unwrap()
}

/// What the ledger may pass its budget by while work runs: blocks pinned by
/// readers, a resize granule, and a memtable chunk (1 MiB) per thread that
/// charged before the cache shrank.
fn slack(m: &MemoryStats, threads: u64) -> u64 {
    m.block_cache_pinned + (m.budget / 128).max(64 << 10) + threads * MIB as u64
}

#[test]
fn a_bad_memory_budget_is_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let too_small = Options {
        memory_budget: 512 << 10,
        ..common::quiet_options()
    };
    let e = Db::open(dir.path(), too_small).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("below the smallest budget")),
        "{e}"
    );
    let wb_over = Options {
        memory_budget: 4 * MIB,
        db_write_buffer_size: 8 * MIB,
        ..common::quiet_options()
    };
    let e = Db::open(dir.path(), wb_over).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("larger than memory_budget")),
        "{e}"
    );
}

/// The cache fills what the budget leaves once the memtables' share is held
/// for them, and keeps that room steady while the memtables fill their
/// share (the ledger's unit tests cover memtables beyond it).
#[test]
fn the_block_cache_gets_what_the_rest_of_the_budget_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 8 * MIB;
    let share = 2 * MIB;
    let opts = {
        let base = common::quiet_options();
        Options {
            memory_budget: budget,
            db_write_buffer_size: share,
            cache_size: budget,
            cf: shale::CfOptions {
                write_buffer_size: 64 * MIB,
                ..base.cf
            },
            cache_index_and_filter_blocks: true,
            compaction_readahead_size: 0,
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(num(&db, "shale.memory-budget"), budget as u64);
    let value = vec![7u8; 1000];
    for i in 0..12_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    // Read everything: the cache fills to what the budget leaves it.
    for i in 0..12_000 {
        assert!(db.get(&key(i)).unwrap().is_some());
    }
    let m = db.stats().memory;
    let held = m.memtables.max(share as u64) + m.table_readers + m.buffers;
    assert!(m.memtables < MIB as u64, "{m:?}");
    assert!(
        m.block_cache_capacity + held <= budget as u64 + (64 << 10),
        "{m:?}"
    );
    assert!(
        m.block_cache_capacity + held + (64 << 10) >= budget as u64,
        "{m:?}"
    );
    assert!(m.block_cache > 4 * MIB as u64, "the cache filled: {m:?}");
    let before = m.block_cache_capacity;
    // 700 KB into the memtable (charged by 1 MiB chunks: within its
    // 2 MiB share).
    for i in 0..700 {
        db.put(&key(1_000_000 + i), &value).unwrap();
    }
    let m = db.stats().memory;
    assert!(m.memtables >= 700_000, "{m:?}");
    assert!(
        m.block_cache_capacity.abs_diff(before) <= 64 << 10,
        "the cache kept its room: {before} -> {m:?}"
    );
    assert!(
        m.block_cache <= m.block_cache_capacity + m.block_cache_pinned,
        "{m:?}"
    );
    assert!(m.total <= budget as u64 + slack(&m, 1), "{m:?}");
    db.flush().unwrap();
    let m = db.stats().memory;
    assert!(
        m.block_cache_capacity.abs_diff(before) <= MIB as u64,
        "{before} -> {m:?}"
    );
}

/// Without `db_write_buffer_size`, the memtables flush at half the budget;
/// a write stream never holds more memtable memory than the budget leaves.
#[test]
fn memtables_flush_within_their_part_of_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 4 * MIB;
    let opts = {
        let base = common::quiet_options();
        Options {
            memory_budget: budget,
            cache_size: budget,
            cf: shale::CfOptions {
                write_buffer_size: 64 * MIB,
                max_write_buffer_number: 4,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let value = vec![1u8; 300];
    let mut peak = 0;
    for i in 0..30_000 {
        db.put(&key(i), &value).unwrap();
        if i.is_multiple_of(32) {
            peak = peak.max(num(&db, "shale.size-all-mem-tables-db"));
        }
    }
    db.wait_for_compaction().unwrap();
    let m = db.stats().memory;
    let l0 = num(&db, "shale.num-files-at-level0");
    assert!(l0 >= 4, "flushed at the share");
    // Regression: each new memtable's bloom filter (2% of a 64 MiB write
    // buffer: 1.3 MB) counted as half the 2 MiB share, so every write
    // switched a one-entry memtable (27,000 flushes where 5 do).
    assert!(l0 <= 16, "{l0} flushes for 9 MB");
    assert!(
        peak <= budget as u64 + MIB as u64,
        "memtables peaked at {peak}: {m:?}"
    );
    assert!(peak >= (budget / 2) as u64 * 7 / 8 - MIB as u64, "{peak}");
}

/// Writers, readers, flushes and compactions at once: the ledger's total
/// stays within the budget plus pinned blocks and a little slack, and once
/// everything is idle the buffers read zero.
#[test]
fn concurrent_work_stays_within_the_budget_and_idle_buffers_read_zero() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 8 * MIB;
    let opts = {
        let base = Options {
            create_if_missing: true,
            ..Options::default()
        };
        Options {
            memory_budget: budget,
            cache_size: budget,
            cf: shale::CfOptions {
                write_buffer_size: 2 * MIB,
                target_file_size_base: MIB as u64,
                max_bytes_for_level_base: 4 * MIB as u64,
                level0_file_num_compaction_trigger: 2,
                bloom_bits_per_key: 10,
                ..base.cf
            },
            cache_index_and_filter_blocks: true,
            max_background_jobs: 2,
            ..base
        }
    };
    let db = Arc::new(Db::open(dir.path(), opts).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for t in 0..4u64 {
        let db = Arc::clone(&db);
        let stop = Arc::clone(&stop);
        threads.push(std::thread::spawn(move || {
            let mut rng = rand::rngs::SmallRng::seed_from_u64(t);
            let value = vec![t as u8; 300];
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) && n < 60_000 {
                let k = key(rng.gen_range(0..40_000));
                if t < 2 {
                    db.put(&k, &value).unwrap();
                } else if n.is_multiple_of(64) {
                    // A short scan (readahead buffers, pinned blocks).
                    let mut it = db.iter(&shale::ReadOptions::default());
                    it.seek(&k);
                    for _ in 0..50 {
                        if !it.valid() {
                            break;
                        }
                        it.next();
                    }
                    it.status().unwrap();
                } else {
                    db.get(&k).unwrap();
                }
                n += 1;
            }
        }));
    }
    let mut samples = 0;
    let mut worst = 0i64;
    while threads.iter().any(|t| !t.is_finished()) {
        let m = db.stats().memory;
        assert_eq!(m.budget, budget as u64);
        let over = m.total as i64 - (budget as u64 + slack(&m, 4)) as i64;
        worst = worst.max(m.total as i64 - budget as i64);
        assert!(over <= 0, "over the budget by {over}: {m:?}");
        samples += 1;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    assert!(samples > 10, "{samples} samples");
    db.wait_for_compaction().unwrap();
    let m = db.stats().memory;
    assert_eq!(m.buffers, 0, "idle: no buffers charged: {m:?}");
    assert_eq!(num(&db, "shale.memory-buffers"), 0);
    assert!(
        m.total <= budget as u64 + m.block_cache_pinned,
        "{m:?} (worst {worst})"
    );
}

/// Open tables are charged while they live: a table reader's index and
/// filter (outside the cache) show in the ledger, a compaction's output is
/// charged in place of its inputs, and compacting every table away
/// releases it all.
#[test]
fn table_readers_are_charged_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = common::quiet_options();
        Options {
            memory_budget: 16 * MIB,
            cache_size: 16 * MIB,
            cf: shale::CfOptions {
                bloom_bits_per_key: 10,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(num(&db, "shale.memory-table-readers"), 0);
    let value = vec![3u8; 100];
    for round in 0..3u64 {
        for i in 0..5_000 {
            db.put(&key(round * 10_000 + i), &value).unwrap();
        }
        db.flush().unwrap();
    }
    assert!(db.get(&key(1)).unwrap().is_some());
    let charged = num(&db, "shale.memory-table-readers");
    assert_eq!(charged, num(&db, "shale.estimate-table-readers-mem"));
    assert!(
        charged > 3 * 5_000 * 10 / 8,
        "filters and indexes: {charged}"
    );
    db.compact_range(None, None).unwrap();
    assert!(db.get(&key(1)).unwrap().is_some());
    let after = num(&db, "shale.memory-table-readers");
    assert_eq!(after, num(&db, "shale.estimate-table-readers-mem"));
    // One table now holds what three did: about the same index and filter
    // (not less by a fixed margin: the output's blocks are cut anew).
    assert_eq!(num(&db, "shale.num-files-at-level6"), 1);
    assert!(
        after < charged * 3 / 2 && after > charged / 2,
        "three inputs for one output: {charged} -> {after}"
    );
    // Everything deleted and compacted away: no table, nothing charged.
    db.delete_range(b"key", b"kez").unwrap();
    db.compact_range(None, None).unwrap();
    assert!(db.get(&key(1)).unwrap().is_none());
    // (The compaction may leave the range tombstone in a table of its own
    // in L6, which a follow-up compaction then removes: wait for it.)
    let files = |db: &Db| -> u64 {
        (0..7)
            .map(|l| num(db, &format!("shale.num-files-at-level{l}")))
            .sum()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while (files(&db) > 0 || num(&db, "shale.memory-table-readers") > 0)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(files(&db), 0, "no table left");
    assert_eq!(
        num(&db, "shale.memory-table-readers"),
        0,
        "every input released"
    );
}

/// Regression (the same flush storm without a memory budget): a
/// `db_write_buffer_size` far below the write buffer made the memtable's
/// bloom filter, sized for the write buffer, half the budget on its own, and
/// every write flushed a memtable of one entry.
#[test]
fn a_small_db_write_buffer_size_does_not_flush_nearly_empty_memtables() {
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = common::quiet_options();
        Options {
            db_write_buffer_size: 2 * MIB,
            cf: shale::CfOptions {
                write_buffer_size: 64 * MIB,
                max_write_buffer_number: 4,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let value = vec![1u8; 300];
    for i in 0..20_000 {
        db.put(&key(i), &value).unwrap();
    }
    db.flush().unwrap();
    let l0 = num(&db, "shale.num-files-at-level0");
    assert!(
        (2..=16).contains(&l0),
        "{l0} flushes for 6 MB at a 2 MiB budget"
    );
}

/// The memtables' share of the budget follows the families' write buffers:
/// a family created or dropped, or `write_buffer_size` and
/// `max_write_buffer_number` changed while open, resize the share held for
/// them (all their memtables can hold, up to half the budget), and the block
/// cache gets the rest at once.
#[test]
fn the_memtable_share_follows_families_and_write_buffer_changes() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 64 * MIB;
    let opts = {
        let base = common::quiet_options();
        Options {
            memory_budget: budget,
            cache_size: budget,
            cf: shale::CfOptions {
                write_buffer_size: 2 * MIB,
                max_write_buffer_number: 2,
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let reserve = |db: &Db| num(db, "shale.memory-memtable-reserve");
    let cache = |db: &Db| db.stats().memory.block_cache_capacity;
    assert_eq!(reserve(&db), 4 * MIB as u64);
    let cache0 = cache(&db);
    db.set_options_from_strings(&[("write_buffer_size", "4194304")])
        .unwrap();
    assert_eq!(reserve(&db), 8 * MIB as u64);
    assert_eq!(cache(&db), cache0 - 4 * MIB as u64);
    db.set_options_from_strings(&[("max_write_buffer_number", "3")])
        .unwrap();
    assert_eq!(reserve(&db), 12 * MIB as u64);
    let cf_opts = shale::CfOptions {
        write_buffer_size: 8 * MIB,
        max_write_buffer_number: 2,
        ..shale::CfOptions::default()
    };
    let cf = db.create_cf("big", cf_opts).unwrap();
    assert_eq!(reserve(&db), 28 * MIB as u64);
    // Capped at the memtables' share of the budget (half of it).
    db.set_options_cf_from_strings(&cf, &[("max_write_buffer_number", "4")])
        .unwrap();
    assert_eq!(reserve(&db), 32 * MIB as u64);
    assert_eq!(
        cache(&db),
        budget as u64 - 32 * MIB as u64 - held_besides(&db)
    );
    db.drop_cf(&cf).unwrap();
    assert_eq!(reserve(&db), 12 * MIB as u64);
    // A refused change leaves it.
    assert!(db
        .set_options_from_strings(&[("write_buffer_size", "x")])
        .is_err());
    assert_eq!(reserve(&db), 12 * MIB as u64);
    // Back down: the cache takes the room back.
    db.set_options_from_strings(&[
        ("write_buffer_size", "2097152"),
        ("max_write_buffer_number", "2"),
    ])
    .unwrap();
    assert_eq!(reserve(&db), 4 * MIB as u64);
    assert_eq!(cache(&db), cache0);
}

/// Bytes charged besides the memtables (readers, buffers), to read the
/// cache's share exactly.
fn held_besides(db: &Db) -> u64 {
    let m = db.stats().memory;
    m.table_readers + m.buffers
}
