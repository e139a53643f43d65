//! Writes one blob file: the header, one record per value, and the footer
//! (layout in `blob/format.rs` and `docs/format/blob.md`).
//!
//! Each value is compressed with the file's compression and kept
//! uncompressed when that does not pay (the `sst::compression` rule); its
//! record is appended at once and [`BlobFileBuilder::add`] returns the
//! [`BlobIndex`] the caller stores in its SST. Records are appended back to
//! back, so the builder's byte count is the offset of the next record.
//!
//! Invariants: after the first failed write the builder is poisoned: every
//! later call returns that error (the file's tail is unknown, so no offset
//! handed out after it could be trusted). `finish` syncs the file before
//! it returns; `finish_unsynced` hands it to the OS, starts its writeback
//! and returns it for the caller to sync later. Either way the caller
//! syncs the file and then its directory entry before any MANIFEST edit
//! names it.
//!
//! Requires: `file` is new and empty (record checksums are bound to the
//! offsets counted from its first byte).
//!
//! Thread-safety: owned by one writer (flush or compaction job).

use crate::blob::format::{
    encode_footer, encode_header, encode_record_header, record_crc, Footer, Header, RecordHeader,
    FOOTER_LEN, HEADER_LEN,
};
use crate::blob::index::BlobIndex;
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::sst::compression::{Compressor, TYPE_NONE};
use crate::sst::Compression;

/// What a finished blob file holds (for the MANIFEST edit that adds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlobFileInfo {
    /// The number in the file's name.
    pub number: u64,
    /// Length of the file, header and footer included.
    pub file_size: u64,
    /// Number of records.
    pub count: u64,
    /// Sum of whole record lengths (header, key and stored value).
    pub bytes: u64,
}

/// Appends records to a new blob file.
pub(crate) struct BlobFileBuilder {
    file: Box<dyn WritableFile>,
    name: String,
    number: u64,
    compressor: Compressor,
    /// Bytes written so far: the offset of the next record.
    offset: u64,
    count: u64,
    /// Sum of whole record lengths.
    bytes: u64,
    /// Reused output of the compressor.
    compressed: Vec<u8>,
    /// The first write error; returned by every later call.
    error: Option<Error>,
}

impl BlobFileBuilder {
    /// Writes the header. `compression` is the file's
    /// `blob_compression_type`; `name` (e.g. `000012.blob`) is used in
    /// errors. `file` must be empty.
    pub(crate) fn new(
        mut file: Box<dyn WritableFile>,
        name: String,
        number: u64,
        cf: u32,
        compression: Compression,
    ) -> Result<BlobFileBuilder> {
        if !file.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "blob file {name} must be empty to be written ({} bytes)",
                file.len()
            )));
        }
        file.append(&encode_header(&Header {
            compression: compression.code(),
            column_family: cf,
            file_number: number,
        }))?;
        Ok(BlobFileBuilder {
            file,
            name,
            number,
            compressor: Compressor::new(compression),
            offset: HEADER_LEN as u64,
            count: 0,
            bytes: 0,
            compressed: Vec::new(),
            error: None,
        })
    }

    /// Appends one record (value compressed with the file's compression,
    /// kept uncompressed when the compressor says `TYPE_NONE`) and returns
    /// its index. A key or value longer than `u32::MAX` bytes is
    /// `InvalidArgument` (and writes nothing).
    pub(crate) fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<BlobIndex> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let too_long = |what: &str, n: usize| {
            Error::InvalidArgument(format!(
                "blob file {}: {what} of {n} bytes is longer than {} bytes",
                self.name,
                u32::MAX
            ))
        };
        let key_len = u32::try_from(user_key.len()).map_err(|_| too_long("key", user_key.len()))?;
        if u32::try_from(value.len()).is_err() {
            return Err(too_long("value", value.len()));
        }
        let compression = self.compressor.compress(value, &mut self.compressed);
        let stored: &[u8] = if compression == TYPE_NONE {
            value
        } else {
            &self.compressed
        };
        // The compressor keeps only output shorter than its input.
        let value_len = u32::try_from(stored.len()).map_err(|_| too_long("value", value.len()))?;
        let h = RecordHeader {
            key_len,
            value_len,
            compression,
        };
        let offset = self.offset;
        let crc = record_crc(self.number, offset, &h, user_key, stored);
        let res = self
            .file
            .append(&encode_record_header(crc, &h))
            .and_then(|()| self.file.append(user_key))
            .and_then(|()| self.file.append(stored));
        if let Err(e) = res {
            self.error = Some(e.clone());
            return Err(e);
        }
        let len = h.record_len();
        self.offset += len;
        self.bytes += len;
        self.count += 1;
        debug_assert_eq!(self.offset, self.file.len());
        Ok(BlobIndex {
            file_number: self.number,
            offset,
            size: u64::from(value_len),
            compression,
        })
    }

    /// Bytes written so far (header and records): the offset the next
    /// record will have.
    pub(crate) fn file_size(&self) -> u64 {
        self.offset
    }

    /// Records added so far.
    #[cfg(test)]
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The number in the file's name.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The file's name, as used in errors.
    #[cfg(test)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Writes the footer, syncs the file (`WritableFile::sync`) and returns
    /// what was written (tests and the fuzzing surface; jobs sync their
    /// blob files together, see `build::blob_output`).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn finish(self) -> Result<BlobFileInfo> {
        let (info, mut file) = self.finish_unsynced()?;
        file.sync()?;
        Ok(info)
    }

    /// Writes the footer, hands the file's bytes to the OS, asks it to
    /// start writing them back (`WritableFile::range_sync`: the writeback
    /// overlaps with the rest of the job instead of stalling it at a
    /// `sync` now) and returns what was written with the file, which the
    /// caller must `sync` before the file may be named in the MANIFEST.
    pub(crate) fn finish_unsynced(mut self) -> Result<(BlobFileInfo, Box<dyn WritableFile>)> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let footer = encode_footer(&Footer {
            record_count: self.count,
            record_bytes: self.bytes,
        });
        self.file.append(&footer)?;
        self.file.flush()?;
        let file_size = self.offset + FOOTER_LEN as u64;
        debug_assert_eq!(file_size, self.file.len());
        self.file.range_sync(0, file_size)?;
        Ok((
            BlobFileInfo {
                number: self.number,
                file_size,
                count: self.count,
                bytes: self.bytes,
            },
            self.file,
        ))
    }
}
