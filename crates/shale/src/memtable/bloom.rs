//! A concurrent, cache-line-local bloom filter over the user keys of one
//! memtable (RocksDB's memtable bloom with `memtable_whole_key_filtering`).
//! A point read that the filter rules out skips the skiplist search, which
//! costs one cache miss per level of the list once the memtable outgrows the
//! CPU caches; the filter costs one line.
//!
//! For `h = xxh3_64(user_key)`: the line is `((h >> 32) * num_lines) >> 32`;
//! `PROBES` bit positions (0..512 within the line) are successive 9-bit
//! chunks of `h * 0x9e37_79b9_7f4a_7c15`. In memory only, never on disk, so
//! free to change.
//!
//! Thread-safety: `add` and `may_contain` take `&self` and may race; bits
//! are set with relaxed `fetch_or` and read with relaxed loads. A reader sees
//! every key whose write it can see: the writer sets the bits before it
//! publishes the write's sequence number (release), and readers load that
//! number (acquire) before they look, so there are no false negatives for
//! visible writes. Invariant: bits are only ever set, never cleared.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use xxhash_rust::xxh3::xxh3_64;

/// Bits set per key: about 1% false positives at 10 bits per key.
const PROBES: u32 = 6;

/// One 64-byte line of 512 bits.
#[repr(align(64))]
struct Line([AtomicU64; 8]);

/// See the module comment.
pub(crate) struct MemBloom {
    lines: Box<[Line]>,
    num_lines: u32,
}

impl MemBloom {
    /// A filter of about `bytes` bytes (at least one line, at most 2^32
    /// lines).
    pub(crate) fn new(bytes: usize) -> MemBloom {
        let num_lines = (bytes / 64).clamp(1, u32::MAX as usize);
        let lines = (0..num_lines)
            .map(|_| Line(std::array::from_fn(|_| AtomicU64::new(0))))
            .collect();
        MemBloom {
            lines,
            num_lines: num_lines as u32,
        }
    }

    /// The hash the filter uses for `user_key`.
    #[inline]
    pub(crate) fn hash(user_key: &[u8]) -> u64 {
        xxh3_64(user_key)
    }

    #[inline]
    fn line(&self, h: u64) -> &Line {
        let i = (((h >> 32) * u64::from(self.num_lines)) >> 32) as usize;
        // i < num_lines by construction; the fallback is never taken.
        self.lines.get(i).unwrap_or(&self.lines[0])
    }

    /// Records the key with hash `h`.
    #[inline]
    pub(crate) fn add(&self, h: u64) {
        let line = self.line(h);
        let mut x = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for _ in 0..PROBES {
            let bit = (x >> 55) as usize;
            let (word, mask) = (&line.0[bit / 64], 1u64 << (bit % 64));
            // Skip the read-modify-write when the bit is set: keeps hot lines
            // shared between concurrent writers.
            if word.load(Relaxed) & mask == 0 {
                word.fetch_or(mask, Relaxed);
            }
            x <<= 9;
        }
    }

    /// False when no key with hash `h` was added.
    #[inline]
    pub(crate) fn may_contain(&self, h: u64) -> bool {
        let line = self.line(h);
        let mut x = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for _ in 0..PROBES {
            let bit = (x >> 55) as usize;
            if line.0[bit / 64].load(Relaxed) & (1u64 << (bit % 64)) == 0 {
                return false;
            }
            x <<= 9;
        }
        true
    }

    /// Bytes of memory held.
    pub(crate) fn size(&self) -> usize {
        self.lines.len() * std::mem::size_of::<Line>()
    }
}

#[cfg(test)]
mod tests;
