//! The fixed parts of the blob file format: the 24-byte file header, the
//! 13-byte record header and its file- and offset-bound checksum, the
//! 28-byte footer and the magic number. Byte by byte in
//! `docs/format/blob.md`; keep the two in sync.
//!
//! A blob file is `header ++ record* ++ footer`. Records lie back to back
//! from [`HEADER_LEN`] to the footer, so the footer's `record_bytes` is
//! exactly the file length minus [`HEADER_LEN`] and [`FOOTER_LEN`]. A
//! record's checksum covers the file number and the record's offset, so a
//! record copied to another file or another offset fails its check.
//!
//! FROZEN: everything in this file is on disk. Never change the magic, the
//! lengths, the layouts or the checksum input; a change of format bumps
//! [`FORMAT_VERSION`] and readers keep decoding every version they ever
//! wrote.
//!
//! Decoders never panic and never trust a length they read: every failure
//! is `Error::Corruption` naming the blob file and the byte offset of the
//! header, record or footer.
//!
//! Thread-safety: pure functions and `Copy` values.

use crate::codec::{crc32c, crc32c_extend, decode_fixed32, decode_fixed64, mask_crc, unmask_crc};
use crate::error::{Error, Result};
use crate::sst::compression::{TYPE_LZ4, TYPE_NONE, TYPE_ZSTD};

/// Magic number at the start and at the very end of every blob file
/// ("SHBL" read as a big-endian u32; stored little-endian, so the bytes on
/// disk are `4c 42 48 53`). FROZEN.
pub(crate) const BLOB_MAGIC: u32 = 0x5348_424c;

/// The only format version this code writes and reads. FROZEN.
pub(crate) const FORMAT_VERSION: u8 = 1;

/// File header: magic (4) + version (1) + compression (1) + reserved (2) +
/// column family (4) + file number (8) + crc (4). FROZEN.
pub(crate) const HEADER_LEN: usize = 24;

/// Record header: crc (4) + key length (4) + value length (4) +
/// compression (1). FROZEN.
pub(crate) const RECORD_HEADER_LEN: usize = 13;

/// Footer: record count (8) + record bytes (8) + crc (4) + reserved (4) +
/// magic (4). FROZEN.
pub(crate) const FOOTER_LEN: usize = 28;

/// Bytes of the header covered by its checksum (all before the checksum).
const HEADER_CRC_AT: usize = HEADER_LEN - 4;
/// Bytes of the footer covered by its checksum (count and record bytes).
const FOOTER_CRC_AT: usize = 16;

/// True for the compression type bytes a blob file may hold (those of
/// `sst::compression`: none, LZ4, zstd).
pub(crate) fn is_known_compression(c: u8) -> bool {
    matches!(c, TYPE_NONE | TYPE_LZ4 | TYPE_ZSTD)
}

/// The decoded file header (the version is always [`FORMAT_VERSION`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// Compression type byte the file was written with. Informational: each
    /// record carries its own (a value that does not compress is stored as
    /// is).
    pub compression: u8,
    /// Column family whose values the file holds.
    pub column_family: u32,
    /// The number in the file's name.
    pub file_number: u64,
}

/// Returns the [`HEADER_LEN`] bytes of `h`.
pub(crate) fn encode_header(h: &Header) -> [u8; HEADER_LEN] {
    let mut b = [0u8; HEADER_LEN];
    b[0..4].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
    b[4] = FORMAT_VERSION;
    b[5] = h.compression;
    // b[6..8]: reserved, zero.
    b[8..12].copy_from_slice(&h.column_family.to_le_bytes());
    b[12..20].copy_from_slice(&h.file_number.to_le_bytes());
    let crc = mask_crc(crc32c(&b[..HEADER_CRC_AT]));
    b[HEADER_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Decodes the first [`HEADER_LEN`] bytes of a blob file. Checks, in
/// order: length, magic, checksum, version, reserved bytes, compression
/// byte. Errors are `Corruption` at offset 0 of `file_name`.
pub(crate) fn decode_header(buf: &[u8], file_name: &str) -> Result<Header> {
    let corrupt = |what: String| Error::corruption(file_name, 0, what);
    let b: &[u8; HEADER_LEN] = buf.try_into().map_err(|_| {
        corrupt(format!(
            "blob file header is {} bytes, expected {HEADER_LEN}",
            buf.len()
        ))
    })?;
    if decode_fixed32(b) != Some(BLOB_MAGIC) {
        return Err(corrupt(
            "bad blob file magic number (not a blob file)".into(),
        ));
    }
    let stored = decode_fixed32(&b[HEADER_CRC_AT..]).unwrap_or(0);
    let computed = crc32c(&b[..HEADER_CRC_AT]);
    if unmask_crc(stored) != computed {
        return Err(corrupt(format!(
            "blob file header checksum mismatch (stored {:#010x}, computed {computed:#010x})",
            unmask_crc(stored)
        )));
    }
    if b[4] != FORMAT_VERSION {
        return Err(corrupt(format!(
            "blob format version {} (this build reads version {FORMAT_VERSION})",
            b[4]
        )));
    }
    if b[6..8] != [0, 0] {
        return Err(corrupt(
            "non-zero reserved bytes in blob file header".into(),
        ));
    }
    if !is_known_compression(b[5]) {
        return Err(corrupt(format!(
            "unknown compression type {} in blob file header",
            b[5]
        )));
    }
    Ok(Header {
        compression: b[5],
        column_family: decode_fixed32(&b[8..]).unwrap_or(0),
        file_number: decode_fixed64(&b[12..]).unwrap_or(0),
    })
}

/// The fields of a record header after its checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordHeader {
    /// Length of the user key that follows the header.
    pub key_len: u32,
    /// Stored (possibly compressed) length of the value after the key.
    pub value_len: u32,
    /// Compression type byte of the stored value.
    pub compression: u8,
}

impl RecordHeader {
    /// Bytes of the whole record: header, key and stored value.
    pub(crate) fn record_len(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.key_len) + u64::from(self.value_len)
    }

    /// The 9 header bytes after the checksum.
    fn tail(&self) -> [u8; RECORD_HEADER_LEN - 4] {
        let mut t = [0u8; RECORD_HEADER_LEN - 4];
        t[0..4].copy_from_slice(&self.key_len.to_le_bytes());
        t[4..8].copy_from_slice(&self.value_len.to_le_bytes());
        t[8] = self.compression;
        t
    }
}

/// Returns the [`RECORD_HEADER_LEN`] bytes of a record header with the
/// masked checksum `crc` (from [`record_crc`]).
pub(crate) fn encode_record_header(crc: u32, h: &RecordHeader) -> [u8; RECORD_HEADER_LEN] {
    let mut b = [0u8; RECORD_HEADER_LEN];
    b[0..4].copy_from_slice(&crc.to_le_bytes());
    b[4..].copy_from_slice(&h.tail());
    b
}

/// Splits the first [`RECORD_HEADER_LEN`] bytes of `buf` into the stored
/// (masked) checksum and the header fields; `None` when `buf` is shorter.
/// Checks nothing else.
pub(crate) fn decode_record_header(buf: &[u8]) -> Option<(u32, RecordHeader)> {
    let b = buf.get(..RECORD_HEADER_LEN)?;
    let h = RecordHeader {
        key_len: decode_fixed32(b.get(4..)?)?,
        value_len: decode_fixed32(b.get(8..)?)?,
        compression: *b.get(12)?,
    };
    Some((decode_fixed32(b)?, h))
}

/// The masked checksum of the record at `offset` of blob file
/// `file_number`: `mask(crc32c(le64(file_number) ++ le64(offset) ++ the 9
/// header bytes after the checksum ++ key ++ stored value))`.
pub(crate) fn record_crc(
    file_number: u64,
    offset: u64,
    h: &RecordHeader,
    key: &[u8],
    value: &[u8],
) -> u32 {
    let mut c = crc32c(&file_number.to_le_bytes());
    c = crc32c_extend(c, &offset.to_le_bytes());
    c = crc32c_extend(c, &h.tail());
    c = crc32c_extend(c, key);
    mask_crc(crc32c_extend(c, value))
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    /// Number of records in the file.
    pub record_count: u64,
    /// Sum of the whole record lengths (header, key and stored value).
    pub record_bytes: u64,
}

/// Returns the [`FOOTER_LEN`] bytes of `f`.
pub(crate) fn encode_footer(f: &Footer) -> [u8; FOOTER_LEN] {
    let mut b = [0u8; FOOTER_LEN];
    b[0..8].copy_from_slice(&f.record_count.to_le_bytes());
    b[8..16].copy_from_slice(&f.record_bytes.to_le_bytes());
    let crc = mask_crc(crc32c(&b[..FOOTER_CRC_AT]));
    b[16..20].copy_from_slice(&crc.to_le_bytes());
    // b[20..24]: reserved, zero.
    b[24..28].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
    b
}

/// Decodes the last [`FOOTER_LEN`] bytes of a blob file, which start at
/// `offset`. Checks, in order: length, magic, checksum, reserved bytes.
/// Errors are `Corruption` at `offset` of `file_name`.
pub(crate) fn decode_footer(buf: &[u8], file_name: &str, offset: u64) -> Result<Footer> {
    let corrupt = |what: String| Error::corruption(file_name, offset, what);
    let b: &[u8; FOOTER_LEN] = buf.try_into().map_err(|_| {
        corrupt(format!(
            "blob file footer is {} bytes, expected {FOOTER_LEN}",
            buf.len()
        ))
    })?;
    if decode_fixed32(&b[24..]) != Some(BLOB_MAGIC) {
        return Err(corrupt(
            "bad blob file footer magic number (not a blob file, or truncated)".into(),
        ));
    }
    let stored = decode_fixed32(&b[FOOTER_CRC_AT..]).unwrap_or(0);
    let computed = crc32c(&b[..FOOTER_CRC_AT]);
    if unmask_crc(stored) != computed {
        return Err(corrupt(format!(
            "blob file footer checksum mismatch (stored {:#010x}, computed {computed:#010x})",
            unmask_crc(stored)
        )));
    }
    if b[20..24] != [0, 0, 0, 0] {
        return Err(corrupt(
            "non-zero reserved bytes in blob file footer".into(),
        ));
    }
    Ok(Footer {
        record_count: decode_fixed64(b).unwrap_or(0),
        record_bytes: decode_fixed64(&b[8..]).unwrap_or(0),
    })
}

#[cfg(test)]
mod tests;
