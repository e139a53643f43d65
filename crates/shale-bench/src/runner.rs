//! Runs a `--benchmarks` list: opens the engine, destroys / reopens it for
//! fresh benchmarks, runs each benchmark's threads (released together by a
//! barrier), merges and prints the result line, histograms, summary and
//! JSON, and writes the chart at the end. An entry with a `[X<n>-W<m>]`
//! suffix (repeat.rs) runs its warm-up and measured passes on one DB.
//!
//! All output goes through the `Out` writers so tests can capture it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use crate::benchmarks::{self, cfscale, meta, Ctx, Kind, Method, ThreadState};
use crate::blob_stats;
use crate::chart;
use crate::clock::{now_micros, wall_micros};
use crate::engine::{self, Engine, WriteOpts};
use crate::error::{bail, Error, Result};
use crate::flags::Flags;
use crate::header;
use crate::histogram::Histogram;
use crate::keys::KeyGen;
use crate::level_amp;
use crate::livekeys::LiveKeys;
use crate::mt19937::Mt19937_64;
use crate::pacer::Pacer;
use crate::ratelimit::RateLimiter;
use crate::repeat::{self, BenchSpec, Combined};
use crate::report::{BenchRecord, Latency, PurposeIo, IO_PURPOSES};
use crate::reporter::Reporter;
use crate::seeds::Seeds;
use crate::space_sampler::SpaceSampler;
use crate::stats::{LiveCounters, Merged, ReportCfg, Stats};
use crate::sysinfo::{self, IoCounters};
use crate::values::RandomGenerator;

/// Where the run prints.
pub struct Out<'a> {
    /// db_bench's stdout.
    pub stdout: &'a mut dyn Write,
    /// db_bench's stderr.
    pub stderr: &'a mut dyn Write,
}

/// Runs everything the flags ask for and returns the records.
pub fn run(flags: &Flags, out: &mut Out<'_>) -> Result<Vec<BenchRecord>> {
    engine::check_flags(flags)?;
    let specs = parse_benchmarks(&flags.benchmarks)?;
    for s in specs
        .iter()
        .filter(|s| benchmarks::merge::is_merge_benchmark(&s.name))
    {
        benchmarks::merge::check(flags, &s.name)?;
    }
    benchmarks::range_del::check(flags, specs.iter().map(|s| s.name.as_str()))?;
    if flags.num_column_families > 1 && specs.iter().any(|s| s.name == "multireadrandom") {
        bail!(
            "multireadrandom with --num_column_families > 1 is not supported (a MultiGet batch \
             would span families, and Shale's multi_get_cf reads one family)"
        );
    }
    let keys = KeyGen::new(
        flags.key_size as usize,
        flags.prefix_size as usize,
        flags.keys_per_prefix as u64,
        flags.num as u64,
    )?;
    let (seeds, seed_msg) = Seeds::new(
        flags.seed as u64,
        wall_micros(),
        flags.db_bench_compat_values,
    );
    let path = PathBuf::from(&flags.db);
    if !flags.use_existing_db {
        engine::destroy(flags, &path)?;
    }
    // cfscale opens its own DBs: a list of only cfscale opens the shared
    // handle (needed for the header) with `default` alone, not N families.
    let only_scale = specs
        .iter()
        .all(|s| matches!(benchmarks::lookup(&s.name), Some(Kind::Scale)));
    let db = if only_scale {
        let mut one = flags.clone();
        one.num_column_families = 1;
        engine::open(&one, &path)?
    } else {
        engine::open(flags, &path)?
    };
    let (label, version) = engine_label(db.as_ref());
    write!(
        out.stderr,
        "{}",
        header::stderr_lines(label, &version, (wall_micros() / 1_000_000) as i64)
    )?;
    if let Some(m) = seed_msg {
        writeln!(out.stdout, "{m}")?;
    }
    writeln!(
        out.stdout,
        "Initializing {label} Options from command-line flags"
    )?;
    write!(
        out.stdout,
        "{}",
        header::stdout_block(
            flags,
            &engine::effective_compression(flags),
            &engine::warnings(flags)
        )
    )?;
    let live = LiveKeys::new(flags.num as u64, flags.use_existing_db);
    let sampler = match flags.space_sample_ms {
        ms if ms > 0 => Some(SpaceSampler::start(&path, ms as u64)?),
        _ => None,
    };
    let mut kept = Kept::default();
    if !flags.json.is_empty() {
        // One file per process run: start it empty.
        std::fs::write(&flags.json, b"")?;
    }
    // None once cfscale has run: the path then holds cfscale's DB and the
    // next benchmark that needs the shared handle starts from a fresh one.
    let mut db = Some(db);
    for bench in &specs {
        let name = bench.name.as_str();
        let Some(kind) = benchmarks::lookup(name) else {
            continue;
        };
        if matches!(kind, Kind::Scale) {
            if flags.use_existing_db {
                writeln!(
                    out.stdout,
                    "{name:<12} : skipped (--use_existing_db is true)"
                )?;
                continue;
            }
            if let Some(d) = db.take() {
                d.close()?; // and dropped: cfscale opens the path itself
            }
            writeln!(out.stdout, "DB path: [{}]", flags.db)?;
            out.stdout.flush()?;
            let text = cfscale::run(flags, &path, &keys, seeds.base())?;
            write!(out.stdout, "{text}")?;
            out.stdout.flush()?;
            continue;
        }
        if db.is_none() {
            engine::destroy(flags, &path)?;
            db = Some(engine::open(flags, &path)?);
            live.clear();
        }
        match kind {
            Kind::Scale => {}
            Kind::Meta => {
                let Some(d) = db.as_ref() else {
                    bail!("internal: no DB handle for {name}")
                };
                let text = meta::run_meta(name, d.as_ref(), &flags.db)?;
                write!(out.stdout, "{text}")?;
            }
            Kind::Method {
                method,
                fresh,
                writer,
                single,
            } => {
                if fresh {
                    if flags.use_existing_db {
                        writeln!(
                            out.stdout,
                            "{name:<12} : skipped (--use_existing_db is true)"
                        )?;
                        continue;
                    }
                    if let Some(d) = db.take() {
                        d.close()?;
                    }
                    engine::destroy(flags, &path)?;
                    db = Some(engine::open(flags, &path)?);
                    writeln!(
                        out.stdout,
                        "Initializing {label} Options from command-line flags"
                    )?;
                    live.clear();
                }
                let Some(d) = db.as_ref() else {
                    bail!("internal: no DB handle for {name}")
                };
                writeln!(out.stdout, "DB path: [{}]", flags.db)?;
                out.stdout.flush()?;
                let spec = Spec {
                    name,
                    method,
                    writer,
                    single,
                };
                let env = RunEnv {
                    flags,
                    db: d.as_ref(),
                    path: &path,
                    keys,
                    seeds: &seeds,
                    live: &live,
                    sampler: sampler.as_ref(),
                };
                run_passes(&env, bench, &spec, out, &mut kept)?;
            }
        }
        out.stdout.flush()?;
    }
    if let Some(d) = db {
        if flags.statistics {
            if let Some(s) = d.statistics() {
                writeln!(out.stdout, "STATISTICS:\n{s}")?;
            }
        }
        d.close()?;
    }
    if let Some(s) = &sampler {
        let (peak, samples) = s.run_peak(&path);
        writeln!(
            out.stdout,
            "Peak db_size over the run: {peak} bytes ({:.1} MiB; {samples} samples, one every {} ms)",
            peak as f64 / 1_048_576.0,
            s.interval_ms()
        )?;
    }
    if !flags.chart.is_empty() {
        let note = format!("engine {}, db {}", flags.engine, flags.db);
        chart::write(Path::new(&flags.chart), &kept.series, &note)?;
    }
    Ok(kept.records)
}

/// Splits `--benchmarks` into entries and checks every name (and suffix)
/// before anything runs.
fn parse_benchmarks(list: &str) -> Result<Vec<BenchSpec>> {
    let mut specs = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let spec = repeat::parse_entry(entry)?;
        match benchmarks::lookup(&spec.name) {
            None => bail!("unknown benchmark '{}'", spec.name),
            Some(Kind::Meta) if spec.is_repeated() => bail!(
                "benchmark '{entry}': '{}' runs inline once; repeat suffixes apply only to measured benchmarks",
                spec.name
            ),
            Some(_) => specs.push(spec),
        }
    }
    Ok(specs)
}

/// The measured passes kept for the return value, `--json` and `--chart`.
#[derive(Default)]
struct Kept {
    records: Vec<BenchRecord>,
    series: Vec<chart::Run>,
}

impl Kept {
    /// Keeps pass `run` (1-based) of `runs`; appends it to `--json` at once.
    fn keep(&mut self, flags: &Flags, rec: BenchRecord, run: u32, runs: u32) -> Result<()> {
        let label = if runs > 1 {
            format!("{} (run {run}/{runs})", rec.benchmark)
        } else {
            rec.benchmark.clone()
        };
        self.series.push(chart::Run {
            benchmark: rec.benchmark.clone(),
            label,
            intervals: rec.intervals.clone(),
        });
        if !flags.json.is_empty() {
            rec.append_json(Path::new(&flags.json))?;
        }
        self.records.push(rec);
        Ok(())
    }
}

/// Runs one `--benchmarks` entry: db_bench's warm-up passes (result line
/// printed, nothing kept), then the measured passes, each followed by its
/// summary and, from the 2nd on, the running `[AVG k runs]` line; after the
/// last the `[AVG n runs]` / `[MEDIAN n runs]` lines. Every pass takes new
/// thread seeds from the process-wide counter.
fn run_passes(
    env: &RunEnv<'_>,
    bench: &BenchSpec,
    spec: &Spec<'_>,
    out: &mut Out<'_>,
    kept: &mut Kept,
) -> Result<()> {
    if bench.warmups > 0 {
        writeln!(
            out.stdout,
            "Warming up benchmark by running {} times",
            bench.warmups
        )?;
    }
    for _ in 0..bench.warmups {
        run_method(env, spec, out)?;
    }
    if bench.repeats > 1 {
        writeln!(out.stdout, "Running benchmark for {} times", bench.repeats)?;
    }
    let mut combined = Combined::default();
    for run in 1..=bench.repeats {
        let rec = run_method(env, spec, out)?;
        if env.flags.summary {
            writeln!(out.stdout, "{}", rec.summary_line())?;
        }
        combined.add(rec.ops, rec.elapsed_secs, rec.mb_per_sec);
        if let Some(line) = combined.progress_line(spec.name) {
            writeln!(out.stdout, "{line}")?;
        }
        kept.keep(env.flags, rec, run, bench.repeats)?;
    }
    if let Some(lines) = combined.final_lines(spec.name) {
        writeln!(out.stdout, "{lines}")?;
    }
    Ok(())
}

fn engine_label(db: &dyn Engine) -> (&'static str, String) {
    let label = match db.name() {
        "rocksdb" => "RocksDB",
        "shale" => "Shale",
        "fjall" => "Fjall",
        _ => "Memory",
    };
    (label, db.version())
}

struct Spec<'a> {
    name: &'a str,
    method: Method,
    writer: bool,
    single: bool,
}

struct Before {
    cpu: u64,
    io: Option<IoCounters>,
    stall: Option<u64>,
    counters: EngineCounters,
    level_bytes: Option<Vec<u64>>,
    blob_cache: Option<(u64, u64)>,
}

/// Engine counters read before and after a benchmark (None when the
/// engine does not answer the property, e.g. RocksDB for `shale.*`).
#[derive(Debug, Clone, Copy, Default)]
struct EngineCounters {
    block_reads: Option<u64>,
    bloom_useful: Option<u64>,
    /// Flush + compaction output bytes.
    table_bytes_written: Option<u64>,
    /// Flush + compaction blob file bytes, counted when a job installs
    /// as the table bytes are.
    blob_bytes_written: Option<u64>,
    wal_bytes_written: Option<u64>,
    /// Per purpose of `report::IO_PURPOSES`: read bytes, read requests,
    /// write bytes, write requests (`shale.io-*`).
    io: Option<[[u64; 4]; 6]>,
}

fn counter(db: &dyn Engine, name: &str) -> Option<u64> {
    db.property(name).and_then(|v| v.trim().parse().ok())
}

impl EngineCounters {
    fn read(db: &dyn Engine) -> EngineCounters {
        if db.name() != "shale" {
            return EngineCounters::default();
        }
        EngineCounters {
            block_reads: counter(db, "shale.block-reads"),
            bloom_useful: counter(db, "shale.bloom-useful"),
            table_bytes_written: counter(db, "shale.compaction-bytes-written"),
            blob_bytes_written: counter(db, "shale.blob-bytes-written"),
            wal_bytes_written: counter(db, "shale.wal-bytes-written"),
            io: io_counters(db),
        }
    }
}

fn io_counters(db: &dyn Engine) -> Option<[[u64; 4]; 6]> {
    let mut out = [[0u64; 4]; 6];
    for (row, p) in out.iter_mut().zip(IO_PURPOSES) {
        for (cell, what) in row.iter_mut().zip([
            "read-bytes",
            "read-requests",
            "write-bytes",
            "write-requests",
        ]) {
            *cell = counter(db, &format!("shale.io-{what}-{p}"))?;
        }
    }
    Some(out)
}

/// Per-purpose IO during a benchmark, from the counters before and after.
fn io_delta(a: Option<[[u64; 4]; 6]>, b: Option<[[u64; 4]; 6]>) -> Option<Vec<PurposeIo>> {
    let (a, b) = (a?, b?);
    Some(
        IO_PURPOSES
            .iter()
            .zip(a.iter().zip(&b))
            .map(|(p, (a, b))| {
                let d = |i: usize| b[i].saturating_sub(a[i]);
                PurposeIo {
                    purpose: p.to_string(),
                    read_bytes: d(0),
                    read_requests: d(1),
                    write_bytes: d(2),
                    write_requests: d(3),
                }
            })
            .collect(),
    )
}

fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// What every pass of a benchmark runs against.
struct RunEnv<'a> {
    flags: &'a Flags,
    db: &'a dyn Engine,
    path: &'a Path,
    keys: KeyGen,
    seeds: &'a Seeds,
    live: &'a LiveKeys,
    /// `--space_sample_ms`: the DB directory's peak size per pass.
    sampler: Option<&'a SpaceSampler>,
}

/// Runs one pass: creates the threads, prints the result line (and
/// histograms) and returns the record.
fn run_method(env: &RunEnv<'_>, spec: &Spec<'_>, out: &mut Out<'_>) -> Result<BenchRecord> {
    let RunEnv {
        flags,
        db,
        path,
        keys,
        seeds,
        live,
        sampler,
    } = *env;
    let readers = if spec.single {
        1
    } else {
        flags.threads as usize
    };
    let n = readers + usize::from(spec.writer);
    let ctx = Ctx {
        flags,
        db,
        keys,
        wo: WriteOpts {
            sync: flags.sync,
            disable_wal: flags.disable_wal,
        },
        write_limiter: (flags.benchmark_write_rate_limit > 0)
            .then(|| RateLimiter::new(flags.benchmark_write_rate_limit as u64)),
        read_limiter: (flags.benchmark_read_rate_limit > 0)
            .then(|| RateLimiter::new(flags.benchmark_read_rate_limit as u64)),
        live,
        num_done: AtomicUsize::new(0),
        num_threads: n,
        user_bytes_written: AtomicU64::new(0),
        range_tombstones: AtomicU64::new(0),
        seeds,
        num_cfs: db.num_cfs() as u64,
    };
    let cfg = ReportCfg {
        histogram: flags.histogram,
        progress: flags.progress_reports,
        stats_interval: flags.stats_interval as u64,
        stats_interval_seconds: flags.stats_interval_seconds as u64,
        slow_usecs: flags.slow_usecs as u64,
        sla_us: flags.latency_sla_us as u64,
    };
    let value_seed_max = flags.value_size as usize;
    // Thread seeds are taken in creation order (tid 0 first: the writer).
    let mut states: Vec<ThreadState> = Vec::with_capacity(n);
    let mut lives: Vec<Arc<LiveCounters>> = Vec::with_capacity(n);
    for tid in 0..n {
        let seed = seeds.next_thread_seed();
        let lc = Arc::new(LiveCounters::default());
        lives.push(lc.clone());
        states.push(ThreadState {
            tid,
            seed,
            rng: Mt19937_64::new(seed),
            stats: Stats::new(tid, cfg, lc),
            values: RandomGenerator::new(
                seeds.value_seed(seed),
                flags.compression_ratio,
                value_seed_max,
            ),
            pacer: None,
            key: vec![0u8; flags.key_size as usize],
            user_bytes_written: 0,
        });
    }
    let interval_secs = if flags.report_interval_seconds > 0 {
        flags.report_interval_seconds as u64
    } else {
        1
    };
    let want_intervals =
        flags.report_interval_seconds > 0 || !flags.chart.is_empty() || !flags.json.is_empty();
    let csv = if flags.report_interval_seconds > 0 {
        Some(std::fs::File::create(&flags.report_file)?)
    } else {
        None
    };

    let reset_rss = sysinfo::reset_peak_rss();
    if let Some(s) = sampler {
        s.begin_step(path);
    }
    let before = Before {
        cpu: sysinfo::cpu_micros(),
        io: IoCounters::read(),
        stall: db.stall_micros(),
        counters: EngineCounters::read(db),
        level_bytes: level_amp::read(db),
        blob_cache: blob_stats::cache_counters(db),
    };
    let reporter = want_intervals.then(|| Reporter::start(lives.clone(), interval_secs, csv));
    let barrier = Barrier::new(n);
    let paced = flags.arrival_rate > 0.0;
    let per_thread_rate = flags.arrival_rate / readers as f64;
    let results: Vec<Result<ThreadState>> = std::thread::scope(|s| {
        let handles: Vec<_> = states
            .into_iter()
            .map(|mut t| {
                let ctx = &ctx;
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    t.stats.start();
                    let is_writer = spec.writer && t.tid == 0;
                    if paced && !is_writer {
                        t.pacer = Some(Pacer::new(per_thread_rate));
                    }
                    let r = (spec.method)(ctx, &mut t);
                    t.stats.stop();
                    ctx.num_done.fetch_add(1, Ordering::AcqRel);
                    r.map(|()| t)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::msg("benchmark thread panicked")))
            })
            .collect()
    });
    let mut done_states = Vec::with_capacity(n);
    for r in results {
        done_states.push(r?);
    }
    let merged = Merged::merge(done_states.iter().map(|t| &t.stats));
    let pacer_lateness = paced.then(|| {
        let mut h = Histogram::new();
        for p in done_states.iter().filter_map(|t| t.pacer.as_ref()) {
            h.merge(p.lateness());
        }
        Latency::from_histogram(&h)
    });
    let end_cpu = sysinfo::cpu_micros();
    let end_io = IoCounters::read();
    let end_stall = db.stall_micros();
    let end_counters = EngineCounters::read(db);
    let end_level_bytes = level_amp::read(db);
    let end_blob_cache = blob_stats::cache_counters(db);
    let intervals = match reporter {
        Some(r) => r.finish()?,
        None => Vec::new(),
    };
    eprint!("{:80}\r", "");
    writeln!(out.stdout, "{}", merged.report_line(spec.name))?;
    if flags.histogram {
        write!(out.stdout, "{}", merged.histogram_text())?;
    }
    let ops_all: u64 = done_states
        .iter()
        .map(|t| t.stats.done())
        .sum::<u64>()
        .max(1);
    let user_bytes: u64 = done_states
        .iter()
        .map(|t| t.user_bytes_written)
        .sum::<u64>()
        + ctx.user_bytes_written.load(Ordering::Relaxed);
    let io = match (before.io, end_io) {
        (Some(a), Some(b)) => Some(b.delta(&a)),
        _ => None,
    };
    let per_op = |v: u64| v as f64 / ops_all as f64;
    let db_size = sysinfo::dir_size(path);
    let live_bytes = live
        .count()
        .map(|c| c * (flags.key_size + flags.value_size) as u64);
    let stall = match (before.stall, end_stall) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    let c0 = before.counters;
    let blob = blob_stats::figures(
        db,
        flags,
        before.blob_cache,
        end_blob_cache,
        delta(c0.blob_bytes_written, end_counters.blob_bytes_written),
        user_bytes,
    );
    // Tables + WAL + blob files (when the DB has blob files).
    let engine_bytes_written = delta(c0.table_bytes_written, end_counters.table_bytes_written)
        .zip(delta(c0.wal_bytes_written, end_counters.wal_bytes_written))
        .map(|(t, w)| t + w + blob.as_ref().and_then(|b| b.bytes_written).unwrap_or(0));
    let elapsed = merged.elapsed_secs();
    let all: &Histogram = &merged.all;
    let rec = BenchRecord {
        benchmark: spec.name.to_string(),
        engine: flags.engine.clone(),
        engine_version: db.version(),
        base_seed: seeds.base(),
        threads: readers as u64,
        ops: merged.done,
        ops_all_threads: ops_all,
        elapsed_secs: elapsed,
        ops_per_sec: merged.ops_per_sec(),
        micros_per_op: merged.micros_per_op(),
        mb_per_sec: merged.mb_per_sec(),
        message: merged.message.trim_end().to_string(),
        cpu_micros: end_cpu.saturating_sub(before.cpu),
        cpu_us_per_op: per_op(end_cpu.saturating_sub(before.cpu)),
        io,
        read_bytes_per_op: io.map(|d| per_op(d.read_bytes)),
        write_bytes_per_op: io.map(|d| per_op(d.net_write_bytes())),
        wchar_per_op: io.map(|d| per_op(d.wchar)),
        user_bytes_written: user_bytes,
        range_tombstones: ctx.range_tombstones.load(Ordering::Relaxed),
        write_amp: io
            .and_then(|d| (user_bytes > 0).then(|| d.net_write_bytes() as f64 / user_bytes as f64)),
        engine_write_amp: engine_bytes_written
            .and_then(|b| (user_bytes > 0).then(|| b as f64 / user_bytes as f64)),
        level_write_amp: level_amp::write_amp(
            before.level_bytes.as_deref(),
            end_level_bytes.as_deref(),
            user_bytes,
        ),
        block_reads_per_op: delta(c0.block_reads, end_counters.block_reads).map(per_op),
        bloom_useful_per_op: delta(c0.bloom_useful, end_counters.bloom_useful).map(per_op),
        io_by_purpose: io_delta(c0.io, end_counters.io),
        peak_rss_bytes: if reset_rss {
            sysinfo::peak_rss_bytes()
        } else {
            sysinfo::peak_rss_bytes().or(None)
        },
        db_size_bytes: db_size,
        peak_db_size_bytes: sampler.map(|s| s.take_step_peak(db_size)),
        blob,
        live_bytes_estimate: live_bytes,
        space_amp: live_bytes.and_then(|l| (l > 0).then(|| db_size as f64 / l as f64)),
        stall_micros: stall,
        stall_pct: stall.map(|s| s as f64 / (elapsed * 1e6) * 100.0),
        latency_us: Latency::from_histogram(all),
        arrival_rate: paced.then_some(flags.arrival_rate),
        latency_sla_us: (flags.latency_sla_us > 0).then_some(flags.latency_sla_us as u64),
        goodput_ops_per_sec: (flags.latency_sla_us > 0).then(|| merged.within_sla as f64 / elapsed),
        pacer_lateness_us: pacer_lateness,
        intervals,
        flags: flags
            .values()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    };
    let _ = now_micros();
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::memory::MemoryEngine;

    fn run_capture(args: &[&str]) -> (Result<Vec<BenchRecord>>, String, String) {
        let flags = Flags::parse(args).unwrap();
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let r = run(
            &flags,
            &mut Out {
                stdout: &mut o,
                stderr: &mut e,
            },
        );
        (
            r,
            String::from_utf8_lossy(&o).into_owned(),
            String::from_utf8_lossy(&e).into_owned(),
        )
    }

    /// DB_BENCH.md §2.3: with `--seed=12345 --writes=6`, thread 0 of the
    /// first benchmark has seed 12346 and the key of write i is draw 2i+1.
    #[test]
    fn fillrandom_keys_follow_db_bench_draw_order() {
        let db = "/memtest/draw-order";
        let (r, out, _) = run_capture(&[
            "--engine=memory",
            &format!("--db={db}"),
            "--benchmarks=fillrandom",
            "--seed=12345",
            "--writes=6",
            "--num=1000000",
        ]);
        r.unwrap();
        assert!(!out.contains("Set seed to"));
        let mut rng = Mt19937_64::new(12346);
        let keys = KeyGen::new(16, 0, 0, 1_000_000).unwrap();
        let mut expected = std::collections::BTreeSet::new();
        for _ in 0..6 {
            let _db_choice = rng.next_u64();
            expected.insert(keys.key(rng.next_u64() % 1_000_000));
        }
        let m = MemoryEngine::open(Path::new(db));
        let mut it = m.new_iterator(0, &Default::default()).unwrap();
        it.seek_to_first();
        let mut got = std::collections::BTreeSet::new();
        while it.valid() {
            got.insert(it.key().to_vec());
            it.next();
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn whole_list_on_memory_engine() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let chart = dir.path().join("c.svg");
        let (r, out, _) = run_capture(&[
            "--engine=memory",
            "--db=/memtest/whole-list",
            "--benchmarks=fillseq,readrandom,multireadrandom,readseq,readreverse,seekrandom,overwrite,\
              readrandomwriterandom,updaterandom,readwhilewriting,seekrandomwhilewriting,filluniquerandom,\
              deleterandom,flush,compact,compactall,waitforcompaction,stats,levelstats,sstables",
            "--num=200",
            "--threads=2",
            "--seek_nexts=3",
            "--batch_size=4",
            "--histogram=1",
            "--progress_reports=0",
            "--seed=0",
            &format!("--json={}", json.display()),
            &format!("--chart={}", chart.display()),
        ]);
        let recs = r.unwrap();
        assert!(out.contains("Set seed to "));
        assert_eq!(recs.len(), 14);
        // readrandom after fillseq finds every key; each thread reads num keys.
        let rr = &recs[1];
        assert_eq!(rr.ops, 400);
        assert_eq!(rr.message, "(200 of 200 found)");
        assert!(out.contains("Microseconds per read:\nCount: 400 "));
        // multireadrandom: 200 reads per thread in batches of 4.
        assert_eq!(recs[2].ops, 400);
        assert_eq!(recs[2].message, "(200 of 200 found)");
        // readseq / readreverse see the whole DB once per thread.
        assert_eq!(recs[3].ops, 400);
        assert_eq!(recs[4].ops, 400);
        // seekrandom with seek_nexts 3 counts 3 entries per seek (none hit the end
        // unless the key is among the last two).
        assert!(recs[5].mb_per_sec.is_some());
        assert!(recs[5].message.starts_with("(200 of 200 found)"));
        // filluniquerandom is forced to one thread and writes every key once.
        let fu = recs
            .iter()
            .find(|r| r.benchmark == "filluniquerandom")
            .unwrap();
        assert_eq!(fu.threads, 1);
        assert_eq!(fu.ops, 200);
        assert!(out.contains("flush memtable\n"));
        assert!(out.contains("waitforcompaction(/memtest/whole-list): finished"));
        for r in &recs {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("{:<12} :", r.benchmark)))
                .unwrap();
            assert!(
                line.contains(" micros/op ") && line.contains(" operations;"),
                "{line}"
            );
            assert!(out.contains(&format!("Summary {}: ", r.benchmark)));
        }
        let back = crate::report::read_json(&json).unwrap();
        assert_eq!(back.len(), 14);
        assert_eq!(back[0].flags["num"], "200");
        // Two panels (throughput, p99) per run of consecutive passes.
        let groups = (0..recs.len())
            .filter(|&i| i == 0 || recs[i].benchmark != recs[i - 1].benchmark)
            .count();
        let svg = std::fs::read_to_string(&chart).unwrap();
        let p = shale_chart::verify::parse(&svg).unwrap();
        assert_eq!(p.panels.len(), 2 * groups);
        assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
        assert!(chart.with_extension("csv").exists());
    }

    #[cfg(feature = "shale-engine")]
    #[test]
    fn shale_statistics_and_engine_counters_in_summary() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        let (r, out, _) = run_capture(&[
            "--engine=shale",
            &format!("--db={}", db.display()),
            "--benchmarks=fillrandom,flush,readrandom",
            "--num=2000",
            "--bloom_bits=10",
            "--compression_type=none",
            "--statistics=1",
            "--progress_reports=0",
            "--seed=7",
        ]);
        let recs = r.unwrap();
        let fill = &recs[0];
        // Every put went to the WAL: at least key + value bytes per op.
        let ewa = fill.engine_write_amp.unwrap();
        assert!(ewa >= 1.0, "engine write-amp {ewa}");
        // The memtable was not flushed during the fill: no level received
        // bytes, and the levels' share of the write-amp is 0.
        let levels = fill.level_write_amp.as_ref().unwrap();
        assert!(
            !levels.is_empty() && levels.iter().all(|v| *v == 0.0),
            "{levels:?}"
        );
        let rr = recs.iter().find(|r| r.benchmark == "readrandom").unwrap();
        let br = rr.block_reads_per_op.unwrap();
        assert!(br > 0.0, "block reads/op {br}");
        // About 1/e of the keys were never written: the filter rules the
        // table out for most of them.
        let bu = rr.bloom_useful_per_op.unwrap();
        assert!(bu > 0.1 && bu < 0.6, "bloom useful/op {bu}");
        let summary = out
            .lines()
            .find(|l| l.starts_with("Summary readrandom: "))
            .unwrap();
        assert!(summary.contains(" block_reads/op="), "{summary}");
        assert!(summary.contains(" bloom_useful/op="), "{summary}");
        let stats = out.split("STATISTICS:\n").nth(1).unwrap();
        for name in crate::engine::shale::STATISTICS_COUNTERS {
            assert!(
                stats
                    .lines()
                    .any(|l| l.starts_with(&format!("{name} COUNT : "))),
                "{name} missing in {stats}"
            );
        }
    }

    #[test]
    fn existing_db_skips_fills_and_unknown_names_fail_early() {
        let (r, out, _) = run_capture(&[
            "--engine=memory",
            "--db=/memtest/existing",
            "--use_existing_db=1",
            "--benchmarks=fillseq,readrandom",
            "--num=10",
            "--seed=1",
        ]);
        r.unwrap();
        assert!(out.contains("fillseq      : skipped (--use_existing_db is true)\n"));
        assert!(out.contains("(0 of 10 found)"));
        let (r, out, _) = run_capture(&[
            "--engine=memory",
            "--db=/memtest/x",
            "--benchmarks=fillseq,bogus",
        ]);
        assert!(r.unwrap_err().0.contains("unknown benchmark 'bogus'"));
        assert!(!out.contains("DB path"));
    }

    /// `name[X3-W1]` on the Shale engine: one warm-up pass (result line
    /// printed, nothing kept), three measured passes with their summaries
    /// and JSON records, the running and final AVG/MEDIAN lines.
    #[cfg(feature = "shale-engine")]
    #[test]
    fn repeat_suffix_runs_warmups_and_measured_passes() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("r.json");
        let (r, out, _) = run_capture(&[
            "--engine=shale",
            &format!("--db={}", dir.path().join("db").display()),
            "--benchmarks=fillseq,readrandom[X3-W1],fillrandom[W1-X2]",
            "--num=1000",
            "--compression_type=none",
            "--progress_reports=0",
            "--seed=11",
            &format!("--json={}", json.display()),
        ]);
        let recs = r.unwrap();
        let names: Vec<&str> = recs.iter().map(|r| r.benchmark.as_str()).collect();
        let want = [
            "fillseq",
            "readrandom",
            "readrandom",
            "readrandom",
            "fillrandom",
            "fillrandom",
        ];
        assert_eq!(names, want);
        assert_eq!(crate::report::read_json(&json).unwrap().len(), 6);
        let count = |prefix: &str| out.lines().filter(|l| l.starts_with(prefix)).count();
        // Warm-up passes print their result line, as db_bench does.
        assert_eq!(count("readrandom   : "), 4, "{out}");
        assert_eq!(count("fillrandom   : "), 3, "{out}");
        assert_eq!(count("Summary readrandom: "), 3);
        assert_eq!(count("Summary fillrandom: "), 2);
        assert_eq!(count("Warming up benchmark by running 1 times"), 2);
        assert_eq!(count("Running benchmark for 3 times"), 1);
        assert_eq!(count("Running benchmark for 2 times"), 1);
        for rr in &recs[1..4] {
            assert_eq!(rr.message, "(1000 of 1000 found)");
        }
        // Running lines after passes 2 and 3, then the final pair.
        let lines: Vec<&str> = out.lines().collect();
        let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
        let results: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with("readrandom   : "))
            .collect();
        let avg2 = at("readrandom [AVG 2 runs] : ");
        let avg3 = at("readrandom [AVG 3 runs] : ");
        assert!(results[2] < avg2 && avg2 < results[3] && results[3] < avg3);
        let mean = recs[1..4]
            .iter()
            .map(|r| r.ops.max(1) as f64 / r.elapsed_secs)
            .sum::<f64>()
            / 3.0;
        let fin = lines[at("readrandom [AVG    3 runs] : ")];
        let head = format!("readrandom [AVG    3 runs] : {} (\u{b1} ", mean as i32);
        assert!(fin.starts_with(&head), "{fin} vs {head}");
        assert!(fin.ends_with(") MB/sec"), "{fin}");
        assert!(lines[at("readrandom [MEDIAN 3 runs] : ")].ends_with(" MB/sec"));
        assert_eq!(count("fillrandom [MEDIAN 2 runs] : "), 1);
        assert_eq!(count("fillseq ["), 0);
    }

    #[test]
    fn malformed_or_meta_repeat_suffixes_fail_before_running() {
        for (list, want) in [
            ("fillseq,readrandom[X0]", "must be at least 1"),
            ("fillseq,readrandom[Y3]", "bad repeat argument"),
            ("fillseq,readrandom[X3", "must end with ']'"),
            ("fillseq,readrandom[X-1]", "needs a non-negative number"),
            ("fillseq,flush[X2]", "'flush' runs inline once"),
            ("fillseq,bogus[X2]", "unknown benchmark 'bogus'"),
        ] {
            let (r, out, _) = run_capture(&[
                "--engine=memory",
                "--db=/memtest/bad-suffix",
                &format!("--benchmarks={list}"),
            ]);
            let err = r.unwrap_err().0;
            assert!(err.contains(want), "{list}: {err}");
            assert!(!out.contains("DB path"), "{list} ran before failing");
        }
    }

    #[test]
    fn open_loop_reports_goodput() {
        let (r, out, _) = run_capture(&[
            "--engine=memory",
            "--db=/memtest/openloop",
            "--benchmarks=fillseq,readrandom",
            "--num=100",
            "--reads=200",
            "--arrival_rate=2000",
            "--latency_sla_us=1000000",
            "--seed=3",
        ]);
        let recs = r.unwrap();
        let rr = &recs[1];
        // 200 ops at 2000/s take about 0.1 s, not less.
        assert!(rr.elapsed_secs >= 0.09, "{}", rr.elapsed_secs);
        assert_eq!(rr.arrival_rate, Some(2000.0));
        let g = rr.goodput_ops_per_sec.unwrap();
        assert!(g > 0.0 && g <= rr.ops_per_sec + 1e-9);
        assert!(out.contains("goodput@1000000us="));
        // Every paced op's lateness was recorded (no bound asserted: this
        // is wall-clock; pacer.rs tests the bound on a simulated clock).
        assert_eq!(rr.pacer_lateness_us.as_ref().unwrap().count, 200);
        assert!(out.contains(" pacer_late_p50_us="));
        assert_eq!(recs[0].pacer_lateness_us.as_ref().unwrap().count, 100);
    }
}
