//! [`IndexSearch`]: a point-lookup accelerator for an index block the table
//! owns. It keeps the first 8 bytes of every entry's user key as a
//! big-endian `u64` in one contiguous array, so a lookup binary-searches
//! 8-byte integers in a few cache lines instead of decoding and comparing a
//! scattered entry at every step; only entries whose prefix equals the
//! target's are compared in full (usually none or one).
//!
//! Correctness: zero-padded big-endian prefixes are monotone in user-key
//! order (`a <= b` implies `prefix(a) <= prefix(b)`), and internal keys sort
//! by user key first, so every entry with a smaller prefix is before the
//! target and every entry with a larger one after it. Built only for blocks
//! with one restart point per entry (how index blocks are written), checked
//! at build time together with the monotonicity; otherwise the table uses
//! the block's own search.
//!
//! Thread-safety: immutable after `build`; shared with its table.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::base::{compare_internal, extract_user_key, TRAILER_LEN};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::sst::block::{Block, BlockIterator};

/// See the module comment.
pub(crate) struct IndexSearch {
    prefixes: Box<[u64]>,
}

#[inline]
fn prefix_of(user_key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = user_key.len().min(8);
    b[..n].copy_from_slice(&user_key[..n]);
    u64::from_be_bytes(b)
}

impl IndexSearch {
    /// The accelerator for `index`, or `None` when the block does not have
    /// one restart point per entry or its keys are not sorted internal keys.
    pub(crate) fn build(index: &Arc<Block>) -> Option<IndexSearch> {
        let n = index.num_restarts();
        let mut entries = 0usize;
        let mut it = BlockIterator::new(Arc::clone(index));
        it.seek_to_first();
        while it.valid() {
            entries += 1;
            it.next();
        }
        if it.status().is_err() || entries != n {
            return None;
        }
        let mut prefixes = Vec::with_capacity(n);
        for i in 0..n {
            let (k, _) = index.restart_entry(i).ok()?;
            if k.len() < TRAILER_LEN {
                return None;
            }
            let p = prefix_of(extract_user_key(k));
            if prefixes.last().is_some_and(|&last| last > p) {
                return None;
            }
            prefixes.push(p);
        }
        Some(IndexSearch {
            prefixes: prefixes.into_boxed_slice(),
        })
    }

    /// Like `Block::seek_point` on the block it was built from: the value
    /// range of the first entry with internal key >= `target`, `None` when
    /// every key is smaller.
    pub(crate) fn seek(&self, index: &Block, target: &[u8]) -> Result<Option<Range<usize>>> {
        debug_assert_eq!(index.num_restarts(), self.prefixes.len());
        let t = prefix_of(extract_user_key(target));
        let lo = self.prefixes.partition_point(|&p| p < t);
        let hi = lo + self.prefixes[lo..].partition_point(|&p| p == t);
        // Entries before `lo` are smaller than the target and entries from
        // `hi` on are larger: the answer is in [lo, hi], found by comparing
        // full keys inside [lo, hi) only.
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = a + (b - a) / 2;
            let (k, _) = index.restart_entry(mid)?;
            if compare_internal(k, target) == Ordering::Less {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        if a < self.prefixes.len() {
            Ok(Some(index.restart_entry(a)?.1))
        } else {
            Ok(None)
        }
    }

    /// Bytes of memory held.
    pub(crate) fn size(&self) -> usize {
        self.prefixes.len() * 8
    }
}

#[cfg(test)]
mod tests;
