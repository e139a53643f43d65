//! Tests of the universal picker on hand-made LSM shapes.

use super::*;
use crate::compaction::picker::tests::{opts, version_with};
use crate::compaction::style::CompactionStyle;

const MB: u64 = 1 << 20;

fn uopts(num_levels: usize) -> PickerOptions {
    let mut o = opts(num_levels);
    o.style = CompactionStyle::Universal;
    o
}

fn numbers(files: &[Arc<FileMeta>]) -> Vec<u64> {
    let mut n: Vec<u64> = files.iter().map(|f| f.number).collect();
    n.sort_unstable();
    n
}

#[test]
fn runs_are_l0_files_newest_first_then_non_empty_levels() {
    // Files 1, 2 on L0 (2 newer), file 3 on L2, files 4 and 5 on L6.
    let v = version_with(
        7,
        &[
            (0, 0, 9, MB),
            (0, 0, 9, 2 * MB),
            (2, 0, 9, 3 * MB),
            (6, 0, 4, 4 * MB),
            (6, 5, 9, 5 * MB),
        ],
    );
    let runs = sorted_runs(&v);
    let shape: Vec<(usize, u64)> = runs.iter().map(|r| (r.level, r.size / MB)).collect();
    assert_eq!(shape, vec![(0, 2), (0, 1), (2, 3), (6, 9)]);
    assert_eq!(num_sorted_runs(&v), 4);
}

#[test]
fn nothing_below_the_trigger() {
    let o = uopts(7);
    let v = version_with(7, &[(0, 0, 9, MB), (0, 0, 9, MB), (0, 0, 9, MB)]);
    assert!(pick(&v, &o).is_none(), "3 runs < trigger 4");
}

#[test]
fn similar_runs_merge_above_the_next_older_run() {
    let o = uopts(7);
    // Four 1 MiB L0 files over a 100 MiB last level: not enough for space
    // amplification (4% < 200%); the four merge into L5.
    let v = version_with(
        7,
        &[
            (6, 0, 99, 100 * MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
        ],
    );
    let p = pick(&v, &o).expect("4 runs at trigger 4");
    assert_eq!((p.level, p.output_level), (0, 5));
    assert_eq!(numbers(&p.inputs), vec![2, 3, 4, 5]);
    assert!(p.output_inputs.is_empty() && p.middle.is_empty());
    assert!(!p.bottommost && !p.trivial_move && !p.uncompressed);
}

#[test]
fn space_amplification_merges_everything_into_the_last_level() {
    let o = uopts(7);
    // Runs newer than the last add up to 5 MiB over a 1 MiB last level.
    let v = version_with(
        7,
        &[
            (6, 0, 99, MB),
            (3, 0, 99, 3 * MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB / 2),
            (0, 0, 9, MB / 2),
        ],
    );
    let p = pick(&v, &o).expect("space amplification 500%");
    assert_eq!((p.level, p.output_level), (0, 6));
    assert_eq!(numbers(&p.inputs), vec![3, 4, 5]);
    assert_eq!(p.middle.len(), 1);
    assert_eq!(p.middle[0].0, 3);
    assert_eq!(numbers(&p.output_inputs), vec![1]);
    assert!(p.bottommost);
    // Below the threshold (600% allowed): the size-ratio rule instead, the
    // three L0 files (1 MiB, then 3 MiB is too large) into L2.
    let mut o = uopts(7);
    o.universal.max_size_amplification_percent = 600;
    let p = pick(&v, &o).expect("size ratio");
    assert_eq!((p.level, p.output_level), (0, 2));
    assert_eq!(numbers(&p.inputs), vec![3, 4, 5]);
    assert!(!p.bottommost);
}

#[test]
fn stop_styles_differ_on_a_growing_sequence() {
    // Runs (newest first) of 1, 1, 2, 4 MiB over a 1000 MiB last level.
    // TotalSize: 1, +1 = 2, +2 = 4, +4 = 8: all four. SimilarSize: 1, 1
    // (similar), then 2 > 1 × 1.01: stop after two.
    let v = version_with(
        7,
        &[
            (6, 0, 99, 1000 * MB),
            (0, 0, 9, 4 * MB),
            (0, 0, 9, 2 * MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
        ],
    );
    let o = uopts(7);
    let p = pick(&v, &o).unwrap();
    assert_eq!(numbers(&p.inputs), vec![2, 3, 4, 5]);
    let mut o = uopts(7);
    o.universal.stop_style = UniversalStopStyle::SimilarSize;
    let p = pick(&v, &o).unwrap();
    assert_eq!(numbers(&p.inputs), vec![4, 5]);
    assert_eq!(p.output_level, 0, "the next older run is an L0 file");
}

#[test]
fn too_many_runs_merge_the_newest_whatever_their_sizes() {
    // 1, 10, 100, 1000 MiB L0 files and a huge last level: no window of
    // similar runs; 5 runs > trigger 4 merges the newest two.
    let v = version_with(
        7,
        &[
            (6, 0, 99, 100_000 * MB),
            (0, 0, 9, 1000 * MB),
            (0, 0, 9, 100 * MB),
            (0, 0, 9, 10 * MB),
            (0, 0, 9, MB),
        ],
    );
    let p = pick(&v, &o_with_width(2, u32::MAX)).unwrap();
    assert_eq!(numbers(&p.inputs), vec![4, 5]);
    assert_eq!(p.output_level, 0);
}

fn o_with_width(min: u32, max: u32) -> PickerOptions {
    let mut o = uopts(7);
    o.universal.min_merge_width = min;
    o.universal.max_merge_width = max;
    o
}

#[test]
fn merge_widths_bound_the_window() {
    let files: Vec<(usize, u64, u64, u64)> = std::iter::once((6, 0, 99, 1000 * MB))
        .chain((0..6).map(|_| (0, 0, 9, MB)))
        .collect();
    let v = version_with(7, &files);
    let p = pick(&v, &o_with_width(2, 3)).unwrap();
    assert_eq!(p.inputs.len(), 3, "at most max_merge_width runs");
    // A minimum wider than any window: the run-count rule (the newest 4 of
    // 7 runs) is bound by it too, as in RocksDB: nothing (writes stall on
    // the run count until the options change).
    assert!(pick(&v, &o_with_width(7, u32::MAX)).is_none());
    // A window of four similar runs.
    let p = pick(&v, &o_with_width(4, 4)).unwrap();
    assert_eq!(p.inputs.len(), 4);
}

#[test]
fn runs_being_compacted_are_skipped_and_bound_windows() {
    let v = version_with(
        7,
        &[
            (6, 0, 99, 1000 * MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
        ],
    );
    // The newest two are being compacted: the window starts after them.
    for f in &v.files(0)[..2] {
        f.set_being_compacted(true);
    }
    let p = pick(&v, &uopts(7)).unwrap();
    assert_eq!(numbers(&p.inputs), vec![2, 3, 4]);
    // Space amplification needs every run from the first idle one on.
    v.files(6)[0].set_being_compacted(true);
    let p = pick(&v, &uopts(7)).unwrap();
    assert!(!p.bottommost);
    for f in v.files(0) {
        f.set_being_compacted(true);
    }
    assert!(pick(&v, &uopts(7)).is_none());
}

#[test]
fn middle_levels_and_the_output_level_run() {
    // Runs: L0 file, L2, L3, then L5. All similar: the first four merge
    // into L4 (above L5): L2, L3 are middle levels, L4 is empty.
    let v = version_with(
        7,
        &[
            (5, 0, 99, 100 * MB),
            (3, 0, 99, MB),
            (2, 0, 99, MB),
            (0, 0, 9, MB),
        ],
    );
    let mut o = uopts(7);
    o.l0_trigger = 2;
    let p = pick(&v, &o).unwrap();
    assert_eq!((p.level, p.output_level), (0, 4));
    let middle: Vec<usize> = p.middle.iter().map(|(l, _)| *l).collect();
    assert_eq!(middle, vec![2, 3]);
    assert!(p.output_inputs.is_empty());
    assert_eq!(p.all_inputs().count(), 3);
}

#[test]
fn disjoint_runs_move_trivially_when_allowed() {
    let v = version_with(
        7,
        &[
            (6, 500, 599, 1000 * MB),
            (0, 0, 9, MB),
            (0, 10, 19, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    let mut o = uopts(7);
    assert!(!pick(&v, &o).unwrap().trivial_move, "off by default");
    o.universal.allow_trivial_move = true;
    let p = pick(&v, &o).unwrap();
    assert!(p.trivial_move);
    assert_eq!(p.output_level, 5);
    // Overlapping files are merged.
    let v = version_with(
        7,
        &[
            (6, 500, 599, 1000 * MB),
            (0, 0, 9, MB),
            (0, 5, 19, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    assert!(!pick(&v, &o).unwrap().trivial_move);
}

#[test]
fn compression_size_percent_leaves_merges_of_new_data_uncompressed() {
    let v = version_with(
        7,
        &[
            (6, 0, 99, 1000 * MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
            (0, 0, 9, MB),
        ],
    );
    let mut o = uopts(7);
    o.universal.compression_size_percent = 50;
    // The older run holds 99.6% of the data: this merge stays uncompressed.
    assert!(pick(&v, &o).unwrap().uncompressed);
    o.universal.compression_size_percent = 100;
    assert!(!pick(&v, &o).unwrap().uncompressed);
    o.universal.compression_size_percent = -1;
    assert!(!pick(&v, &o).unwrap().uncompressed);
}

#[test]
fn manual_compaction_merges_every_run_into_the_last_level() {
    let o = uopts(7);
    let v = version_with(7, &[(3, 0, 99, MB), (0, 0, 9, MB)]);
    let p = manual_plan(&v, &o).unwrap();
    assert_eq!((p.level, p.output_level), (0, 6));
    assert!(p.bottommost && !p.trivial_move);
    assert_eq!(p.all_inputs().count(), 2);
    // One run already in the last level: nothing to do, unless asked to
    // rewrite it (a compaction filter, reclaiming).
    let v = version_with(7, &[(6, 0, 49, MB), (6, 50, 99, MB)]);
    assert!(manual_plan(&v, &o).is_none());
    let mut o = uopts(7);
    o.rewrite_bottommost = true;
    let p = manual_plan(&v, &o).unwrap();
    assert_eq!((p.level, p.output_level), (6, 6));
    assert_eq!(p.inputs.len(), 2);
    assert!(manual_plan(&version_with(7, &[]), &o).is_none());
}

#[test]
fn one_level_dbs_keep_every_run_in_l0() {
    let o = uopts(1);
    let v = version_with(
        1,
        &[(0, 0, 9, MB), (0, 0, 9, MB), (0, 0, 9, MB), (0, 0, 9, MB)],
    );
    let p = pick(&v, &o).unwrap();
    assert_eq!((p.level, p.output_level), (0, 0));
    assert_eq!(p.inputs.len(), 4);
    assert!(p.bottommost);
}
