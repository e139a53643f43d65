//! Delete-only compaction (Pebble's name): files wholly under a newer range
//! tombstone that every reader sees are removed by a MANIFEST edit, without
//! reading or writing anything.
//!
//! A file F at level L ≥ 1 goes when a range tombstone of a file T above it
//! (T in L0, or at a level < L) covers F's whole user-key range with pieces
//! each newer than F's largest sequence number, and those tombstones are
//! visible to the oldest live snapshot (so no snapshot can read F's
//! entries). Files being compacted are left alone. T itself stays: it may
//! cover more below.
//!
//! A file whose every entry has expired (`expiry_max` passed) goes too
//! when nothing older of its keys can exist: no overlapping file below it
//! (for an L0 file, none in older L0 files either). Expired values are gone
//! for every reader, snapshots included, and they have nothing to hide.
//!
//! The DB drops none of these that holds blob references (a table with
//! `oldest_blob_file`): its blobs must be counted as garbage, which only a
//! compaction reading it does.

use std::sync::Arc;

use crate::base::{SeqNo, MAX_SEQNO};
use crate::range_del::Fragments;
use crate::version::{FileMeta, Version};

/// True when `frags` cover all of `f`'s user keys with tombstones newer
/// than `f.largest_seq` and visible at `visible_at`.
pub(crate) fn covers_file(frags: &Fragments, f: &FileMeta, visible_at: SeqNo) -> bool {
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    let all = frags.fragments();
    let mut i = frags.first_ending_after(lo);
    let mut at: &[u8] = lo;
    loop {
        let Some(frag) = all.get(i) else {
            return false;
        };
        if frag.start.as_slice() > at {
            return false; // a gap
        }
        if frag
            .newest_at(visible_at)
            .is_none_or(|t| t <= f.largest_seq)
        {
            return false;
        }
        // Covered up to frag.end (exclusive): done when that passes `hi`, or
        // reaches it exactly and `hi` is itself an exclusive end.
        if frag.end.as_slice() > hi || (frag.end.as_slice() == hi && f.largest_is_range_end()) {
            return true;
        }
        at = &frag.end;
        i += 1;
    }
}

/// Files of `v` to drop: `(level, file)` for every file wholly covered (see
/// the module comment). `frags_of` gives a file's tombstones (only asked
/// for files with `num_range_deletions > 0`); `oldest_snapshot` is the
/// oldest live snapshot, if any.
pub(crate) fn covered_files(
    v: &Version,
    frags_of: &mut dyn FnMut(&FileMeta) -> Option<Arc<Fragments>>,
    oldest_snapshot: Option<SeqNo>,
    now: u64,
) -> Vec<(usize, Arc<FileMeta>)> {
    let visible_at = oldest_snapshot.unwrap_or(MAX_SEQNO);
    let mut out: Vec<(usize, Arc<FileMeta>)> = expired_files(v, now);
    for level in 0..v.num_levels() {
        for t in v.files(level) {
            if t.num_range_deletions == 0 {
                continue;
            }
            let Some(frags) = frags_of(t) else { continue };
            for below in (level + 1).max(1)..v.num_levels() {
                for f in v.overlapping_files(below, t.smallest_user_key(), t.largest_user_key()) {
                    if f.is_being_compacted()
                        || out.iter().any(|(_, o)| o.number == f.number)
                        || !covers_file(&frags, &f, visible_at)
                    {
                        continue;
                    }
                    out.push((below, f));
                }
            }
        }
    }
    out
}

/// Files wholly expired at `now` with nothing older of their keys below.
fn expired_files(v: &Version, now: u64) -> Vec<(usize, Arc<FileMeta>)> {
    let mut out = Vec::new();
    for level in 0..v.num_levels() {
        let files = v.files(level);
        for (i, f) in files.iter().enumerate() {
            if !f.wholly_expired(now) || f.is_being_compacted() {
                continue;
            }
            let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
            let older_l0 = level == 0
                && files[i + 1..]
                    .iter()
                    .any(|g| g.overlaps_user_range(Some(lo), Some(hi)));
            let below = ((level + 1).max(1)..v.num_levels())
                .any(|l| !v.overlapping_files(l, lo, hi).is_empty());
            if !older_l0 && !below {
                out.push((level, Arc::clone(f)));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
