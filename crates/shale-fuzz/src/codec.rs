//! The few encodings the checks need, written from `docs/format/` rather
//! than borrowed from the engine, so that the reference block decoder and
//! the checksum repair are independent of the code they check.
//!
//! Varints are LEB128. Like the engine's reader, `get_varint32` accepts up
//! to 10 bytes as long as the value fits in 32 bits; a reference decoder
//! that rejected overlong encodings would report a difference on every
//! such input.
//!
//! Thread-safety: pure functions.

/// Reads a little-endian u32 from the first 4 bytes, `None` if shorter.
pub(crate) fn decode_fixed32(src: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(src.get(..4)?.try_into().ok()?))
}

/// Reads a little-endian u64 from the first 8 bytes, `None` if shorter.
pub(crate) fn decode_fixed64(src: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(src.get(..8)?.try_into().ok()?))
}

/// Reads a LEB128 varint of at most 10 bytes and 64 bits from the front of
/// `src`, advancing it.
pub(crate) fn get_varint64(src: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &b) in src.iter().enumerate().take(10) {
        if i == 9 && b > 1 {
            return None;
        }
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *src = &src[i + 1..];
            return Some(v);
        }
    }
    None
}

/// [`get_varint64`] whose value fits in 32 bits.
pub(crate) fn get_varint32(src: &mut &[u8]) -> Option<u32> {
    u32::try_from(get_varint64(src)?).ok()
}

/// CRC32C with LevelDB's mask (docs/format/sst.md, docs/format/wal.md).
pub(crate) fn masked_crc32c(parts: &[&[u8]]) -> u32 {
    let crc = parts.iter().fold(0, |crc, p| crc32c::crc32c_append(crc, p));
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_follow_leb128_and_reject_overflow() {
        let mut s: &[u8] = &[0xac, 0x02, 0x7f];
        assert_eq!(get_varint32(&mut s), Some(300));
        assert_eq!(s, &[0x7f]);
        // 2^32 does not fit a varint32; 2^64 does not fit a varint64.
        assert_eq!(get_varint32(&mut &[0x80, 0x80, 0x80, 0x80, 0x10][..]), None);
        let mut max = vec![0xff; 9];
        max.push(0x01);
        assert_eq!(get_varint64(&mut &max[..]), Some(u64::MAX));
        max[9] = 0x02;
        assert_eq!(get_varint64(&mut &max[..]), None);
        assert_eq!(get_varint64(&mut &[0x80][..]), None);
    }

    #[test]
    fn masked_crc_matches_the_documented_mask() {
        // CRC32C("123456789") = 0xe3069283, then rotate right 15 + delta.
        let want = 0xe306_9283u32.rotate_right(15).wrapping_add(0xa282_ead8);
        assert_eq!(masked_crc32c(&[b"1234", b"56789"]), want);
    }
}
