//! The interval reporter thread (db_bench's `ReporterAgent`, extended):
//! it sums the live op counters of all threads (including a *whilewriting
//! writer), writes `secs_elapsed,interval_qps` to `--report_file` every
//! reporting interval when asked (db_bench's format and cadence), and
//! records intervals of throughput and p99 (from the atomic bucket counts)
//! for the chart and the JSON.
//!
//! The recorded intervals adapt to the benchmark's length (`Sampler`): they
//! start at 1/128 of the reporting interval (7.8 ms for the default 1 s),
//! and whenever 128 have been recorded, pairs merge and the width doubles,
//! up to the reporting interval itself. A sub-second benchmark thus has tens
//! of points, a long one between 64 and 128 until its intervals reach the
//! reporting interval (after about a minute by default), then one per
//! reporting interval as before. Every rate is the interval's ops over its
//! real length, plotted at its real end; the first interval begins when the
//! first bench thread starts its clock and the last ends when the last one
//! stops it (not when the reporter is stopped, after the run's closing
//! reads), and a last interval shorter than half the current width is
//! merged into the one before (see `Sampler::finish`).
//!
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
    /// Ops per second over the interval (`ops / len_secs`).
    pub ops_per_sec: f64,
    /// P99 latency of the interval's samples (µs).
    pub p99_us: f64,
    /// The interval's real length in seconds (0 in records written before
    /// intervals had varying lengths, when every one was about 1 s).
    #[serde(default)]
    pub len_secs: f64,
}

/// The finest recorded interval is the reporting interval divided by this.
pub const FINEST_DIVISOR: u64 = 128;

/// When this many intervals are held, pairs merge and the width doubles
/// (even, so that pairs line up).
pub const MAX_INTERVALS: usize = 128;

/// A cumulative reading of the live counters.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    /// When (`now_micros`).
    pub t: u64,
    /// Ops finished so far.
    pub ops: u64,
    /// Latency bucket counts so far.
    pub buckets: Vec<u64>,
}

/// The recorded intervals while a benchmark runs: the marks (cumulative
/// readings) that bound them, coarsened by dropping every other mark.
/// Pure: the reporter thread feeds it readings; tests feed it by hand.
#[derive(Debug)]
pub struct Sampler {
    /// When sampling began (µs).
    start: u64,
    /// The widest interval (µs): the reporting interval.
    cap: u64,
    /// The nominal time of the last mark, in finest widths since `start`.
    nominal: u64,
    /// The current width in finest widths (1, 2, 4, .. `FINEST_DIVISOR`).
    step: u64,
    /// marks[0] begins the oldest interval not yet in `done`.
    marks: Vec<Mark>,
    /// Intervals final already (only once the width is `cap`).
    done: Vec<Interval>,
    /// The time 0 of the output, once fixed.
    origin: Option<u64>,
}

impl Sampler {
    /// A sampler starting at `start` (µs) with zero counts in `buckets`
    /// buckets, for a reporting interval of `cap` µs.
    pub fn new(start: u64, cap: u64, buckets: usize) -> Sampler {
        Sampler {
            start,
            cap: cap.max(FINEST_DIVISOR),
            nominal: 0,
            step: 1,
            marks: vec![Mark {
                t: start,
                ops: 0,
                buckets: vec![0; buckets],
            }],
            done: Vec::new(),
            origin: None,
        }
    }

    /// The time of the boundary `k` finest widths after the start (exact at
    /// every multiple of the reporting interval).
    fn at(&self, k: u64) -> u64 {
        self.start + self.cap * k / FINEST_DIVISOR
    }

    /// The current nominal interval width (µs).
    pub fn width(&self) -> u64 {
        self.cap * self.step / FINEST_DIVISOR
    }

    /// When the next reading is due (µs).
    pub fn next_due(&self) -> u64 {
        self.at(self.nominal + self.step)
    }

    /// Records a reading taken at `m.t` (at or after `next_due`, later than
    /// the last); `origin` is the benchmark's start as known now.
    pub fn record(&mut self, m: Mark, origin: u64) {
        // A late reading (the reporter was not scheduled) skips the boundaries
        // it missed instead of following them with intervals of a few µs.
        self.nominal += self.step;
        while self.at(self.nominal + self.step) <= m.t {
            self.nominal += self.step;
        }
        self.marks.push(m);
        if self.marks.len() > MAX_INTERVALS && self.step < FINEST_DIVISOR {
            let mut i = 0;
            self.marks.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.step *= 2;
        }
        if self.step == FINEST_DIVISOR && self.marks.len() > 4 {
            // At the widest: finish all but the last two intervals' marks so
            // a long run holds few bucket vectors (the last two stay for
            // `finish`, which may merge the last interval into the one
            // before).
            self.settle(origin);
            let keep = self.marks.len() - 2;
            let origin = self.origin.unwrap_or(origin);
            let out = intervals(&self.marks[..=keep], origin);
            self.done.extend(out);
            self.marks.drain(..keep);
        }
    }

    /// Fixes time 0 at `origin` (once): the first interval begins there, not
    /// when the reporter started (before the bench threads were spawned);
    /// readings before it held no ops and go. A first interval shorter than
    /// half a width is then merged into the next.
    fn settle(&mut self, origin: u64) {
        if self.origin.is_some() {
            return;
        }
        let first = &mut self.marks[0];
        first.t = first.t.max(origin);
        let t0 = first.t;
        self.origin = Some(t0);
        let mut i = 0;
        self.marks.retain(|m| {
            i += 1;
            i == 1 || m.t > t0
        });
        if self.marks.len() >= 3 && self.marks[1].t - t0 < self.width() / 2 {
            self.marks.remove(1);
        }
    }

    /// The intervals of the whole run, which began at `origin` and whose
    /// last op finished at `end.t` with the totals in `end`.
    ///
    /// Readings taken after `end` (while the runner read its closing
    /// counters, with no op running) are dropped, so no dead time dilutes
    /// the last rate. The last interval, from the last reading to `end`, is
    /// partial: it is kept, its rate over its real length and its point at
    /// its real end, unless it is shorter than half the current width; then
    /// it is merged into the interval before (whose end moves to `end`), as
    /// a rate over a few ms would be mostly noise. Either way no op is lost:
    /// the intervals' ops sum to the total.
    pub fn finish(mut self, origin: u64, end: Mark) -> Vec<Interval> {
        let last_done = self.origin.is_some();
        if !last_done {
            // Settle without the first-interval merge: that waits until the
            // end is known, below.
            let first = &mut self.marks[0];
            first.t = first.t.max(origin);
        }
        let t0 = self.marks[0].t;
        let mut i = 0;
        self.marks.retain(|m| {
            i += 1;
            i == 1 || (m.t > t0 && m.t < end.t)
        });
        if end.t > t0 {
            self.marks.push(end);
        }
        let n = self.marks.len();
        if n >= 3 && self.marks[n - 1].t - self.marks[n - 2].t < self.width() / 2 {
            self.marks.remove(n - 2);
        }
        if !last_done && self.marks.len() >= 3 && self.marks[1].t - t0 < self.width() / 2 {
            self.marks.remove(1);
        }
        let origin = self.origin.unwrap_or(t0);
        let mut out = self.done;
        out.extend(intervals(&self.marks, origin));
        out
    }
}

/// The intervals between consecutive `marks`, timed from `origin`.
fn intervals(marks: &[Mark], origin: u64) -> Vec<Interval> {
    marks
        .windows(2)
        .map(|w| {
            let (a, b) = (&w[0], &w[1]);
            let delta: Vec<u64> = b
                .buckets
                .iter()
                .zip(&a.buckets)
                .map(|(c, p)| c.saturating_sub(*p))
                .collect();
            let h = Histogram::from_buckets(&delta);
            let ops = b.ops.saturating_sub(a.ops);
            let len = b.t.saturating_sub(a.t).max(1) as f64 / 1e6;
            Interval {
                secs: b.t.saturating_sub(origin) as f64 / 1e6,
                ops,
                ops_per_sec: ops as f64 / len,
                p99_us: if h.count() > 0 {
                    h.percentile(99.0)
                } else {
                    0.0
                },
                len_secs: len,
            }
        })
        .collect()
}

/// A running reporter; `finish` stops it and returns the intervals.
pub struct Reporter {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Result<Vec<Interval>>>,
}

impl Reporter {
    /// Starts sampling `live`; writes the db_bench CSV to `csv` if given,
    /// one line every `interval_secs` (at least 1), which is also the widest
    /// recorded interval.
    pub fn start(live: Vec<Arc<LiveCounters>>, interval_secs: u64, csv: Option<File>) -> Reporter {
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        // Time 0 is taken here, before the caller starts its bench threads'
        // clocks, so that their starts are never before it.
        let start = now_micros();
        let handle = std::thread::spawn(move || run(live, start, interval_secs.max(1), csv, stop2));
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

/// The benchmark's start: the earliest clock start of a thread at or after
/// the reporter's `start` (earlier ones are from before the run's barrier),
/// else `start`.
fn origin(live: &[Arc<LiveCounters>], start: u64) -> u64 {
    live.iter()
        .map(|l| l.started.load(Ordering::Acquire))
        .filter(|&t| t >= start)
        .min()
        .unwrap_or(start)
}

/// When the last thread stopped its clock, if every thread has.
fn end_of_ops(live: &[Arc<LiveCounters>]) -> Option<u64> {
    let stops: Vec<u64> = live
        .iter()
        .map(|l| l.stopped.load(Ordering::Acquire))
        .collect();
    if stops.is_empty() || stops.contains(&0) {
        return None;
    }
    stops.into_iter().max()
}

fn run(
    live: Vec<Arc<LiveCounters>>,
    start: u64,
    secs: u64,
    mut csv: Option<File>,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Interval>> {
    if let Some(f) = &mut csv {
        writeln!(f, "secs_elapsed,interval_qps")?;
        f.flush()?;
    }
    let every = secs * 1_000_000;
    let mut cur = vec![0u64; bucket_limits().len()];
    let mut sampler = Sampler::new(start, every, cur.len());
    let (mut csv_ops, mut csv_t, mut csv_next) = (0, start, start + every);
    loop {
        // Once every thread has stopped its clock no op can follow: no more
        // readings, only the report file's lines, until `finish`.
        let mut due = match end_of_ops(&live) {
            Some(_) => u64::MAX,
            None => sampler.next_due(),
        };
        if csv.is_some() {
            due = due.min(csv_next);
        }
        while !stop.load(Ordering::Acquire) && now_micros() < due {
            std::thread::park_timeout(Duration::from_micros(
                due.saturating_sub(now_micros()).min(100_000),
            ));
        }
        let stopping = stop.load(Ordering::Acquire);
        let now = now_micros();
        let ops = snapshot(&live, &mut cur);
        if let Some(f) = &mut csv {
            // db_bench's report file: whole reporting intervals, and a last
            // line for a rest of at least 0.1 s.
            if now >= csv_next || (stopping && now - csv_t >= 100_000) {
                writeln!(
                    f,
                    "{},{}",
                    (now - start + 500_000) / 1_000_000,
                    ops - csv_ops
                )?;
                f.flush()?;
                csv_ops = ops;
                csv_t = now;
                csv_next += every;
            }
        }
        if stopping {
            let o = origin(&live, start);
            let end = end_of_ops(&live).map_or(now, |e| e.min(now));
            return Ok(sampler.finish(
                o,
                Mark {
                    t: end,
                    ops,
                    buckets: cur,
                },
            ));
        }
        if now >= sampler.next_due() && end_of_ops(&live).is_none() {
            let o = origin(&live, start);
            sampler.record(
                Mark {
                    t: now,
                    ops,
                    buckets: cur.clone(),
                },
                o,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{OpType, ReportCfg, Stats};

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
        assert!(iv.len() > 1, "{iv:?}");
        assert_eq!(iv.iter().map(|i| i.ops).sum::<u64>(), 500);
        let first = iv.iter().find(|i| i.ops > 0).unwrap();
        assert!(first.p99_us > 6.0 && first.p99_us <= 10.0, "{first:?}");
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("secs_elapsed,interval_qps"));
        assert_eq!(lines.next(), Some("1,500"));
    }

    const MS: u64 = 1000;

    /// A reading at `t` µs of a steady 1,000,000 ops/s since 0 (one op per
    /// µs), every op's latency 10 µs.
    fn steady(t: u64) -> Mark {
        let mut buckets = vec![0; bucket_limits().len()];
        buckets[crate::histogram::bucket_index(10)] = t;
        Mark { t, ops: t, buckets }
    }

    /// Feeds a steady run from 0 to `end_ms` to a 1 s sampler, readings on
    /// time, and returns its intervals.
    fn steady_run(end_ms: f64) -> Vec<Interval> {
        let mut s = Sampler::new(0, 1_000_000, bucket_limits().len());
        let end = (end_ms * 1000.0) as u64;
        while s.next_due() < end {
            s.record(steady(s.next_due()), 0);
        }
        s.finish(0, steady(end))
    }

    fn assert_steady(iv: &[Interval]) {
        for i in iv {
            assert!((i.ops_per_sec - 1e6).abs() < 1e-3, "{i:?}");
            assert!((i.p99_us - 10.0).abs() <= 1.0, "{i:?}");
            assert!(i.len_secs > 0.0, "{i:?}");
        }
    }

    /// The chart's defect: a sub-second benchmark had one interval (one dot
    /// per panel; none under 0.1 s). Now it has tens.
    #[test]
    fn sub_second_benchmark_has_many_intervals() {
        for (end_ms, min) in [(20.0, 2), (100.0, 10), (300.0, 30), (900.0, 100)] {
            let iv = steady_run(end_ms);
            assert!(iv.len() >= min, "{end_ms} ms: {} intervals", iv.len());
            assert_eq!(
                iv.iter().map(|i| i.ops).sum::<u64>(),
                (end_ms * 1000.0) as u64
            );
            assert_steady(&iv);
        }
    }

    /// Long runs coarsen: 64..=128 intervals while the width is below the
    /// reporting interval, then one per reporting interval.
    #[test]
    fn long_benchmarks_coarsen_up_to_the_reporting_interval() {
        for secs in [1.5, 3.0, 10.0, 40.0] {
            let iv = steady_run(secs * 1000.0);
            assert!((64..=129).contains(&iv.len()), "{secs} s: {}", iv.len());
            let total: u64 = iv.iter().map(|i| i.ops).sum();
            assert_eq!(total, (secs * 1e6) as u64);
            assert_steady(&iv);
        }
        let iv = steady_run(200_000.0);
        assert_eq!(iv.len(), 200);
        assert!(iv.iter().all(|i| (i.len_secs - 1.0).abs() < 1e-9));
        assert_eq!(iv.iter().map(|i| i.ops).sum::<u64>(), 200_000_000);
        assert_steady(&iv);
    }

    /// The chart's other defect: the last, partial interval drew a false
    /// jump. Its rate is over its real length and its point at its real end,
    /// or, when it is under half a width, it is merged into the one before.
    #[test]
    fn final_partial_interval_has_no_false_jump() {
        // At 7.8125 ms per interval the last reading before 0.3 s is at
        // 296.875 ms: the 3.125 ms rest is merged; at 0.301 s, 4.125 ms is
        // kept. 1.2345 s runs at 15.625 ms.
        for end_ms in [300.0, 301.0, 303.0, 305.0, 307.0, 1234.5] {
            let iv = steady_run(end_ms);
            let last = iv.last().unwrap();
            assert!((last.secs - end_ms / 1000.0).abs() < 1e-9, "{last:?}");
            let w = iv[0].len_secs;
            assert!(
                last.len_secs >= w / 2.0 && last.len_secs < 1.5 * w + 1e-9,
                "{last:?} {w}"
            );
            assert_steady(&iv);
        }
    }

    /// Readings taken after the last op (the runner's closing reads) do not
    /// dilute the last rate, and the run is timed from the first thread's
    /// start, not the reporter's.
    #[test]
    fn dead_time_before_and_after_the_ops_is_not_an_interval() {
        let mut s = Sampler::new(0, 1_000_000, bucket_limits().len());
        // Ops from 20 ms to 120 ms, one per µs.
        let shifted = |t: u64| {
            let mut m = steady(t.clamp(20 * MS, 120 * MS) - 20 * MS);
            m.t = t;
            m
        };
        while s.next_due() < 200 * MS {
            s.record(shifted(s.next_due()), 0);
        }
        let iv = s.finish(20 * MS, shifted(120 * MS));
        assert_eq!(iv.iter().map(|i| i.ops).sum::<u64>(), 100_000);
        assert!((iv.last().unwrap().secs - 0.1).abs() < 1e-9, "{iv:?}");
        assert!(iv.len() >= 10, "{}", iv.len());
        assert_steady(&iv);
    }

    /// End to end through the thread, with real `Stats`: steady ops for
    /// 1.25 s, then 0.3 s of closing reads before `finish`. Before, the last
    /// 1 s interval counted those 0.3 s (a false drop to under half the
    /// rate) and ended at the reporter's stop.
    #[test]
    fn reporter_ends_the_last_interval_at_the_last_op() {
        let live = Arc::new(LiveCounters::default());
        let mut stats = Stats::new(0, ReportCfg::default(), live.clone());
        let r = Reporter::start(vec![live.clone()], 1, None);
        stats.start();
        let t0 = now_micros();
        let mut done = 0;
        loop {
            let now = now_micros();
            let due = (now - t0) / 100; // 10,000 ops/s
            if due > done {
                stats.finished_ops(due - done, OpType::Write);
                done = due;
            }
            if now - t0 >= 1_250_000 {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        stats.stop();
        let stopped = live.stopped.load(Ordering::Relaxed);
        let started = live.started.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(300));
        let iv = r.finish().unwrap();
        assert!(iv.len() > 10, "{}", iv.len());
        assert_eq!(iv.iter().map(|i| i.ops).sum::<u64>(), done);
        let last = iv.last().unwrap();
        let run_secs = (stopped - started) as f64 / 1e6;
        assert!((last.secs - run_secs).abs() < 0.002, "{last:?} {run_secs}");
        let overall = done as f64 / run_secs;
        assert!(last.ops_per_sec > 0.75 * overall, "{last:?} vs {overall}");
    }
}
