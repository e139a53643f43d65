//! Level sizing for leveled compaction: the target size of every level, the
//! compaction score of every level and the estimate of bytes compaction
//! still has to rewrite. Pure functions of a `Version` and a family's
//! [`LevelSizing`] (RocksDB computes them in `VersionStorageInfo`): the
//! compaction picker ranks levels by them and the write path stalls on
//! the pending-bytes estimate.
//!
//! Targets: with `level_compaction_dynamic_level_bytes` they are sized
//! backwards from the largest level (RocksDB's `CalculateBaseBytes`): the
//! first non-empty level below L0 gets the largest level's size divided by
//! the multiplier once per level in between, the *base level* (where L0
//! compacts into) moves up while that size exceeds `max_bytes_for_level_base`,
//! and a backlogged L0 larger than the base target raises the base target and
//! flattens the multiplier. Without dynamic sizing L1 is the base level with
//! `max_bytes_for_level_base` and each level is `multiplier` times the one
//! above.
//!
//! Invariant: the base level is never below the first non-empty level, so
//! L0 data never skips a level that holds older data for the same keys.

use super::{FileMeta, Version};

/// What level sizing reads of a family's options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LevelSizing {
    pub num_levels: usize,
    /// `level0_file_num_compaction_trigger`.
    pub l0_trigger: usize,
    pub max_bytes_for_level_base: u64,
    /// `max_bytes_for_level_multiplier`.
    pub multiplier: f64,
    /// `level_compaction_dynamic_level_bytes`.
    pub dynamic: bool,
}

impl From<&LevelSizing> for LevelSizing {
    fn from(o: &LevelSizing) -> Self {
        *o
    }
}

/// Level sizing: the base level and a target per level (0 = no target).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LevelTargets {
    pub base_level: usize,
    pub targets: Vec<u64>,
    /// Multiplier in use between levels below the base level.
    pub multiplier: f64,
}

/// Targets of every level for the current shape.
pub(crate) fn level_targets(v: &Version, o: impl Into<LevelSizing>) -> LevelTargets {
    let o = &o.into();
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
            multiplier: o.multiplier,
        };
    }
    let last = n - 1;
    let max_level_bytes = (1..n).map(|l| v.level_bytes(l)).max().unwrap_or(0);
    let base_max = o.max_bytes_for_level_base as f64;
    let Some(first_non_empty) = (1..n).find(|&l| v.level_bytes(l) > 0) else {
        // Only L0 holds data: it compacts straight into the last level.
        targets[last] = o.max_bytes_for_level_base;
        return LevelTargets {
            base_level: last,
            targets,
            multiplier: o.multiplier,
        };
    };
    let base_min = base_max / o.multiplier;
    let mut cur = max_level_bytes as f64;
    for _ in first_non_empty..last {
        cur /= o.multiplier;
    }
    let mut base_level = first_non_empty;
    let mut base_size = if cur <= base_min {
        base_min + 1.0
    } else {
        while base_level > 1 && cur > base_max {
            base_level -= 1;
            cur /= o.multiplier;
        }
        if cur > base_max {
            base_max // even L1 would be too large
        } else {
            cur.max(1.0)
        }
    };
    // A backlogged L0 bigger than the base target: size the base level to
    // L0 so one L0 compaction does not rewrite a much larger base level, and
    // spread the remaining growth evenly over the levels below.
    let l0 = v.level_bytes(0) as f64;
    let mut multiplier = o.multiplier;
    if l0 > base_size && (l0 > base_max || v.num_files(0) / 2 >= o.l0_trigger) {
        base_size = l0;
        multiplier = if base_level == last {
            1.0
        } else {
            (max_level_bytes as f64 / base_size)
                .powf(1.0 / (last - base_level) as f64)
                .max(1.0)
        };
    }
    let mut size = base_size;
    for (i, target) in targets.iter_mut().enumerate().skip(base_level) {
        if i > base_level {
            size *= multiplier;
        }
        // Never below the base size, or L0 would lose to tiny levels.
        *target = size.max(base_max) as u64;
    }
    LevelTargets {
        base_level,
        targets,
        multiplier,
    }
}

/// A file's size for picking (RocksDB's compensated size): its bytes; plus,
/// when more than half its entries are point tombstones, twice the average
/// entry size per tombstone in excess (RocksDB's weight); plus, when it
/// holds range tombstones, the bytes of the files below the keys they span
/// (the file's whole key range when that span is unknown, after a reopen),
/// which they may free (RocksDB counts the range tombstones' own ranges:
/// one tombstone far from the file's point keys weighs only what it covers). Tombstone-dense files so weigh more in level scores
/// and look cheaper to push down, and space comes back without a manual
/// compaction.
pub(crate) fn compensated_size(v: &Version, level: usize, f: &FileMeta) -> u64 {
    let mut size = f.file_size;
    if f.num_entries > 0 && f.num_deletions * 2 > f.num_entries {
        let avg = f.file_size / f.num_entries;
        size = size.saturating_add((f.num_deletions * 2 - f.num_entries).saturating_mul(avg * 2));
    }
    if f.num_range_deletions > 0 {
        let (lo, hi) = f.range_del_span.get().map_or_else(
            || (f.smallest_user_key(), f.largest_user_key()),
            |(start, end)| (start.as_slice(), end.as_slice()),
        );
        // (expired values weigh through the picker's own trigger)
        for below in (level + 1).max(1)..v.num_levels() {
            let bytes: u64 = v
                .overlapping_files(below, lo, hi)
                .iter()
                .map(|g| g.file_size)
                .sum();
            size = size.saturating_add(bytes);
        }
    }
    size
}

/// Scores of levels 0..num_levels (the last level has none): L0 by file
/// count over the trigger (and by compensated size over the base target),
/// Ln by compensated bytes not being compacted over the level's target.
pub(crate) fn scores(v: &Version, o: impl Into<LevelSizing>, t: &LevelTargets) -> Vec<f64> {
    let o = &o.into();
    let mut s = vec![0.0; o.num_levels];
    let l0_idle: Vec<_> = v
        .files(0)
        .iter()
        .filter(|f| !f.is_being_compacted())
        .collect();
    let l0_bytes: u64 = l0_idle.iter().map(|f| compensated_size(v, 0, f)).sum();
    let mut l0_target = o.max_bytes_for_level_base as f64;
    if o.dynamic && t.multiplier > 0.0 {
        let base_target = t.targets.get(t.base_level).copied().unwrap_or(0) as f64;
        l0_target = l0_target.max(base_target / t.multiplier);
    }
    s[0] = (l0_idle.len() as f64 / o.l0_trigger as f64).max(l0_bytes as f64 / l0_target.max(1.0));
    for (level, score) in s.iter_mut().enumerate().take(o.num_levels - 1).skip(1) {
        let target = t.targets.get(level).copied().unwrap_or(0);
        if target == 0 {
            continue;
        }
        let bytes: u64 = v
            .files(level)
            .iter()
            .filter(|f| !f.is_being_compacted())
            .map(|f| compensated_size(v, level, f))
            .sum();
        *score = bytes as f64 / target as f64;
    }
    s
}

/// RocksDB's estimate of the bytes compaction must still rewrite to bring
/// every level under its target: L0 (with the base level) once L0 triggers,
/// then for each level over target the excess times the fan-out into the
/// next level, carrying the excess down.
pub(crate) fn pending_compaction_bytes(v: &Version, o: impl Into<LevelSizing>) -> u64 {
    let o = &o.into();
    let t = level_targets(v, o);
    let mut total = 0u64;
    let l0 = v.level_bytes(0);
    let l0_triggered = v.num_files(0) >= o.l0_trigger || l0 >= o.max_bytes_for_level_base;
    let mut carried = 0u64;
    if l0_triggered {
        total += l0;
        carried = l0;
    }
    let mut next_known: Option<u64> = None;
    for level in t.base_level..o.num_levels - 1 {
        let own = next_known.take().unwrap_or_else(|| v.level_bytes(level));
        if level == t.base_level && l0_triggered {
            total += own;
        }
        let size = own + carried;
        carried = 0;
        let target = t.targets.get(level).copied().unwrap_or(u64::MAX);
        if size > target {
            carried = size - target;
            let next = v.level_bytes(level + 1);
            next_known = Some(next);
            if next > 0 {
                total += (carried as f64 * (next as f64 / size as f64 + 1.0)) as u64;
            }
        }
    }
    total
}

/// The number of sorted runs of `v` (what write stalls count for a
/// universal family, in place of L0 files).
pub(crate) fn num_sorted_runs(v: &Version) -> usize {
    v.num_files(0) + (1..v.num_levels()).filter(|&l| v.num_files(l) > 0).count()
}

#[cfg(test)]
mod tests;
