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
mod tests;
