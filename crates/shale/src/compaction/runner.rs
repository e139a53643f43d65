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
//! Events (`shared::events`: a LOG line and a listener call each):
//! `compaction_started` before the job runs (a trivial move tells only the
//! listeners: its LOG line is `trivial_move`), `table_file_creation` per
//! output before the edit, `compaction_finished` (or `trivial_move`) after
//! the install; a job that installs nothing (it failed, or its family was
//! dropped) tells only the listeners it completed (the caller then records
//! a failure as the background error).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::job::CompactionJob;
use crate::compaction::picker::{PickerOptions, Plan, RunningOutput};
use crate::error::Result;
use crate::events::records::{CompactionFinished, JobInputs, Kind, TrivialMove};
use crate::events::TableFileCreationReason;
use crate::io::accounting::{self, Purpose};
use crate::options::CfOptions;
use crate::shared::events::{cf_name, file_info, file_infos, lsm_state};
use crate::stats::{LevelCompactionStats, RunningJob};

use crate::shared::obsolete::delete_obsolete_files;
use crate::shared::{DbInner, DbState};

use super::execute::{job_for, run_until_admitted};

/// One step of [`Db::reclaim_cf`]: a compaction from `level` into
/// `output_level` finished, leaving `bytes_in_range` bytes of table files
/// overlapping the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReclaimProgress {
    /// The level compacted.
    pub level: usize,
    /// The level written.
    pub output_level: usize,
    /// Bytes of the files overlapping the range now.
    pub bytes_in_range: u64,
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
        ingest_behind: false,
    }
}

/// The picker options of family `cf` (`None` once dropped). With
/// `allow_ingest_behind` the pickers see every level but the last.
pub(crate) fn family_picker_options(db: &DbInner, st: &DbState, cf: u32) -> Option<PickerOptions> {
    let behind = db.opts.allow_ingest_behind;
    st.cf(cf).map(|c| {
        let mut o = picker_options(&c.cf.opts(), st.versions.num_levels() - usize::from(behind));
        o.ingest_behind = behind;
        o
    })
}

/// [`family_picker_options`] with the DB's clock (for expired files).
pub(crate) fn picker_options_now(db: &DbInner, st: &DbState, cf: u32) -> Option<PickerOptions> {
    family_picker_options(db, st, cf).map(|mut o| {
        o.now = db.opts.clock.now_secs();
        o.oldest_snapshot = db.snapshots.oldest();
        if let Some(c) = st.cf(cf) {
            let v = st.versions.current(cf);
            o.blob_gc_below = crate::shared::blob_glue::forced_gc_below(&v, &c.cf.opts().blob);
            o.blob_relocate_below = crate::shared::blob_glue::relocated_end(&v, &c.cf.opts().blob);
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

/// Whether family `cf` takes automatic compactions (picked ones,
/// delete-only and FIFO drops): not under `disable_auto_compactions`, and
/// not once dropped. Manual compactions run either way.
pub(crate) fn auto_compactions(st: &DbState, cf: u32) -> bool {
    st.cf(cf)
        .is_some_and(|c| !c.cf.opts().disable_auto_compactions)
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
        db.set_bg_error(&mut st, e, crate::shared::Reason::Compaction);
    }
    db.bg_cv.notify_all();
    st
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
    reclaim: &mut Option<&mut dyn FnMut(&ReclaimProgress)>,
) -> Result<()> {
    let id = begin(db, st, cf, plan);
    let r = execute(db, st, cf, plan, id);
    finish_job(db, st, plan, id);
    if let Err(e) = r {
        db.set_bg_error(st, e.clone(), crate::shared::Reason::Compaction);
        return Err(e);
    }
    if let Some(report) = reclaim.as_deref_mut() {
        let v = st.versions.current(cf);
        report(&ReclaimProgress {
            level: plan.level,
            output_level: plan.output_level,
            bytes_in_range: bytes_in_range(&v, start, end),
        });
    }
    Ok(())
}

/// Moves the plan's inputs to the output level by a MANIFEST edit;
/// returns its `trivial_move` record once installed (`None`: the family
/// was dropped).
pub(crate) fn trivial_move(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &CompactionJob<'_>,
    id: u64,
) -> Result<Option<JobEnd>> {
    let (cf, plan) = (job.cf, job.plan);
    let (mut edit, moved) = job.trivial_move_edit();
    if !crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit)? {
        return Ok(None);
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
    // The edit moves the input level's and the middle levels' files.
    let (files, files_at_destination) = plan_inputs(plan)
        .files
        .into_iter()
        .partition(|f| f.level != plan.output_level);
    Ok(Some(JobEnd::TrivialMove(TrivialMove {
        job: id,
        event: Kind::new(),
        destination_level: plan.output_level,
        files,
        total_files_size: moved,
        files_at_destination,
        cf_name: cf_name(st, cf),
        cf,
        compaction_reason: plan.reason,
        from_level: plan.level,
        to_level: plan.output_level,
        bytes: moved,
        lsm_state: lsm_state(st, cf),
    })))
}

/// The plan's inputs, each with its level (the input level's, the middle
/// levels', the output level's).
fn plan_inputs(plan: &Plan) -> JobInputs {
    let mut files = file_infos(&plan.inputs, plan.level);
    for (level, f) in &plan.middle {
        files.extend(file_infos(f, *level));
    }
    files.extend(file_infos(&plan.output_inputs, plan.output_level));
    JobInputs {
        input_level: plan.level,
        output_level: plan.output_level,
        files,
    }
}

/// The record that ends an installed job.
pub(crate) enum JobEnd {
    Finished(CompactionFinished),
    TrivialMove(TrivialMove),
}

/// Runs job `id` of `plan`, bracketed by its begin and end events (which
/// report the plan's reason).
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
    let started = crate::shared::events::compaction_started(
        db,
        st,
        cf,
        id,
        plan.reason,
        plan_inputs(plan),
        plan.score,
        plan.trivial_move,
    );
    // A trivial move's LOG line is `trivial_move`, at its end.
    if plan.trivial_move {
        crate::shared::events::notify(db, &started);
    } else {
        crate::shared::events::emit(db, &started);
    }
    let r = execute_job(db, st, cf, plan, id);
    let r = match r {
        Ok(Some(JobEnd::Finished(end))) => {
            crate::shared::events::emit(db, &end);
            Ok(())
        }
        Ok(Some(JobEnd::TrivialMove(end))) => {
            crate::shared::events::emit(db, &end);
            Ok(())
        }
        Ok(None) => {
            crate::shared::events::compaction_completed(db, &started, Ok(()));
            Ok(())
        }
        Err(e) => {
            crate::shared::events::compaction_completed(db, &started, Err(e.clone()));
            Err(e)
        }
    };
    // A trivial move leaves nothing obsolete.
    if r.is_ok() && !plan.trivial_move {
        delete_obsolete_files(db, st);
    }
    r
}

/// Runs and installs job `id`; returns the record of its end (`None`:
/// the family was dropped).
fn execute_job(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    cf: u32,
    plan: &Plan,
    id: u64,
) -> Result<Option<JobEnd>> {
    let Some((mut job, topts, target)) = job_for(db, st, cf, plan) else {
        return Ok(None); // dropped
    };
    if plan.trivial_move {
        return trivial_move(db, st, &job, id);
    }
    let started = Instant::now();
    let output_level = plan.output_level;
    let inputs = job.inputs();
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
    // The edit's files: as the outputs, with the edit's fields set.
    for (level, f) in &edit.new_files {
        crate::shared::events::table_created(
            db,
            st,
            cf,
            id,
            TableFileCreationReason::Compaction,
            f,
            *level,
            &r.outputs.props,
        );
    }
    let logged = crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit);
    for n in &allocated {
        st.pending_outputs.remove(n);
    }
    if !logged? {
        // The family was dropped: outputs are obsolete.
        return Ok(None);
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
    let (blob_file_head, blob_file_tail) = crate::shared::events::blob_file_span(st, cf);
    let end = CompactionFinished {
        job: id,
        event: Kind::new(),
        compaction_time_micros: stats.micros,
        compaction_time_cpu_micros: stats.cpu_micros,
        output_level,
        num_output_files: stats.files_out,
        total_output_size: r.outputs.bytes_written,
        num_blob_output_files: r.outputs.blobs.files.len() as u64,
        total_blob_output_size: r.outputs.blobs.bytes_written,
        num_input_records: r.keys_in,
        num_output_records: r.outputs.files.iter().map(|f| f.num_entries).sum(),
        num_subcompactions: r.subcompactions,
        output_compression: topts.compression.name(),
        num_single_delete_mismatches: r.counts.single_delete_mismatches,
        lsm_state: lsm_state(st, cf),
        blob_file_head,
        blob_file_tail,
        cf_name: cf_name(st, cf),
        cf,
        compaction_reason: plan.reason,
        input_level: plan.level,
        inputs: plan_inputs(plan).files,
        output_files: r
            .outputs
            .files
            .iter()
            .map(|f| file_info(f, output_level))
            .collect(),
        subcompactions: r.subcompactions,
        total_input_size: stats.bytes_read_non_output + stats.bytes_read_output,
        num_dropped_records: r.keys_dropped,
        blob_bytes_relocated: r.outputs.blobs.bytes_read,
        blob_garbage_bytes: edit_garbage_bytes,
    };
    // Every handle on the pre-compaction version must be gone by now, or it
    // keeps our inputs alive and they linger until the next job
    // (regression test: inputs_of_the_last_compaction_are_deleted); the
    // caller deletes them.
    drop(job);
    Ok(Some(JobEnd::Finished(end)))
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
