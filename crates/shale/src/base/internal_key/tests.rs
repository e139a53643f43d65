use super::*;
use crate::base::KIND_FOR_SEEK;

fn ik(k: &[u8], s: u64, kind: ValueKind) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, k, s, kind as u8);
    v
}

#[test]
fn user_key_order_is_bytewise() {
    let keys: Vec<&[u8]> = vec![
        b"",
        b"a",
        b"abcdefg",
        b"abcdefgh",
        b"abcdefgh\0",
        b"abcdefgi",
        b"abcdefgha",
        b"\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\x01",
        b"\x00\x00\x00\x00\x00\x00\x00\x00",
        b"b\x00",
        b"0000000000000001",
        b"0000000000000010",
        b"0000000100000000",
    ];
    for a in &keys {
        for b in &keys {
            assert_eq!(compare_user_keys(a, b), a.cmp(b), "{a:?} {b:?}");
        }
    }
}

#[test]
fn ordering_newest_first() {
    let a = ik(b"a", 5, ValueKind::Value);
    let a_old = ik(b"a", 3, ValueKind::Value);
    let b = ik(b"b", 1, ValueKind::Value);
    assert_eq!(compare_internal(&a, &a_old), Ordering::Less);
    assert_eq!(compare_internal(&a_old, &b), Ordering::Less);
    assert_eq!(compare_internal(&a, &a), Ordering::Equal);
    let mut seek = Vec::new();
    make_internal_key(&mut seek, b"a", 5, KIND_FOR_SEEK);
    assert_eq!(compare_internal(&seek, &a), Ordering::Less);
    let d = ik(b"a", 5, ValueKind::Deletion);
    assert_eq!(compare_internal(&a, &d), Ordering::Less);
}

#[test]
fn parse_roundtrip_and_rejects_garbage() {
    let a = ik(b"key", 77, ValueKind::Deletion);
    let p = parse_internal_key(&a).unwrap();
    assert_eq!(p.user_key, b"key");
    assert_eq!(p.seq, 77);
    assert_eq!(p.kind, ValueKind::Deletion);
    assert_eq!(extract_user_key(&a), b"key");
    assert!(parse_internal_key(b"short").is_none());
    let mut bad = b"k".to_vec();
    bad.extend_from_slice(&pack_trailer(1, 0x42).to_le_bytes());
    assert!(parse_internal_key(&bad).is_none());
}
