//! Builds one block in the shared block format (data, index, metaindex and
//! properties blocks all use it):
//!
//! ```text
//! entry*   : varint32 shared_key_len, varint32 unshared_key_len,
//!            varint32 value_len, key[shared..], value
//! restarts : fixed32 offset of each restart entry (shared_key_len = 0)
//! fixed32 num_restarts (>= 1)
//! ```
//!
//! A restart point is placed every `restart_interval` entries and, when
//! `restart_bytes` is set, also as soon as the entries since the last one
//! span that many bytes: a point lookup binary-searches the restarts and
//! then scans one interval, so with large entries a byte bound keeps that
//! scan to a few cache lines. Readers do not depend on where restarts are.
//!
//! Requires keys added in increasing order (by whatever order the block's
//! reader will use; the builder itself only compares bytes for sharing).
//! Buffers are kept across `reset` so a table builder allocates only while
//! its blocks grow past their previous high-water mark.
//!
//! Thread-safety: owned by one builder.

use crate::codec::{put_fixed32, put_varint32};

pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    /// Entries since the last restart point.
    counter: usize,
    restart_interval: usize,
    /// Bytes of entries after which a restart is forced; 0 = no bound.
    restart_bytes: usize,
    last_key: Vec<u8>,
    num_entries: usize,
    finished: bool,
}

impl BlockBuilder {
    /// Bytes held (entries, restart offsets and the last key).
    pub(crate) fn memory_usage(&self) -> usize {
        self.buf.capacity()
            + self.restarts.capacity() * std::mem::size_of::<u32>()
            + self.last_key.capacity()
    }

    /// `restart_interval` is clamped to at least 1.
    pub(crate) fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder::with_restart_bytes(restart_interval, 0)
    }

    /// Like `new`, also restarting once the entries since the last restart
    /// span `restart_bytes` bytes (0 = no byte bound).
    pub(crate) fn with_restart_bytes(
        restart_interval: usize,
        restart_bytes: usize,
    ) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            restart_bytes,
            last_key: Vec::new(),
            num_entries: 0,
            finished: false,
        }
    }

    /// Clears the block, keeping its buffers.
    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.num_entries = 0;
        self.finished = false;
    }

    /// Appends an entry. Requires `!finished` and `key` after the last key.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished);
        debug_assert!(self.num_entries == 0 || key != self.last_key.as_slice());
        let mut shared = 0;
        let since = self.buf.len() - self.restarts.last().copied().unwrap_or(0) as usize;
        let bytes_ok = self.restart_bytes == 0 || since < self.restart_bytes;
        if self.counter < self.restart_interval && bytes_ok {
            shared = key
                .iter()
                .zip(self.last_key.iter())
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        let unshared = key.len() - shared;
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, unshared as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
        self.num_entries += 1;
    }

    /// Appends the restart array and returns the finished block bytes, valid
    /// until the next `reset`.
    pub(crate) fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_fixed32(&mut self.buf, r);
            }
            put_fixed32(&mut self.buf, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buf
    }

    /// Size of the block if it were finished now.
    pub(crate) fn size_estimate(&self) -> usize {
        if self.finished {
            self.buf.len()
        } else {
            self.buf.len() + 4 * self.restarts.len() + 4
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.num_entries == 0
    }

    /// An upper bound of `size_estimate` after `add(key, value)`: the
    /// entry unshared, with a new restart point (RocksDB's
    /// `EstimateSizeAfterKV`, used to keep aligned blocks within a page).
    pub(crate) fn size_estimate_after(&self, key: &[u8], value: &[u8]) -> usize {
        // Three varints of at most 5 bytes, the bytes, a restart offset.
        self.size_estimate() + 15 + key.len() + value.len() + 4
    }

    #[cfg(test)]
    pub(crate) fn num_entries(&self) -> usize {
        self.num_entries
    }

    /// The last key added (empty when the block is empty).
    #[cfg(test)]
    pub(crate) fn last_key(&self) -> &[u8] {
        &self.last_key
    }
}

#[cfg(test)]
mod tests;
