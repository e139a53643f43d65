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

use super::notifier::Event;
use super::{
    CompactionJobInfo, CompactionReason, FlushJobInfo, TableFileCreationReason, TableFileInfo,
    WriteStallCondition,
};
use crate::error::Error;
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use std::collections::BTreeMap;
use std::marker::PhantomData;

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

/// A file list as its file numbers (`[12, 13]`).
pub(super) fn numbers<S: Serializer>(files: &[TableFileInfo], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(files.iter().map(|f| f.file_number))
}

/// A file list as its length.
pub(super) fn count<S: Serializer>(files: &[TableFileInfo], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(files.len() as u64)
}

/// RocksDB's `Status::ToString`: `"OK"` or the error.
pub(super) fn status<S: Serializer>(r: &Result<(), Error>, s: S) -> Result<S::Ok, S::Error> {
    match r {
        Ok(()) => s.serialize_str("OK"),
        Err(e) => s.collect_str(e),
    }
}

pub(super) fn reason<S: Serializer>(r: &CompactionReason, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.name())
}

pub(super) fn creation_reason<S: Serializer>(
    r: &TableFileCreationReason,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(match r {
        TableFileCreationReason::Flush => "Flush",
        TableFileCreationReason::Compaction => "Compaction",
    })
}

pub(super) fn stall<S: Serializer>(c: &WriteStallCondition, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match c {
        WriteStallCondition::Normal => "Normal",
        WriteStallCondition::Delayed => "Delayed",
        WriteStallCondition::Stopped => "Stopped",
    })
}

/// A compaction score, to three decimals.
pub(super) fn score<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
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

#[cfg(test)]
mod tests;
