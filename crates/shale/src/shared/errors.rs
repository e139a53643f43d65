//! Recording a background error ([`set_bg_error`]): classified, logged,
//! reported to the listeners, kept in `DbState::errors` (see
//! `error_state` for the severities and what each stops), and an automatic
//! resume scheduled (run by `bg::resume`).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::error::Error;

use super::error_state::{classify, BgError, Reason, Severity};
use super::{DbInner, DbState};

impl DbInner {
    /// Records a background error (see [`set_bg_error`]).
    pub(crate) fn set_bg_error(&self, state: &mut DbState, e: Error, reason: Reason) {
        set_bg_error(self, state, e, reason);
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
    super::events::background_error(db, reason, severity, &e);
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
    db.wake_bg(st);
}

fn retry_interval(db: &DbInner) -> Duration {
    Duration::from_micros(db.opts.bgerror_resume_retry_interval)
}
