//! `shale-bench compare ... --plot FILE`: the runs of every `--json` file
//! given, overlaid in one SVG, one series per file (a "run", named
//! `engine: file name`, the same colour in every panel). Per benchmark, in
//! first-seen order: throughput over time, p99 latency over time, and,
//! when some run recorded it, the write-amp per level as grouped bars
//! (`BenchRecord::level_write_amp`).
//!
//! Benchmarks are keyed as the comparison table keys them (the k-th
//! occurrence of a name in a file is `name#k`). A run missing a benchmark
//! has no series in its panels. Pure functions of the records, plus
//! `write`.

use std::path::{Path, PathBuf};

use shale_chart::{Axis, BarChart, BarSeries, Figure, LineChart, Series};

use crate::chart::{ops_points, p99_axis, p99_points, throughput_axis, time_axis};
use crate::error::{Error, Result};
use crate::report::{keyed, read_json, BenchRecord};

/// One file's records, keyed by benchmark, and its legend name.
#[derive(Debug, Clone)]
pub struct PlotRun {
    /// `engine: file name`.
    pub label: String,
    /// (benchmark key, record), in file order.
    pub records: Vec<(String, BenchRecord)>,
}

/// Reads `files` and names each run `engine: file name` (the whole path
/// where two file names are the same; `#k` where paths are too).
pub fn load(files: &[PathBuf]) -> Result<Vec<PlotRun>> {
    let mut runs = Vec::new();
    for f in files {
        let records = read_json(f)?;
        if records.is_empty() {
            return Err(Error(format!("{}: no records", f.display())));
        }
        let engine = records
            .first()
            .map(|r| r.engine.clone())
            .unwrap_or_default();
        runs.push((engine, f, keyed(records)));
    }
    let name = |p: &Path| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    let mut out: Vec<PlotRun> = Vec::new();
    let mut bases: Vec<String> = Vec::new();
    for (engine, f, records) in runs.iter() {
        let same_name = runs.iter().filter(|r| name(r.1) == name(f)).count() > 1;
        let shown = if same_name {
            f.display().to_string()
        } else {
            name(f)
        };
        let base = format!("{engine}: {shown}");
        let twins = bases.iter().filter(|b| **b == base).count();
        let label = if twins > 0 {
            format!("{base} #{}", twins + 1)
        } else {
            base.clone()
        };
        bases.push(base);
        out.push(PlotRun {
            label,
            records: records.clone(),
        });
    }
    Ok(out)
}

/// The levels worth a bar: up to the deepest with bytes in any run.
fn level_count(amps: &[&Vec<f64>]) -> usize {
    amps.iter()
        .filter_map(|a| a.iter().rposition(|v| *v > 0.0))
        .max()
        .map_or(1, |i| i + 1)
}

/// The figure for `runs`.
pub fn figure(runs: &[PlotRun]) -> Figure {
    let mut f = Figure::new(format!("shale-bench compare: {} runs", runs.len()));
    f.note("One series per run: throughput and p99 latency per reporting interval.");
    f.note("Write-amp per level: bytes flushes and compactions wrote into the level ÷ user bytes written.");
    let mut benches: Vec<&str> = Vec::new();
    for r in runs {
        for (k, _) in &r.records {
            if !benches.contains(&k.as_str()) {
                benches.push(k);
            }
        }
    }
    for bench in benches {
        let found: Vec<(usize, &PlotRun, &BenchRecord)> = runs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let rec = r.records.iter().find(|(k, _)| k == bench)?;
                Some((i, r, &rec.1))
            })
            .collect();
        let mut ops = LineChart::new(
            format!("{bench}: throughput"),
            time_axis(),
            throughput_axis(),
        );
        let mut p99 = LineChart::new(format!("{bench}: p99 latency"), time_axis(), p99_axis());
        for &(key, run, rec) in &found {
            ops.push(Series::new(key, &run.label, ops_points(&rec.intervals)));
            p99.push(Series::new(key, &run.label, p99_points(&rec.intervals)));
        }
        f.push(ops);
        f.push(p99);
        let amps: Vec<(usize, &PlotRun, &Vec<f64>)> = found
            .iter()
            .filter_map(|&(k, run, rec)| Some((k, run, rec.level_write_amp.as_ref()?)))
            .collect();
        if amps.is_empty() {
            continue;
        }
        let n = level_count(&amps.iter().map(|a| a.2).collect::<Vec<_>>());
        let mut bars = BarChart::new(
            format!("{bench}: write-amp per level"),
            "level",
            (0..n).map(|l| format!("L{l}")).collect(),
            Axis::new("bytes written ÷ user bytes", ""),
        );
        for (key, run, amp) in amps {
            let values = (0..n).map(|l| amp.get(l).copied()).collect();
            bars.push(BarSeries::new(key, &run.label, values));
        }
        f.push(bars);
    }
    f
}

/// Reads `files` and writes their figure to `path`.
pub fn write(path: &Path, files: &[PathBuf]) -> Result<()> {
    let svg = figure(&load(files)?).to_svg();
    std::fs::write(path, svg).map_err(|e| Error(format!("cannot write {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reporter::Interval;

    fn rec(name: &str, engine: &str, ops: &[f64], amp: Option<Vec<f64>>) -> BenchRecord {
        BenchRecord {
            benchmark: name.into(),
            engine: engine.into(),
            intervals: ops
                .iter()
                .enumerate()
                .map(|(i, &o)| Interval {
                    secs: i as f64 + 1.0,
                    ops: o as u64,
                    ops_per_sec: o,
                    p99_us: 10.0 + i as f64,
                    len_secs: 1.0,
                })
                .collect(),
            level_write_amp: amp,
            ..BenchRecord::default()
        }
    }

    #[test]
    fn labels_name_engine_and_file_and_stay_distinct() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("x")).unwrap();
        let (a, b, c) = (
            d.path().join("a.json"),
            d.path().join("x").join("a.json"),
            d.path().join("c.json"),
        );
        rec("fillseq", "shale", &[1.0], None)
            .append_json(&a)
            .unwrap();
        rec("fillseq", "rocksdb", &[1.0], None)
            .append_json(&b)
            .unwrap();
        rec("fillseq", "shale", &[1.0], None)
            .append_json(&c)
            .unwrap();
        let runs = load(&[a.clone(), b.clone(), c.clone(), c.clone()]).unwrap();
        let labels: Vec<&str> = runs.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels[0], format!("shale: {}", a.display()));
        assert_eq!(labels[1], format!("rocksdb: {}", b.display()));
        assert_eq!(labels[2], format!("shale: {}", c.display()));
        assert_eq!(labels[3], format!("shale: {} #2", c.display()));
        let empty = d.path().join("empty.json");
        std::fs::write(&empty, "").unwrap();
        assert!(load(&[empty]).unwrap_err().0.contains("no records"));
        assert!(load(&[d.path().join("missing.json")]).is_err());
    }

    #[test]
    fn one_series_per_run_and_bars_only_where_recorded() {
        let runs = vec![
            PlotRun {
                label: "shale: a.json".into(),
                records: keyed(vec![
                    rec(
                        "fillrandom",
                        "shale",
                        &[100.0, 200.0],
                        Some(vec![1.0, 0.5, 0.0]),
                    ),
                    rec("readrandom", "shale", &[50.0], None),
                ]),
            },
            PlotRun {
                label: "rocksdb: b.json".into(),
                records: keyed(vec![rec("fillrandom", "rocksdb", &[90.0], None)]),
            },
        ];
        let f = figure(&runs);
        let titles: Vec<&str> = f
            .panels
            .iter()
            .map(|p| match p {
                shale_chart::Panel::Line(c) => c.title.as_str(),
                shale_chart::Panel::Bar(c) => c.title.as_str(),
                shale_chart::Panel::Levels(c) => c.title.as_str(),
            })
            .collect();
        assert_eq!(
            titles,
            [
                "fillrandom: throughput",
                "fillrandom: p99 latency",
                "fillrandom: write-amp per level",
                "readrandom: throughput",
                "readrandom: p99 latency"
            ]
        );
        let shale_chart::Panel::Bar(bars) = &f.panels[2] else {
            panic!("not bars");
        };
        // L2 is empty in every run: two categories.
        assert_eq!(bars.categories, ["L0", "L1"]);
        assert_eq!(bars.series.len(), 1);
        let shale_chart::Panel::Line(rr) = &f.panels[3] else {
            panic!("not lines");
        };
        assert_eq!(rr.series.len(), 1);
        assert_eq!(rr.series[0].key, 0);
    }
}
