//! Fixed-width little-endian integers and LEB128 varints.
//!
//! `get_*` functions take a `&mut &[u8]` cursor and advance it past what they
//! decoded; they return `None` (leaving the cursor unspecified) on truncated or
//! overlong input.

#[inline]
pub(crate) fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

#[inline]
pub(crate) fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian u32 from the first 4 bytes, `None` if shorter.
#[inline]
pub(crate) fn decode_fixed32(src: &[u8]) -> Option<u32> {
    let b: [u8; 4] = src.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Reads a little-endian u64 from the first 8 bytes, `None` if shorter.
#[inline]
pub(crate) fn decode_fixed64(src: &[u8]) -> Option<u64> {
    let b: [u8; 8] = src.get(..8)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

#[inline]
pub(crate) fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, v as u64)
}

#[inline]
pub(crate) fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes `put_varint64(v)` writes.
#[inline]
pub(crate) fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

#[inline]
pub(crate) fn get_varint64(src: &mut &[u8]) -> Option<u64> {
    let mut result: u64 = 0;
    for (i, &b) in src.iter().enumerate().take(10) {
        let shift = 7 * i as u32;
        if i == 9 && b > 1 {
            return None; // would overflow 64 bits
        }
        result |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            *src = &src[i + 1..];
            return Some(result);
        }
    }
    None
}

#[inline]
pub(crate) fn get_varint32(src: &mut &[u8]) -> Option<u32> {
    // Fast path: one byte.
    if let Some(&b) = src.first() {
        if b < 0x80 {
            *src = &src[1..];
            return Some(b as u32);
        }
    }
    let v = get_varint64(src)?;
    u32::try_from(v).ok()
}

#[inline]
pub(crate) fn put_length_prefixed(dst: &mut Vec<u8>, data: &[u8]) {
    put_varint32(dst, data.len() as u32);
    dst.extend_from_slice(data);
}

/// Reads a varint32 length and that many bytes.
#[inline]
pub(crate) fn get_length_prefixed<'a>(src: &mut &'a [u8]) -> Option<&'a [u8]> {
    let len = get_varint32(src)? as usize;
    if src.len() < len {
        return None;
    }
    let (head, tail) = src.split_at(len);
    *src = tail;
    Some(head)
}

#[cfg(test)]
mod tests {
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
}
