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
mod tests {
    use std::path::Path;

    use super::*;
    use crate::fs::{FileSystem, MemFileSystem};

    /// The requests through the seam: contiguous from 0, 4 KiB aligned, each
    /// at least `bytes_per_sync` long, never within the last 1 MiB, and
    /// caught up to within `bytes_per_sync + 1 MiB + 4 KiB` of the end.
    #[test]
    fn requests_follow_rocksdb_cadence() {
        for (bps, chunk) in [
            (1u64 << 20, 1000usize),
            (256 << 10, 70_000),
            (64 << 10, 4096),
        ] {
            let fs = MemFileSystem::new();
            fs.create_dir_all(Path::new("/d")).unwrap();
            let p = Path::new("/d/f");
            let mut w = RangeSyncer::wrap(fs.create(p).unwrap(), bps);
            let total = 9u64 << 20;
            let data = vec![7u8; chunk];
            while w.len() < total {
                w.append(&data).unwrap();
                let calls = fs.range_syncs();
                let end = calls.last().map_or(0, |c| c.1 + c.2);
                assert!(
                    end + NOT_SYNCED <= w.len().max(NOT_SYNCED),
                    "{end} {}",
                    w.len()
                );
                assert!(
                    w.len() < end + bps + NOT_SYNCED + ALIGN + chunk as u64,
                    "fell behind: {end} of {}",
                    w.len()
                );
            }
            let calls = fs.range_syncs();
            let mut next = 0;
            for (path, off, len) in &calls {
                assert_eq!(path, p);
                assert_eq!(*off, next, "contiguous");
                assert_eq!((off + len) % ALIGN, 0, "aligned");
                assert!(*len >= bps, "{len} < {bps}");
                next = off + len;
            }
            let n = calls.len() as u64;
            assert!(
                n >= (total - NOT_SYNCED) / (bps + chunk as u64 + ALIGN),
                "{n} calls for {bps}"
            );
        }
    }

    #[test]
    fn zero_means_off_and_small_files_never_ask() {
        let fs = MemFileSystem::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let mut w = RangeSyncer::wrap(fs.create(Path::new("/d/a")).unwrap(), 0);
        w.append(&vec![1u8; 3 << 20]).unwrap();
        let mut w = RangeSyncer::wrap(fs.create(Path::new("/d/b")).unwrap(), 1);
        w.append(&vec![1u8; 1 << 20]).unwrap();
        w.sync().unwrap();
        assert!(fs.range_syncs().is_empty());
        w.append(&[1u8; 4096]).unwrap();
        assert_eq!(
            fs.range_syncs(),
            vec![(Path::new("/d/b").to_path_buf(), 0, 4096)]
        );
    }

    /// On the real file system the call succeeds (Linux: the kernel accepts
    /// the range) and the bytes read back.
    #[test]
    fn posix_range_sync_is_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let fs = crate::fs::PosixFileSystem::default();
        let p = dir.path().join("f");
        let mut w = RangeSyncer::wrap(fs.create(&p).unwrap(), 64 << 10);
        for i in 0..40u8 {
            w.append(&vec![i; 64 << 10]).unwrap();
        }
        w.sync().unwrap();
        drop(w);
        let m = dir.path().join("m");
        let mut w = RangeSyncer::wrap(fs.create_mapped(&m).unwrap(), 64 << 10);
        for i in 0..40u8 {
            w.append(&vec![i; 64 << 10]).unwrap();
        }
        w.finish_appends().unwrap();
        w.sync().unwrap();
        drop(w);
        for path in [&p, &m] {
            let got = std::fs::read(path).unwrap();
            assert_eq!(got.len(), 40 << 16);
            assert!(got
                .chunks(64 << 10)
                .enumerate()
                .all(|(i, c)| c.iter().all(|&b| b == i as u8)));
        }
    }
}
