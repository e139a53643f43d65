//! [`WalReader`]: the write batches of one WAL, decoded by the engine's own
//! log reader and batch decoder.
//!
//! Each logical record is one batch: its first sequence number, its count,
//! and its records (family, kind, key, value). A damaged stretch of the log
//! is yielded as one `Corruption` error naming the file and the offset of
//! its first byte; reading then resumes after it (as the engine's
//! `SkipAnyCorruptedRecords` recovery does), so a dump shows everything
//! readable. A batch that does not decode is `Corruption` at the record's
//! offset. A log ending inside a record (the writer died mid-write) ends
//! cleanly and is reported by [`WalReader::torn_tail`].

use std::path::Path;

use crate::base::expiry::split_expiring;
use crate::base::ValueKind;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::fs::{default_fs, FileSystem};
use crate::version::filename::FileType;
use crate::wal::{LogReader, ReadOutcome};

use super::keys::EntryKind;

/// One write batch of a WAL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalBatch {
    /// Byte offset of the record in the WAL.
    pub offset: u64,
    /// Sequence number of the first record; record `i` has `sequence + i`.
    pub sequence: u64,
    /// The records, in order.
    pub entries: Vec<WalEntry>,
}

/// One record of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalEntry {
    /// Column family id (0 = default).
    pub cf: u32,
    /// What the record does.
    pub kind: EntryKind,
    /// The key (a range delete's start).
    pub key: Vec<u8>,
    /// The value (a merge operand; a range delete's exclusive end; an
    /// expiring put's value without the expiry); empty for deletes.
    pub value: Vec<u8>,
    /// An expiring put's expiry (Unix seconds).
    pub expiry: Option<u64>,
}

/// Reads the batches of one WAL in order. See the module comment.
pub struct WalReader {
    reader: LogReader,
    name: String,
    buf: Vec<u8>,
    done: bool,
    torn_tail: Option<u64>,
}

impl WalReader {
    /// Opens `path`, whose name (`NNNNNN.log`) gives the number that seeds
    /// its checksums.
    pub fn open(path: &Path) -> Result<WalReader> {
        let number = super::file_number(path, FileType::Log)?;
        Self::open_numbered(&*default_fs(), path, number)
    }

    /// Opens `path` as WAL number `number`.
    pub fn open_numbered(fs: &dyn FileSystem, path: &Path, number: u64) -> Result<WalReader> {
        let name = path.display().to_string();
        Ok(WalReader {
            reader: LogReader::new(fs.open_sequential(path)?, name.clone(), number),
            name,
            buf: Vec::new(),
            done: false,
            torn_tail: None,
        })
    }

    /// The next batch; `Ok(None)` at the end. A `Corruption` error reports
    /// a damaged stretch or batch; the next call continues after it. An IO
    /// error ends the reader.
    pub fn next_batch(&mut self) -> Result<Option<WalBatch>> {
        if self.done {
            return Ok(None);
        }
        let outcome = match self.reader.read_record(&mut self.buf) {
            Ok(o) => o,
            Err(e) => {
                self.done = true;
                return Err(e);
            }
        };
        match outcome {
            ReadOutcome::Record { offset } => {
                decode_batch(std::mem::take(&mut self.buf), &self.name, offset).map(Some)
            }
            ReadOutcome::Eof => {
                self.done = true;
                Ok(None)
            }
            ReadOutcome::TornTail { offset } => {
                self.done = true;
                self.torn_tail = Some(offset);
                Ok(None)
            }
            ReadOutcome::Corrupt {
                offset,
                what,
                dropped_bytes,
            } => Err(Error::corruption(
                self.name.as_str(),
                offset,
                format!("{what} ({dropped_bytes} bytes skipped)"),
            )),
        }
    }

    /// Where the file ends inside a record, once the batches are read.
    pub fn torn_tail(&self) -> Option<u64> {
        self.torn_tail
    }
}

impl Iterator for WalReader {
    type Item = Result<WalBatch>;
    fn next(&mut self) -> Option<Result<WalBatch>> {
        self.next_batch().transpose()
    }
}

/// Decodes the batch in record `data` at `offset` of `file`.
pub(super) fn decode_batch(data: Vec<u8>, file: &str, offset: u64) -> Result<WalBatch> {
    let b = WriteBatch::from_data(data).map_err(|e| relocate(e, file, offset))?;
    b.validate(file, offset)?;
    let mut entries = Vec::with_capacity(b.count().min(1 << 16) as usize);
    for e in b.iter() {
        let e = e.map_err(|e| relocate(e, file, offset))?;
        let (value, expiry) = if e.kind == ValueKind::ValueWithExpiry {
            let (v, x) = split_expiring(e.value).ok_or_else(|| {
                Error::corruption(file, offset, "expiring put shorter than its expiry")
            })?;
            (v, Some(x))
        } else {
            (e.value, None)
        };
        entries.push(WalEntry {
            cf: e.cf,
            kind: EntryKind::from_kind(e.kind),
            key: e.key.to_vec(),
            value: value.to_vec(),
            expiry,
        });
    }
    Ok(WalBatch {
        offset,
        sequence: b.sequence(),
        entries,
    })
}

/// A batch decoding error moved to the log record holding the batch.
fn relocate(e: Error, file: &str, offset: u64) -> Error {
    match e {
        Error::Corruption {
            offset: inner,
            what,
            ..
        } => Error::corruption(
            file,
            offset,
            format!("write batch: {what} (at byte {inner} of the batch)"),
        ),
        other => other,
    }
}
