//! CRC32C with LevelDB's mask, so that a CRC stored inside CRC-covered data
//! does not checksum to a fixed point.

const MASK_DELTA: u32 = 0xa282_ead8;

/// CRC32C of `data`.
#[inline]
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// Extends `crc` with `data`.
#[inline]
pub(crate) fn crc32c_extend(crc: u32, data: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, data)
}

/// Masks a CRC before it is stored.
#[inline]
pub(crate) fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
#[inline]
pub(crate) fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests;
