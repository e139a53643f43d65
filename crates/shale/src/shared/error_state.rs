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
//! Resuming (`bg::resume`, run by `Db::resume` or automatically by a background
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

use std::time::Instant;

use crate::error::Error;

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
pub(crate) fn refusal(e: &BgError) -> Error {
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
