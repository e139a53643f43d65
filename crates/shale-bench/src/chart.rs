//! `--chart=FILE`: per benchmark, its throughput and its p99 latency over
//! time, one panel each with labelled axes, units and a legend (the
//! measured passes of a repeated entry, `name[X3]`, overlaid as one series
//! per pass), drawn by shale-chart; and the same numbers as `FILE.csv`.
//!
//! Consecutive runs of one benchmark share its panels; a benchmark run
//! again later in the list gets panels of its own. The intervals are the
//! reporter's: finer for shorter benchmarks (tens of points for a
//! sub-second one), each rate over its interval's real length and drawn at
//! its real end, the last ending at the benchmark's last op (see
//! `reporter`); a note under the title says how long they were. Pure
//! functions of the data, plus `write`.

use std::fmt::Write as _;
use std::path::Path;

use shale_chart::{Axis, Figure, LineChart, Series};

use crate::error::{Error, Result};
use crate::reporter::Interval;

/// One measured pass and its intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The benchmark's name.
    pub benchmark: String,
    /// The pass's name in the legend and the CSV (`name (run 2/3)`).
    pub label: String,
    /// Its intervals.
    pub intervals: Vec<Interval>,
}

/// The x axis of every time chart.
pub(crate) fn time_axis() -> Axis {
    Axis::new("time since the benchmark started", "s")
}

/// The y axis of throughput charts.
pub(crate) fn throughput_axis() -> Axis {
    Axis::new("throughput", "ops/s")
}

/// The y axis of latency charts.
pub(crate) fn p99_axis() -> Axis {
    Axis::new("p99 latency", "µs")
}

/// Throughput points of `iv`: (end of the interval, ops/s).
pub(crate) fn ops_points(iv: &[Interval]) -> Vec<(f64, f64)> {
    iv.iter().map(|p| (p.secs, p.ops_per_sec)).collect()
}

/// p99 points of `iv`: (end of the interval, µs); intervals without ops
/// have no p99 and no point.
pub(crate) fn p99_points(iv: &[Interval]) -> Vec<(f64, f64)> {
    iv.iter()
        .filter(|p| p.ops > 0)
        .map(|p| (p.secs, p.p99_us))
        .collect()
}

/// A run's nominal interval length (s): the median of its intervals'
/// lengths (the first and last may be shorter or longer); `None` when it
/// has none or they predate recorded lengths.
pub(crate) fn nominal_len(iv: &[Interval]) -> Option<f64> {
    let mut lens: Vec<f64> = iv.iter().map(|p| p.len_secs).filter(|l| *l > 0.0).collect();
    lens.sort_by(f64::total_cmp);
    lens.get(lens.len() / 2).copied()
}

/// `secs` as `7.8 ms` or `1 s`.
fn duration_text(secs: f64) -> String {
    let (v, unit) = if secs < 1.0 {
        (secs * 1e3, "ms")
    } else {
        (secs, "s")
    };
    let t = format!("{v:.1}");
    format!("{} {unit}", t.strip_suffix(".0").unwrap_or(&t))
}

/// The note on the intervals' lengths, if any run recorded them.
fn interval_note(runs: &[Run]) -> Option<String> {
    let lens: Vec<f64> = runs
        .iter()
        .filter_map(|r| nominal_len(&r.intervals))
        .collect();
    let lo = lens.iter().copied().reduce(f64::min)?;
    let hi = lens.iter().copied().reduce(f64::max)?;
    let (lo, hi) = (duration_text(lo), duration_text(hi));
    let span = if lo == hi {
        format!("one point per {lo} interval")
    } else {
        format!("one point per interval of {lo} to {hi}, finer for shorter benchmarks")
    };
    Some(format!(
        "{span}; each rate over its interval's real length, the last interval ending at the last op"
    ))
}

/// The figure: two panels per group of consecutive runs of a benchmark.
pub fn figure(runs: &[Run], note: &str) -> Figure {
    let mut f = Figure::new("shale-bench: throughput and p99 latency per interval");
    if !note.is_empty() {
        f.note(note);
    }
    if runs.is_empty() {
        f.note("no measured benchmark ran");
    }
    if let Some(n) = interval_note(runs) {
        f.note(n);
    }
    for group in runs.chunk_by(|a, b| a.benchmark == b.benchmark) {
        let Some(name) = group.first().map(|r| &r.benchmark) else {
            continue;
        };
        let mut ops = LineChart::new(
            format!("{name}: throughput"),
            time_axis(),
            throughput_axis(),
        );
        let mut p99 = LineChart::new(format!("{name}: p99 latency"), time_axis(), p99_axis());
        for (key, r) in group.iter().enumerate() {
            ops.push(Series::new(key, &r.label, ops_points(&r.intervals)));
            p99.push(Series::new(key, &r.label, p99_points(&r.intervals)));
        }
        f.push(ops);
        f.push(p99);
    }
    f
}

/// The CSV: `benchmark,secs,ops,ops_per_sec,p99_us,len_secs` (`secs` is
/// the interval's end, `len_secs` its length).
pub fn csv(runs: &[Run]) -> String {
    let mut s = String::from("benchmark,secs,ops,ops_per_sec,p99_us,len_secs\n");
    for r in runs {
        for p in &r.intervals {
            let _ = writeln!(
                s,
                "{},{:.4},{},{:.1},{:.1},{:.4}",
                r.label, p.secs, p.ops, p.ops_per_sec, p.p99_us, p.len_secs
            );
        }
    }
    s
}

/// Writes `path` (SVG, with `note` under the title) and `path` with
/// extension `.csv`.
pub fn write(path: &Path, runs: &[Run], note: &str) -> Result<()> {
    let put = |p: &Path, text: String| {
        std::fs::write(p, text).map_err(|e| Error(format!("cannot write {}: {e}", p.display())))
    };
    put(path, figure(runs, note).to_svg())?;
    put(&path.with_extension("csv"), csv(runs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shale_chart::verify::parse;

    fn iv(secs: f64, ops: u64, p99_us: f64) -> Interval {
        Interval {
            secs,
            ops,
            ops_per_sec: ops as f64,
            p99_us,
            len_secs: 1.0,
        }
    }

    fn run(bench: &str, label: &str, iv: Vec<Interval>) -> Run {
        Run {
            benchmark: bench.into(),
            label: label.into(),
            intervals: iv,
        }
    }

    fn runs() -> Vec<Run> {
        vec![
            run(
                "fill<x>",
                "fill<x>",
                vec![iv(1.0, 100, 5.0), iv(2.0, 300, 9.0)],
            ),
            run(
                "readrandom",
                "readrandom (run 1/2)",
                vec![iv(1.0, 4000, 20.0), iv(2.0, 4200, 22.0), iv(3.0, 0, 0.0)],
            ),
            run(
                "readrandom",
                "readrandom (run 2/2)",
                vec![iv(1.0, 3900, 25.0), iv(2.0, 4100, 21.0)],
            ),
        ]
    }

    #[test]
    fn panels_per_benchmark_with_axes_units_and_one_path_per_pass() {
        let svg = figure(&runs(), "engine memory").to_svg();
        let p = parse(&svg).unwrap();
        assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
        assert_eq!(
            p.notes,
            vec![
                "engine memory",
                "one point per 1 s interval; each rate over its interval's real length, \
                 the last interval ending at the last op"
            ]
        );
        let titles: Vec<&str> = p.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "fill<x>: throughput",
                "fill<x>: p99 latency",
                "readrandom: throughput",
                "readrandom: p99 latency"
            ]
        );
        assert!(svg.contains("fill&lt;x&gt;: throughput"));
        for panel in &p.panels {
            let x = panel.x_axis.as_ref().unwrap();
            let y = panel.y_axis.as_ref().unwrap();
            assert_eq!(x.title, "time since the benchmark started (s)");
            let want = if panel.title.ends_with("throughput") {
                "throughput (ops/s)"
            } else {
                "p99 latency (µs)"
            };
            assert_eq!(y.title, want);
            assert!(y.ticks.len() >= 2 && x.ticks.len() >= 2);
            assert_eq!(panel.lines.len(), panel.legend.len());
        }
        let rr = p.panel("readrandom: throughput").unwrap();
        let names: Vec<&str> = rr.legend.iter().map(|l| l.1.as_str()).collect();
        assert_eq!(names, ["readrandom (run 1/2)", "readrandom (run 2/2)"]);
        assert_eq!(rr.lines.len(), 2);
        assert_eq!(rr.lines[0].points.len(), 3);
        // The idle third interval has a throughput point but no p99 point.
        assert_eq!(p.panel("readrandom: p99").unwrap().lines[0].points.len(), 2);
        // The highest throughput (4200 ops/s) lies in the top tick interval.
        let y = rr.y_axis.as_ref().unwrap();
        let (top, step) = (y.max_tick().unwrap(), y.step().unwrap());
        assert!(4200.0 <= top && 4200.0 > top - step, "{top} {step}");
        let high = rr.lines[0].points[1].1;
        assert!((high - 4200.0).abs() < top / 200.0, "{high}");
    }

    #[test]
    fn csv_has_every_interval_and_write_makes_both_files() {
        let c = csv(&runs());
        assert_eq!(c.lines().count(), 8);
        assert!(c.starts_with("benchmark,secs,ops,ops_per_sec,p99_us,len_secs\n"));
        assert!(c.contains("fill<x>,2.0000,300,300.0,9.0,1.0000\n"));
        assert!(c.contains("readrandom (run 2/2),1.0000,3900,3900.0,25.0,1.0000\n"));
        let d = tempfile::tempdir().unwrap();
        write(&d.path().join("c.svg"), &runs(), "").unwrap();
        assert!(d.path().join("c.csv").exists());
        let back = std::fs::read_to_string(d.path().join("c.svg")).unwrap();
        assert_eq!(parse(&back).unwrap().panels.len(), 4);
        let err = write(&d.path().join("no/such/dir/c.svg"), &runs(), "").unwrap_err();
        assert!(err.0.contains("cannot write"), "{err}");
    }

    /// A sub-second benchmark (here 0.1 s of the reporter's 7.8 ms
    /// intervals, the last one partial) draws a line of many points, each at
    /// its interval's end, and the note says how long the intervals were.
    #[test]
    fn sub_second_run_draws_a_line_and_names_its_interval() {
        let w = 1.0 / 128.0;
        let mut ivs: Vec<Interval> = (1..=12)
            .map(|i| Interval {
                secs: i as f64 * w,
                ops: 7812,
                ops_per_sec: 7812.0 / w,
                p99_us: 3.0,
                len_secs: w,
            })
            .collect();
        ivs.push(Interval {
            secs: 0.1,
            ops: 6250,
            ops_per_sec: 6250.0 / (0.1 - 12.0 * w),
            p99_us: 3.0,
            len_secs: 0.1 - 12.0 * w,
        });
        let mut long = runs();
        long.truncate(1);
        let rs = vec![run("fillseq", "fillseq", ivs.clone()), long.remove(0)];
        let f = figure(&rs, "");
        let p = parse(&f.to_svg()).unwrap();
        assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
        assert_eq!(
            p.notes,
            vec![
                "one point per interval of 7.8 ms to 1 s, finer for shorter benchmarks; \
                 each rate over its interval's real length, the last interval ending at the last op"
            ]
        );
        let line = &p.panel("fillseq: throughput").unwrap().lines[0];
        assert_eq!(line.points.len(), 13);
        assert_eq!(p.panel("fillseq: p99").unwrap().lines[0].points.len(), 13);
        let (x, y) = ops_points(&ivs).last().copied().unwrap();
        assert_eq!(x, 0.1);
        assert!((y - 1e6).abs() < 1e-3, "{y}");
        assert_eq!(nominal_len(&ivs), Some(w));
        assert_eq!(nominal_len(&[]), None);
        assert_eq!(duration_text(0.015625), "15.6 ms");
        assert_eq!(duration_text(0.125), "125 ms");
        assert_eq!(duration_text(2.0), "2 s");
    }

    #[test]
    fn no_runs_still_make_a_valid_figure() {
        let p = parse(&figure(&[], "").to_svg()).unwrap();
        assert!(p.panels.is_empty());
        assert_eq!(p.notes, vec!["no measured benchmark ran"]);
    }
}
