//! Runs FIFO compaction (`compaction::fifo`) in the families whose
//! `compaction_style` is `Fifo`: drops whole L0 tables by one MANIFEST
//! edit (past `max_table_files_size`, or older than `ttl`), and hands
//! intra-L0 merges to the compaction runner as ordinary jobs. Leveled
//! families never reach this module.
//!
//! Decisions (RocksDB's behaviour where it has one):
//! - `compact_range` on a FIFO family ignores its range and runs the FIFO
//!   picker until it has nothing to do (drops, then intra-L0 merges with
//!   `allow_compaction`), as RocksDB's `FIFOCompactionPicker::CompactRange`.
//! - L0 stall triggers do not apply to a FIFO family: RocksDB sanitizes
//!   `level0_slowdown_writes_trigger` and `level0_stop_writes_trigger` to
//!   `INT_MAX` under FIFO (its tables are dropped, not compacted away), and
//!   estimates no pending compaction bytes, so `stall_condition` is Normal
//!   but for the memtable count (handled elsewhere).
//! - A family with tables below L0 is refused at open (`db::open`).
//! - Drops are counted in `shale.fifo-dropped-files` and
//!   `shale.fifo-dropped-bytes` and written to the LOG as a
//!   `fifo_compaction` event with the reason (`ttl` or
//!   `max_table_files_size`, and `compaction_reason` `FIFOTtl` /
//!   `FIFOMaxSize`, RocksDB's `kFIFOTtl` / `kFIFOMaxSize`); the deletions
//!   follow as `table_file_deletion` events. Listeners hear of each drop
//!   as a compaction of L0 into L0 with no output (its begin before the
//!   MANIFEST edit, its completion after), as RocksDB reports its
//!   deletion compactions.
//!
//! Thread safety: called with the DB mutex held; the tables of a drop are
//! marked as being compacted while its edit is written (the MANIFEST writer
//! may release the mutex), so no other job picks them, and the family's
//! next FIFO pick waits for it (one FIFO job per family at a time).
//! Readers holding an older version keep its tables until they release it
//! (the obsolete-file sweep only deletes tables no version references).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::compaction::fifo::{self, DropReason, FifoPickerOptions, FifoPlan};
use crate::error::Result;
use crate::events::records::{FifoCompaction, Kind};
use crate::options::{CfOptions, CompactionStyle};
use crate::stats::LevelCompactionStats;
use crate::version::{FileMeta, VersionEdit};

use crate::shared::obsolete::delete_obsolete_files;
use crate::shared::{DbInner, DbState};

/// True when family `cf` (live) uses FIFO compaction.
pub(crate) fn is_fifo(st: &DbState, cf: u32) -> bool {
    st.cf(cf)
        .is_some_and(|c| c.cf.opts().compaction_style == CompactionStyle::Fifo)
}

/// The FIFO picker's view of a family's options at `now`.
pub(crate) fn picker_options(o: &CfOptions, now: u64) -> FifoPickerOptions {
    let f = &o.compaction_options_fifo;
    FifoPickerOptions {
        max_table_files_size: f.max_table_files_size,
        allow_compaction: f.allow_compaction,
        ttl_secs: f.ttl_secs,
        min_merge_files: o.level0_file_num_compaction_trigger,
        max_compaction_bytes: o.max_compaction_bytes(),
        max_bytes_per_removed_file: (o.write_buffer_size as u64).saturating_mul(11) / 10,
        now,
    }
}

/// The next FIFO step of family `cf` (`None`: nothing to do, or dropped).
pub(crate) fn pick(db: &DbInner, st: &DbState, cf: u32) -> Option<FifoPlan> {
    let c = st.cf(cf)?;
    let o = picker_options(&c.cf.opts(), db.opts.clock.now_secs());
    let v = st.versions.current(cf);
    let running = crate::compaction::runner::running_outputs(db, cf);
    fifo::pick(&v, &o, &running)
}

/// Drops what FIFO compaction drops in the first FIFO family that has
/// something to drop. Returns true when it changed something (or failed:
/// the error is recorded as a background error).
pub(crate) fn drop_files_if_due<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
) -> (MutexGuard<'a, DbState>, bool) {
    let families: Vec<u32> = st
        .cfs
        .keys()
        .copied()
        .filter(|&cf| is_fifo(&st, cf) && crate::compaction::runner::auto_compactions(&st, cf))
        .collect();
    for cf in families {
        if let Some(FifoPlan::Drop { files, reason }) = pick(db, &st, cf) {
            let r = drop_files(db, &mut st, cf, &files, reason);
            if let Err(e) = r {
                db.set_bg_error(&mut st, e, crate::shared::Reason::Compaction);
            }
            db.bg_cv.notify_all();
            return (st, true);
        }
    }
    (st, false)
}

/// Runs FIFO compaction in family `cf` until it has nothing left to do
/// (`compact_range` on a FIFO family). Requires: `manual_compactions`
/// raised and no compaction running (the caller waits for both).
pub(crate) fn run_manual<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    cf: u32,
) -> (MutexGuard<'a, DbState>, Result<()>) {
    // Each step removes at least one table: this ends.
    while let Some(plan) = pick(db, &st, cf) {
        match plan {
            FifoPlan::Drop { files, reason } => {
                if let Err(e) = drop_files(db, &mut st, cf, &files, reason) {
                    db.set_bg_error(&mut st, e.clone(), crate::shared::Reason::Compaction);
                    return (st, Err(e));
                }
            }
            FifoPlan::IntraL0(plan) => {
                let r = crate::compaction::runner::run_manual_plan(
                    db,
                    &mut st,
                    cf,
                    &plan,
                    (None, None),
                    &mut None,
                );
                if let Err(e) = r {
                    return (st, Err(e));
                }
            }
        }
    }
    (st, Ok(()))
}

/// Deletes `files` (L0 tables of family `cf`) by one MANIFEST edit and
/// books the drop.
fn drop_files(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    files: &[Arc<FileMeta>],
    reason: DropReason,
) -> Result<()> {
    let mut edit = VersionEdit {
        column_family: cf,
        ..Default::default()
    };
    let bytes: u64 = files.iter().map(|f| f.file_size).sum();
    for f in files {
        edit.delete_file(0, f.number);
        f.set_being_compacted(true);
    }
    let id = db.stats.next_job_id.fetch_add(1, Ordering::Relaxed);
    let at_l0: Vec<(usize, Arc<FileMeta>)> = files.iter().map(|f| (0, Arc::clone(f))).collect();
    let started =
        crate::shared::events::drop_job_started(db, st, cf, id, reason.compaction_reason(), &at_l0);
    crate::shared::events::notify(db, &started);
    st.compactions_running += 1;
    let r = crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit);
    st.compactions_running -= 1;
    for f in files {
        f.set_being_compacted(false);
    }
    let logged = match r {
        Ok(logged) => logged,
        Err(e) => {
            crate::shared::events::compaction_completed(db, &started, Err(e.clone()));
            return Err(e);
        }
    };
    if !logged {
        // The family was dropped meanwhile.
        crate::shared::events::compaction_completed(db, &started, Ok(()));
        return Ok(());
    }
    let dropped = files.iter().map(|f| f.num_entries).sum();
    let end = FifoCompaction {
        event: Kind::new(),
        cf,
        reason: reason.name(),
        compaction_reason: reason.compaction_reason(),
        files: started.inputs.files.clone(),
        bytes,
        lsm_state: crate::shared::events::lsm_state(st, cf),
        job: id,
        cf_name: started.cf_name.clone(),
        num_dropped_records: dropped,
    };
    // The listeners hear the end before what the install causes; the LOG
    // line, IO, waits until the new version is visible.
    crate::shared::events::notify(db, &end);
    db.install_super_version(st, cf);
    db.stats.add_level(
        0,
        &LevelCompactionStats {
            count: 1,
            keys_dropped: dropped,
            ..Default::default()
        },
    );
    db.stats
        .fifo_dropped_files
        .fetch_add(files.len() as u64, Ordering::Relaxed);
    db.stats
        .fifo_dropped_bytes
        .fetch_add(bytes, Ordering::Relaxed);
    db.log.event(&end);
    delete_obsolete_files(db, st);
    Ok(())
}
