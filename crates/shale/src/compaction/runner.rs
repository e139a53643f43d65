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
//! Events (`shared::events`): compaction begin before the job runs (a trivial
//! move too), table created per output before the edit, compaction
//! completed after the install or the failure (the caller then records
//! the background error); delete-only compaction reports only the
//! deletions `obsolete` makes.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::job::{file_list, CompactionJob};
use crate::compaction::picker::{PickerOptions, Plan, RunningOutput};
use crate::error::Result;
use crate::events::{CompactionJobInfo, TableFileCreationReason};
use crate::io::accounting::{self, Purpose};
use crate::options::CfOptions;
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
    }
}

/// The picker options of family `cf` (`None` once dropped).
pub(crate) fn family_picker_options(st: &DbState, cf: u32) -> Option<PickerOptions> {
    st.cf(cf)
        .map(|c| picker_options(&c.cf.opts(), st.versions.num_levels()))
}

/// [`family_picker_options`] with the DB's clock (for expired files).
pub(crate) fn picker_options_now(db: &DbInner, st: &DbState, cf: u32) -> Option<PickerOptions> {
    family_picker_options(st, cf).map(|mut o| {
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

/// Moves the plan's inputs to the output level by a MANIFEST edit.
pub(crate) fn trivial_move(
    db: &Arc<DbInner>,
    st: &mut MutexGuard<'_, DbState>,
    job: &CompactionJob<'_>,
    id: u64,
) -> Result<JobOutcome> {
    let (cf, plan) = (job.cf, job.plan);
    let (mut edit, moved) = job.trivial_move_edit();
    if !crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit)? {
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
        outputs: crate::shared::events::file_infos(&moved_files(plan), plan.output_level),
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
pub(crate) struct JobOutcome {
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
    let name = crate::shared::events::cf_name(st, cf);
    let info = |o: JobOutcome, status: Result<()>| CompactionJobInfo {
        cf_name: name.clone(),
        cf_id: cf,
        job_id: id,
        reason: plan.reason,
        base_input_level: plan.level,
        output_level: plan.output_level,
        input_files: {
            let mut v = crate::shared::events::file_infos(&plan.inputs, plan.level);
            for (level, files) in &plan.middle {
                v.extend(crate::shared::events::file_infos(files, *level));
            }
            v.extend(crate::shared::events::file_infos(
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
    crate::shared::events::compaction(db, true, || info(JobOutcome::default(), Ok(())));
    let r = execute_job(db, st, cf, plan, id);
    let r = match r {
        Ok(o) => {
            crate::shared::events::compaction(db, false, || info(o, Ok(())));
            Ok(())
        }
        Err(e) => {
            crate::shared::events::compaction(db, false, || {
                info(JobOutcome::default(), Err(e.clone()))
            });
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
        crate::shared::events::table_created(
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
    let logged = crate::shared::manifest::log_and_apply_if_live(db, st, &mut edit);
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
            .map(|f| crate::shared::events::file_info(f, output_level))
            .collect(),
        records_in: r.keys_in,
        records_dropped: r.keys_dropped,
    })
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
