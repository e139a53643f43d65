//! The typed events: one struct per kind of `EVENT_LOG_v1` line. The LOG
//! line of a kind is its struct serialized (serde, see
//! `info_log::InfoLog::event`), and the listener info of the same kind is
//! built from the same value (`info`, `begin_info`, `completed`): a field
//! is set once, where the record is built, and both outputs read it.
//!
//! Field names and order follow RocksDB's `EVENT_LOG_v1` lines where
//! RocksDB writes the field (`db/event_helpers.cc`, `db/flush_job.cc`,
//! `db/compaction/compaction_job.cc`, `db/db_impl/db_impl_compaction_flush.cc`):
//! declaration order is the LOG order, after `time_micros` (added by the
//! writer). Shale's own fields follow; a few older Shale names are kept
//! beside RocksDB's (`subcompactions` beside `num_subcompactions`,
//! `to_level` beside `destination_level`, ...) so that readers of older
//! LOGs keep working. docs/format/log-events.md lists every field.
//!
//! Plain data: no handles into the DB. The engine's glue
//! (`shared::events`) fills the records from its own types and emits them.

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::PathBuf;

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::notifier::Event;
use super::{
    CompactionJobInfo, CompactionReason, FlushJobInfo, TableFileCreationInfo,
    TableFileCreationReason, TableFileDeletionInfo, TableFileInfo, WriteStallCondition,
    WriteStallInfo,
};
use crate::error::Error;

/// A kind of `EVENT_LOG_v1` line.
pub(crate) trait Record: Serialize {
    /// The line's `event` value.
    const NAME: &'static str;

    /// The listener call this record makes, if any (see `shared::events::emit`).
    fn listener_event(&self) -> Option<Event> {
        None
    }
}

/// The `event` field of a record: serialized as `R::NAME`, so a record
/// cannot carry another kind's name.
pub(crate) struct Kind<R>(PhantomData<fn() -> R>);

impl<R> Kind<R> {
    pub(crate) const fn new() -> Kind<R> {
        Kind(PhantomData)
    }
}

impl<R> Clone for Kind<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Kind<R> {}

impl<R: Record> std::fmt::Debug for Kind<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(R::NAME)
    }
}

impl<R: Record> Serialize for Kind<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(R::NAME)
    }
}

// ------------------------------------------------------------ renderings

/// A file list as its file numbers (`[12, 13]`).
fn numbers<S: Serializer>(files: &[TableFileInfo], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(files.iter().map(|f| f.file_number))
}

/// A file list as its length.
fn count<S: Serializer>(files: &[TableFileInfo], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(files.len() as u64)
}

/// RocksDB's `Status::ToString`: `"OK"` or the error.
fn status<S: Serializer>(r: &Result<(), Error>, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Ok(()) => s.serialize_str("OK"),
        Err(e) => s.collect_str(e),
    }
}

fn reason<S: Serializer>(r: &CompactionReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.name())
}

fn creation_reason<S: Serializer>(r: &TableFileCreationReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match r {
        TableFileCreationReason::Flush => "Flush",
        TableFileCreationReason::Compaction => "Compaction",
    })
}

fn stall<S: Serializer>(c: &WriteStallCondition, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match c {
        WriteStallCondition::Normal => "Normal",
        WriteStallCondition::Delayed => "Delayed",
        WriteStallCondition::Stopped => "Stopped",
    })
}

/// A compaction score, to three decimals.
fn score<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((x * 1000.0).round() / 1000.0)
}

/// The input files of a compaction job, with its input and output level.
/// Serialized (flattened into the record) as RocksDB's `files_L<n>`, one
/// list of file numbers per level (the input level, the levels between,
/// the output level), then Shale's `input_level`, `output_level` and
/// `middle_levels` (`{"L<n>": [...]}` for the levels between).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JobInputs {
    pub input_level: usize,
    pub output_level: usize,
    /// Every input, the input level's first, each with its level.
    pub files: Vec<TableFileInfo>,
}

impl JobInputs {
    /// The levels listed, in order, each with its files' numbers: the
    /// input level and the output level always (maybe empty), the levels
    /// of other files in between.
    fn by_level(&self) -> Vec<(usize, Vec<u64>)> {
        let mut levels: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        levels.entry(self.input_level).or_default();
        levels.entry(self.output_level).or_default();
        for f in &self.files {
            levels.entry(f.level).or_default().push(f.file_number);
        }
        levels.into_iter().collect()
    }

    /// Bytes of the inputs.
    pub(crate) fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.file_size).sum()
    }
}

impl Serialize for JobInputs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let levels = self.by_level();
        let mut m = s.serialize_map(None)?;
        for (level, files) in &levels {
            m.serialize_entry(&format!("files_L{level}"), files)?;
        }
        m.serialize_entry("input_level", &self.input_level)?;
        m.serialize_entry("output_level", &self.output_level)?;
        let middle: BTreeMap<String, &Vec<u64>> = levels
            .iter()
            .filter(|(l, _)| *l != self.input_level && *l != self.output_level)
            .map(|(l, f)| (format!("L{l}"), f))
            .collect();
        m.serialize_entry("middle_levels", &middle)?;
        m.end()
    }
}

// ------------------------------------------------------------ flushes

/// `flush_started`: a flush begins (RocksDB's, `FlushJob::WriteLevel0Table`;
/// Shale has no `total_data_size` nor `flush_reason`). The listeners'
/// `on_flush_begin`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FlushStarted {
    pub job: u64,
    pub event: Kind<Self>,
    /// Memtables written by the job (Shale flushes one at a time: 1).
    pub num_memtables: u64,
    /// Entries in the memtable (values, tombstones, range tombstones).
    pub total_num_input_entries: u64,
    pub num_deletes: u64,
    /// The memtable's memory (arena, bloom filter, range tombstones).
    pub memory_usage: u64,
    pub num_range_deletes: u64,
    pub cf_name: String,
    pub cf: u32,
    pub memtable_id: u64,
}

impl Record for FlushStarted {
    const NAME: &'static str = "flush_started";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::FlushBegin(self.begin_info()))
    }
}

impl FlushStarted {
    /// The flush as it begins.
    pub(crate) fn begin_info(&self) -> FlushJobInfo {
        self.completed(Ok(()))
    }

    /// The completion of a flush that installed no table (it failed, with
    /// `status`, or its family was dropped, or it wrote nothing): the
    /// begin info with `status`.
    pub(crate) fn completed(&self, status: Result<(), Error>) -> FlushJobInfo {
        FlushJobInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            num_entries: self.total_num_input_entries,
            num_deletes: self.num_deletes,
            output_files: Vec::new(),
            status,
        }
    }
}

/// `flush_finished`: a flush's tables are installed (RocksDB's,
/// `FlushJob::Run`). The listeners' `on_flush_completed` of a flush that
/// installed its tables.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FlushFinished {
    pub job: u64,
    pub event: Kind<Self>,
    /// `Compression::name` of the tables' data blocks.
    pub output_compression: &'static str,
    /// Tables per level after the install.
    pub lsm_state: Vec<usize>,
    /// Oldest and newest blob file of the family (absent without blobs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_file_head: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_file_tail: Option<u64>,
    /// Immutable memtables of the family still to flush.
    pub immutable_memtables: u64,
    pub cf_name: String,
    pub cf: u32,
    pub memtable_id: u64,
    pub num_entries: u64,
    pub num_deletes: u64,
    /// The memtable's sequence numbers (`null` when empty).
    pub first_seq: Option<u64>,
    pub largest_seq: Option<u64>,
    /// Bytes of the tables written.
    pub bytes_written: u64,
    /// The tables installed (numbers; each with its level for the
    /// listeners).
    #[serde(serialize_with = "numbers")]
    pub output_files: Vec<TableFileInfo>,
}

impl Record for FlushFinished {
    const NAME: &'static str = "flush_finished";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::FlushCompleted(self.info()))
    }
}

impl FlushFinished {
    pub(crate) fn info(&self) -> FlushJobInfo {
        FlushJobInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            num_entries: self.num_entries,
            num_deletes: self.num_deletes,
            output_files: self.output_files.clone(),
            status: Ok(()),
        }
    }
}

/// `flush_discarded` (Shale's): a flush's table was dropped because a
/// snapshot taken meanwhile reads a value its filter changed; the job
/// runs again without the filter.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FlushDiscarded {
    pub event: Kind<Self>,
    pub job: u64,
    pub cf: u32,
    pub memtable_id: u64,
    pub reason: &'static str,
    pub cf_name: String,
}

impl Record for FlushDiscarded {
    const NAME: &'static str = "flush_discarded";
}

// ------------------------------------------------------------ compactions

/// `compaction_started` (RocksDB's, `CompactionJob::LogCompaction`; no
/// proximal-level fields). Written for compactions that rewrite data;
/// also built, not written, for trivial moves and whole-file drops (FIFO,
/// delete-only), whose LOG lines are `trivial_move`, `fifo_compaction`
/// and `delete_only_compaction`. The listeners' `on_compaction_begin` of
/// every compaction job.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompactionStarted {
    pub job: u64,
    pub event: Kind<Self>,
    pub cf_name: String,
    #[serde(serialize_with = "reason")]
    pub compaction_reason: CompactionReason,
    #[serde(flatten)]
    pub inputs: JobInputs,
    #[serde(serialize_with = "score")]
    pub score: f64,
    /// Bytes of the input files.
    pub input_data_size: u64,
    /// The oldest live snapshot (-1: none).
    pub oldest_snapshot_seqno: i64,
    pub cf: u32,
    /// Whether the inputs move by a MANIFEST edit alone (never written: a
    /// trivial move's begin has no LOG line).
    #[serde(skip)]
    pub trivial_move: bool,
    /// For a job that drops whole files by a MANIFEST edit (FIFO,
    /// delete-only), their entries, all dropped (never written: such a
    /// job's begin has no LOG line).
    #[serde(skip)]
    pub drops_records: Option<u64>,
}

impl Record for CompactionStarted {
    const NAME: &'static str = "compaction_started";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::CompactionBegin(self.begin_info()))
    }
}

impl CompactionStarted {
    pub(crate) fn begin_info(&self) -> CompactionJobInfo {
        self.completed(Ok(()))
    }

    /// The completion of a job that installed nothing (it failed, with
    /// `status`, or its family was dropped): the begin info with `status`.
    pub(crate) fn completed(&self, status: Result<(), Error>) -> CompactionJobInfo {
        CompactionJobInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            reason: self.compaction_reason,
            base_input_level: self.inputs.input_level,
            output_level: self.inputs.output_level,
            input_files: self.inputs.files.clone(),
            output_files: Vec::new(),
            trivial_move: self.trivial_move,
            num_input_records: 0,
            num_dropped_records: self.drops_records.unwrap_or(0),
            status,
        }
    }
}

/// `compaction_finished`: a compaction's outputs are installed (RocksDB's,
/// `CompactionJob::Install`; no IO timings, single-delete fall-through or
/// proximal-level fields). The listeners' `on_compaction_completed`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompactionFinished {
    pub job: u64,
    pub event: Kind<Self>,
    pub compaction_time_micros: u64,
    pub compaction_time_cpu_micros: u64,
    pub output_level: usize,
    pub num_output_files: u64,
    /// Bytes of the tables written.
    pub total_output_size: u64,
    /// Blob files written and their bytes (RocksDB writes these two only
    /// when non-zero; Shale always).
    pub num_blob_output_files: u64,
    pub total_blob_output_size: u64,
    pub num_input_records: u64,
    /// Entries in the output tables.
    pub num_output_records: u64,
    pub num_subcompactions: u64,
    pub output_compression: &'static str,
    pub num_single_delete_mismatches: u64,
    pub lsm_state: Vec<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_file_head: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob_file_tail: Option<u64>,
    pub cf_name: String,
    pub cf: u32,
    #[serde(serialize_with = "reason")]
    pub compaction_reason: CompactionReason,
    pub input_level: usize,
    /// The inputs (their count; each with its level for the listeners).
    #[serde(rename = "num_input_files", serialize_with = "count")]
    pub inputs: Vec<TableFileInfo>,
    #[serde(serialize_with = "numbers")]
    pub output_files: Vec<TableFileInfo>,
    /// `num_subcompactions` (Shale's older name).
    pub subcompactions: u64,
    /// Bytes read from the input tables.
    pub total_input_size: u64,
    pub num_dropped_records: u64,
    pub blob_bytes_relocated: u64,
    pub blob_garbage_bytes: u64,
}

impl Record for CompactionFinished {
    const NAME: &'static str = "compaction_finished";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::CompactionCompleted(self.info()))
    }
}

impl CompactionFinished {
    pub(crate) fn info(&self) -> CompactionJobInfo {
        CompactionJobInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            reason: self.compaction_reason,
            base_input_level: self.input_level,
            output_level: self.output_level,
            input_files: self.inputs.clone(),
            output_files: self.output_files.clone(),
            trivial_move: false,
            num_input_records: self.num_input_records,
            num_dropped_records: self.num_dropped_records,
            status: Ok(()),
        }
    }
}

/// `compaction_discarded` (Shale's): a compaction's outputs were dropped
/// because a snapshot taken meanwhile reads a value its filter changed;
/// the job runs again without the filter.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CompactionDiscarded {
    pub event: Kind<Self>,
    pub job: u64,
    pub cf: u32,
    pub reason: &'static str,
    pub cf_name: String,
}

impl Record for CompactionDiscarded {
    const NAME: &'static str = "compaction_discarded";
}

/// `trivial_move`: files moved to a lower level by a MANIFEST edit alone
/// (RocksDB's, `DBImpl::BackgroundCompaction`; RocksDB's `files` is a
/// count, Shale's the file numbers). The listeners'
/// `on_compaction_completed` of a trivial move.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TrivialMove {
    pub job: u64,
    pub event: Kind<Self>,
    pub destination_level: usize,
    /// The files moved, each with the level it left.
    #[serde(serialize_with = "numbers")]
    pub files: Vec<TableFileInfo>,
    pub total_files_size: u64,
    /// Inputs already at the destination level, left in place (a
    /// universal run merged by moving the others; absent when none).
    #[serde(serialize_with = "numbers", skip_serializing_if = "Vec::is_empty")]
    pub files_at_destination: Vec<TableFileInfo>,
    pub cf_name: String,
    pub cf: u32,
    #[serde(serialize_with = "reason")]
    pub compaction_reason: CompactionReason,
    pub from_level: usize,
    /// `destination_level` (Shale's older name).
    pub to_level: usize,
    /// `total_files_size` (Shale's older name).
    pub bytes: u64,
    pub lsm_state: Vec<usize>,
}

impl Record for TrivialMove {
    const NAME: &'static str = "trivial_move";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::CompactionCompleted(self.info()))
    }
}

impl TrivialMove {
    pub(crate) fn info(&self) -> CompactionJobInfo {
        CompactionJobInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            reason: self.compaction_reason,
            base_input_level: self.from_level,
            output_level: self.destination_level,
            input_files: self
                .files
                .iter()
                .chain(&self.files_at_destination)
                .cloned()
                .collect(),
            output_files: self
                .files
                .iter()
                .map(|f| TableFileInfo {
                    level: self.destination_level,
                    ..f.clone()
                })
                .collect(),
            trivial_move: true,
            num_input_records: 0,
            num_dropped_records: 0,
            status: Ok(()),
        }
    }
}

/// The listener info of a job that dropped whole `files` by a MANIFEST
/// edit: no outputs, every entry dropped, the lowest and highest input
/// levels as its levels.
fn drop_info(
    (cf_name, cf, job): (&str, u32, u64),
    reason: CompactionReason,
    files: &[TableFileInfo],
    num_dropped_records: u64,
) -> CompactionJobInfo {
    let levels = files.iter().map(|f| f.level);
    CompactionJobInfo {
        cf_name: cf_name.to_string(),
        cf_id: cf,
        job_id: job,
        reason,
        base_input_level: levels.clone().min().unwrap_or(0),
        output_level: levels.max().unwrap_or(0),
        input_files: files.to_vec(),
        output_files: Vec::new(),
        trivial_move: false,
        num_input_records: 0,
        num_dropped_records,
        status: Ok(()),
    }
}

/// `fifo_compaction` (Shale's; RocksDB logs its FIFO deletions as text):
/// the oldest L0 tables dropped past the size cap or the TTL. The
/// listeners' `on_compaction_completed` of the drop.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FifoCompaction {
    pub event: Kind<Self>,
    pub cf: u32,
    /// `ttl` or `max_table_files_size`.
    pub reason: &'static str,
    #[serde(serialize_with = "reason")]
    pub compaction_reason: CompactionReason,
    #[serde(serialize_with = "numbers")]
    pub files: Vec<TableFileInfo>,
    pub bytes: u64,
    pub lsm_state: Vec<usize>,
    pub job: u64,
    pub cf_name: String,
    /// Entries of the dropped tables.
    pub num_dropped_records: u64,
}

impl Record for FifoCompaction {
    const NAME: &'static str = "fifo_compaction";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::CompactionCompleted(self.info()))
    }
}

impl FifoCompaction {
    pub(crate) fn info(&self) -> CompactionJobInfo {
        drop_info(
            (&self.cf_name, self.cf, self.job),
            self.compaction_reason,
            &self.files,
            self.num_dropped_records,
        )
    }
}

/// `delete_only_compaction` (Shale's): tables wholly covered by a range
/// tombstone no snapshot needs (or wholly expired) dropped by a MANIFEST
/// edit. The listeners' `on_compaction_completed` of the drop.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DeleteOnlyCompaction {
    pub event: Kind<Self>,
    pub cf: u32,
    pub job: u64,
    #[serde(serialize_with = "reason")]
    pub compaction_reason: CompactionReason,
    #[serde(serialize_with = "numbers")]
    pub files: Vec<TableFileInfo>,
    pub bytes: u64,
    pub lsm_state: Vec<usize>,
    pub cf_name: String,
    pub num_dropped_records: u64,
}

impl Record for DeleteOnlyCompaction {
    const NAME: &'static str = "delete_only_compaction";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::CompactionCompleted(self.info()))
    }
}

impl DeleteOnlyCompaction {
    pub(crate) fn info(&self) -> CompactionJobInfo {
        drop_info(
            (&self.cf_name, self.cf, self.job),
            self.compaction_reason,
            &self.files,
            self.num_dropped_records,
        )
    }
}

// ------------------------------------------------------------ files

/// The `table_properties` object of `table_file_creation`: RocksDB's names
/// and order, the properties Shale's tables store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct TablePropertiesRecord {
    pub data_size: u64,
    pub index_size: u64,
    pub filter_size: u64,
    pub raw_key_size: u64,
    pub raw_average_key_size: u64,
    pub raw_value_size: u64,
    pub raw_average_value_size: u64,
    pub num_data_blocks: u64,
    pub num_entries: u64,
    pub num_deletions: u64,
    pub num_range_deletions: u64,
    pub format_version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_family_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column_family_id: Option<u32>,
    pub prefix_extractor_name: String,
    pub compression: String,
    pub creation_time: u64,
    pub newest_key_time: u64,
    pub db_id: String,
    pub orig_file_number: u64,
}

/// `table_file_creation`: a flush or compaction wrote (and synced) a
/// table (RocksDB's, `EventHelpers::LogAndNotifyTableFileCreationFinished`;
/// no file checksum). Written for every table a job writes, a discarded
/// run's too. The listeners' `on_table_file_created`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TableFileCreation {
    pub cf_name: String,
    pub job: u64,
    pub event: Kind<Self>,
    pub file_number: u64,
    pub file_size: u64,
    pub smallest_seqno: u64,
    pub largest_seqno: u64,
    pub table_properties: TablePropertiesRecord,
    /// The smallest blob file the table references (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest_blob_file_number: Option<u64>,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
    pub cf: u32,
    /// The level the job installs the table in.
    pub level: usize,
    /// `table_properties.num_entries` and `.num_deletions` (Shale's older
    /// fields).
    pub num_entries: u64,
    pub num_deletions: u64,
    #[serde(serialize_with = "creation_reason")]
    pub reason: TableFileCreationReason,
    /// The file's path (listeners only: the LOG names the directory at
    /// open).
    #[serde(skip)]
    pub file_path: PathBuf,
}

impl Record for TableFileCreation {
    const NAME: &'static str = "table_file_creation";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::TableFileCreated(self.info()))
    }
}

impl TableFileCreation {
    pub(crate) fn info(&self) -> TableFileCreationInfo {
        TableFileCreationInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            job_id: self.job,
            reason: self.reason,
            file: TableFileInfo {
                file_number: self.file_number,
                level: self.level,
                file_size: self.file_size,
            },
            file_path: self.file_path.clone(),
            num_entries: self.num_entries,
        }
    }
}

/// `table_file_deletion`: an obsolete table was deleted, or deleting it
/// failed (RocksDB's, `EventHelpers::LogAndNotifyTableFileDeletion`; no
/// `job`: Shale's deletions belong to no job). The listeners'
/// `on_table_file_deleted`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TableFileDeletion {
    pub event: Kind<Self>,
    pub file_number: u64,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
    #[serde(skip)]
    pub file_path: PathBuf,
}

impl Record for TableFileDeletion {
    const NAME: &'static str = "table_file_deletion";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::TableFileDeleted(self.info()))
    }
}

impl TableFileDeletion {
    pub(crate) fn info(&self) -> TableFileDeletionInfo {
        TableFileDeletionInfo {
            file_number: self.file_number,
            file_path: self.file_path.clone(),
            status: self.status.clone(),
        }
    }
}

/// `blob_file_deletion`: an obsolete blob file was deleted (RocksDB's,
/// without `job`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BlobFileDeletion {
    pub event: Kind<Self>,
    pub file_number: u64,
    #[serde(serialize_with = "status")]
    pub status: Result<(), Error>,
}

impl Record for BlobFileDeletion {
    const NAME: &'static str = "blob_file_deletion";
}

// ------------------------------------------------------------ the rest

/// `stall_condition_changed` (Shale's; RocksDB tells only listeners): a
/// family's write stall condition changed. The listeners'
/// `on_stall_conditions_changed`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StallConditionChanged {
    pub event: Kind<Self>,
    pub cf: u32,
    #[serde(serialize_with = "stall")]
    pub prev: WriteStallCondition,
    #[serde(serialize_with = "stall")]
    pub cur: WriteStallCondition,
    /// What holds writers now (`none` when `cur` is `Normal`).
    pub cause: &'static str,
    pub cf_name: String,
}

impl Record for StallConditionChanged {
    const NAME: &'static str = "stall_condition_changed";
    fn listener_event(&self) -> Option<Event> {
        Some(Event::StallConditionsChanged(self.info()))
    }
}

impl StallConditionChanged {
    pub(crate) fn info(&self) -> WriteStallInfo {
        WriteStallInfo {
            cf_name: self.cf_name.clone(),
            cf_id: self.cf,
            prev: self.prev,
            cur: self.cur,
        }
    }
}

/// `column_family_created` (Shale's).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ColumnFamilyCreated {
    pub event: Kind<Self>,
    pub id: u32,
    pub name: String,
}

impl Record for ColumnFamilyCreated {
    const NAME: &'static str = "column_family_created";
}

/// `column_family_dropped` (Shale's).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ColumnFamilyDropped {
    pub event: Kind<Self>,
    pub id: u32,
    pub name: String,
}

impl Record for ColumnFamilyDropped {
    const NAME: &'static str = "column_family_dropped";
}

/// `options_changed` (Shale's): `Db::set_options_cf` succeeded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct OptionsChanged {
    pub event: Kind<Self>,
    /// The family's name.
    pub cf: String,
    /// `name=value ...` as given.
    pub changes: String,
}

impl Record for OptionsChanged {
    const NAME: &'static str = "options_changed";
}

/// `db_options_changed` (Shale's): `Db::set_db_options` succeeded.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DbOptionsChanged {
    pub event: Kind<Self>,
    pub changes: String,
}

impl Record for DbOptionsChanged {
    const NAME: &'static str = "db_options_changed";
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{json, Value};

    use super::super::info_log::event_json;
    use super::*;

    fn parse<R: Record>(r: &R) -> Value {
        let v: Value = serde_json::from_str(&event_json(42, r)).expect("JSON");
        assert_eq!(v["time_micros"], 42);
        assert_eq!(v["event"], R::NAME);
        v
    }

    fn file(file_number: u64, level: usize, file_size: u64) -> TableFileInfo {
        TableFileInfo {
            file_number,
            level,
            file_size,
        }
    }

    fn numbers_of(files: &[TableFileInfo]) -> Value {
        json!(files.iter().map(|f| f.file_number).collect::<Vec<_>>())
    }

    // One sample per kind (optional members absent).

    fn flush_started() -> FlushStarted {
        FlushStarted {
            job: 3,
            event: Kind::new(),
            num_memtables: 1,
            total_num_input_entries: 10,
            num_deletes: 4,
            memory_usage: 1 << 20,
            num_range_deletes: 1,
            cf_name: "a".into(),
            cf: 2,
            memtable_id: 9,
        }
    }

    fn flush_finished() -> FlushFinished {
        FlushFinished {
            job: 3,
            event: Kind::new(),
            output_compression: "LZ4",
            lsm_state: vec![1, 0, 2],
            blob_file_head: None,
            blob_file_tail: None,
            immutable_memtables: 1,
            cf_name: "a".into(),
            cf: 2,
            memtable_id: 9,
            num_entries: 10,
            num_deletes: 4,
            first_seq: Some(5),
            largest_seq: None,
            bytes_written: 4096,
            output_files: vec![file(12, 0, 4096)],
        }
    }

    fn flush_discarded() -> FlushDiscarded {
        FlushDiscarded {
            event: Kind::new(),
            job: 1,
            cf: 0,
            memtable_id: 2,
            reason: "r",
            cf_name: "default".into(),
        }
    }

    fn compaction_started() -> CompactionStarted {
        let inputs = JobInputs {
            input_level: 0,
            output_level: 3,
            files: vec![
                file(7, 0, 100),
                file(8, 0, 100),
                file(9, 2, 150),
                file(10, 3, 50),
            ],
        };
        CompactionStarted {
            job: 5,
            event: Kind::new(),
            cf_name: "de\"fault\n".into(),
            compaction_reason: CompactionReason::UniversalSizeRatio,
            input_data_size: inputs.bytes(),
            inputs,
            score: 1.23456,
            oldest_snapshot_seqno: -1,
            cf: 0,
            trivial_move: false,
            drops_records: None,
        }
    }

    fn compaction_finished() -> CompactionFinished {
        CompactionFinished {
            job: 5,
            event: Kind::new(),
            compaction_time_micros: 100,
            compaction_time_cpu_micros: 90,
            output_level: 3,
            num_output_files: 1,
            total_output_size: 300,
            num_blob_output_files: 0,
            total_blob_output_size: 0,
            num_input_records: 40,
            num_output_records: 30,
            num_subcompactions: 2,
            output_compression: "ZSTD",
            num_single_delete_mismatches: 0,
            lsm_state: vec![0, 0, 0, 1],
            blob_file_head: None,
            blob_file_tail: None,
            cf_name: "default".into(),
            cf: 0,
            compaction_reason: CompactionReason::UniversalSizeRatio,
            input_level: 0,
            inputs: compaction_started().inputs.files,
            output_files: vec![file(11, 3, 300)],
            subcompactions: 2,
            total_input_size: 400,
            num_dropped_records: 10,
            blob_bytes_relocated: 0,
            blob_garbage_bytes: 0,
        }
    }

    fn compaction_discarded() -> CompactionDiscarded {
        CompactionDiscarded {
            event: Kind::new(),
            job: 1,
            cf: 0,
            reason: "r",
            cf_name: "default".into(),
        }
    }

    fn trivial_move() -> TrivialMove {
        TrivialMove {
            job: 6,
            event: Kind::new(),
            destination_level: 6,
            files: vec![file(20, 0, 10), file(21, 0, 20)],
            total_files_size: 30,
            files_at_destination: Vec::new(),
            cf_name: "default".into(),
            cf: 0,
            compaction_reason: CompactionReason::LevelL0FilesNum,
            from_level: 0,
            to_level: 6,
            bytes: 30,
            lsm_state: vec![0, 0, 0, 0, 0, 0, 2],
        }
    }

    fn dropped() -> Vec<TableFileInfo> {
        vec![file(30, 5, 100), file(31, 6, 200)]
    }

    fn fifo_compaction() -> FifoCompaction {
        FifoCompaction {
            event: Kind::new(),
            cf: 1,
            reason: "ttl",
            compaction_reason: CompactionReason::FifoTtl,
            files: dropped(),
            bytes: 300,
            lsm_state: vec![2],
            job: 8,
            cf_name: "f".into(),
            num_dropped_records: 77,
        }
    }

    fn delete_only_compaction() -> DeleteOnlyCompaction {
        DeleteOnlyCompaction {
            event: Kind::new(),
            cf: 1,
            job: 8,
            compaction_reason: CompactionReason::DeleteOnly,
            files: dropped(),
            bytes: 300,
            lsm_state: vec![2],
            cf_name: "f".into(),
            num_dropped_records: 77,
        }
    }

    fn table_file_creation() -> TableFileCreation {
        TableFileCreation {
            cf_name: "default".into(),
            job: 4,
            event: Kind::new(),
            file_number: 15,
            file_size: 2048,
            smallest_seqno: 1,
            largest_seqno: 9,
            table_properties: TablePropertiesRecord {
                num_entries: 9,
                num_deletions: 2,
                ..TablePropertiesRecord::default()
            },
            oldest_blob_file_number: None,
            status: Ok(()),
            cf: 0,
            level: 1,
            num_entries: 9,
            num_deletions: 2,
            reason: TableFileCreationReason::Compaction,
            file_path: PathBuf::from("/db/000015.sst"),
        }
    }

    fn table_file_deletion() -> TableFileDeletion {
        TableFileDeletion {
            event: Kind::new(),
            file_number: 15,
            status: Err(Error::InvalidArgument("gone".into())),
            file_path: PathBuf::from("/db/000015.sst"),
        }
    }

    fn blob_file_deletion() -> BlobFileDeletion {
        BlobFileDeletion {
            event: Kind::new(),
            file_number: 3,
            status: Ok(()),
        }
    }

    fn stall_condition_changed() -> StallConditionChanged {
        StallConditionChanged {
            event: Kind::new(),
            cf: 3,
            prev: WriteStallCondition::Normal,
            cur: WriteStallCondition::Stopped,
            cause: "level0_stop",
            cf_name: "s".into(),
        }
    }

    fn column_family_created() -> ColumnFamilyCreated {
        ColumnFamilyCreated {
            event: Kind::new(),
            id: 1,
            name: "n\u{1b}".into(),
        }
    }

    fn column_family_dropped() -> ColumnFamilyDropped {
        ColumnFamilyDropped {
            event: Kind::new(),
            id: 1,
            name: "n".into(),
        }
    }

    fn options_changed() -> OptionsChanged {
        OptionsChanged {
            event: Kind::new(),
            cf: "default".into(),
            changes: "a=1 b=2".into(),
        }
    }

    fn db_options_changed() -> DbOptionsChanged {
        DbOptionsChanged {
            event: Kind::new(),
            changes: "a=1".into(),
        }
    }

    /// RocksDB's `JSONWriter` layout: `", "` between members, `": "` after
    /// keys, the members in declaration order after `time_micros`, JSON
    /// escapes in strings.
    #[test]
    fn lines_have_rocksdb_layout() {
        let r = TableFileDeletion {
            status: Ok(()),
            file_number: 12,
            ..table_file_deletion()
        };
        assert_eq!(
            event_json(7, &r),
            r#"{"time_micros": 7, "event": "table_file_deletion", "file_number": 12, "status": "OK"}"#
        );
        assert_eq!(
            event_json(1, &compaction_started()),
            concat!(
                r#"{"time_micros": 1, "job": 5, "event": "compaction_started", "#,
                r#""cf_name": "de\"fault\n", "compaction_reason": "UniversalSizeRatio", "#,
                r#""files_L0": [7, 8], "files_L2": [9], "files_L3": [10], "#,
                r#""input_level": 0, "output_level": 3, "middle_levels": {"L2": [9]}, "#,
                r#""score": 1.235, "input_data_size": 400, "oldest_snapshot_seqno": -1, "cf": 0}"#
            )
        );
    }

    #[test]
    fn flush_lines_agree_with_the_listener_infos() {
        let s = flush_started();
        let v = parse(&s);
        for i in [s.begin_info(), s.completed(Err(Error::ShutdownInProgress))] {
            assert_eq!(v["job"], i.job_id);
            assert_eq!(v["cf_name"], i.cf_name);
            assert_eq!(v["cf"], i.cf_id);
            assert_eq!(v["total_num_input_entries"], i.num_entries);
            assert_eq!(v["num_deletes"], i.num_deletes);
            assert!(i.output_files.is_empty());
        }
        assert!(matches!(s.listener_event(), Some(Event::FlushBegin(_))));

        let f = flush_finished();
        let v = parse(&f);
        let i = f.info();
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["num_entries"], i.num_entries);
        assert_eq!(v["num_deletes"], i.num_deletes);
        assert_eq!(v["output_files"], numbers_of(&i.output_files));
        assert_eq!(v["lsm_state"], json!([1, 0, 2]));
        assert_eq!(v["largest_seq"], Value::Null);
        assert!(v.get("blob_file_head").is_none(), "{v}");
        assert!(i.status.is_ok());
        assert!(matches!(f.listener_event(), Some(Event::FlushCompleted(_))));
    }

    #[test]
    fn compaction_lines_agree_with_the_listener_infos() {
        let s = compaction_started();
        let v = parse(&s);
        for i in [s.begin_info(), s.completed(Err(Error::ShutdownInProgress))] {
            assert_eq!(v["job"], i.job_id);
            assert_eq!(v["cf_name"], i.cf_name);
            assert_eq!(v["cf"], i.cf_id);
            assert_eq!(v["compaction_reason"], i.reason.name());
            assert_eq!(v["input_level"], i.base_input_level);
            assert_eq!(v["output_level"], i.output_level);
            for level in [0, 2, 3] {
                let at: Vec<TableFileInfo> = i
                    .input_files
                    .iter()
                    .filter(|f| f.level == level)
                    .cloned()
                    .collect();
                assert_eq!(v[format!("files_L{level}")], numbers_of(&at));
            }
            let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
            assert_eq!(v["input_data_size"], size);
            assert_eq!(i.num_dropped_records, 0);
        }
        assert!(matches!(
            s.listener_event(),
            Some(Event::CompactionBegin(_))
        ));

        let f = CompactionFinished {
            blob_file_head: Some(3),
            blob_file_tail: Some(4),
            ..compaction_finished()
        };
        let v = parse(&f);
        let i = f.info();
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["compaction_reason"], i.reason.name());
        assert_eq!(v["input_level"], i.base_input_level);
        assert_eq!(v["output_level"], i.output_level);
        assert_eq!(v["num_input_files"], i.input_files.len());
        assert_eq!(v["output_files"], numbers_of(&i.output_files));
        assert_eq!(v["num_output_files"], i.output_files.len());
        assert_eq!(v["num_input_records"], i.num_input_records);
        assert_eq!(v["num_dropped_records"], i.num_dropped_records);
        assert_eq!(v["subcompactions"], v["num_subcompactions"]);
        assert_eq!(v["blob_file_head"], 3);
        assert!(!i.trivial_move && i.status.is_ok());
        assert!(matches!(
            f.listener_event(),
            Some(Event::CompactionCompleted(_))
        ));

        let t = trivial_move();
        let v = parse(&t);
        let i = t.info();
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["compaction_reason"], i.reason.name());
        assert_eq!(v["from_level"], i.base_input_level);
        assert_eq!(v["destination_level"], i.output_level);
        assert_eq!(v["to_level"], i.output_level);
        assert_eq!(v["files"], numbers_of(&i.input_files));
        assert_eq!(v["files"], numbers_of(&i.output_files));
        assert!(i.output_files.iter().all(|f| f.level == 6));
        let size: u64 = i.output_files.iter().map(|f| f.file_size).sum();
        assert_eq!(v["total_files_size"], size);
        assert_eq!(v["bytes"], size);
        assert!(i.trivial_move);
        assert!(v.get("files_at_destination").is_none(), "{v}");
        assert!(matches!(
            t.listener_event(),
            Some(Event::CompactionCompleted(_))
        ));
        let t = TrivialMove {
            files_at_destination: vec![file(22, 6, 5)],
            ..t
        };
        let v = parse(&t);
        let i = t.info();
        assert_eq!(v["files_at_destination"], json!([22]));
        assert_eq!(numbers_of(&i.input_files), json!([20, 21, 22]));
        assert_eq!(numbers_of(&i.output_files), json!([20, 21]));
    }

    #[test]
    fn drop_lines_agree_with_the_listener_infos() {
        let (fifo, only) = (fifo_compaction(), delete_only_compaction());
        for (v, i) in [(parse(&fifo), fifo.info()), (parse(&only), only.info())] {
            assert_eq!(v["job"], i.job_id);
            assert_eq!(v["cf_name"], i.cf_name);
            assert_eq!(v["cf"], i.cf_id);
            assert_eq!(v["compaction_reason"], i.reason.name());
            assert_eq!(v["files"], numbers_of(&i.input_files));
            assert_eq!(v["num_dropped_records"], i.num_dropped_records);
            let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
            assert_eq!(v["bytes"], size);
            assert_eq!((i.base_input_level, i.output_level), (5, 6));
            assert!(i.output_files.is_empty());
        }
        assert!(matches!(
            only.listener_event(),
            Some(Event::CompactionCompleted(_))
        ));
    }

    #[test]
    fn file_and_stall_lines_agree_with_the_listener_infos() {
        let c = table_file_creation();
        let v = parse(&c);
        let i = c.info();
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["file_number"], i.file.file_number);
        assert_eq!(v["file_size"], i.file.file_size);
        assert_eq!(v["level"], i.file.level);
        assert_eq!(v["num_entries"], i.num_entries);
        assert_eq!(v["table_properties"]["num_entries"], i.num_entries);
        assert_eq!(v["reason"], "Compaction");
        assert_eq!(v["status"], "OK");
        assert!(v.get("file_path").is_none() && v.get("oldest_blob_file_number").is_none());
        assert!(matches!(
            c.listener_event(),
            Some(Event::TableFileCreated(_))
        ));

        let d = table_file_deletion();
        let v = parse(&d);
        let i = d.info();
        assert_eq!(v["file_number"], i.file_number);
        assert_eq!(v["status"], i.status.unwrap_err().to_string());
        assert!(matches!(
            d.listener_event(),
            Some(Event::TableFileDeleted(_))
        ));

        let s = stall_condition_changed();
        let v = parse(&s);
        let i = s.info();
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["prev"], format!("{:?}", i.prev));
        assert_eq!(v["cur"], format!("{:?}", i.cur));
        assert!(matches!(
            s.listener_event(),
            Some(Event::StallConditionsChanged(_))
        ));
    }

    /// The kinds no listener hears still name themselves.
    #[test]
    fn log_only_kinds() {
        assert_eq!(parse(&flush_discarded())["memtable_id"], 2);
        parse(&compaction_discarded());
        let b = blob_file_deletion();
        assert!(b.listener_event().is_none());
        assert_eq!(parse(&b)["status"], "OK");
        assert_eq!(parse(&column_family_created())["name"], "n\u{1b}");
        parse(&column_family_dropped());
        assert_eq!(parse(&options_changed())["changes"], "a=1 b=2");
        parse(&db_options_changed());
    }

    /// The members of one line (`table_properties`' too; `files_L<n>` for
    /// each `files_L` member), without `time_micros`.
    fn members(v: &Value) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (k, x) in v.as_object().expect("an object") {
            if k == "time_micros" {
                continue;
            }
            if k.starts_with("files_L") {
                out.insert("files_L<n>".to_string());
            } else {
                out.insert(k.clone());
            }
            if k == "table_properties" {
                out.extend(x.as_object().expect("an object").keys().cloned());
            }
        }
        out
    }

    /// docs/format/log-events.md lists, under each kind's heading, exactly
    /// the members its lines carry (every optional member set here).
    #[test]
    fn the_format_doc_lists_every_member() {
        let doc = include_str!("../../../../docs/format/log-events.md");
        let section = |name: &str| -> BTreeSet<String> {
            let heading = doc
                .lines()
                .position(|l| l.starts_with("### ") && l.contains(&format!("`{name}`")))
                .unwrap_or_else(|| panic!("no heading for {name}"));
            doc.lines()
                .skip(heading + 1)
                .take_while(|l| !l.starts_with("## ") && !l.starts_with("### "))
                .filter_map(|l| l.strip_prefix("| `")?.split_once('`'))
                .map(|(m, _)| m.to_string())
                .collect()
        };
        let full_properties = TablePropertiesRecord {
            column_family_name: Some("default".into()),
            column_family_id: Some(0),
            ..TablePropertiesRecord::default()
        };
        let lines: Vec<(&str, Vec<Value>)> = vec![
            (FlushStarted::NAME, vec![parse(&flush_started())]),
            (
                FlushFinished::NAME,
                vec![parse(&FlushFinished {
                    blob_file_head: Some(1),
                    blob_file_tail: Some(2),
                    ..flush_finished()
                })],
            ),
            (FlushDiscarded::NAME, vec![parse(&flush_discarded())]),
            (
                TableFileCreation::NAME,
                vec![parse(&TableFileCreation {
                    oldest_blob_file_number: Some(3),
                    table_properties: full_properties,
                    ..table_file_creation()
                })],
            ),
            (TableFileDeletion::NAME, vec![parse(&table_file_deletion())]),
            (BlobFileDeletion::NAME, vec![parse(&blob_file_deletion())]),
            (CompactionStarted::NAME, vec![parse(&compaction_started())]),
            (
                CompactionFinished::NAME,
                vec![parse(&CompactionFinished {
                    blob_file_head: Some(1),
                    blob_file_tail: Some(2),
                    ..compaction_finished()
                })],
            ),
            (
                TrivialMove::NAME,
                vec![parse(&TrivialMove {
                    files_at_destination: vec![file(22, 6, 5)],
                    ..trivial_move()
                })],
            ),
            (FifoCompaction::NAME, vec![parse(&fifo_compaction())]),
            (
                DeleteOnlyCompaction::NAME,
                vec![parse(&delete_only_compaction())],
            ),
            (
                CompactionDiscarded::NAME,
                vec![parse(&compaction_discarded())],
            ),
            (
                StallConditionChanged::NAME,
                vec![parse(&stall_condition_changed())],
            ),
            (
                ColumnFamilyCreated::NAME,
                vec![
                    parse(&column_family_created()),
                    parse(&column_family_dropped()),
                ],
            ),
            (
                OptionsChanged::NAME,
                vec![parse(&options_changed()), parse(&db_options_changed())],
            ),
        ];
        for (name, values) in &lines {
            let carried: BTreeSet<String> = values.iter().flat_map(members).collect();
            assert_eq!(section(name), carried, "docs/format/log-events.md, {name}");
        }
    }
}
