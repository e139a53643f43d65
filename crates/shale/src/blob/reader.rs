//! Reads values out of one blob file, through the [`BlobIndex`] an SST
//! stored for them (layout in `blob/format.rs` and `docs/format/blob.md`).
//!
//! `open` checks the header (and that it names this file's number) and the
//! footer, and that the footer's record bytes fill the file exactly between
//! them. A `read` is one positioned read of exactly the record the index
//! points to, after checking that the record lies inside the records
//! region `[HEADER_LEN, file_len - FOOTER_LEN)`: a corrupt index can never
//! make the reader allocate or read beyond the file. The record must then
//! pass its checksum (bound to file number and offset) and agree with the
//! index and the user key before its value is decompressed and returned.
//!
//! Invariant: a read returns exactly the value that was added for that key
//! in this file, or `Error::Corruption` naming the blob file and the record
//! offset (or an IO error from the file system). It never panics.
//!
//! Thread-safety: `BlobFileReader` is `Send + Sync` and immutable after
//! `open`; concurrent reads share nothing but the file.

use std::sync::Arc;

use crate::blob::format::{
    decode_footer, decode_header, decode_record_header, is_known_compression, record_crc, Footer,
    RecordHeader, FOOTER_LEN, HEADER_LEN, RECORD_HEADER_LEN,
};
use crate::blob::index::BlobIndex;
use crate::blob::recycle;
use crate::codec::unmask_crc;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::sst::compression::{decompress, TYPE_NONE};

/// The largest record a thread's read buffer keeps between reads
/// ([`BlobFileReader::read_shared`]); larger ones free it after the read.
const SCRATCH_MAX: usize = 256 << 10;

/// An open blob file.
pub(crate) struct BlobFileReader {
    file: Arc<dyn RandomAccessFile>,
    name: String,
    number: u64,
    /// Offset of the footer: the end of the records region.
    records_end: u64,
    footer: Footer,
}

impl BlobFileReader {
    /// Reads and checks header and footer. `file_name` is used in errors
    /// (e.g. `000012.blob`); `number` is the number in it, which the header
    /// must hold.
    pub(crate) fn open(
        file: Arc<dyn RandomAccessFile>,
        file_name: &str,
        number: u64,
    ) -> Result<BlobFileReader> {
        let len = file.len();
        let min = (HEADER_LEN + FOOTER_LEN) as u64;
        if len < min {
            return Err(Error::corruption(
                file_name,
                0,
                format!("blob file of {len} bytes is shorter than its header and footer ({min})"),
            ));
        }
        let mut hb = [0u8; HEADER_LEN];
        file.read_exact_at(0, &mut hb)?;
        let header = decode_header(&hb, file_name)?;
        if header.file_number != number {
            return Err(Error::corruption(
                file_name,
                0,
                format!(
                    "blob file header names file {}, not {number} (file renamed or copied)",
                    header.file_number
                ),
            ));
        }
        let records_end = len - FOOTER_LEN as u64;
        let mut fb = [0u8; FOOTER_LEN];
        file.read_exact_at(records_end, &mut fb)?;
        let footer = decode_footer(&fb, file_name, records_end)?;
        let region = records_end - HEADER_LEN as u64;
        if footer.record_bytes != region {
            return Err(Error::corruption(
                file_name,
                records_end,
                format!(
                    "blob file footer counts {} record bytes, the file holds {region}",
                    footer.record_bytes
                ),
            ));
        }
        if footer.record_count > region / RECORD_HEADER_LEN as u64 {
            return Err(Error::corruption(
                file_name,
                records_end,
                format!(
                    "blob file footer counts {} records in {region} bytes",
                    footer.record_count
                ),
            ));
        }
        Ok(BlobFileReader {
            file,
            name: file_name.to_string(),
            number,
            records_end,
            footer,
        })
    }

    /// The number in the file's name.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }

    /// The file's name, as used in errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Number of records, from the footer.
    pub(crate) fn record_count(&self) -> u64 {
        self.footer.record_count
    }

    /// Sum of whole record lengths, from the footer.
    pub(crate) fn total_bytes(&self) -> u64 {
        self.footer.record_bytes
    }

    /// Reads the record `idx` points to for `user_key` with one
    /// `read_exact_at` of `idx.record_len(user_key.len())` bytes, after
    /// checking that the record lies inside the records region; checks the
    /// checksum, that key length, value length and compression match the
    /// index and that the stored key is `user_key`; returns the
    /// (decompressed) value. Every failure is `Corruption` naming the blob
    /// file and the record offset.
    ///
    /// The record is read into a buffer of the calling thread (kept for
    /// records up to [`SCRATCH_MAX`] bytes) and the value copied once into
    /// its `Arc`: at most one allocation per blob read (it was two, with a
    /// zeroed buffer and two more copies; the blob-read profile of
    /// 2026-11-28 in docs/PERFORMANCE.md), none when this thread kept an
    /// evicted blob of the same length (`recycle`).
    pub(crate) fn read_shared(&self, idx: &BlobIndex, user_key: &[u8]) -> Result<Arc<[u8]>> {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let shared = |buf: &mut Vec<u8>| -> Result<Arc<[u8]>> {
            let (compression, start) = self.read_record(idx, user_key, buf)?;
            if compression == TYPE_NONE {
                Ok(recycle::shared_copy(&buf[start..]))
            } else {
                let value = decompress(compression, &buf[start..], &self.name, idx.offset)?;
                Ok(recycle::shared_copy(&value))
            }
        };
        SCRATCH.with(|s| match s.try_borrow_mut() {
            Ok(mut buf) => {
                let v = shared(&mut buf);
                if buf.capacity() > SCRATCH_MAX {
                    *buf = Vec::new();
                }
                v
            }
            // Not reached (nothing in `shared` reads a blob), but a nested
            // read must not panic.
            Err(_) => shared(&mut Vec::new()),
        })
    }

    /// Reads and checks the record `idx` points to into `buf` (resized to
    /// the record's length): (its compression, where its value starts).
    fn read_record(
        &self,
        idx: &BlobIndex,
        user_key: &[u8],
        buf: &mut Vec<u8>,
    ) -> Result<(u8, usize)> {
        let corrupt = |what: String| Error::corruption(&self.name, idx.offset, what);
        if idx.file_number != self.number {
            return Err(corrupt(format!(
                "blob index names blob file {}, read from file {}",
                idx.file_number, self.number
            )));
        }
        let len = idx.record_len(user_key.len());
        let inside = idx.offset >= HEADER_LEN as u64
            && idx
                .offset
                .checked_add(len)
                .is_some_and(|end| end <= self.records_end);
        let Some(n) = usize::try_from(len).ok().filter(|_| inside) else {
            return Err(corrupt(format!(
                "blob index points at a record of {len} bytes outside the records [{HEADER_LEN}, {})",
                self.records_end
            )));
        };
        buf.resize(n, 0);
        self.file.read_exact_at(idx.offset, buf)?;
        check_record(buf, self.number, idx.offset, idx, user_key, &self.name)
    }

    /// Reads up to `len` bytes of the records region from `offset` into
    /// `buf` (cleared first; fewer where the records end): a relocating
    /// compaction's readahead. The records in it are checked when decoded
    /// ([`decode_record`]); an `offset` outside the records is
    /// `Corruption`.
    pub(crate) fn read_ahead(&self, offset: u64, len: u64, buf: &mut Vec<u8>) -> Result<()> {
        if offset < HEADER_LEN as u64 || offset >= self.records_end {
            return Err(Error::corruption(
                &self.name,
                offset,
                format!(
                    "blob read outside the records [{HEADER_LEN}, {})",
                    self.records_end
                ),
            ));
        }
        let n = len.min(self.records_end - offset) as usize;
        buf.clear();
        buf.resize(n, 0);
        self.file.read_exact_at(offset, buf)
    }

    /// Walks every record from `HEADER_LEN` to the footer, checking each
    /// checksum and decompressing each compressed value; checks the count
    /// and bytes against the footer. Returns the number of records.
    pub(crate) fn verify_all(&self) -> Result<u64> {
        let mut offset = HEADER_LEN as u64;
        let mut count = 0u64;
        let mut buf = Vec::new();
        while offset < self.records_end {
            let corrupt = |what: String| Error::corruption(&self.name, offset, what);
            let left = self.records_end - offset;
            let mut hb = [0u8; RECORD_HEADER_LEN];
            if left < RECORD_HEADER_LEN as u64 {
                return Err(corrupt(format!(
                    "{left} bytes before the footer, too short for a record header"
                )));
            }
            self.file.read_exact_at(offset, &mut hb)?;
            let len = decode_record_header(&hb).map_or(0, |(_, h)| h.record_len());
            let Some(n) = usize::try_from(len).ok().filter(|_| len <= left) else {
                return Err(corrupt(format!(
                    "record of {len} bytes crosses the footer at {}",
                    self.records_end
                )));
            };
            buf.clear();
            buf.resize(n, 0);
            self.file.read_exact_at(offset, &mut buf)?;
            let (h, _key, value) = parse_record(&buf, self.number, offset, &self.name)?;
            if h.compression != TYPE_NONE {
                decompress(h.compression, value, &self.name, offset)?;
            }
            count += 1;
            offset += len;
        }
        let footer = |what: String| Error::corruption(&self.name, self.records_end, what);
        if count != self.footer.record_count {
            return Err(footer(format!(
                "blob file footer counts {} records, the file holds {count}",
                self.footer.record_count
            )));
        }
        // `open` checked that the footer's bytes fill the records region,
        // and the walk ended exactly at its end.
        if offset - HEADER_LEN as u64 != self.footer.record_bytes {
            return Err(footer(format!(
                "blob file footer counts {} record bytes, the records hold {}",
                self.footer.record_bytes,
                offset - HEADER_LEN as u64
            )));
        }
        Ok(count)
    }
}

/// Pure record decoder used by `read` and by the fuzz target: `buf` holds
/// exactly the record bytes read at `offset` of blob file `file_number`.
/// Checks the record as [`BlobFileReader::read`] describes and returns the
/// (decompressed) value; errors are `Corruption` naming `file_name` and
/// `offset`.
pub(crate) fn decode_record(
    buf: &[u8],
    file_number: u64,
    offset: u64,
    idx: &BlobIndex,
    user_key: &[u8],
    file_name: &str,
) -> Result<Vec<u8>> {
    let (compression, start) = check_record(buf, file_number, offset, idx, user_key, file_name)?;
    let value = buf.get(start..).unwrap_or_default();
    if compression == TYPE_NONE {
        Ok(value.to_vec())
    } else {
        decompress(compression, value, file_name, offset)
    }
}

/// Checks a whole record (as [`parse_record`]) and that it is the one `idx`
/// points to for `user_key`. Returns the compression type and where the
/// stored value starts in `buf`.
fn check_record(
    buf: &[u8],
    file_number: u64,
    offset: u64,
    idx: &BlobIndex,
    user_key: &[u8],
    file_name: &str,
) -> Result<(u8, usize)> {
    let (h, key, _) = parse_record(buf, file_number, offset, file_name)?;
    let corrupt = |what: String| Error::corruption(file_name, offset, what);
    if key.len() != user_key.len()
        || u64::from(h.value_len) != idx.size
        || h.compression != idx.compression
    {
        return Err(corrupt(format!(
            "record (key {} bytes, value {} bytes, compression {}) is not the one its blob \
             index describes (key {} bytes, value {} bytes, compression {})",
            key.len(),
            h.value_len,
            h.compression,
            user_key.len(),
            idx.size,
            idx.compression
        )));
    }
    if key != user_key {
        return Err(corrupt(
            "record holds another key than the one its blob index was read for".into(),
        ));
    }
    Ok((h.compression, RECORD_HEADER_LEN + key.len()))
}

/// Splits a whole record into header, key and stored value, checking that
/// its lengths fill `buf` exactly, its checksum (bound to `file_number` and
/// `offset`) and its compression byte.
fn parse_record<'a>(
    buf: &'a [u8],
    file_number: u64,
    offset: u64,
    file_name: &str,
) -> Result<(RecordHeader, &'a [u8], &'a [u8])> {
    let corrupt = |what: String| Error::corruption(file_name, offset, what);
    let (stored_crc, h) = decode_record_header(buf).ok_or_else(|| {
        corrupt(format!(
            "blob record of {} bytes is shorter than its header",
            buf.len()
        ))
    })?;
    if h.record_len() != buf.len() as u64 {
        return Err(corrupt(format!(
            "blob record header gives {} bytes (key {}, value {}), {} were read for it",
            h.record_len(),
            h.key_len,
            h.value_len,
            buf.len()
        )));
    }
    // The length check makes both splits fit.
    let body = buf.get(RECORD_HEADER_LEN..).unwrap_or_default();
    let (key, value) = body.split_at((h.key_len as usize).min(body.len()));
    let computed = record_crc(file_number, offset, &h, key, value);
    if stored_crc != computed {
        return Err(corrupt(format!(
            "blob record checksum mismatch (stored {:#010x}, computed {:#010x}; record \
             damaged, or not written at this offset of this file)",
            unmask_crc(stored_crc),
            unmask_crc(computed)
        )));
    }
    if !is_known_compression(h.compression) {
        return Err(corrupt(format!(
            "unknown compression type {} in blob record",
            h.compression
        )));
    }
    Ok((h, key, value))
}
