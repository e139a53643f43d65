use super::*;
use crate::base::ValueKind;
use crate::iter::level::tests::VecIter;

fn k(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

#[test]
fn splits_divide_the_bytes_evenly_and_increase() {
    // Two tables over the same keys, 100 anchors each of 10 bytes.
    let anchors: Vec<Anchor> = (0..2).flat_map(|_| (0..100).map(|i| (k(i), 10))).collect();
    let s = split_points(anchors.clone(), 4, 1);
    assert_eq!(s, vec![k(24), k(49), k(74)]);
    // Never more ranges than the bytes allow at `min_bytes` each.
    assert_eq!(split_points(anchors.clone(), 4, 1000), vec![k(49)]);
    assert!(split_points(anchors.clone(), 4, 2001).is_empty());
    assert!(split_points(anchors.clone(), 1, 1).is_empty());
    assert!(split_points(Vec::new(), 4, 1).is_empty());
    // One anchor holding everything: no split can divide it.
    assert!(split_points(vec![(k(5), 1000)], 4, 1).is_empty());
    // Skew: most bytes in the first keys.
    let mut skew: Vec<Anchor> = vec![(k(0), 500), (k(1), 500)];
    skew.extend((2..100).map(|i| (k(i), 1)));
    let s = split_points(skew, 2, 1);
    assert_eq!(s, vec![k(1)]);
}

#[test]
fn ranges_cover_the_key_space_once() {
    assert_eq!(ranges(&[]), vec![(None, None)]);
    assert_eq!(
        ranges(&[k(1), k(2)]),
        vec![
            (None, Some(k(1))),
            (Some(k(1)), Some(k(2))),
            (Some(k(2)), None)
        ]
    );
}

/// Every version of every key in `[lo, hi)`, both directions.
#[test]
fn range_iter_yields_whole_user_keys_of_its_range() {
    let mut entries = Vec::new();
    for i in 0..10u32 {
        for seq in (1..=3u64).rev() {
            let mut key = Vec::new();
            make_internal_key(
                &mut key,
                &k(i),
                seq * 100 + u64::from(i),
                ValueKind::Value as u8,
            );
            entries.push((key, vec![i as u8]));
        }
    }
    let collect = |lo: Option<u32>, hi: Option<u32>| {
        let lo_key = lo.map(k);
        let mut it = RangeIter::new(VecIter::new(entries.clone()), lo_key.as_deref(), hi.map(k));
        let mut fwd = Vec::new();
        it.seek_to_first();
        while it.valid() {
            fwd.push(it.value()[0]);
            it.next();
        }
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() {
            back.push(it.value()[0]);
            it.prev();
        }
        back.reverse();
        assert_eq!(fwd, back, "both directions agree for {lo:?}..{hi:?}");
        fwd
    };
    assert_eq!(collect(Some(3), Some(5)), vec![3, 3, 3, 4, 4, 4]);
    assert_eq!(collect(None, Some(2)), vec![0, 0, 0, 1, 1, 1]);
    assert_eq!(collect(Some(8), None), vec![8, 8, 8, 9, 9, 9]);
    assert_eq!(collect(Some(4), Some(4)), Vec::<u8>::new());
    assert_eq!(collect(None, None).len(), 30);
    // A seek below the range lands on its first key.
    let mut it = RangeIter::new(VecIter::new(entries.clone()), Some(&k(6)), Some(k(7)));
    let mut t = Vec::new();
    make_internal_key(&mut t, &k(1), MAX_SEQNO, KIND_FOR_SEEK);
    it.seek(&t);
    assert!(it.valid() && it.value()[0] == 6);
    // seek_for_prev above the range lands on its last entry.
    t.clear();
    make_internal_key(&mut t, &k(9), 0, 0);
    it.seek_for_prev(&t);
    assert!(it.valid() && it.value()[0] == 6);
}
