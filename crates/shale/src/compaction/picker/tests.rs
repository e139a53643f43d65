use super::*;
use crate::base::{make_internal_key, ValueKind};
use crate::build::cuts::SstPartitioner;
use crate::options::UniversalCompactionOptions;

const MB: u64 = 1 << 20;

pub(crate) fn opts(num_levels: usize) -> PickerOptions {
    PickerOptions {
        num_levels,
        l0_trigger: 4,
        max_bytes_for_level_base: 256 * MB,
        multiplier: 10.0,
        dynamic: true,
        max_compaction_bytes: 25 * 64 * MB,
        compression_per_level: vec![0],
        bottommost_compression: None,
        rewrite_bottommost: false,
        now: 0,
        oldest_snapshot: None,
        style: CompactionStyle::Level,
        universal: UniversalCompactionOptions::default(),
        blob_gc_below: 0,
        blob_relocate_below: 0,
        partitioner: None,
        ingest_behind: false,
    }
}

fn key(n: u64) -> Vec<u8> {
    format!("k{n:08}").into_bytes()
}

/// A version from (level, first key, last key, bytes); L0 files get
/// increasing sequence numbers in list order (later = newer).
pub(crate) fn version_with(num_levels: usize, files: &[(usize, u64, u64, u64)]) -> Version {
    let mut levels: Vec<Vec<Arc<FileMeta>>> = vec![Vec::new(); num_levels];
    for (i, &(level, lo, hi, size)) in files.iter().enumerate() {
        let seq = 100 * (i as u64 + 1);
        let mut smallest = Vec::new();
        make_internal_key(&mut smallest, &key(lo), seq + 10, ValueKind::Value as u8);
        let mut largest = Vec::new();
        make_internal_key(&mut largest, &key(hi), seq, ValueKind::Value as u8);
        let mut f = FileMeta::new(i as u64 + 1, size, smallest, largest, seq, seq + 10, 10, 0);
        f.compression = 0;
        levels[level].push(Arc::new(f));
    }
    levels[0].sort_by(|a, b| {
        b.largest_seq
            .cmp(&a.largest_seq)
            .then(b.number.cmp(&a.number))
    });
    for l in levels.iter_mut().skip(1) {
        l.sort_by(|a, b| a.smallest.cmp(&b.smallest));
    }
    Version::from_levels(levels)
}

#[test]
fn disjoint_l0_files_move_together_into_the_base_level() {
    let o = opts(7);
    let v = version_with(
        7,
        &[
            (0, 0, 9, MB),
            (0, 10, 19, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert_eq!((p.level, p.output_level), (0, 6));
    assert_eq!(p.inputs.len(), 4);
    assert!(p.trivial_move && p.bottommost);
}

fn input_numbers(p: &Plan) -> Vec<u64> {
    p.inputs.iter().map(|f| f.number).collect()
}

/// Flushes cut at insert-stream ends: each L0 file lies between files
/// of the base level (earlier pieces of the same streams), so the union
/// of L0 overlaps them but no single file does.
#[test]
fn disjoint_l0_files_between_base_level_files_move_without_a_merge() {
    let o = opts(7);
    let v = version_with(
        7,
        &[
            (6, 0, 9, MB),
            (6, 20, 29, MB),
            (6, 40, 49, MB),
            (0, 10, 19, MB),
            (0, 30, 39, MB),
            (0, 50, 59, MB),
            (0, 60, 69, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert_eq!((p.level, p.output_level), (0, 6));
    assert!(p.trivial_move && p.output_inputs.is_empty());
    assert_eq!(p.inputs.len(), 4);
    // A running compaction writing the base level around 30..39 keeps
    // that file (and every newer one) in L0.
    let running = [RunningOutput {
        output_level: 6,
        smallest: key(35),
        largest: key(36),
    }];
    let p = pick(&v, &o, &running, &mut [0; 7]).expect("the oldest moves");
    assert!(p.trivial_move);
    assert_eq!(input_numbers(&p), vec![4]);
}

/// Only a prefix from the oldest end moves: a newer file left in L0
/// above an older one moved down would keep L0 ordered, but an older
/// file left above a newer one moved down would not.
#[test]
fn l0_moves_stop_at_the_first_file_that_cannot_move() {
    let o = opts(7);
    let v = version_with(
        7,
        &[
            (6, 20, 29, MB),
            (0, 10, 19, MB), // oldest: moves
            (0, 25, 26, MB), // overlaps the base level: stops the walk
            (0, 40, 49, MB), // could move, but is newer than 25..26
            (0, 50, 59, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(p.trivial_move);
    assert_eq!(input_numbers(&p), vec![2]);
    // L0 files overlapping each other: the newer one is not taken.
    let v = version_with(
        7,
        &[
            (6, 90, 99, MB),
            (0, 0, 9, MB),
            (0, 5, 15, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert_eq!(input_numbers(&p), vec![2]);
}

/// A file spanning two partitions of the family's partitioner is
/// rewritten (cut), never moved.
#[test]
fn a_file_across_partitions_is_not_moved() {
    let mut o = opts(7);
    let v = version_with(
        7,
        &[
            (0, 0, 9, MB),
            (0, 10, 19, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    // Keys are "k" + 8 digits: a 9-byte prefix splits every key.
    o.partitioner = Some(SstPartitioner::FixedPrefix(9));
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(!p.trivial_move);
    // A 7-byte prefix ("k000000") holds keys 0..99: every file moves.
    o.partitioner = Some(SstPartitioner::FixedPrefix(7));
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(p.trivial_move);
    assert_eq!(p.inputs.len(), 4);
}

#[test]
fn overlapping_l0_files_are_merged() {
    let o = opts(7);
    let v = version_with(
        7,
        &[
            (0, 0, 19, MB),
            (0, 10, 29, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(!p.trivial_move);
}

#[test]
fn compression_mismatch_prevents_a_trivial_move() {
    let mut o = opts(7);
    o.compression_per_level = vec![0, 1];
    let v = version_with(
        7,
        &[
            (0, 0, 9, MB),
            (0, 10, 19, MB),
            (0, 20, 29, MB),
            (0, 30, 39, MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(!p.trivial_move);
    // Bottommost compression decides for the last level.
    o.compression_per_level = vec![0];
    o.bottommost_compression = Some(2);
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 at trigger");
    assert!(!p.trivial_move);
}

#[test]
fn grandparent_overlap_limits_trivial_moves() {
    let mut o = opts(7);
    o.max_compaction_bytes = 10 * MB;
    // L5 over its 256 MiB target, a file with nothing below it in L6
    // except a big grandparent... L6 is the output, so use a 3-level
    // tree: L1 → L2 with L3 as grandparent.
    o.num_levels = 4;
    o.dynamic = false;
    o.max_bytes_for_level_base = MB;
    let v = version_with(4, &[(1, 0, 9, 2 * MB), (3, 0, 9, 20 * MB)]);
    let p = pick(&v, &o, &[], &mut [0; 4]).expect("L1 over target");
    assert_eq!((p.level, p.output_level), (1, 2));
    assert_eq!(p.grandparents.len(), 1);
    assert!(!p.trivial_move, "20 MiB of grandparents > 10 MiB limit");
    o.max_compaction_bytes = 30 * MB;
    let p = pick(&v, &o, &[], &mut [0; 4]).expect("L1 over target");
    assert!(p.trivial_move);
}

#[test]
fn manual_plan_grows_l0_inputs_to_every_overlapping_file() {
    let o = opts(7);
    // The range [k50, k55] touches only the newest L0 file directly, but
    // it overlaps the older one, which overlaps the oldest: all three go.
    let v = version_with(
        7,
        &[
            (0, 0, 20, MB),
            (0, 15, 45, MB),
            (0, 40, 60, MB),
            (0, 90, 99, MB),
            (6, 0, 99, 10 * MB),
        ],
    );
    let p = manual_plan(&v, &o, 0, Some(&key(50)), Some(&key(55))).expect("plan");
    assert_eq!((p.level, p.output_level), (0, 6));
    let mut numbers: Vec<u64> = p.inputs.iter().map(|f| f.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, vec![1, 2, 3]);
    assert_eq!(p.output_inputs.len(), 1);
    assert!(p.bottommost && !p.trivial_move);
    // Nothing in L1..L5 overlaps: no plan there.
    assert!(manual_plan(&v, &o, 3, None, None).is_none());
}

#[test]
fn manual_plan_is_bottommost_only_with_nothing_below() {
    let mut o = opts(4);
    o.dynamic = false;
    let v = version_with(4, &[(1, 0, 9, MB), (2, 20, 29, MB), (3, 5, 6, MB)]);
    let p = manual_plan(&v, &o, 1, Some(&key(0)), Some(&key(1))).expect("plan");
    assert_eq!(p.output_level, 2);
    assert!(!p.bottommost, "L3 holds [5, 6] below the inputs");
    // One file at the last level with nothing above: nothing to do.
    assert!(manual_plan(&v, &o, 3, None, None).is_none());
}

#[test]
fn running_output_ranges_and_busy_files_are_avoided() {
    let mut o = opts(4);
    o.dynamic = false;
    o.max_bytes_for_level_base = MB;
    // L1 has two files, both wanting to go down; L2 holds overlapping data.
    let v = version_with(
        4,
        &[
            (1, 0, 9, 2 * MB),
            (1, 20, 29, 2 * MB),
            (2, 0, 9, MB),
            (2, 20, 29, 4 * MB),
        ],
    );
    let mut cursors = [0; 4];
    let first = pick(&v, &o, &[], &mut cursors).expect("L1 over target");
    assert_eq!(first.inputs[0].smallest_user_key(), key(0).as_slice());
    for f in first.inputs.iter().chain(first.output_inputs.iter()) {
        f.set_being_compacted(true);
    }
    let running = vec![first.output_range().expect("range")];
    // The other L1 file is disjoint: it may run in parallel.
    let second = pick(&v, &o, &running, &mut cursors).expect("disjoint pick");
    assert_eq!(second.inputs[0].smallest_user_key(), key(20).as_slice());
    // A running output range over [0, 29] at L2 blocks it.
    let wide = vec![RunningOutput {
        output_level: 2,
        smallest: key(0),
        largest: key(29),
    }];
    assert!(pick(&v, &o, &wide, &mut cursors).is_none());
}

#[test]
fn intra_l0_merges_the_newest_files_while_l0_cannot_reach_the_base_level() {
    let o = opts(7);
    // Six overlapping L0 files; the two oldest are in a running L0→base
    // compaction.
    let v = version_with(7, &(0..6).map(|_| (0, 0, 99, MB)).collect::<Vec<_>>());
    let l0 = v.files(0).to_vec();
    assert!(l0[0].largest_seq > l0[5].largest_seq, "newest first");
    l0[4].set_being_compacted(true);
    l0[5].set_being_compacted(true);
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("intra-L0");
    assert_eq!((p.level, p.output_level), (0, 0));
    let numbers: Vec<u64> = p.inputs.iter().map(|f| f.number).collect();
    let newest: Vec<u64> = l0[..4].iter().map(|f| f.number).collect();
    assert_eq!(numbers, newest);
    assert!(!p.trivial_move && !p.bottommost && p.grandparents.is_empty());
    // Fewer than trigger + 2 files: wait for the base level instead.
    let v = version_with(7, &(0..5).map(|_| (0, 0, 99, MB)).collect::<Vec<_>>());
    v.files(0)[4].set_being_compacted(true);
    assert!(pick(&v, &o, &[], &mut [0; 7]).is_none());
    // The newest file already being compacted: nothing to do.
    let v = version_with(7, &(0..6).map(|_| (0, 0, 99, MB)).collect::<Vec<_>>());
    v.files(0)[0].set_being_compacted(true);
    v.files(0)[5].set_being_compacted(true);
    assert!(pick(&v, &o, &[], &mut [0; 7]).is_none());
    // Fewer than four files free above the running ones.
    let v = version_with(7, &(0..6).map(|_| (0, 0, 99, MB)).collect::<Vec<_>>());
    v.files(0)[3].set_being_compacted(true);
    assert!(pick(&v, &o, &[], &mut [0; 7]).is_none());
    // A free L0 goes to the base level as usual.
    let v = version_with(7, &(0..6).map(|_| (0, 0, 99, MB)).collect::<Vec<_>>());
    let p = pick(&v, &o, &[], &mut [0; 7]).expect("L0 to base");
    assert_eq!((p.level, p.output_level), (0, 6));
}

#[test]
fn level_inputs_grow_to_neighbours_that_add_no_file_below() {
    let mut o = opts(4);
    o.dynamic = false;
    o.max_bytes_for_level_base = MB;
    o.multiplier = 100.0;
    // L1: [0,9] [10,19] [20,29] [40,49]; L2: [0,29] and [40,49].
    // Whichever of the first three is picked, the other two lie inside
    // L2's [0,29] and join it; [40,49] would add L2's second file.
    let v = version_with(
        4,
        &[
            (1, 0, 9, MB),
            (1, 10, 19, MB),
            (1, 20, 29, MB),
            (1, 40, 49, MB),
            (2, 0, 29, 10 * MB),
            (2, 40, 49, 50 * MB),
        ],
    );
    let p = pick(&v, &o, &[], &mut [0; 4]).expect("L1 over target");
    assert_eq!((p.level, p.output_level), (1, 2));
    let mut numbers: Vec<u64> = p.inputs.iter().map(|f| f.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, vec![1, 2, 3]);
    assert_eq!(p.output_inputs.len(), 1);
    // A neighbour being compacted keeps the pick to its own file.
    v.files(1)[1].set_being_compacted(true);
    let p = pick(&v, &o, &[], &mut [0; 4]).expect("L1 over target");
    assert_eq!(p.inputs.len(), 1);
    v.files(1)[1].set_being_compacted(false);
    // Over max_compaction_bytes: no growth.
    o.max_compaction_bytes = 12 * MB;
    let p = pick(&v, &o, &[], &mut [0; 4]).expect("L1 over target");
    assert_eq!(p.inputs.len(), 1);
}
