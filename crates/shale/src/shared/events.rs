//! Builds the typed event records of `crate::events::records` from the
//! DB's own types and emits them: a record's `EVENT_LOG_v1` line
//! (`InfoLog::event`) and its listener call (queued on `DbInner::events`),
//! both from the same value.
//!
//! Every function here only builds values, writes a LOG line (as every
//! LOG line, possibly under the DB mutex) and pushes on the event queue:
//! no user code, so they may run under the DB mutex (the listeners run
//! later on the event thread). No listener info is built when no listener
//! is installed.

use std::sync::Arc;

use crate::error::Error;
use crate::events::admin_records::StallConditionChanged;
use crate::events::file_records::{
    BlobFileDeletion, TableFileCreation, TableFileDeletion, TablePropertiesRecord,
};
use crate::events::records::{CompactionStarted, FlushStarted, JobInputs, Kind, Record};
use crate::events::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionReason, ErrorRecoveryCompletedInfo,
    ErrorRecoveryInfo, ErrorSeverity, Event, TableFileCreationReason, TableFileInfo,
    WriteStallCondition,
};
use crate::memtable::MemTable;
use crate::sst::TableProperties;
use crate::stats::StallCondition;
use crate::version::filename::table_file_name;
use crate::version::FileMeta;

use super::error_state::{Reason, Severity};
use crate::shared::{DbInner, DbState};

/// Writes `record`'s LOG line and makes its listener call.
pub(crate) fn emit<R: Record>(db: &DbInner, record: &R) {
    db.log.event(record);
    notify(db, record);
}

/// Makes `record`'s listener call alone (a record whose kind has no LOG
/// line for this job: see `CompactionStarted`).
pub(crate) fn notify<R: Record>(db: &DbInner, record: &R) {
    if db.events.enabled() {
        if let Some(e) = record.listener_event() {
            db.events.record(e);
        }
    }
}

/// Queues the listener event `event` builds, if a listener is installed.
fn record(db: &DbInner, event: impl FnOnce() -> Event) {
    if db.events.enabled() {
        db.events.record(event());
    }
}

/// The name of family `cf` (empty once dropped).
pub(crate) fn cf_name(st: &DbState, cf: u32) -> String {
    st.cf(cf).map(|c| c.cf.name.clone()).unwrap_or_default()
}

/// Tables per level of family `cf`'s current version.
pub(crate) fn lsm_state(st: &DbState, cf: u32) -> Vec<usize> {
    st.versions.current(cf).files_per_level()
}

/// The oldest and newest blob file of family `cf`'s current version.
pub(crate) fn blob_file_span(st: &DbState, cf: u32) -> (Option<u64>, Option<u64>) {
    let v = st.versions.current(cf);
    let blobs = v.blob_files();
    (
        blobs.keys().next().copied(),
        blobs.keys().next_back().copied(),
    )
}

/// `f` at `level`, for a record's file list.
pub(crate) fn file_info(f: &FileMeta, level: usize) -> TableFileInfo {
    TableFileInfo {
        file_number: f.number,
        level,
        file_size: f.file_size,
    }
}

/// The files of `files` at `level`.
pub(crate) fn file_infos(files: &[Arc<FileMeta>], level: usize) -> Vec<TableFileInfo> {
    files.iter().map(|f| file_info(f, level)).collect()
}

/// Records a flush's begin: `flush_started`, `on_flush_begin`. Returns
/// the record, for a completion that installs nothing.
pub(crate) fn flush_started(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    job: u64,
    mem: &MemTable,
) -> FlushStarted {
    let r = FlushStarted {
        job,
        event: Kind::new(),
        num_memtables: 1,
        total_num_input_entries: mem.num_entries() as u64,
        num_deletes: mem.num_deletes() as u64,
        memory_usage: mem.approximate_memory_usage() as u64,
        num_range_deletes: mem.num_range_deletes() as u64,
        cf_name: cf_name(st, cf),
        cf,
        memtable_id: mem.id(),
    };
    emit(db, &r);
    r
}

/// Records the completion of a flush that installed no table (`status`
/// says whether it failed): `on_flush_completed` alone.
pub(crate) fn flush_completed(db: &DbInner, started: &FlushStarted, status: Result<(), Error>) {
    record(db, || Event::FlushCompleted(started.completed(status)));
}

/// The begin record of compaction job `job` of family `cf`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compaction_started(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    job: u64,
    reason: CompactionReason,
    inputs: JobInputs,
    score: f64,
    trivial_move: bool,
) -> CompactionStarted {
    CompactionStarted {
        job,
        event: Kind::new(),
        cf_name: cf_name(st, cf),
        compaction_reason: reason,
        input_data_size: inputs.bytes(),
        inputs,
        score,
        oldest_snapshot_seqno: db.snapshots.oldest().map_or(-1, |s| s as i64),
        cf,
        trivial_move,
        drops_records: None,
    }
}

/// The begin record of a job that drops `files` (level, table) by a
/// MANIFEST edit alone (FIFO's drops, delete-only compaction): the input
/// levels' lowest and highest as input and output level, every entry
/// dropped. Its begin has no LOG line: emit it with [`notify`].
pub(crate) fn drop_job_started(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    job: u64,
    reason: CompactionReason,
    files: &[(usize, Arc<FileMeta>)],
) -> CompactionStarted {
    let levels = files.iter().map(|(l, _)| *l);
    let inputs = JobInputs {
        input_level: levels.clone().min().unwrap_or(0),
        output_level: levels.max().unwrap_or(0),
        files: files.iter().map(|(l, f)| file_info(f, *l)).collect(),
    };
    let mut r = compaction_started(db, st, cf, job, reason, inputs, 0.0, false);
    r.drops_records = Some(files.iter().map(|(_, f)| f.num_entries).sum());
    r
}

/// Records the completion of a compaction job that installed nothing
/// (`status` says whether it failed): `on_compaction_completed` alone.
pub(crate) fn compaction_completed(
    db: &DbInner,
    started: &CompactionStarted,
    status: Result<(), Error>,
) {
    record(db, || Event::CompactionCompleted(started.completed(status)));
}

/// `p` (or, unknown, what `f` knows) as `table_file_creation` writes it.
fn table_properties(f: &FileMeta, p: Option<&TableProperties>) -> TablePropertiesRecord {
    let Some(p) = p else {
        return TablePropertiesRecord {
            num_entries: f.num_entries,
            num_deletions: f.num_deletions,
            num_range_deletions: f.num_range_deletions,
            newest_key_time: f.newest_key_time,
            orig_file_number: f.number,
            ..TablePropertiesRecord::default()
        };
    };
    let per_entry = |n: u64| n.checked_div(p.num_entries).unwrap_or(0);
    TablePropertiesRecord {
        data_size: p.data_size,
        index_size: p.index_size,
        filter_size: p.filter_size,
        raw_key_size: p.raw_key_size,
        raw_average_key_size: per_entry(p.raw_key_size),
        raw_value_size: p.raw_value_size,
        raw_average_value_size: per_entry(p.raw_value_size),
        num_data_blocks: p.num_data_blocks,
        num_entries: p.num_entries,
        num_deletions: p.num_deletions,
        num_range_deletions: p.num_range_deletions,
        format_version: p.format_version,
        column_family_name: p.column_family.as_ref().map(|(_, n)| n.clone()),
        column_family_id: p.column_family.as_ref().map(|(id, _)| *id),
        prefix_extractor_name: p.prefix_extractor.clone(),
        compression: p.compression_name.clone(),
        creation_time: p.creation_time,
        newest_key_time: f.newest_key_time,
        db_id: p.db_id.clone(),
        orig_file_number: p.file_number,
    }
}

/// Records the creation of table `f`, written by job `job` for `level`
/// with properties `props` (the job's, found by file number):
/// `table_file_creation`, `on_table_file_created`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn table_created(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    job: u64,
    reason: TableFileCreationReason,
    f: &FileMeta,
    level: usize,
    props: &[TableProperties],
) {
    let props = table_properties(f, props.iter().find(|p| p.file_number == f.number));
    let r = TableFileCreation {
        cf_name: cf_name(st, cf),
        job,
        event: Kind::new(),
        file_number: f.number,
        file_size: f.file_size,
        smallest_seqno: f.smallest_seq,
        largest_seqno: f.largest_seq,
        oldest_blob_file_number: (f.oldest_blob_file != 0).then_some(f.oldest_blob_file),
        status: Ok(()),
        cf,
        level,
        num_entries: props.num_entries,
        num_deletions: props.num_deletions,
        table_properties: props,
        reason,
        file_path: db.dir.join(table_file_name(f.number)),
    };
    emit(db, &r);
}

/// Records the deletion (or failed deletion) of table `number`:
/// `table_file_deletion`, `on_table_file_deleted`.
pub(crate) fn table_deleted(db: &DbInner, number: u64, status: Result<(), Error>) {
    emit(
        db,
        &TableFileDeletion {
            event: Kind::new(),
            file_number: number,
            status,
            file_path: db.dir.join(table_file_name(number)),
        },
    );
}

/// Records the deletion (or failed deletion) of blob file `number`:
/// `blob_file_deletion`.
pub(crate) fn blob_deleted(db: &DbInner, number: u64, status: Result<(), Error>) {
    emit(
        db,
        &BlobFileDeletion {
            event: Kind::new(),
            file_number: number,
            status,
        },
    );
}

fn stall(c: StallCondition) -> WriteStallCondition {
    match c {
        StallCondition::Normal => WriteStallCondition::Normal,
        StallCondition::Delayed(_) => WriteStallCondition::Delayed,
        StallCondition::Stopped(_) => WriteStallCondition::Stopped,
    }
}

/// Records family `cf`'s stall condition going from `prev` to `cur`, if
/// that changes what writers see: `stall_condition_changed`,
/// `on_stall_conditions_changed`.
pub(crate) fn stall_changed(
    db: &DbInner,
    cf: u32,
    name: &str,
    prev: StallCondition,
    cur: StallCondition,
) {
    let (p, c) = (stall(prev), stall(cur));
    if p == c {
        return;
    }
    emit(
        db,
        &StallConditionChanged {
            event: Kind::new(),
            cf,
            prev: p,
            cur: c,
            cause: cause(cur).unwrap_or("none"),
            cf_name: name.to_string(),
        },
    );
}

fn cause(c: StallCondition) -> Option<&'static str> {
    use crate::stats::StallCause::*;
    match c {
        StallCondition::Normal => None,
        StallCondition::Delayed(x) | StallCondition::Stopped(x) => Some(match x {
            L0Slowdown => "level0_slowdown",
            L0Stop => "level0_stop",
            PendingStop => "pending_compaction_bytes_stop",
            PendingSlowdown => "pending_compaction_bytes_slowdown",
            MemtableStop => "memtable_limit",
        }),
    }
}

fn severity(s: Severity) -> ErrorSeverity {
    match s {
        Severity::Soft => ErrorSeverity::Soft,
        Severity::Hard => ErrorSeverity::Hard,
        Severity::Fatal => ErrorSeverity::Fatal,
    }
}

/// Records a background error.
pub(crate) fn background_error(db: &DbInner, reason: Reason, s: Severity, e: &Error) {
    if !db.events.enabled() {
        return;
    }
    let reason = match reason {
        Reason::Flush => BackgroundErrorReason::Flush,
        Reason::Compaction => BackgroundErrorReason::Compaction,
        Reason::ManifestWrite => BackgroundErrorReason::ManifestWrite,
        Reason::Wal => BackgroundErrorReason::WriteCallback,
    };
    db.events
        .record(Event::BackgroundError(BackgroundErrorInfo {
            reason,
            severity: severity(s),
            error: e.clone(),
        }));
}

/// Records a resume's begin.
pub(crate) fn recovery_begin(db: &DbInner, e: &Error, automatic: bool) {
    if !db.events.enabled() {
        return;
    }
    db.events
        .record(Event::ErrorRecoveryBegin(ErrorRecoveryInfo {
            error: e.clone(),
            automatic,
        }));
}

/// Records a resume's end.
pub(crate) fn recovery_completed(
    db: &DbInner,
    old: &Error,
    automatic: bool,
    result: Result<(), Error>,
) {
    if !db.events.enabled() {
        return;
    }
    db.events
        .record(Event::ErrorRecoveryCompleted(ErrorRecoveryCompletedInfo {
            old_error: old.clone(),
            automatic,
            result,
        }));
}
