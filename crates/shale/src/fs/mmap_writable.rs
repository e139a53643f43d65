//! A writable file written through a shared memory mapping: `append` copies
//! into mapped pages of the page cache, so the bytes belong to the OS (they
//! survive a crash of the process) without a `write(2)` per append. Used for
//! WAL files when `Options::wal_mmap_writes` is set (Linux only).
//!
//! The file is extended a window at a time with `fallocate` before the
//! window is mapped, so the blocks are reserved up front: a full disk is an
//! `Io` error from `append`, never a SIGBUS on a page fault. After a crash the
//! file ends in zeros (reserved, never written); the WAL reader takes a zero
//! tail as a clean end. `finish_appends` or dropping the writer unmaps and
//! truncates the file to the bytes appended.
//!
//! A recycled file (`MmapWritable::reuse`) is written the same way from
//! offset 0 over its old bytes: only the part beyond its old size is
//! reserved with `fallocate`, and a crash leaves the old bytes (not zeros)
//! after the new ones, which the WAL reader takes as the end of a recycled
//! log (docs/format/wal.md).
//!
//! Large appends (at least [`PWRITE_MIN`] bytes, or `append_parts` of that
//! many) are written with one `pwritev` instead of through the mapping:
//! copying into a mapped page first faults it in (the fault reads the
//! reserved, unwritten block as zeros, then marks the page writable), which
//! per 4 KiB page costs more than a system call per record (measured:
//! `docs/PERFORMANCE.md`, "Key-value separation"). The page cache is the
//! same for both ways (a shared mapping sees the bytes `pwritev` wrote),
//! and the space is reserved first, so crash and full-disk behaviour do
//! not change.
//!
//! Invariants: `map` is null or maps file bytes `[win_off, win_off +
//! WINDOW)` (`win_off` a multiple of WINDOW), which lie inside the
//! `reserved` (allocated) part of the file; `win_off <= len <= win_off +
//! WINDOW` while mapped; `len` bytes were appended. `sync` is `fdatasync`, which on Linux writes back pages dirtied
//! through the mapping as well.
//!
//! Thread safety: owned by one writer (`&mut self`), `Send`.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::WritableFile;
use crate::error::{Error, Result};

/// Bytes mapped at a time (a multiple of the page size).
pub(crate) const WINDOW: usize = 1 << 20;

/// Appends of at least this many bytes are written with `pwritev` rather
/// than copied into the mapping (see the module comment).
pub(crate) const PWRITE_MIN: usize = 4096;

pub(crate) struct MmapWritable {
    path: PathBuf,
    file: File,
    map: *mut u8,
    win_off: u64,
    len: u64,
    reserved: u64,
    /// `finish_appends` was called: no more appends.
    finished: bool,
}

// SAFETY: the mapping is private to this value (no other reference to its
// memory exists), and moving it to another thread moves that ownership.
unsafe impl Send for MmapWritable {}

fn os_err(what: &str, path: &Path) -> Error {
    Error::io_path(what, path, std::io::Error::last_os_error())
}

impl MmapWritable {
    /// Writes `file` (opened read-write, empty) through mappings. Reserves
    /// the first window now: `Err` when the file system cannot `fallocate`
    /// (the caller then writes with `write(2)` instead).
    pub(crate) fn new(path: &Path, file: File) -> Result<MmapWritable> {
        let mut w = MmapWritable {
            path: path.to_path_buf(),
            file,
            map: std::ptr::null_mut(),
            win_off: 0,
            len: 0,
            reserved: 0,
            finished: false,
        };
        w.reserve(WINDOW as u64)?;
        Ok(w)
    }

    /// Writes `file` (opened read-write, holding the bytes of an old log)
    /// from offset 0 over those bytes; they count as reserved.
    pub(crate) fn reuse(path: &Path, file: File) -> Result<MmapWritable> {
        let old = file
            .metadata()
            .map_err(|e| Error::io_path("stat", path, e))?
            .len();
        let mut w = MmapWritable {
            path: path.to_path_buf(),
            file,
            map: std::ptr::null_mut(),
            win_off: 0,
            len: 0,
            reserved: old,
            finished: false,
        };
        w.reserve(WINDOW as u64)?;
        Ok(w)
    }

    /// Allocates the file up to `end` bytes.
    fn reserve(&mut self, end: u64) -> Result<()> {
        if end <= self.reserved {
            return Ok(());
        }
        let (Ok(off), Ok(n)) = (
            libc::off_t::try_from(self.reserved),
            libc::off_t::try_from(end - self.reserved),
        ) else {
            return Err(Error::InvalidArgument(format!(
                "{}: file offset {end} out of range",
                self.path.display()
            )));
        };
        // SAFETY: plain syscall on a file descriptor we own.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, off, n) };
        if r != 0 {
            return Err(os_err("fallocate", &self.path));
        }
        self.reserved = end;
        Ok(())
    }

    fn unmap(&mut self) {
        if !self.map.is_null() {
            // SAFETY: `map` is a live mapping of WINDOW bytes made by `mmap`
            // in `next_window`, unmapped exactly once (then set to null); no
            // reference into it outlives this call.
            unsafe { libc::munmap(self.map.cast(), WINDOW) };
            self.map = std::ptr::null_mut();
        }
    }

    /// Maps the window holding offset `len` (the previous window is full,
    /// nothing was written yet, or a `pwritev` moved `len` past it).
    fn next_window(&mut self) -> Result<()> {
        self.unmap();
        let off = self.len - self.len % WINDOW as u64;
        self.reserve(off + WINDOW as u64)?;
        let Ok(file_off) = libc::off_t::try_from(off) else {
            return Err(Error::InvalidArgument(format!(
                "{}: file offset {off} out of range",
                self.path.display()
            )));
        };
        // SAFETY: maps WINDOW bytes of our own file at a page-aligned offset
        // inside its allocated size (reserved above); the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                WINDOW,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                self.file.as_raw_fd(),
                file_off,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err("mmap", &self.path));
        }
        self.map = p.cast();
        self.win_off = off;
        Ok(())
    }
}

impl MmapWritable {
    fn check_open(&self) -> Result<()> {
        if self.finished {
            return Err(Error::InvalidArgument(format!(
                "{}: append after finish_appends",
                self.path.display()
            )));
        }
        Ok(())
    }

    /// Copies `data` into the mapping at `len`, window after window.
    fn copy_in(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let pos = (self.len - self.win_off) as usize;
            if self.map.is_null() || pos == WINDOW {
                self.next_window()?;
                continue;
            }
            let n = data.len().min(WINDOW - pos);
            // SAFETY: `map` maps WINDOW writable bytes and `pos + n <=
            // WINDOW`; `data` is a separate Rust slice (no overlap).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.add(pos), n) };
            self.len += n as u64;
            data = &data[n..];
        }
        Ok(())
    }

    /// Writes `parts` (`total` bytes) at offset `len` with `pwritev`, after
    /// reserving the space up to the end of the window they end in; unmaps
    /// the window when they end past it (the next small append maps the
    /// window holding `len`).
    fn write_parts(&mut self, parts: &[&[u8]], total: usize) -> Result<()> {
        /// Iovecs passed per call (a WAL fragment is two parts).
        const IOVS: usize = 8;
        let end = self.len + total as u64;
        self.reserve(end.div_ceil(WINDOW as u64) * WINDOW as u64)?;
        let mut done = 0usize; // bytes of `parts` written
        while done < total {
            let mut iov = [libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 0,
            }; IOVS];
            let mut n = 0;
            let mut start = 0usize; // offset of `p` in the parts' bytes
            for p in parts {
                let stop = start + p.len();
                if stop > done && n < IOVS {
                    let from = done.saturating_sub(start);
                    iov[n] = libc::iovec {
                        iov_base: p[from..].as_ptr() as *mut libc::c_void,
                        iov_len: p.len() - from,
                    };
                    n += 1;
                }
                start = stop;
            }
            let at = self.len + done as u64;
            let Ok(off) = libc::off_t::try_from(at) else {
                return Err(Error::InvalidArgument(format!(
                    "{}: file offset {at} out of range",
                    self.path.display()
                )));
            };
            // SAFETY: the `n <= IOVS` iovecs point into live slices of
            // `parts`, which the kernel only reads during the call; the
            // descriptor is ours. The result is checked.
            let r = unsafe { libc::pwritev(self.file.as_raw_fd(), iov.as_ptr(), n as i32, off) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(Error::io_path("pwritev", &self.path, e));
            }
            if r == 0 {
                return Err(Error::io_path(
                    "pwritev",
                    &self.path,
                    std::io::Error::from(std::io::ErrorKind::WriteZero),
                ));
            }
            done += r as usize;
        }
        self.len = end;
        if !self.map.is_null() && self.len >= self.win_off + WINDOW as u64 {
            self.unmap();
        }
        Ok(())
    }
}

impl WritableFile for MmapWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.check_open()?;
        if data.len() >= PWRITE_MIN {
            return self.write_parts(&[data], data.len());
        }
        self.copy_in(data)
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.check_open()?;
        let total: usize = parts.iter().map(|p| p.len()).sum();
        if total >= PWRITE_MIN {
            return self.write_parts(parts, total);
        }
        for p in parts {
            self.copy_in(p)?;
        }
        Ok(())
    }

    /// Nothing to do: appended bytes are already in the page cache.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.file
            .sync_data()
            .map_err(|e| Error::io_path("fdatasync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }

    /// Unmaps and truncates the file to the bytes appended; a later
    /// `append` fails.
    fn finish_appends(&mut self) -> Result<()> {
        self.unmap();
        self.finished = true;
        self.file
            .set_len(self.len)
            .map_err(|e| Error::io_path("ftruncate", &self.path, e))?;
        self.reserved = self.len;
        Ok(())
    }

    fn appends_reach_os(&self) -> bool {
        true
    }

    /// Writeback of pages dirtied through the mapping: the same page cache,
    /// so `sync_file_range` covers them.
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        super::range_sync::range_sync(&self.file, &self.path, offset, len)
    }
}

impl Drop for MmapWritable {
    fn drop(&mut self) {
        self.unmap();
        // Best effort: cut the reserved zeros (a crash leaves them, and the
        // reader stops there). Whoever needed durability called sync.
        let _ = self.file.set_len(self.len);
    }
}

#[cfg(test)]
mod tests;
