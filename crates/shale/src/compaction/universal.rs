//! The universal (tiered) compaction picker: RocksDB's
//! `UniversalCompactionPicker`, a pure function of the LSM shape and the
//! options that returns a plan (or nothing). It does no IO.
//!
//! Sorted runs, newest first: each L0 file is one run, then each non-empty
//! level ≥ 1 is one run (every level holds one run, newer than the levels
//! below it). Once there are at least `level0_file_num_compaction_trigger`
//! runs, in RocksDB's order:
//! 1. **Space amplification**: when the runs before the oldest add up to
//!    `max_size_amplification_percent`% of the oldest run or more, all runs
//!    merge into the last level (a full compaction). With `incremental`, a
//!    key-range slice of the second-oldest run merges into the oldest's
//!    level instead when a slice is worth it, else the newer runs first
//!    merge into one level above the oldest (`universal_incremental`).
//! 2. **Size ratio**: from the newest run on, the first window of at least
//!    `min_merge_width` (at most `max_merge_width`) consecutive runs where
//!    each next run is at most `(100 + size_ratio)%` of the runs picked so
//!    far (`TotalSize`) or of the previous run (`SimilarSize`).
//! 3. **Run count**: if there are still more runs than the trigger, the
//!    newest `runs - trigger + 1` runs merge whatever their sizes.
//!
//! A plan's runs are consecutive and none is being compacted. Its output
//! level is the last level when the oldest run is among them, else the
//! level just above the next older run (0 when that run is an L0 file), so
//! a level never holds data older than a level below it, and running jobs
//! never write the same level (a newer job's output is above every older
//! job's inputs). Tombstones are dropped only when nothing older lies below
//! the output (`bottommost`, or the per-key check of the job for levels
//! below).
//!
//! `compression_size_percent` ≥ 0: outputs are written uncompressed when
//! the runs older than the plan already hold that share of the data.
//! `allow_trivial_move`: runs whose files do not overlap (and each lie in
//! one partition of the family's `sst_partitioner_factory`) move to the output
//! level by a MANIFEST edit. `incremental`: a merge whose next older run is
//! a level ≥ 2 gets that level as grandparents, so its outputs are cut in
//! line with the files below (see `plan_for`).

use std::sync::Arc;

use crate::events::CompactionReason;
use crate::options::{UniversalCompactionOptions, UniversalStopStyle};
use crate::version::{FileMeta, Version};

use super::plan::{PickerOptions, Plan};
use super::universal_incremental;

pub(crate) use super::sorted_runs::{sorted_runs, SortedRun};
pub(crate) use crate::version::sizing::num_sorted_runs;

/// The most urgent universal compaction of `v`, if one is due.
pub(crate) fn pick(v: &Version, o: &PickerOptions) -> Option<Plan> {
    let u = &o.universal;
    let runs = sorted_runs(v, o.num_levels);
    let trigger = o.l0_trigger.max(1);
    if runs.len() < trigger {
        return None;
    }
    let score = runs.len() as f64 / trigger as f64;
    let plan = |start, end, uncompressed, reason| {
        let mut p = plan_for(v, o, &runs, start, end, score, uncompressed);
        p.reason = reason;
        p
    };
    if let Some(start) = size_amp_window(&runs, u) {
        let reason = CompactionReason::UniversalSizeAmplification;
        if u.incremental {
            let newer: u64 = runs[start..runs.len() - 1].iter().map(|r| r.size).sum();
            if let Some(plan) = universal_incremental::pick(&runs, newer, o, score) {
                return Some(plan);
            }
            if universal_incremental::gather_first(&runs[start..], newer) {
                let end = runs.len() - 1;
                let uncompressed = !compress_output(&runs, end, u.compression_size_percent);
                return Some(plan(start, end, uncompressed, reason));
            }
        }
        return Some(plan(start, runs.len(), false, reason));
    }
    if let Some((start, end)) = ratio_window(&runs, u, f64::from(u.size_ratio), u32::MAX) {
        let uncompressed = !compress_output(&runs, end, u.compression_size_percent);
        let reason = CompactionReason::UniversalSizeRatio;
        return Some(plan(start, end, uncompressed, reason));
    }
    let idle = runs.iter().filter(|r| !r.being_compacted).count();
    if idle > trigger {
        let width = (idle - trigger + 1) as u32;
        if let Some((start, end)) = ratio_window(&runs, u, f64::INFINITY, width) {
            let uncompressed = !compress_output(&runs, end, u.compression_size_percent);
            let reason = CompactionReason::UniversalSortedRunNum;
            return Some(plan(start, end, uncompressed, reason));
        }
    }
    None
}

/// `compact_range` of a universal family: every run into the last level
/// (RocksDB compacts all files whatever the range). `None` when there is
/// nothing to merge: no file, or one run already in the last level and no
/// reason to rewrite it (`rewrite_bottommost`).
pub(crate) fn manual_plan(v: &Version, o: &PickerOptions) -> Option<Plan> {
    let runs = sorted_runs(v, o.num_levels);
    let last = o.num_levels - 1;
    match runs.as_slice() {
        [] => None,
        [only] if only.level == last && !o.rewrite_bottommost => None,
        _ => {
            let mut plan = plan_for(v, o, &runs, 0, runs.len(), 0.0, false);
            // A manual compaction rewrites: that is what it was asked for.
            plan.trivial_move = false;
            plan.reason = CompactionReason::ManualCompaction;
            Some(plan)
        }
    }
}

/// The window of the size-amplification merge (it always ends with the
/// oldest run): the runs from the newest idle one on, when none of them is
/// being compacted and they add up to the threshold.
fn size_amp_window(runs: &[SortedRun], u: &UniversalCompactionOptions) -> Option<usize> {
    if runs.len() < 2 {
        return None;
    }
    let (oldest, newer) = runs.split_last()?;
    let start = newer.iter().position(|r| !r.being_compacted)?;
    if oldest.being_compacted || newer[start..].iter().any(|r| r.being_compacted) {
        return None;
    }
    let candidate: u64 = newer[start..].iter().map(|r| r.size).sum();
    let threshold = u128::from(u.max_size_amplification_percent) * u128::from(oldest.size);
    if u128::from(candidate) * 100 < threshold {
        return None;
    }
    Some(start)
}

/// The first window `[start, end)` of at least `min_merge_width` and at most
/// `min(max_merge_width, max_runs)` idle consecutive runs, each next run at
/// most `(100 + ratio)%` of the picked runs (`TotalSize`) or of the
/// previous run (`SimilarSize`).
fn ratio_window(
    runs: &[SortedRun],
    u: &UniversalCompactionOptions,
    ratio: f64,
    max_runs: u32,
) -> Option<(usize, usize)> {
    let max_width = u.max_merge_width.min(max_runs) as usize;
    let min_width = u.min_merge_width.max(2) as usize;
    let grow = (100.0 + ratio) / 100.0;
    for start in 0..runs.len() {
        if runs[start].being_compacted {
            continue;
        }
        let mut picked = runs[start].size as f64;
        let mut count = 1;
        for next in &runs[start + 1..] {
            if count >= max_width || next.being_compacted {
                break;
            }
            let next_size = next.size as f64;
            if picked * grow < next_size {
                break;
            }
            match u.stop_style {
                UniversalStopStyle::SimilarSize => {
                    if next_size * grow < picked {
                        break;
                    }
                    picked = next_size;
                }
                UniversalStopStyle::TotalSize => picked += next_size,
            }
            count += 1;
        }
        if count >= min_width {
            return Some((start, start + count));
        }
    }
    None
}

/// False when the runs older than `end` already hold
/// `compression_size_percent`% of all data (then the merge of newer runs
/// is written uncompressed); always true with -1.
fn compress_output(runs: &[SortedRun], end: usize, percent: i32) -> bool {
    if percent < 0 {
        return true;
    }
    let total: u128 = runs.iter().map(|r| u128::from(r.size)).sum();
    let mut older: u128 = 0;
    for r in runs[end..].iter().rev() {
        older += u128::from(r.size);
        if older * 100 >= total * percent as u128 {
            return false;
        }
    }
    true
}

/// The plan merging `runs[start..end]` (its reason is the caller's to
/// set; `ManualCompaction` until then).
fn plan_for(
    v: &Version,
    o: &PickerOptions,
    runs: &[SortedRun],
    start: usize,
    end: usize,
    score: f64,
    uncompressed: bool,
) -> Plan {
    let last = o.num_levels - 1;
    let output_level = match runs.get(end) {
        None => last,
        Some(next) if next.level == 0 => 0,
        Some(next) => next.level - 1,
    };
    let picked = &runs[start..end];
    let level = picked[0].level;
    let mut inputs = Vec::new();
    let mut middle: Vec<(usize, Vec<Arc<FileMeta>>)> = Vec::new();
    let mut output_inputs = Vec::new();
    for r in picked {
        if r.level == output_level {
            output_inputs.extend(r.files.iter().cloned());
        } else if r.level == level {
            inputs.extend(r.files.iter().cloned());
        } else {
            middle.push((r.level, r.files.clone()));
        }
    }
    // Every run in one level: the plan rewrites that level in place.
    if inputs.is_empty() {
        inputs = std::mem::take(&mut output_inputs);
    }
    let bottommost = end == runs.len() && !o.ingest_behind;
    // Incremental: outputs above a level ≥ 2 are cut where they would
    // overlap too much of it (`max_grandparent_overlap`, set by the
    // runner), so the files of the second-oldest run line up with the
    // oldest's and slices of them rewrite little of it (RocksDB's
    // grandparents of a universal compaction).
    let grandparents = match runs.get(end) {
        Some(next) if o.universal.incremental && next.level > 1 => next.files.clone(),
        _ => Vec::new(),
    };
    let trivial_move = o.universal.allow_trivial_move
        && output_level > level
        && output_level > 0
        && files_disjoint(picked.iter().flat_map(|r| r.files.iter()))
        && picked
            .iter()
            .flat_map(|r| r.files.iter())
            .all(|f| super::picker::movable(o, f));
    debug_assert!(v.num_levels() == o.num_levels + usize::from(o.ingest_behind));
    Plan {
        level,
        output_level,
        inputs,
        middle,
        output_inputs,
        grandparents,
        trivial_move,
        uncompressed,
        bottommost,
        score,
        reason: CompactionReason::ManualCompaction,
    }
}

/// True when no two of `files` share a user key.
fn files_disjoint<'a>(files: impl Iterator<Item = &'a Arc<FileMeta>>) -> bool {
    let mut ranges: Vec<(&[u8], &[u8])> = files
        .map(|f| (f.smallest_user_key(), f.largest_user_key()))
        .collect();
    ranges.sort_unstable();
    ranges.windows(2).all(|w| w[0].1 < w[1].0)
}

#[cfg(test)]
mod tests;
