//! Builds the event infos of `crate::events` from the DB's own types and
//! records them with `DbInner::events`.
//!
//! Every function here only builds a value and pushes it on the event
//! queue: no IO, no user code, so they may run under the DB mutex (the
//! listeners run later on the event thread). Each returns at once when no
//! listener is installed, so the engine pays nothing for events then.

use std::sync::Arc;

use crate::error::Error;
use crate::events::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionJobInfo, CompactionReason,
    ErrorRecoveryCompletedInfo, ErrorRecoveryInfo, ErrorSeverity, Event, FlushJobInfo,
    TableFileCreationInfo, TableFileCreationReason, TableFileDeletionInfo, TableFileInfo,
    WriteStallCondition, WriteStallInfo,
};
use crate::stats::StallCondition;
use crate::version::filename::table_file_name;
use crate::version::FileMeta;

use super::error_state::{Reason, Severity};
use crate::shared::{DbInner, DbState};

/// The name of family `cf` (empty once dropped).
pub(crate) fn cf_name(st: &DbState, cf: u32) -> String {
    st.cf(cf).map(|c| c.cf.name.clone()).unwrap_or_default()
}

/// The info of a job that drops `files` (level, table) by a MANIFEST edit
/// alone (FIFO's drops, delete-only compaction), given its status: `Ok` at
/// begin, the edit's outcome at completion. Inputs listed, no outputs,
/// every entry dropped, the input levels' lowest and highest as base input
/// and output level.
pub(crate) fn drop_job_info(
    st: &DbState,
    cf: u32,
    job_id: u64,
    reason: CompactionReason,
    files: &[(usize, Arc<FileMeta>)],
) -> impl Fn(Result<(), Error>) -> CompactionJobInfo {
    let cf_name = cf_name(st, cf);
    let levels = files.iter().map(|(l, _)| *l);
    let lowest = levels.clone().min().unwrap_or(0);
    let highest = levels.max().unwrap_or(0);
    let input_files: Vec<TableFileInfo> = files.iter().map(|(l, f)| file_info(f, *l)).collect();
    let dropped = files.iter().map(|(_, f)| f.num_entries).sum();
    move |status| CompactionJobInfo {
        cf_name: cf_name.clone(),
        cf_id: cf,
        job_id,
        reason,
        base_input_level: lowest,
        output_level: highest,
        input_files: input_files.clone(),
        output_files: Vec::new(),
        trivial_move: false,
        num_input_records: 0,
        num_dropped_records: dropped,
        status,
    }
}

/// `f` at `level`, for an info's file list.
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

/// Records the creation of `f`, written by job `job_id` for `level`.
pub(crate) fn table_created(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    job_id: u64,
    reason: TableFileCreationReason,
    f: &FileMeta,
    level: usize,
) {
    if !db.events.enabled() {
        return;
    }
    db.events
        .record(Event::TableFileCreated(TableFileCreationInfo {
            cf_name: cf_name(st, cf),
            cf_id: cf,
            job_id,
            reason,
            file: file_info(f, level),
            file_path: db.dir.join(table_file_name(f.number)),
            num_entries: f.num_entries,
        }));
}

/// Records the deletion (or failed deletion) of table `number`.
pub(crate) fn table_deleted(db: &DbInner, number: u64, status: Result<(), Error>) {
    if !db.events.enabled() {
        return;
    }
    db.events
        .record(Event::TableFileDeleted(TableFileDeletionInfo {
            file_number: number,
            file_path: db.dir.join(table_file_name(number)),
            status,
        }));
}

/// Records a flush's begin (`begin`) or completion.
pub(crate) fn flush(db: &DbInner, begin: bool, info: impl FnOnce() -> FlushJobInfo) {
    if !db.events.enabled() {
        return;
    }
    let i = info();
    db.events.record(if begin {
        Event::FlushBegin(i)
    } else {
        Event::FlushCompleted(i)
    });
}

/// Records a compaction's begin (`begin`) or completion.
pub(crate) fn compaction(db: &DbInner, begin: bool, info: impl FnOnce() -> CompactionJobInfo) {
    if !db.events.enabled() {
        return;
    }
    let i = info();
    db.events.record(if begin {
        Event::CompactionBegin(i)
    } else {
        Event::CompactionCompleted(i)
    });
}

fn stall(c: StallCondition) -> WriteStallCondition {
    match c {
        StallCondition::Normal => WriteStallCondition::Normal,
        StallCondition::Delayed(_) => WriteStallCondition::Delayed,
        StallCondition::Stopped(_) => WriteStallCondition::Stopped,
    }
}

/// Records family `cf`'s stall condition going from `prev` to `cur`, if
/// that changes what writers see (and writes the LOG event).
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
    db.log.event(
        "stall_condition_changed",
        &[
            format!("\"cf\": {cf}"),
            format!("\"prev\": \"{p:?}\""),
            format!("\"cur\": \"{c:?}\""),
            format!("\"cause\": \"{}\"", cause(cur).unwrap_or("none")),
        ],
    );
    if !db.events.enabled() {
        return;
    }
    db.events
        .record(Event::StallConditionsChanged(WriteStallInfo {
            cf_name: name.to_string(),
            cf_id: cf,
            prev: p,
            cur: c,
        }));
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
