//! The real file system: `std::fs` plus `pread`, `fdatasync` and `flock`.
//!
//! Writable files buffer up to `WRITE_BUFFER` bytes in process; `flush` issues
//! the `write(2)`. A file opened by `reuse_writable` keeps its old bytes
//! after the new ones until `finish_appends` truncates it to what was
//! appended. `range_sync` is `sync_file_range(SYNC_FILE_RANGE_WRITE)` on
//! Linux and nothing elsewhere; `invalidate_cache` is
//! `posix_fadvise(DONTNEED)`. Thread safety: readers are `Sync` (positional
//! reads). Files opened with `FileOptions::direct` are `direct.rs`'s
//! (`O_DIRECT`, aligned buffers). `link` is `link(2)`, and a synced copy
//! where the names are on different file systems (EXDEV).

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    AccessPattern, FileLock, FileOptions, FileSystem, LinkKind, RandomAccessFile, SequentialFile,
    WritableFile,
};
use crate::error::{Error, Result};

const WRITE_BUFFER: usize = 64 * 1024;

/// POSIX implementation of [`FileSystem`].
#[derive(Debug, Default, Clone)]
pub struct PosixFileSystem {}

impl PosixFileSystem {
    /// Checks that the file system holding `dir` takes direct IO
    /// (`O_DIRECT`): writes, reads back and removes a probe file there. An
    /// error says why not (EINVAL from a file system without it, or a
    /// platform without `O_DIRECT`).
    pub fn probe_direct_io(dir: &Path) -> Result<()> {
        super::direct::probe(dir)
    }
}

struct PosixWritable {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    len: u64,
    /// Opened over an old file (`reuse_writable`): `finish_appends`
    /// truncates its stale tail.
    reused: bool,
}

impl PosixWritable {
    fn write_out(&mut self) -> Result<()> {
        if !self.buf.is_empty() {
            self.file
                .write_all(&self.buf)
                .map_err(|e| Error::io_path("write", &self.path, e))?;
            self.buf.clear();
        }
        Ok(())
    }
}

impl WritableFile for PosixWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.len += data.len() as u64;
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.write_out()?;
            if data.len() >= WRITE_BUFFER {
                return self
                    .file
                    .write_all(data)
                    .map_err(|e| Error::io_path("write", &self.path, e));
            }
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.write_out()
    }

    fn sync(&mut self) -> Result<()> {
        self.write_out()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io_path("fdatasync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn finish_appends(&mut self) -> Result<()> {
        self.write_out()?;
        if self.reused {
            self.file
                .set_len(self.len)
                .map_err(|e| Error::io_path("ftruncate", &self.path, e))?;
        }
        Ok(())
    }

    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        super::range_sync::range_sync(&self.file, &self.path, offset, len)
    }
}

impl Drop for PosixWritable {
    fn drop(&mut self) {
        // Best effort: whoever needed durability called sync and saw errors.
        let _ = self.write_out();
    }
}

struct PosixRandom {
    path: PathBuf,
    file: File,
    len: u64,
}

impl RandomAccessFile for PosixRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.file
            .read_exact_at(buf, offset)
            .map_err(|e| Error::io(format!("read {} at {offset}", self.path.display()), e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn advise(&self, pattern: AccessPattern) {
        let advice = match pattern {
            AccessPattern::Random => libc::POSIX_FADV_RANDOM,
            AccessPattern::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        };
        // SAFETY: `posix_fadvise` only records a hint for the open
        // descriptor we own; a failure (e.g. a file system without it)
        // changes nothing and is ignored, as the trait allows.
        unsafe {
            libc::posix_fadvise(self.file.as_raw_fd(), 0, 0, advice);
        }
    }

    fn invalidate_cache(&self, offset: u64, len: u64) {
        let (Ok(off), Ok(n)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
            return;
        };
        // SAFETY: as in `advise`: a hint on a descriptor we own, result
        // ignored.
        unsafe {
            libc::posix_fadvise(self.file.as_raw_fd(), off, n, libc::POSIX_FADV_DONTNEED);
        }
    }
}

struct PosixSequential {
    path: PathBuf,
    file: File,
}

impl SequentialFile for PosixSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.file
            .read(buf)
            .map_err(|e| Error::io_path("read", &self.path, e))
    }
}

struct PosixLock {
    _file: File,
}

impl FileLock for PosixLock {}

impl FileSystem for PosixFileSystem {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io_path("create", path, e))?;
        Ok(Box::new(PosixWritable {
            path: path.to_path_buf(),
            file,
            buf: Vec::with_capacity(WRITE_BUFFER),
            len: 0,
            reused: false,
        }))
    }

    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        self.rename(old, new)?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(new)
            .map_err(|e| Error::io_path("open for reuse", new, e))?;
        #[cfg(target_os = "linux")]
        if mapped {
            let f = file
                .try_clone()
                .map_err(|e| Error::io_path("dup", new, e))?;
            if let Ok(w) = super::mmap_writable::MmapWritable::reuse(new, f) {
                return Ok(Box::new(w));
            }
        }
        let _ = mapped;
        Ok(Box::new(PosixWritable {
            path: new.to_path_buf(),
            file,
            buf: Vec::with_capacity(WRITE_BUFFER),
            len: 0,
            reused: true,
        }))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let file = File::open(path).map_err(|e| Error::io_path("open", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io_path("stat", path, e))?
            .len();
        Ok(Arc::new(PosixRandom {
            path: path.to_path_buf(),
            file,
            len,
        }))
    }

    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        if opts.direct {
            return Ok(Box::new(super::direct::create(path)?));
        }
        self.create(path)
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if opts.direct {
            return Ok(Arc::new(super::direct::open_random(path)?));
        }
        self.open_random(path)
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let file = File::open(path).map_err(|e| Error::io_path("open", path, e))?;
        Ok(Box::new(PosixSequential {
            path: path.to_path_buf(),
            file,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        fs::rename(from, to).map_err(|e| Error::io_path("rename", from, e))
    }

    /// `link(2)`; across file systems (EXDEV) a synced copy.
    fn link(&self, from: &Path, to: &Path) -> Result<LinkKind> {
        match fs::hard_link(from, to) {
            Ok(()) => Ok(LinkKind::HardLink),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                if to.exists() {
                    return Err(Error::io_path(
                        "link",
                        to,
                        std::io::Error::from(std::io::ErrorKind::AlreadyExists),
                    ));
                }
                self.copy_file(from, to, None)?;
                Ok(LinkKind::Copied)
            }
            Err(e) => Err(Error::io_path("link", from, e)),
        }
    }

    fn remove(&self, path: &Path) -> Result<()> {
        fs::remove_file(path).map_err(|e| Error::io_path("remove", path, e))
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        fs::remove_dir(dir).map_err(|e| Error::io_path("rmdir", dir, e))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| Error::io_path("list", dir, e))? {
            let entry = entry.map_err(|e| Error::io_path("list", dir, e))?;
            if let Some(name) = entry.file_name().to_str() {
                out.push(name.to_string());
            }
        }
        Ok(out)
    }

    #[cfg(target_os = "linux")]
    fn create_mapped(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io_path("create", path, e))?;
        match super::mmap_writable::MmapWritable::new(path, file) {
            Ok(w) => Ok(Box::new(w)),
            // No fallocate here (or no space for a window): write(2) it is.
            Err(_) => self.create(path),
        }
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| Error::io_path("mkdir", dir, e))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let d = File::open(dir).map_err(|e| Error::io_path("open dir", dir, e))?;
        d.sync_all()
            .map_err(|e| Error::io_path("fsync dir", dir, e))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        Ok(fs::metadata(path)
            .map_err(|e| Error::io_path("stat", path, e))?
            .len())
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io_path("open lock", path, e))?;
        // SAFETY: flock on a valid, owned file descriptor; no memory is touched.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Error::Locked(format!(
                "{} is held by another process or handle ({e})",
                path.display()
            )));
        }
        Ok(Box::new(PosixLock { _file: file }))
    }

    fn max_request_bytes(&self, dir: &Path) -> Option<usize> {
        device_max_request(dir)
    }
}

/// `queue/max_sectors_kb` of the block device holding `dir`, in bytes: from
/// `/sys/dev/block/MAJOR:MINOR`, or its parent for a partition. `None` for
/// a file system without a block device (tmpfs, overlay) or without sysfs.
fn device_max_request(dir: &Path) -> Option<usize> {
    use std::os::unix::fs::MetadataExt;
    let dev = fs::metadata(dir).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let node = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let read = |p: PathBuf| -> Option<usize> {
        let kb: usize = fs::read_to_string(p).ok()?.trim().parse().ok()?;
        (kb > 0).then(|| kb.saturating_mul(1024))
    };
    read(node.join("queue/max_sectors_kb")).or_else(|| read(node.join("../queue/max_sectors_kb")))
}

#[cfg(test)]
mod tests;
