//! The typed statistics `Db::stats()` returns: a copy of the engine's
//! counters and shape at one moment, with the current write stalls
//! explained in words. Plain data (no handles into the DB), `Serialize`d
//! by tools (the CLI's `stats --json`, the metrics endpoint).
//!
//! Invariants: every counter is cumulative since the DB was opened (none
//! is reset by reading it, unlike the interval figures of `shale.stats`);
//! sizes are bytes, times microseconds. The compaction and flush figures
//! are the DB's (the engine books them per output level, not per family);
//! the LSM shape, memtables and stall condition are per family.
//!
//! Fields are read from several relaxed counters and one view of the DB
//! state: the figures are each exact, but not taken at one instant with
//! each other (a write may land between two of them).

use serde::Serialize;

/// Everything `Db::stats()` reports.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Seconds since the DB was opened.
    pub uptime_secs: f64,
    /// One entry per live column family, `default` first.
    pub families: Vec<CfStats>,
    /// Compaction and flush work, per output level (DB-wide).
    pub compaction: CompactionStats,
    /// Writes and reads through the API.
    pub ops: OpStats,
    /// The write-ahead log.
    pub wal: WalStats,
    /// Write stalls so far, by cause.
    pub stalls: StallStats,
    /// The block cache and table reads.
    pub cache: CacheStats,
    /// Memory by component.
    pub memory: MemoryStats,
    /// File IO by purpose.
    pub io: IoStats,
    /// Background jobs and errors now.
    pub background: BackgroundStats,
    /// Why writes are slowed down or stopped right now (empty when they
    /// run freely), one entry per cause.
    pub stalls_now: Vec<StallExplanation>,
    /// The rate limiter of flush and compaction writes (`None` without
    /// `Options::rate_limiter`).
    pub rate_limiter: Option<RateLimiterStats>,
}

/// One column family's shape and memtables.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CfStats {
    /// The family's name.
    pub name: String,
    /// The family's id.
    pub id: u32,
    /// Per level, L0 first.
    pub levels: Vec<LevelStats>,
    /// Bytes compaction must rewrite to bring every level under its target
    /// (RocksDB's `estimate-pending-compaction-bytes`).
    pub pending_compaction_bytes: u64,
    /// The level L0 compacts into.
    pub base_level: usize,
    /// Bytes of the active memtable.
    pub active_memtable_bytes: u64,
    /// Immutable memtables waiting for (or in) a flush.
    pub immutable_memtables: usize,
    /// Bytes of every memtable of the family.
    pub memtable_bytes: u64,
    /// Entries in the memtables and tables, counting overwritten and
    /// deleted keys and tombstones: an estimate of the live key count (the
    /// engine does not know it exactly without reading every key).
    pub estimated_num_keys: u64,
    /// `normal`, `delayed` or `stopped`: what the family's LSM shape asks
    /// of writers now.
    pub write_stall: StallState,
}

/// One level of a family.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct LevelStats {
    /// Level number.
    pub level: usize,
    /// Table files.
    pub files: usize,
    /// Files an ongoing compaction reads.
    pub files_compacting: usize,
    /// Bytes of the files.
    pub bytes: u64,
    /// Compaction score (≥ 1 asks for a compaction).
    pub score: f64,
}

/// Flushes and compactions since open (DB-wide).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct CompactionStats {
    /// Flushes finished.
    pub flushes: u64,
    /// Bytes written by flushes (the L0 row's write column).
    pub flush_bytes: u64,
    /// Compaction jobs finished (delete-only ones included, trivial moves
    /// not: see `compaction_bytes_moved`).
    pub compactions: u64,
    /// Bytes compactions read.
    pub compaction_bytes_read: u64,
    /// Bytes compactions wrote.
    pub compaction_bytes_written: u64,
    /// Bytes moved down a level without a rewrite.
    pub compaction_bytes_moved: u64,
    /// Bytes of files removed whole by delete-only compactions.
    pub delete_only_bytes: u64,
    /// Blob bytes written to blob files by flushes and compactions (values
    /// separated, blobs relocated); not in the table byte counts above.
    pub blob_bytes_written: u64,
    /// Blob bytes read by compactions relocating them.
    pub blob_bytes_read: u64,
    /// Write amplification: bytes written by flushes and compactions (into
    /// tables and blob files) over the bytes flushed (tables and blob
    /// files; 0 before the first flush).
    pub write_amp: f64,
    /// Per output level (L0's row is the flushes and the intra-L0 and
    /// delete-only compactions of L0).
    pub levels: Vec<LevelCompaction>,
}

/// Work booked on one output level.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct LevelCompaction {
    /// The output level.
    pub level: usize,
    /// Jobs that wrote into it.
    pub count: u64,
    /// Bytes read from the input levels.
    pub bytes_read_non_output: u64,
    /// Bytes read from this level.
    pub bytes_read_output: u64,
    /// Bytes written (tables).
    pub bytes_written: u64,
    /// Blob bytes read (relocated).
    pub blob_bytes_read: u64,
    /// Blob bytes written into blob files.
    pub blob_bytes_written: u64,
    /// Bytes moved in by trivial moves.
    pub bytes_moved: u64,
    /// Wall-clock microseconds.
    pub micros: u64,
    /// Write amplification of the level (RocksDB's W-Amp column: blob
    /// bytes count on both sides).
    pub write_amp: f64,
}

/// Operations through the API.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct OpStats {
    /// Write calls (batches and single operations).
    pub writes: u64,
    /// Keys written (entries of every batch).
    pub keys_written: u64,
    /// Write groups committed (writers sharing one WAL write).
    pub commit_groups: u64,
    /// User bytes written (keys and values).
    pub ingest_bytes: u64,
    /// Keys looked up by `get` and `multi_get`.
    pub keys_read: u64,
    /// The newest visible sequence number.
    pub last_sequence: u64,
}

/// The write-ahead log.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct WalStats {
    /// WAL writes (one per group written with the WAL).
    pub writes: u64,
    /// Bytes appended.
    pub bytes: u64,
    /// Syncs.
    pub syncs: u64,
    /// WAL files not yet deleted.
    pub live_files: usize,
    /// Bytes of those files.
    pub live_bytes: u64,
}

/// Write stalls since open, by cause.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct StallStats {
    /// Microseconds writers spent delayed or stopped, all causes.
    pub micros: u64,
    /// Per cause: how often it began, and the time booked on it. The
    /// engine counts the four LSM-shape causes and one for writers waiting
    /// on flushes, reported as `memtable_limit`: it also holds the waits
    /// for the WAL size and `db_write_buffer_size` limits, which have no
    /// counter of their own (`stalls_now` tells them apart).
    pub causes: Vec<StallCauseStats>,
}

/// One stall cause's totals.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct StallCauseStats {
    /// The cause.
    pub cause: StallReason,
    /// Times it began (L0 and pending-bytes stalls once per LSM version
    /// that causes them; memtable stops once per waiting writer).
    pub count: u64,
    /// Microseconds of stall booked on it.
    pub micros: u64,
}

/// The block cache and table reads (DB-wide).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct CacheStats {
    /// Capacity in bytes (0 without a block cache).
    pub capacity: u64,
    /// Bytes held.
    pub usage: u64,
    /// Bytes held by entries in use.
    pub pinned_usage: u64,
    /// Entries held.
    pub entries: u64,
    /// Data-block lookups that hit.
    pub data_hits: u64,
    /// Data-block lookups that missed.
    pub data_misses: u64,
    /// Index-block lookups that hit.
    pub index_hits: u64,
    /// Index-block lookups that missed.
    pub index_misses: u64,
    /// Filter lookups that hit.
    pub filter_hits: u64,
    /// Filter lookups that missed.
    pub filter_misses: u64,
    /// Bytes inserted.
    pub bytes_inserted: u64,
    /// Bytes evicted to make room.
    pub bytes_evicted: u64,
    /// Blocks read from table files.
    pub blocks_read: u64,
    /// Bytes of those blocks.
    pub block_read_bytes: u64,
    /// Bloom filter checks.
    pub bloom_checks: u64,
    /// Bloom filter checks that answered "absent" and so saved a table
    /// read.
    pub bloom_useful: u64,
}

/// Memory by component, in bytes.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct MemoryStats {
    /// `memory_budget` (0: none).
    pub budget: u64,
    /// Everything charged: the four parts below.
    pub total: u64,
    /// Every memtable of every family (what `db_write_buffer_size`
    /// limits).
    pub memtables: u64,
    /// The block cache's usage (data, and index and filter blocks when
    /// they are cached).
    pub block_cache: u64,
    /// The block cache's capacity now (with a budget, what the other parts
    /// leave of it, at most `cache_size`).
    pub block_cache_capacity: u64,
    /// The part of `block_cache` pinned by readers and iterators.
    pub block_cache_pinned: u64,
    /// Open table readers' own memory (indexes and filters not in the
    /// block cache).
    pub table_readers: u64,
    /// IO buffers: iterators' and compactions' readahead, the index and
    /// filter of tables being built.
    pub buffers: u64,
    /// Open table readers.
    pub open_tables: u64,
}

/// File IO by purpose: every read and write the DB made through its file
/// system since open. Purposes: `user` (reads for gets and iterators),
/// `flush`, `compaction`, `wal` (appends), `other` (MANIFEST, OPTIONS, LOG,
/// table opens, recovery, ingestion). A read request is one positional or
/// sequential read; a write request is one hand-off to the OS (a buffer
/// written out, a flush or sync; each append of the memory-mapped WAL).
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct IoStats {
    /// Upper bounds (inclusive, bytes) of the request-size buckets; the
    /// last bucket, one more than these, has no bound.
    pub bucket_limits: Vec<u64>,
    /// One entry per purpose, in the order above.
    pub purposes: Vec<IoPurposeStats>,
}

/// Reads and writes of one purpose.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct IoPurposeStats {
    /// `user`, `flush`, `compaction`, `wal`, `other` or `blob`.
    pub purpose: &'static str,
    /// Bytes read.
    pub read_bytes: u64,
    /// Read requests.
    pub read_requests: u64,
    /// Read requests per size bucket (`IoStats::bucket_limits`).
    pub read_sizes: Vec<u64>,
    /// Bytes written.
    pub write_bytes: u64,
    /// Write requests.
    pub write_requests: u64,
    /// Write requests per size bucket.
    pub write_sizes: Vec<u64>,
}

impl IoPurposeStats {
    /// Average bytes per read request (iostat's `rareqsz`); 0 without reads.
    pub fn avg_read_size(&self) -> f64 {
        avg(self.read_bytes, self.read_requests)
    }

    /// Average bytes per write request; 0 without writes.
    pub fn avg_write_size(&self) -> f64 {
        avg(self.write_bytes, self.write_requests)
    }
}

fn avg(bytes: u64, requests: u64) -> f64 {
    if requests == 0 {
        0.0
    } else {
        bytes as f64 / requests as f64
    }
}

impl IoStats {
    /// The entry of `purpose`, if it is one of the names above.
    pub fn purpose(&self, purpose: &str) -> Option<&IoPurposeStats> {
        self.purposes.iter().find(|p| p.purpose == purpose)
    }

    /// A text table, one line per purpose: megabytes, requests and the
    /// average request size (KiB) of reads and of writes.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut out = String::from(
            "Purpose     Read(MB)     Reads AvgRead(KB)  Write(MB)    Writes AvgWrite(KB)\n",
        );
        let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
        for p in &self.purposes {
            let _ = writeln!(
                out,
                "{:<10} {:>9.1} {:>9} {:>11.1} {:>10.1} {:>9} {:>12.1}",
                p.purpose,
                mb(p.read_bytes),
                p.read_requests,
                p.avg_read_size() / 1024.0,
                mb(p.write_bytes),
                p.write_requests,
                p.avg_write_size() / 1024.0,
            );
        }
        out
    }
}

/// The rate limiter (`Options::rate_limiter`). Its counters are the
/// limiter's: cumulative since it was made, over every DB sharing it.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct RateLimiterStats {
    /// The rate in force, bytes per second (auto-tuned: where the tuning
    /// has taken it).
    pub bytes_per_second: u64,
    /// The configured rate (auto-tuned: the ceiling).
    pub max_bytes_per_second: u64,
    /// The rate is auto-tuned.
    pub auto_tuned: bool,
    /// Bytes granted to flush writes (high priority).
    pub flush_bytes: u64,
    /// Bytes granted to compaction writes (low priority).
    pub compaction_bytes: u64,
    /// Requests of flush writes (one per single burst at most).
    pub flush_requests: u64,
    /// Requests of compaction writes.
    pub compaction_requests: u64,
    /// Microseconds flush writes waited.
    pub flush_wait_micros: u64,
    /// Microseconds compaction writes waited.
    pub compaction_wait_micros: u64,
}

/// Background work and errors now.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct BackgroundStats {
    /// Compactions running.
    pub compactions_running: usize,
    /// Flushes running.
    pub flushes_running: usize,
    /// Background errors seen since open.
    pub errors: u64,
    /// The outstanding background error, if any.
    pub current_error: Option<String>,
    /// Writes are refused until the error is resolved.
    pub writes_stopped: bool,
}

/// What a family's LSM shape asks of writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StallState {
    /// Writes run freely.
    Normal,
    /// Writes are paced at `delayed_write_rate`.
    Delayed,
    /// Writes wait.
    Stopped,
}

/// Why writes are delayed or stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StallReason {
    /// L0 files ≥ `level0_slowdown_writes_trigger`.
    L0Slowdown,
    /// L0 files ≥ `level0_stop_writes_trigger`.
    L0Stop,
    /// Pending compaction bytes ≥ `soft_pending_compaction_bytes_limit`.
    PendingCompactionSlowdown,
    /// Pending compaction bytes ≥ `hard_pending_compaction_bytes_limit`.
    PendingCompactionStop,
    /// `max_write_buffer_number` memtables in use and the active one full.
    MemtableLimit,
    /// The live WALs are past `max_total_wal_size` and the flushes that
    /// free them have not finished.
    WalSize,
    /// The memtables use twice `db_write_buffer_size` while flushes run.
    WriteBufferMemory,
    /// An outstanding background error refuses writes.
    BackgroundError,
}

impl StallReason {
    /// Every reason, in a fixed order (metrics iterate over it).
    pub const ALL: [StallReason; 8] = [
        StallReason::L0Slowdown,
        StallReason::L0Stop,
        StallReason::PendingCompactionSlowdown,
        StallReason::PendingCompactionStop,
        StallReason::MemtableLimit,
        StallReason::WalSize,
        StallReason::WriteBufferMemory,
        StallReason::BackgroundError,
    ];

    /// The snake_case name (as serialized, and as the metrics' label).
    pub fn name(self) -> &'static str {
        match self {
            StallReason::L0Slowdown => "l0_slowdown",
            StallReason::L0Stop => "l0_stop",
            StallReason::PendingCompactionSlowdown => "pending_compaction_slowdown",
            StallReason::PendingCompactionStop => "pending_compaction_stop",
            StallReason::MemtableLimit => "memtable_limit",
            StallReason::WalSize => "wal_size",
            StallReason::WriteBufferMemory => "write_buffer_memory",
            StallReason::BackgroundError => "background_error",
        }
    }
}

/// One current write slowdown or stop, explained.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct StallExplanation {
    /// The family whose state causes it (`None`: DB-wide).
    pub family: Option<String>,
    /// The cause.
    pub reason: StallReason,
    /// `delayed` or `stopped`.
    pub state: StallState,
    /// The measured value (files, bytes; `None` for a background error).
    pub value: Option<u64>,
    /// The threshold it reached.
    pub threshold: Option<u64>,
    /// The option that sets the threshold.
    pub option: Option<&'static str>,
    /// The whole explanation in words, with what to consider changing.
    pub message: String,
}
