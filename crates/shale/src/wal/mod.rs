//! The log format used by both the WAL and the MANIFEST: LevelDB's log
//! format (32 KiB blocks, records fragmented into FULL/FIRST/MIDDLE/LAST
//! physical records, masked CRC32C) with the checksum bound to the log
//! number. Byte by byte in `docs/format/wal.md`.
//!
//! - [`LogWriter`] appends records (`writer.rs`);
//! - [`LogReader`] reads them back and tells a clean end from a torn tail
//!   from corruption (`reader.rs`);
//! - [`replay`] applies a `WalRecoveryMode` to what the reader reports
//!   (`recovery.rs`).
//!
//! Thread safety: writers and readers are single-owner (`&mut self`).

mod format;
mod reader;
mod recovery;
mod writer;

#[cfg(test)]
mod test_util;
#[cfg(test)]
mod tests;

pub use recovery::WalRecoveryMode;
pub(crate) use {
    format::{PredecessorWal, SeqTime, FAMILY_TYPE, INGESTED_TYPE, TIME_TYPE, UNLOGGED_TYPE},
    reader::{LogReader, Mark, ReadOutcome},
    recovery::replay,
    writer::LogWriter,
};

/// Size of a log block.
///
/// FROZEN: on-disk (docs/format/wal.md).
#[cfg(any(test, feature = "testing"))]
pub(crate) const BLOCK_SIZE: usize = format::BLOCK_SIZE;

/// Size of a physical record header: masked CRC32C (4) + length (2) + type (1).
///
/// FROZEN: on-disk (docs/format/wal.md).
#[cfg(any(test, feature = "testing"))]
pub(crate) const HEADER_LEN: usize = format::HEADER_LEN;
