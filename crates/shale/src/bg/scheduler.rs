//! Background work: a pool of `max_background_jobs` threads that run flushes
//! (first) and compactions, plus the foreground waits built on it (`flush`,
//! `compact_range`, `wait_for_compaction`).
//!
//! Scheduling state lives in `DbState` under the DB mutex; threads sleep on
//! `DbInner::bg_cv`, and only when no wakeup (`DbInner::wake_bg`, counted
//! under the mutex) came since they last looked for work: a pass that
//! released the mutex looks again instead of missing one. A background error (see `shared::errors`) pauses
//! compactions, a hard one flushes too; the threads run the automatic
//! resume when it is due. Flushes run one per column family at a time (a
//! family's flushes install in WAL order), up to the flush share of the
//! threads at once. Up to `max_compactions` compactions run at once (RocksDB's split
//! of `max_background_jobs`: a quarter, at least one, kept for flushes); the
//! picker gives each a disjoint set of files and output key ranges, so
//! L0→base and Ln→Ln+1 compactions of different ranges proceed in parallel.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::MutexGuard;

use crate::error::{Error, Result};

use crate::shared::{DbInner, DbState, Reason};

pub(crate) fn start(db: &Arc<DbInner>) -> Vec<JoinHandle<()>> {
    let mut threads = Vec::new();
    add_threads(db, &mut threads);
    threads
}

/// Starts background threads until `threads` holds
/// `max_background_jobs` of them (`set_db_options` raising it; a lower
/// value leaves the extra threads idle: the job limits read it).
pub(crate) fn add_threads(db: &Arc<DbInner>, threads: &mut Vec<JoinHandle<()>>) {
    for i in threads.len()..db.mutable.max_background_jobs() {
        let db = Arc::clone(db);
        if let Ok(t) = std::thread::Builder::new()
            .name(format!("shale-bg-{i}"))
            .spawn(move || bg_loop(&db))
        {
            threads.push(t);
        }
    }
}

fn bg_loop(db: &Arc<DbInner>) {
    let mut st = db.state.lock();
    loop {
        // Wakeups sent before this pass: the work they announce is in the
        // state the pass reads.
        let wakeups = st.bg_wakeups;
        if db.shutting_down.load(Ordering::Acquire) {
            return;
        }
        if super::resume::auto_resume_if_due(db, &mut st) {
            continue;
        }
        if db.purge_requested.swap(false, Ordering::AcqRel) {
            crate::shared::obsolete::delete_obsolete_files(db, &mut st);
            continue;
        }
        // A hard error stops flushes (its resume flushes); any error pauses
        // automatic compactions until it is resumed.
        if st.errors.stopping().is_none() && st.flushes_running < max_flushes(db) {
            if let Some(cf) = next_flush(&mut st) {
                st = run_flush(db, st, cf);
                continue;
            }
        }
        if !st.errors.blocks_compaction()
            && st.manual_compactions == 0
            && st.compactions_running < max_compactions(db)
        {
            let (st2, dropped) = crate::compaction::schedule::drop_covered_files(db, st);
            st = st2;
            if dropped {
                continue;
            }
            let (st2, dropped) = crate::compaction::fifo_runner::drop_files_if_due(db, st);
            st = st2;
            if dropped {
                continue;
            }
            if let Some((cf, plan)) = crate::compaction::schedule::pick(db, &mut st) {
                st = crate::compaction::runner::run(db, st, cf, plan);
                continue;
            }
        }
        // The steps above may have released the mutex (the delete-only
        // check opens tables unlocked): a wakeup sent meanwhile (a close,
        // a flush request) found no thread waiting. Look again rather
        // than sleep through it (regression test
        // `close_is_not_delayed_by_a_wakeup_lost_in_the_delete_only_check`).
        if st.bg_wakeups != wakeups || db.purge_requested.load(Ordering::Acquire) {
            continue;
        }
        let idle = Duration::from_millis(500);
        let wait = super::resume::time_to_auto_resume(&st)
            .map_or(idle, |d| d.clamp(Duration::from_millis(1), idle));
        db.bg_cv.wait_for(&mut st, wait);
    }
}

/// Concurrent flushes: a quarter of `max_background_jobs`, at least one.
pub(crate) fn max_flushes(db: &DbInner) -> usize {
    (db.mutable.max_background_jobs() / 4).max(1)
}

/// Takes the next family with an immutable memtable and no flush running
/// from the flush queue (stale entries are dropped; a family whose flush is
/// running stays queued).
fn next_flush(st: &mut DbState) -> Option<u32> {
    let mut i = 0;
    while i < st.flush_queue.len() {
        let id = st.flush_queue[i];
        match st.cfs.get(&id) {
            Some(c) if !c.imm.is_empty() && !c.flush_running => {
                st.flush_queue.remove(i);
                return Some(id);
            }
            Some(c) if c.flush_running => i += 1,
            _ => {
                st.flush_queue.remove(i);
            }
        }
    }
    None
}

/// Concurrent compactions: `max_background_jobs` minus the flush share
/// (`max(1, jobs / 4)`), at least one — RocksDB's `GetBGJobLimits`.
pub(crate) fn max_compactions(db: &DbInner) -> usize {
    let jobs = db.mutable.max_background_jobs();
    let flushes = (jobs / 4).max(1);
    jobs.saturating_sub(flushes).max(1)
}

fn run_flush<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    cf: u32,
) -> MutexGuard<'a, DbState> {
    if let Err(e) = crate::flush::runner::flush_one(db, &mut st, cf) {
        // Retried by the resume (which flushes every family's memtables).
        db.set_bg_error(&mut st, e, Reason::Flush);
    }
    st
}

/// Switches family `cf`'s memtable (if it holds anything) and waits until
/// every immutable memtable of it is flushed.
pub(crate) fn flush_and_wait(db: &Arc<DbInner>, cf: u32) -> Result<()> {
    db.check_read_write("flush")?;
    {
        let mut st = db.state.lock();
        if let Some(e) = st.errors.write_error() {
            return Err(e);
        }
        if st.cf(cf).is_some_and(|c| c.mem.num_entries() > 0) {
            crate::shared::memtables::switch_memtable(db, &mut st, cf)?;
        }
    }
    wait_for_flushes(db, |st| {
        st.cf(cf)
            .is_none_or(|c| c.imm.is_empty() && !c.flush_running)
    })
}

/// `flush_and_wait` for every family (close with unlogged writes).
pub(crate) fn flush_all_and_wait(db: &Arc<DbInner>) -> Result<()> {
    db.check_read_write("flush")?;
    {
        let mut st = db.state.lock();
        if let Some(e) = st.errors.write_error() {
            return Err(e);
        }
        let full: Vec<u32> = st
            .cfs
            .iter()
            .filter(|(_, c)| c.mem.num_entries() > 0)
            .map(|(&id, _)| id)
            .collect();
        for id in full {
            crate::shared::memtables::switch_memtable(db, &mut st, id)?;
        }
    }
    wait_for_flushes(db, |st| {
        st.cfs
            .values()
            .all(|c| c.imm.is_empty() && !c.flush_running)
    })
}

/// Waits until `done`, then until the listeners have been told about the
/// flushes waited for (or the error that ended the wait).
fn wait_for_flushes(db: &Arc<DbInner>, done: impl Fn(&DbState) -> bool) -> Result<()> {
    let r = wait_for_flushes_locked(db, done);
    db.events.wait_delivered();
    r
}

fn wait_for_flushes_locked(db: &Arc<DbInner>, done: impl Fn(&DbState) -> bool) -> Result<()> {
    let mut st = db.state.lock();
    loop {
        if let Some(e) = st.errors.stopping() {
            return Err(e.error.clone());
        }
        if done(&st) {
            return Ok(());
        }
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShutdownInProgress);
        }
        db.wake_bg(&mut st);
        db.bg_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Waits until no flush or compaction is pending or running, then until
/// the listeners have been told about them.
pub(crate) fn wait_for_idle(db: &Arc<DbInner>) -> Result<()> {
    let r = wait_for_idle_locked(db);
    db.events.wait_delivered();
    r
}

fn wait_for_idle_locked(db: &Arc<DbInner>) -> Result<()> {
    if db.read_only {
        // No background work runs: nothing to wait for.
        return Ok(());
    }
    let mut st = db.state.lock();
    loop {
        // Any outstanding error, soft ones too (they pause compactions).
        if let Some(e) = &st.errors.current {
            return Err(e.error.clone());
        }
        let busy = st.any_flush_work()
            || st.compactions_running > 0
            || crate::compaction::schedule::needs_compaction(db, &st)
            || crate::compaction::schedule::delete_only_pending(db, &st);
        if !busy {
            // Versions released since the last job (iterators, snapshots of
            // the LSM) may have left files with no reference: delete them.
            crate::shared::obsolete::delete_obsolete_files(db, &mut st);
            return Ok(());
        }
        if db.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShutdownInProgress);
        }
        db.wake_bg(&mut st);
        db.bg_cv.wait_for(&mut st, Duration::from_millis(50));
    }
}

/// Flushes, then compacts every file overlapping [start, end] into the last
/// level, waiting for running compactions first.
pub(crate) fn compact_range(
    db: &Arc<DbInner>,
    cf: u32,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Result<()> {
    compact_range_with(db, cf, start, end, None)
}

/// [`compact_range`], reclaiming (every last-level file in the range
/// rewritten too) and reporting each step when `reclaim` is given.
pub(crate) fn compact_range_with(
    db: &Arc<DbInner>,
    cf: u32,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
    mut reclaim: Option<&mut dyn FnMut(&crate::compaction::runner::ReclaimProgress)>,
) -> Result<()> {
    db.check_read_write("compact_range")?;
    if let (Some(a), Some(b)) = (start, end) {
        if a > b {
            return Err(Error::InvalidArgument(format!(
                "compact_range: start {a:02x?} is after end {b:02x?}"
            )));
        }
    }
    flush_and_wait(db, cf)?;
    crate::sync_point!("Db::CompactRange:AfterFlush");
    let mut st = db.state.lock();
    st.manual_compactions += 1;
    let r = loop {
        // A soft error does not stop a manual compaction (it is a retry).
        if let Some(e) = st.errors.stopping() {
            break Err(e.error.clone());
        }
        if db.shutting_down.load(Ordering::Acquire) {
            break Err(Error::ShutdownInProgress);
        }
        // No compaction runs, and no flush is installing outputs below L0
        // (its reserved ranges are in `running` too): the manual plans
        // are picked without regard to running outputs.
        if st.compactions_running == 0 && db.stats.running.lock().is_empty() {
            let (st2, r) =
                crate::compaction::schedule::run_manual(db, st, cf, start, end, reclaim.take());
            st = st2;
            break r;
        }
        db.bg_cv.wait_for(&mut st, Duration::from_millis(50));
    };
    st.manual_compactions -= 1;
    st.compaction_queue.insert(cf);
    db.wake_bg(&mut st);
    drop(st);
    db.events.wait_delivered();
    r
}
