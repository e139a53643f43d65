//! Engine statistics: write-path counters, stall counters and per-level
//! compaction statistics, in RocksDB's vocabulary so its operators can read
//! them (see `db/properties.rs` for the printed tables).
//!
//! Thread safety: counters are relaxed atomics; per-level stats sit behind a
//! small mutex taken once per flush or compaction.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Statistics booked by one flush or compaction job on its output level.
#[derive(Debug, Clone, Default)]
pub(crate) struct LevelCompactionStats {
    /// Bytes read from the input (non-output) levels.
    pub bytes_read_non_output: u64,
    /// Bytes read from the output level.
    pub bytes_read_output: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes moved into the level by trivial moves.
    pub bytes_moved: u64,
    /// Wall-clock microseconds.
    pub micros: u64,
    /// CPU microseconds.
    pub cpu_micros: u64,
    /// Number of jobs.
    pub count: u64,
    /// Records read.
    pub keys_in: u64,
    /// Records dropped.
    pub keys_dropped: u64,
    /// Files read from the input levels / the output level; files written.
    pub files_in_non_output: u64,
    pub files_in_output: u64,
    pub files_out: u64,
}

impl LevelCompactionStats {
    pub(crate) fn add(&mut self, o: &LevelCompactionStats) {
        self.bytes_read_non_output += o.bytes_read_non_output;
        self.bytes_read_output += o.bytes_read_output;
        self.bytes_written += o.bytes_written;
        self.bytes_moved += o.bytes_moved;
        self.micros += o.micros;
        self.cpu_micros += o.cpu_micros;
        self.count += o.count;
        self.keys_in += o.keys_in;
        self.keys_dropped += o.keys_dropped;
        self.files_in_non_output += o.files_in_non_output;
        self.files_in_output += o.files_in_output;
        self.files_out += o.files_out;
    }

    pub(crate) fn sub(&self, o: &LevelCompactionStats) -> LevelCompactionStats {
        LevelCompactionStats {
            bytes_read_non_output: self
                .bytes_read_non_output
                .saturating_sub(o.bytes_read_non_output),
            bytes_read_output: self.bytes_read_output.saturating_sub(o.bytes_read_output),
            bytes_written: self.bytes_written.saturating_sub(o.bytes_written),
            bytes_moved: self.bytes_moved.saturating_sub(o.bytes_moved),
            micros: self.micros.saturating_sub(o.micros),
            cpu_micros: self.cpu_micros.saturating_sub(o.cpu_micros),
            count: self.count.saturating_sub(o.count),
            keys_in: self.keys_in.saturating_sub(o.keys_in),
            keys_dropped: self.keys_dropped.saturating_sub(o.keys_dropped),
            files_in_non_output: self
                .files_in_non_output
                .saturating_sub(o.files_in_non_output),
            files_in_output: self.files_in_output.saturating_sub(o.files_in_output),
            files_out: self.files_out.saturating_sub(o.files_out),
        }
    }
}

/// DB-wide counters.
pub(crate) struct DbStats {
    pub started: Instant,
    pub writes: AtomicU64,
    pub keys_written: AtomicU64,
    pub commit_groups: AtomicU64,
    pub ingest_bytes: AtomicU64,
    pub wal_writes: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub gets: AtomicU64,
    pub gets_found: AtomicU64,
    pub flush_bytes: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub manifest_bytes: AtomicU64,
    pub stall_micros: AtomicU64,
    pub stall_l0_slowdown: AtomicU64,
    pub stall_l0_stop: AtomicU64,
    pub stall_memtable: AtomicU64,
    pub stall_pending_slowdown: AtomicU64,
    pub stall_pending_stop: AtomicU64,
    /// Per output level.
    pub levels: Mutex<Vec<LevelCompactionStats>>,
    /// Snapshot of `levels` at the previous `shale.stats` dump (the Int row).
    pub levels_at_last_dump: Mutex<(Vec<LevelCompactionStats>, Instant)>,
}

impl DbStats {
    pub(crate) fn new(num_levels: usize) -> Self {
        DbStats {
            started: Instant::now(),
            writes: AtomicU64::new(0),
            keys_written: AtomicU64::new(0),
            commit_groups: AtomicU64::new(0),
            ingest_bytes: AtomicU64::new(0),
            wal_writes: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            wal_syncs: AtomicU64::new(0),
            gets: AtomicU64::new(0),
            gets_found: AtomicU64::new(0),
            flush_bytes: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            manifest_bytes: AtomicU64::new(0),
            stall_micros: AtomicU64::new(0),
            stall_l0_slowdown: AtomicU64::new(0),
            stall_l0_stop: AtomicU64::new(0),
            stall_memtable: AtomicU64::new(0),
            stall_pending_slowdown: AtomicU64::new(0),
            stall_pending_stop: AtomicU64::new(0),
            levels: Mutex::new(vec![LevelCompactionStats::default(); num_levels]),
            levels_at_last_dump: Mutex::new((
                vec![LevelCompactionStats::default(); num_levels],
                Instant::now(),
            )),
        }
    }

    pub(crate) fn add_stall(&self, d: Duration) {
        self.stall_micros
            .fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    #[inline]
    pub(crate) fn record_get(&self, found: bool) {
        self.gets.fetch_add(1, Ordering::Relaxed);
        if found {
            self.gets_found.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Books a job's statistics on its output level.
    pub(crate) fn add_level(&self, level: usize, s: &LevelCompactionStats) {
        let mut l = self.levels.lock();
        if let Some(row) = l.get_mut(level) {
            row.add(s);
        }
    }
}

/// CPU time of the calling thread, in microseconds.
pub(crate) fn thread_cpu_micros() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the valid, owned timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_stats_add_sub_and_cpu_clock() {
        let s = DbStats::new(3);
        let job = LevelCompactionStats {
            bytes_written: 10,
            count: 1,
            ..Default::default()
        };
        s.add_level(1, &job);
        s.add_level(1, &job);
        s.add_level(9, &job); // out of range: ignored
        let l = s.levels.lock().clone();
        assert_eq!(l[1].bytes_written, 20);
        assert_eq!(l[1].sub(&job).bytes_written, 10);
        let a = thread_cpu_micros();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        assert!(thread_cpu_micros() >= a);
    }
}
