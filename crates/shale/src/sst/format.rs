//! The fixed parts of the SST format: block handles, the 5-byte block
//! trailer and its file- and offset-bound checksum, the footer and the magic
//! number. The byte-by-byte description is `docs/format/sst.md`; keep the two
//! in sync.
//!
//! FROZEN: everything in this file is on disk. Never change `MAGIC`,
//! `FOOTER_LEN`, the footer layout, the trailer layout or the checksum input;
//! a change of format bumps `FORMAT_VERSION` and readers keep decoding every
//! version they ever wrote. The footer stays 60 bytes in every version: new
//! metadata goes into new metaindex entries, not into the footer.
//!
//! Thread-safety: plain functions and `Copy` values.

use crate::codec::{
    crc32c, crc32c_extend, decode_fixed32, decode_fixed64, get_varint64, mask_crc, put_fixed32,
    put_fixed64, put_varint64, unmask_crc,
};
use crate::error::{Error, Result};

/// Magic number at the very end of every SST ("SHALESST" as a big-endian
/// u64; stored little-endian). FROZEN.
pub(crate) const MAGIC: u64 = 0x5348_414c_4553_5354;

/// The newest format version this code reads and writes: 2 records the
/// table's column family in its properties, 3 marks a table written by
/// `SstFileWriter` as external (docs/format/sst.md, "Version log"). A
/// table is written with the oldest version that holds its properties:
/// the engine's own tables stay at [`FORMAT_VERSION_INTERNAL`].
pub(crate) const FORMAT_VERSION: u32 = 3;

/// The version of tables the engine writes itself (flush, compaction).
pub(crate) const FORMAT_VERSION_INTERNAL: u32 = 2;

/// The oldest format version this code reads (every version it ever
/// wrote: `tests/fixtures/format-v1` is one).
pub(crate) const OLDEST_FORMAT_VERSION: u32 = 1;

/// Bytes after every block: 1 byte compression type + fixed32 checksum.
pub(crate) const BLOCK_TRAILER_LEN: usize = 5;

/// Bytes reserved in the footer for the two block handles.
const HANDLES_LEN: usize = 40;

/// Total footer size: handles (40) + checksum base (4) + version (4) +
/// footer crc (4) + magic (8). FROZEN for every format version.
pub(crate) const FOOTER_LEN: usize = HANDLES_LEN + 4 + 4 + 4 + 8;

/// Longest encoding of a block handle (two varint64s).
#[cfg(test)]
pub(crate) const MAX_HANDLE_LEN: usize = 20;

/// Where a block lives in the file: `size` counts the stored block bytes,
/// not the 5-byte trailer that follows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    /// Appends `varint64 offset, varint64 size`.
    pub(crate) fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Decodes a handle from the front of `src`, advancing it; `None` on
    /// truncated or overlong varints.
    pub(crate) fn decode_from(src: &mut &[u8]) -> Option<BlockHandle> {
        let offset = get_varint64(src)?;
        let size = get_varint64(src)?;
        Some(BlockHandle { offset, size })
    }

    /// Decodes a value that must be exactly one handle (index and metaindex
    /// values).
    pub(crate) fn decode_exact(mut src: &[u8]) -> Option<BlockHandle> {
        let h = BlockHandle::decode_from(&mut src)?;
        src.is_empty().then_some(h)
    }

    /// Offset of the first byte after this block's trailer (saturating, so
    /// a corrupt handle cannot overflow).
    pub(crate) fn end_with_trailer(&self) -> u64 {
        self.offset
            .saturating_add(self.size)
            .saturating_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The masked checksum stored in a block trailer. It covers the stored block
/// bytes, the compression type byte, the block's offset and the file's
/// checksum base, so a block that is intact but sits at the wrong offset or
/// in the wrong file fails verification.
pub(crate) fn block_checksum(stored: &[u8], ctype: u8, offset: u64, base: u32) -> u32 {
    let mut crc = crc32c(stored);
    crc = crc32c_extend(crc, &[ctype]);
    crc = crc32c_extend(crc, &offset.to_le_bytes());
    crc = crc32c_extend(crc, &base.to_le_bytes());
    mask_crc(crc)
}

/// Builds the 5-byte trailer for a block stored at `offset`.
pub(crate) fn make_trailer(stored: &[u8], ctype: u8, offset: u64, base: u32) -> [u8; 5] {
    let c = block_checksum(stored, ctype, offset, base).to_le_bytes();
    [ctype, c[0], c[1], c[2], c[3]]
}

/// Checks the trailer of a block read from `offset`; returns the compression
/// type byte. `buf` is the stored bytes followed by the 5-byte trailer.
pub(crate) fn verify_block(buf: &[u8], offset: u64, base: u32, file: &str) -> Result<u8> {
    let n = buf
        .len()
        .checked_sub(BLOCK_TRAILER_LEN)
        .ok_or_else(|| Error::corruption(file, offset, "block shorter than its trailer"))?;
    let (stored, trailer) = buf.split_at(n);
    let ctype = trailer.first().copied().unwrap_or(0);
    let want = trailer.get(1..).and_then(decode_fixed32).unwrap_or(0);
    let got = block_checksum(stored, ctype, offset, base);
    if want != got {
        return Err(Error::corruption(
            file,
            offset,
            format!(
                "block checksum mismatch (stored {:#010x}, computed {:#010x}; \
                 block damaged, or not written at this offset of this file)",
                unmask_crc(want),
                unmask_crc(got)
            ),
        ));
    }
    Ok(ctype)
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
    /// Random per-file value mixed into every block checksum.
    pub checksum_base: u32,
    pub format_version: u32,
}

impl Footer {
    /// Appends exactly `FOOTER_LEN` bytes.
    pub(crate) fn encode_to(&self, dst: &mut Vec<u8>) {
        let start = dst.len();
        self.metaindex.encode_to(dst);
        self.index.encode_to(dst);
        debug_assert!(dst.len() - start <= HANDLES_LEN);
        dst.resize(start + HANDLES_LEN, 0);
        put_fixed32(dst, self.checksum_base);
        put_fixed32(dst, self.format_version);
        let crc = mask_crc(crc32c(&dst[start..]));
        put_fixed32(dst, crc);
        put_fixed64(dst, MAGIC);
        debug_assert_eq!(dst.len() - start, FOOTER_LEN);
    }

    /// Decodes the last `FOOTER_LEN` bytes of a file; `offset` is where they
    /// start (for error messages). Checks, in order: magic (Corruption), crc
    /// (Corruption), format version (NotSupported), handles (Corruption).
    pub(crate) fn decode(buf: &[u8], file: &str, offset: u64) -> Result<Footer> {
        let corrupt = |what: &str| Error::corruption(file, offset, what);
        if buf.len() != FOOTER_LEN {
            return Err(corrupt("footer has the wrong length"));
        }
        let magic = buf.get(FOOTER_LEN - 8..).and_then(decode_fixed64);
        if magic != Some(MAGIC) {
            return Err(corrupt(
                "bad SST magic number (not an SST file, or truncated)",
            ));
        }
        let body = buf.get(..HANDLES_LEN + 8).unwrap_or(&[]);
        let stored_crc = buf.get(HANDLES_LEN + 8..).and_then(decode_fixed32);
        if stored_crc.map(unmask_crc) != Some(crc32c(body)) {
            return Err(corrupt("footer checksum mismatch"));
        }
        let checksum_base = buf.get(HANDLES_LEN..).and_then(decode_fixed32).unwrap_or(0);
        let format_version = buf
            .get(HANDLES_LEN + 4..)
            .and_then(decode_fixed32)
            .unwrap_or(0);
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&format_version) {
            return Err(Error::NotSupported(format!(
                "{file}: SST format version {format_version} (this build reads versions \
                 {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION})"
            )));
        }
        let mut handles = buf.get(..HANDLES_LEN).unwrap_or(&[]);
        let metaindex = BlockHandle::decode_from(&mut handles)
            .ok_or_else(|| corrupt("bad metaindex handle in footer"))?;
        let index = BlockHandle::decode_from(&mut handles)
            .ok_or_else(|| corrupt("bad index handle in footer"))?;
        if handles.iter().any(|&b| b != 0) {
            return Err(corrupt("non-zero footer padding"));
        }
        Ok(Footer {
            metaindex,
            index,
            checksum_base,
            format_version,
        })
    }
}

#[cfg(test)]
mod tests;
