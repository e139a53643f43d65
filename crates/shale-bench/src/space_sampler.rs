//! [`SpaceSampler`]: the peak size of the DB directory, sampled by a thread
//! of its own every `--space_sample_ms` milliseconds (engine-agnostic: it
//! sums the directory's file sizes as `du -sb` does, so Shale's and
//! RocksDB's peaks are measured alike).
//!
//! A compaction's outputs exist beside its inputs until it installs, so the
//! space a DB needs at its worst is a peak that lasts a moment; `du` once a
//! second misses most of it. Two peaks are kept: since the last
//! [`SpaceSampler::take_step_peak`] (one measured benchmark) and over the
//! whole run (meta steps such as `waitforcompaction` included).
//!
//! Invariant: each peak is at least every size sampled in its window; a
//! size changed and changed back between two samples is not seen (the
//! resolution is the interval). Stopped and joined on drop (at once,
//! whatever the interval).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::sysinfo;

/// See the module comment.
pub struct SpaceSampler {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    interval_ms: u64,
}

struct Shared {
    stop: AtomicBool,
    step_peak: AtomicU64,
    run_peak: AtomicU64,
    samples: AtomicU64,
}

impl Shared {
    fn sample(&self, dir: &Path) {
        self.record(sysinfo::dir_size(dir));
    }

    fn record(&self, size: u64) {
        self.step_peak.fetch_max(size, Ordering::Relaxed);
        self.run_peak.fetch_max(size, Ordering::Relaxed);
        self.samples.fetch_add(1, Ordering::Relaxed);
    }
}

impl SpaceSampler {
    /// Starts sampling `dir` every `interval_ms` (> 0) milliseconds.
    pub fn start(dir: &Path, interval_ms: u64) -> std::io::Result<SpaceSampler> {
        assert!(interval_ms > 0, "a sampling interval of 0 ms");
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            step_peak: AtomicU64::new(0),
            run_peak: AtomicU64::new(0),
            samples: AtomicU64::new(0),
        });
        let dir: PathBuf = dir.to_path_buf();
        shared.sample(&dir);
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("space-sampler".into())
            .spawn(move || {
                // Parked, not asleep: a drop wakes it at once.
                while !s.stop.load(Ordering::Acquire) {
                    std::thread::park_timeout(Duration::from_millis(interval_ms));
                    if !s.stop.load(Ordering::Acquire) {
                        s.sample(&dir);
                    }
                }
            })?;
        Ok(SpaceSampler {
            shared,
            thread: Some(thread),
            interval_ms,
        })
    }

    /// The sampling interval.
    pub fn interval_ms(&self) -> u64 {
        self.interval_ms
    }

    /// Starts a new step window at the directory's size now.
    pub fn begin_step(&self, dir: &Path) {
        self.shared.step_peak.store(0, Ordering::Relaxed);
        self.shared.sample(dir);
    }

    /// The largest size sampled since [`SpaceSampler::begin_step`],
    /// `end_size` included: the directory's size the caller measured at
    /// the step's end and reports beside the peak (a sample taken here
    /// instead could follow a compaction's deletions and fall below it).
    pub fn take_step_peak(&self, end_size: u64) -> u64 {
        self.shared.record(end_size);
        self.shared.step_peak.load(Ordering::Relaxed)
    }

    /// The largest size sampled since the start, the size now included,
    /// and how many samples were taken.
    pub fn run_peak(&self, dir: &Path) -> (u64, u64) {
        self.shared.sample(dir);
        (
            self.shared.run_peak.load(Ordering::Relaxed),
            self.shared.samples.load(Ordering::Relaxed),
        )
    }
}

impl Drop for SpaceSampler {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory holding one 1,000-byte file, sampled every
    /// `interval_ms`, its first step begun.
    fn sampled_dir(interval_ms: u64) -> (tempfile::TempDir, SpaceSampler) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("keep"), vec![0u8; 1000]).unwrap();
        let s = SpaceSampler::start(d.path(), interval_ms).unwrap();
        s.begin_step(d.path());
        (d, s)
    }

    #[test]
    fn a_file_that_lives_between_two_reads_is_in_the_peak() {
        let (d, s) = sampled_dir(1);
        let big = d.path().join("big");
        std::fs::write(&big, vec![0u8; 50_000]).unwrap();
        // Several intervals: the sampler thread sees it.
        let seen_before = s.shared.samples.load(Ordering::Relaxed);
        while s.shared.samples.load(Ordering::Relaxed) < seen_before + 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::fs::remove_file(&big).unwrap();
        assert_eq!(s.take_step_peak(sysinfo::dir_size(d.path())), 51_000);
        // A new step starts from the size now: the deleted file is gone.
        s.begin_step(d.path());
        assert_eq!(s.take_step_peak(sysinfo::dir_size(d.path())), 1000);
        // The run's peak keeps it.
        let (peak, samples) = s.run_peak(d.path());
        assert_eq!(peak, 51_000);
        assert!(samples >= 3, "{samples}");
    }

    /// Regression (`tests/peak_space.rs` failed under load: a step's peak
    /// 5,311,995 below its end size 5,365,909): the end size is measured,
    /// then a compaction deletes its inputs before the peak is read. The
    /// peak must still count the end size the report shows beside it.
    #[test]
    fn a_step_s_peak_is_never_below_the_end_size_beside_it() {
        // No sample by the thread during the test.
        let (d, s) = sampled_dir(3_600_000);
        let inputs = d.path().join("inputs");
        std::fs::write(&inputs, vec![0u8; 50_000]).unwrap();
        let end_size = sysinfo::dir_size(d.path());
        std::fs::remove_file(&inputs).unwrap();
        assert_eq!(s.take_step_peak(end_size), 51_000);
        assert_eq!(s.run_peak(d.path()).0, 51_000);
    }

    #[test]
    fn a_long_interval_does_not_hold_up_the_drop() {
        let d = tempfile::tempdir().unwrap();
        let s = SpaceSampler::start(d.path(), 3_600_000).unwrap();
        let t = std::time::Instant::now();
        drop(s);
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }
}
