//! `shale advise`: the LSM cost model (`crate::advise`) on the command
//! line. Without `--db` or `--bench` it ranks the candidate configurations
//! (every combination of the option lists given, for each style asked) for
//! the workload described by the flags, says in words what each costs, and
//! prints the options of the best one that may be recommended (FIFO only
//! with `--data-expires`: it deletes the oldest data whatever is live);
//! with `--db PATH` (opened read-only) or `--bench FILE` (a `shale-bench
//! --json` output) it predicts that configuration from its own options and
//! prints predicted vs measured side by side. `--json` prints one JSON
//! object instead of the tables.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};

use crate::advise::actual::{self, BenchDoc};
use crate::advise::compare;
use crate::advise::costs::costs;
use crate::advise::estimate::{estimate, Estimate};
use crate::advise::fifo::{self, FifoConfig};
use crate::advise::leveled::{self, LeveledConfig};
use crate::advise::rank::{applicable, demerits, rank, recommended};
use crate::advise::shape::human;
use crate::advise::universal::{self, UniversalConfig};
use crate::advise::workload::{Device, Memory, Workload};
use crate::error::{CliError, Outcome};
use crate::open::DbArgs;

/// Flags of `advise`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Compare with this DB (opened read-only): its options (newest
    /// OPTIONS file) and shape.
    #[arg(long, value_name = "PATH", conflicts_with = "bench")]
    db: Option<PathBuf>,
    /// Compare with the records of this `shale-bench --json` file.
    #[arg(long, value_name = "FILE")]
    bench: Option<PathBuf>,
    /// With --bench: the benchmark whose last record is compared (earlier
    /// passes of it count as warm-ups).
    #[arg(long, value_name = "NAME", default_value = "overwrite")]
    benchmark: String,
    /// Puts per second.
    #[arg(long, value_name = "OPS", default_value = "10000")]
    write_rate: f64,
    /// Write rate in MB/s of keys and values (overrides --write-rate).
    #[arg(long, value_name = "MB")]
    write_mb_per_sec: Option<f64>,
    /// Key bytes.
    #[arg(long, default_value = "16")]
    key_size: f64,
    /// Value bytes (as stored, after compression).
    #[arg(long, default_value = "100")]
    value_size: f64,
    /// Point reads per second.
    #[arg(long, value_name = "OPS", default_value = "0")]
    point_reads: f64,
    /// Range scans per second.
    #[arg(long, value_name = "OPS", default_value = "0")]
    scans: f64,
    /// Entries per range scan.
    #[arg(long, value_name = "N", default_value = "100")]
    scan_length: f64,
    /// Live keys in the DB (or give --db-size).
    #[arg(long, value_name = "N", conflicts_with = "db_size")]
    keys: Option<f64>,
    /// Live user bytes (keys and values) in the DB, e.g. 100GiB.
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    db_size: Option<f64>,
    /// Writes bypass the WAL.
    #[arg(long)]
    no_wal: bool,
    /// The application's data expires (a cache, logs kept for a retention
    /// period), so losing the oldest data is acceptable. Only then may FIFO
    /// be recommended: it deletes the oldest tables by size or age whatever
    /// is live in them. Without this flag FIFO rows are ranked last, marked
    /// "not applicable: drops live data".
    #[arg(long)]
    data_expires: bool,
    /// Device sequential read bandwidth, e.g. 1GiB (per second).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1GiB")]
    device_read_bw: f64,
    /// Device sequential write bandwidth, e.g. 500MiB (per second).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "500MiB")]
    device_write_bw: f64,
    /// Device random reads per second.
    #[arg(long, value_name = "N", default_value = "50000")]
    device_iops: f64,
    /// Memory budget (memtables, filters, index, block cache).
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "1GiB")]
    memory: f64,
    /// Data block size.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "4KiB")]
    block_size: f64,
    /// Bloom filter bits per key (0: none).
    #[arg(long, default_value = "10")]
    bloom_bits: f64,
    /// Styles to consider (leveled, universal, fifo; fifo is recommended
    /// only with --data-expires).
    #[arg(long, value_delimiter = ',', default_value = "leveled,universal,fifo")]
    style: Vec<String>,
    /// Leveled: max_bytes_for_level_multiplier values to consider.
    #[arg(long, value_delimiter = ',', default_value = "4,6,8,10,16")]
    level_multiplier: Vec<f64>,
    /// Leveled: max_bytes_for_level_base values to consider.
    #[arg(long, value_name = "BYTES", value_delimiter = ',', value_parser = parse_size, default_value = "256MiB")]
    l1_size: Vec<f64>,
    /// Leveled: num_levels values to consider (L0 included).
    #[arg(long, value_delimiter = ',', default_value = "7")]
    num_levels: Vec<usize>,
    /// Leveled: size levels from L1 down (level_compaction_dynamic_level_bytes=false).
    #[arg(long)]
    static_levels: bool,
    /// write_buffer_size.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "64MiB")]
    write_buffer_size: f64,
    /// max_write_buffer_number.
    #[arg(long, value_name = "N", default_value = "2")]
    max_write_buffer_number: f64,
    /// level0_file_num_compaction_trigger.
    #[arg(long, value_name = "N", default_value = "4")]
    l0_trigger: f64,
    /// target_file_size_base.
    #[arg(long, value_name = "BYTES", value_parser = parse_size, default_value = "64MiB")]
    target_file_size: f64,
    /// Universal: size_ratio values (percent) to consider.
    #[arg(long, value_delimiter = ',', default_value = "1,10")]
    size_ratio: Vec<f64>,
    /// Universal: max_size_amplification_percent values to consider.
    #[arg(long, value_delimiter = ',', default_value = "200")]
    max_size_amp: Vec<f64>,
    /// FIFO: max_table_files_size values to consider (default: twice the
    /// live table bytes).
    #[arg(long, value_name = "BYTES", value_delimiter = ',', value_parser = parse_size)]
    fifo_max_size: Vec<f64>,
    /// JSON output (one object).
    #[arg(long)]
    json: bool,
}

/// Parses `12`, `4KiB`, `64MiB`, `1.5GiB`, `10GB` (KiB..TiB and K..T are
/// powers of 1024, KB..TB of 1000).
pub fn parse_size(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 4096, 64MiB, 1.5GiB, 10GB)"))?;
    let mult = match unit.trim() {
        "" | "B" => 1.0,
        "K" | "KiB" | "k" => 1024.0,
        "M" | "MiB" => 1024.0 * 1024.0,
        "G" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "TiB" => 1024.0f64.powi(4),
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        u => {
            return Err(format!(
                "'{s}': unknown unit '{u}' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"
            ))
        }
    };
    if !(n.is_finite() && n >= 0.0) {
        return Err(format!("'{s}' is not a size (must be zero or more)"));
    }
    Ok(n * mult)
}

/// Runs `advise`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    if let Some(path) = &a.bench {
        return run_bench(a, path, out);
    }
    if let Some(path) = &a.db {
        return run_db(a, path, out);
    }
    let w = workload(a, None)?;
    let (d, m) = device_memory(a)?;
    let mut shapes = Vec::new();
    for style in &a.style {
        match style.as_str() {
            "leveled" => {
                for &f in &a.level_multiplier {
                    for &l1 in &a.l1_size {
                        for &n in &a.num_levels {
                            shapes.push(leveled::model(&leveled_config(a, f, l1, n)?, &w));
                        }
                    }
                }
            }
            "universal" => {
                for &r in &a.size_ratio {
                    for &p in &a.max_size_amp {
                        shapes.push(universal::model(&universal_config(a, r, p)?, &w));
                    }
                }
            }
            "fifo" => {
                let sizes = if a.fifo_max_size.is_empty() {
                    vec![2.0 * w.live_sst_bytes()]
                } else {
                    a.fifo_max_size.clone()
                };
                for max_size in sizes {
                    if max_size <= 0.0 {
                        return Err(usage("--fifo-max-size must be positive"));
                    }
                    shapes.push(fifo::model(&fifo_config(a, max_size), &w));
                }
            }
            s => {
                return Err(usage(&format!(
                    "unknown style '{s}' (leveled, universal, fifo)"
                )))
            }
        }
    }
    if shapes.is_empty() {
        return Err(usage("no configuration to consider"));
    }
    let ranked = rank(
        shapes
            .into_iter()
            .map(|s| estimate(s, &w, &d, &m, a.bloom_bits))
            .collect(),
        &w,
    );
    let best = recommended(&ranked, &w);
    let fanout = w.live_sst_bytes() / w.flushed_bytes(a.write_buffer_size);
    if a.json {
        let v = json!({
            "workload": w,
            "device": d,
            "memory": m,
            "total_fanout": fanout,
            "write_amp_minimising_levels": {
                "lwa1_w": fanout.ln(),
                "lwa2_w_plus_1": leveled::optimal_levels(fanout),
            },
            "recommended": best.map(|b| b.shape.label.clone()),
            "candidates": ranked.iter().enumerate().map(|(i, e)| candidate_json(i + 1, e, &w)).collect::<Vec<_>>(),
        });
        writeln!(out, "{v}")?;
        return Ok(Outcome::Ok);
    }
    print_table(out, &w, &ranked)?;
    writeln!(
        out,
        "\ntotal fanout (live tables / flushed memtable) {fanout:.0}: write-amp is lowest near {:.1} levels below L0 \
         with w+1 per level (Lambert W), {:.1} with w per level",
        leveled::optimal_levels(fanout),
        fanout.ln()
    )?;
    match best {
        Some(best) => {
            writeln!(out, "\noptions to set ({}):", best.shape.label)?;
            for (k, v) in &best.shape.options {
                writeln!(out, "  {k}={v}")?;
            }
        }
        None => writeln!(
            out,
            "\nno recommendation: FIFO deletes the oldest tables by size or age whatever is live in them; \
             give --data-expires if the data may expire, or consider --style leveled,universal"
        )?,
    }
    Ok(Outcome::Ok)
}

fn usage(m: &str) -> CliError {
    CliError::Usage(m.to_string())
}

fn device_memory(a: &Args) -> Result<(Device, Memory), CliError> {
    let d = Device {
        read_bytes_per_sec: a.device_read_bw,
        write_bytes_per_sec: a.device_write_bw,
        read_iops: a.device_iops,
    };
    d.validate().map_err(CliError::Usage)?;
    let m = Memory {
        budget_bytes: a.memory,
        block_size: a.block_size,
    };
    m.validate().map_err(CliError::Usage)?;
    if !(a.bloom_bits.is_finite() && (0.0..=100.0).contains(&a.bloom_bits)) {
        return Err(usage("--bloom-bits must be between 0 and 100"));
    }
    Ok((d, m))
}

/// The workload of the flags; `live_keys` (from a DB or a run) wins over
/// --keys and --db-size.
fn workload(a: &Args, live_keys: Option<f64>) -> Result<Workload, CliError> {
    let user_entry = a.key_size + a.value_size;
    let keys = match (live_keys, a.keys, a.db_size) {
        (Some(k), _, _) => k,
        (None, Some(k), _) => k,
        (None, None, Some(b)) if user_entry > 0.0 => b / user_entry,
        _ => {
            return Err(usage(
                "give the DB size: --keys N or --db-size BYTES (or --db PATH / --bench FILE)",
            ))
        }
    };
    let writes = match a.write_mb_per_sec {
        Some(mb) if user_entry > 0.0 => mb * 1e6 / user_entry,
        _ => a.write_rate,
    };
    let w = Workload {
        writes_per_sec: writes,
        key_size: a.key_size,
        value_size: a.value_size,
        point_reads_per_sec: a.point_reads,
        scans_per_sec: a.scans,
        scan_length: a.scan_length,
        live_keys: keys,
        wal: !a.no_wal,
        data_expires: a.data_expires,
    };
    w.validate().map_err(CliError::Usage)?;
    Ok(w)
}

fn leveled_config(a: &Args, f: f64, l1: f64, n: usize) -> Result<LeveledConfig, CliError> {
    if !(f.is_finite() && f > 1.0) {
        return Err(usage(&format!(
            "--level-multiplier {f}: must be more than 1"
        )));
    }
    if !(2..=64).contains(&n) {
        return Err(usage(&format!("--num-levels {n}: must be 2..=64")));
    }
    if l1 <= 0.0 || a.write_buffer_size <= 0.0 || a.target_file_size <= 0.0 {
        return Err(usage(
            "--l1-size, --write-buffer-size and --target-file-size must be positive",
        ));
    }
    if !(a.l0_trigger >= 1.0 && a.max_write_buffer_number >= 1.0) {
        return Err(usage(
            "--l0-trigger and --max-write-buffer-number must be at least 1",
        ));
    }
    Ok(LeveledConfig {
        multiplier: f,
        l1_bytes: l1,
        num_levels: n,
        dynamic: !a.static_levels,
        write_buffer_size: a.write_buffer_size,
        max_write_buffer_number: a.max_write_buffer_number,
        l0_trigger: a.l0_trigger,
        target_file_size: a.target_file_size,
    })
}

fn universal_config(a: &Args, r: f64, p: f64) -> Result<UniversalConfig, CliError> {
    if !(r.is_finite() && r >= 0.0) {
        return Err(usage(&format!("--size-ratio {r}: must be zero or more")));
    }
    if !(p.is_finite() && p > 0.0) {
        return Err(usage(&format!("--max-size-amp {p}: must be positive")));
    }
    Ok(UniversalConfig {
        size_ratio: r,
        max_size_amp_percent: p,
        write_buffer_size: a.write_buffer_size,
        max_write_buffer_number: a.max_write_buffer_number,
        l0_trigger: a.l0_trigger,
    })
}

fn fifo_config(a: &Args, max_size: f64) -> FifoConfig {
    FifoConfig {
        max_size,
        write_buffer_size: a.write_buffer_size,
        max_write_buffer_number: a.max_write_buffer_number,
    }
}

fn candidate_json(rank: usize, e: &Estimate, w: &Workload) -> Value {
    let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
    if let Value::Object(o) = &mut v {
        o.insert("rank".into(), json!(rank));
        o.insert("applicable".into(), json!(applicable(e, w)));
        o.insert("demerits".into(), json!(demerits(e, w)));
        o.insert("costs".into(), json!(costs(e, w)));
        let options: serde_json::Map<String, Value> = e
            .shape
            .options
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        o.insert("options".into(), Value::Object(options));
    }
    v
}

fn print_table(out: &mut dyn Write, w: &Workload, ranked: &[Estimate]) -> Result<(), CliError> {
    writeln!(
        out,
        "workload: {:.0} puts/s, {:.0} point reads/s, {:.0} scans/s of {:.0}; {:.0} keys of {}+{} B ({} live tables); {}",
        w.writes_per_sec,
        w.point_reads_per_sec,
        w.scans_per_sec,
        w.scan_length,
        w.live_keys,
        w.key_size,
        w.value_size,
        human(w.live_sst_bytes()),
        if w.data_expires {
            "data expires (--data-expires): FIFO may be recommended"
        } else {
            "data does not expire: FIFO is not recommended (see --data-expires)"
        }
    )?;
    writeln!(
        out,
        "{:<4} {:<28} {:>6} {:>11} {:>5} {:>11} {:>6} {:>10} {:>10} {:>6}",
        "rank",
        "configuration",
        "w-amp",
        "space st/pk",
        "runs",
        "get io h/m",
        "scanio",
        "filt+idx",
        "dev us/put",
        "util%"
    )?;
    for (i, e) in ranked.iter().enumerate() {
        let s = &e.shape;
        writeln!(
            out,
            "{:<4} {:<28} {:>6.2} {:>5.2}/{:<5.2} {:>5.1} {:>5.2}/{:<5.3} {:>6.1} {:>10} {:>10.2} {:>6.1}{}",
            i + 1,
            s.label,
            e.write_amp,
            s.space_amp_steady,
            s.space_amp_peak,
            e.sorted_runs,
            e.point_read_ios,
            e.point_miss_ios,
            e.scan_ios,
            human(e.filter_bytes + e.index_bytes),
            e.write_secs * 1e6,
            e.device_utilisation * 100.0,
            notes(e, w)
        )?;
        for line in costs(e, w).lines() {
            writeln!(out, "       {line}")?;
        }
    }
    Ok(())
}

fn notes(e: &Estimate, w: &Workload) -> String {
    let mut all = demerits(e, w);
    all.extend(
        e.shape
            .notes
            .iter()
            .filter(|n| !n.starts_with("drops"))
            .cloned(),
    );
    if all.is_empty() {
        String::new()
    } else {
        format!("  ({})", all.join("; "))
    }
}

fn run_bench(a: &Args, path: &std::path::Path, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| usage(&format!("{}: {e}", path.display())))?;
    let source = path.display().to_string();
    let records = actual::bench_records(&text, &source).map_err(CliError::Usage)?;
    // The last record of the benchmark: earlier passes of it are warm-ups.
    let picked: Vec<&BenchDoc> = records
        .iter()
        .rev()
        .find(|r| r.benchmark == a.benchmark)
        .into_iter()
        .collect();
    if picked.is_empty() {
        return Err(usage(&format!(
            "{source}: no '{}' record (has: {})",
            a.benchmark,
            records
                .iter()
                .map(|r| r.benchmark.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut rows = Vec::new();
    for r in picked {
        rows.push(compare::compare_record(r).map_err(|e| usage(&format!("{source}: {e}")))?);
    }
    if a.json {
        writeln!(
            out,
            "{}",
            json!({"source": source, "benchmark": a.benchmark, "runs": rows})
        )?;
        return Ok(Outcome::Ok);
    }
    writeln!(
        out,
        "{:<30} {:>9} {:>9} {:>7} {:>9} {:>9} {:>7}",
        "configuration", "w-amp prd", "w-amp msr", "err%", "space prd", "space msr", "err%"
    )?;
    for r in &rows {
        let f = |p: &str| r.pointer(p).and_then(Value::as_f64);
        writeln!(
            out,
            "{:<30} {:>9.2} {:>9} {:>7} {:>9.3} {:>9} {:>7}",
            format!(
                "{} v={}",
                r["label"].as_str().unwrap_or(""),
                r["value_size"]
            ),
            f("/predicted/write_amp").unwrap_or(0.0),
            opt(f("/measured/write_amp"), 2),
            opt(f("/error_pct/write_amp"), 1),
            f("/predicted/space_amp").unwrap_or(0.0),
            opt(f("/measured/space_amp"), 3),
            opt(f("/error_pct/space_amp"), 1),
        )?;
        let p = r["predicted"]["level_write_amp"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let m = r["measured"]["level_write_amp"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for l in 0..p.len().max(m.len()) {
            let (pl, ml) = (
                p.get(l).and_then(Value::as_f64),
                m.get(l).and_then(Value::as_f64),
            );
            if pl.unwrap_or(0.0) == 0.0 && ml.unwrap_or(0.0) == 0.0 {
                continue;
            }
            writeln!(
                out,
                "  L{l}: predicted {:>6} measured {:>6}",
                opt(pl, 2),
                opt(ml, 2)
            )?;
        }
    }
    Ok(Outcome::Ok)
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map(|x| format!("{x:.prec$}"))
        .unwrap_or_else(|| "n/a".into())
}

fn run_db(a: &Args, path: &std::path::Path, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let args = DbArgs::persisted(path.to_path_buf());
    let db = args.open_read_only()?;
    let stats = db.stats();
    let measured_wa = stats.compaction.write_amp;
    let stats = serde_json::to_value(&stats).map_err(|e| CliError::Output(e.into()))?;
    let families = actual::families(stats).map_err(CliError::Usage)?;
    let fam = families
        .iter()
        .find(|f| f.name == "default")
        .ok_or_else(|| usage("the DB has no default column family"))?;
    let opts = shale::tools::OptionsFile::read(&shale::tools::OptionsFile::latest_in(path)?)?;
    let section = "CFOptions \"default\"";
    let get = |n: &str, default: f64| -> f64 {
        opts.get(section, n)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(default)
    };
    let c = LeveledConfig {
        multiplier: get("max_bytes_for_level_multiplier", 10.0),
        l1_bytes: get("max_bytes_for_level_base", 256.0 * 1048576.0),
        num_levels: get("num_levels", 7.0) as usize,
        dynamic: opts
            .get(section, "level_compaction_dynamic_level_bytes")
            .is_none_or(|v| v.trim() == "true"),
        write_buffer_size: get("write_buffer_size", 64.0 * 1048576.0),
        max_write_buffer_number: get("max_write_buffer_number", 2.0),
        l0_trigger: get("level0_file_num_compaction_trigger", 4.0),
        target_file_size: get("target_file_size_base", 64.0 * 1048576.0),
    };
    // Entry size from the tables (all versions), value size from it and
    // --key-size; live keys = entries of the last level.
    let entries = fam.estimated_num_keys.unwrap_or(0) as f64;
    let mut a2 = a.clone();
    if entries > 0.0 && fam.bytes() > 0 {
        let sst_entry = fam.bytes() as f64 / entries;
        a2.value_size =
            (sst_entry - crate::advise::workload::SST_ENTRY_OVERHEAD - a.key_size).max(0.0);
    }
    let sst_entry = a2.key_size + a2.value_size + crate::advise::workload::SST_ENTRY_OVERHEAD;
    let live_keys = (fam.last_level_bytes() as f64 / sst_entry).max(1.0);
    let w = workload(&a2, Some(live_keys))?;
    let shape = leveled::model(&c, &w);
    let actual_space = fam.bytes() as f64 / fam.last_level_bytes().max(1) as f64;
    let predicted: Vec<(String, f64)> = shape
        .runs
        .iter()
        .map(|r| (r.name.clone(), r.bytes))
        .collect();
    if a.json {
        let v = json!({
            "db": path.display().to_string(),
            "config": c,
            "live_keys": live_keys,
            "value_size": a2.value_size,
            "levels": fam.levels.iter().map(|l| {
                let p = predicted.iter().find(|(n, _)| *n == format!("L{}", l.level)).map(|(_, b)| *b).unwrap_or(0.0);
                json!({"level": l.level, "files": l.files, "bytes": l.bytes, "predicted_bytes": p})
            }).collect::<Vec<_>>(),
            "predicted": {"write_amp": shape.write_amp(), "space_amp": shape.space_amp_steady, "write_terms": shape.write_terms},
            "measured": {"space_amp": actual_space, "write_amp": if measured_wa > 0.0 { Some(measured_wa) } else { None }},
        });
        writeln!(out, "{v}")?;
        return Ok(Outcome::Ok);
    }
    writeln!(
        out,
        "{} ({}): ~{:.0} live keys of {}+{:.0} B",
        path.display(),
        shape.label,
        live_keys,
        a2.key_size,
        a2.value_size
    )?;
    writeln!(
        out,
        "{:<6} {:>6} {:>12} {:>12}",
        "level", "files", "bytes", "predicted"
    )?;
    for l in &fam.levels {
        let p = predicted
            .iter()
            .find(|(n, _)| *n == format!("L{}", l.level))
            .map(|(_, b)| human(*b))
            .unwrap_or_else(|| "-".into());
        writeln!(
            out,
            "L{:<5} {:>6} {:>12} {:>12}",
            l.level,
            l.files,
            human(l.bytes as f64),
            p
        )?;
    }
    writeln!(
        out,
        "space-amp (tables / last level): predicted {:.3}, actual {:.3}",
        shape.space_amp_steady, actual_space
    )?;
    writeln!(
        out,
        "write-amp: predicted {:.2}; actual {} (counters start at open: a DB at rest has none; use shale-bench --json and --bench)",
        shape.write_amp(),
        if measured_wa > 0.0 { format!("{measured_wa:.2}") } else { "n/a".into() }
    )?;
    Ok(Outcome::Ok)
}
