//! Readahead for scans: after two data blocks of one table are read in file
//! order, reads grow to cover the blocks that follow (8 KiB, doubling on each
//! refill up to a maximum, RocksDB's auto readahead), so a long scan issues a
//! few large reads instead of one per block. An explicit size
//! (`ReadOptions::readahead_size`, compaction readahead) reads that much from
//! the first block on.
//!
//! Direct IO: when the file read is a direct handle
//! (`RandomAccessFile::direct_alignment`), each readahead read covers an
//! aligned range ([`aligned_span`]) into an aligned buffer, so it reaches
//! the device with no bounce copy. A compaction may read through a direct
//! handle of its own (`reading_from`) while the table's handle stays
//! buffered (`use_direct_io_for_flush_and_compaction` without
//! `use_direct_reads`).
//!
//! Thread-safety: owned by one iterator.

use std::sync::Arc;

use crate::fs::{round_up, AlignedBuf, RandomAccessFile};
use crate::memory::Charge;

/// Initial automatic readahead.
pub(crate) const INITIAL_AUTO_READAHEAD: usize = 8 * 1024;
/// Default cap of automatic readahead (RocksDB's `max_auto_readahead_size`).
#[cfg(any(test, feature = "testing"))]
pub(crate) const MAX_AUTO_READAHEAD: usize = 256 * 1024;

/// How an iterator reads ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadaheadPolicy {
    /// Start after two sequential reads; grow up to `max`.
    Auto { max: usize },
    /// Always read this many bytes.
    Fixed(usize),
}

/// The range to read ahead for a block at `offset` of `need` bytes when
/// `len` bytes (≥ `need`) are wanted, on a direct handle of alignment
/// `align` over a file of `file_len` bytes: `(start, len)` with `start`
/// aligned down, the end aligned down (so the read stays within `len`
/// plus the head, the device's request size being what `len` respects)
/// but past the block, and aligned unless that would pass the end of the
/// file (then the file's end: a read the file serves through a bounce).
pub(crate) fn aligned_span(
    offset: u64,
    len: usize,
    need: usize,
    align: usize,
    file_len: u64,
) -> (u64, usize) {
    let a = align as u64;
    let start = offset / a * a;
    let need_end = offset + need as u64;
    let mut end = (offset + len as u64) / a * a;
    if end < need_end {
        end = round_up(need_end as usize, align) as u64;
    }
    end = end.min(file_len.max(need_end));
    (start, (end - start) as usize)
}

/// A buffer of file bytes `[start, start + buf.len())`.
pub(crate) struct Readahead {
    policy: ReadaheadPolicy,
    buf: AlignedBuf,
    /// Where this iterator's reads go instead of the table's handle.
    file: Option<Arc<dyn RandomAccessFile>>,
    start: u64,
    /// End offset of the last block read (to detect sequential reads).
    last_end: u64,
    sequential: u32,
    next_size: usize,
    /// File reads issued (for tests and statistics).
    pub reads: u64,
    /// `buf`'s bytes, charged to the DB's memory ledger (`None` for a
    /// table outside a DB).
    charge: Option<Charge>,
}

impl Readahead {
    pub(crate) fn new(policy: ReadaheadPolicy) -> Readahead {
        let next_size = match policy {
            ReadaheadPolicy::Fixed(n) => n,
            _ => INITIAL_AUTO_READAHEAD,
        };
        Readahead {
            policy,
            buf: AlignedBuf::new(1),
            file: None,
            start: 0,
            last_end: u64::MAX,
            sequential: 0,
            next_size,
            reads: 0,
            charge: None,
        }
    }

    /// Charges the buffer to `charge` while it is held.
    pub(crate) fn charged(mut self, charge: Option<Charge>) -> Readahead {
        self.charge = charge;
        self
    }

    /// Reads through `file` rather than the table's handle.
    pub(crate) fn reading_from(mut self, file: Arc<dyn RandomAccessFile>) -> Readahead {
        self.file = Some(file);
        self
    }

    /// The handle this iterator reads through, if not the table's.
    pub(crate) fn file(&self) -> Option<&Arc<dyn RandomAccessFile>> {
        self.file.as_ref()
    }

    /// The buffered bytes `[offset, offset + len)`, if held.
    pub(crate) fn get(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let rel = usize::try_from(offset.checked_sub(self.start)?).ok()?;
        self.buf.get(rel..rel.checked_add(len)?)
    }

    /// Records a block read at `[offset, offset + len)` and returns how many
    /// bytes to read from `offset` (≥ `len`), or `None` for a plain read.
    pub(crate) fn plan(&mut self, offset: u64, len: usize) -> Option<usize> {
        if offset == self.last_end {
            self.sequential = self.sequential.saturating_add(1);
        } else {
            self.sequential = 0;
            if let ReadaheadPolicy::Auto { .. } = self.policy {
                self.next_size = INITIAL_AUTO_READAHEAD;
            }
        }
        self.last_end = offset + len as u64;
        match self.policy {
            ReadaheadPolicy::Fixed(n) => Some(n.max(len)),
            ReadaheadPolicy::Auto { max } => {
                if self.sequential < 2 {
                    return None;
                }
                let size = self.next_size.max(len);
                self.next_size = (self.next_size * 2).min(max.max(INITIAL_AUTO_READAHEAD));
                Some(size)
            }
        }
    }

    /// A zeroed buffer of `len` bytes aligned to `align` to read into and
    /// give back with `fill`: the buffer held so far, reused (one
    /// allocation per iterator rather than one per read, so compactions do
    /// not churn the allocator).
    pub(crate) fn take_buffer(&mut self, len: usize, align: usize) -> AlignedBuf {
        let mut v = std::mem::replace(&mut self.buf, AlignedBuf::new(1));
        if v.align() != align {
            v = AlignedBuf::new(align);
        }
        v.clear();
        v.resize_zeroed(len);
        v
    }

    /// Stores bytes read from `offset`.
    pub(crate) fn fill(&mut self, offset: u64, data: AlignedBuf) {
        self.start = offset;
        self.buf = data;
        self.reads += 1;
        if let Some(c) = &mut self.charge {
            c.set(self.buf.capacity());
        }
    }

    /// Notes a block served from the buffer (keeps the sequence going).
    pub(crate) fn note_buffered(&mut self, offset: u64, len: usize) {
        self.last_end = offset + len as u64;
        self.sequential = self.sequential.saturating_add(1);
    }
}

#[cfg(test)]
mod tests;
