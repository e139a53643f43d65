//! Open loop end to end (issue 10, defect 11): at half the engine's peak
//! rate, the median latency measured from the intended start must be
//! within a few µs of the closed-loop median. Before the pacer spun its
//! last stretch, `thread::sleep`'s ~65 µs oversleep put it at ~54 µs
//! against 3 µs.
//!
//! Wall-clock, so behind `--ignored` (the pacer's logic is tested on a
//! simulated clock in `src/pacer.rs`); it needs a quiet machine, since any
//! pause of the bench thread is queueing delay that open-loop latency
//! rightly includes. Figures: docs/PERFORMANCE.md, "Open-loop pacing".
//!
//!     cargo test --release -p shale-bench --test open_loop -- --ignored --nocapture

use shale_bench::report::BenchRecord;
use shale_bench::runner::{self, Out};
use shale_bench::Flags;

const ROUNDS: usize = 3;
/// "A few µs".
const SLACK_US: f64 = 3.0;

fn fillrandom(engine: &str, db: &str, arrival_rate: f64) -> BenchRecord {
    let args = [
        format!("--engine={engine}"),
        format!("--db={db}"),
        "--benchmarks=fillrandom".to_string(),
        "--num=200000".to_string(),
        "--progress_reports=0".to_string(),
        "--seed=1".to_string(),
        format!("--arrival_rate={arrival_rate}"),
    ];
    let flags = Flags::parse(&args).unwrap();
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let mut recs = runner::run(
        &flags,
        &mut Out {
            stdout: &mut o,
            stderr: &mut e,
        },
    )
    .unwrap();
    recs.remove(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Alternates closed and open loop `ROUNDS` times; compares the medians.
fn check(engine: &str, db: &str) {
    let (mut closed, mut open, mut late) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let c = fillrandom(engine, db, 0.0);
        let rate = (c.ops_per_sec / 2.0).round();
        let o = fillrandom(engine, db, rate);
        let l = o.pacer_lateness_us.clone().unwrap();
        eprintln!(
            "{engine} round {round}: closed {:.0} ops/s p50 {:.1} us; open at {rate:.0}/s \
             p50 {:.1} us p99 {:.1} us; pacer lateness p50 {:.1} p99 {:.1} max {} us",
            c.ops_per_sec,
            c.latency_us.p50,
            o.latency_us.p50,
            o.latency_us.p99,
            l.p50,
            l.p99,
            l.max
        );
        closed.push(c.latency_us.p50);
        open.push(o.latency_us.p50);
        late.push(l.p99);
    }
    let (c, o, l) = (median(closed), median(open), median(late));
    eprintln!("{engine}: median closed p50 {c:.1} us, open p50 {o:.1} us, pacer p99 {l:.1} us");
    assert!(l <= 1.0, "{engine}: pacer p99 lateness {l} us");
    assert!(
        o <= c + SLACK_US,
        "{engine}: open-loop p50 {o} us vs closed-loop {c} us (a pacer lateness max of \
         milliseconds means the bench thread was preempted: a busy machine; try `chrt -f 1`)"
    );
}

#[test]
#[ignore]
fn open_loop_p50_at_half_peak_matches_closed_loop_memory() {
    check("memory", "/memtest/open-loop");
}

#[cfg(feature = "shale-engine")]
#[test]
#[ignore]
fn open_loop_p50_at_half_peak_matches_closed_loop_shale() {
    let dir = tempfile::tempdir().unwrap();
    check("shale", &dir.path().join("db").display().to_string());
}
