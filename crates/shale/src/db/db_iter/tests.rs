use super::*;

#[test]
fn prefix_successor_cases() {
    assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
    assert_eq!(prefix_successor(b"a\xff"), Some(b"b".to_vec()));
    assert_eq!(prefix_successor(b"\xff\xff"), None);
    assert_eq!(prefix_successor(b""), None);
}

#[test]
fn bounds_conversion() {
    let (l, u) = bounds_to_cursor(Bound::Excluded(b"a"), Bound::Included(b"c"));
    assert_eq!(l, Some(b"a\0".to_vec()));
    assert_eq!(u, Some(b"c\0".to_vec()));
    let (l, u) = bounds_to_cursor(Bound::Unbounded, Bound::Excluded(b"c"));
    assert_eq!(l, None);
    assert_eq!(u, Some(b"c".to_vec()));
}
