//! Event listeners: user callbacks told about flushes, compactions, table
//! files, write stalls and background errors (RocksDB's `EventListener`).
//!
//! Install listeners with `Options::listeners`. Every method of
//! [`EventListener`] has a default that does nothing; implement the ones you
//! need. Each takes a plain info struct owned by the engine for the call.
//!
//! Threading guarantees:
//! - Listeners are never called with the DB mutex held, nor from a write
//!   or a read: the engine records each event in a queue (under the DB
//!   mutex where it happens, without IO) and one thread per open DB,
//!   `shale-events`, delivers them. A listener may therefore call back into
//!   the DB (`get`, `property`, `put`, even `flush`) without deadlock.
//! - A slow listener delays the events after it, never a flush or a
//!   compaction (the queue grows instead: one entry per job or file, not
//!   per write).
//!
//! Ordering guarantees (all events of a DB are delivered one at a time, in
//! the order the engine recorded them, to each listener in the order of
//! `Options::listeners`):
//! - `on_flush_begin` / `on_compaction_begin` of a job come before its
//!   `on_table_file_created` calls, which come before its
//!   `on_flush_completed` / `on_compaction_completed`. Every begun job gets
//!   exactly one completed call, with `status` set to the error if it
//!   failed (a failed job's tables were never installed).
//! - `on_table_file_deleted` for a file comes after the version dropping
//!   it was installed (and after its `on_table_file_created`, for a file
//!   this open created).
//! - `on_background_error` comes after the failing job's completed call;
//!   `on_error_recovery_begin` and `on_error_recovery_completed` bracket
//!   each resume (`Db::resume` or automatic).
//! - When `Db::flush`, `Db::compact_range`, `Db::wait_for_compaction` or
//!   `Db::resume` returns (with success or an error), the events of the
//!   work it waited for have been delivered (unless it was called from a
//!   listener). `Db::close` delivers every
//!   recorded event before it returns.
//!
//! FIFO drops (whole tables deleted past the size cap or the TTL) are
//! reported as compactions with no output, as RocksDB reports its
//! deletion compactions.
//!
//! What is not reported: delete-only compactions (files dropped whole
//! under range tombstones or expired) report only their tables'
//! deletions; stalls report the LSM shape's condition per family (L0 files,
//! pending compaction bytes), not writers waiting for a full set of
//! memtables to flush. A listener holding a `Db` clone keeps that DB open
//! until `Db::close` is called (the options own the listener).
//!
//! Each info is built from the typed record (`records`) whose
//! serialization is the LOG's `EVENT_LOG_v1` line of the same event
//! (docs/format/log-events.md), so the two agree on every field both
//! carry. A few calls have no line of their own: the begin of a trivial
//! move or of a whole-file drop (their line comes at the end), and the
//! completion of a job that installed nothing (a failure, or its family
//! dropped), built from the job's begin record.
//!
//! Panics: a listener that panics is caught (`catch_unwind`), the panic is
//! written to the LOG as an error, and the listener keeps being called for
//! later events: a panic in one callback does not take the DB down or
//! silence the other callbacks.

pub(crate) mod admin_records;
pub(crate) mod file_records;
pub(crate) mod info_log;
pub(crate) mod log_options;
mod notifier;
pub(crate) mod records;

pub(crate) use notifier::{Event, Notifier};

use crate::error::Error;

/// Callbacks for background events. Every method defaults to doing
/// nothing. Called from the DB's event thread (see the module comment for
/// the ordering and threading guarantees).
pub trait EventListener: Send + Sync {
    /// A flush starts writing a memtable to an L0 table.
    fn on_flush_begin(&self, _info: &FlushJobInfo) {}
    /// A flush ended: its table is installed (`status` is `Ok`) or it failed.
    fn on_flush_completed(&self, _info: &FlushJobInfo) {}
    /// A compaction (or a trivial move) starts.
    fn on_compaction_begin(&self, _info: &CompactionJobInfo) {}
    /// A compaction ended: its outputs are installed, or it failed.
    fn on_compaction_completed(&self, _info: &CompactionJobInfo) {}
    /// A flush or compaction wrote (and synced) a table file; it is
    /// installed by the job's completion, or deleted if the job fails.
    fn on_table_file_created(&self, _info: &TableFileCreationInfo) {}
    /// An obsolete table file was deleted (or deleting it failed).
    fn on_table_file_deleted(&self, _info: &TableFileDeletionInfo) {}
    /// A family's write stall condition changed (L0 files or pending
    /// compaction bytes crossed a slowdown or stop trigger).
    fn on_stall_conditions_changed(&self, _info: &WriteStallInfo) {}
    /// A background error was recorded (see `Db::resume`).
    fn on_background_error(&self, _info: &BackgroundErrorInfo) {}
    /// A resume from a background error starts.
    fn on_error_recovery_begin(&self, _info: &ErrorRecoveryInfo) {}
    /// A resume from a background error ended (`result` says how).
    fn on_error_recovery_completed(&self, _info: &ErrorRecoveryCompletedInfo) {}
}

/// One table file of a job, with its level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableFileInfo {
    /// File number (`NNNNNN.sst`).
    pub file_number: u64,
    /// Level the file is in (inputs) or goes to (outputs).
    pub level: usize,
    /// Size in bytes.
    pub file_size: u64,
}

/// A flush of one memtable.
#[derive(Debug, Clone)]
pub struct FlushJobInfo {
    /// The column family's name.
    pub cf_name: String,
    /// The column family's id.
    pub cf_id: u32,
    /// The job's id, unique among this open's flushes and compactions.
    pub job_id: u64,
    /// Entries in the memtable.
    pub num_entries: u64,
    /// Deletions in the memtable.
    pub num_deletes: u64,
    /// The table written (none when every entry was dropped; empty at
    /// begin).
    pub output_files: Vec<TableFileInfo>,
    /// `Ok` at begin and on success; the error of a failed flush.
    pub status: Result<(), Error>,
}

/// Why a compaction ran (RocksDB's `CompactionReason`, the reasons Shale's
/// pickers produce). The picker that chose a plan names its reason; the
/// plan carries it to [`CompactionJobInfo::reason`] and to the LOG's
/// `compaction_started`, `trivial_move` and `fifo_compaction` events
/// (`"compaction_reason"`, spelled as [`CompactionReason::name`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompactionReason {
    /// Leveled: L0 holds `level0_file_num_compaction_trigger` files or more
    /// (L0 into the base level, its trivial moves, intra-L0 merges).
    LevelL0FilesNum,
    /// Leveled: a level ≥ 1 outgrew its target size.
    LevelMaxLevelSize,
    /// Universal: the runs newer than the oldest add up to
    /// `max_size_amplification_percent` of it (a full merge, or an
    /// incremental slice of one).
    UniversalSizeAmplification,
    /// Universal: a window of runs of similar size (`size_ratio`).
    UniversalSizeRatio,
    /// Universal: more sorted runs than the trigger, merged whatever their
    /// sizes.
    UniversalSortedRunNum,
    /// FIFO: the oldest tables were dropped past `max_table_files_size`.
    FifoMaxSize,
    /// FIFO: small newest tables merged into one (`allow_compaction`).
    FifoReduceNumFiles,
    /// FIFO: the oldest tables were dropped, older than `ttl`.
    FifoTtl,
    /// `Db::compact_range` (and `Db::reclaim`).
    ManualCompaction,
    /// Leveled: a file dense with point tombstones, or whose range
    /// tombstones cover at least its size below, compacted down for them
    /// alone (RocksDB marks such files with a table property collector).
    FilesMarkedForCompaction,
    /// Leveled: a last-level file whose tombstones a snapshot kept,
    /// rewritten once no snapshot needs them.
    BottommostFiles,
    /// Leveled: a file whose values mostly expired (per-key TTL), compacted
    /// to drop them.
    Ttl,
    /// Leveled: `blob_garbage_collection_force_threshold` reached; the
    /// tables referencing the oldest blob file are rewritten to empty it.
    ForcedBlobGc,
    /// Tables wholly covered by a range tombstone that no snapshot needs
    /// (or whose every value expired) dropped by a MANIFEST edit alone,
    /// unread (Pebble's delete-only compaction; RocksDB has no such job).
    /// The completion lists them as inputs, with no outputs.
    DeleteOnly,
}

impl CompactionReason {
    /// RocksDB's name of the reason (`GetCompactionReasonString`), as the
    /// LOG writes it.
    pub fn name(self) -> &'static str {
        match self {
            CompactionReason::LevelL0FilesNum => "LevelL0FilesNum",
            CompactionReason::LevelMaxLevelSize => "LevelMaxLevelSize",
            CompactionReason::UniversalSizeAmplification => "UniversalSizeAmplification",
            CompactionReason::UniversalSizeRatio => "UniversalSizeRatio",
            CompactionReason::UniversalSortedRunNum => "UniversalSortedRunNum",
            CompactionReason::FifoMaxSize => "FIFOMaxSize",
            CompactionReason::FifoReduceNumFiles => "FIFOReduceNumFiles",
            CompactionReason::FifoTtl => "FIFOTtl",
            CompactionReason::ManualCompaction => "ManualCompaction",
            CompactionReason::FilesMarkedForCompaction => "FilesMarkedForCompaction",
            CompactionReason::BottommostFiles => "BottommostFiles",
            CompactionReason::Ttl => "Ttl",
            CompactionReason::ForcedBlobGc => "ForcedBlobGC",
            CompactionReason::DeleteOnly => "DeleteOnly",
        }
    }
}

/// A compaction job (one per plan: a trivial move too).
#[derive(Debug, Clone)]
pub struct CompactionJobInfo {
    /// The column family's name.
    pub cf_name: String,
    /// The column family's id.
    pub cf_id: u32,
    /// The job's id, unique among this open's flushes and compactions.
    pub job_id: u64,
    /// Why it ran.
    pub reason: CompactionReason,
    /// The level whose files it compacts.
    pub base_input_level: usize,
    /// The level it writes.
    pub output_level: usize,
    /// Its input files (both levels).
    pub input_files: Vec<TableFileInfo>,
    /// Its output files (empty at begin; the moved files for a trivial
    /// move).
    pub output_files: Vec<TableFileInfo>,
    /// True when the inputs move by a MANIFEST edit alone.
    pub trivial_move: bool,
    /// Entries read (0 at begin and for a trivial move).
    pub num_input_records: u64,
    /// Entries dropped (shadowed, deleted, filtered).
    pub num_dropped_records: u64,
    /// `Ok` at begin and on success; the error of a failed compaction.
    pub status: Result<(), Error>,
}

/// What wrote a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableFileCreationReason {
    /// A memtable flush.
    Flush,
    /// A compaction.
    Compaction,
}

/// A table file written by a job.
#[derive(Debug, Clone)]
pub struct TableFileCreationInfo {
    /// The column family's name.
    pub cf_name: String,
    /// The column family's id.
    pub cf_id: u32,
    /// The job that wrote it.
    pub job_id: u64,
    /// What wrote it.
    pub reason: TableFileCreationReason,
    /// The file, with the level its job installs it in.
    pub file: TableFileInfo,
    /// Full path of the file.
    pub file_path: std::path::PathBuf,
    /// Entries in it.
    pub num_entries: u64,
}

/// An obsolete table file deleted.
#[derive(Debug, Clone)]
pub struct TableFileDeletionInfo {
    /// File number.
    pub file_number: u64,
    /// Full path of the file.
    pub file_path: std::path::PathBuf,
    /// `Ok`, or why it could not be deleted.
    pub status: Result<(), Error>,
}

/// What a family's LSM shape asks of writers (RocksDB's
/// `WriteStallCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteStallCondition {
    /// Writes go at full speed.
    Normal,
    /// Writes are paced at `delayed_write_rate`.
    Delayed,
    /// Writes wait for compactions.
    Stopped,
}

/// A family's stall condition changed.
#[derive(Debug, Clone)]
pub struct WriteStallInfo {
    /// The column family's name.
    pub cf_name: String,
    /// The column family's id.
    pub cf_id: u32,
    /// The condition before.
    pub prev: WriteStallCondition,
    /// The condition now.
    pub cur: WriteStallCondition,
}

/// What failed when a background error was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BackgroundErrorReason {
    /// A flush writing its table.
    Flush,
    /// A compaction reading or writing tables.
    Compaction,
    /// A MANIFEST append or sync.
    ManifestWrite,
    /// A WAL write, flush or sync.
    WriteCallback,
}

/// How bad a background error is (see `Db::resume`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorSeverity {
    /// Writes go on; automatic compactions pause.
    Soft,
    /// Writes stop until resumed.
    Hard,
    /// Writes stop until the DB is reopened.
    Fatal,
}

/// A background error.
#[derive(Debug, Clone)]
pub struct BackgroundErrorInfo {
    /// What failed.
    pub reason: BackgroundErrorReason,
    /// How this error is classified.
    pub severity: ErrorSeverity,
    /// The error.
    pub error: Error,
}

/// A resume starting.
#[derive(Debug, Clone)]
pub struct ErrorRecoveryInfo {
    /// The error being recovered from.
    pub error: Error,
    /// True for an automatic resume, false for `Db::resume`.
    pub automatic: bool,
}

/// A resume ended.
#[derive(Debug, Clone)]
pub struct ErrorRecoveryCompletedInfo {
    /// The error it recovered from (or tried to).
    pub old_error: Error,
    /// True for an automatic resume, false for `Db::resume`.
    pub automatic: bool,
    /// `Ok` if the error is cleared; else the error the resume hit.
    pub result: Result<(), Error>,
}
