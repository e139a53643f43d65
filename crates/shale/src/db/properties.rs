//! DB properties: `shale.stats` (RocksDB's compaction-stats table and DB
//! stats, same columns and meanings), `shale.levelstats`, `shale.sstables`,
//! per-level file counts and scheduling state.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::compaction::picker;
use crate::stats::LevelCompactionStats;

use super::compaction_job::picker_options;
use super::DbInner;

const GB: f64 = (1u64 << 30) as f64;
const MB: f64 = (1u64 << 20) as f64;

pub(crate) fn property(db: &Arc<DbInner>, name: &str) -> Option<String> {
    let name = name
        .strip_prefix("rocksdb.")
        .map_or(name.to_string(), |n| format!("shale.{n}"));
    let st = db.state.lock();
    let v = st.versions.current();
    if let Some(n) = name.strip_prefix("shale.num-files-at-level") {
        let level: usize = n.parse().ok()?;
        return (level < v.num_levels()).then(|| v.num_files(level).to_string());
    }
    Some(match name.as_str() {
        "shale.stats" => {
            drop(st);
            return Some(stats_text(db));
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
        "shale.num-running-flushes" => u8::from(st.flush_running).to_string(),
        "shale.mem-table-flush-pending" => u8::from(!st.imm.is_empty()).to_string(),
        "shale.num-immutable-mem-table" => st.imm.len().to_string(),
        "shale.compaction-pending" => {
            u8::from(super::compaction_job::needs_compaction(db, &st)).to_string()
        }
        "shale.estimate-pending-compaction-bytes" => pending_compaction_bytes(db, &v).to_string(),
        "shale.cur-size-all-mem-tables" => (st.mem.approximate_memory_usage()
            + st.imm
                .iter()
                .map(|m| m.approximate_memory_usage())
                .sum::<usize>())
        .to_string(),
        "shale.total-sst-files-size" | "shale.live-sst-files-size" => (0..v.num_levels())
            .map(|l| v.level_bytes(l))
            .sum::<u64>()
            .to_string(),
        "shale.background-errors" => st.bg_error_count.to_string(),
        "shale.background-error" => st
            .bg_error
            .as_ref()
            .map_or_else(String::new, |e| e.to_string()),
        "shale.wal-recovery" => db.wal_recovery_report.clone(),
        "shale.stall-micros" => db.stats.stall_micros.load(Ordering::Relaxed).to_string(),
        "shale.num-snapshots" => db.snapshots.all().len().to_string(),
        "shale.last-sequence" => db.last_visible().to_string(),
        "shale.compaction-bytes-written" => {
            let l = db.stats.levels.lock();
            l.iter().map(|r| r.bytes_written).sum::<u64>().to_string()
        }
        "shale.wal-bytes-written" => db.stats.wal_bytes.load(Ordering::Relaxed).to_string(),
        _ => return None,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

/// Bytes that must be rewritten to bring every level under its target
/// (RocksDB's estimate: for each level over target, the excess times the
/// fan-out into the next level, plus L0 when it is over its trigger).
pub(crate) fn pending_compaction_bytes(db: &DbInner, v: &crate::version::Version) -> u64 {
    let o = picker_options(db);
    let t = picker::level_targets(v, &o);
    let mut total = 0u64;
    if v.num_files(0) >= o.l0_trigger {
        total += v.level_bytes(0);
    }
    let mut carried = if v.num_files(0) >= o.l0_trigger {
        v.level_bytes(0)
    } else {
        0
    };
    for l in 1..o.num_levels - 1 {
        let bytes = v.level_bytes(l) + carried;
        carried = 0;
        if t.targets[l] > 0 && bytes > t.targets[l] {
            let excess = bytes - t.targets[l];
            let fanout = (v.level_bytes(l + 1) as f64 / v.level_bytes(l).max(1) as f64) + 1.0;
            total += (excess as f64 * fanout) as u64;
            carried = excess;
        }
    }
    total
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
    let read = s.bytes_read_non_output + s.bytes_read_output;
    let secs = s.micros as f64 / 1e6;
    let wnew = s.bytes_written.saturating_sub(s.bytes_read_output);
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
        s.bytes_written as f64 / GB,
        wnew as f64 / GB,
        s.bytes_moved as f64 / GB,
        w_amp,
        read as f64 / MB / (secs + 1e-6),
        s.bytes_written as f64 / MB / (secs + 1e-6),
        secs,
        s.cpu_micros as f64 / 1e6,
        s.count,
        if s.count > 0 { secs / s.count as f64 } else { 0.0 },
        fmt_count(s.keys_in),
        fmt_count(s.keys_dropped),
        0.0,
        0.0,
    );
}

fn stats_text(db: &Arc<DbInner>) -> String {
    let (v, compacting, scores) = {
        let st = db.state.lock();
        let v = st.versions.current();
        let o = picker_options(db);
        let t = picker::level_targets(&v, &o);
        let scores = picker::scores(&v, &o, &t);
        let compacting: Vec<usize> = (0..v.num_levels())
            .map(|l| v.files(l).iter().filter(|f| f.is_being_compacted()).count())
            .collect();
        (v, compacting, scores)
    };
    let levels = db.stats.levels.lock().clone();
    let mut out = String::from("\n** Compaction Stats [default] **\n");
    let header = "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)";
    out.push_str(header);
    out.push('\n');
    out.push_str(&"-".repeat(header.len() + 1));
    out.push('\n');
    let flushed = levels.first().map_or(0, |l| l.bytes_written);
    let mut sum = LevelCompactionStats::default();
    let (mut total_files, mut total_compacting, mut total_size) = (0usize, 0usize, 0u64);
    for (l, s) in levels.iter().enumerate() {
        let files = v.num_files(l);
        let size = v.level_bytes(l);
        sum.add(s);
        total_files += files;
        total_compacting += compacting.get(l).copied().unwrap_or(0);
        total_size += size;
        if files == 0 && s.micros == 0 && s.bytes_moved == 0 {
            continue;
        }
        let w_amp = if l == 0 {
            if flushed > 0 {
                s.bytes_written as f64 / flushed as f64
            } else {
                0.0
            }
        } else if s.bytes_read_non_output > 0 {
            s.bytes_written as f64 / s.bytes_read_non_output as f64
        } else {
            0.0
        };
        row(
            &mut out,
            &format!("L{l}"),
            files,
            compacting.get(l).copied().unwrap_or(0),
            size,
            scores.get(l).copied().unwrap_or(0.0),
            s,
            w_amp,
        );
    }
    let sum_wamp = if flushed > 0 {
        sum.bytes_written as f64 / flushed as f64
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
    let (int, uptime_int) = {
        let mut last = db.stats.levels_at_last_dump.lock();
        let mut prev = LevelCompactionStats::default();
        for s in &last.0 {
            prev.add(s);
        }
        let int = sum.sub(&prev);
        let secs = last.1.elapsed().as_secs_f64();
        *last = (levels.clone(), std::time::Instant::now());
        (int, secs)
    };
    let int_flushed = int.bytes_written.min(flushed);
    let int_wamp = int.bytes_written as f64 / (int_flushed as f64 + 1.0);
    row(&mut out, "Int", 0, 0, 0, 0.0, &int, int_wamp);
    let uptime = db.stats.started.elapsed().as_secs_f64();
    let stats = &db.stats;
    let comp_write: u64 = sum.bytes_written;
    let comp_read: u64 = sum.bytes_read_non_output + sum.bytes_read_output;
    let _ = writeln!(
        out,
        "\nUptime(secs): {uptime:.1} total, {uptime_int:.1} interval"
    );
    let _ = writeln!(
        out,
        "Flush(GB): cumulative {:.3}, interval {:.3}",
        flushed as f64 / GB,
        int_flushed as f64 / GB
    );
    let _ = writeln!(
        out,
        "Cumulative compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, {:.1} seconds",
        comp_write as f64 / GB,
        comp_write as f64 / MB / uptime.max(1e-6),
        comp_read as f64 / GB,
        comp_read as f64 / MB / uptime.max(1e-6),
        sum.micros as f64 / 1e6
    );
    let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let _ = writeln!(
        out,
        "Stalls(count): {} level0_slowdown, 0 level0_slowdown_with_compaction, {} level0_numfiles, 0 level0_numfiles_with_compaction, {} stop for pending_compaction_bytes, {} slowdown for pending_compaction_bytes, {} memtable_compaction, 0 memtable_slowdown, interval 0 total count",
        l(&stats.stall_l0_slowdown),
        l(&stats.stall_l0_stop),
        l(&stats.stall_pending_stop),
        l(&stats.stall_pending_slowdown),
        l(&stats.stall_memtable),
    );
    let writes = l(&stats.writes);
    let groups = l(&stats.commit_groups);
    let wal_writes = l(&stats.wal_writes);
    let syncs = l(&stats.wal_syncs);
    let stall = l(&stats.stall_micros);
    let _ = writeln!(
        out,
        "\n** DB Stats **\nUptime(secs): {uptime:.1} total, {uptime:.1} interval"
    );
    let _ = writeln!(
        out,
        "Cumulative writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.2} GB, {:.2} MB/s",
        fmt_count(writes),
        fmt_count(l(&stats.keys_written)),
        fmt_count(groups),
        writes as f64 / groups.max(1) as f64,
        l(&stats.ingest_bytes) as f64 / GB,
        l(&stats.ingest_bytes) as f64 / MB / uptime.max(1e-6)
    );
    let _ = writeln!(
        out,
        "Cumulative WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        fmt_count(wal_writes),
        fmt_count(syncs),
        wal_writes as f64 / syncs.max(1) as f64,
        l(&stats.wal_bytes) as f64 / GB,
        l(&stats.wal_bytes) as f64 / MB / uptime.max(1e-6)
    );
    let secs = stall as f64 / 1e6;
    let _ = writeln!(
        out,
        "Cumulative stall: {:02}:{:02}:{:06.3} H:M:S, {:.1} percent",
        (secs / 3600.0) as u64,
        ((secs / 60.0) as u64) % 60,
        secs % 60.0,
        100.0 * secs / uptime.max(1e-6)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(fmt_count(9999), "9999");
        assert_eq!(fmt_count(1_566_000), "1566K");
        assert_eq!(fmt_count(12_000_000), "12M");
        assert_eq!(fmt_size(0), "0.00 KB");
        assert_eq!(fmt_size(3_365_000), "3.21 MB");
    }
}
