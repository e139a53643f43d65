//! Background errors and recovery from them, after RocksDB's
//! `ErrorHandler`.
//!
//! Each error is classified by what failed (`Reason`) into a `Severity`:
//! - `Soft`: a compaction failed writing or reading its tables (ENOSPC, a
//!   transient IO error). Writes and flushes continue; automatic compactions
//!   pause until the error is resumed. The compaction's outputs were never
//!   installed and are deleted as obsolete; its inputs are untouched.
//! - `Hard`: a flush failed writing its table, or a MANIFEST append/sync
//!   failed (flush or compaction). Durability of acknowledged writes is not
//!   in question (they are in the WAL), but nothing more can be installed
//!   safely until the MANIFEST writer is re-established: writes fail with
//!   `Error::WritesStopped` and background work stops.
//! - `Fatal`: a WAL write or sync failed (what reached the disk is unknown),
//!   or a corruption was found. Writes fail with `Error::Poisoned`;
//!   `Db::resume` refuses; only a reopen (which replays the WAL) recovers.
//!
//! A more severe error replaces a less severe one; otherwise the first error
//! is kept (the later ones are counted).
//!
//! Resuming (`resume`, run by `Db::resume` or automatically by a background
//! thread `bgerror_resume_retry_interval` after the error, at most
//! `max_bgerror_resume_count` times until a job succeeds again): if the
//! MANIFEST writer was lost, roll to a fresh MANIFEST (an empty edit; the
//! new MANIFEST's snapshot is the in-memory version, so an edit that failed
//! half-written is superseded); for a hard error, flush the immutable
//! memtables while writes are still stopped; then clear the error. A failed
//! step records its error again and the resume reports it.
//!
//! Thread-safety: `ErrorState` lives in `DbState` under the DB mutex; the
//! `DbInner::stop_writes` flag mirrors "a hard or fatal error is set" for the
//! lock-free check on the write path. At most one resume runs at a time
//! (`ErrorState::recovering`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use crate::error::{Error, Result};
use crate::version::VersionEdit;

use super::{DbInner, DbState};

/// What was being done when an error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    /// A flush writing its table.
    Flush,
    /// A compaction reading inputs or writing outputs.
    Compaction,
    /// Appending or syncing a MANIFEST edit (or rolling the MANIFEST).
    ManifestWrite,
    /// The write path: WAL append, flush, sync, or a new WAL.
    Wal,
}

/// How bad a background error is; ordered by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Severity {
    /// Writes continue; automatic compactions pause.
    Soft,
    /// Writes stop until resumed.
    Hard,
    /// Writes stop until reopened.
    Fatal,
}

impl Severity {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Severity::Soft => "soft",
            Severity::Hard => "hard",
            Severity::Fatal => "fatal",
        }
    }
}

/// The outstanding background error.
#[derive(Debug, Clone)]
pub(crate) struct BgError {
    pub error: Error,
    pub severity: Severity,
}

/// Background-error state, under the DB mutex.
#[derive(Debug, Default)]
pub(crate) struct ErrorState {
    /// The outstanding error, if any.
    pub current: Option<BgError>,
    /// Background errors seen (including ones not kept as `current`).
    pub count: u64,
    /// Successful resumes (automatic or `Db::resume`).
    pub recoveries: u64,
    /// Automatic resume attempts since a flush or compaction last succeeded.
    pub auto_attempts: u64,
    /// When the next automatic resume is due.
    pub next_auto_resume: Option<Instant>,
    /// A resume is running.
    pub recovering: bool,
}

impl ErrorState {
    /// The outstanding error if it stops background work and writes
    /// (hard or fatal).
    pub(crate) fn stopping(&self) -> Option<&BgError> {
        self.current
            .as_ref()
            .filter(|e| e.severity >= Severity::Hard)
    }

    /// The error a write (or a flush request) gets while a hard or fatal
    /// error is outstanding.
    pub(crate) fn write_error(&self) -> Option<Error> {
        self.stopping().map(refusal)
    }

    /// The outstanding error when it pauses automatic compactions (any).
    pub(crate) fn blocks_compaction(&self) -> bool {
        self.current.is_some()
    }

    /// True when the outstanding error will go away without a `Db::resume`
    /// (an automatic resume is scheduled or running).
    pub(crate) fn recovery_pending(&self) -> bool {
        self.recovering || self.next_auto_resume.is_some()
    }

    /// A job installed its result: the resume budget starts over.
    pub(crate) fn job_succeeded(&mut self) {
        if self.current.is_none() {
            self.auto_attempts = 0;
        }
    }

    /// `idle`, `scheduled` or `running` (the `shale.bg-error-recovery`
    /// property).
    pub(crate) fn recovery_state(&self) -> &'static str {
        if self.recovering {
            "running"
        } else if self.next_auto_resume.is_some() {
            "scheduled"
        } else {
            "idle"
        }
    }
}

/// The error returned to a write refused because of `e`.
fn refusal(e: &BgError) -> Error {
    match e.severity {
        Severity::Fatal => Error::Poisoned(e.error.to_string()),
        _ => Error::WritesStopped(e.error.to_string()),
    }
}

/// Classifies an error by what failed (RocksDB's severity map, reduced to
/// the reasons Shale has).
pub(crate) fn classify(reason: Reason, e: &Error) -> Severity {
    match e {
        // Bytes on disk are wrong, a bug (a bad edit), or an already
        // poisoned writer: nothing to retry.
        Error::Corruption { .. }
        | Error::InvalidArgument(_)
        | Error::NotSupported(_)
        | Error::Poisoned(_) => Severity::Fatal,
        _ => match reason {
            Reason::Wal => Severity::Fatal,
            Reason::Flush | Reason::ManifestWrite => Severity::Hard,
            Reason::Compaction => Severity::Soft,
        },
    }
}

/// Records a background error. `ShutdownInProgress` (a job cut short by
/// close) is not an error. A flush or compaction error after a failed
/// MANIFEST write is a MANIFEST error: nothing can be installed until the
/// MANIFEST is rolled. Requires the DB mutex.
pub(crate) fn set_bg_error(db: &DbInner, st: &mut DbState, e: Error, reason: Reason) {
    if matches!(e, Error::ShutdownInProgress) {
        return;
    }
    let reason = if reason != Reason::Wal && !st.versions.has_manifest_writer() {
        Reason::ManifestWrite
    } else {
        reason
    };
    let severity = classify(reason, &e);
    db.log.error(&format!(
        "background error ({}, {reason:?}): {e}",
        severity.name()
    ));
    super::event_glue::background_error(db, reason, severity, &e);
    let errors = &mut st.errors;
    errors.count += 1;
    db.room_clear.store(false, Ordering::SeqCst);
    if errors
        .current
        .as_ref()
        .is_none_or(|c| severity > c.severity)
    {
        errors.current = Some(BgError { error: e, severity });
    }
    let worst = errors.current.as_ref().map_or(severity, |c| c.severity);
    if worst >= Severity::Hard {
        db.stop_writes.store(true, Ordering::Release);
    }
    errors.next_auto_resume = None;
    if worst < Severity::Fatal && errors.auto_attempts < db.opts.max_bgerror_resume_count {
        errors.next_auto_resume = Some(Instant::now() + retry_interval(db));
    }
    db.bg_cv.notify_all();
}

fn retry_interval(db: &DbInner) -> Duration {
    Duration::from_micros(db.opts.bgerror_resume_retry_interval)
}

/// `Db::resume`: waits for a running automatic resume, then resumes if an
/// error is still outstanding. A fatal error is returned as
/// `Error::Poisoned`.
pub(crate) fn resume_now(db: &Arc<DbInner>) -> Result<()> {
    let r = resume_now_locked(db);
    db.events.wait_delivered();
    r
}

fn resume_now_locked(db: &Arc<DbInner>) -> Result<()> {
    let mut st = db.state.lock();
    loop {
        match &st.errors.current {
            None => return Ok(()),
            Some(e) if e.severity == Severity::Fatal => return Err(refusal(e)),
            Some(_) => {}
        }
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShutdownInProgress);
        }
        if !st.errors.recovering {
            return resume(db, &mut st, false);
        }
        db.bg_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Runs an automatic resume if one is due; returns true if it ran. Called
/// by the background threads with the DB mutex held.
pub(crate) fn auto_resume_if_due(db: &Arc<DbInner>, st: &mut MutexGuard<'_, DbState>) -> bool {
    let due = st
        .errors
        .next_auto_resume
        .is_some_and(|t| Instant::now() >= t);
    if !due || st.errors.recovering {
        return false;
    }
    st.errors.next_auto_resume = None;
    st.errors.auto_attempts += 1;
    db.log.info(&format!(
        "automatic resume attempt {} of {}",
        st.errors.auto_attempts, db.opts.max_bgerror_resume_count
    ));
    let _ = resume(db, st, true);
    true
}

/// How long a background thread may sleep before the next automatic
/// resume is due.
pub(crate) fn time_to_auto_resume(st: &DbState) -> Option<Duration> {
    st.errors
        .next_auto_resume
        .map(|t| t.saturating_duration_since(Instant::now()))
}

/// Resumes from the outstanding (soft or hard) error; see the module
/// comment. Requires the DB mutex; releases it during IO.
fn resume(db: &Arc<DbInner>, st: &mut MutexGuard<'_, DbState>, automatic: bool) -> Result<()> {
    let Some(err) = st.errors.current.clone() else {
        return Ok(());
    };
    if err.severity == Severity::Fatal {
        return Err(refusal(&err));
    }
    st.errors.recovering = true;
    st.errors.next_auto_resume = None;
    super::event_glue::recovery_begin(db, &err.error, automatic);
    let r = recover_steps(db, st, err.severity);
    st.errors.recovering = false;
    super::event_glue::recovery_completed(
        db,
        &err.error,
        automatic,
        r.as_ref().map(|_| ()).map_err(|(_, e)| e.clone()),
    );
    match r {
        Ok(()) => {
            let e = &mut st.errors;
            e.current = None;
            e.recoveries += 1;
            db.stop_writes.store(false, Ordering::Release);
            db.log
                .info(&format!("resumed from background error: {}", err.error));
            // Compactions were paused: look at every family again.
            let all: Vec<u32> = st.cfs.keys().copied().collect();
            st.compaction_queue.extend(all);
            super::obsolete::delete_obsolete_files(db, st);
            db.bg_cv.notify_all();
            Ok(())
        }
        Err((reason, e)) => {
            set_bg_error(db, st, e.clone(), reason);
            Err(e)
        }
    }
}

/// Rolls the MANIFEST if its writer was lost, and for a hard error flushes
/// every immutable memtable (writes stay stopped meanwhile).
fn recover_steps(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    severity: Severity,
) -> std::result::Result<(), (Reason, Error)> {
    if !st.versions.has_manifest_writer() {
        let mut edit = VersionEdit::default();
        super::manifest_writer::log_and_apply(db, st, &mut edit)
            .map_err(|e| (Reason::ManifestWrite, e))?;
    }
    if severity < Severity::Hard {
        return Ok(());
    }
    loop {
        if db.shutting_down.load(Ordering::Acquire) {
            return Err((Reason::Flush, Error::ShutdownInProgress));
        }
        // Every family's immutable memtables, oldest first per family.
        let Some((&cf, c)) = st.cfs.iter().find(|(_, c)| !c.imm.is_empty()) else {
            return Ok(());
        };
        if c.flush_running {
            db.bg_cv.wait_for(st, Duration::from_millis(20));
            continue;
        }
        super::background::flush_one(db, st, cf).map_err(|e| (Reason::Flush, e))?;
    }
}
