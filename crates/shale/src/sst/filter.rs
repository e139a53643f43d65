//! The full-file bloom filter over user keys, cache-line local like
//! RocksDB's FastLocalBloom: each key touches one 64-byte line.
//!
//! For a key with `h = xxh3_64(user_key)`:
//! - line = `((h >> 32) * num_lines) >> 32` (the high 32 bits pick the line,
//!   by multiply-shift rather than modulo);
//! - probes: `p = h as u32`; for each of `num_probes` probes, bit
//!   `p >> 23` (0..512) of the line is set/tested, then
//!   `p = p * 0x9e37_79b9` (wrapping). Bit `b` of a line is bit `b % 8` of
//!   byte `b / 8`.
//!
//! Block layout (stored with a normal block trailer, never compressed by the
//! builder): `num_lines × 64 bytes ++ fixed32 num_lines ++ u8 num_probes`.
//! Readers take both numbers from the block, never from options. A filter
//! with zero lines (a table without keys) matches nothing.
//!
//! FROZEN: the hash, the line choice, the probe sequence and the layout are
//! on disk. A different filter would be stored under a new metaindex name.
//!
//! With a prefix extractor the same filter also (or, without whole-key
//! filtering, only) holds the prefix of each key: a prefix is hashed and
//! probed exactly like a key (see `docs/format/sst.md`, "Prefix filters").
//!
//! Thread-safety: the builder is owned by one table builder; a
//! [`BloomFilter`] is immutable and shared.

use xxhash_rust::xxh3::xxh3_64;

use crate::codec::{decode_fixed32, put_fixed32};
use crate::error::{Error, Result};

/// Bytes per line: one cache line, 512 bits.
const LINE_BYTES: usize = 64;
/// Bytes after the lines: fixed32 num_lines, u8 num_probes.
const FILTER_TRAILER_LEN: usize = 5;
/// Largest probe count a reader accepts.
const MAX_PROBES: u32 = 30;
/// Multiplier between probes (32-bit golden ratio).
const PROBE_MULT: u32 = 0x9e37_79b9;

/// Probes for a given density, as RocksDB's FastLocalBloom chooses them for
/// a 512-bit cache-local filter (measured optima, not `0.69 × bits`).
pub(crate) fn choose_num_probes(millibits_per_key: u64) -> u32 {
    match millibits_per_key {
        0..=2080 => 1,
        2081..=3580 => 2,
        3581..=5100 => 3,
        5101..=6640 => 4,
        6641..=8300 => 5,
        8301..=10070 => 6,
        10071..=11720 => 7,
        11721..=14001 => 8,
        14002..=16050 => 9,
        16051..=18300 => 10,
        18301..=22001 => 11,
        22002..=25501 => 12,
        25502..=50000 => ((millibits_per_key - 1) / 2000 - 1) as u32,
        _ => 24,
    }
}

#[inline]
fn line_of(h: u64, num_lines: u32) -> usize {
    (((h >> 32) * u64::from(num_lines)) >> 32) as usize
}

/// Collects key hashes while a table is built.
pub(crate) struct FilterBuilder {
    /// Thousandths of a bit per key (fractional densities, per level).
    millibits_per_key: u64,
    hashes: Vec<u64>,
    /// Hash of the last prefix added (prefixes of sorted keys arrive in
    /// runs, interleaved with whole keys).
    last_prefix: Option<u64>,
}

impl FilterBuilder {
    /// Requires `bits_per_key > 0` (at most 100).
    pub(crate) fn new(bits_per_key: f64) -> FilterBuilder {
        debug_assert!(bits_per_key > 0.0);
        FilterBuilder {
            millibits_per_key: ((bits_per_key * 1000.0).round() as u64).clamp(1, 100_000),
            hashes: Vec::new(),
            last_prefix: None,
        }
    }

    /// Adds a key's prefix; a run of equal prefixes is counted once.
    pub(crate) fn add_prefix(&mut self, prefix: &[u8]) {
        let h = xxh3_64(prefix);
        if self.last_prefix != Some(h) {
            self.last_prefix = Some(h);
            if self.hashes.last() != Some(&h) {
                self.hashes.push(h);
            }
        }
    }

    /// Bytes held for the keys added so far.
    pub(crate) fn memory_usage(&self) -> usize {
        self.hashes.capacity() * std::mem::size_of::<u64>()
    }

    /// Adds a user key. Consecutive duplicates (versions of one user key)
    /// are counted once.
    pub(crate) fn add(&mut self, user_key: &[u8]) {
        let h = xxh3_64(user_key);
        if self.hashes.last() != Some(&h) {
            self.hashes.push(h);
        }
    }

    /// Appends the filter block to `dst` and clears the builder.
    pub(crate) fn finish(&mut self, dst: &mut Vec<u8>) {
        let n = self.hashes.len() as u64;
        let bits = n.saturating_mul(self.millibits_per_key).div_ceil(1000);
        let lines = bits
            .div_ceil(8 * LINE_BYTES as u64)
            .min(u64::from(u32::MAX)) as u32;
        let num_probes = if lines == 0 {
            1
        } else {
            // Density actually achieved after rounding up to whole lines.
            choose_num_probes(u64::from(lines) * 512 * 1000 / n.max(1))
        };
        let start = dst.len();
        dst.resize(start + lines as usize * LINE_BYTES, 0);
        let area = &mut dst[start..];
        for &h in &self.hashes {
            let line = line_of(h, lines) * LINE_BYTES;
            let mut p = h as u32;
            for _ in 0..num_probes {
                let bit = (p >> 23) as usize;
                area[line + bit / 8] |= 1 << (bit % 8);
                p = p.wrapping_mul(PROBE_MULT);
            }
        }
        put_fixed32(dst, lines);
        dst.push(num_probes as u8);
        self.hashes.clear();
        self.last_prefix = None;
    }
}

/// A decoded filter, owned by a `Table` or held in the block cache.
pub(crate) struct BloomFilter {
    data: Vec<u8>,
    num_lines: u32,
    num_probes: u32,
}

impl BloomFilter {
    /// Parses a filter block read from `offset` of `file`.
    pub(crate) fn new(mut data: Vec<u8>, file: &str, offset: u64) -> Result<BloomFilter> {
        let corrupt = |what: String| Error::corruption(file, offset, what);
        let area = data
            .len()
            .checked_sub(FILTER_TRAILER_LEN)
            .ok_or_else(|| corrupt("filter block too short".into()))?;
        let num_lines = data.get(area..).and_then(decode_fixed32).unwrap_or(0);
        let num_probes = u32::from(data.get(area + 4).copied().unwrap_or(0));
        if (num_lines as usize).checked_mul(LINE_BYTES) != Some(area) {
            return Err(corrupt(format!(
                "filter declares {num_lines} lines but has {area} bytes of bits"
            )));
        }
        if !(1..=MAX_PROBES).contains(&num_probes) {
            return Err(corrupt(format!("filter has {num_probes} probes")));
        }
        data.truncate(area);
        Ok(BloomFilter {
            data,
            num_lines,
            num_probes,
        })
    }

    /// False when `user_key` is certainly not in the table.
    pub(crate) fn may_contain(&self, user_key: &[u8]) -> bool {
        if self.num_lines == 0 {
            return false;
        }
        let h = xxh3_64(user_key);
        let start = line_of(h, self.num_lines) * LINE_BYTES;
        let Some(line) = self.data.get(start..start + LINE_BYTES) else {
            return true;
        };
        let mut p = h as u32;
        for _ in 0..self.num_probes {
            let bit = (p >> 23) as usize;
            if line.get(bit / 8).copied().unwrap_or(0xff) & (1 << (bit % 8)) == 0 {
                return false;
            }
            p = p.wrapping_mul(PROBE_MULT);
        }
        true
    }

    /// Bytes of memory held (the charge when cached).
    pub(crate) fn size(&self) -> usize {
        self.data.capacity() + std::mem::size_of::<BloomFilter>()
    }

    #[cfg(test)]
    pub(crate) fn num_probes(&self) -> u32 {
        self.num_probes
    }

    #[cfg(test)]
    pub(crate) fn num_lines(&self) -> u32 {
        self.num_lines
    }
}

#[cfg(test)]
mod tests;
