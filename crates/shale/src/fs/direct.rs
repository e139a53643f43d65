//! Direct IO (`O_DIRECT`) for [`PosixFileSystem`](super::PosixFileSystem):
//! files read and written around the OS page cache, as RocksDB's
//! `use_direct_reads` and `use_direct_io_for_flush_and_compaction` do.
//!
//! `O_DIRECT` requires the file offset, the length and the buffer address
//! of every `pread`/`pwrite` to be multiples of the device's logical block
//! size (the *alignment*: `queue/logical_block_size` from sysfs for the
//! file's device or its parent, 4096 when unknown). Invariants:
//! - Every `pread`/`pwrite` on a direct descriptor goes through
//!   [`check_aligned`], which refuses a misaligned one (an internal error,
//!   never a kernel `EINVAL`).
//! - Reads: a request that is already aligned (offset, length, address)
//!   goes to the device as it is (readahead asks for such ones, see
//!   `sst::readahead`); any other is served by reading the covering
//!   aligned range into this thread's aligned bounce buffer and copying.
//!   A read may reach past the end of the file (the covering range of the
//!   last bytes): the kernel returns fewer bytes, which is fine as long as
//!   the requested ones came back.
//! - Writes: appends fill an aligned buffer of `WRITE_BUFFER` bytes, which
//!   is written whole at its aligned file offset when full. `flush`
//!   (`sync`, drop) writes the partial last chunk padded with zeros to the
//!   alignment, then `ftruncate`s the file to the bytes appended (as
//!   RocksDB's `WritableFileWriter` does at close), and keeps that chunk
//!   in the buffer: the next write rewrites it from its aligned start. So
//!   whenever `flush` has returned, the file holds exactly the appended
//!   bytes.
//!
//! Thread safety: a reader is `Sync` (positional reads; the bounce buffer
//! is per thread); a writer is owned by one thread.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::aligned::{is_aligned, round_up, AlignedBuf};
use super::{RandomAccessFile, WritableFile};
use crate::error::{Error, Result};

/// Bytes a direct writer buffers before a write (a multiple of any
/// alignment up to 64 KiB).
const WRITE_BUFFER: usize = 64 * 1024;

/// Alignment when the device's logical block size is unknown.
const DEFAULT_ALIGNMENT: usize = 4096;

/// A bounce buffer larger than this is freed after use (a one-off large
/// unaligned read does not stay resident in every thread).
const BOUNCE_KEEP: usize = 1 << 20;

/// The `open(2)` flag, where the platform has it.
#[cfg(target_os = "linux")]
const O_DIRECT: i32 = libc::O_DIRECT;
#[cfg(not(target_os = "linux"))]
const O_DIRECT: i32 = 0;

/// True where this build can open files with `O_DIRECT`.
pub(crate) const SUPPORTED: bool = cfg!(target_os = "linux");

thread_local! {
    static BOUNCE: RefCell<AlignedBuf> = RefCell::new(AlignedBuf::new(DEFAULT_ALIGNMENT));
}

#[cfg(test)]
thread_local! {
    /// Direct reads and writes this thread issued (all aligned: a
    /// misaligned one fails before reaching the kernel).
    pub(crate) static ISSUED: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// The alignment of direct IO on the device holding `file`.
fn alignment_of(file: &File) -> usize {
    let Ok(meta) = file.metadata() else {
        return DEFAULT_ALIGNMENT;
    };
    let dev = meta.dev();
    let node = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(dev),
        libc::minor(dev)
    ));
    let read = |p: PathBuf| -> Option<usize> {
        let n: usize = std::fs::read_to_string(p).ok()?.trim().parse().ok()?;
        (n >= 512 && n.is_power_of_two()).then_some(n)
    };
    read(node.join("queue/logical_block_size"))
        .or_else(|| read(node.join("../queue/logical_block_size")))
        .unwrap_or(DEFAULT_ALIGNMENT)
}

/// Refuses an IO whose offset, length or buffer address is not a multiple
/// of `align`; see the module docs.
fn check_aligned(what: &str, path: &Path, offset: u64, buf: &[u8], align: usize) -> Result<()> {
    if !is_aligned(offset, buf, align) {
        return Err(Error::io(
            format!(
                "{what} {} at {offset}: direct IO of {} bytes from address {:p} is not aligned to {align}",
                path.display(),
                buf.len(),
                buf.as_ptr()
            ),
            io::Error::from(io::ErrorKind::InvalidInput),
        ));
    }
    Ok(())
}

/// Opens `path` with `O_DIRECT` (`write`: created or truncated, for
/// writing; else for reading). A refusal (EINVAL from a file system
/// without direct IO) keeps its IO kind, `InvalidInput`.
fn open(path: &Path, write: bool) -> Result<File> {
    if !SUPPORTED {
        return Err(Error::io_path(
            "open O_DIRECT",
            path,
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "direct IO is not supported on this platform",
            ),
        ));
    }
    let mut o = OpenOptions::new();
    if write {
        o.write(true).create(true).truncate(true);
    } else {
        o.read(true);
    }
    o.custom_flags(O_DIRECT)
        .open(path)
        .map_err(|e| Error::io_path("open O_DIRECT", path, e))
}

/// A file opened for direct reads.
pub(super) struct DirectRandom {
    path: PathBuf,
    file: File,
    len: u64,
    align: usize,
}

impl DirectRandom {
    pub(super) fn open(path: &Path) -> Result<DirectRandom> {
        let file = open(path, false)?;
        let len = file
            .metadata()
            .map_err(|e| Error::io_path("stat", path, e))?
            .len();
        let align = alignment_of(&file);
        Ok(DirectRandom {
            path: path.to_path_buf(),
            file,
            len,
            align,
        })
    }

    /// Reads `[offset, offset + buf.len())` with aligned `pread`s into
    /// `buf` (aligned), tolerating the end of the file; returns the bytes
    /// read.
    fn pread_aligned(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        check_aligned("read", &self.path, offset, buf, self.align)?;
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            match self.file.read_at(&mut buf[done..], at) {
                Ok(0) => break,
                Ok(n) => {
                    done += n;
                    if !done.is_multiple_of(self.align) {
                        break; // a short read ends at the end of the file
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("read {} at {at}", self.path.display()),
                        e,
                    ))
                }
            }
        }
        #[cfg(test)]
        ISSUED.with(|c| c.set((c.get().0 + 1, c.get().1)));
        Ok(done)
    }

    fn eof(&self, offset: u64) -> Error {
        Error::io(
            format!("read {} at {offset}", self.path.display()),
            io::Error::from(io::ErrorKind::UnexpectedEof),
        )
    }
}

impl RandomAccessFile for DirectRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let a = self.align;
        let aligned = is_aligned(offset, buf, a);
        if aligned {
            return match self.pread_aligned(offset, buf)? {
                n if n == buf.len() => Ok(()),
                _ => Err(self.eof(offset)),
            };
        }
        let start = offset / a as u64 * a as u64;
        let head = (offset - start) as usize;
        let span = round_up(head + buf.len(), a);
        BOUNCE.with(|cell| {
            let mut bounce = cell.borrow_mut();
            if bounce.align() < a {
                *bounce = AlignedBuf::new(a);
            }
            bounce.resize_zeroed(span);
            let got = self.pread_aligned(start, &mut bounce[..span]);
            let res = match got {
                Ok(n) if n >= head + buf.len() => {
                    buf.copy_from_slice(&bounce[head..head + buf.len()]);
                    Ok(())
                }
                Ok(_) => Err(self.eof(offset)),
                Err(e) => Err(e),
            };
            if bounce.capacity() > BOUNCE_KEEP {
                *bounce = AlignedBuf::new(a);
            }
            res
        })
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn direct_alignment(&self) -> Option<usize> {
        Some(self.align)
    }
}

/// A file written with `O_DIRECT`; see the module docs.
pub(super) struct DirectWritable {
    path: PathBuf,
    file: File,
    /// The bytes of the file from `buf_offset` on (at most one chunk).
    buf: AlignedBuf,
    /// File offset of `buf[0]` (aligned).
    buf_offset: u64,
    /// Bytes appended.
    len: u64,
    /// Some bytes of `buf` are not in the file yet.
    dirty: bool,
    align: usize,
}

impl DirectWritable {
    pub(super) fn create(path: &Path) -> Result<DirectWritable> {
        let file = open(path, true)?;
        let align = alignment_of(&file);
        let mut buf = AlignedBuf::new(align);
        buf.reserve_total(round_up(WRITE_BUFFER, align));
        Ok(DirectWritable {
            path: path.to_path_buf(),
            file,
            buf,
            buf_offset: 0,
            len: 0,
            dirty: false,
            align,
        })
    }

    fn chunk(&self) -> usize {
        self.buf.capacity()
    }

    /// Writes `buf[..n]` (n aligned) at `buf_offset`.
    fn pwrite(&self, n: usize) -> Result<()> {
        let data = &self.buf[..n];
        check_aligned("write", &self.path, self.buf_offset, data, self.align)?;
        let mut done = 0;
        while done < n {
            let at = self.buf_offset + done as u64;
            match self.file.write_at(&data[done..], at) {
                Ok(0) => {
                    return Err(Error::io_path(
                        "write",
                        &self.path,
                        io::Error::from(io::ErrorKind::WriteZero),
                    ))
                }
                Ok(k) => done += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io_path("write", &self.path, e)),
            }
        }
        #[cfg(test)]
        ISSUED.with(|c| c.set((c.get().0, c.get().1 + 1)));
        Ok(())
    }

    /// Writes the partial last chunk padded, then cuts the file to the
    /// bytes appended; see the module docs.
    fn write_tail(&mut self) -> Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let n = self.buf.len();
        let padded = round_up(n, self.align);
        self.buf.resize_zeroed(padded);
        let res = self.pwrite(padded);
        self.buf.truncate(n);
        res?;
        self.file
            .set_len(self.len)
            .map_err(|e| Error::io_path("ftruncate", &self.path, e))?;
        self.dirty = false;
        if n.is_multiple_of(self.align) {
            // Whole blocks: nothing to rewrite next time.
            self.buf_offset += n as u64;
            self.buf.clear();
        }
        Ok(())
    }
}

impl WritableFile for DirectWritable {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        self.len += data.len() as u64;
        while !data.is_empty() {
            let take = (self.chunk() - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            self.dirty = true;
            data = &data[take..];
            if self.buf.len() == self.chunk() {
                self.pwrite(self.chunk())?;
                self.buf_offset += self.chunk() as u64;
                self.buf.clear();
                self.dirty = false;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.write_tail()
    }

    fn sync(&mut self) -> Result<()> {
        self.write_tail()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io_path("fdatasync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.len
    }
}

impl Drop for DirectWritable {
    fn drop(&mut self) {
        // Best effort, as `PosixWritable`: whoever needed durability synced.
        let _ = self.write_tail();
    }
}

/// Opens `path` for direct reads.
pub(super) fn open_random(path: &Path) -> Result<DirectRandom> {
    DirectRandom::open(path)
}

/// Creates `path` for direct writes.
pub(super) fn create(path: &Path) -> Result<DirectWritable> {
    DirectWritable::create(path)
}

/// Checks that the file system holding `dir` takes direct IO: creates a
/// probe file there with `O_DIRECT`, writes and reads back one block, and
/// removes it.
pub(super) fn probe(dir: &Path) -> Result<()> {
    let path = dir.join(format!(".shale-direct-io-probe-{}", std::process::id()));
    let res = (|| {
        let mut w = create(&path)?;
        w.append(&[0x5a; 4096])?;
        w.sync()?;
        drop(w);
        let r = open_random(&path)?;
        let mut b = [0u8; 4096];
        r.read_exact_at(0, &mut b)?;
        if b.iter().any(|&x| x != 0x5a) {
            return Err(Error::io_path(
                "direct IO probe",
                &path,
                io::Error::other("read back other bytes than written"),
            ));
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&path);
    res
}

#[cfg(test)]
mod tests;
