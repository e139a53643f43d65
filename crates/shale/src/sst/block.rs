//! A decoded block (its uncompressed bytes and restart array) and the
//! bidirectional [`BlockIterator`] over it. Layout: see `block_builder.rs`
//! and `docs/format/sst.md`.
//!
//! Invariants checked once by [`Block::new`]: at least one restart point,
//! restart offsets strictly increasing, the first is 0, all inside the entry
//! area. Every varint, length and key-sharing count is checked again while
//! iterating, so damaged bytes give `Error::Corruption` naming the file and
//! the block offset, never a panic.
//!
//! Ordering: `seek` and `seek_for_prev` compare with
//! `base::compare_internal` (data and index blocks hold internal keys);
//! sequential use (`seek_to_first`/`next`) works for any block, for example
//! the metaindex and properties blocks, whose keys are plain strings.
//!
//! Thread-safety: `Block` is immutable and shared as `Arc<Block>` (also by
//! the block cache); each `BlockIterator` is owned by one thread.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::base::compare_internal;
use crate::codec::{decode_fixed32, get_varint32};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;

/// An uncompressed, verified block.
pub(crate) struct Block {
    data: Vec<u8>,
    /// Start of the restart array = end of the entry area.
    restarts_offset: usize,
    num_restarts: usize,
    file: Arc<str>,
    offset: u64,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("file", &self.file)
            .field("offset", &self.offset)
            .field("len", &self.data.len())
            .field("num_restarts", &self.num_restarts)
            .finish()
    }
}

impl Block {
    /// Parses the restart array of `data`, the uncompressed block read from
    /// `offset` of `file`.
    pub(crate) fn new(data: Vec<u8>, file: Arc<str>, offset: u64) -> Result<Block> {
        let corrupt = |what: String| Error::corruption(&*file, offset, what);
        let len = data.len();
        let n = len
            .checked_sub(4)
            .and_then(|p| data.get(p..))
            .and_then(decode_fixed32)
            .ok_or_else(|| corrupt(format!("block of {len} bytes has no restart count")))?
            as usize;
        let max = (len - 4) / 4;
        if n == 0 || n > max {
            return Err(corrupt(format!(
                "bad restart count {n} in a block of {len} bytes"
            )));
        }
        let restarts_offset = len - 4 - 4 * n;
        let mut prev = 0usize;
        for i in 0..n {
            let r = data
                .get(restarts_offset + 4 * i..)
                .and_then(decode_fixed32)
                .unwrap_or(u32::MAX) as usize;
            let ok = if i == 0 {
                r == 0
            } else {
                r > prev && r < restarts_offset
            };
            if !ok {
                return Err(corrupt(format!("bad restart point #{i} ({r})")));
            }
            prev = r;
        }
        Ok(Block {
            data,
            restarts_offset,
            num_restarts: n,
            file,
            offset,
        })
    }

    /// Bytes charged to a cache for holding this block.
    pub(crate) fn size(&self) -> usize {
        self.data.capacity() + std::mem::size_of::<Block>()
    }

    /// The uncompressed block bytes.
    pub(crate) fn data(&self) -> &[u8] {
        &self.data
    }

    /// Offset of the block in its file.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Name of the file the block was read from.
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// True when the block has no entries.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.restarts_offset == 0
    }

    /// Number of restart points.
    pub(crate) fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// The full key and the value range of the entry at restart point `i`
    /// (restart entries share no prefix). Requires `i < num_restarts()`.
    pub(crate) fn restart_entry(&self, i: usize) -> Result<(&[u8], Range<usize>)> {
        debug_assert!(i < self.num_restarts);
        let p = self.restart_point(i);
        match decode_entry(&self.data, p, self.restarts_offset) {
            Some(e) if e.shared == 0 => Ok((self.data.get(e.unshared).unwrap_or(&[]), e.value)),
            _ => Err(self.corruption(format!("bad restart entry #{i} at byte {p}"))),
        }
    }

    fn restart_point(&self, i: usize) -> usize {
        // Validated in `new`; the fallback is unreachable for i < num_restarts.
        self.data
            .get(self.restarts_offset + 4 * i..)
            .and_then(decode_fixed32)
            .map_or(self.restarts_offset, |r| r as usize)
    }

    fn corruption(&self, what: String) -> Error {
        Error::corruption(&*self.file, self.offset, what)
    }
}

impl Block {
    /// Point seek without an iterator: finds the first entry with internal
    /// key >= `target`, materializing its key into `key` and returning its
    /// value range; `Ok(None)` when every key is smaller. Borrows the block
    /// (no reference-count traffic on the hot read path).
    pub(crate) fn seek_point(
        &self,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<Range<usize>>> {
        // Last restart point whose key is < target.
        let (mut left, mut right) = (0usize, self.num_restarts - 1);
        while left < right {
            let mid = (left + right).div_ceil(2);
            let p = self.restart_point(mid);
            let k = match decode_entry(&self.data, p, self.restarts_offset) {
                Some(e) if e.shared == 0 => self.data.get(e.unshared).unwrap_or(&[]),
                _ => return Err(self.corruption(format!("bad restart entry #{mid} at byte {p}"))),
            };
            if compare_internal(k, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        key.clear();
        let mut p = self.restart_point(left);
        while p < self.restarts_offset {
            let e = match decode_entry(&self.data, p, self.restarts_offset) {
                Some(e) if e.shared <= key.len() => e,
                _ => return Err(self.corruption(format!("bad block entry at byte {p}"))),
            };
            key.truncate(e.shared);
            key.extend_from_slice(self.data.get(e.unshared).unwrap_or(&[]));
            if compare_internal(key, target) != Ordering::Less {
                return Ok(Some(e.value));
            }
            p = e.value.end;
        }
        Ok(None)
    }
}

/// One decoded entry header.
struct Entry {
    shared: usize,
    unshared: Range<usize>,
    value: Range<usize>,
}

/// Decodes the entry at `p`; `None` when any field is out of bounds.
fn decode_entry(data: &[u8], p: usize, limit: usize) -> Option<Entry> {
    let mut s = data.get(p..limit)?;
    let start_len = s.len();
    let shared = get_varint32(&mut s)? as usize;
    let unshared = get_varint32(&mut s)? as usize;
    let value_len = get_varint32(&mut s)? as usize;
    let key_start = p + (start_len - s.len());
    let key_end = key_start.checked_add(unshared)?;
    let value_end = key_end.checked_add(value_len)?;
    if value_end > limit {
        return None;
    }
    Some(Entry {
        shared,
        unshared: key_start..key_end,
        value: key_end..value_end,
    })
}

/// A cursor over one block. Keys are materialized into an owned buffer
/// (reused across entries); values are ranges of the block.
pub(crate) struct BlockIterator {
    block: Arc<Block>,
    /// Offset of the current entry; `restarts_offset` when not valid.
    current: usize,
    /// Offset just past the current entry.
    next: usize,
    /// Restart run holding `current`.
    restart_index: usize,
    key: Vec<u8>,
    value: Range<usize>,
    err: Option<Error>,
}

impl BlockIterator {
    pub(crate) fn new(block: Arc<Block>) -> BlockIterator {
        BlockIterator::with_key_buffer(block, Vec::new())
    }

    /// Like `new`, reusing `buf`'s allocation for keys.
    pub(crate) fn with_key_buffer(block: Arc<Block>, mut buf: Vec<u8>) -> BlockIterator {
        buf.clear();
        let end = block.restarts_offset;
        BlockIterator {
            block,
            current: end,
            next: end,
            restart_index: 0,
            key: buf,
            value: 0..0,
            err: None,
        }
    }

    /// Gives back the key buffer and the current value range (for serving a
    /// point lookup without copying the value).
    pub(crate) fn into_parts(self) -> (Arc<Block>, Vec<u8>, Range<usize>) {
        (self.block, self.key, self.value)
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts_offset;
        self.next = self.block.restarts_offset;
        self.restart_index = self.block.num_restarts;
        self.key.clear();
        self.value = 0..0;
    }

    fn fail(&mut self, what: String) {
        if self.err.is_none() {
            self.err = Some(self.block.corruption(what));
        }
        self.invalidate();
    }

    fn seek_to_restart(&mut self, i: usize) {
        self.key.clear();
        self.restart_index = i;
        self.next = self.block.restart_point(i);
    }

    /// Decodes the entry at `self.next`; false at the end or on corruption.
    fn parse_next(&mut self) -> bool {
        let p = self.next;
        let limit = self.block.restarts_offset;
        if p >= limit {
            self.invalidate();
            return false;
        }
        let e = match decode_entry(&self.block.data, p, limit) {
            Some(e) if e.shared <= self.key.len() => e,
            _ => {
                self.fail(format!("bad block entry at byte {p}"));
                return false;
            }
        };
        self.key.truncate(e.shared);
        self.key
            .extend_from_slice(self.block.data.get(e.unshared.clone()).unwrap_or(&[]));
        self.current = p;
        self.next = e.value.end;
        self.value = e.value;
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1) <= p
        {
            self.restart_index += 1;
        }
        true
    }

    /// The key stored at restart point `i` (not prefix-compressed).
    fn restart_key(&self, i: usize) -> Result<&[u8]> {
        let p = self.block.restart_point(i);
        match decode_entry(&self.block.data, p, self.block.restarts_offset) {
            Some(e) if e.shared == 0 => Ok(self.block.data.get(e.unshared).unwrap_or(&[])),
            _ => Err(self
                .block
                .corruption(format!("bad restart entry #{i} at byte {p}"))),
        }
    }
}

impl InternalIterator for BlockIterator {
    fn valid(&self) -> bool {
        self.current < self.block.restarts_offset && self.err.is_none()
    }

    fn seek_to_first(&mut self) {
        self.err = None;
        self.seek_to_restart(0);
        self.parse_next();
    }

    fn seek_to_last(&mut self) {
        self.err = None;
        self.seek_to_restart(self.block.num_restarts - 1);
        while self.parse_next() && self.next < self.block.restarts_offset {}
    }

    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        // Last restart point whose key is < target.
        let (mut left, mut right) = (0usize, self.block.num_restarts - 1);
        while left < right {
            let mid = (left + right).div_ceil(2);
            match self.restart_key(mid) {
                Ok(k) if compare_internal(k, target) == Ordering::Less => left = mid,
                Ok(_) => right = mid - 1,
                Err(e) => {
                    self.err = Some(e);
                    self.invalidate();
                    return;
                }
            }
        }
        self.seek_to_restart(left);
        while self.parse_next() {
            if compare_internal(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if compare_internal(&self.key, target) == Ordering::Greater {
                self.prev();
            }
        } else if self.err.is_none() {
            self.seek_to_last();
        }
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        self.parse_next();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        let original = self.current;
        // Find the restart run starting before the current entry.
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        self.seek_to_restart(self.restart_index);
        // Walk forward to the entry just before `original`.
        while self.parse_next() && self.next < original {}
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        &self.key
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        self.block.data.get(self.value.clone()).unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
