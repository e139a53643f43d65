//! Per-thread measurement (db_bench's `Stats`): op counts, bytes, latency
//! histograms per op type, progress and interval lines, and the merged
//! result line.
//!
//! A `Stats` is owned by its bench thread; the only shared part is
//! `LiveCounters` (atomics read by the reporter thread). Latency samples are
//! the time from the end of the previous op (or, in open-loop mode, from the
//! op's intended start) to the end of this one, in whole microseconds.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::clock::{now_micros, time_string, wall_micros};
use crate::histogram::{AtomicHistogram, Histogram};

/// db_bench's operation types (histogram titles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpType {
    /// Get / MultiGet / iteration step.
    Read = 0,
    /// Put / batch.
    Write = 1,
    /// Delete.
    Delete = 2,
    /// Seek (+ nexts).
    Seek = 3,
    /// Merge.
    Merge = 4,
    /// Read-modify-write.
    Update = 5,
    /// Anything else.
    Others = 6,
}

const OP_TYPES: usize = 7;

impl OpType {
    /// The word db_bench prints in `Microseconds per <word>:`.
    pub fn name(self) -> &'static str {
        match self {
            OpType::Read => "read",
            OpType::Write => "write",
            OpType::Delete => "delete",
            OpType::Seek => "seek",
            OpType::Merge => "merge",
            OpType::Update => "update",
            OpType::Others => "op",
        }
    }

    fn all() -> [OpType; OP_TYPES] {
        [
            OpType::Read,
            OpType::Write,
            OpType::Delete,
            OpType::Seek,
            OpType::Merge,
            OpType::Update,
            OpType::Others,
        ]
    }
}

/// What the stats print while running (from the flags).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportCfg {
    /// `--histogram`.
    pub histogram: bool,
    /// `--progress_reports`.
    pub progress: bool,
    /// `--stats_interval` (ops).
    pub stats_interval: u64,
    /// `--stats_interval_seconds`.
    pub stats_interval_seconds: u64,
    /// `--slow_usecs`.
    pub slow_usecs: u64,
    /// `--latency_sla_us` (0 = none).
    pub sla_us: u64,
}

/// Counters of one thread readable by the reporter while it runs.
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// Ops finished so far.
    pub ops: AtomicU64,
    /// Latency buckets so far.
    pub hist: AtomicHistogram,
    /// When the thread's clock last started (`now_micros`, at least 1;
    /// 0 = never): the reporter's intervals begin at the first start.
    pub started: AtomicU64,
    /// When the thread's clock stopped (`now_micros`, at least 1; 0 = not
    /// since the last start): the reporter's last interval ends at the last
    /// stop, not at the later moment the reporter itself is stopped.
    pub stopped: AtomicU64,
}

/// One thread's measurements.
#[derive(Debug)]
pub struct Stats {
    id: usize,
    start: u64,
    finish: u64,
    seconds: f64,
    done: u64,
    bytes: u64,
    within_sla: u64,
    last_op_finish: u64,
    next_report: u64,
    last_report_done: u64,
    last_report_finish: u64,
    hist: Vec<Option<Histogram>>,
    message: String,
    exclude_from_merge: bool,
    cfg: ReportCfg,
    live: Arc<LiveCounters>,
}

impl Stats {
    /// Stats of thread `id`; the clock starts now.
    pub fn new(id: usize, cfg: ReportCfg, live: Arc<LiveCounters>) -> Stats {
        let mut s = Stats {
            id,
            start: 0,
            finish: 0,
            seconds: 0.0,
            done: 0,
            bytes: 0,
            within_sla: 0,
            last_op_finish: 0,
            next_report: 0,
            last_report_done: 0,
            last_report_finish: 0,
            hist: (0..OP_TYPES).map(|_| None).collect(),
            message: String::new(),
            exclude_from_merge: false,
            cfg,
            live,
        };
        s.start();
        s
    }

    /// Resets and starts the clock (db_bench's `Start`).
    pub fn start(&mut self) {
        let now = now_micros();
        self.next_report = if self.cfg.stats_interval > 0 {
            self.cfg.stats_interval
        } else {
            100
        };
        if self.cfg.stats_interval_seconds > 0 {
            self.next_report = 1000;
        }
        self.last_op_finish = now;
        self.last_report_finish = now;
        self.last_report_done = 0;
        self.done = 0;
        self.bytes = 0;
        self.within_sla = 0;
        self.seconds = 0.0;
        self.start = now;
        self.finish = now;
        self.message.clear();
        self.hist.iter_mut().for_each(|h| *h = None);
        self.live.stopped.store(0, Ordering::Relaxed);
        self.live.started.store(now.max(1), Ordering::Release);
    }

    /// Stops the clock.
    pub fn stop(&mut self) {
        self.finish = now_micros();
        self.seconds = (self.finish - self.start) as f64 * 1e-6;
        self.live
            .stopped
            .store(self.finish.max(1), Ordering::Release);
    }

    /// Do not merge this thread into the result (the *whilewriting writer).
    pub fn set_exclude_from_merge(&mut self) {
        self.exclude_from_merge = true;
    }

    /// Appends a message (space-separated).
    pub fn add_message(&mut self, msg: &str) {
        if !self.message.is_empty() && !msg.is_empty() {
            self.message.push(' ');
        }
        self.message.push_str(msg);
    }

    /// Counts bytes for MB/s.
    pub fn add_bytes(&mut self, n: u64) {
        self.bytes += n;
    }

    /// Restarts the latency clock (after a rate-limiter sleep).
    pub fn reset_last_op_time(&mut self) {
        self.last_op_finish = now_micros();
    }

    /// Open loop: the next sample is measured from `intended` (µs, same
    /// clock as `now_micros`).
    pub fn set_op_start(&mut self, intended: u64) {
        self.last_op_finish = intended;
    }

    /// Ops done so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Records `n` finished ops of type `op` (one latency sample).
    pub fn finished_ops(&mut self, n: u64, op: OpType) {
        let now = now_micros();
        let micros = now.saturating_sub(self.last_op_finish);
        self.hist[op as usize]
            .get_or_insert_with(Histogram::new)
            .add(micros);
        self.live.hist.add(micros);
        if self.cfg.sla_us > 0 && micros <= self.cfg.sla_us {
            self.within_sla += n;
        }
        if self.cfg.histogram && micros >= self.cfg.slow_usecs && self.cfg.stats_interval == 0 {
            eprint!("long op: {micros} micros{:30}\r", "");
        }
        self.last_op_finish = now;
        self.done += n;
        self.live.ops.fetch_add(n, Ordering::Relaxed);
        if self.done >= self.next_report && self.cfg.progress {
            self.progress(now);
        }
    }

    fn progress(&mut self, now: u64) {
        if self.cfg.stats_interval == 0 && self.cfg.stats_interval_seconds == 0 {
            let r = self.next_report;
            self.next_report += match r {
                _ if r < 1000 => 100,
                _ if r < 5000 => 500,
                _ if r < 10000 => 1000,
                _ if r < 50000 => 5000,
                _ if r < 100000 => 10000,
                _ if r < 500000 => 50000,
                _ => 100000,
            };
            eprint!("... finished {} ops{:30}\r", self.done, "");
            return;
        }
        let step = if self.cfg.stats_interval_seconds > 0 {
            1000
        } else {
            self.cfg.stats_interval
        };
        let since_last = now - self.last_report_finish;
        if self.cfg.stats_interval_seconds > 0
            && since_last < self.cfg.stats_interval_seconds * 1_000_000
        {
            self.next_report += step;
            return;
        }
        eprintln!("{}", self.interval_line(now, wall_micros() / 1_000_000));
        self.next_report += step;
        self.last_report_finish = now;
        self.last_report_done = self.done;
    }

    /// db_bench's interval line for the state at `now`.
    pub fn interval_line(&self, now: u64, unix_secs: u64) -> String {
        let since_last = (now - self.last_report_finish).max(1) as f64 / 1e6;
        let total = (now - self.start).max(1) as f64 / 1e6;
        format!(
            "{}  ... thread {}: ({},{}) ops and ({:.1},{:.1}) ops/second in ({:.6},{:.6}) seconds",
            time_string(unix_secs as i64),
            self.id,
            self.done - self.last_report_done,
            self.done,
            (self.done - self.last_report_done) as f64 / since_last,
            self.done as f64 / total,
            since_last,
            total
        )
    }
}

/// The merged stats of one benchmark.
#[derive(Debug, Clone)]
pub struct Merged {
    /// Earliest thread start (µs).
    pub start: u64,
    /// When the merge was built (µs).
    pub finish: u64,
    /// Σ per-thread elapsed seconds.
    pub seconds: f64,
    /// Ops (at least 1).
    pub done: u64,
    /// Bytes for MB/s.
    pub bytes: u64,
    /// Ops within the latency SLA (open loop).
    pub within_sla: u64,
    /// The first non-empty message.
    pub message: String,
    /// Histograms by op type (only the used ones).
    pub hists: Vec<(OpType, Histogram)>,
    /// All ops' latencies merged.
    pub all: Histogram,
}

impl Merged {
    /// Merges the non-excluded threads (db_bench's `Merge` + `Report`
    /// bookkeeping; elapsed runs until now).
    pub fn merge<'a>(stats: impl IntoIterator<Item = &'a Stats>) -> Merged {
        let now = now_micros();
        let mut m = Merged {
            start: now,
            finish: now,
            seconds: 0.0,
            done: 0,
            bytes: 0,
            within_sla: 0,
            message: String::new(),
            hists: Vec::new(),
            all: Histogram::new(),
        };
        let mut hists: Vec<Option<Histogram>> = (0..OP_TYPES).map(|_| None).collect();
        for s in stats {
            if s.exclude_from_merge {
                continue;
            }
            m.start = m.start.min(s.start);
            m.seconds += s.seconds;
            m.done += s.done;
            m.bytes += s.bytes;
            m.within_sla += s.within_sla;
            if m.message.is_empty() {
                m.message = s.message.clone();
            }
            for (i, h) in s.hist.iter().enumerate() {
                if let Some(h) = h {
                    hists[i].get_or_insert_with(Histogram::new).merge(h);
                    m.all.merge(h);
                }
            }
        }
        m.done = m.done.max(1);
        for (op, h) in OpType::all().into_iter().zip(hists) {
            if let Some(h) = h {
                m.hists.push((op, h));
            }
        }
        m
    }

    /// Wall-clock seconds of the benchmark.
    pub fn elapsed_secs(&self) -> f64 {
        (self.finish - self.start).max(1) as f64 * 1e-6
    }

    /// Throughput.
    pub fn ops_per_sec(&self) -> f64 {
        self.done as f64 / self.elapsed_secs()
    }

    /// db_bench's micros/op: Σ per-thread seconds / ops.
    pub fn micros_per_op(&self) -> f64 {
        self.seconds * 1e6 / self.done as f64
    }

    /// MB/s (MiB) over elapsed time, if bytes were counted.
    pub fn mb_per_sec(&self) -> Option<f64> {
        (self.bytes > 0).then(|| self.bytes as f64 / 1_048_576.0 / self.elapsed_secs())
    }

    /// The result line (without the trailing newline db_bench prints; the
    /// message may itself end in a newline).
    pub fn report_line(&self, name: &str) -> String {
        let mut extra = String::new();
        if let Some(mb) = self.mb_per_sec() {
            extra = format!("{mb:6.1} MB/s");
        }
        if !self.message.is_empty() {
            if !extra.is_empty() {
                extra.push(' ');
            }
            extra.push_str(&self.message);
        }
        format!(
            "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
            name,
            self.micros_per_op(),
            self.ops_per_sec() as i64,
            self.elapsed_secs(),
            self.done,
            if extra.is_empty() { "" } else { " " },
            extra
        )
    }

    /// The `--histogram` block: one `Microseconds per <op>:` section each.
    pub fn histogram_text(&self) -> String {
        let mut s = String::new();
        for (op, h) in &self.hists {
            s.push_str(&format!(
                "Microseconds per {}:\n{}\n",
                op.name(),
                h.to_db_bench_string()
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(done: u64, bytes: u64, start: u64, secs: f64, msg: &str) -> Stats {
        let mut s = Stats::new(0, ReportCfg::default(), Arc::default());
        s.done = done;
        s.bytes = bytes;
        s.start = start;
        s.seconds = secs;
        s.message = msg.to_string();
        s
    }

    fn merged(done: u64, bytes: u64, secs: f64, msg: &str) -> Merged {
        let s = fake(done, bytes, 0, secs, msg);
        let mut m = Merged::merge([&s]);
        m.start = 0;
        m.finish = (secs * 1e6) as u64;
        m
    }

    #[test]
    fn result_line_format_matches_db_bench() {
        let m = merged(1_000_000, 116_000_000, 5.973, "");
        assert_eq!(
            m.report_line("fillrandom"),
            "fillrandom   :       5.973 micros/op 167420 ops/sec 5.973 seconds 1000000 operations;   18.5 MB/s"
        );
        let m = merged(1000, 0, 1.0, "");
        assert_eq!(
            m.report_line("deleterandom"),
            "deleterandom :    1000.000 micros/op 1000 ops/sec 1.000 seconds 1000 operations;"
        );
        let m = merged(10, 0, 1.0, "(3 of 10 found)\n");
        assert!(m
            .report_line("readrandomwriterandom")
            .starts_with("readrandomwriterandom :"));
        assert!(m
            .report_line("seekrandom")
            .ends_with("operations; (3 of 10 found)\n"));
    }

    /// The parsers RocksDB's scripts use: benchmark.sh greps `^<name>` and
    /// takes awk fields $3 (micros/op), $5 (ops/sec), $8 == "seconds" with
    /// NF >= 10 (format "V2") and $11 (MB/s); other tools use the regex
    /// `(\S+)\s+:\s+(\S+) micros/op (\d+) ops/sec`.
    #[test]
    fn result_line_parses_like_rocksdb_scripts() {
        let m = merged(507_998, 18_140_000, 3.037, "(258999 of 258999 found)\n");
        let line = m.report_line("readwhilewriting");
        let first = line.lines().next().unwrap();
        assert!(first.starts_with("readwhilewriting"));
        let f: Vec<&str> = first.split_whitespace().collect();
        assert!(f.len() >= 10);
        assert_eq!(f[1], ":");
        assert!(f[2].parse::<f64>().is_ok());
        assert_eq!(f[3], "micros/op");
        assert_eq!(f[4].parse::<u64>().unwrap(), (507_998.0 / 3.037) as u64);
        assert_eq!(f[5], "ops/sec");
        assert_eq!(f[7], "seconds");
        assert_eq!(f[8], "507998");
        assert_eq!(f[9], "operations;");
        assert_eq!(f[10].parse::<f64>().unwrap(), 5.7);
        assert_eq!(f[11], "MB/s");
        // The regex, by hand: name, spaces, ':', spaces, number, " micros/op ",
        // digits, " ops/sec".
        let (name, rest) = first.split_once(" : ").unwrap();
        assert_eq!(name.trim_end(), "readwhilewriting");
        let rest = rest.trim_start();
        let (num, rest) = rest.split_once(" micros/op ").unwrap();
        assert!(!num.contains(char::is_whitespace));
        let (ops, _) = rest.split_once(" ops/sec").unwrap();
        assert!(ops.chars().all(|c| c.is_ascii_digit()));
    }

    #[test]
    fn merge_excludes_writer_and_takes_first_message() {
        let a = fake(10, 100, 5, 1.0, "");
        let b = fake(20, 200, 3, 2.0, "(1 of 20 found)");
        let mut w = fake(1000, 9999, 1, 3.0, "writer");
        w.set_exclude_from_merge();
        let m = Merged::merge([&w, &a, &b]);
        assert_eq!(m.done, 30);
        assert_eq!(m.bytes, 300);
        assert_eq!(m.start, 3);
        assert_eq!(m.seconds, 3.0);
        assert_eq!(m.message, "(1 of 20 found)");
        let empty = Merged::merge(std::iter::empty::<&Stats>());
        assert_eq!(empty.done, 1); // db_bench pretends one op
    }

    #[test]
    fn samples_land_in_their_op_histogram() {
        let live = Arc::new(LiveCounters::default());
        let mut s = Stats::new(
            0,
            ReportCfg {
                sla_us: 1_000_000,
                ..ReportCfg::default()
            },
            live.clone(),
        );
        s.finished_ops(1, OpType::Read);
        s.finished_ops(10, OpType::Write);
        s.finished_ops(1, OpType::Read);
        s.stop();
        assert_eq!(live.ops.load(Ordering::Relaxed), 12);
        let m = Merged::merge([&s]);
        assert_eq!(m.hists.len(), 2);
        assert_eq!(m.hists[0].0, OpType::Read);
        assert_eq!(m.hists[0].1.count(), 2);
        assert_eq!(m.hists[1].1.count(), 1);
        assert_eq!(m.within_sla, 12);
        let text = m.histogram_text();
        assert!(text.starts_with("Microseconds per read:\nCount: 2 Average: "));
        assert!(text.contains("Microseconds per write:\nCount: 1 "));
    }

    /// The reporter times a run from the first clock start to the last stop:
    /// `start` publishes the start and clears the stop, `stop` publishes it.
    #[test]
    fn start_and_stop_are_published_to_the_reporter() {
        let live = Arc::new(LiveCounters::default());
        let mut s = Stats::new(0, ReportCfg::default(), live.clone());
        s.stop();
        assert_eq!(live.stopped.load(Ordering::Relaxed), s.finish.max(1));
        s.start();
        assert_eq!(live.started.load(Ordering::Relaxed), s.start.max(1));
        assert_eq!(live.stopped.load(Ordering::Relaxed), 0);
        s.stop();
        assert!(live.stopped.load(Ordering::Relaxed) >= live.started.load(Ordering::Relaxed));
    }

    #[test]
    fn interval_line_format() {
        let mut s = Stats::new(3, ReportCfg::default(), Arc::default());
        s.done = 2000;
        s.last_report_done = 1000;
        let now = s.start + 2_000_000;
        s.last_report_finish = s.start + 1_000_000;
        let line = s.interval_line(now, 0);
        let tail = line.split_once("  ").unwrap().1;
        assert_eq!(
            tail,
            "... thread 3: (1000,2000) ops and (1000.0,1000.0) ops/second in (1.000000,2.000000) seconds"
        );
    }
}
