//! Incremental space-amplification merges of universal compaction
//! (`CompactionOptionsUniversal::incremental`): when space amplification
//! calls for merging every run into the last level, merge a key-range slice
//! instead, so a merge needs a slice's worth of free space, not the DB's.
//!
//! A slice is a window of consecutive files of the second-oldest sorted run
//! (the upper run, a level ≥ 1) plus every file of the oldest run (the
//! lower run) that overlaps the window's user-key range; it is written into
//! the lower run's level. Among the windows, one per first file, each as
//! wide as `max_compaction_bytes` allows (always at least one file), the
//! one with the lowest fanout (lower bytes rewritten per upper byte) wins,
//! the lowest keys on a tie. A slice is taken only when its fanout is below
//! [`FANOUT_PENALTY`] times the full merge's (the oldest run's bytes over
//! the newer runs').
//!
//! Where no slice is taken (the upper run is an L0 file, or it holds too
//! little of the newer data for a slice to pay) RocksDB falls back to the
//! full merge, which needs the whole DB's size free again. Shale instead
//! first merges every newer run into one level above the oldest
//! ([`gather_first`]: an ordinary universal merge, ending before the oldest
//! run, its outputs cut in line with the oldest run's files): that needs
//! the newer data's size, not the DB's, and leaves a partitioned upper run
//! holding all the newer data, so the next picks are slices. It costs one
//! more write of the newer data. Only when that merge would rewrite a
//! single level in place (nothing gained), or when the newer runs outweigh
//! the oldest (then it needs no less space than the full merge, and leaves
//! the oldest run small for the next call), does the full merge run.
//!
//! Invariants a slice keeps (levels ≥ 1 hold disjoint files, and the
//! versions of a user key never span two files of one, because outputs are
//! cut only between user keys):
//! - nothing in the lower level outside the slice overlaps its output: the
//!   slice holds every lower file overlapping the window, and the output's
//!   keys come from those files and the window;
//! - no level holds data older than a level below it: levels between the
//!   two runs are empty, and runs newer than the upper run are untouched
//!   (RocksDB also folds in files of newer levels that lie within the
//!   slice's range; this picker does not, which keeps the rule obvious);
//! - tombstones may be dropped (`bottommost`): the lower run is the oldest,
//!   nothing lies below it, and every overlapping file of it is an input.
//!
//! Size amplification is only picked with the oldest run idle, so one slice
//! runs at a time, and no other job writes to the lower level meanwhile
//! (only a merge that includes the oldest run does). The slices repeat
//! while space amplification stays over the threshold; each moves at least
//! one upper file down, so they end.

use std::sync::Arc;

use super::plan::{PickerOptions, Plan};
use super::sorted_runs::SortedRun;
use crate::events::CompactionReason;
use crate::version::FileMeta;

/// How much worse than the full merge's a slice's fanout may be (RocksDB's
/// hard-coded 80% penalty): a slice rewrites the lower files it overlaps
/// whole, so it pays more lower bytes per upper byte than the full merge;
/// past this the full merge is the better deal.
pub(crate) const FANOUT_PENALTY: f64 = 1.8;

/// A chosen window: upper files `upper[first..=last]` with lower files
/// `lower[lo..hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slice {
    pub first: usize,
    pub last: usize,
    pub lo: usize,
    pub hi: usize,
    /// Lower bytes over upper bytes.
    pub fanout: f64,
}

/// The slice plan for a space-amplification merge of `runs` (newest first;
/// every run from the first idle one on is idle, and `newer_bytes` is their
/// size but the oldest's), or `None` when the full merge must run instead.
pub(crate) fn pick(
    runs: &[SortedRun],
    newer_bytes: u64,
    o: &PickerOptions,
    score: f64,
) -> Option<Plan> {
    let [.., upper, lower] = runs else {
        return None;
    };
    // An L0 file cannot be cut (and then the lower run may be L0 too).
    if upper.level == 0 || lower.level <= upper.level || newer_bytes == 0 {
        return None;
    }
    let full_fanout = lower.size as f64 / newer_bytes as f64;
    let s = best_slice(&upper.files, &lower.files, o.max_compaction_bytes)?;
    if s.fanout >= full_fanout * FANOUT_PENALTY {
        return None;
    }
    let inputs = upper.files[s.first..=s.last].to_vec();
    if inputs.iter().any(|f| f.is_being_compacted()) {
        return None;
    }
    let output_inputs = lower.files[s.lo..s.hi].to_vec();
    let trivial_move = o.universal.allow_trivial_move && output_inputs.is_empty();
    let reason = CompactionReason::UniversalSizeAmplification;
    let mut plan = Plan::new(upper.level, lower.level, inputs, output_inputs, reason);
    plan.trivial_move = trivial_move;
    plan.bottommost = !o.ingest_behind;
    plan.score = score;
    Some(plan)
}

/// Whether a space-amplification merge of `window` (runs from the first
/// idle one to the oldest, newest first) that found no slice should first
/// merge the runs but the oldest (`newer`: their bytes) into the level
/// above it rather than merge everything. Not when that level would be
/// L0 (the oldest run is an L0 file or in L1: nothing is in a level yet,
/// and the full merge is what puts the data there; merging L0 files into
/// L0 again would leave it in L0 for ever), nor when it would rewrite one level ≥ 1 in place, nor
/// when the newer runs outweigh the oldest: the merge then holds more than
/// the oldest run's size of inputs and output at once, so it saves no peak
/// space over the full merge, and it leaves the oldest run small, so space
/// amplification calls again after a small ingest (at 200% such merges set
/// the run's peak, 1.4x RocksDB's; the full merge grows the oldest run).
pub(crate) fn gather_first(window: &[SortedRun], newer: u64) -> bool {
    match window {
        [] | [_] => false,
        [.., oldest] if oldest.level < 2 || newer > oldest.size => false,
        [only, _] => only.level == 0,
        _ => true,
    }
}

/// The window of `upper` (sorted, disjoint files) with the lowest fanout
/// over `lower` (likewise), each window starting at one file and growing
/// while its bytes with the overlapped lower files stay within `max_bytes`.
/// `None` when `upper` is empty.
///
/// One pass: a window that fits still fits without its first file (fewer
/// upper bytes, no more lower files), so each window's end is at or past
/// the previous one's. O(n log m) for n upper and m lower files.
pub(crate) fn best_slice(
    upper: &[Arc<FileMeta>],
    lower: &[Arc<FileMeta>],
    max_bytes: u64,
) -> Option<Slice> {
    // prefix[i]: bytes of lower[..i].
    let mut prefix = Vec::with_capacity(lower.len() + 1);
    prefix.push(0u64);
    for f in lower {
        prefix.push(prefix.last().copied().unwrap_or(0) + f.file_size);
    }
    // The lower files overlapping upper[first..=last]'s key range
    // (inclusive on both ends, so a file that merely touches it is taken:
    // never unsafe).
    let overlap = |first: usize, last: usize| -> (usize, usize) {
        let (smallest, largest) = (
            upper[first].smallest_user_key(),
            upper[last].largest_user_key(),
        );
        let lo = lower.partition_point(|f| f.largest_user_key() < smallest);
        let hi = lower.partition_point(|f| f.smallest_user_key() <= largest);
        (lo, hi.max(lo))
    };
    let mut best: Option<Slice> = None;
    // The window is upper[first..end]; upper_bytes its bytes.
    let mut end = 0;
    let mut upper_bytes = 0u64;
    for first in 0..upper.len() {
        if end <= first {
            end = first;
            upper_bytes = 0;
        }
        while end < upper.len() {
            let (lo, hi) = overlap(first, end);
            let bytes = upper_bytes + upper[end].file_size;
            if end > first && bytes.saturating_add(prefix[hi] - prefix[lo]) > max_bytes {
                break;
            }
            upper_bytes = bytes;
            end += 1;
        }
        let (lo, hi) = overlap(first, end - 1);
        let fanout = (prefix[hi] - prefix[lo]) as f64 / upper_bytes.max(1) as f64;
        if best.is_none_or(|b| fanout < b.fanout) {
            best = Some(Slice {
                first,
                last: end - 1,
                lo,
                hi,
                fanout,
            });
        }
        upper_bytes -= upper[first].file_size;
    }
    best
}
