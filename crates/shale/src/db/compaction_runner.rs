//! Runs compactions chosen by `compaction::picker` (and manual ones) as
//! `compaction::job::CompactionJob`s against the DB: marks the inputs,
//! registers the job's output range (so concurrent picks stay disjoint),
//! runs the job without the DB mutex, logs its edit, books the statistics on
//! the output level and writes the LOG events.
//!
//! Several jobs may run at once (one per background thread), in one column
//! family or several; each owns its input files (`being_compacted`) and its
//! output range in its family, and removes only its own pending output
//! numbers. A job whose family is dropped while it runs discards its
//! outputs; so does a job whose filter changed a value that a snapshot
//! taken while it ran can read, which then runs again (see
//! `run_until_admitted`).
//!
//! Events (`event_glue`): compaction begin before the job runs (a trivial
//! move too), table created per output before the edit, compaction
//! completed after the install or the failure (the caller then records
//! the background error); delete-only compaction reports only the
//! deletions `obsolete` makes.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::base::SeqNo;
use crate::build::writer::OutputSpec;
use crate::compaction::job::{file_list, CompactionJob, CompactionResult};
use crate::compaction::picker::{self, PickerOptions, Plan, RunningOutput};
use crate::compaction::{subcompaction, universal};
use crate::error::{Error, Result};
use crate::events::{CompactionJobInfo, CompactionReason, TableFileCreationReason};
use crate::io::accounting::{self, Purpose};
use crate::iter::merging::MergingIterator;
use crate::memory::Part;
use crate::options::CfOptions;
use crate::range_del::Fragments;
use crate::sst::{ReadaheadPolicy, TableOptions};
use crate::stats::{LevelCompactionStats, RunningJob};
use crate::version::filename::table_file_name;

use super::event_glue;
use super::obsolete::delete_obsolete_files;
use super::snapshot::{Admission, InstallHold};
use super::{DbInner, DbState};

/// SST options for files written to `level` of family `cf` (with `opts`;
/// its name recorded in each table as the family was named in `st`).
pub(crate) fn table_options(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    opts: &CfOptions,
    level: usize,
    bottommost: bool,
) -> TableOptions {
    let mut t = opts.table_options(
        level,
        opts.compression_for_level(level, bottommost),
        &db.dir.display().to_string(),
    );
    t.column_family = st.versions.family(cf).map(|f| (cf, f.name.clone()));
    t
}

/// How compaction inputs are read: `compaction_readahead_size` bytes per
/// read from the first block on, or automatic readahead when it is 0; never
/// more than the device serves as one request (`max_read_request`; the
/// kernel would split a larger read), so with the default 2 MiB each read is
/// one request as large as the device takes (RocksDB's bug 12038 shrank
/// compaction reads to 4 KiB). Under a
/// `memory_budget`, also at most 1/128 of it per input (at least 64 KiB): a
/// compaction of 20 inputs then buffers under a sixth of the budget.
fn compaction_readahead(db: &DbInner) -> ReadaheadPolicy {
    let cap = match db.opts.memory_budget {
        0 => usize::MAX,
        b => (b / 128).max(64 << 10),
    }
    .min(db.max_read_request);
    match db.mutable.compaction_readahead_size() {
        0 => ReadaheadPolicy::Auto {
            max: db.opts.max_auto_readahead_size.min(cap),
        },
        n => ReadaheadPolicy::Fixed(n.min(cap)),
    }
}

/// Under a `memory_budget`, a compaction output is cut once its builder
/// holds 1/32 of the budget (at least 1 MiB): with small entries a 64 MiB
/// table's pending filter alone is 16 MiB. Flushes are never cut.
fn builder_memory_limit(db: &DbInner) -> usize {
    match db.opts.memory_budget {
        0 => usize::MAX,
        b => (b / 32).max(1 << 20),
    }
}

/// The picker's view of a family's options.
pub(crate) fn picker_options(opts: &CfOptions, num_levels: usize) -> PickerOptions {
    PickerOptions {
        num_levels,
        l0_trigger: opts.level0_file_num_compaction_trigger,
        max_bytes_for_level_base: opts.max_bytes_for_level_base,
        multiplier: opts.max_bytes_for_level_multiplier,
        dynamic: opts.level_compaction_dynamic_level_bytes,
        max_compaction_bytes: opts.max_compaction_bytes(),
        compression_per_level: (0..num_levels)
            .map(|l| opts.compression_for_level(l, false).code())
            .collect(),
        bottommost_compression: opts.bottommost_compression.map(|c| c.code()),
        rewrite_bottommost: opts.compaction_filter.is_some(),
        now: 0,
        oldest_snapshot: None,
        style: opts.compaction_style,
        universal: opts.compaction_options_universal.clone(),
        blob_gc_below: 0,
        blob_relocate_below: 0,
        partitioner: opts.sst_partitioner_factory,
    }
}

/// The picker options of family `cf` (`None` once dropped).
pub(crate) fn family_picker_options(st: &DbState, cf: u32) -> Option<PickerOptions> {
    st.cf(cf)
        .map(|c| picker_options(&c.cf.opts(), st.versions.num_levels()))
}

/// [`family_picker_options`] with the DB's clock (for expired files).
fn picker_options_now(db: &DbInner, st: &DbState, cf: u32) -> Option<PickerOptions> {
    family_picker_options(st, cf).map(|mut o| {
        o.now = db.opts.clock.now_secs();
        o.oldest_snapshot = db.snapshots.oldest();
        if let Some(c) = st.cf(cf) {
            let v = st.versions.current(cf);
            o.blob_gc_below = super::blob_glue::forced_gc_below(&v, &c.cf.opts().blob);
            o.blob_relocate_below = super::blob_glue::relocated_end(&v, &c.cf.opts().blob);
        }
        o
    })
}

/// Output ranges of the running compactions of family `cf`. Requires the
/// DB mutex.
pub(crate) fn running_outputs(db: &DbInner, cf: u32) -> Vec<RunningOutput> {
    db.stats
        .running
        .lock()
        .iter()
        .filter(|j| j.cf == cf)
        .map(|j| RunningOutput {
            output_level: j.output_level,
            smallest: j.smallest.clone(),
            largest: j.largest.clone(),
        })
        .collect()
}

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
        if super::fifo_runner::is_fifo(st, cf) {
            // FIFO never compacts leveled: only its intra-L0 merges run as
            // jobs (its drops run in `fifo_runner::drop_files_if_due`,
            // before this).
            match super::fifo_runner::pick(db, st, cf) {
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
        match picker::pick_for_style(&v, &o, &running, &mut c.compact_cursors) {
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
        let info =
            event_glue::drop_job_info(&st, cf, job_id, CompactionReason::DeleteOnly, &covered);
        event_glue::compaction(db, true, || info(Ok(())));
        st.compactions_running += 1;
        let r = super::manifest_writer::log_and_apply_if_live(db, &mut st, &mut edit);
        st.compactions_running -= 1;
        for (_, f) in &covered {
            f.set_being_compacted(false);
        }
        db.bg_cv.notify_all();
        let status = r.as_ref().map(|_| ()).map_err(Clone::clone);
        event_glue::compaction(db, false, || info(status));
        match r {
            Ok(true) => {
                db.install_super_version(&mut st, cf);
                let files: Vec<Arc<crate::version::FileMeta>> =
                    covered.iter().map(|(_, f)| Arc::clone(f)).collect();
                db.stats.add_level(
                    covered[0].0,
                    &LevelCompactionStats {
                        count: 1,
                        files_in_output: files.len() as u64,
                        keys_dropped: files.iter().map(|f| f.num_entries).sum(),
                        ..Default::default()
                    },
                );
                db.stats
                    .delete_only_bytes
                    .fetch_add(bytes, Ordering::Relaxed);
                db.log.event(
                    "delete_only_compaction",
                    &[
                        format!("\"cf\": {cf}"),
                        format!("\"job\": {job_id}"),
                        format!(
                            "\"compaction_reason\": \"{}\"",
                            CompactionReason::DeleteOnly.name()
                        ),
                        format!("\"files\": {}", file_list(&files)),
                        format!("\"bytes\": {bytes}"),
                        format!(
                            "\"lsm_state\": {:?}",
                            st.versions.current(cf).files_per_level()
                        ),
                    ],
                );
                delete_obsolete_files(db, &mut st);
                return (st, true);
            }
            Ok(false) => {}
            Err(e) => {
                db.set_bg_error(&mut st, e, super::Reason::Compaction);
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

/// Whether family `cf` takes automatic compactions (picked ones,
/// delete-only and FIFO drops): not under `disable_auto_compactions`, and
/// not once dropped. Manual compactions run either way.
pub(crate) fn auto_compactions(st: &DbState, cf: u32) -> bool {
    st.cf(cf)
        .is_some_and(|c| !c.cf.opts().disable_auto_compactions)
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
    if super::fifo_runner::is_fifo(st, cf) {
        return super::fifo_runner::pick(db, st, cf).is_some();
    }
    let Some(o) = picker_options_now(db, st, cf) else {
        return false;
    };
    let Some(c) = st.cf(cf) else { return false };
    let v = st.versions.current(cf);
    let mut cursors = c.compact_cursors.clone();
    cursors.resize(o.num_levels, 0);
    picker::pick_for_style(&v, &o, &running_outputs(db, cf), &mut cursors).is_some()
}

/// True when a compaction is due in some queued family.
pub(crate) fn needs_compaction(db: &DbInner, st: &DbState) -> bool {
    st.compaction_queue
        .iter()
        .any(|&cf| needs_compaction_cf(db, st, cf))
        // FIFO drops are due in any FIFO family, queued or not (a TTL
        // passes without a new version).
        || st.cfs.keys().any(|&cf| {
            super::fifo_runner::is_fifo(st, cf)
                && auto_compactions(st, cf)
                && matches!(
                    super::fifo_runner::pick(db, st, cf),
                    Some(crate::compaction::fifo::FifoPlan::Drop { .. })
                )
        })
}

/// True when an L0 compaction is running (for the `_with_compaction` stall
/// counts).
pub(crate) fn l0_compaction_running(db: &DbInner) -> bool {
    db.stats.running.lock().iter().any(|j| j.input_level == 0)
}

fn set_compacting(plan: &Plan, on: bool) {
    for f in plan.all_inputs() {
        f.set_being_compacted(on);
    }
}

/// Marks the plan's files and registers its output range. Requires the DB
/// mutex (held by the caller through `st`).
fn begin(db: &DbInner, st: &mut DbState, cf: u32, plan: &Plan) -> u64 {
    set_compacting(plan, true);
    st.compactions_running += 1;
    let id = db.stats.next_job_id.fetch_add(1, Ordering::Relaxed);
    if let Some(r) = plan.output_range() {
        db.stats.running.lock().push(RunningJob {
            id,
            cf,
            input_level: plan.level,
            output_level: r.output_level,
            smallest: r.smallest,
            largest: r.largest,
        });
    }
    id
}

fn finish_job(db: &DbInner, st: &mut DbState, plan: &Plan, id: u64) {
    set_compacting(plan, false);
    st.compactions_running -= 1;
    db.stats.running.lock().retain(|j| j.id != id);
}

/// Runs `plan` (the DB mutex is released during IO).
pub(crate) fn run<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    cf: u32,
    plan: Plan,
) -> MutexGuard<'a, DbState> {
    let id = begin(db, &mut st, cf, &plan);
    let r = execute(db, &mut st, cf, &plan, id);
    finish_job(db, &mut st, &plan, id);
    if let Err(e) = r {
        db.set_bg_error(&mut st, e, super::Reason::Compaction);
    }
    db.bg_cv.notify_all();
    st
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
    mut reclaim: Option<&mut dyn FnMut(&crate::db::ReclaimProgress)>,
) -> (MutexGuard<'a, DbState>, Result<()>) {
    if super::fifo_runner::is_fifo(&st, cf) {
        // The range does not matter to FIFO (see `fifo_runner`).
        return super::fifo_runner::run_manual(db, st, cf);
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

/// One step of a manual compaction (a level of `run_manual`, universal's
/// one plan, a FIFO family's intra-L0 merge): runs `plan`, records a
/// failure as the background error, and reports the bytes left in `range`
/// to `reclaim`. Requires what `run_manual` requires.
pub(crate) fn run_manual_plan(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    plan: &Plan,
    (start, end): (Option<&[u8]>, Option<&[u8]>),
    reclaim: &mut Option<&mut dyn FnMut(&crate::db::ReclaimProgress)>,
) -> Result<()> {
    let id = begin(db, st, cf, plan);
    let r = execute(db, st, cf, plan, id);
    finish_job(db, st, plan, id);
    if let Err(e) = r {
        db.set_bg_error(st, e.clone(), super::Reason::Compaction);
        return Err(e);
    }
    if let Some(report) = reclaim.as_deref_mut() {
        let v = st.versions.current(cf);
        report(&crate::db::ReclaimProgress {
            level: plan.level,
            output_level: plan.output_level,
            bytes_in_range: bytes_in_range(&v, start, end),
        });
    }
    Ok(())
}

/// Bytes of the files of `v` overlapping `[start, end]` (whole files).
pub(crate) fn bytes_in_range(
    v: &crate::version::Version,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> u64 {
    (0..v.num_levels())
        .flat_map(|l| v.overlapping_files_in_range(l, start, end))
        .map(|f| f.file_size)
        .sum()
}

/// Runs `job` over its inputs: split into up to `max_subcompactions` key
/// ranges (see `compaction::subcompaction`) run on scoped threads, or as
/// one range. The outputs of all ranges, in key order, make the result;
/// if any range fails, every range's outputs are removed. Output numbers go
/// to `allocated` (the caller releases them from `pending_outputs`).
fn run_in_ranges(
    db: &Arc<DbInner>,
    job: &CompactionJob<'_>,
    inputs: &[Arc<crate::version::FileMeta>],
    topts: &TableOptions,
    target: u64,
    allocated: &parking_lot::Mutex<Vec<u64>>,
) -> Result<CompactionResult> {
    // The inputs' range tombstones, fragmented together.
    let mut sets = Vec::new();
    for f in inputs {
        if let Some(r) = db.table_cache.get(f.number)?.range_fragments() {
            sets.push(Arc::clone(r));
        }
    }
    let range_dels = match sets.len() {
        0 => None,
        1 => sets.pop(),
        _ => Some(Arc::new(Fragments::merge(sets.iter().map(|s| s.as_ref())))),
    };
    let n = db.mutable.max_subcompactions();
    // An intra-L0 job writes one L0 file: never split. Nor a job with
    // range tombstones (ranges would have to cut them too).
    let splits = if n > 1 && job.plan.output_level > 0 && range_dels.is_none() {
        let mut anchors = Vec::new();
        for f in inputs {
            anchors.extend(
                db.table_cache
                    .get(f.number)?
                    .key_anchors(ANCHORS_PER_TABLE)?,
            );
        }
        subcompaction::split_points(anchors, n, target / 2)
    } else {
        Vec::new()
    };
    let ranges = subcompaction::ranges(&splits);
    if ranges.len() == 1 {
        return run_range(db, job, topts, target, None, None, range_dels, allocated);
    }
    let range = |(lo, hi): &subcompaction::SubRange| {
        run_range(
            db,
            job,
            topts,
            target,
            lo.as_deref(),
            hi.clone(),
            None,
            allocated,
        )
    };
    let results: Vec<Result<CompactionResult>> = std::thread::scope(|scope| {
        // Ranges after the first on threads of their own (`None`: no thread
        // could be had, the range runs here after the first).
        let handles: Vec<_> = ranges[1..]
            .iter()
            .enumerate()
            .map(|(i, r)| {
                std::thread::Builder::new()
                    .name(format!("shale-subcompaction-{}", i + 1))
                    .spawn_scoped(scope, move || range(r))
                    .ok()
            })
            .collect();
        let mut results = vec![range(&ranges[0])];
        for (h, r) in handles.into_iter().zip(&ranges[1..]) {
            results.push(match h {
                Some(h) => h.join().unwrap_or_else(|_| {
                    Err(Error::Io {
                        context: format!("a subcompaction of a job in family {}", job.cf),
                        kind: std::io::ErrorKind::Other,
                        message: "the subcompaction thread panicked".into(),
                    })
                }),
                None => range(r),
            });
        }
        results
    });
    let mut combined = CompactionResult::default();
    let mut first_error = None;
    for r in results {
        match r {
            Ok(r) => combined.absorb(r),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        for f in &combined.outputs.files {
            let _ = db.fs.remove(&db.dir.join(table_file_name(f.number)));
        }
        return Err(e);
    }
    Ok(combined)
}

/// Runs `job` (the DB mutex released) until its outputs may be installed
/// (see `SnapshotList::admit`): outputs that a snapshot taken meanwhile
/// would read differently are discarded and the job runs once more, with
/// the current snapshots and without the user's filter (so at most twice).
/// Returns the outputs, their numbers (still in `pending_outputs`: the
/// caller releases them after its MANIFEST edit) and the hold on new
/// snapshots to drop once the outputs are readable. On error the numbers
/// are released.
fn run_until_admitted(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &mut CompactionJob<'_>,
    id: u64,
    inputs: &[Arc<crate::version::FileMeta>],
    topts: &TableOptions,
    target: u64,
) -> Result<(CompactionResult, Vec<u64>, Option<InstallHold>)> {
    let release = |st: &mut DbState, allocated: &[u64]| {
        for n in allocated {
            st.pending_outputs.remove(n);
        }
    };
    loop {
        let allocated: parking_lot::Mutex<Vec<u64>> = parking_lot::Mutex::new(Vec::new());
        let result = MutexGuard::unlocked(st, || {
            run_in_ranges(db, job, inputs, topts, target, &allocated)
        });
        let allocated = allocated.into_inner();
        let r = match result {
            Ok(r) => r,
            Err(e) => {
                release(st, &allocated);
                return Err(e);
            }
        };
        match db.snapshots.admit(&job.snapshots, r.counts.oldest_filtered) {
            Admission::Install(hold) => return Ok((r, allocated, hold)),
            Admission::RunAgain => {
                // Its tables were written: announce them, so that their
                // deletion by the sweep below follows a creation.
                for f in &r.outputs.files {
                    event_glue::table_created(
                        db,
                        st,
                        job.cf,
                        id,
                        TableFileCreationReason::Compaction,
                        f,
                        job.plan.output_level,
                    );
                }
                release(st, &allocated);
                job.snapshots = db.snapshots.all();
                job.user_filter = None;
                db.log.event(
                    "compaction_discarded",
                    &[
                        format!("\"job\": {id}"),
                        format!("\"cf\": {}", job.cf),
                        "\"reason\": \"filtered a value a new snapshot reads\"".to_string(),
                    ],
                );
                delete_obsolete_files(db, st);
            }
        }
    }
}

/// Sample points read from each input table's index to split a job.
const ANCHORS_PER_TABLE: usize = 128;

/// One range `[lo, hi)` of `job` (`None`: unbounded), with its own input
/// iterators and output writer.
#[allow(clippy::too_many_arguments)]
fn run_range(
    db: &Arc<DbInner>,
    job: &CompactionJob<'_>,
    topts: &TableOptions,
    target: u64,
    lo: Option<&[u8]>,
    hi: Option<Vec<u8>>,
    range_dels: Option<Arc<Fragments>>,
    allocated: &parking_lot::Mutex<Vec<u64>>,
) -> Result<CompactionResult> {
    // On a subcompaction's own thread too.
    let _io = accounting::scope(Purpose::Compaction);
    let plan = job.plan;
    let mut levels: Vec<(usize, &[Arc<crate::version::FileMeta>])> =
        vec![(plan.level, &plan.inputs)];
    levels.extend(plan.middle.iter().map(|(l, f)| (*l, f.as_slice())));
    levels.push((plan.output_level, &plan.output_inputs));
    let children = db
        .table_cache
        .compaction_inputs(&levels, compaction_readahead(db))?;
    let mut iter = subcompaction::RangeIter::new(MergingIterator::new(children), lo, hi);
    let mut alloc = || {
        let mut mine = Vec::with_capacity(1);
        let n = db.new_output_number(&mut mine);
        allocated.lock().push(n);
        n
    };
    let mut spec = OutputSpec {
        file_opts: db.opts.flush_file_options(),
        range_dels: Vec::new(),
        memory: Some(db.memory.meter(Part::Buffers)),
        builder_memory_limit: builder_memory_limit(db),
        rate_limit: db.rate_limit(crate::io::IoPriority::Low),
        fs: &db.fs,
        dir: &db.dir,
        table_opts: topts.clone(),
        target_file_size: target,
        new_file_number: &mut alloc,
        shutting_down: &db.shutting_down,
        bytes_per_sync: db.mutable.bytes_per_sync(),
        blob: job.blob_output.clone(),
        // Set by the job.
        partitioner: None,
        streams: None,
    };
    job.run(&mut iter, &mut spec, range_dels)
}

fn dropped_error(cf: u32) -> crate::error::Error {
    crate::error::Error::InvalidArgument(format!("column family {cf} was dropped"))
}

/// The job for `plan` in family `cf`, with the family's options; `None`
/// once the family is dropped.
fn job_for<'p>(
    db: &DbInner,
    st: &DbState,
    cf: u32,
    plan: &'p Plan,
) -> Option<(CompactionJob<'p>, TableOptions, u64)> {
    let opts = &st.cf(cf)?.cf.opts();
    let mut topts = table_options(db, st, cf, opts, plan.output_level, plan.bottommost);
    if plan.uncompressed {
        topts.compression = crate::sst::Compression::None;
    }
    let job = CompactionJob {
        cf,
        plan,
        version: st.versions.current(cf),
        snapshots: db.snapshots.all(),
        compression: topts.compression,
        max_grandparent_overlap: max_grandparent_overlap(opts),
        // Universal outputs are cut by the overlap rule alone (RocksDB's).
        align_outputs: opts.level_compaction_dynamic_file_size
            && opts.compaction_style != crate::options::CompactionStyle::Universal,
        merge_op: opts.merge_operator.clone(),
        user_filter: opts.compaction_filter.clone(),
        now: db.opts.clock.now_secs(),
        blob_output: super::blob_glue::output_spec(
            db,
            cf,
            opts,
            &st.versions.current(cf),
            plan.output_level,
            false,
        ),
        // An intra-L0 merge must leave fewer files than it took: never cut
        // (its loops, FIFO's manual one included, end because of that).
        partitioner: opts
            .sst_partitioner_factory
            .filter(|_| plan.output_level > 0),
        // Runs must fill 1/128 of the level's target file size.
        streams: match plan.output_level {
            0 => None,
            l => opts.stream_detector(opts.target_file_size(l)),
        },
    };
    // An intra-L0 output is one file, as a flush's.
    let target = match plan.output_level {
        0 => u64::MAX,
        l => opts.target_file_size(l),
    };
    Some((job, topts, target))
}

/// Most bytes of the level below its output level one compaction output
/// may overlap: `max_compaction_bytes`, or with incremental universal
/// compaction 1.5 target files (RocksDB's `GetMaxOverlappingBytes`): an
/// output then ends before it would span two whole files of the level
/// below, so the later slices of that level rewrite little outside them.
fn max_grandparent_overlap(opts: &CfOptions) -> u64 {
    if opts.compaction_style == crate::options::CompactionStyle::Universal
        && opts.compaction_options_universal.incremental
    {
        opts.target_file_size_base / 2 * 3
    } else {
        opts.max_compaction_bytes()
    }
}

/// Moves the plan's inputs to the output level by a MANIFEST edit.
fn trivial_move(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &CompactionJob<'_>,
    id: u64,
) -> Result<JobOutcome> {
    let (cf, plan) = (job.cf, job.plan);
    let (mut edit, moved) = job.trivial_move_edit();
    if !super::manifest_writer::log_and_apply_if_live(db, st, &mut edit)? {
        return Ok(JobOutcome::default());
    }
    st.errors.job_succeeded();
    db.install_super_version(st, cf);
    db.stats.add_level(
        plan.output_level,
        &LevelCompactionStats {
            bytes_moved: moved,
            ..Default::default()
        },
    );
    db.log.event(
        "trivial_move",
        &[
            format!("\"job\": {id}"),
            format!("\"cf\": {cf}"),
            format!("\"compaction_reason\": \"{}\"", plan.reason.name()),
            format!("\"from_level\": {}", plan.level),
            format!("\"to_level\": {}", plan.output_level),
            format!("\"files\": {}", file_list(&moved_files(plan))),
            format!("\"bytes\": {moved}"),
            format!(
                "\"lsm_state\": {:?}",
                st.versions.current(cf).files_per_level()
            ),
        ],
    );
    Ok(JobOutcome {
        outputs: event_glue::file_infos(&moved_files(plan), plan.output_level),
        ..Default::default()
    })
}

/// `{"L2": [n, ...], ...}`: the middle levels' inputs, for LOG events.
fn middle_list(plan: &Plan) -> String {
    let parts: Vec<String> = plan
        .middle
        .iter()
        .map(|(l, f)| format!("\"L{l}\": {}", file_list(f)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The files a trivial move relinks (the input level's and the middle
/// levels').
fn moved_files(plan: &Plan) -> Vec<Arc<crate::version::FileMeta>> {
    let middle = plan.middle.iter().flat_map(|(_, f)| f.iter());
    plan.inputs.iter().chain(middle).cloned().collect()
}

/// What an installed job did, for its completion event.
#[derive(Default)]
struct JobOutcome {
    outputs: Vec<crate::events::TableFileInfo>,
    records_in: u64,
    records_dropped: u64,
}

/// Runs job `id` of `plan`, bracketed by its begin and completed events
/// (which report the plan's reason).
fn execute(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    plan: &Plan,
    id: u64,
) -> Result<()> {
    if st.cf(cf).is_none() {
        return Ok(()); // dropped
    }
    let _io = accounting::scope(Purpose::Compaction);
    let name = event_glue::cf_name(st, cf);
    let info = |o: JobOutcome, status: Result<()>| CompactionJobInfo {
        cf_name: name.clone(),
        cf_id: cf,
        job_id: id,
        reason: plan.reason,
        base_input_level: plan.level,
        output_level: plan.output_level,
        input_files: {
            let mut v = event_glue::file_infos(&plan.inputs, plan.level);
            for (level, files) in &plan.middle {
                v.extend(event_glue::file_infos(files, *level));
            }
            v.extend(event_glue::file_infos(
                &plan.output_inputs,
                plan.output_level,
            ));
            v
        },
        output_files: o.outputs,
        trivial_move: plan.trivial_move,
        num_input_records: o.records_in,
        num_dropped_records: o.records_dropped,
        status,
    };
    event_glue::compaction(db, true, || info(JobOutcome::default(), Ok(())));
    let r = execute_job(db, st, cf, plan, id);
    let r = match r {
        Ok(o) => {
            event_glue::compaction(db, false, || info(o, Ok(())));
            Ok(())
        }
        Err(e) => {
            event_glue::compaction(db, false, || info(JobOutcome::default(), Err(e.clone())));
            Err(e)
        }
    };
    // A trivial move leaves nothing obsolete.
    if r.is_ok() && !plan.trivial_move {
        delete_obsolete_files(db, st);
    }
    r
}

fn execute_job(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    plan: &Plan,
    id: u64,
) -> Result<JobOutcome> {
    let Some((mut job, topts, target)) = job_for(db, st, cf, plan) else {
        return Ok(JobOutcome::default()); // dropped
    };
    if plan.trivial_move {
        return trivial_move(db, st, &job, id);
    }
    let started = Instant::now();
    let output_level = plan.output_level;
    let inputs = job.inputs();
    db.log.event(
        "compaction_started",
        &[
            format!("\"job\": {id}"),
            format!("\"cf\": {cf}"),
            format!("\"compaction_reason\": \"{}\"", plan.reason.name()),
            format!("\"input_level\": {}", plan.level),
            format!("\"output_level\": {output_level}"),
            format!("\"files_L{}\": {}", plan.level, file_list(&plan.inputs)),
            format!("\"middle_levels\": {}", middle_list(plan)),
            format!(
                "\"files_L{output_level}\": {}",
                file_list(&plan.output_inputs)
            ),
            format!("\"score\": {:.3}", plan.score),
            format!(
                "\"input_data_size\": {}",
                inputs.iter().map(|f| f.file_size).sum::<u64>()
            ),
        ],
    );
    let (r, allocated, hold) = run_until_admitted(db, st, &mut job, id, &inputs, &topts, target)?;
    let current = st.versions.current(cf);
    let mut edit = job.edit(&current, &r);
    // References into a blob file the family no longer lists (lost, and
    // its tables kept by `shale repair`) leave no garbage to record: the
    // MANIFEST would refuse it and stop the DB.
    edit.blob_file_garbage
        .retain(|g| current.blob_files().contains_key(&g.number));
    drop(current);
    let edit_garbage_bytes: u64 = edit.blob_file_garbage.iter().map(|g| g.bytes).sum();
    for f in &r.outputs.files {
        event_glue::table_created(
            db,
            st,
            cf,
            id,
            TableFileCreationReason::Compaction,
            f,
            output_level,
        );
        db.log.event(
            "table_file_creation",
            &[
                format!("\"job\": {id}"),
                format!("\"cf\": {cf}"),
                format!("\"file_number\": {}", f.number),
                format!("\"file_size\": {}", f.file_size),
                format!("\"num_entries\": {}", f.num_entries),
                format!("\"num_deletions\": {}", f.num_deletions),
                format!("\"level\": {output_level}"),
            ],
        );
    }
    let logged = super::manifest_writer::log_and_apply_if_live(db, st, &mut edit);
    for n in &allocated {
        st.pending_outputs.remove(n);
    }
    if !logged? {
        // The family was dropped: outputs are obsolete.
        return Ok(JobOutcome::default());
    }
    st.errors.job_succeeded();
    db.install_super_version(st, cf);
    // Snapshots taken from now on read the outputs.
    drop(hold);
    let stats = job.stats(&r, started);
    db.stats.add_level(output_level, &stats);
    db.stats
        .compaction_bytes_written
        .fetch_add(r.outputs.bytes_written, Ordering::Relaxed);
    db.log.event(
        "compaction_finished",
        &[
            format!("\"job\": {id}"),
            format!("\"cf\": {cf}"),
            format!("\"input_level\": {}", plan.level),
            format!("\"output_level\": {output_level}"),
            format!("\"compaction_time_micros\": {}", stats.micros),
            format!("\"compaction_time_cpu_micros\": {}", stats.cpu_micros),
            format!("\"num_input_files\": {}", inputs.len()),
            format!("\"num_output_files\": {}", stats.files_out),
            format!("\"subcompactions\": {}", r.subcompactions),
            format!(
                "\"total_input_size\": {}",
                stats.bytes_read_non_output + stats.bytes_read_output
            ),
            format!("\"total_output_size\": {}", r.outputs.bytes_written),
            format!("\"num_input_records\": {}", r.keys_in),
            format!("\"num_dropped_records\": {}", r.keys_dropped),
            format!("\"num_blob_output_files\": {}", r.outputs.blobs.files.len()),
            format!(
                "\"total_blob_output_size\": {}",
                r.outputs.blobs.bytes_written
            ),
            format!("\"blob_bytes_relocated\": {}", r.outputs.blobs.bytes_read),
            format!("\"blob_garbage_bytes\": {}", edit_garbage_bytes),
            format!(
                "\"lsm_state\": {:?}",
                st.versions.current(cf).files_per_level()
            ),
        ],
    );
    // Every handle on the pre-compaction version must be gone by now, or it
    // keeps our inputs alive and they linger until the next job
    // (regression test: inputs_of_the_last_compaction_are_deleted); the
    // caller deletes them.
    drop(job);
    Ok(JobOutcome {
        outputs: r
            .outputs
            .files
            .iter()
            .map(|f| event_glue::file_info(f, output_level))
            .collect(),
        records_in: r.keys_in,
        records_dropped: r.keys_dropped,
    })
}
