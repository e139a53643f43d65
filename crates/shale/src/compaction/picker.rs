//! The leveled compaction picker: a pure function of the LSM shape and the
//! options that returns a plan (or nothing). It does no IO.
//!
//! Level targets: with `level_compaction_dynamic_level_bytes` the targets are
//! sized backwards from the largest level (≈90% of the data sits in the last
//! level) and L0 compacts into the *base level*, the first level with a
//! target; otherwise L1 = `max_bytes_for_level_base` and each level is
//! `max_bytes_for_level_multiplier` times the one above.
//! Scores: L0 = files / `level0_file_num_compaction_trigger`; Ln = bytes not
//! being compacted / target. The highest score ≥ 1 wins. In a level the file
//! with the smallest overlap with the next level per byte is chosen
//! (RocksDB's kMinOverlappingRatio); ties rotate with a per-level cursor.

use std::sync::Arc;

use crate::base::compare_internal;
use crate::version::{FileMeta, Version};

/// Options the picker reads (a narrow view of `Options`).
#[derive(Debug, Clone)]
pub(crate) struct PickerOptions {
    pub num_levels: usize,
    pub l0_trigger: usize,
    pub max_bytes_for_level_base: u64,
    pub multiplier: f64,
    pub dynamic: bool,
    pub max_compaction_bytes: u64,
    /// Compression byte of each output level (trivial moves need a match).
    pub compression_per_level: Vec<u8>,
}

/// What to compact.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub level: usize,
    pub output_level: usize,
    pub inputs: Vec<Arc<FileMeta>>,
    pub output_inputs: Vec<Arc<FileMeta>>,
    /// Move the input files by a MANIFEST edit alone.
    pub trivial_move: bool,
    /// No data below the output level overlaps the inputs.
    pub bottommost: bool,
    pub score: f64,
}

/// Level sizing: the base level and a target per level (0 = no target).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LevelTargets {
    pub base_level: usize,
    pub targets: Vec<u64>,
}

pub(crate) fn level_targets(v: &Version, o: &PickerOptions) -> LevelTargets {
    let n = o.num_levels;
    let mut targets = vec![0u64; n];
    if !o.dynamic {
        let mut t = o.max_bytes_for_level_base as f64;
        for target in targets.iter_mut().skip(1) {
            *target = t as u64;
            t *= o.multiplier;
        }
        return LevelTargets {
            base_level: 1,
            targets,
        };
    }
    // RocksDB's CalculateBaseBytes: size the first non-empty level from the
    // largest level divided by the multiplier once per level above it, then
    // move the base level up while it would exceed the base size.
    let last = n - 1;
    let max_level_bytes = (1..n).map(|l| v.level_bytes(l)).max().unwrap_or(0);
    let Some(first_non_empty) = (1..n).find(|&l| v.level_bytes(l) > 0) else {
        targets[last] = o.max_bytes_for_level_base;
        return LevelTargets {
            base_level: last,
            targets,
        };
    };
    let base_max = o.max_bytes_for_level_base as f64;
    let base_min = base_max / o.multiplier;
    let mut cur = max_level_bytes as f64;
    for _ in first_non_empty..last {
        cur /= o.multiplier;
    }
    let mut base_level = first_non_empty;
    let base_size;
    if cur <= base_min {
        base_size = base_min + 1.0;
    } else {
        while base_level > 1 && cur > base_max {
            base_level -= 1;
            cur /= o.multiplier;
        }
        base_size = cur.max(1.0);
    }
    let mut size = base_size;
    for (i, target) in targets.iter_mut().enumerate().skip(base_level) {
        if i > base_level {
            size *= o.multiplier;
        }
        // Never below the base size, or L0 would lose to tiny levels.
        *target = size.max(base_max) as u64;
    }
    LevelTargets {
        base_level,
        targets,
    }
}

fn not_compacting(files: &[Arc<FileMeta>]) -> impl Iterator<Item = &Arc<FileMeta>> {
    files.iter().filter(|f| !f.is_being_compacted())
}

/// Scores of levels 0..num_levels-1 (the last level has no score).
pub(crate) fn scores(v: &Version, o: &PickerOptions, t: &LevelTargets) -> Vec<f64> {
    let mut s = vec![0.0; o.num_levels];
    s[0] = not_compacting(v.files(0)).count() as f64 / o.l0_trigger as f64;
    for (level, score) in s.iter_mut().enumerate().take(o.num_levels - 1).skip(1) {
        if t.targets[level] == 0 {
            continue;
        }
        let bytes: u64 = not_compacting(v.files(level)).map(|f| f.file_size).sum();
        *score = bytes as f64 / t.targets[level] as f64;
    }
    s
}

/// Picks the most urgent compaction, if any level scores ≥ 1.
pub(crate) fn pick(v: &Version, o: &PickerOptions, cursors: &mut [usize]) -> Option<Plan> {
    let t = level_targets(v, o);
    let s = scores(v, o, &t);
    let mut order: Vec<usize> = (0..o.num_levels - 1).collect();
    order.sort_by(|a, b| {
        s[*b]
            .partial_cmp(&s[*a])
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for level in order {
        if s[level] < 1.0 {
            break;
        }
        let plan = if level == 0 {
            pick_l0(v, o, &t, s[0])
        } else {
            pick_level(v, o, &t, level, s[level], cursors)
        };
        if plan.is_some() {
            return plan;
        }
    }
    None
}

fn key_range(files: &[Arc<FileMeta>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut it = files.iter();
    let first = it.next()?;
    let (mut lo, mut hi) = (first.smallest.clone(), first.largest.clone());
    for f in it {
        if compare_internal(&f.smallest, &lo).is_lt() {
            lo = f.smallest.clone();
        }
        if compare_internal(&f.largest, &hi).is_gt() {
            hi = f.largest.clone();
        }
    }
    Some((lo, hi))
}

fn overlapping(v: &Version, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMeta>> {
    v.overlapping_files(
        level,
        crate::base::extract_user_key(lo),
        crate::base::extract_user_key(hi),
    )
}

fn finish_plan(v: &Version, o: &PickerOptions, mut plan: Plan) -> Option<Plan> {
    if plan
        .inputs
        .iter()
        .chain(plan.output_inputs.iter())
        .any(|f| f.is_being_compacted())
    {
        return None;
    }
    let (lo, hi) = key_range(&plan.inputs)?;
    plan.bottommost =
        ((plan.output_level + 1)..o.num_levels).all(|l| overlapping(v, l, &lo, &hi).is_empty());
    let out_compression = o
        .compression_per_level
        .get(plan.output_level)
        .or(o.compression_per_level.last())
        .copied()
        .unwrap_or(0);
    let gp_bytes: u64 = if plan.output_level + 1 < o.num_levels {
        overlapping(v, plan.output_level + 1, &lo, &hi)
            .iter()
            .map(|f| f.file_size)
            .sum()
    } else {
        0
    };
    plan.trivial_move = plan.output_inputs.is_empty()
        && plan.inputs.iter().all(|f| f.compression == out_compression)
        && gp_bytes <= o.max_compaction_bytes
        && inputs_disjoint(&plan.inputs);
    Some(plan)
}

/// True when the files' key ranges do not overlap each other.
fn inputs_disjoint(files: &[Arc<FileMeta>]) -> bool {
    let mut sorted: Vec<&Arc<FileMeta>> = files.iter().collect();
    sorted.sort_by(|a, b| compare_internal(&a.smallest, &b.smallest));
    sorted
        .windows(2)
        .all(|w| w[0].largest_user_key() < w[1].smallest_user_key())
}

fn pick_l0(v: &Version, o: &PickerOptions, t: &LevelTargets, score: f64) -> Option<Plan> {
    let inputs: Vec<Arc<FileMeta>> = v.files(0).to_vec();
    if inputs.is_empty() || inputs.iter().any(|f| f.is_being_compacted()) {
        return None;
    }
    let (lo, hi) = key_range(&inputs)?;
    let output_level = t.base_level;
    let output_inputs = overlapping(v, output_level, &lo, &hi);
    finish_plan(
        v,
        o,
        Plan {
            level: 0,
            output_level,
            inputs,
            output_inputs,
            trivial_move: false,
            bottommost: false,
            score,
        },
    )
}

fn pick_level(
    v: &Version,
    o: &PickerOptions,
    _t: &LevelTargets,
    level: usize,
    score: f64,
    cursors: &mut [usize],
) -> Option<Plan> {
    let files = v.files(level);
    if files.is_empty() {
        return None;
    }
    let start = cursors.get(level).copied().unwrap_or(0) % files.len();
    let mut best: Option<(f64, usize, Vec<Arc<FileMeta>>)> = None;
    for k in 0..files.len() {
        let i = (start + k) % files.len();
        let f = &files[i];
        if f.is_being_compacted() {
            continue;
        }
        let next = overlapping(v, level + 1, &f.smallest, &f.largest);
        if next.iter().any(|n| n.is_being_compacted()) {
            continue;
        }
        let overlap: u64 = next.iter().map(|n| n.file_size).sum();
        let ratio = overlap as f64 / f.file_size.max(1) as f64;
        if best.as_ref().is_none_or(|b| ratio < b.0) {
            best = Some((ratio, i, next));
        }
    }
    let (_, i, output_inputs) = best?;
    if let Some(c) = cursors.get_mut(level) {
        *c = i + 1;
    }
    finish_plan(
        v,
        o,
        Plan {
            level,
            output_level: level + 1,
            inputs: vec![Arc::clone(&files[i])],
            output_inputs,
            trivial_move: false,
            bottommost: false,
            score,
        },
    )
}
