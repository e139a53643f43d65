//! Beyond db_bench: the per-benchmark record (every figure, the flags and
//! the engine), its one-line summary, `--json` output (one object per line)
//! and `shale-bench compare`.
//!
//! The summary line starts with `Summary ` so that scripts grepping
//! `^<benchmark name>` for the result line never see it. Plain data.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::blob_stats::BlobFigures;
use crate::error::{bail, Result};
use crate::histogram::Histogram;
use crate::reporter::Interval;
use crate::sysinfo::IoCounters;

/// Latency figures (µs) of all measured ops.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Samples.
    pub count: u64,
    /// Mean.
    pub avg: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// 99.99th percentile.
    pub p99_99: f64,
    /// Largest.
    pub max: u64,
}

impl Latency {
    /// From a merged histogram.
    pub fn from_histogram(h: &Histogram) -> Latency {
        Latency {
            count: h.count(),
            avg: h.average(),
            p50: h.percentile(50.0),
            p75: h.percentile(75.0),
            p99: h.percentile(99.0),
            p99_9: h.percentile(99.9),
            p99_99: h.percentile(99.99),
            max: h.max(),
        }
    }
}

/// The purposes of Shale's IO accounting, in its order.
pub const IO_PURPOSES: [&str; 6] = ["user", "flush", "compaction", "wal", "other", "blob"];

/// File IO of one purpose during a benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PurposeIo {
    /// `user`, `flush`, `compaction`, `wal` or `other`.
    pub purpose: String,
    /// Bytes read.
    pub read_bytes: u64,
    /// Read requests.
    pub read_requests: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Write requests.
    pub write_requests: u64,
}

/// ` io_read=user:12.0MiB/4.0KiB,...`: MiB and average request size of
/// each purpose that moved bytes in that direction.
fn io_summary(io: &[PurposeIo], name: &str, f: fn(&PurposeIo) -> (u64, u64)) -> String {
    let parts: Vec<String> = io
        .iter()
        .filter_map(|p| {
            let (bytes, requests) = f(p);
            (requests > 0).then(|| {
                format!(
                    "{}:{:.1}MiB/{:.1}KiB",
                    p.purpose,
                    bytes as f64 / 1_048_576.0,
                    bytes as f64 / requests as f64 / 1024.0
                )
            })
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" {name}={}", parts.join(","))
    }
}

/// Everything measured for one benchmark.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// Benchmark name.
    pub benchmark: String,
    /// `--engine`.
    pub engine: String,
    /// Engine version.
    pub engine_version: String,
    /// Base seed.
    pub base_seed: u64,
    /// Measured threads (a *whilewriting writer excluded).
    pub threads: u64,
    /// Ops of the result line.
    pub ops: u64,
    /// Ops of every thread, a writer included (per-op figures use this).
    pub ops_all_threads: u64,
    /// Wall-clock seconds.
    pub elapsed_secs: f64,
    /// Result-line ops/sec.
    pub ops_per_sec: f64,
    /// Result-line micros/op.
    pub micros_per_op: f64,
    /// Result-line MB/s.
    pub mb_per_sec: Option<f64>,
    /// Result-line message.
    pub message: String,
    /// Process CPU µs (user + system).
    pub cpu_micros: u64,
    /// CPU µs per op.
    pub cpu_us_per_op: f64,
    /// /proc/self/io deltas.
    pub io: Option<IoCounters>,
    /// Storage bytes read per op.
    pub read_bytes_per_op: Option<f64>,
    /// Storage bytes written per op (write_bytes − cancelled).
    pub write_bytes_per_op: Option<f64>,
    /// Bytes passed to write calls per op.
    pub wchar_per_op: Option<f64>,
    /// Key + value bytes put by the benchmark.
    pub user_bytes_written: u64,
    /// Range tombstones issued (db_bench's fill tombstones, also when
    /// expanded into point deletes, and deleterange); not in `ops`.
    #[serde(default)]
    pub range_tombstones: u64,
    /// Storage bytes written ÷ user bytes written.
    pub write_amp: Option<f64>,
    /// Engine-counted write-amp: (flush + compaction bytes written + WAL
    /// bytes written + blob bytes written) ÷ user bytes written, from the
    /// engine's counters (Shale: `shale.compaction-bytes-written` +
    /// `shale.wal-bytes-written`, the `sum.bytes_written` and `wal_bytes`
    /// of `shale.compaction-stats-json`, which count tables only, + the
    /// blob bytes of `blob.bytes_written` when the DB has blob files).
    #[serde(default)]
    pub engine_write_amp: Option<f64>,
    /// Per output level (L0 first): bytes flushes and compactions wrote
    /// into the level during the benchmark ÷ user bytes written (Shale;
    /// see `level_amp`; tables only). Their sum plus the WAL's share plus
    /// `blob.write_amp` is `engine_write_amp`.
    #[serde(default)]
    pub level_write_amp: Option<Vec<f64>>,
    /// SST block reads (from storage, cache misses) per op (Shale:
    /// `shale.block-reads` delta).
    #[serde(default)]
    pub block_reads_per_op: Option<f64>,
    /// Bloom filter checks that excluded a table, per op (Shale:
    /// `shale.bloom-useful` delta).
    #[serde(default)]
    pub bloom_useful_per_op: Option<f64>,
    /// File IO during the benchmark by purpose (Shale: `shale.io-*`, see
    /// `Db::stats().io`), so a shrunk compaction read size shows without
    /// iostat.
    #[serde(default)]
    pub io_by_purpose: Option<Vec<PurposeIo>>,
    /// Peak RSS during the benchmark (process-wide if it cannot be reset).
    pub peak_rss_bytes: Option<u64>,
    /// DB directory size after the benchmark (every file: tables, blob
    /// files, WALs, MANIFEST).
    pub db_size_bytes: u64,
    /// The largest DB directory size sampled during the benchmark
    /// (`--space_sample_ms`; `None` when off).
    #[serde(default)]
    pub peak_db_size_bytes: Option<u64>,
    /// Blob files (key-value separation), when the DB has them.
    #[serde(default)]
    pub blob: Option<BlobFigures>,
    /// Live keys × (key + value size), estimated.
    pub live_bytes_estimate: Option<u64>,
    /// DB size ÷ live bytes.
    pub space_amp: Option<f64>,
    /// Write-stall µs during the benchmark.
    pub stall_micros: Option<u64>,
    /// Stall time as % of elapsed.
    pub stall_pct: Option<f64>,
    /// Latency of all measured ops.
    pub latency_us: Latency,
    /// Open loop: the target rate.
    pub arrival_rate: Option<f64>,
    /// Open loop: the SLA.
    pub latency_sla_us: Option<u64>,
    /// Open loop: ops within the SLA per second.
    pub goodput_ops_per_sec: Option<f64>,
    /// Open loop: the pacer's own lateness (µs between an op's intended
    /// start, or the pacer's call if later, and its actual start; see
    /// `pacer`). Near zero when the schedule was kept.
    #[serde(default)]
    pub pacer_lateness_us: Option<Latency>,
    /// Per-interval throughput and p99.
    pub intervals: Vec<Interval>,
    /// Every flag.
    pub flags: BTreeMap<String, String>,
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "n/a".to_string())
}

fn mib(v: Option<u64>) -> String {
    v.map(|x| format!("{:.1}MiB", x as f64 / 1_048_576.0))
        .unwrap_or_else(|| "n/a".to_string())
}

impl BenchRecord {
    /// The one-line summary printed after the result line.
    pub fn summary_line(&self) -> String {
        let mut s = format!(
            "Summary {}: ops/sec={:.0} cpu_us/op={:.2} read_B/op={} write_B/op={} wchar_B/op={} write_amp={} \
             peak_rss={} db_size={} space_amp={} stall%={} p50_us={:.1} p99_us={:.1} p99.9_us={:.1}",
            self.benchmark,
            self.ops_per_sec,
            self.cpu_us_per_op,
            opt(self.read_bytes_per_op, 1),
            opt(self.write_bytes_per_op, 1),
            opt(self.wchar_per_op, 1),
            opt(self.write_amp, 2),
            mib(self.peak_rss_bytes),
            mib(Some(self.db_size_bytes)),
            opt(self.space_amp, 2),
            opt(self.stall_pct, 1),
            self.latency_us.p50,
            self.latency_us.p99,
            self.latency_us.p99_9,
        );
        if let Some(p) = self.peak_db_size_bytes {
            s.push_str(&format!(" peak_db_size={}", mib(Some(p))));
            if let Some(l) = self.live_bytes_estimate.filter(|&l| l > 0) {
                s.push_str(&format!(" peak_space_amp={:.2}", p as f64 / l as f64));
            }
        }
        if self.range_tombstones > 0 {
            s.push_str(&format!(" range_tombstones={}", self.range_tombstones));
        }
        if let Some(v) = self.engine_write_amp {
            s.push_str(&format!(" eng_write_amp={v:.2}"));
        }
        if let Some(v) = self.block_reads_per_op {
            s.push_str(&format!(" block_reads/op={v:.3}"));
        }
        if let Some(v) = self.bloom_useful_per_op {
            s.push_str(&format!(" bloom_useful/op={v:.3}"));
        }
        if let Some(b) = &self.blob {
            s.push_str(&b.summary());
        }
        if let Some(io) = &self.io_by_purpose {
            s.push_str(&io_summary(io, "io_read", |p| {
                (p.read_bytes, p.read_requests)
            }));
            s.push_str(&io_summary(io, "io_write", |p| {
                (p.write_bytes, p.write_requests)
            }));
        }
        if let Some(rate) = self.arrival_rate {
            s.push_str(&format!(" arrival_rate={rate:.0}"));
            if let (Some(sla), Some(g)) = (self.latency_sla_us, self.goodput_ops_per_sec) {
                s.push_str(&format!(" goodput@{sla}us={g:.0}"));
            }
            if let Some(l) = &self.pacer_lateness_us {
                s.push_str(&format!(
                    " pacer_late_p50_us={:.1} pacer_late_p99_us={:.1} pacer_late_max_us={}",
                    l.p50, l.p99, l.max
                ));
            }
        }
        s
    }

    /// Appends this record as one JSON line to `path`.
    pub fn append_json(&self, path: &Path) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        serde_json::to_writer(&mut f, self)?;
        f.write_all(b"\n")?;
        Ok(())
    }
}

/// Reads every record of a `--json` file.
pub fn read_json(path: &Path) -> Result<Vec<BenchRecord>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| crate::error::Error(format!("cannot read {}: {e}", path.display())))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .map_err(|e| crate::error::Error(format!("{}: {e}", path.display())))
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The records of one file keyed by benchmark, in file order: the k-th
/// occurrence of a name (k > 1) is `name#k`, its own entry.
pub(crate) fn keyed(records: Vec<BenchRecord>) -> Vec<(String, BenchRecord)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    records
        .into_iter()
        .map(|r| {
            let k = seen.entry(r.benchmark.clone()).or_default();
            *k += 1;
            let key = if *k == 1 {
                r.benchmark.clone()
            } else {
                format!("{}#{}", r.benchmark, k)
            };
            (key, r)
        })
        .collect()
}

/// The medians of one side of a comparison, per benchmark (in first-seen
/// order; the k-th occurrence of a name in a file is its own entry).
fn side(files: &[&Path]) -> Result<Vec<(String, Vec<BenchRecord>)>> {
    let mut out: Vec<(String, Vec<BenchRecord>)> = Vec::new();
    for f in files {
        for (key, r) in keyed(read_json(f)?) {
            match out.iter_mut().find(|(n, _)| *n == key) {
                Some((_, v)) => v.push(r),
                None => out.push((key, vec![r])),
            }
        }
    }
    Ok(out)
}

fn med(rs: &[BenchRecord], f: impl Fn(&BenchRecord) -> Option<f64>) -> Option<f64> {
    median(rs.iter().filter_map(f).collect())
}

fn ratio(b: Option<f64>, a: Option<f64>) -> String {
    match (b, a) {
        (Some(b), Some(a)) if a != 0.0 => format!("{:.3}", b / a),
        _ => "n/a".to_string(),
    }
}

fn num(v: Option<f64>) -> String {
    opt(v, 0)
}

/// `shale-bench compare A B`: each side is a `--json` file or a
/// comma-separated list of them (medians over the list). Prints per
/// benchmark the median ops/sec of each side and the B/A ratios of
/// ops/sec, write-amp, DB size, peak RSS and p99.
pub fn compare(a: &str, b: &str) -> Result<String> {
    let paths = |s: &str| -> Vec<std::path::PathBuf> {
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(Into::into)
            .collect()
    };
    let (pa, pb) = (paths(a), paths(b));
    if pa.is_empty() || pb.is_empty() {
        bail!("usage: shale-bench compare A.json[,A2.json...] B.json[,B2.json...]");
    }
    let sa = side(&pa.iter().map(|p| p.as_path()).collect::<Vec<_>>())?;
    let sb = side(&pb.iter().map(|p| p.as_path()).collect::<Vec<_>>())?;
    let label = |rs: &[BenchRecord]| rs.first().map(|r| r.engine.clone()).unwrap_or_default();
    let mut out = String::new();
    let (ea, eb) = (
        sa.first().map(|s| label(&s.1)).unwrap_or_default(),
        sb.first().map(|s| label(&s.1)).unwrap_or_default(),
    );
    out.push_str(&format!(
        "A = {a} ({ea}), B = {b} ({eb}); ratios are B/A, medians over runs\n"
    ));
    out.push_str(&format!(
        "{:<28} {:>12} {:>12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "benchmark",
        "A ops/sec",
        "B ops/sec",
        "ops",
        "w-amp",
        "db size",
        "peak rss",
        "p99",
        "cpu/op"
    ));
    for (name, ra) in &sa {
        let Some((_, rb)) = sb.iter().find(|(n, _)| n == name) else {
            out.push_str(&format!("{name:<28} (missing in B)\n"));
            continue;
        };
        let ops = |r: &BenchRecord| Some(r.ops_per_sec);
        let wamp = |r: &BenchRecord| r.write_amp;
        let size = |r: &BenchRecord| Some(r.db_size_bytes as f64);
        let rss = |r: &BenchRecord| r.peak_rss_bytes.map(|x| x as f64);
        let p99 = |r: &BenchRecord| Some(r.latency_us.p99);
        let cpu = |r: &BenchRecord| Some(r.cpu_us_per_op);
        out.push_str(&format!(
            "{:<28} {:>12} {:>12} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
            name,
            num(med(ra, ops)),
            num(med(rb, ops)),
            ratio(med(rb, ops), med(ra, ops)),
            ratio(med(rb, wamp), med(ra, wamp)),
            ratio(med(rb, size), med(ra, size)),
            ratio(med(rb, rss), med(ra, rss)),
            ratio(med(rb, p99), med(ra, p99)),
            ratio(med(rb, cpu), med(ra, cpu)),
        ));
    }
    for (name, _) in sb.iter().filter(|(n, _)| !sa.iter().any(|(m, _)| m == n)) {
        out.push_str(&format!("{name:<28} (missing in A)\n"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(name: &str, engine: &str, ops: f64, wamp: f64) -> BenchRecord {
        BenchRecord {
            benchmark: name.into(),
            engine: engine.into(),
            ops_per_sec: ops,
            write_amp: Some(wamp),
            db_size_bytes: 1000,
            peak_db_size_bytes: None,
            peak_rss_bytes: Some(2000),
            ..BenchRecord::default()
        }
    }

    #[test]
    fn json_round_trip_and_compare_medians() {
        let d = tempfile::tempdir().unwrap();
        let (a1, a2, a3, b1) = (
            d.path().join("a1"),
            d.path().join("a2"),
            d.path().join("a3"),
            d.path().join("b1"),
        );
        rec("fillseq", "rocksdb", 100.0, 2.0)
            .append_json(&a1)
            .unwrap();
        rec("readrandom", "rocksdb", 50.0, 0.0)
            .append_json(&a1)
            .unwrap();
        rec("fillseq", "rocksdb", 300.0, 2.0)
            .append_json(&a2)
            .unwrap();
        rec("fillseq", "rocksdb", 200.0, 2.0)
            .append_json(&a3)
            .unwrap();
        rec("fillseq", "shale", 400.0, 3.0)
            .append_json(&b1)
            .unwrap();
        let back = read_json(&a1).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0], rec("fillseq", "rocksdb", 100.0, 2.0));
        let a = format!("{},{},{}", a1.display(), a2.display(), a3.display());
        let out = compare(&a, &b1.display().to_string()).unwrap();
        let line = out.lines().find(|l| l.starts_with("fillseq")).unwrap();
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[1], "200"); // median of 100, 300, 200
        assert_eq!(f[2], "400");
        assert_eq!(f[3], "2.000");
        assert_eq!(f[4], "1.500");
        assert_eq!(f[5], "1.000");
        assert!(out.contains("readrandom                   (missing in B)"));
    }

    #[test]
    fn summary_line_gives_io_by_purpose() {
        let mut r = rec("overwrite", "shale", 10.0, 1.0);
        assert!(!r.summary_line().contains("io_read"));
        let p = |name: &str, rb, rr, wb, wr| PurposeIo {
            purpose: name.into(),
            read_bytes: rb,
            read_requests: rr,
            write_bytes: wb,
            write_requests: wr,
        };
        r.io_by_purpose = Some(vec![
            p("user", 4 << 20, 1024, 0, 0),
            p("flush", 0, 0, 8 << 20, 128),
            p("compaction", 32 << 20, 16, 32 << 20, 512),
        ]);
        let s = r.summary_line();
        assert!(
            s.contains(" io_read=user:4.0MiB/4.0KiB,compaction:32.0MiB/2048.0KiB"),
            "{s}"
        );
        assert!(
            s.contains(" io_write=flush:8.0MiB/64.0KiB,compaction:32.0MiB/64.0KiB"),
            "{s}"
        );
    }

    #[test]
    fn summary_line_never_matches_result_grep() {
        let mut r = rec("fillrandom", "shale", 1234.4, 1.5);
        r.arrival_rate = Some(1000.0);
        r.latency_sla_us = Some(500);
        r.goodput_ops_per_sec = Some(990.0);
        let s = r.summary_line();
        assert!(s.starts_with("Summary fillrandom: ops/sec=1234 "));
        assert!(s.contains("write_amp=1.50"));
        assert!(s.contains("goodput@500us=990"));
        assert!(!s.contains("pacer_late"));
        r.pacer_lateness_us = Some(Latency {
            count: 10,
            p50: 0.25,
            p99: 3.0,
            max: 7,
            ..Latency::default()
        });
        let s = r.summary_line();
        assert!(
            s.contains(" goodput@500us=990 pacer_late_p50_us=0.2 pacer_late_p99_us=3.0 pacer_late_max_us=7"),
            "{s}"
        );
        assert!(!s.starts_with("fillrandom"));
        assert!(!s.contains("block_reads/op") && !s.contains("eng_write_amp"));
        r.engine_write_amp = Some(2.345);
        r.block_reads_per_op = Some(1.5);
        r.bloom_useful_per_op = Some(0.25);
        let s = r.summary_line();
        assert!(
            s.contains(" eng_write_amp=2.35 block_reads/op=1.500 bloom_useful/op=0.250"),
            "{s}"
        );
        // Records written before these fields existed still load.
        let old = r#"{"benchmark":"x","engine":"shale","engine_version":"0","base_seed":1,"threads":1,"ops":1,"ops_all_threads":1,"elapsed_secs":1.0,"ops_per_sec":1.0,"micros_per_op":1.0,"mb_per_sec":null,"message":"","cpu_micros":0,"cpu_us_per_op":0.0,"io":null,"read_bytes_per_op":null,"write_bytes_per_op":null,"wchar_per_op":null,"user_bytes_written":0,"write_amp":null,"peak_rss_bytes":null,"db_size_bytes":0,"live_bytes_estimate":null,"space_amp":null,"stall_micros":null,"stall_pct":null,"latency_us":{"count":0,"avg":0.0,"p50":0.0,"p75":0.0,"p99":0.0,"p99_9":0.0,"p99_99":0.0,"max":0},"arrival_rate":null,"latency_sla_us":null,"goodput_ops_per_sec":null,"intervals":[],"flags":{}}"#;
        let back: BenchRecord = serde_json::from_str(old).unwrap();
        assert_eq!(back.block_reads_per_op, None);
        assert_eq!(back.pacer_lateness_us, None);
        assert_eq!(back.level_write_amp, None);
    }

    #[test]
    fn median_of_even_and_empty() {
        assert_eq!(median(vec![1.0, 4.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
