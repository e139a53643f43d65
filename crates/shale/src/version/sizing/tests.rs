use super::*;
use crate::compaction::picker::tests::{opts, version_with};

const MB: u64 = 1 << 20;

#[test]
fn empty_tree_compacts_l0_into_the_last_level() {
    let o = opts(7);
    let v = version_with(7, &[(0, 0, 10, MB)]);
    let t = level_targets(&v, &o);
    assert_eq!(t.base_level, 6);
}

#[test]
fn base_level_moves_up_as_the_last_level_grows() {
    let o = opts(7); // base 256 MiB, multiplier 10
                     // 1 GiB in L6: L5 would be 100 MiB ≤ 256 MiB → base L5.
    let v = version_with(7, &[(6, 0, 100, 1024 * MB)]);
    let t = level_targets(&v, &o);
    assert_eq!(t.base_level, 5);
    assert_eq!(t.targets[5], 256 * MB);
    // 100 GiB in L6: L5 = 10 GiB, L4 = 1 GiB, L3 = 100 MiB → base L3.
    let v = version_with(7, &[(6, 0, 100, 100 * 1024 * MB)]);
    let t = level_targets(&v, &o);
    assert_eq!(t.base_level, 3);
    assert!(t.targets[5] > 9 * 1024 * MB && t.targets[5] < 11 * 1024 * MB);
    // Small last level: base stays at the first non-empty level.
    let v = version_with(7, &[(6, 0, 100, 10 * MB)]);
    assert_eq!(level_targets(&v, &o).base_level, 6);
}

#[test]
fn static_sizing_and_scores() {
    let mut o = opts(4);
    o.dynamic = false;
    let v = version_with(4, &[(1, 0, 10, 512 * MB), (0, 20, 30, MB), (0, 40, 50, MB)]);
    let t = level_targets(&v, &o);
    assert_eq!(t.base_level, 1);
    assert_eq!(t.targets[2], 2560 * MB);
    let s = scores(&v, &o, &t);
    assert!((s[0] - 0.5).abs() < 1e-9, "{s:?}");
    assert!((s[1] - 2.0).abs() < 1e-9, "{s:?}");
    // L1 is 256 MiB over target and L2 is empty: no fan-out to add.
    assert_eq!(pending_compaction_bytes(&v, &o), 0);
    let v = version_with(
        4,
        &[(1, 0, 10, 512 * MB), (2, 0, 10, 512 * MB), (0, 20, 30, MB)],
    );
    // Excess 256 MiB × (512/512 + 1).
    assert_eq!(pending_compaction_bytes(&v, &o), 512 * MB);
}
