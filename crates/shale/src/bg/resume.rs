//! Resuming from a background error (see `shared::errors` for how errors
//! are classified and what each stops): by `Db::resume`, or automatically
//! by a background thread `bgerror_resume_retry_interval` after the error,
//! at most `max_bgerror_resume_count` times. If the MANIFEST writer was
//! lost, roll to a fresh MANIFEST; for a hard error, flush the immutable
//! memtables while writes are still stopped; then clear the error. A
//! failed step records its error again and the resume reports it. At most
//! one resume runs at a time (`ErrorState::recovering`).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::MutexGuard;

use crate::error::{Error, Result};
use crate::shared::error_state::{refusal, Reason, Severity};
use crate::shared::errors::set_bg_error;
use crate::shared::{DbInner, DbState};
use crate::version::VersionEdit;

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
    crate::shared::events::recovery_begin(db, &err.error, automatic);
    let r = recover_steps(db, st, err.severity);
    st.errors.recovering = false;
    crate::shared::events::recovery_completed(
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
            crate::shared::obsolete::delete_obsolete_files(db, st);
            db.wake_bg(st);
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
        crate::shared::manifest::log_and_apply(db, st, &mut edit)
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
        crate::flush::runner::flush_one(db, st, cf).map_err(|e| (Reason::Flush, e))?;
    }
}
