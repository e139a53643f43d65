//! `Db::stats()`: builds the typed [`Stats`] from the counters the engine
//! keeps (`stats::DbStats`, the table cache's read counters, the block
//! cache's) and one view of the DB state (shape, memtables, stalls).
//!
//! Thread safety: takes the DB mutex once for the shape, memtables and
//! stall explanations (as a property does), then the stats mutexes after
//! releasing it. Reads nothing on the read or write path's locks beyond
//! what `shale.stats` already does; allocates only the report.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::cache::Priority;
use crate::compaction::picker;
use crate::io::accounting::{self, Purpose};
use crate::memory::Part;
use crate::stats::report::{
    BackgroundStats, CacheStats, CfStats, CompactionStats, IoPurposeStats, IoStats,
    LevelCompaction, LevelStats, MemoryStats, OpStats, RateLimiterStats, StallCauseStats,
    StallReason, StallState, StallStats, Stats, WalStats,
};
use crate::stats::{StallCause, StallCondition};
use crate::version::sizing;

use crate::compaction::runner::picker_options;
use crate::shared::DbInner;

/// The typed statistics of the DB now.
pub(crate) fn collect(db: &Arc<DbInner>) -> Stats {
    let st = db.state.lock();
    let mut families = Vec::with_capacity(st.cfs.len());
    for (&id, c) in &st.cfs {
        let v = st.versions.current(id);
        let o = picker_options(&c.cf.opts(), st.versions.num_levels());
        let targets = picker::level_targets(&v, &o);
        let scores = picker::scores(&v, &o, &targets);
        let levels = (0..v.num_levels())
            .map(|l| LevelStats {
                level: l,
                files: v.num_files(l),
                files_compacting: v.files(l).iter().filter(|f| f.is_being_compacted()).count(),
                bytes: v.level_bytes(l),
                score: scores.get(l).copied().unwrap_or(0.0),
            })
            .collect();
        let mem_entries: u64 = c
            .imm
            .iter()
            .chain(std::iter::once(&c.mem))
            .map(|m| m.num_entries() as u64)
            .sum();
        let table_entries: u64 = (0..v.num_levels())
            .flat_map(|l| v.files(l))
            .map(|f| f.num_entries)
            .sum();
        families.push(CfStats {
            name: c.cf.name.clone(),
            id,
            levels,
            pending_compaction_bytes: sizing::pending_compaction_bytes(&v, &o),
            base_level: targets.base_level,
            active_memtable_bytes: c.mem.approximate_memory_usage() as u64,
            immutable_memtables: c.imm.len(),
            memtable_bytes: c.memtable_bytes() as u64,
            estimated_num_keys: mem_entries + table_entries,
            write_stall: match c.stall {
                StallCondition::Normal => StallState::Normal,
                StallCondition::Delayed(_) => StallState::Delayed,
                StallCondition::Stopped(_) => StallState::Stopped,
            },
        });
    }
    let stalls_now = crate::observe::stall_explain::explain(db, &st);
    let wal_live_files = st.closed_wals.len() + 1;
    let wal_live_bytes = db.live_wal_bytes(&st);
    let background = BackgroundStats {
        compactions_running: st.compactions_running,
        flushes_running: st.flushes_running,
        errors: st.errors.count,
        current_error: st.errors.current.as_ref().map(|e| e.error.to_string()),
        writes_stopped: db.stop_writes.load(Ordering::Acquire),
    };
    drop(st);

    let s = &db.stats;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let cause_micros = |c: StallCause| s.stall_cause_micros[c as usize].load(Ordering::Relaxed);
    let stall_cause = |cause, count, micros| StallCauseStats {
        cause,
        count,
        micros,
    };
    let stalls = StallStats {
        micros: load(&s.stall_micros),
        causes: vec![
            stall_cause(
                StallReason::L0Slowdown,
                load(&s.stall_l0_slowdown),
                cause_micros(StallCause::L0Slowdown),
            ),
            stall_cause(
                StallReason::L0Stop,
                load(&s.stall_l0_stop),
                cause_micros(StallCause::L0Stop),
            ),
            stall_cause(
                StallReason::PendingCompactionSlowdown,
                load(&s.stall_pending_slowdown),
                cause_micros(StallCause::PendingSlowdown),
            ),
            stall_cause(
                StallReason::PendingCompactionStop,
                load(&s.stall_pending_stop),
                cause_micros(StallCause::PendingStop),
            ),
            // Writers waiting for flushes (memtable count, WAL size and
            // memory budget waits) are booked as one cause by the engine.
            stall_cause(
                StallReason::MemtableLimit,
                load(&s.stall_memtable),
                cause_micros(StallCause::MemtableStop),
            ),
        ],
    };

    let compaction = compaction_stats(db);
    let w = s.write_counters();
    let ops = OpStats {
        writes: w.writes,
        keys_written: w.keys,
        commit_groups: w.groups,
        ingest_bytes: w.ingest_bytes,
        keys_read: s.keys_read.get(),
        last_sequence: db.last_visible(),
    };
    let wal = WalStats {
        writes: w.wal_writes,
        bytes: w.wal_bytes,
        syncs: w.wal_syncs,
        live_files: wal_live_files,
        live_bytes: wal_live_bytes,
    };
    let t = db.table_cache.sum_stats();
    let mut cache = CacheStats {
        index_hits: t.index_cache_hits,
        index_misses: t.index_cache_misses,
        filter_hits: t.filter_cache_hits,
        filter_misses: t.filter_cache_misses,
        blocks_read: t.blocks_read,
        block_read_bytes: t.bytes_read,
        bloom_checks: t.filter_checks,
        bloom_useful: t.filter_useful,
        ..CacheStats::default()
    };
    if let Some(c) = &db.block_cache {
        let cs = c.cache.stats();
        cache.capacity = c.cache.capacity() as u64;
        cache.usage = c.cache.usage() as u64;
        cache.pinned_usage = c.cache.pinned_usage() as u64;
        cache.entries = cs.entries as u64;
        cache.data_hits = cs.hits_for(Priority::Low);
        cache.data_misses = cs.misses_for(Priority::Low);
        cache.bytes_inserted = cs.bytes_inserted;
        cache.bytes_evicted = cs.bytes_evicted;
    }
    let memtables = db.memory.get(Part::Memtables) as u64;
    let table_readers = db.memory.get(Part::TableReaders) as u64;
    let buffers = db.memory.get(Part::Buffers) as u64;
    let memory = MemoryStats {
        budget: db.memory.limit() as u64,
        total: memtables + table_readers + buffers + cache.usage,
        memtables,
        block_cache: cache.usage,
        block_cache_capacity: cache.capacity,
        block_cache_pinned: cache.pinned_usage,
        table_readers,
        buffers,
        open_tables: db.table_cache.num_open() as u64,
    };
    Stats {
        uptime_secs: s.started.elapsed().as_secs_f64(),
        families,
        compaction,
        ops,
        wal,
        stalls,
        cache,
        memory,
        io: io_stats(db),
        background,
        stalls_now,
        rate_limiter: db.opts.rate_limiter.as_deref().map(rate_limiter_stats),
    }
}

/// The limiter's rate and counters.
pub(crate) fn rate_limiter_stats(l: &crate::io::RateLimiter) -> RateLimiterStats {
    use crate::io::IoPriority::{High, Low};
    RateLimiterStats {
        bytes_per_second: l.get_bytes_per_second(),
        max_bytes_per_second: l.get_max_bytes_per_second(),
        auto_tuned: l.is_auto_tuned(),
        flush_bytes: l.get_total_bytes_through(Some(High)),
        compaction_bytes: l.get_total_bytes_through(Some(Low)),
        flush_requests: l.get_total_requests(Some(High)),
        compaction_requests: l.get_total_requests(Some(Low)),
        flush_wait_micros: l.get_total_wait_micros(Some(High)),
        compaction_wait_micros: l.get_total_wait_micros(Some(Low)),
    }
}

/// The IO counters by purpose.
pub(crate) fn io_stats(db: &DbInner) -> IoStats {
    IoStats {
        bucket_limits: (0..accounting::BUCKETS - 1)
            .filter_map(accounting::bucket_limit)
            .collect(),
        purposes: Purpose::ALL
            .iter()
            .map(|&p| {
                let (r, w) = db.io.totals(p);
                IoPurposeStats {
                    purpose: p.name(),
                    read_bytes: r.bytes,
                    read_requests: r.requests,
                    read_sizes: r.sizes.to_vec(),
                    write_bytes: w.bytes,
                    write_requests: w.requests,
                    write_sizes: w.sizes.to_vec(),
                }
            })
            .collect(),
    }
}

/// Flush and compaction totals from the per-output-level rows and the
/// flush and compaction byte counters.
fn compaction_stats(db: &DbInner) -> CompactionStats {
    let s = &db.stats;
    let levels = s.levels.lock().clone();
    let flushes = s.flushes.load(Ordering::Relaxed);
    let flushed = s.flush_bytes.load(Ordering::Relaxed);
    let mut out = CompactionStats {
        flushes,
        flush_bytes: flushed,
        compaction_bytes_written: s.compaction_bytes_written.load(Ordering::Relaxed),
        delete_only_bytes: s.delete_only_bytes.load(Ordering::Relaxed),
        ..CompactionStats::default()
    };
    let (mut jobs, mut written) = (0u64, 0u64);
    // Flushes wrote tables and blob files: both are the bytes ingested.
    let flushed_all = s.flushed_bytes();
    for (l, r) in levels.iter().enumerate() {
        jobs += r.count;
        written += r.bytes_written + r.blob_bytes_written;
        out.compaction_bytes_read += r.bytes_read_non_output + r.bytes_read_output;
        out.compaction_bytes_moved += r.bytes_moved;
        out.blob_bytes_written += r.blob_bytes_written;
        out.blob_bytes_read += r.blob_bytes_read;
        // The L0 row's W-Amp is over the bytes flushed, as `shale.stats`.
        let denom = if l == 0 {
            flushed_all
        } else {
            r.bytes_read_non_output + r.blob_bytes_read
        };
        out.levels.push(LevelCompaction {
            level: l,
            count: r.count,
            bytes_read_non_output: r.bytes_read_non_output,
            bytes_read_output: r.bytes_read_output,
            bytes_written: r.bytes_written,
            blob_bytes_read: r.blob_bytes_read,
            blob_bytes_written: r.blob_bytes_written,
            bytes_moved: r.bytes_moved,
            micros: r.micros,
            write_amp: ratio(r.bytes_written + r.blob_bytes_written, denom),
        });
    }
    // Flushes are booked on L0 with a count of one each.
    out.compactions = jobs.saturating_sub(flushes);
    out.write_amp = ratio(written, flushed_all.max(flushed));
    out
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}
