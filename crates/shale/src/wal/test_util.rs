//! Test doubles for the log: an in-memory writable file whose bytes the test
//! can inspect, a file that fails after some bytes, and a sequential reader
//! over a byte vector that can return short reads or an IO error.
//!
//! Test-only (compiled under `cfg(test)`); shared state is behind a mutex.

use std::io;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::fs::{SequentialFile, WritableFile};

/// A writable file appending to a shared vector.
pub(crate) struct MemFile {
    bytes: Arc<Mutex<Vec<u8>>>,
}

impl MemFile {
    /// The file and a handle on its bytes.
    pub(crate) fn new() -> (MemFile, Arc<Mutex<Vec<u8>>>) {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        (
            MemFile {
                bytes: Arc::clone(&bytes),
            },
            bytes,
        )
    }
}

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.bytes.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.bytes.lock().len() as u64
    }
}

/// A writable file whose appends fail once `fail_after` bytes were taken.
pub(crate) struct FailingFile {
    pub(crate) fail_after: u64,
    pub(crate) len: u64,
}

impl WritableFile for FailingFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.len + data.len() as u64 > self.fail_after {
            return Err(Error::io("append", io::Error::other("injected")));
        }
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

/// A sequential file over a vector.
pub(crate) struct MemSeqFile {
    data: Vec<u8>,
    pos: usize,
    /// Largest read returned (short reads exercise the reader's refill loop).
    pub(crate) max_read: usize,
    /// Reads starting at or past this offset fail.
    pub(crate) fail_at: Option<usize>,
}

impl MemSeqFile {
    pub(crate) fn new(data: Vec<u8>) -> MemSeqFile {
        MemSeqFile {
            data,
            pos: 0,
            max_read: usize::MAX,
            fail_at: None,
        }
    }
}

impl SequentialFile for MemSeqFile {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        if self.fail_at.is_some_and(|f| self.pos >= f) {
            return Err(Error::io("read", io::Error::other("injected")));
        }
        let n = buf.len().min(self.max_read).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
