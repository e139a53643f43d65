//! Runs compactions chosen by `compaction::picker` (and manual ones): marks
//! the inputs, merges them without the DB mutex, logs the edit, books the
//! statistics on the output level and writes the LOG events.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::MutexGuard;

use crate::compaction::filter::{BaseLevelCheck, EntryFilter};
use crate::compaction::job::{write_outputs, OutputSpec};
use crate::compaction::picker::{self, PickerOptions, Plan};
use crate::error::Result;
use crate::iter::merging::MergingIterator;
use crate::iter::InternalIterator;
use crate::sst::TableOptions;
use crate::stats::{thread_cpu_micros, LevelCompactionStats};
use crate::version::{FileMeta, Version, VersionEdit};

use super::obsolete::delete_obsolete_files;
use super::{DbInner, DbState};

/// SST options for files written to `level`.
pub(crate) fn table_options(db: &DbInner, level: usize, bottommost: bool) -> TableOptions {
    TableOptions {
        block_size: db.opts.block_size,
        block_restart_interval: db.opts.block_restart_interval,
        bloom_bits_per_key: db.opts.bloom_bits_per_key,
        compression: db.opts.compression_for_level(level, bottommost),
        db_id: db.dir.display().to_string(),
    }
}

fn target_file_size(db: &DbInner, level: usize) -> u64 {
    let mut t = db.opts.target_file_size_base;
    for _ in 1..level.max(1) {
        t = t.saturating_mul(db.opts.target_file_size_multiplier);
    }
    t
}

pub(crate) fn picker_options(db: &DbInner) -> PickerOptions {
    PickerOptions {
        num_levels: db.opts.num_levels,
        l0_trigger: db.opts.level0_file_num_compaction_trigger,
        max_bytes_for_level_base: db.opts.max_bytes_for_level_base,
        multiplier: db.opts.max_bytes_for_level_multiplier,
        dynamic: db.opts.level_compaction_dynamic_level_bytes,
        max_compaction_bytes: db.opts.target_file_size_base.saturating_mul(25),
        compression_per_level: (0..db.opts.num_levels)
            .map(|l| db.opts.compression_for_level(l, false).code())
            .collect(),
    }
}

pub(crate) fn pick(db: &DbInner, st: &mut DbState) -> Option<Plan> {
    let v = st.versions.current();
    let o = picker_options(db);
    if st.compact_cursors.len() < o.num_levels {
        st.compact_cursors.resize(o.num_levels, 0);
    }
    picker::pick(&v, &o, &mut st.compact_cursors)
}

pub(crate) fn needs_compaction(db: &DbInner, st: &DbState) -> bool {
    let v = st.versions.current();
    let o = picker_options(db);
    let t = picker::level_targets(&v, &o);
    picker::scores(&v, &o, &t).iter().any(|&s| s >= 1.0)
}

fn set_compacting(plan: &Plan, on: bool) {
    for f in plan.inputs.iter().chain(plan.output_inputs.iter()) {
        f.set_being_compacted(on);
    }
}

/// Runs `plan` (the DB mutex is released during IO).
pub(crate) fn run<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    plan: Plan,
) -> MutexGuard<'a, DbState> {
    set_compacting(&plan, true);
    st.compactions_running += 1;
    let r = execute(db, &mut st, &plan);
    set_compacting(&plan, false);
    st.compactions_running -= 1;
    if let Err(e) = r {
        if !matches!(e, crate::error::Error::ShutdownInProgress) {
            db.set_bg_error(&mut st, e);
        }
    }
    db.bg_cv.notify_all();
    st
}

/// Compacts every file overlapping [start, end] into the last level.
/// Requires: no compaction running (the caller waited).
pub(crate) fn run_manual<'a>(
    db: &'a Arc<DbInner>,
    mut st: MutexGuard<'a, DbState>,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> (MutexGuard<'a, DbState>, Result<()>) {
    let v = st.versions.current();
    let n = v.num_levels();
    let last = n - 1;
    let lo = start.map(|s| s.to_vec());
    let hi = end.map(|e| e.to_vec());
    let in_range = |f: &FileMeta| {
        lo.as_deref().is_none_or(|l| f.largest_user_key() >= l)
            && hi.as_deref().is_none_or(|h| f.smallest_user_key() <= h)
    };
    let mut inputs: Vec<Arc<FileMeta>> = Vec::new();
    for level in 0..last {
        inputs.extend(v.files(level).iter().filter(|f| in_range(f)).cloned());
    }
    let mut output_inputs: Vec<Arc<FileMeta>> = v
        .files(last)
        .iter()
        .filter(|f| in_range(f))
        .cloned()
        .collect();
    if inputs.is_empty() && output_inputs.len() <= 1 {
        return (st, Ok(()));
    }
    // Widen the last level's inputs to everything the merged range touches.
    let all: Vec<&Arc<FileMeta>> = inputs.iter().chain(output_inputs.iter()).collect();
    if let (Some(min), Some(max)) = (
        all.iter().map(|f| f.smallest_user_key().to_vec()).min(),
        all.iter().map(|f| f.largest_user_key().to_vec()).max(),
    ) {
        output_inputs = v.overlapping_files(last, &min, &max);
    }
    let (level, inputs, output_inputs) = if inputs.is_empty() {
        (last, output_inputs, Vec::new())
    } else {
        (0, inputs, output_inputs)
    };
    let plan = Plan {
        level,
        output_level: last,
        inputs,
        output_inputs,
        trivial_move: false,
        bottommost: true,
        score: 0.0,
    };
    set_compacting(&plan, true);
    st.compactions_running += 1;
    let r = execute(db, &mut st, &plan);
    set_compacting(&plan, false);
    st.compactions_running -= 1;
    if let Err(e) = &r {
        if !matches!(e, crate::error::Error::ShutdownInProgress) {
            db.set_bg_error(&mut st, e.clone());
        }
    }
    (st, r)
}

fn level_of(v: &Version, number: u64) -> Option<usize> {
    (0..v.num_levels()).find(|&l| v.files(l).iter().any(|f| f.number == number))
}

fn execute(db: &Arc<DbInner>, st: &mut MutexGuard<'_, DbState>, plan: &Plan) -> Result<()> {
    let v = st.versions.current();
    let started = Instant::now();
    if plan.trivial_move {
        let mut edit = VersionEdit::default();
        let mut moved = 0;
        for f in &plan.inputs {
            edit.delete_file(plan.level, f.number);
            moved += f.file_size;
            edit.add_file(plan.output_level, f.as_ref().clone_meta());
        }
        st.versions.log_and_apply(&mut edit)?;
        db.install_super_version(st);
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
                format!("\"from_level\": {}", plan.level),
                format!("\"to_level\": {}", plan.output_level),
                format!(
                    "\"files\": {:?}",
                    plan.inputs.iter().map(|f| f.number).collect::<Vec<_>>()
                ),
                format!("\"bytes\": {moved}"),
            ],
        );
        return Ok(());
    }
    let snapshots = db.snapshots.all();
    let output_level = plan.output_level;
    let topts = table_options(db, output_level, plan.bottommost);
    let compression = topts.compression;
    let target = target_file_size(db, output_level);
    let cpu0 = thread_cpu_micros();
    let inputs: Vec<Arc<FileMeta>> = plan
        .inputs
        .iter()
        .chain(plan.output_inputs.iter())
        .cloned()
        .collect();
    let version_for_check = Arc::clone(&v);
    let bottommost = plan.bottommost;
    let result = MutexGuard::unlocked(st, || {
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(inputs.len());
        for f in &inputs {
            let t = db.table_cache.get(f.number)?;
            children.push(Box::new(t.iter(false)));
        }
        let mut iter = MergingIterator::new(children);
        iter.seek_to_first();
        let check: BaseLevelCheck<'_> = if bottommost {
            Box::new(|_| true)
        } else {
            let v = &version_for_check;
            Box::new(move |k: &[u8]| {
                ((output_level + 1)..v.num_levels())
                    .all(|l| v.overlapping_files(l, k, k).is_empty())
            })
        };
        let mut filter = EntryFilter::new(snapshots, Some(check));
        let mut alloc = || {
            let mut s = db.state.lock();
            let n = s.versions.new_file_number();
            s.pending_outputs.insert(n);
            n
        };
        let mut spec = OutputSpec {
            fs: &db.fs,
            dir: &db.dir,
            table_opts: topts,
            target_file_size: target,
            new_file_number: &mut alloc,
            shutting_down: &db.shutting_down,
        };
        let out = write_outputs(&mut iter, &mut filter, &mut spec)?;
        Ok::<_, crate::error::Error>((out, filter.keys_in, filter.keys_dropped))
    });
    let (outputs, keys_in, keys_dropped) = match result {
        Ok(r) => r,
        Err(e) => {
            st.pending_outputs.clear();
            return Err(e);
        }
    };
    let mut edit = VersionEdit::default();
    let current = st.versions.current();
    for f in &inputs {
        let level = level_of(&current, f.number).unwrap_or(plan.level);
        edit.delete_file(level, f.number);
    }
    let mut out_numbers = HashSet::new();
    for mut f in outputs.files {
        f.compression = compression.code();
        out_numbers.insert(f.number);
        db.log.event(
            "table_file_creation",
            &[
                format!("\"file_number\": {}", f.number),
                format!("\"file_size\": {}", f.file_size),
                format!("\"level\": {output_level}"),
            ],
        );
        edit.add_file(output_level, f);
    }
    let r = st.versions.log_and_apply(&mut edit);
    for n in &out_numbers {
        st.pending_outputs.remove(n);
    }
    r?;
    db.install_super_version(st);
    let read_non_output: u64 = plan.inputs.iter().map(|f| f.file_size).sum();
    let read_output: u64 = plan.output_inputs.iter().map(|f| f.file_size).sum();
    let job = LevelCompactionStats {
        bytes_read_non_output: if plan.level == output_level {
            0
        } else {
            read_non_output
        },
        bytes_read_output: read_output
            + if plan.level == output_level {
                read_non_output
            } else {
                0
            },
        bytes_written: outputs.bytes_written,
        micros: started.elapsed().as_micros() as u64,
        cpu_micros: thread_cpu_micros().saturating_sub(cpu0),
        count: 1,
        keys_in,
        keys_dropped,
        files_in_non_output: plan.inputs.len() as u64,
        files_in_output: plan.output_inputs.len() as u64,
        files_out: out_numbers.len() as u64,
        bytes_moved: 0,
    };
    db.stats.add_level(output_level, &job);
    db.stats
        .compaction_bytes_written
        .fetch_add(outputs.bytes_written, Ordering::Relaxed);
    db.log.event(
        "compaction_finished",
        &[
            format!("\"input_level\": {}", plan.level),
            format!("\"output_level\": {output_level}"),
            format!("\"num_input_files\": {}", inputs.len()),
            format!("\"num_output_files\": {}", out_numbers.len()),
            format!("\"total_output_size\": {}", outputs.bytes_written),
            format!("\"num_input_records\": {keys_in}"),
            format!("\"num_dropped_records\": {keys_dropped}"),
            format!(
                "\"lsm_state\": {:?}",
                st.versions.current().files_per_level()
            ),
        ],
    );
    delete_obsolete_files(db, st);
    Ok(())
}
