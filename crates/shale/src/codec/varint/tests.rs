use super::*;

#[test]
fn varint_roundtrip() {
    let vals = [
        0u64,
        1,
        127,
        128,
        300,
        16383,
        16384,
        u32::MAX as u64,
        u64::MAX - 1,
        u64::MAX,
    ];
    let mut buf = Vec::new();
    for &v in &vals {
        put_varint64(&mut buf, v);
    }
    let mut s = &buf[..];
    for &v in &vals {
        assert_eq!(get_varint64(&mut s), Some(v));
    }
    assert!(s.is_empty());
    for &v in &vals {
        let mut b = Vec::new();
        put_varint64(&mut b, v);
        assert_eq!(b.len(), varint_len(v));
    }
}

#[test]
fn varint_rejects_truncated_and_overlong() {
    let mut s: &[u8] = &[0x80, 0x80];
    assert_eq!(get_varint64(&mut s), None);
    let mut s: &[u8] = &[0xff; 11];
    assert_eq!(get_varint64(&mut s), None);
    let mut b = Vec::new();
    put_varint64(&mut b, u64::from(u32::MAX) + 1);
    let mut s = &b[..];
    assert_eq!(get_varint32(&mut s), None);
}

#[test]
fn length_prefixed() {
    let mut b = Vec::new();
    put_length_prefixed(&mut b, b"hello");
    put_fixed32(&mut b, 7);
    let mut s = &b[..];
    assert_eq!(get_length_prefixed(&mut s), Some(&b"hello"[..]));
    assert_eq!(decode_fixed32(s), Some(7));
    let mut t: &[u8] = &[5, b'a'];
    assert_eq!(get_length_prefixed(&mut t), None);
    assert_eq!(decode_fixed64(&[1, 2, 3]), None);
    let mut c = Vec::new();
    put_fixed64(&mut c, 0x0102_0304_0506_0708);
    assert_eq!(decode_fixed64(&c), Some(0x0102_0304_0506_0708));
}
