//! Readahead for scans: after two data blocks of one table are read in file
//! order, reads grow to cover the blocks that follow (8 KiB, doubling on each
//! refill up to a maximum, RocksDB's auto readahead), so a long scan issues a
//! few large reads instead of one per block. An explicit size
//! (`ReadOptions::readahead_size`, compaction readahead) reads that much from
//! the first block on.
//!
//! Thread-safety: owned by one iterator.

use crate::memory::Charge;

/// Initial automatic readahead.
pub(crate) const INITIAL_AUTO_READAHEAD: usize = 8 * 1024;
/// Default cap of automatic readahead (RocksDB's `max_auto_readahead_size`).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) const MAX_AUTO_READAHEAD: usize = 256 * 1024;

/// How an iterator reads ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReadaheadPolicy {
    /// Start after two sequential reads; grow up to `max`.
    Auto { max: usize },
    /// Always read this many bytes.
    Fixed(usize),
}

/// A buffer of file bytes `[start, start + buf.len())`.
pub(crate) struct Readahead {
    policy: ReadaheadPolicy,
    buf: Vec<u8>,
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
            buf: Vec::new(),
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

    /// A zeroed buffer of `len` bytes to read into and give back with
    /// `fill`: the buffer held so far, reused (one allocation per iterator
    /// rather than one per read, so compactions do not churn the allocator).
    pub(crate) fn take_buffer(&mut self, len: usize) -> Vec<u8> {
        let mut v = std::mem::take(&mut self.buf);
        v.clear();
        v.resize(len, 0);
        v
    }

    /// Stores bytes read from `offset`.
    pub(crate) fn fill(&mut self, offset: u64, data: Vec<u8>) {
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
mod tests {
    use super::*;

    #[test]
    fn auto_starts_after_two_sequential_reads_and_doubles() {
        let mut r = Readahead::new(ReadaheadPolicy::Auto { max: 32 * 1024 });
        assert_eq!(r.plan(0, 4096), None);
        assert_eq!(r.plan(4096, 4096), None);
        assert_eq!(r.plan(8192, 4096), Some(8 * 1024));
        assert_eq!(r.plan(8192 + 4096, 4096), Some(16 * 1024));
        assert_eq!(r.plan(8192 + 8192, 4096), Some(32 * 1024));
        assert_eq!(r.plan(8192 + 12288, 4096), Some(32 * 1024));
        // A jump resets.
        assert_eq!(r.plan(1 << 20, 4096), None);
        let mut f = Readahead::new(ReadaheadPolicy::Fixed(1 << 20));
        assert_eq!(f.plan(0, 4096), Some(1 << 20));
        f.fill(100, vec![1, 2, 3, 4]);
        assert_eq!(f.get(101, 2), Some(&[2u8, 3][..]));
        assert_eq!(f.get(99, 2), None);
        assert_eq!(f.get(103, 2), None);
    }
}
