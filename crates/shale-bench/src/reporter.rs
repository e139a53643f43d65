//! The interval reporter thread (db_bench's `ReporterAgent`, extended):
//! every interval it sums the live op counters of all threads (including a
//! *whilewriting writer), writes `secs_elapsed,interval_qps` to
//! `--report_file` when asked, and records the interval's throughput and
//! p99 (from the atomic bucket counts) for the chart and the JSON.
//! Shares only atomics with the bench threads.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::clock::now_micros;
use crate::error::Result;
use crate::histogram::{bucket_limits, Histogram};
use crate::stats::LiveCounters;

/// One interval's figures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Interval {
    /// Seconds since the benchmark started (end of the interval).
    pub secs: f64,
    /// Ops completed in the interval.
    pub ops: u64,
    /// Ops per second over the interval.
    pub ops_per_sec: f64,
    /// P99 latency of the interval's samples (µs).
    pub p99_us: f64,
}

/// A running reporter; `finish` stops it and returns the intervals.
pub struct Reporter {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Result<Vec<Interval>>>,
}

impl Reporter {
    /// Starts sampling `live` every `interval_secs`; writes the db_bench CSV
    /// to `csv` if given.
    pub fn start(live: Vec<Arc<LiveCounters>>, interval_secs: u64, csv: Option<File>) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let handle = std::thread::spawn(move || run(live, interval_secs.max(1), csv, stop2));
        Reporter { stop, handle }
    }

    /// Stops the thread and returns the intervals.
    pub fn finish(self) -> Result<Vec<Interval>> {
        self.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        match self.handle.join() {
            Ok(r) => r,
            Err(_) => Err(crate::error::Error::msg("reporter thread panicked")),
        }
    }
}

fn snapshot(live: &[Arc<LiveCounters>], buckets: &mut [u64]) -> u64 {
    buckets.iter_mut().for_each(|b| *b = 0);
    let mut ops = 0;
    for l in live {
        ops += l.ops.load(Ordering::Relaxed);
        l.hist.add_to(buckets);
    }
    ops
}

fn run(
    live: Vec<Arc<LiveCounters>>,
    secs: u64,
    mut csv: Option<File>,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Interval>> {
    if let Some(f) = &mut csv {
        writeln!(f, "secs_elapsed,interval_qps")?;
        f.flush()?;
    }
    let n = bucket_limits().len();
    let (mut prev, mut cur) = (vec![0u64; n], vec![0u64; n]);
    let start = now_micros();
    let mut last_ops = 0;
    let mut last_t = start;
    let mut out = Vec::new();
    let mut next = start + secs * 1_000_000;
    loop {
        while !stop.load(Ordering::Acquire) && now_micros() < next {
            std::thread::park_timeout(Duration::from_micros(
                next.saturating_sub(now_micros()).min(100_000),
            ));
        }
        let stopping = stop.load(Ordering::Acquire);
        let now = now_micros();
        if stopping && now - last_t < 100_000 {
            break; // too short to be an interval
        }
        let ops = snapshot(&live, &mut cur);
        let delta: Vec<u64> = cur
            .iter()
            .zip(&prev)
            .map(|(c, p)| c.saturating_sub(*p))
            .collect();
        let h = Histogram::from_buckets(&delta);
        let d_ops = ops.saturating_sub(last_ops);
        let dt = (now - last_t) as f64 / 1e6;
        out.push(Interval {
            secs: (now - start) as f64 / 1e6,
            ops: d_ops,
            ops_per_sec: d_ops as f64 / dt,
            p99_us: if h.count() > 0 {
                h.percentile(99.0)
            } else {
                0.0
            },
        });
        if let Some(f) = &mut csv {
            writeln!(f, "{},{}", (now - start + 500_000) / 1_000_000, d_ops)?;
            f.flush()?;
        }
        std::mem::swap(&mut prev, &mut cur);
        last_ops = ops;
        last_t = now;
        next += secs * 1_000_000;
        if stopping {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_csv_and_intervals() {
        let live = Arc::new(LiveCounters::default());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let r = Reporter::start(vec![live.clone()], 1, Some(File::create(&path).unwrap()));
        for _ in 0..500 {
            live.ops.fetch_add(1, Ordering::Relaxed);
            live.hist.add(10);
        }
        std::thread::sleep(Duration::from_millis(1100));
        let iv = r.finish().unwrap();
        assert!(!iv.is_empty());
        assert_eq!(iv[0].ops, 500);
        assert!(iv[0].p99_us > 6.0 && iv[0].p99_us <= 10.0, "{:?}", iv[0]);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("secs_elapsed,interval_qps"));
        assert_eq!(lines.next(), Some("1,500"));
    }
}
