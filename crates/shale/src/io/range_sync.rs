//! [`RangeSyncer`]: RocksDB's `bytes_per_sync` / `wal_bytes_per_sync`. Wraps a
//! [`WritableFile`] and, each time at least `bytes_per_sync` more bytes
//! were appended, asks the OS to start writing back the range appended
//! since the last request ([`WritableFile::range_sync`], Linux
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so dirty pages leave the page
//! cache smoothly instead of in one burst at `sync` (or whenever the
//! kernel's dirty limits hit, stalling every writer of the machine).
//!
//! The rule is RocksDB's `WritableFileWriter::Flush`: the last
//! [`NOT_SYNCED`] (1 MiB) bytes are never requested (pages still being
//! written would be written back twice, and some kernels block a write to
//! a page under writeback), and requests end on a [`ALIGN`] (4 KiB)
//! boundary. So with `len` bytes appended, the next request covers
//! `[synced_to, floor4k(len - 1 MiB))` once that is at least
//! `bytes_per_sync` long.
//!
//! Requires: the wrapped file hands bytes to the OS within `NOT_SYNCED`
//! bytes of appending them (posix buffers 64 KiB; a mapped file at once),
//! so every requested byte already reached the OS. A failed request is
//! returned (the caller treats it as a write error, as RocksDB does).
//!
//! Durability is unchanged: only `sync` makes bytes durable.
//! Thread safety: owned by one writer (`&mut self`).

use crate::error::Result;
use crate::fs::WritableFile;

use super::append_hook::{AppendHook, Hooked};

/// Bytes at the end of the file never requested (RocksDB's
/// `kBytesNotSyncRange`).
pub(crate) const NOT_SYNCED: u64 = 1 << 20;

/// Requests end on this boundary (RocksDB's `kBytesAlignWhenSync`).
pub(crate) const ALIGN: u64 = 4096;

/// See the module comment.
pub(crate) struct RangeSyncer {
    bytes_per_sync: u64,
    /// Everything before this offset was requested.
    synced_to: u64,
}

impl RangeSyncer {
    /// Wraps `inner`; `bytes_per_sync` 0 returns `inner` itself.
    pub(crate) fn wrap(inner: Box<dyn WritableFile>, bytes_per_sync: u64) -> Box<dyn WritableFile> {
        if bytes_per_sync == 0 {
            return inner;
        }
        let syncer = RangeSyncer {
            synced_to: inner.len(),
            bytes_per_sync,
        };
        Hooked::boxed(inner, syncer)
    }
}

/// After each append, requests writeback of what is due.
impl AppendHook for RangeSyncer {
    fn after(&mut self, file: &mut dyn WritableFile) -> Result<()> {
        let len = file.len();
        if len <= NOT_SYNCED {
            return Ok(());
        }
        let to = (len - NOT_SYNCED) / ALIGN * ALIGN;
        if to > self.synced_to && to - self.synced_to >= self.bytes_per_sync {
            let from = self.synced_to;
            self.synced_to = to;
            file.range_sync(from, to - from)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
