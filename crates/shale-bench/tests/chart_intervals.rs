//! `--chart` on sub-second benchmarks, end to end on the memory engine
//! (issue 36, "The charts"): every series has many points, not one dot;
//! the intervals tile the benchmark from its first thread's start to its
//! last op, so the last, partial interval ends at the last op (not after
//! the runner's closing reads, which diluted its rate into a false drop)
//! and its rate is over its real length; the CSV beside the SVG has the
//! same intervals.

mod common;

use shale_chart::verify::parse;

#[test]
fn sub_second_benchmarks_chart_many_points_and_no_partial_jump() {
    let d = tempfile::tempdir().unwrap();
    let chart = d.path().join("c.svg");
    let args: Vec<String> = [
        "--engine=memory".to_string(),
        format!("--db={}", d.path().join("db").display()),
        "--benchmarks=fillseq,readrandom".to_string(),
        "--num=150000".to_string(),
        "--threads=2".to_string(),
        "--progress_reports=0".to_string(),
        format!("--chart={}", chart.display()),
    ]
    .into();
    let (recs, _) = common::run_ok(&args);
    assert_eq!(recs.len(), 2);
    let svg = std::fs::read_to_string(&chart).unwrap();
    let p = parse(&svg).unwrap();
    assert!(p.texts_outside().is_empty(), "{:?}", p.texts_outside());
    assert!(
        p.notes.iter().any(|n| n.starts_with("one point per")),
        "{:?}",
        p.notes
    );
    let csv = std::fs::read_to_string(chart.with_extension("csv")).unwrap();
    for r in &recs {
        // Sub-second when the machine is not loaded (0.1-0.3 s each on
        // 2 cores); the checks below hold at any length.
        let iv = &r.intervals;
        // Before: one interval of the whole run (none under 0.1 s).
        assert!(
            iv.len() >= 4,
            "{}: {} intervals in {} s",
            r.benchmark,
            iv.len(),
            r.elapsed_secs
        );
        for suffix in ["throughput", "p99 latency"] {
            let panel = p.panel(&format!("{}: {suffix}", r.benchmark)).unwrap();
            assert_eq!(panel.lines.len(), 1);
            assert!(panel.lines[0].points.len() > 1, "{}", panel.title);
        }
        let rows = csv
            .lines()
            .filter(|l| l.starts_with(&format!("{},", r.benchmark)))
            .count();
        assert_eq!(rows, iv.len());
        // Every op in some interval; each rate over its interval's length;
        // the intervals tile the run without gaps from time 0.
        assert_eq!(iv.iter().map(|i| i.ops).sum::<u64>(), r.ops_all_threads);
        let mut t = 0.0;
        for i in iv {
            assert!(i.len_secs > 0.0, "{i:?}");
            t += i.len_secs;
            assert!((i.secs - t).abs() < 1e-5, "{i:?} after {t}");
            assert!(
                (i.ops_per_sec - i.ops as f64 / i.len_secs).abs() <= 1e-6 * i.ops_per_sec + 1e-9,
                "{i:?}"
            );
        }
        // The last interval ends at the last op: within the benchmark's
        // elapsed time (before, at the reporter's stop, after the runner's
        // closing reads).
        let last = iv.last().unwrap();
        assert!(
            last.secs <= r.elapsed_secs + 1e-6,
            "{}: last interval ends at {} s, the benchmark took {} s",
            r.benchmark,
            last.secs,
            r.elapsed_secs
        );
        // Not a sliver: at least half the sampler's width, so at least
        // half the finest one (readings on a loaded machine come late, so the
        // lengths need not be the nominal widths).
        assert!(last.len_secs >= 0.5 / 128.0, "{last:?}");
    }
}
