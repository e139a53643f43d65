//! The file-system seam's traits (see the `fs` module header for their
//! contract): [`FileSystem`], the files it opens ([`WritableFile`],
//! [`RandomAccessFile`], [`SequentialFile`]), the DB lock ([`FileLock`]),
//! and the options of an open ([`FileOptions`]).

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;

/// A file opened for appending.
pub trait WritableFile: Send {
    /// Appends `data` (may be buffered in process until `flush`).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Appends `parts` one after the other, as `append` of each in turn
    /// (the default), so a file may write them with one call (a
    /// memory-mapped file writes a large record with one `pwritev`; see
    /// `mmap_writable`). On error, any prefix of the bytes may have been
    /// appended, as with `append`.
    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        for p in parts {
            self.append(p)?;
        }
        Ok(())
    }
    /// Hands buffered data to the OS.
    fn flush(&mut self) -> Result<()>;
    /// Flushes and makes the data durable (fdatasync).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far (buffered or not).
    fn len(&self) -> u64;
    /// True when nothing was appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// No more appends will come: hands buffered data to the OS and
    /// releases what appending held (a memory-mapped file unmaps and cuts
    /// the space it reserved ahead). `sync` still works afterwards.
    fn finish_appends(&mut self) -> Result<()> {
        self.flush()
    }
    /// True when `append` alone hands the bytes to the OS (a memory-mapped
    /// file): `flush` has nothing left to do.
    fn appends_reach_os(&self) -> bool {
        false
    }
    /// Asks the OS to start writing back bytes `[offset, offset + len)`,
    /// already handed to it, without waiting (Linux:
    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)`), so writeback is spread
    /// over the file's life instead of one burst at `sync`. Durability is
    /// unchanged: only `sync` makes bytes durable. The default does nothing
    /// (also the posix answer off Linux). Used by `io::RangeSyncer`
    /// (`bytes_per_sync`, `wal_bytes_per_sync`).
    fn range_sync(&mut self, _offset: u64, _len: u64) -> Result<()> {
        Ok(())
    }
}

/// How a file is going to be read: a hint to the OS (`posix_fadvise`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessPattern {
    /// Reads at scattered offsets: the OS should not read ahead (an SST
    /// serving point reads; scans and compactions read ahead themselves).
    Random,
    /// Reads from start to end: the OS may read ahead aggressively.
    Sequential,
}

/// A file read at arbitrary offsets, shared between threads.
pub trait RandomAccessFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Size of the file when it was opened.
    fn len(&self) -> u64;
    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Tells the OS how the file will be read. Only a hint: a file system
    /// that cannot take it ignores it (the default), and a refusal is not
    /// an error.
    fn advise(&self, _pattern: AccessPattern) {}
    /// For a handle opened with `FileOptions::direct`: the alignment of
    /// offsets, lengths and buffer addresses that reach the device without
    /// a bounce copy. `None` (the default) for a buffered handle. Only an
    /// optimisation: every read works whatever its alignment, so a wrapper
    /// that does not forward this stays correct (but copies more).
    fn direct_alignment(&self) -> Option<usize> {
        None
    }
    /// Tells the OS that bytes `[offset, offset + len)` (`len` 0: to the
    /// end) will not be read again soon, so their cached pages may go
    /// (`posix_fadvise(POSIX_FADV_DONTNEED)`; clean pages only, and only
    /// whole cached folios inside the range: with large folios a partial
    /// range may drop nothing). A hint, as `advise`: the default ignores it.
    fn invalidate_cache(&self, _offset: u64, _len: u64) {}
}

/// How a file is opened (RocksDB's `FileOptions`): passed to
/// [`FileSystem::create_with`] and [`FileSystem::open_random_with`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileOptions {
    /// Bypass the OS page cache (`O_DIRECT`): RocksDB's `use_direct_reads`
    /// for a file opened for reading, `use_direct_writes` for one created.
    /// Default false.
    pub direct: bool,
}

impl FileOptions {
    /// Direct IO.
    pub const DIRECT: FileOptions = FileOptions { direct: true };
}

/// True for the error a file system gives when it refuses direct IO
/// (EINVAL at open: an `InvalidInput` IO error).
pub fn is_direct_io_refusal(e: &crate::error::Error) -> bool {
    matches!(
        e,
        crate::error::Error::Io {
            kind: std::io::ErrorKind::InvalidInput,
            ..
        }
    )
}

/// The refusal of a file system without direct IO (see [`FileOptions`]).
fn direct_io_unsupported(fs: &str, path: &Path) -> crate::error::Error {
    crate::error::Error::io_path(
        "open O_DIRECT",
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{fs} has no direct IO"),
        ),
    )
}

/// What [`FileSystem::link`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// A hard link: no bytes were written.
    HardLink,
    /// The bytes were copied (and synced): the names were on different
    /// file systems.
    Copied,
}

/// [`FileSystem::copy_file`]'s default: 1 MiB reads through
/// `open_sequential`, appended to a `create`d file, then `sync`.
pub(crate) fn copy_through<F: FileSystem + ?Sized>(
    fs: &F,
    from: &Path,
    to: &Path,
    len: Option<u64>,
) -> Result<u64> {
    copy_paced(fs, from, to, len, &mut |_| {})
}

/// `copy_through` calling `before_chunk(n)` before it reads each chunk of
/// `n` bytes (up to 1 MiB): where a caller paces the copy.
pub(crate) fn copy_paced<F: FileSystem + ?Sized>(
    fs: &F,
    from: &Path,
    to: &Path,
    len: Option<u64>,
    before_chunk: &mut dyn FnMut(usize),
) -> Result<u64> {
    let mut src = fs.open_sequential(from)?;
    let mut dst = fs.create(to)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut copied = 0u64;
    loop {
        let want = match len {
            Some(l) => {
                let rest = l - copied;
                if rest == 0 {
                    break;
                }
                usize::try_from(rest).map_or(buf.len(), |r| r.min(buf.len()))
            }
            None => buf.len(),
        };
        before_chunk(want);
        let n = src.read(&mut buf[..want])?;
        if n == 0 {
            if let Some(l) = len {
                return Err(crate::error::Error::io_path(
                    "copy",
                    from,
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        format!("{copied} bytes, {l} asked for"),
                    ),
                ));
            }
            break;
        }
        dst.append(&buf[..n])?;
        copied += n as u64;
    }
    dst.sync()?;
    Ok(copied)
}

/// A file read from start to end.
pub trait SequentialFile: Send {
    /// Reads up to `buf.len()` bytes; 0 means end of file.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize>;
}

/// A held lock on a DB directory; released on drop.
pub trait FileLock: Send + Sync {}

/// All file operations the engine performs.
pub trait FileSystem: Send + Sync {
    /// Creates (or truncates) a file for writing.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;

    /// Like `create`, for a file written through a shared memory mapping
    /// where the file system supports it (appends need no system call; see
    /// `mmap_writable`); file systems without it create a plain file.
    fn create_mapped(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path)
    }
    /// Renames the existing file `old` to `new` and opens it for writing
    /// from offset 0 *without truncating it* (RocksDB's
    /// `ReuseWritableFile`, for `recycle_log_file_num`): appends overwrite
    /// the old bytes in place, so blocks already allocated and written are
    /// reused, and the bytes after the new ones stay until
    /// `finish_appends` cuts the file to what was appended. `mapped` asks
    /// for a memory-mapped writer as `create_mapped`. The default renames
    /// and creates a new file (correct, without the benefit).
    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        self.rename(old, new)?;
        if mapped {
            self.create_mapped(new)
        } else {
            self.create(new)
        }
    }
    /// Opens a file for random reads.
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>>;

    /// `create` with [`FileOptions`]. The default serves buffered files
    /// with `create` and refuses `direct` (see the module docs): a file
    /// system with direct IO, and every wrapper, overrides it.
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        if opts.direct {
            return Err(direct_io_unsupported("this file system", path));
        }
        self.create(path)
    }

    /// `open_random` with [`FileOptions`]; the default is as for
    /// `create_with`.
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if opts.direct {
            return Err(direct_io_unsupported("this file system", path));
        }
        self.open_random(path)
    }
    /// Opens a file for sequential reads.
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>>;
    /// Reads a whole (small) file.
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        let mut f = self.open_sequential(path)?;
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&buf[..n]);
        }
    }
    /// Atomically renames `from` to `to`, replacing `to`. `from` may also
    /// be a directory (renamed with its contents; `to` must then not exist
    /// or be an empty directory).
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Gives the existing file `from` a second name `to`, which must not
    /// exist (an `AlreadyExists` IO error otherwise): a hard link, sharing
    /// the bytes. Like a creation, the new name is durable only after
    /// `sync_dir` of `to`'s directory. Where the two names cannot share
    /// an inode (different file systems: EXDEV) a file system may copy
    /// instead, syncing the copy ([`LinkKind::Copied`]); one that cannot
    /// do either fails.
    fn link(&self, from: &Path, to: &Path) -> Result<LinkKind>;
    /// Copies the first `len` bytes of `from` (all of it for `None`) into
    /// a new file `to` (replacing it) and syncs the copy; returns the bytes
    /// copied. A file shorter than `len` is an `UnexpectedEof` IO error.
    /// The default reads with `open_sequential` and writes with `create`,
    /// so a wrapper sees (and may count or fail) every step.
    fn copy_file(&self, from: &Path, to: &Path, len: Option<u64>) -> Result<u64> {
        copy_through(self, from, to, len)
    }
    /// Removes a file.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Names (not paths) of the entries of a directory.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Creates a directory and its parents.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Removes an empty directory (an `Io` error of kind
    /// `DirectoryNotEmpty` when it is not). `NotSupported` where the file
    /// system has no such call (the default): callers then leave the
    /// directory in place.
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        Err(crate::error::Error::NotSupported(format!(
            "remove_dir {}: this file system cannot remove directories",
            dir.display()
        )))
    }
    /// Makes creations, renames and removals in `dir` durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// True when the path exists.
    fn exists(&self, path: &Path) -> bool;
    /// Size of a file in bytes.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Takes an exclusive lock on `path` (creating it); fails with
    /// `Error::Locked` when another handle holds it.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// The largest read the device holding `dir` serves as one request
    /// (Linux: its `queue/max_sectors_kb`), if known. Compaction readahead
    /// never asks for more, so one logical read is one device request.
    fn max_request_bytes(&self, _dir: &Path) -> Option<usize> {
        None
    }
}
