//! Starting writeback of a file's byte range without waiting
//! (`sync_file_range` on Linux; elsewhere the OS decides), for
//! `bytes_per_sync` and `wal_bytes_per_sync`.

use std::fs::File;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::path::Path;

use crate::error::{Error, Result};

/// `sync_file_range(SYNC_FILE_RANGE_WRITE)` over `[offset, offset + len)` of
/// `file`: starts writeback of those dirty pages, waits for nothing.
#[cfg(target_os = "linux")]
pub(crate) fn range_sync(file: &File, path: &Path, offset: u64, len: u64) -> Result<()> {
    let (Ok(off), Ok(n)) = (
        libc::off64_t::try_from(offset),
        libc::off64_t::try_from(len),
    ) else {
        return Ok(());
    };
    // SAFETY: a plain system call on a descriptor we own; no memory is
    // passed to the kernel.
    let rc =
        unsafe { libc::sync_file_range(file.as_raw_fd(), off, n, libc::SYNC_FILE_RANGE_WRITE) };
    if rc != 0 {
        return Err(Error::io_path(
            "sync_file_range",
            path,
            std::io::Error::last_os_error(),
        ));
    }
    Ok(())
}

/// Elsewhere writeback is left to the OS (documented no-op).
#[cfg(not(target_os = "linux"))]
pub(crate) fn range_sync(_file: &File, _path: &Path, _offset: u64, _len: u64) -> Result<()> {
    Ok(())
}
