//! What the scheduler (`bg/`) asks of compaction: whether one is due in
//! some family (`needs_compaction`), the next one to run (`pick`: FIFO's
//! drops, delete-only compactions, then the family's picker), whole files
//! dropped under range tombstones (`drop_covered_files`), and manual
//! compactions of a key range (`run_manual`). The chosen plans run in
//! `runner`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::base::SeqNo;
use crate::compaction::picker::{self, Plan};
use crate::compaction::universal;
use crate::error::Result;
use crate::events::records::{DeleteOnlyCompaction, Kind};
use crate::events::CompactionReason;
use crate::range_del::Fragments;
use crate::stats::LevelCompactionStats;

use crate::shared::obsolete::delete_obsolete_files;
use crate::shared::{DbInner, DbState};

use super::execute::dropped_error;
use super::runner::*;

/// The next automatic compaction of any family, if one is due and
/// runnable. Families leave the queue when nothing is due in them; they
/// return whenever their version changes. A family whose delete-only
/// compaction is due or running is passed over until it has looked.
/// Requires the DB mutex (the caller passes the guarded state).
pub(crate) fn pick(db: &DbInner, st: &mut DbState) -> Option<(u32, Plan)> {
    let queued: Vec<u32> = st.compaction_queue.iter().copied().collect();
    for cf in queued {
        if !auto_compactions(st, cf) {
            st.compaction_queue.remove(&cf);
            continue;
        }
        if crate::compaction::fifo_runner::is_fifo(st, cf) {
            // FIFO never compacts leveled: only its intra-L0 merges run as
            // jobs (its drops run in `crate::compaction::fifo_runner::drop_files_if_due`,
            // before this).
            match crate::compaction::fifo_runner::pick(db, st, cf) {
                Some(crate::compaction::fifo::FifoPlan::IntraL0(plan)) => return Some((cf, plan)),
                _ => {
                    st.compaction_queue.remove(&cf);
                }
            }
            continue;
        }
        if delete_only_due(db, st, cf) || st.cf(cf).is_some_and(|c| c.delete_only_running) {
            // Tables under a tombstone are dropped unread first (one edit,
            // `drop_covered_files`, possibly running on another thread): a
            // compaction picked meanwhile would rewrite them instead. The
            // family stays queued.
            continue;
        }
        let Some(o) = picker_options_now(db, st, cf) else {
            st.compaction_queue.remove(&cf);
            continue;
        };
        let v = st.versions.current(cf);
        let running = running_outputs(db, cf);
        let Some(c) = st.cfs.get_mut(&cf) else {
            continue;
        };
        if c.compact_cursors.len() < o.num_levels {
            c.compact_cursors.resize(o.num_levels, 0);
        }
        match crate::compaction::pick_for_style(&v, &o, &running, &mut c.compact_cursors) {
            Some(plan) => return Some((cf, plan)),
            None => {
                st.compaction_queue.remove(&cf);
            }
        }
    }
    None
}

/// Delete-only compaction (`compaction::delete_only`) in every family: removes files wholly under newer range tombstones by one
/// MANIFEST edit each. The tables holding tombstones are opened without the
/// DB mutex. Returns true when it changed something.
pub(crate) fn drop_covered_files<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
) -> (MutexGuard<'a, DbState>, bool) {
    let families: Vec<u32> = st.cfs.keys().copied().collect();
    for cf in families {
        if !delete_only_due(db, &st, cf) {
            continue;
        }
        // Something changed (version, oldest snapshot, an expiry passed):
        // the picker looks at the family again too.
        st.compaction_queue.insert(cf);
        let key = delete_only_key(db, &st, cf);
        let v = st.versions.current(cf);
        let holders: Vec<Arc<crate::version::FileMeta>> = (0..v.num_levels())
            .flat_map(|l| v.files(l).iter())
            .filter(|f| f.num_range_deletions > 0)
            .cloned()
            .collect();
        drop(v);
        if let Some(c) = st.cfs.get_mut(&cf) {
            c.delete_only_running = true;
        }
        // Open the holders' tables (IO) unlocked.
        let frags: std::collections::HashMap<u64, Arc<Fragments>> =
            MutexGuard::unlocked(&mut st, || {
                holders
                    .iter()
                    .filter_map(|f| {
                        let t = db.table_cache.table_of(f).ok()?;
                        Some((f.number, Arc::clone(t.range_fragments()?)))
                    })
                    .collect()
            });
        let Some(c) = st.cfs.get_mut(&cf) else {
            continue;
        };
        c.delete_only_running = false;
        c.delete_only_checked = Some(key);
        if st.manual_compactions > 0 {
            // A manual compaction owns the tree: look again afterwards.
            if let Some(c) = st.cfs.get_mut(&cf) {
                c.delete_only_checked = None;
            }
            continue;
        }
        let v = st.versions.current(cf);
        let mut covered = crate::compaction::delete_only::covered_files(
            &v,
            &mut |f| frags.get(&f.number).cloned(),
            db.snapshots.oldest(),
            db.opts.clock.now_secs(),
        );
        drop(v);
        // A table with blob references is compacted instead: dropped
        // unread, its blobs would never count as garbage and their files
        // would stay forever.
        covered.retain(|(_, f)| f.oldest_blob_file == 0);
        if covered.is_empty() {
            continue;
        }
        let mut edit = crate::version::VersionEdit {
            column_family: cf,
            ..Default::default()
        };
        let mut bytes = 0;
        for (level, f) in &covered {
            edit.delete_file(*level, f.number);
            bytes += f.file_size;
            // Owned by this job while the edit is written (the MANIFEST
            // writer may release the mutex): no compaction may pick them,
            // and a manual compaction waits for it as for any job.
            f.set_being_compacted(true);
        }
        let job_id = db.stats.next_job_id.fetch_add(1, Ordering::Relaxed);
        let started = crate::shared::events::drop_job_started(
            db,
            &st,
            cf,
            job_id,
            CompactionReason::DeleteOnly,
            &covered,
        );
        crate::shared::events::notify(db, &started);
        st.compactions_running += 1;
        let r = crate::shared::manifest::log_and_apply_if_live(db, &mut st, &mut edit);
        st.compactions_running -= 1;
        for (_, f) in &covered {
            f.set_being_compacted(false);
        }
        db.bg_cv.notify_all();
        match r {
            Ok(true) => {
                let dropped = covered.iter().map(|(_, f)| f.num_entries).sum();
                let end = DeleteOnlyCompaction {
                    event: Kind::new(),
                    cf,
                    job: job_id,
                    compaction_reason: CompactionReason::DeleteOnly,
                    files: started.inputs.files.clone(),
                    bytes,
                    lsm_state: crate::shared::events::lsm_state(&st, cf),
                    cf_name: started.cf_name.clone(),
                    num_dropped_records: dropped,
                };
                // The listeners hear the end before what the install
                // causes (a stall change); the LOG line, IO, waits until
                // the new version is visible.
                crate::shared::events::notify(db, &end);
                db.install_super_version(&mut st, cf);
                db.stats.add_level(
                    covered[0].0,
                    &LevelCompactionStats {
                        count: 1,
                        files_in_output: covered.len() as u64,
                        keys_dropped: dropped,
                        ..Default::default()
                    },
                );
                db.stats
                    .delete_only_bytes
                    .fetch_add(bytes, Ordering::Relaxed);
                db.log.event(&end);
                delete_obsolete_files(db, &mut st);
                return (st, true);
            }
            Ok(false) => crate::shared::events::compaction_completed(db, &started, Ok(())),
            Err(e) => {
                crate::shared::events::compaction_completed(db, &started, Err(e.clone()));
                db.set_bg_error(&mut st, e, crate::shared::Reason::Compaction);
                return (st, true);
            }
        }
    }
    (st, false)
}

/// What delete-only compaction last looked at: the version (by address),
/// the oldest snapshot and the next expiry it was waiting for (the
/// earliest `expiry_max` still in the future then; 0: none).
fn delete_only_key(db: &DbInner, st: &DbState, cf: u32) -> (usize, Option<SeqNo>, u64) {
    let v = st.versions.current(cf);
    let now = db.opts.clock.now_secs();
    let next_expiry = (0..v.num_levels())
        .flat_map(|l| v.files(l).iter())
        .filter(|f| f.expiry_max > 0)
        .map(|f| f.expiry_max)
        .filter(|&e| e > now)
        .min()
        .unwrap_or(0);
    let expired = (0..v.num_levels())
        .flat_map(|l| v.files(l).iter())
        .filter(|f| f.expiry_entries > 0 && f.expiry_max <= now)
        .count() as u64;
    (
        Arc::as_ptr(&v) as usize,
        db.snapshots.oldest(),
        next_expiry ^ (expired << 48),
    )
}

/// True when family `cf` has files holding range tombstones and
/// delete-only compaction has not looked at its version (with today's
/// oldest snapshot) yet, or is looking now.
pub(crate) fn delete_only_due(db: &DbInner, st: &DbState, cf: u32) -> bool {
    let Some(c) = st.cf(cf) else { return false };
    if c.delete_only_running || c.cf.opts().disable_auto_compactions {
        return false;
    }
    if c.delete_only_checked == Some(delete_only_key(db, st, cf)) {
        return false;
    }
    let v = st.versions.current(cf);
    (0..v.num_levels()).any(|l| {
        v.files(l)
            .iter()
            .any(|f| f.num_range_deletions > 0 || f.expiry_entries > 0)
    })
}

/// True while delete-only compaction has work or is working in some
/// family.
pub(crate) fn delete_only_pending(db: &DbInner, st: &DbState) -> bool {
    st.cfs
        .iter()
        .any(|(&cf, c)| c.delete_only_running || delete_only_due(db, st, cf))
}

/// True when a compaction is due in family `cf` and could start now.
pub(crate) fn needs_compaction_cf(db: &DbInner, st: &DbState, cf: u32) -> bool {
    if !auto_compactions(st, cf) {
        return false;
    }
    if crate::compaction::fifo_runner::is_fifo(st, cf) {
        return crate::compaction::fifo_runner::pick(db, st, cf).is_some();
    }
    let Some(o) = picker_options_now(db, st, cf) else {
        return false;
    };
    let Some(c) = st.cf(cf) else { return false };
    let v = st.versions.current(cf);
    let mut cursors = c.compact_cursors.clone();
    cursors.resize(o.num_levels, 0);
    crate::compaction::pick_for_style(&v, &o, &running_outputs(db, cf), &mut cursors).is_some()
}

/// True when a compaction is due in some queued family.
pub(crate) fn needs_compaction(db: &DbInner, st: &DbState) -> bool {
    st.compaction_queue
        .iter()
        .any(|&cf| needs_compaction_cf(db, st, cf))
        // FIFO drops are due in any FIFO family, queued or not (a TTL
        // passes without a new version).
        || st.cfs.keys().any(|&cf| {
            crate::compaction::fifo_runner::is_fifo(st, cf)
                && auto_compactions(st, cf)
                && matches!(
                    crate::compaction::fifo_runner::pick(db, st, cf),
                    Some(crate::compaction::fifo::FifoPlan::Drop { .. })
                )
        })
}

/// Compacts every file overlapping [start, end] down to the last level,
/// level by level (see `picker::manual_plan`), then rewrites the last
/// level's files in the range when nothing above overlapped it.
/// Requires: no compaction running, and `manual_compactions` raised so no
/// automatic one starts meanwhile (the caller does both).
pub(crate) fn run_manual<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    cf: u32,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
    mut reclaim: Option<&mut dyn FnMut(&ReclaimProgress)>,
) -> (MutexGuard<'a, DbState>, Result<()>) {
    if crate::compaction::fifo_runner::is_fifo(&st, cf) {
        // The range does not matter to FIFO (see `fifo_runner`).
        return crate::compaction::fifo_runner::run_manual(db, st, cf);
    }
    let Some(mut o) = picker_options_now(db, &st, cf) else {
        return (st, Err(dropped_error(cf)));
    };
    // Reclaiming rewrites the last level's files in the range too, each of
    // them, whatever moved down into it.
    o.rewrite_bottommost |= reclaim.is_some();
    if o.style == crate::options::CompactionStyle::Universal {
        // Every run into the last level, whatever the range (RocksDB's
        // universal `CompactRange`).
        let plan = universal::manual_plan(&st.versions.current(cf), &o);
        let r = match plan {
            Some(plan) => run_manual_plan(db, &mut st, cf, &plan, (start, end), &mut reclaim),
            None => Ok(()),
        };
        return (st, r);
    }
    let last = o.num_levels - 1;
    let mut moved_down = false;
    for level in 0..=last {
        if level == last && moved_down && reclaim.is_none() {
            break;
        }
        if st.cf(cf).is_none() {
            return (st, Err(dropped_error(cf)));
        }
        let plan = {
            let v = st.versions.current(cf);
            picker::manual_plan(&v, &o, level, start, end)
        };
        let Some(plan) = plan else { continue };
        moved_down |= plan.output_level > plan.level;
        if let Err(e) = run_manual_plan(db, &mut st, cf, &plan, (start, end), &mut reclaim) {
            return (st, Err(e));
        }
    }
    (st, Ok(()))
}
