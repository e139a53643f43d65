//! DB properties: `shale.stats` (RocksDB's compaction-stats table and DB
//! stats, same columns and meanings; see docs/DB_BENCH.md §7),
//! `shale.compaction-stats-json` (the same numbers as one JSON object for
//! tools), `shale.levelstats`, `shale.sstables`, per-level file counts,
//! stall counters, the MANIFEST size, scheduling state and the table cache
//! (`shale.num-open-tables`, `shale.table-cache-capacity`,
//! `shale.estimate-table-readers-mem`), column families
//! (`shale.num-column-families`, `shale.cf-write-stall`,
//! `shale.cf-options-report`) and the WAL (`shale.live-wal-files`,
//! `shale.live-wal-bytes`), the rate limiter (`shale.rate-limiter`,
//! `none` without one) and the memory ledger (`shale.memory-budget`,
//! `shale.memory-table-readers`, `shale.memory-buffers`,
//! `shale.memory-memtable-reserve`: what the budget holds for memtables).
//! `rocksdb.*` names map to `shale.*`.
//!
//! Per family (`Db::property_cf`): the shape, memtable and stall properties
//! describe the family asked for; the others (statistics, errors, caches,
//! WAL) are the DB's.
//!
//! Thread safety: each property takes the DB mutex briefly for a consistent
//! view of the version and scheduling state. Some also take the stats
//! locks (per-level statistics) or the table cache's locks while holding
//! it; those are leaves (nothing is taken after them, no IO under them),
//! so the order is the DB mutex, then them (docs/ARCHITECTURE.md, "Locks").

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::compaction::picker;
use crate::memory::Part;
use crate::stats::{LevelCompactionStats, StallCause, WriteCounters};
use crate::version::sizing;

use crate::compaction::runner::picker_options;
use crate::shared::DbInner;

const GB: f64 = (1u64 << 30) as f64;
const MB: f64 = (1u64 << 20) as f64;

/// Per level, the bytes compaction could free (the estimate `reclaim` is
/// about): RocksDB's compensation for files dense with point tombstones,
/// the bytes below files' range tombstones, and the share of expiring
/// values all expired by `now`.
fn reclaimable_per_level(v: &crate::version::Version, now: u64) -> Vec<u64> {
    (0..v.num_levels())
        .map(|level| {
            v.files(level)
                .iter()
                .map(|f| {
                    let mut b = crate::version::sizing::compensated_size(v, level, f)
                        .saturating_sub(f.file_size);
                    if f.expiry_entries > 0 && f.expiry_max <= now && f.num_entries > 0 {
                        b += f.file_size * f.expiry_entries.min(f.num_entries) / f.num_entries;
                    }
                    b
                })
                .sum()
        })
        .collect()
}

/// `shale.rate-limiter`: the rate and, per priority, the bytes, requests
/// and wait of `Options::rate_limiter` (one `name: value` line each).
fn rate_limiter_text(l: &crate::io::RateLimiter) -> String {
    let r = crate::observe::stats_report::rate_limiter_stats(l);
    format!(
        "bytes_per_second: {}\nmax_bytes_per_second: {}\nauto_tuned: {}\n\
         flush_bytes: {}\nflush_requests: {}\nflush_wait_micros: {}\n\
         compaction_bytes: {}\ncompaction_requests: {}\ncompaction_wait_micros: {}\n",
        r.bytes_per_second,
        r.max_bytes_per_second,
        r.auto_tuned,
        r.flush_bytes,
        r.flush_requests,
        r.flush_wait_micros,
        r.compaction_bytes,
        r.compaction_requests,
        r.compaction_wait_micros,
    )
}

pub(crate) fn property(db: &Arc<DbInner>, cf: u32, name: &str) -> Option<String> {
    let name = name
        .strip_prefix("rocksdb.")
        .map_or(name.to_string(), |n| format!("shale.{n}"));
    let st = db.state.lock();
    let c = st.cf(cf)?;
    let v = st.versions.current(cf);
    let o = picker_options(&c.cf.opts(), st.versions.num_levels());
    if let Some(n) = name.strip_prefix("shale.io-").filter(|n| *n != "stats") {
        drop(st);
        return io_counter(db, n);
    }
    if let Some(n) = name.strip_prefix("shale.num-files-at-level") {
        let level: usize = n.parse().ok()?;
        return (level < v.num_levels()).then(|| v.num_files(level).to_string());
    }
    Some(match name.as_str() {
        "shale.stats" => {
            drop(st);
            return Some(stats_text(db, cf));
        }
        "shale.bloom-per-level" => {
            // Over the tables now at each level that are open.
            let counters = db.table_cache.filter_counters();
            let mut s = String::from(
                "Level Files Bits/key Checks Useful FalsePos FP-rate PrefixChecks PrefixUseful\n",
            );
            for l in 0..v.num_levels() {
                let mut sum = [0u64; 5];
                for f in v.files(l) {
                    if let Some(c) = counters.get(&f.number) {
                        for (a, b) in sum.iter_mut().zip(c) {
                            *a += b;
                        }
                    }
                }
                let [checks, useful, fp, pchecks, puseful] = sum;
                let rate = fp as f64 / (useful + fp).max(1) as f64;
                let _ = writeln!(
                    s,
                    "{l:>5} {:>5} {:>8.2} {checks:>6} {useful:>6} {fp:>8} {rate:>7.4} {pchecks:>12} {puseful:>12}",
                    v.num_files(l),
                    c.cf.opts().bloom_bits_for_level(l),
                );
            }
            s
        }
        "shale.levelstats" => {
            let mut s = String::from("Level Files Size(MB)\n--------------------\n");
            for l in 0..v.num_levels() {
                let _ = writeln!(
                    s,
                    "{l:>3} {:>8} {:>8.0}",
                    v.num_files(l),
                    v.level_bytes(l) as f64 / MB
                );
            }
            s
        }
        "shale.sstables" => {
            let mut s = String::new();
            for l in 0..v.num_levels() {
                let _ = writeln!(s, "--- level {l} ---");
                for f in v.files(l) {
                    let _ = writeln!(
                        s,
                        " {}:{}[{} .. {}]['{}' .. '{}']",
                        f.number,
                        f.file_size,
                        f.smallest_seq,
                        f.largest_seq,
                        hex(f.smallest_user_key()),
                        hex(f.largest_user_key())
                    );
                }
            }
            s
        }
        "shale.num-running-compactions" => st.compactions_running.to_string(),
        "shale.num-running-flushes" => st.flushes_running.to_string(),
        "shale.mem-table-flush-pending" => u8::from(!c.imm.is_empty()).to_string(),
        "shale.num-immutable-mem-table" => c.imm.len().to_string(),
        "shale.compaction-pending" => u8::from(crate::compaction::schedule::needs_compaction_cf(
            db, &st, cf,
        ))
        .to_string(),
        "shale.estimate-pending-compaction-bytes" => match o.style {
            // RocksDB estimates it for leveled compaction only.
            crate::options::CompactionStyle::Universal => "0".to_string(),
            _ => sizing::pending_compaction_bytes(&v, &o).to_string(),
        },
        // L0 files plus non-empty levels: what universal compaction and
        // its write stalls count.
        "shale.num-sorted-runs" => crate::compaction::universal::num_sorted_runs(&v).to_string(),
        "shale.cur-size-all-mem-tables" => c.memtable_bytes().to_string(),
        "shale.cur-size-active-mem-table" => c.mem.approximate_memory_usage().to_string(),
        "shale.num-entries-active-mem-table" => c.mem.num_entries().to_string(),
        "shale.estimate-num-keys" => (c
            .imm
            .iter()
            .chain(std::iter::once(&c.mem))
            .map(|m| m.num_entries() as u64)
            .sum::<u64>()
            + (0..v.num_levels())
                .flat_map(|l| v.files(l))
                .map(|f| f.num_entries)
                .sum::<u64>())
        .to_string(),
        "shale.size-all-mem-tables-db" => db.memory.get(Part::Memtables).to_string(),
        "shale.io-stats" => crate::observe::stats_report::io_stats(db).table(),
        "shale.memory-budget" => db.memory.limit().to_string(),
        "shale.memory-table-readers" => db.memory.get(Part::TableReaders).to_string(),
        "shale.memory-buffers" => db.memory.get(Part::Buffers).to_string(),
        "shale.memory-memtable-reserve" => db.memory.memtable_reserve().to_string(),
        "shale.num-column-families" => st.cfs.len().to_string(),
        "shale.cf-write-stall" => format!("{:?}", c.stall),
        "shale.cf-options-report" => db.cf_options_report.clone(),
        "shale.live-wal-files" => (st.closed_wals.len() + 1).to_string(),
        "shale.live-wal-bytes" => db.live_wal_bytes(&st).to_string(),
        "shale.total-sst-files-size" | "shale.live-sst-files-size" => (0..v.num_levels())
            .map(|l| v.level_bytes(l))
            .sum::<u64>()
            .to_string(),
        "shale.background-errors" => st.errors.count.to_string(),
        "shale.background-error" => st
            .errors
            .current
            .as_ref()
            .map_or_else(String::new, |e| e.error.to_string()),
        "shale.background-error-severity" => st
            .errors
            .current
            .as_ref()
            .map_or("none", |e| e.severity.name())
            .to_string(),
        "shale.bg-error-recovery-count" => st.errors.recoveries.to_string(),
        "shale.bg-error-recovery" => st.errors.recovery_state().to_string(),
        "shale.bg-error-resume-attempts" => st.errors.auto_attempts.to_string(),
        "shale.is-write-stopped" => u8::from(db.stop_writes.load(Ordering::Acquire)).to_string(),
        "shale.wal-recovery" => db.wal_recovery_report.clone(),
        "shale.stall-micros" => db.stats.stall_micros.load(Ordering::Relaxed).to_string(),
        "shale.compaction-stats-json" => {
            drop(st);
            return Some(stats_json(db, cf));
        }
        "shale.base-level" => picker::level_targets(&v, &o).base_level.to_string(),
        "shale.num-snapshots" => db.snapshots.all().len().to_string(),
        "shale.last-sequence" => db.last_visible().to_string(),
        "shale.compaction-bytes-written" => {
            let l = db.stats.levels.lock();
            l.iter().map(|r| r.bytes_written).sum::<u64>().to_string()
        }
        // Flushes' and compactions' blob file bytes (not in the above).
        "shale.blob-bytes-written" => {
            let l = db.stats.levels.lock();
            l.iter()
                .map(|r| r.blob_bytes_written)
                .sum::<u64>()
                .to_string()
        }
        "shale.estimate-reclaimable-bytes" => {
            let per = reclaimable_per_level(&v, db.opts.clock.now_secs());
            let levels: Vec<String> = per
                .iter()
                .enumerate()
                .map(|(l, b)| format!("L{l}={b}"))
                .collect();
            format!("{} ({})", per.iter().sum::<u64>(), levels.join(" "))
        }
        "shale.fifo-dropped-files" => db
            .stats
            .fifo_dropped_files
            .load(Ordering::Relaxed)
            .to_string(),
        "shale.fifo-dropped-bytes" => db
            .stats
            .fifo_dropped_bytes
            .load(Ordering::Relaxed)
            .to_string(),
        "shale.delete-only-bytes" => db
            .stats
            .delete_only_bytes
            .load(Ordering::Relaxed)
            .to_string(),
        "shale.merge-failures" => {
            let l = db.stats.levels.lock();
            l.iter().map(|r| r.merge_failures).sum::<u64>().to_string()
        }
        "shale.single-delete-mismatches" => {
            let l = db.stats.levels.lock();
            l.iter()
                .map(|r| r.single_delete_mismatches)
                .sum::<u64>()
                .to_string()
        }
        "shale.compaction-filter-changes" => {
            let l = db.stats.levels.lock();
            l.iter().map(|r| r.filtered).sum::<u64>().to_string()
        }
        "shale.wal-bytes-written" => db.stats.wal_bytes.get().to_string(),
        "shale.manifest-file-size" => st.versions.manifest_file_size().to_string(),
        "shale.rate-limiter" => {
            drop(st);
            return Some(match db.opts.rate_limiter.as_deref() {
                Some(l) => rate_limiter_text(l),
                None => "none".to_string(),
            });
        }
        "shale.num-open-tables" => db.table_cache.num_open().to_string(),
        "shale.table-cache-capacity" => db
            .table_cache
            .capacity()
            .map_or_else(|| "-1".to_string(), |c| c.to_string()),
        "shale.estimate-table-readers-mem" => db.table_cache.readers_memory().to_string(),
        n if n.starts_with("shale.") && n.contains("blob") => {
            drop(st);
            return crate::shared::blob_glue::property(db, &v, n);
        }
        _ => {
            drop(st);
            return super::cache_properties::property(db, &name);
        }
    })
}

/// `shale.io-{read,write}-{bytes,requests}-<purpose>`: one IO counter
/// (`Db::stats().io`) as a number.
fn io_counter(db: &DbInner, name: &str) -> Option<String> {
    let (dir, rest) = name.split_once('-')?;
    let (what, purpose) = rest.split_once('-')?;
    let p = crate::observe::stats_report::io_stats(db)
        .purposes
        .into_iter()
        .find(|p| p.purpose == purpose)?;
    let n = match (dir, what) {
        ("read", "bytes") => p.read_bytes,
        ("read", "requests") => p.read_requests,
        ("write", "bytes") => p.write_bytes,
        ("write", "requests") => p.write_requests,
        _ => return None,
    };
    Some(n.to_string())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

fn fmt_size(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= GB * 1024.0 {
        format!("{:.2} TB", b / GB / 1024.0)
    } else if b >= GB {
        format!("{:.2} GB", b / GB)
    } else if b >= MB {
        format!("{:.2} MB", b / MB)
    } else {
        format!("{:.2} KB", b / 1024.0)
    }
}

/// RocksDB's number format for key counts: as is below 10,000, then K/M/G.
fn fmt_count(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else if n < 10_000_000 {
        format!("{}K", n / 1000)
    } else if n < 10_000_000_000 {
        format!("{}M", n / 1_000_000)
    } else {
        format!("{}G", n / 1_000_000_000)
    }
}

#[allow(clippy::too_many_arguments)]
fn row(
    out: &mut String,
    name: &str,
    files: usize,
    compacting: usize,
    size: u64,
    score: f64,
    s: &LevelCompactionStats,
    w_amp: f64,
) {
    // As RocksDB's table: Read and Write count blob bytes too (Rblob and
    // Wblob show them apart).
    let read = s.bytes_read_non_output + s.bytes_read_output + s.blob_bytes_read;
    let written = s.bytes_written + s.blob_bytes_written;
    let secs = s.micros as f64 / 1e6;
    let wnew = written.saturating_sub(s.bytes_read_output);
    let _ = writeln!(
        out,
        "{:>4} {:>6}/{:<3} {:>8} {:>5.1} {:>8.1} {:>7.1} {:>8.1} {:>9.1} {:>8.1} {:>9.1} {:>5.1} {:>8.1} {:>8.1} {:>9.2} {:>17.2} {:>9} {:>8.3} {:>7} {:>6} {:>9.1} {:>9.1}",
        name,
        files,
        compacting,
        fmt_size(size),
        score,
        read as f64 / GB,
        s.bytes_read_non_output as f64 / GB,
        s.bytes_read_output as f64 / GB,
        written as f64 / GB,
        wnew as f64 / GB,
        s.bytes_moved as f64 / GB,
        w_amp,
        read as f64 / MB / (secs + 1e-6),
        written as f64 / MB / (secs + 1e-6),
        secs,
        s.cpu_micros as f64 / 1e6,
        s.count,
        if s.count > 0 { secs / s.count as f64 } else { 0.0 },
        fmt_count(s.keys_in),
        fmt_count(s.keys_dropped),
        s.blob_bytes_read as f64 / GB,
        s.blob_bytes_written as f64 / GB,
    );
}

/// What `shale.stats` and the JSON property read: the shape under the DB
/// mutex, then the per-level stats.
struct Shape {
    v: Arc<crate::version::Version>,
    compacting: Vec<usize>,
    scores: Vec<f64>,
    base_level: usize,
    pending: u64,
}

fn shape(db: &Arc<DbInner>, cf: u32) -> Shape {
    let st = db.state.lock();
    let v = st.versions.current(cf);
    let o = crate::compaction::runner::family_picker_options(db, &st, cf)
        .unwrap_or_else(|| picker_options(&db.opts.cf, st.versions.num_levels()));
    let t = picker::level_targets(&v, &o);
    let scores = picker::scores(&v, &o, &t);
    let compacting: Vec<usize> = (0..v.num_levels())
        .map(|l| v.files(l).iter().filter(|f| f.is_being_compacted()).count())
        .collect();
    let pending = sizing::pending_compaction_bytes(&v, &o);
    Shape {
        v,
        compacting,
        scores,
        base_level: t.base_level,
        pending,
    }
}

/// W-Amp of one level row (docs/DB_BENCH.md §7.1): L0 = Write / flushed,
/// Ln = Write / Rn.
fn level_wamp(level: usize, s: &LevelCompactionStats, flushed: u64) -> f64 {
    let denom = if level == 0 {
        flushed
    } else {
        s.bytes_read_non_output + s.blob_bytes_read
    };
    if denom > 0 {
        (s.bytes_written + s.blob_bytes_written) as f64 / denom as f64
    } else {
        0.0
    }
}

fn sum_of(levels: &[LevelCompactionStats]) -> LevelCompactionStats {
    let mut sum = LevelCompactionStats::default();
    for s in levels {
        sum.add(s);
    }
    sum
}

fn stats_text(db: &Arc<DbInner>, cf: u32) -> String {
    let Shape {
        v,
        compacting,
        scores,
        ..
    } = shape(db, cf);
    let levels = db.stats.levels.lock().clone();
    let mut out = String::from("\n** Compaction Stats [default] **\n");
    let header = "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)";
    out.push_str(header);
    out.push('\n');
    out.push_str(&"-".repeat(header.len() + 1));
    out.push('\n');
    // What flushes wrote (tables and blob files): the bytes ingested.
    let flushed = db.stats.flushed_bytes();
    let sum = sum_of(&levels);
    let (mut total_files, mut total_compacting, mut total_size) = (0usize, 0usize, 0u64);
    for (l, s) in levels.iter().enumerate() {
        let files = v.num_files(l);
        let size = v.level_bytes(l);
        total_files += files;
        total_compacting += compacting.get(l).copied().unwrap_or(0);
        total_size += size;
        if files == 0 && s.micros == 0 && s.bytes_moved == 0 {
            continue;
        }
        row(
            &mut out,
            &format!("L{l}"),
            files,
            compacting.get(l).copied().unwrap_or(0),
            size,
            scores.get(l).copied().unwrap_or(0.0),
            s,
            level_wamp(l, s, flushed),
        );
    }
    let sum_wamp = if flushed > 0 {
        (sum.bytes_written + sum.blob_bytes_written) as f64 / flushed as f64
    } else {
        0.0
    };
    row(
        &mut out,
        "Sum",
        total_files,
        total_compacting,
        total_size,
        0.0,
        &sum,
        sum_wamp,
    );
    let (int, int_flushed, uptime_int) = {
        let mut last = db.stats.levels_at_last_dump.lock();
        let prev = sum_of(&last.0);
        let prev_flushed = last
            .0
            .first()
            .map_or(0, |l| l.bytes_written + l.blob_bytes_written);
        let int = sum.sub(&prev);
        let secs = last.1.elapsed().as_secs_f64();
        *last = (levels.clone(), std::time::Instant::now());
        (int, flushed.saturating_sub(prev_flushed), secs)
    };
    let int_wamp = (int.bytes_written + int.blob_bytes_written) as f64 / (int_flushed as f64 + 1.0);
    row(&mut out, "Int", 0, 0, 0, 0.0, &int, int_wamp);
    // By thread pool: flushes run at high priority, compactions at low.
    out.push_str("\n** Compaction Stats [default] **\n");
    let pheader = header.replacen("Level", "Priority", 1);
    out.push_str(&pheader);
    out.push('\n');
    out.push_str(&"-".repeat(pheader.len() + 1));
    out.push('\n');
    let low = sum_of(levels.get(1..).unwrap_or(&[]));
    if low.count > 0 || low.bytes_moved > 0 {
        let w = level_wamp(1, &low, flushed);
        row(&mut out, "Low", 0, 0, 0, 0.0, &low, w);
    }
    if let Some(high) = levels.first().filter(|h| h.count > 0) {
        row(&mut out, "High", 0, 0, 0, 0.0, high, 0.0);
    }
    let uptime = db.stats.started.elapsed().as_secs_f64();
    let stats = &db.stats;
    let (blob_files, blob_size, blob_live, blob_garbage) = crate::shared::blob_glue::blob_sums(&v);
    let _ = writeln!(
        out,
        "\nBlob file count: {blob_files}, total size: {:.1} GB, garbage size: {:.1} GB, space amp: {:.2}",
        blob_size as f64 / GB,
        blob_garbage as f64 / GB,
        if blob_live > 0 {
            blob_size as f64 / blob_live as f64
        } else {
            0.0
        }
    );
    let _ = writeln!(
        out,
        "Uptime(secs): {uptime:.1} total, {uptime_int:.1} interval"
    );
    let _ = writeln!(
        out,
        "Flush(GB): cumulative {:.3}, interval {:.3}",
        flushed as f64 / GB,
        int_flushed as f64 / GB
    );
    out.push_str("AddFile(GB): cumulative 0.000, interval 0.000\nAddFile(Total Files): cumulative 0, interval 0\nAddFile(L0 Files): cumulative 0, interval 0\nAddFile(Keys): cumulative 0, interval 0\n");
    for (what, s, secs) in [("Cumulative", &sum, uptime), ("Interval", &int, uptime_int)] {
        let w = s.bytes_written as f64;
        let r = (s.bytes_read_non_output + s.bytes_read_output) as f64;
        let _ = writeln!(
            out,
            "{what} compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, {:.1} seconds",
            w / GB,
            w / MB / secs.max(1e-6),
            r / GB,
            r / MB / secs.max(1e-6),
            s.micros as f64 / 1e6
        );
    }
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let total_stalls = stats.total_stalls();
    let int_stalls = total_stalls.saturating_sub(
        stats
            .stalls_at_last_dump
            .swap(total_stalls, Ordering::Relaxed),
    );
    let _ = writeln!(
        out,
        "Stalls(count): {} level0_slowdown, {} level0_slowdown_with_compaction, {} level0_numfiles, {} level0_numfiles_with_compaction, {} stop for pending_compaction_bytes, {} slowdown for pending_compaction_bytes, {} memtable_compaction, 0 memtable_slowdown, interval {} total count",
        l(&stats.stall_l0_slowdown),
        l(&stats.stall_l0_slowdown_with_compaction),
        l(&stats.stall_l0_stop),
        l(&stats.stall_l0_stop_with_compaction),
        l(&stats.stall_pending_stop),
        l(&stats.stall_pending_slowdown),
        l(&stats.stall_memtable),
        int_stalls,
    );
    let now = stats.write_counters();
    let (prev, db_int_secs) = {
        let mut last = stats.db_at_last_dump.lock();
        let r = (last.0, last.1.elapsed().as_secs_f64());
        *last = (now, std::time::Instant::now());
        r
    };
    let _ = writeln!(
        out,
        "\n** DB Stats **\nUptime(secs): {uptime:.1} total, {db_int_secs:.1} interval"
    );
    db_stats_lines(&mut out, "Cumulative", &now, uptime, false);
    db_stats_lines(&mut out, "Interval", &now.since(&prev), db_int_secs, true);
    out.push_str("\n** IO Stats (cumulative, by purpose) **\n");
    out.push_str(&crate::observe::stats_report::io_stats(db).table());
    out
}

/// The writes / WAL / stall lines of the DB Stats section.
fn db_stats_lines(out: &mut String, what: &str, c: &WriteCounters, secs: f64, ingest_mb: bool) {
    let secs = secs.max(1e-6);
    let ingest = if ingest_mb {
        format!("{:.2} MB", c.ingest_bytes as f64 / MB)
    } else {
        format!("{:.2} GB", c.ingest_bytes as f64 / GB)
    };
    let _ = writeln!(
        out,
        "{what} writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {ingest}, {:.2} MB/s",
        fmt_count(c.writes),
        fmt_count(c.keys),
        fmt_count(c.groups),
        c.writes as f64 / c.groups.max(1) as f64,
        c.ingest_bytes as f64 / MB / secs
    );
    let _ = writeln!(
        out,
        "{what} WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        fmt_count(c.wal_writes),
        fmt_count(c.wal_syncs),
        c.wal_writes as f64 / c.wal_syncs.max(1) as f64,
        c.wal_bytes as f64 / GB,
        c.wal_bytes as f64 / MB / secs
    );
    let stall = c.stall_micros as f64 / 1e6;
    let _ = writeln!(
        out,
        "{what} stall: {:02}:{:02}:{:06.3} H:M:S, {:.1} percent",
        (stall / 3600.0) as u64,
        ((stall / 60.0) as u64) % 60,
        stall % 60.0,
        100.0 * stall / secs
    );
}

/// `shale.compaction-stats-json`: per-level and summed compaction numbers
/// (bytes, not GB), stall counts and times, in one JSON object. Unlike
/// `shale.stats` it does not reset the interval figures.
fn stats_json(db: &Arc<DbInner>, cf: u32) -> String {
    let sh = shape(db, cf);
    let levels = db.stats.levels.lock().clone();
    // What flushes wrote (tables and blob files): the bytes ingested.
    let flushed = db.stats.flushed_bytes();
    let level_obj = |name: String, s: &LevelCompactionStats, extra: String, w_amp: f64| {
        format!(
            "{{{name}\"bytes_read_non_output\": {}, \"bytes_read_output\": {}, \"bytes_written\": {}, \"bytes_new\": {}, \"bytes_moved\": {}, \"w_amp\": {:.4}, \"micros\": {}, \"cpu_micros\": {}, \"count\": {}, \"keys_in\": {}, \"keys_dropped\": {}, \"files_in_non_output\": {}, \"files_in_output\": {}, \"files_out\": {}, \"blob_bytes_read\": {}, \"blob_bytes_written\": {}{extra}}}",
            s.bytes_read_non_output,
            s.bytes_read_output,
            s.bytes_written,
            s.bytes_written.saturating_sub(s.bytes_read_output),
            s.bytes_moved,
            w_amp,
            s.micros,
            s.cpu_micros,
            s.count,
            s.keys_in,
            s.keys_dropped,
            s.files_in_non_output,
            s.files_in_output,
            s.files_out,
            s.blob_bytes_read,
            s.blob_bytes_written,
        )
    };
    let mut rows = Vec::new();
    for (l, s) in levels.iter().enumerate() {
        rows.push(level_obj(
            format!("\"level\": {l}, "),
            s,
            format!(
                ", \"files\": {}, \"files_compacting\": {}, \"size\": {}, \"score\": {:.4}",
                sh.v.num_files(l),
                sh.compacting.get(l).copied().unwrap_or(0),
                sh.v.level_bytes(l),
                sh.scores.get(l).copied().unwrap_or(0.0)
            ),
            level_wamp(l, s, flushed),
        ));
    }
    let sum = sum_of(&levels);
    let sum_wamp = if flushed > 0 {
        (sum.bytes_written + sum.blob_bytes_written) as f64 / flushed as f64
    } else {
        0.0
    };
    let moved_ratio = if sum.bytes_written + sum.bytes_moved > flushed {
        sum.bytes_moved as f64 / (sum.bytes_written + sum.bytes_moved - flushed) as f64
    } else {
        0.0
    };
    let sum_obj = level_obj(
        String::new(),
        &sum,
        format!(
            ", \"flush_bytes\": {flushed}, \"size\": {}, \"move_ratio\": {moved_ratio:.4}",
            sh.v.total_bytes()
        ),
        sum_wamp,
    );
    let st = &db.stats;
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let cause_micros = |c: StallCause| {
        st.stall_cause_micros
            .get(c as usize)
            .map_or(0, |a| a.load(Ordering::Relaxed))
    };
    format!(
        "{{\"levels\": [{}], \"sum\": {sum_obj}, \"w_amp\": {sum_wamp:.4}, \"base_level\": {}, \"pending_compaction_bytes\": {}, \"ingest_bytes\": {}, \"wal_bytes\": {}, \"stalls\": {{\"level0_slowdown\": {}, \"level0_slowdown_with_compaction\": {}, \"level0_numfiles\": {}, \"level0_numfiles_with_compaction\": {}, \"stop_for_pending_compaction_bytes\": {}, \"slowdown_for_pending_compaction_bytes\": {}, \"memtable_compaction\": {}, \"micros\": {}, \"level0_slowdown_micros\": {}, \"level0_numfiles_micros\": {}, \"pending_stop_micros\": {}, \"pending_slowdown_micros\": {}, \"memtable_micros\": {}}}}}",
        rows.join(", "),
        sh.base_level,
        sh.pending,
        st.ingest_bytes.get(),
        st.wal_bytes.get(),
        l(&st.stall_l0_slowdown),
        l(&st.stall_l0_slowdown_with_compaction),
        l(&st.stall_l0_stop),
        l(&st.stall_l0_stop_with_compaction),
        l(&st.stall_pending_stop),
        l(&st.stall_pending_slowdown),
        l(&st.stall_memtable),
        l(&st.stall_micros),
        cause_micros(StallCause::L0Slowdown),
        cause_micros(StallCause::L0Stop),
        cause_micros(StallCause::PendingStop),
        cause_micros(StallCause::PendingSlowdown),
        cause_micros(StallCause::MemtableStop),
    )
}

#[cfg(test)]
mod tests;
