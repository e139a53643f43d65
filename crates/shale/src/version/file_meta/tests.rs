use super::*;
use crate::base::{make_internal_key, ValueKind};

fn meta(n: u64, lo: &[u8], hi: &[u8]) -> FileMeta {
    let mut smallest = Vec::new();
    make_internal_key(&mut smallest, lo, 9, ValueKind::Value as u8);
    let mut largest = Vec::new();
    make_internal_key(&mut largest, hi, 3, ValueKind::Deletion as u8);
    FileMeta {
        number: n,
        file_size: 100,
        smallest,
        largest,
        ..Default::default()
    }
}

#[test]
fn user_keys_and_overlap() {
    let m = meta(1, b"c", b"f");
    assert_eq!(m.smallest_user_key(), b"c");
    assert_eq!(m.largest_user_key(), b"f");
    assert!(m.overlaps_user_range(Some(b"a"), Some(b"c")));
    assert!(m.overlaps_user_range(Some(b"f"), Some(b"z")));
    assert!(m.overlaps_user_range(Some(b"d"), Some(b"e")));
    assert!(m.overlaps_user_range(None, None));
    assert!(m.overlaps_user_range(None, Some(b"c")));
    assert!(!m.overlaps_user_range(None, Some(b"b")));
    assert!(!m.overlaps_user_range(Some(b"g"), None));
    assert!(!m.overlaps_user_range(Some(b"a"), Some(b"bz")));
}

#[test]
fn clone_resets_flag_and_eq_ignores_it() {
    let m = meta(1, b"a", b"b");
    let n = FileMeta::new(1, 100, m.smallest.clone(), m.largest.clone(), 0, 0, 0, 0);
    assert_eq!(n, m);
    m.set_being_compacted(true);
    assert!(m.is_being_compacted());
    let c = m.clone();
    assert!(!c.is_being_compacted());
    assert_eq!(c, m);
    let mut d = m.clone();
    d.num_entries = 5;
    assert_ne!(d, m);
}
