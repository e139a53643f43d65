use super::*;

fn bounds(r: impl KeyRange) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let (a, b) = r.key_bounds();
    (a.map(|k| k.to_vec()), b.map(|k| k.to_vec()))
}

#[test]
fn every_range_shape_infers_and_converts() {
    use Bound::*;
    assert_eq!(bounds(..), (Unbounded, Unbounded));
    assert_eq!(
        bounds(b"a"..b"c"),
        (Included(b"a".to_vec()), Excluded(b"c".to_vec()))
    );
    assert_eq!(
        bounds("a"..="c"),
        (Included(b"a".to_vec()), Included(b"c".to_vec()))
    );
    assert_eq!(bounds(vec![1u8]..), (Included(vec![1]), Unbounded));
    assert_eq!(bounds(..&b"zz"[..]), (Unbounded, Excluded(b"zz".to_vec())));
    assert_eq!(bounds(..=vec![9u8]), (Unbounded, Included(vec![9])));
    assert_eq!(
        bounds((Excluded(&b"a"[..]), Unbounded)),
        (Excluded(b"a".to_vec()), Unbounded)
    );
}
