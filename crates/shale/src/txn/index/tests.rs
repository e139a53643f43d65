use std::ops::Bound;

use super::*;

/// Builds a batch and its index from `ops` (applied in order).
fn build(overwrite: bool, ops: impl FnOnce(&mut WriteBatch)) -> (WriteBatch, BatchIndex) {
    let mut b = WriteBatch::new();
    ops(&mut b);
    let mut idx = BatchIndex::new(overwrite);
    idx.rebuild(&b).unwrap();
    (b, idx)
}

fn delta<'b>(b: &'b WriteBatch, idx: &BatchIndex, cf: u32, k: &[u8]) -> Delta<'b> {
    idx.resolve(b, cf, k).unwrap()
}

#[test]
fn newest_entry_wins_and_merges_stack() {
    let (b, idx) = build(false, |b| {
        b.put(b"a", b"1");
        b.merge(b"a", b"x");
        b.merge(b"a", b"y");
        b.delete(b"b");
        b.merge(b"b", b"z");
        b.merge(b"c", b"w");
        b.put(b"d", b"1");
        b.single_delete(b"d");
    });
    let d = delta(&b, &idx, 0, b"a");
    assert_eq!(d.below, Below::Value(b"1"));
    assert_eq!(d.operands, vec![&b"x"[..], b"y"]);
    let d = delta(&b, &idx, 0, b"b");
    assert_eq!((d.below, d.operands), (Below::Deleted, vec![&b"z"[..]]));
    let d = delta(&b, &idx, 0, b"c");
    assert_eq!((d.below, d.operands), (Below::Db, vec![&b"w"[..]]));
    assert_eq!(delta(&b, &idx, 0, b"d").below, Below::Deleted);
    assert!(delta(&b, &idx, 0, b"e").is_absent());
    assert!(delta(&b, &idx, 1, b"a").is_absent());
    assert_eq!(idx.points(), 8);
}

#[test]
fn a_range_deletion_deletes_what_is_older_in_its_range() {
    let (b, idx) = build(false, |b| {
        b.put(b"a", b"1");
        b.put(b"b", b"1");
        b.delete_range(b"a", b"c");
        b.merge(b"b", b"m");
        b.delete_range_cf(&3u32, b"a", b"z");
        b.delete_range(b"x", b"x");
    });
    assert_eq!(
        delta(&b, &idx, 0, b"a"),
        Delta {
            operands: vec![],
            below: Below::Deleted
        }
    );
    let d = delta(&b, &idx, 0, b"b");
    assert_eq!((d.below, d.operands), (Below::Deleted, vec![&b"m"[..]]));
    assert!(idx.range_deleted(0, b"bz"));
    assert!(!idx.range_deleted(0, b"c"));
    assert!(
        !idx.range_deleted(0, b"x"),
        "an empty range deletes nothing"
    );
    assert!(idx.range_deleted(3, b"q"));
    assert!(!idx.range_deleted(1, b"q"));
}

#[test]
fn overwrite_key_keeps_only_what_can_be_read() {
    let (b, idx) = build(true, |b| {
        b.put(b"a", b"1");
        b.merge(b"a", b"x");
        b.put(b"a", b"2");
        b.merge(b"a", b"y");
        b.delete(b"b");
        b.put(b"b", b"3");
    });
    assert_eq!(idx.points(), 3);
    let d = delta(&b, &idx, 0, b"a");
    assert_eq!((d.below, d.operands), (Below::Value(b"2"), vec![&b"y"[..]]));
    assert_eq!(delta(&b, &idx, 0, b"b").below, Below::Value(b"3"));
    let kinds: Vec<_> = idx
        .entries(0)
        .map(|(k, kind, _)| (k.to_vec(), kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (b"a".to_vec(), ValueKind::Value),
            (b"a".to_vec(), ValueKind::Merge),
            (b"b".to_vec(), ValueKind::Value)
        ]
    );
}

#[test]
fn keys_are_walked_in_order_within_a_family_and_bounds() {
    let (_b, idx) = build(false, |b| {
        b.put_cf(&1u32, b"b", b"");
        b.put_cf(&1u32, b"b", b"");
        b.put_cf(&1u32, b"d", b"");
        b.put_cf(&0u32, b"a", b"");
        b.put_cf(&2u32, b"c", b"");
    });
    let inc = Bound::Included;
    let exc = Bound::Excluded;
    assert_eq!(idx.next_key(1, Bound::Unbounded, None), Some(&b"b"[..]));
    assert_eq!(idx.next_key(1, exc(&b"b"[..]), None), Some(&b"d"[..]));
    assert_eq!(idx.next_key(1, inc(&b"c"[..]), None), Some(&b"d"[..]));
    assert_eq!(idx.next_key(1, inc(&b"c"[..]), Some(b"d")), None);
    assert_eq!(idx.next_key(1, exc(&b"d"[..]), None), None);
    assert_eq!(idx.prev_key(1, Bound::Unbounded, None), Some(&b"d"[..]));
    assert_eq!(idx.prev_key(1, exc(&b"d"[..]), None), Some(&b"b"[..]));
    assert_eq!(idx.prev_key(1, inc(&b"c"[..]), None), Some(&b"b"[..]));
    assert_eq!(idx.prev_key(1, inc(&b"c"[..]), Some(b"c")), None);
    assert_eq!(idx.prev_key(1, exc(&b"b"[..]), None), None);
    assert_eq!(idx.prev_key(u32::MAX, Bound::Unbounded, None), None);
    assert_eq!(idx.next_key(3, Bound::Unbounded, None), None);
    assert_eq!(idx.entries(1).count(), 3);
}

#[test]
fn fragments_give_the_newest_range_over_every_key() {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};
    for seed in 0..300u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let ranges: Vec<RangeDel> = (0..rng.gen_range(0..12u32))
            .map(|pos| {
                let a: u8 = rng.gen_range(0..20);
                let b: u8 = rng.gen_range(a..=20);
                RangeDel {
                    start: vec![a],
                    end: vec![b],
                    pos,
                }
            })
            .filter(|r| r.start < r.end)
            .collect();
        let r = Ranges {
            added: ranges.clone(),
            pieces: OnceLock::new(),
        };
        let pieces = fragment(&ranges);
        assert!(
            pieces.windows(2).all(|w| w[0].end <= w[1].start),
            "seed {seed}"
        );
        for k in 0..21u8 {
            let want = ranges
                .iter()
                .filter(|x| {
                    x.start.as_slice() <= [k].as_slice() && [k].as_slice() < x.end.as_slice()
                })
                .map(|x| x.pos)
                .max();
            assert_eq!(r.newest_over(&[k]), want, "seed {seed}, key {k}");
        }
    }
}
