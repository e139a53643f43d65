//! Engine statistics: write-path counters, write stalls by cause (with the
//! write controller's token bucket that paces delayed writes), per-level
//! compaction statistics and the list of running compactions, in RocksDB's
//! vocabulary so its operators can read them (see `observe/properties.rs` for the
//! printed tables).
//!
//! Thread safety: counters are relaxed atomics; per-level stats, the write
//! controller and the running-compaction list sit behind small mutexes taken
//! once per job or write group (the running list only under the DB mutex).

pub(crate) mod report;

use crate::base::Counter;
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
    /// Bytes written (tables).
    pub bytes_written: u64,
    /// Blob bytes read (relocated by garbage collection) and written (blob
    /// files: values moved out of tables, and relocated blobs).
    pub blob_bytes_read: u64,
    pub blob_bytes_written: u64,
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
    /// Merges that could not be resolved (operands kept), single deletes
    /// that met something other than one value, values the compaction
    /// filter removed or changed.
    pub merge_failures: u64,
    pub single_delete_mismatches: u64,
    pub filtered: u64,
}

impl LevelCompactionStats {
    pub(crate) fn add(&mut self, o: &LevelCompactionStats) {
        self.bytes_read_non_output += o.bytes_read_non_output;
        self.bytes_read_output += o.bytes_read_output;
        self.bytes_written += o.bytes_written;
        self.blob_bytes_read += o.blob_bytes_read;
        self.blob_bytes_written += o.blob_bytes_written;
        self.bytes_moved += o.bytes_moved;
        self.micros += o.micros;
        self.cpu_micros += o.cpu_micros;
        self.count += o.count;
        self.keys_in += o.keys_in;
        self.keys_dropped += o.keys_dropped;
        self.files_in_non_output += o.files_in_non_output;
        self.files_in_output += o.files_in_output;
        self.files_out += o.files_out;
        self.merge_failures += o.merge_failures;
        self.single_delete_mismatches += o.single_delete_mismatches;
        self.filtered += o.filtered;
    }

    pub(crate) fn sub(&self, o: &LevelCompactionStats) -> LevelCompactionStats {
        LevelCompactionStats {
            bytes_read_non_output: self
                .bytes_read_non_output
                .saturating_sub(o.bytes_read_non_output),
            bytes_read_output: self.bytes_read_output.saturating_sub(o.bytes_read_output),
            bytes_written: self.bytes_written.saturating_sub(o.bytes_written),
            blob_bytes_read: self.blob_bytes_read.saturating_sub(o.blob_bytes_read),
            blob_bytes_written: self.blob_bytes_written.saturating_sub(o.blob_bytes_written),
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
            merge_failures: self.merge_failures.saturating_sub(o.merge_failures),
            single_delete_mismatches: self
                .single_delete_mismatches
                .saturating_sub(o.single_delete_mismatches),
            filtered: self.filtered.saturating_sub(o.filtered),
        }
    }
}

/// Why writes were delayed or stopped (RocksDB's stall causes). The order
/// is the order of the `Stalls(count)` line's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCause {
    /// L0 files ≥ `level0_slowdown_writes_trigger`: writes delayed.
    L0Slowdown = 0,
    /// L0 files ≥ `level0_stop_writes_trigger`: writes wait.
    L0Stop = 1,
    /// Pending compaction bytes ≥ the hard limit: writes wait.
    PendingStop = 2,
    /// Pending compaction bytes ≥ the soft limit: writes delayed.
    PendingSlowdown = 3,
    /// `max_write_buffer_number` memtables full: writes wait for a flush.
    MemtableStop = 4,
}

/// Number of [`StallCause`]s.
pub(crate) const STALL_CAUSES: usize = 5;

/// What the LSM shape asks of writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StallCondition {
    Normal,
    Delayed(StallCause),
    Stopped(StallCause),
}

/// Paces delayed writes at `delayed_write_rate` (RocksDB's
/// `WriteController::GetDelay`): bytes earn credit as time passes, refilled
/// at most once per millisecond; a write larger than the credit sleeps for
/// the bytes over budget divided by the rate (at least one refill interval).
/// Also remembers the DB-wide stall condition the last write group saw, so
/// that entering the delayed state starts the bucket afresh.
#[derive(Debug, Default)]
pub(crate) struct WriteController {
    credit: u64,
    next_refill: Option<Instant>,
    /// `ingest_bytes` when the previous delay was computed.
    charged_ingest: u64,
    /// The condition the last write group saw.
    last: Option<StallCondition>,
}

const REFILL: Duration = Duration::from_millis(1);

impl WriteController {
    /// The delay for `bytes` more written at `rate` bytes/s, at `now`.
    pub(crate) fn delay(&mut self, bytes: u64, rate: u64, now: Instant) -> Duration {
        let rate = rate.max(1);
        if self.credit >= bytes {
            // Paid from the credit of the current interval.
            self.credit -= bytes;
            return Duration::ZERO;
        }
        let next = *self.next_refill.get_or_insert(now);
        if next <= now {
            let elapsed = now - next + REFILL;
            self.credit += (elapsed.as_secs_f64() * rate as f64).ceil() as u64;
            self.next_refill = Some(now + REFILL);
            if self.credit >= bytes {
                self.credit -= bytes;
                return Duration::ZERO;
            }
        }
        let over = bytes.saturating_sub(self.credit);
        self.credit = 0;
        let wait = Duration::from_secs_f64(over as f64 / rate as f64);
        let next = self.next_refill.unwrap_or(now) + wait;
        self.next_refill = Some(next);
        next.saturating_duration_since(now).max(REFILL)
    }

    /// Bytes ingested since the previous call (the groups to pay for).
    pub(crate) fn take_ingest(&mut self, ingest_total: u64) -> u64 {
        let d = ingest_total.saturating_sub(self.charged_ingest);
        self.charged_ingest = ingest_total;
        d
    }

    /// Records the DB-wide condition a write group sees. Entering the
    /// delayed state starts the bucket afresh at `ingest_total`: bytes
    /// written while writes ran freely are not charged.
    pub(crate) fn observe(&mut self, c: StallCondition, ingest_total: u64) {
        let was_delayed = matches!(self.last, Some(StallCondition::Delayed(_)));
        if matches!(c, StallCondition::Delayed(_)) && !was_delayed {
            self.credit = 0;
            self.next_refill = None;
            self.charged_ingest = ingest_total;
        }
        self.last = Some(c);
    }
}

/// A running compaction, as the picker and `shale.stats` see it.
///
/// Also a flush installing outputs below L0 (`input_level` 0), while its
/// MANIFEST edit is written: the range is reserved the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunningJob {
    /// Unique id (for removal).
    pub id: u64,
    /// The column family compacted.
    pub cf: u32,
    pub input_level: usize,
    pub output_level: usize,
    /// User-key range written at the output level.
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

/// A copy of the write-path counters (for interval figures).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WriteCounters {
    pub writes: u64,
    pub keys: u64,
    pub groups: u64,
    pub ingest_bytes: u64,
    pub wal_writes: u64,
    pub wal_syncs: u64,
    pub wal_bytes: u64,
    pub stall_micros: u64,
}

impl WriteCounters {
    /// `self - o`, field by field (saturating).
    pub(crate) fn since(&self, o: &WriteCounters) -> WriteCounters {
        WriteCounters {
            writes: self.writes.saturating_sub(o.writes),
            keys: self.keys.saturating_sub(o.keys),
            groups: self.groups.saturating_sub(o.groups),
            ingest_bytes: self.ingest_bytes.saturating_sub(o.ingest_bytes),
            wal_writes: self.wal_writes.saturating_sub(o.wal_writes),
            wal_syncs: self.wal_syncs.saturating_sub(o.wal_syncs),
            wal_bytes: self.wal_bytes.saturating_sub(o.wal_bytes),
            stall_micros: self.stall_micros.saturating_sub(o.stall_micros),
        }
    }
}

/// DB-wide counters.
pub(crate) struct DbStats {
    pub started: Instant,
    pub writes: Counter,
    pub keys_written: Counter,
    pub commit_groups: Counter,
    pub ingest_bytes: Counter,
    pub wal_writes: Counter,
    pub wal_bytes: Counter,
    pub wal_syncs: Counter,
    /// Keys looked up by `get` and `multi_get` (one stripe add per call).
    pub keys_read: Counter,
    /// Flushes installed.
    pub flushes: AtomicU64,
    pub flush_bytes: AtomicU64,
    /// Blob file bytes flushes wrote (key-value separation).
    pub flush_blob_bytes: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    /// Bytes of files removed whole by delete-only compaction.
    pub delete_only_bytes: AtomicU64,
    /// Tables and bytes FIFO compaction dropped (by size or TTL).
    pub fifo_dropped_files: AtomicU64,
    pub fifo_dropped_bytes: AtomicU64,
    pub stall_micros: AtomicU64,
    pub stall_l0_slowdown: AtomicU64,
    pub stall_l0_stop: AtomicU64,
    pub stall_memtable: AtomicU64,
    pub stall_pending_slowdown: AtomicU64,
    pub stall_pending_stop: AtomicU64,
    /// Stall microseconds per [`StallCause`].
    pub stall_cause_micros: [AtomicU64; STALL_CAUSES],
    /// L0 slowdowns / stops while an L0 compaction was running.
    pub stall_l0_slowdown_with_compaction: AtomicU64,
    pub stall_l0_stop_with_compaction: AtomicU64,
    /// Stall count total at the previous `shale.stats` dump.
    pub stalls_at_last_dump: AtomicU64,
    /// Paces delayed writes.
    pub write_controller: Mutex<WriteController>,
    /// Running compactions (changed under the DB mutex).
    pub running: Mutex<Vec<RunningJob>>,
    /// Id source for `running`.
    pub next_job_id: AtomicU64,
    /// Write-path counters at the previous `shale.stats` dump (the DB
    /// Stats interval lines).
    pub db_at_last_dump: Mutex<(WriteCounters, Instant)>,
    /// Per output level.
    pub levels: Mutex<Vec<LevelCompactionStats>>,
    /// Snapshot of `levels` at the previous `shale.stats` dump (the Int row).
    pub levels_at_last_dump: Mutex<(Vec<LevelCompactionStats>, Instant)>,
}

impl DbStats {
    pub(crate) fn new(num_levels: usize) -> Self {
        DbStats {
            started: Instant::now(),
            writes: Counter::default(),
            keys_written: Counter::default(),
            commit_groups: Counter::default(),
            ingest_bytes: Counter::default(),
            wal_writes: Counter::default(),
            wal_bytes: Counter::default(),
            wal_syncs: Counter::default(),
            keys_read: Counter::default(),
            flushes: AtomicU64::new(0),
            flush_bytes: AtomicU64::new(0),
            flush_blob_bytes: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            delete_only_bytes: AtomicU64::new(0),
            fifo_dropped_files: AtomicU64::new(0),
            fifo_dropped_bytes: AtomicU64::new(0),
            stall_micros: AtomicU64::new(0),
            stall_l0_slowdown: AtomicU64::new(0),
            stall_l0_stop: AtomicU64::new(0),
            stall_memtable: AtomicU64::new(0),
            stall_pending_slowdown: AtomicU64::new(0),
            stall_pending_stop: AtomicU64::new(0),
            stall_cause_micros: Default::default(),
            stall_l0_slowdown_with_compaction: AtomicU64::new(0),
            stall_l0_stop_with_compaction: AtomicU64::new(0),
            stalls_at_last_dump: AtomicU64::new(0),
            write_controller: Mutex::new(WriteController::default()),
            running: Mutex::new(Vec::new()),
            next_job_id: AtomicU64::new(1),
            db_at_last_dump: Mutex::new((WriteCounters::default(), Instant::now())),
            levels: Mutex::new(vec![LevelCompactionStats::default(); num_levels]),
            levels_at_last_dump: Mutex::new((
                vec![LevelCompactionStats::default(); num_levels],
                Instant::now(),
            )),
        }
    }

    /// Counts one stall of `cause` (`during_l0_compaction`: an L0
    /// compaction was running, RocksDB's `_with_compaction` counts).
    pub(crate) fn count_stall(&self, cause: StallCause, during_l0_compaction: bool) {
        let c = match cause {
            StallCause::L0Slowdown => {
                if during_l0_compaction {
                    self.stall_l0_slowdown_with_compaction
                        .fetch_add(1, Ordering::Relaxed);
                }
                &self.stall_l0_slowdown
            }
            StallCause::L0Stop => {
                if during_l0_compaction {
                    self.stall_l0_stop_with_compaction
                        .fetch_add(1, Ordering::Relaxed);
                }
                &self.stall_l0_stop
            }
            StallCause::PendingStop => &self.stall_pending_stop,
            StallCause::PendingSlowdown => &self.stall_pending_slowdown,
            StallCause::MemtableStop => &self.stall_memtable,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    /// Books `d` of stall time on `cause` and on the total.
    pub(crate) fn add_stall_time(&self, cause: StallCause, d: Duration) {
        let us = d.as_micros() as u64;
        self.stall_micros.fetch_add(us, Ordering::Relaxed);
        if let Some(a) = self.stall_cause_micros.get(cause as usize) {
            a.fetch_add(us, Ordering::Relaxed);
        }
    }

    /// The write-path counters now.
    pub(crate) fn write_counters(&self) -> WriteCounters {
        WriteCounters {
            writes: self.writes.get(),
            keys: self.keys_written.get(),
            groups: self.commit_groups.get(),
            ingest_bytes: self.ingest_bytes.get(),
            wal_writes: self.wal_writes.get(),
            wal_syncs: self.wal_syncs.get(),
            wal_bytes: self.wal_bytes.get(),
            stall_micros: self.stall_micros.load(Ordering::Relaxed),
        }
    }

    /// Total stall count (every cause).
    pub(crate) fn total_stalls(&self) -> u64 {
        [
            &self.stall_l0_slowdown,
            &self.stall_l0_stop,
            &self.stall_pending_stop,
            &self.stall_pending_slowdown,
            &self.stall_memtable,
        ]
        .iter()
        .map(|a| a.load(Ordering::Relaxed))
        .sum()
    }

    #[inline]
    /// Books a job's statistics on its output level.
    /// Bytes flushes wrote, tables and blob files: the bytes ingested, over
    /// which W-Amp is counted. Not L0's written bytes, which also hold the
    /// output of compactions into L0 (FIFO's and universal's intra-L0).
    pub(crate) fn flushed_bytes(&self) -> u64 {
        self.flush_bytes.load(Ordering::Relaxed) + self.flush_blob_bytes.load(Ordering::Relaxed)
    }

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
mod tests;
