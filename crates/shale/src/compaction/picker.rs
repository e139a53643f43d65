//! The leveled compaction picker: a pure function of the LSM shape, the
//! options and the running compactions that returns a plan (or nothing). It
//! does no IO. Level targets and scores come from `sizing`.
//!
//! Choice: the level with the highest score ≥ 1 that yields a runnable plan.
//! L0 compacts all its files into the base level (one L0 compaction at a
//! time, as its files overlap); while it cannot (the base level or older L0
//! files are being compacted) and L0 piles up, its newest files merge into
//! one L0 file (intra-L0, `pick_intra_l0`). In a level Ln ≥ 1 the file
//! with the smallest overlap with Ln+1 per byte is chosen (RocksDB's
//! kMinOverlappingRatio), ties broken by a per-level round-robin cursor,
//! and joined by its neighbours that add no Ln+1 file (`expand_inputs`).
//!
//! Concurrency: a plan never takes a file being compacted (input or
//! output-level file of a running job), and its key range at the output
//! level never intersects the output range of a running compaction into the
//! same level (`RunningOutput`), so compactions of disjoint key ranges run
//! in parallel and their outputs never overlap.
//!
//! Trivial move (the inputs are re-linked to the output level by a MANIFEST
//! edit): no overlapping file in the output level, the inputs do not overlap
//! each other (several L0 files may move at once), every input already has
//! the output level's compression, and the grandparent overlap is at most
//! `max_compaction_bytes`.
//!
//! Every plan names why it was picked (`Plan::reason`, RocksDB's
//! `CompactionReason`): the L0 file count or a level's size by score, then
//! files marked by their tombstones (`FilesMarkedForCompaction`), their
//! expired values (`Ttl`) or last-level tombstones no snapshot needs any
//! more (`BottommostFiles`), then forced blob garbage collection
//! (`ForcedBlobGc`); manual plans say `ManualCompaction`.

use std::sync::Arc;

use crate::events::CompactionReason;
use crate::options::CompactionStyle;
use crate::version::{FileMeta, Version};

pub(crate) use crate::version::sizing::{level_targets, scores, LevelTargets};

pub(crate) use super::plan::{user_range, PickerOptions, Plan, RunningOutput};

/// Picks the most urgent runnable compaction, if any level scores ≥ 1.
pub(crate) fn pick(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    cursors: &mut [usize],
) -> Option<Plan> {
    let t = level_targets(v, o);
    let s = scores(v, o, &t);
    let mut order: Vec<usize> = (0..o.num_levels - 1).collect();
    order.sort_by(|a, b| s[*b].total_cmp(&s[*a]));
    for level in order {
        if s[level] < 1.0 {
            break;
        }
        let plan = if level == 0 {
            pick_l0_trivial_move(v, o, &t, running, s[0])
                .or_else(|| pick_l0(v, o, &t, running, s[0]))
                .or_else(|| pick_intra_l0(v, o, running, s[0]))
        } else {
            pick_level(v, o, running, level, s[level], cursors)
        };
        if plan.is_some() {
            return plan;
        }
    }
    pick_tombstone_dense(v, o, running).or_else(|| pick_forced_blob_gc(v, o, running))
}

/// Point tombstones a file needs, beside being more than half tombstones,
/// to be compacted for them alone.
const DENSE_MIN_DELETIONS: u64 = 256;

/// A file holding mostly point tombstones, or range tombstones over at
/// least its own size of data below, or mostly values that have expired
/// (RocksDB's `ttl` does this for files by age), compacted into the next
/// level though
/// no level is over its target (RocksDB leaves this to an optional table
/// property collector): the tombstones travel down and drop what they
/// cover, and drop themselves at the last level, so the space comes back
/// and seeks stop crossing them. At the last level only expired files are
/// rewritten (in place; its tombstones are dropped as they arrive, or kept
/// for a snapshot, and rewriting them again would change nothing); L0 as a
/// whole into the base level, as its file-count trigger would.
fn pick_tombstone_dense(v: &Version, o: &PickerOptions, running: &[RunningOutput]) -> Option<Plan> {
    let last = o.num_levels.saturating_sub(1);
    let dense = |level: usize, f: &FileMeta| {
        (f.num_deletions >= DENSE_MIN_DELETIONS && f.num_deletions * 2 > f.num_entries)
            || (f.num_range_deletions > 0
                && crate::version::sizing::compensated_size(v, level, f)
                    >= f.file_size.saturating_mul(2))
    };
    // L0 moves whole (its files overlap): all of it into the base level.
    if v.files(0)
        .iter()
        .any(|f| !f.is_being_compacted() && dense(0, f))
    {
        if let Some(plan) = pick_l0(v, o, &level_targets(v, o), running, 0.0) {
            return Some(Plan {
                reason: CompactionReason::FilesMarkedForCompaction,
                ..plan
            });
        }
    }
    for level in 1..o.num_levels {
        for f in v.files(level) {
            if f.is_being_compacted() {
                continue;
            }
            let expired = f.mostly_expired(o.now);
            if level == last {
                // Expired values, and tombstones a snapshot kept that none
                // needs any more, are dropped by rewriting the file in
                // place.
                let unpinned =
                    !o.ingest_behind && o.oldest_snapshot.is_none_or(|s| s >= f.largest_seq);
                let stale = unpinned
                    && (f.num_range_deletions > 0
                        || (f.num_deletions >= DENSE_MIN_DELETIONS
                            && f.num_deletions * 2 > f.num_entries));
                if expired || stale {
                    let reason = if expired {
                        CompactionReason::Ttl
                    } else {
                        CompactionReason::BottommostFiles
                    };
                    if let Some(plan) = in_place_plan(v, o, running, level, f, reason) {
                        return Some(plan);
                    }
                }
                continue;
            }
            let dense =
                f.num_deletions >= DENSE_MIN_DELETIONS && f.num_deletions * 2 > f.num_entries;
            let ranged = f.num_range_deletions > 0
                && crate::version::sizing::compensated_size(v, level, f)
                    >= f.file_size.saturating_mul(2);
            if !(dense || ranged || expired) {
                continue;
            }
            let next = v.overlapping_files(level + 1, f.smallest_user_key(), f.largest_user_key());
            if next.iter().any(|n| n.is_being_compacted()) {
                continue;
            }
            let inputs = expand_inputs(v, o, level, f, &next);
            // Expiry first: a file both expired and dense is compacted
            // because its values expired (RocksDB's `ttl` outranks marks).
            let reason = if expired {
                CompactionReason::Ttl
            } else {
                CompactionReason::FilesMarkedForCompaction
            };
            let plan = Plan::new(level, level + 1, inputs, next, reason);
            let plan = finish_plan(v, o, running, plan);
            if plan.is_some() {
                return plan;
            }
        }
    }
    None
}

/// A rewrite of `f` (with the files of its level it shares a user key
/// with) into its own level; `None` when one of them is being compacted
/// or the range is busy.
fn in_place_plan(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    level: usize,
    f: &Arc<FileMeta>,
    reason: CompactionReason,
) -> Option<Plan> {
    let inputs = clean_cut(v, level, vec![Arc::clone(f)]);
    if inputs.iter().any(|g| g.is_being_compacted()) {
        return None;
    }
    let plan = Plan::new(level, level, inputs, Vec::new(), reason);
    let mut plan = finish_plan(v, o, running, plan)?;
    plan.trivial_move = false;
    Some(plan)
}

/// Forced blob garbage collection (RocksDB's
/// `blob_garbage_collection_force_threshold`): a table of level ≥ 1 that
/// references a blob file below `blob_gc_below` is rewritten in place, so
/// its references into the old, mostly garbage blob files are relocated
/// and those files empty. Deepest level first (where most references
/// are).
fn pick_forced_blob_gc(v: &Version, o: &PickerOptions, running: &[RunningOutput]) -> Option<Plan> {
    if o.blob_gc_below == 0 {
        return None;
    }
    for level in (1..o.num_levels).rev() {
        for f in v.files(level) {
            let old = f.oldest_blob_file != 0 && f.oldest_blob_file < o.blob_gc_below;
            if old && !f.is_being_compacted() {
                let reason = CompactionReason::ForcedBlobGc;
                if let Some(plan) = in_place_plan(v, o, running, level, f, reason) {
                    return Some(plan);
                }
            }
        }
    }
    None
}

fn overlaps_running(running: &[RunningOutput], level: usize, lo: &[u8], hi: &[u8]) -> bool {
    running.iter().any(|r| {
        r.output_level == level && r.smallest.as_slice() <= hi && lo <= r.largest.as_slice()
    })
}

fn compression_of(o: &PickerOptions, level: usize, bottommost: bool) -> u8 {
    if bottommost {
        if let Some(c) = o.bottommost_compression {
            return c;
        }
    }
    o.compression_per_level
        .get(level)
        .or(o.compression_per_level.last())
        .copied()
        .unwrap_or(0)
}

/// Completes a plan: refuses it when it touches running work, then fills
/// in the grandparents, bottommost and trivial-move fields.
fn finish_plan(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    mut plan: Plan,
) -> Option<Plan> {
    if plan
        .inputs
        .iter()
        .chain(plan.output_inputs.iter())
        .any(|f| f.is_being_compacted())
    {
        return None;
    }
    let out = plan.output_range()?;
    if overlaps_running(running, plan.output_level, &out.smallest, &out.largest) {
        return None;
    }
    plan.bottommost = !o.ingest_behind
        && ((plan.output_level + 1)..o.num_levels).all(|l| {
            v.overlapping_files(l, &out.smallest, &out.largest)
                .is_empty()
        });
    plan.grandparents = if plan.output_level + 1 < o.num_levels {
        v.overlapping_files(plan.output_level + 1, &out.smallest, &out.largest)
    } else {
        Vec::new()
    };
    let gp_bytes: u64 = plan.grandparents.iter().map(|f| f.file_size).sum();
    let out_compression = compression_of(o, plan.output_level, plan.bottommost);
    plan.trivial_move = plan.output_inputs.is_empty()
        && plan.inputs.iter().all(|f| f.compression == out_compression)
        && !plan.inputs.iter().any(|f| needs_blob_relocation(o, f))
        && gp_bytes <= o.max_compaction_bytes
        && inputs_disjoint(&plan.inputs)
        && plan.inputs.iter().all(|f| movable(o, f));
    Some(plan)
}

/// True when the partitioner lets `f` move as it is (it lies in one
/// partition; RocksDB's `CanDoTrivialMove`).
pub(crate) fn movable(o: &PickerOptions, f: &FileMeta) -> bool {
    o.partitioner
        .is_none_or(|p| p.can_move(f.smallest_user_key(), f.largest_user_key()))
}

/// True when `f` references a blob file garbage collection relocates:
/// moving it by a MANIFEST edit would leave those references in place.
fn needs_blob_relocation(o: &PickerOptions, f: &FileMeta) -> bool {
    f.oldest_blob_file != 0 && f.oldest_blob_file < o.blob_relocate_below
}

/// True when the files' user-key ranges do not overlap each other.
fn inputs_disjoint(files: &[Arc<FileMeta>]) -> bool {
    let mut sorted: Vec<&Arc<FileMeta>> = files.iter().collect();
    sorted.sort_by(|a, b| a.smallest_user_key().cmp(b.smallest_user_key()));
    sorted
        .windows(2)
        .all(|w| w[0].largest_user_key() < w[1].smallest_user_key())
}

fn pick_l0(
    v: &Version,
    o: &PickerOptions,
    t: &LevelTargets,
    running: &[RunningOutput],
    score: f64,
) -> Option<Plan> {
    let inputs: Vec<Arc<FileMeta>> = v.files(0).to_vec();
    if inputs.is_empty() || inputs.iter().any(|f| f.is_being_compacted()) {
        return None;
    }
    let (lo, hi) = user_range(inputs.iter())?;
    let output_level = t.base_level;
    let output_inputs = v.overlapping_files(output_level, &lo, &hi);
    finish_plan(
        v,
        o,
        running,
        Plan {
            score,
            ..Plan::new(
                0,
                output_level,
                inputs,
                output_inputs,
                CompactionReason::LevelL0FilesNum,
            )
        },
    )
}

/// L0 files that can move into the base level by a MANIFEST edit, RocksDB's
/// `TryPickL0TrivialMove`: from the oldest L0 file on, each file that
/// overlaps no file taken before it and nothing in the base level (nor a
/// running compaction's output there), with the base level's compression,
/// no blob file to relocate and its partitioner's consent; the first file
/// that fails ends the walk. `None` when not even the oldest qualifies,
/// and when the base level is empty (there `pick_l0` moves all of L0 when
/// its files are disjoint and merges them otherwise, as RocksDB does).
///
/// Taking only a prefix of L0 from its oldest end keeps L0 ordered: every
/// file left in L0 is newer than every file moved below it. Disjoint L0
/// files (a flush cut at insert-stream ends, or at partitions) thus reach
/// the base level one by one even though their union spans files there, so
/// interleaved insert streams are never rewritten.
fn pick_l0_trivial_move(
    v: &Version,
    o: &PickerOptions,
    t: &LevelTargets,
    running: &[RunningOutput],
    score: f64,
) -> Option<Plan> {
    let base = t.base_level;
    if v.files(base).is_empty() {
        return None;
    }
    let mut taken: Vec<Arc<FileMeta>> = Vec::new();
    for f in v.files(0).iter().rev() {
        let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
        let overlaps_taken = taken
            .iter()
            .any(|t| t.smallest_user_key() <= hi && lo <= t.largest_user_key());
        if overlaps_taken || !fits_into(v, o, running, base, f) {
            break;
        }
        taken.push(Arc::clone(f));
    }
    if taken.is_empty() {
        return None;
    }
    // Back in L0 order (newest first), as every plan's L0 inputs.
    taken.reverse();
    let bottommost = taken.iter().all(|f| nothing_below(v, o, base, f));
    Some(Plan {
        score,
        trivial_move: true,
        bottommost,
        ..Plan::new(
            0,
            base,
            taken,
            Vec::new(),
            CompactionReason::LevelL0FilesNum,
        )
    })
}

/// True when no level below `level` overlaps `f`.
fn nothing_below(v: &Version, o: &PickerOptions, level: usize, f: &FileMeta) -> bool {
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    !o.ingest_behind
        && ((level + 1)..o.num_levels).all(|l| v.overlapping_files(l, lo, hi).is_empty())
}

/// True when file `f` (of L0, or a flush output) may join level `level` as
/// it is, by a MANIFEST edit: it overlaps no file there nor a running
/// compaction's output there, is not being compacted, has that level's
/// compression, no blob file to relocate, lies in one partition of the
/// partitioner, and overlaps at most `max_compaction_bytes` of the level
/// below (the rules of every trivial move).
fn fits_into(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    level: usize,
    f: &FileMeta,
) -> bool {
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    if f.is_being_compacted()
        || needs_blob_relocation(o, f)
        || !movable(o, f)
        || !v.overlapping_files(level, lo, hi).is_empty()
        || overlaps_running(running, level, lo, hi)
    {
        return false;
    }
    let below: u64 = if level + 1 < o.num_levels {
        v.overlapping_files(level + 1, lo, hi)
            .iter()
            .map(|g| g.file_size)
            .sum()
    } else {
        0
    };
    below <= o.max_compaction_bytes
        && f.compression == compression_of(o, level, nothing_below(v, o, level, f))
}

/// The level a flush output `f` is installed at: the base level when a
/// leveled family's flush was cut into several disjoint files (at insert
/// stream ends or partitions) and this one overlaps nothing in L0 and
/// [`fits_into`] the base level, else 0. The file is the newest data of its
/// key range and nothing in L0 or in running work covers that range, so it
/// is where a trivial move would take it a moment later; placing it there
/// at once saves the move, and the L0 file count (which stalls writes)
/// never sees it.
///
/// The caller must keep the range reserved at that level (a running
/// output) until the edit is installed, so that no compaction picked
/// meanwhile writes over it; and flushes of a family must install in
/// memtable order (they do: one at a time).
pub(crate) fn flush_output_level(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    f: &FileMeta,
) -> usize {
    if o.style != CompactionStyle::Level || o.num_levels < 2 {
        return 0;
    }
    let base = level_targets(v, o).base_level;
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    if base == 0
        || !v.overlapping_files(0, lo, hi).is_empty()
        || overlaps_running(running, 0, lo, hi)
        || !fits_into(v, o, running, base, f)
    {
        return 0;
    }
    base
}

/// Fewest files an intra-L0 compaction merges (RocksDB's
/// `kMinFilesForIntraL0Compaction`).
const MIN_FILES_FOR_INTRA_L0: usize = 4;

/// Intra-L0 compaction, when L0 cannot compact into the base level (a
/// compaction holds older L0 files or the base level's) and L0 has piled
/// up to its trigger + 2 files: the newest L0 files not being compacted
/// (at least four) merge into one L0 file, so reads and the L0 stall
/// count face fewer files until the base level is free. As RocksDB's
/// `FindIntraL0Compaction`, files are added from the newest while the
/// bytes per file removed do not grow and the total stays within
/// `max_compaction_bytes`.
///
/// The inputs are the newest files, so the output's sequence numbers are
/// all above those of every L0 file left: L0 stays ordered by recency.
/// Tombstones are never dropped (older L0 files may hold their keys), and
/// the output is one file, never moved.
fn pick_intra_l0(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    score: f64,
) -> Option<Plan> {
    let files = v.files(0);
    if files.len() < o.l0_trigger + 2 || files.first()?.is_being_compacted() {
        return None;
    }
    let mut bytes = files[0].file_size;
    let mut per_removed = u64::MAX;
    let mut take = 1;
    for f in &files[1..] {
        if f.is_being_compacted() || bytes + f.file_size > o.max_compaction_bytes {
            break;
        }
        let per = (bytes + f.file_size) / take as u64;
        if per > per_removed {
            break;
        }
        per_removed = per;
        bytes += f.file_size;
        take += 1;
    }
    if take < MIN_FILES_FOR_INTRA_L0 {
        return None;
    }
    let mut plan = finish_plan(
        v,
        o,
        running,
        Plan {
            score,
            ..Plan::new(
                0,
                0,
                files[..take].to_vec(),
                Vec::new(),
                CompactionReason::LevelL0FilesNum,
            )
        },
    )?;
    plan.bottommost = false;
    plan.trivial_move = false;
    plan.grandparents.clear();
    Some(plan)
}

fn pick_level(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
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
        let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
        let next = v.overlapping_files(level + 1, lo, hi);
        if next.iter().any(|n| n.is_being_compacted()) {
            continue;
        }
        let (out_lo, out_hi) = match (next.first(), next.last()) {
            (Some(a), Some(b)) => (lo.min(a.smallest_user_key()), hi.max(b.largest_user_key())),
            _ => (lo, hi),
        };
        if overlaps_running(running, level + 1, out_lo, out_hi) {
            continue;
        }
        let overlap: u64 = next.iter().map(|n| n.file_size).sum();
        // RocksDB's kMinOverlappingRatio over the compensated size: files
        // dense with tombstones go first.
        let ratio =
            overlap as f64 / crate::version::sizing::compensated_size(v, level, f).max(1) as f64;
        if best.as_ref().is_none_or(|b| ratio < b.0) {
            best = Some((ratio, i, next));
        }
    }
    let (_, i, output_inputs) = best?;
    if let Some(c) = cursors.get_mut(level) {
        *c = i + 1;
    }
    let inputs = expand_inputs(v, o, level, &files[i], &output_inputs);
    finish_plan(
        v,
        o,
        running,
        Plan {
            score,
            ..Plan::new(
                level,
                level + 1,
                inputs,
                output_inputs,
                CompactionReason::LevelMaxLevelSize,
            )
        },
    )
}

/// The inputs of a compaction of `file` from sorted `level` into the files
/// `next` of the level below: `file` and its neighbours in `level` that lie
/// inside the key range `next` already covers, as long as they add no file
/// of the level below, none is being compacted, and the whole stays within
/// `max_compaction_bytes` (LevelDB's and RocksDB's expansion in
/// `SetupOtherInputs`). The level below is rewritten once for all of them
/// instead of once per file: less write-amp for the same work.
fn expand_inputs(
    v: &Version,
    o: &PickerOptions,
    level: usize,
    file: &Arc<FileMeta>,
    next: &[Arc<FileMeta>],
) -> Vec<Arc<FileMeta>> {
    let single = vec![Arc::clone(file)];
    let (Some(first), Some(last)) = (next.first(), next.last()) else {
        return single;
    };
    let lo = file.smallest_user_key().min(first.smallest_user_key());
    let hi = file.largest_user_key().max(last.largest_user_key());
    let expanded = v.overlapping_files(level, lo, hi);
    if expanded.len() <= 1 || expanded.iter().any(|f| f.is_being_compacted()) {
        return single;
    }
    let (Some(elo), Some(ehi)) = (expanded.first(), expanded.last()) else {
        return single;
    };
    let below = v.overlapping_files(level + 1, elo.smallest_user_key(), ehi.largest_user_key());
    let bytes: u64 = expanded
        .iter()
        .chain(below.iter())
        .map(|f| f.file_size)
        .sum();
    if below.len() != next.len() || bytes > o.max_compaction_bytes {
        return single;
    }
    expanded
}

/// The manual-compaction step for `level` over the user-key range
/// [`start`, `end`] (`None` = unbounded on that side), or `None` when the
/// level holds nothing in the range.
///
/// As RocksDB's `CompactRange`, a manual compaction runs level by level,
/// from L0 down, each step a plan like an automatic one:
/// - the inputs are every file of `level` overlapping the range, L0's grown
///   to a fixpoint (an L0 file overlapping an input is an input) and a
///   sorted level's grown to clean boundaries (a neighbour sharing a
///   boundary user key comes too), so no version of a user key stays above
///   a newer one that moves down;
/// - the output level is the base level for L0, else the next level, and
///   its overlapping files (to clean boundaries) are merged in;
/// - `bottommost` (tombstones dropped) only when no deeper level overlaps.
///
/// `level` is the last level only when nothing above it overlaps the
/// range: then its files in the range, if more than one (or any with
/// `rewrite_bottommost`), are rewritten in place (obsolete versions and
/// tombstones dropped, the compaction filter applied).
pub(crate) fn manual_plan(
    v: &Version,
    o: &PickerOptions,
    level: usize,
    start: Option<&[u8]>,
    end: Option<&[u8]>,
) -> Option<Plan> {
    let last = o.num_levels - 1;
    let inputs = clean_cut(v, level, v.overlapping_files_in_range(level, start, end));
    // A single last-level file is rewritten for a compaction filter, or
    // for its references into blob files garbage collection relocates.
    let rewrite = o.rewrite_bottommost || inputs.iter().any(|f| needs_blob_relocation(o, f));
    if inputs.is_empty() || (level == last && inputs.len() < 2 && !rewrite) {
        return None;
    }
    let output_level = match level {
        0 => level_targets(v, o).base_level.max(1),
        l if l == last => last,
        l => l + 1,
    };
    let output_inputs = if output_level == level {
        Vec::new()
    } else {
        let (lo, hi) = user_range(inputs.iter())?;
        clean_cut(v, output_level, v.overlapping_files(output_level, &lo, &hi))
    };
    let mut plan = finish_plan(
        v,
        o,
        &[],
        Plan::new(
            level,
            output_level,
            inputs,
            output_inputs,
            CompactionReason::ManualCompaction,
        ),
    )?;
    // Rewriting a level in place is the point of that step, never a move.
    plan.trivial_move &= output_level != level;
    Some(plan)
}

/// Grows `files` (a run of adjacent files of sorted `level`) until neither
/// end shares a user key with its neighbour. L0 files are returned as
/// they are (their overlap query already reaches a fixpoint).
fn clean_cut(v: &Version, level: usize, mut files: Vec<Arc<FileMeta>>) -> Vec<Arc<FileMeta>> {
    if level == 0 || files.is_empty() {
        return files;
    }
    let all = v.files(level);
    let Some(first) = all.iter().position(|f| Arc::ptr_eq(f, &files[0])) else {
        return files;
    };
    let mut lo = first;
    let mut hi = first + files.len() - 1;
    while lo > 0 && all[lo - 1].largest_user_key() == all[lo].smallest_user_key() {
        lo -= 1;
    }
    while hi + 1 < all.len() && all[hi].largest_user_key() == all[hi + 1].smallest_user_key() {
        hi += 1;
    }
    if hi - lo + 1 != files.len() {
        files = all[lo..=hi].to_vec();
    }
    files
}

/// True when a user key's data can exist only at or above `output_level`
/// in `v` (used by the entry filter to drop tombstones).
pub(crate) fn key_is_bottommost(v: &Version, output_level: usize, user_key: &[u8]) -> bool {
    ((output_level + 1)..v.num_levels())
        .all(|l| v.overlapping_files(l, user_key, user_key).is_empty())
}

#[cfg(test)]
pub(crate) mod tests;
