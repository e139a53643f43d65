//! The blob index: the reference to a value in a blob file that an SST
//! stores, as the value of a `ValueKind::BlobIndex` entry, in place of the
//! value itself. Byte by byte in `docs/format/blob.md` ("Blob index").
//!
//! Encoding: `u8 tag (1 = plain blob) ++ varint64 file_number ++ varint64
//! offset ++ varint64 size ++ u8 compression`; nothing may follow. The tag
//! is RocksDB's `kBlob`; RocksDB's inlined-TTL (0) and blob-with-TTL (2)
//! forms are not written and decode as malformed.
//!
//! Invariant: `decode(encode(i)) == Some(i)` for every index whose
//! compression byte is known. `decode` never panics and trusts nothing:
//! the reader still bounds the record it points to by the blob file.
//!
//! Thread-safety: a plain `Copy` value.

use crate::blob::format::{is_known_compression, RECORD_HEADER_LEN};
use crate::codec::{get_varint64, put_varint64};

/// Type tag of a plain blob index (RocksDB's `kBlob`). FROZEN: on disk in
/// every SST holding blob references. Never renumber.
pub(crate) const TAG_PLAIN_BLOB: u8 = 1;

/// Longest encoding: tag (1) + three varint64s (10 each) + compression (1).
#[cfg(test)]
pub(crate) const MAX_ENCODED_LEN: usize = 32;

/// Where a value lives: the record at `offset` of blob file `file_number`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobIndex {
    /// Number of the blob file (`NNNNNN.blob`).
    pub file_number: u64,
    /// Offset of the record (its header) in the blob file.
    pub offset: u64,
    /// Stored (possibly compressed) length of the value bytes.
    pub size: u64,
    /// Compression type byte of the stored value (sst::compression
    /// TYPE_NONE / TYPE_LZ4 / TYPE_ZSTD).
    pub compression: u8,
}

impl BlobIndex {
    /// Appends the encoding: u8 type tag 1 ("plain blob"), varint64
    /// file_number, varint64 offset, varint64 size, u8 compression.
    pub(crate) fn encode(&self, dst: &mut Vec<u8>) {
        dst.push(TAG_PLAIN_BLOB);
        put_varint64(dst, self.file_number);
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
        dst.push(self.compression);
    }

    /// Decodes; `None` for anything malformed (wrong tag, bad varint,
    /// unknown compression byte, trailing bytes). Never panics.
    pub(crate) fn decode(src: &[u8]) -> Option<BlobIndex> {
        let (&tag, mut rest) = src.split_first()?;
        if tag != TAG_PLAIN_BLOB {
            return None;
        }
        let file_number = get_varint64(&mut rest)?;
        let offset = get_varint64(&mut rest)?;
        let size = get_varint64(&mut rest)?;
        match rest {
            [compression] if is_known_compression(*compression) => Some(BlobIndex {
                file_number,
                offset,
                size,
                compression: *compression,
            }),
            _ => None,
        }
    }

    /// Bytes of the whole record this index points to for `user_key`:
    /// `format::RECORD_HEADER_LEN + key_len + size`, saturating at
    /// `u64::MAX` (a corrupt `size` can be anything; the reader rejects a
    /// record that does not fit in the file).
    pub(crate) fn record_len(&self, key_len: usize) -> u64 {
        (RECORD_HEADER_LEN as u64)
            .saturating_add(key_len as u64)
            .saturating_add(self.size)
    }
}

#[cfg(test)]
mod tests;
