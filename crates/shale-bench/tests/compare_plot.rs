//! `shale-bench compare A.json B.json --plot out.svg` on two real runs of
//! the tool (a 2-second fillrandom on Shale with a 64 KiB memtable, so
//! flushes and compactions happen, then a short readrandom): the table is
//! printed as before, and the SVG, read back, overlays the two runs with
//! labelled axes and units, one legend entry and one path per run, the
//! plotted throughput equal to the recorded intervals, and per-level
//! write-amp bars equal to the records'.

#![cfg(feature = "shale-engine")]

use std::path::{Path, PathBuf};

use shale_bench::report::{read_json, BenchRecord};
use shale_bench::runner::{self, Out};
use shale_bench::{compare_cmd, Flags};
use shale_chart::verify::parse;

fn bench(dir: &Path, name: &str, seed: u32) -> PathBuf {
    let json = dir.join(name);
    let args = [
        "--engine=shale".to_string(),
        format!("--db={}", dir.join(format!("db-{name}")).display()),
        "--benchmarks=fillrandom,readrandom".to_string(),
        "--num=20000".to_string(),
        "--reads=1000".to_string(),
        "--duration=2".to_string(),
        "--write_buffer_size=65536".to_string(),
        "--compression_type=none".to_string(),
        "--progress_reports=0".to_string(),
        format!("--seed={seed}"),
        format!("--json={}", json.display()),
    ];
    let flags = Flags::parse(&args).unwrap();
    let (mut o, mut e) = (Vec::new(), Vec::new());
    runner::run(
        &flags,
        &mut Out {
            stdout: &mut o,
            stderr: &mut e,
        },
    )
    .unwrap();
    json
}

fn fill(path: &Path) -> BenchRecord {
    read_json(path)
        .unwrap()
        .into_iter()
        .find(|r| r.benchmark == "fillrandom")
        .unwrap()
}

#[test]
fn compare_plot_overlays_two_runs() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (bench(d.path(), "a.json", 1), bench(d.path(), "b.json", 2));
    let (ra, rb) = (fill(&a), fill(&b));
    for r in [&ra, &rb] {
        assert!(!r.intervals.is_empty(), "{r:?}");
        let amp = r.level_write_amp.as_ref().unwrap();
        // Flushes wrote into L0; the levels' sum is the table part of the
        // engine's write-amp (the rest is the WAL).
        assert!(amp[0] > 0.0, "{amp:?}");
        let sum: f64 = amp.iter().sum();
        let eng = r.engine_write_amp.unwrap();
        assert!(sum > 0.0 && sum < eng, "{sum} vs {eng}");
    }
    let out = d.path().join("out.svg");
    let (sa, sb, so) = (
        a.display().to_string(),
        b.display().to_string(),
        out.display().to_string(),
    );
    let table = compare_cmd::run(&[sa.as_str(), sb.as_str(), "--plot", so.as_str()]).unwrap();
    // The table is the two-sided one it always was.
    assert!(
        table.starts_with(&format!("A = {sa} (shale), B = {sb} (shale)")),
        "{table}"
    );
    assert!(
        table.lines().any(|l| l.starts_with("fillrandom ")),
        "{table}"
    );

    let svg = std::fs::read_to_string(&out).unwrap();
    let p = parse(&svg).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
    assert_eq!(p.title, "shale-bench compare: 2 runs");
    let titles: Vec<&str> = p.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "fillrandom: throughput",
            "fillrandom: p99 latency",
            "fillrandom: write-amp per level",
            "readrandom: throughput",
            "readrandom: p99 latency",
        ]
    );
    let legend = vec![
        (0, "shale: a.json".to_string()),
        (1, "shale: b.json".to_string()),
    ];
    for panel in &p.panels {
        assert_eq!(panel.legend, legend, "{}", panel.title);
    }

    let ops = &p.panels[0];
    assert_eq!(
        ops.x_axis.as_ref().unwrap().title,
        "time since the benchmark started (s)"
    );
    let y = ops.y_axis.as_ref().unwrap();
    assert_eq!(y.title, "throughput (ops/s)");
    assert!(y.ticks.iter().all(|t| !t.label.is_empty()));
    assert_eq!(ops.lines.len(), 2);
    let top = y.max_tick().unwrap();
    let px = top / 220.0; // one pixel of the plot's height
    for (line, rec) in ops.lines.iter().zip([&ra, &rb]) {
        assert_eq!(line.points.len(), rec.intervals.len());
        for (pt, iv) in line.points.iter().zip(&rec.intervals) {
            assert!((pt.1 - iv.ops_per_sec).abs() <= px, "{pt:?} vs {iv:?}");
        }
    }
    let highest = ra
        .intervals
        .iter()
        .chain(&rb.intervals)
        .map(|i| i.ops_per_sec)
        .fold(0.0, f64::max);
    assert!(
        highest <= top && highest > top - y.step().unwrap(),
        "{highest} {top}"
    );
    assert_eq!(
        p.panels[1].y_axis.as_ref().unwrap().title,
        "p99 latency (µs)"
    );
    assert_eq!(p.panels[1].lines.len(), 2);

    let bars = &p.panels[2];
    let cats = &bars.x_axis.as_ref().unwrap().ticks;
    assert_eq!(cats[0].category.as_deref(), Some("L0"));
    for (key, rec) in [&ra, &rb].iter().enumerate() {
        let amp = rec.level_write_amp.as_ref().unwrap();
        let mine: Vec<_> = bars.bars.iter().filter(|b| b.key == key).collect();
        assert_eq!(mine.len(), cats.len());
        for (bar, want) in mine.iter().zip(amp) {
            assert_eq!(bar.value, *want);
            assert!(
                (bar.drawn - want).abs() < 0.02 * bars.y_axis.as_ref().unwrap().max_tick().unwrap()
            );
        }
    }
}

#[test]
fn compare_takes_more_sides_for_the_plot_and_one_table_per_side() {
    let d = tempfile::tempdir().unwrap();
    let mk = |name: &str, ops: f64| {
        let p = d.path().join(name);
        let r = BenchRecord {
            benchmark: "fillseq".into(),
            engine: "memory".into(),
            ops_per_sec: ops,
            ..BenchRecord::default()
        };
        r.append_json(&p).unwrap();
        p.display().to_string()
    };
    let (a, b, c) = (mk("a.json", 100.0), mk("b.json", 200.0), mk("c.json", 50.0));
    let out = d.path().join("three.svg").display().to_string();
    let text =
        compare_cmd::run(&[a.as_str(), b.as_str(), c.as_str(), &format!("--plot={out}")]).unwrap();
    assert_eq!(text.matches("ratios are B/A").count(), 2, "{text}");
    let p = parse(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(p.panels.len(), 2);
    assert_eq!(p.panels[0].lines.len(), 3);
    let err = compare_cmd::run(&[a.as_str()]).unwrap_err();
    assert!(err.0.contains("usage"), "{err}");
}
