//! db_bench's key layout (`GenerateKeyFromInt`), byte for byte.
//!
//! A key is exactly `key_size` bytes: an optional big-endian prefix
//! (`v % (num / keys_per_prefix)`, low `min(prefix_size, 8)` bytes, then ASCII
//! '0' up to `prefix_size`), the low `min(remaining, 8)` bytes of `v`
//! big-endian, then ASCII '0' padding. Immutable; shared freely.

use crate::error::{bail, Result};

/// Builds db_bench keys for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGen {
    key_size: usize,
    prefix_size: usize,
    keys_per_prefix: u64,
    num: u64,
}

impl KeyGen {
    /// Validates the layout flags (`prefix_size <= key_size`, enough keys
    /// for at least one prefix).
    pub fn new(
        key_size: usize,
        prefix_size: usize,
        keys_per_prefix: u64,
        num: u64,
    ) -> Result<KeyGen> {
        if key_size == 0 {
            bail!("--key_size must be > 0");
        }
        if prefix_size > key_size {
            bail!("--prefix_size ({prefix_size}) must be <= --key_size ({key_size})");
        }
        if keys_per_prefix > 0 && num / keys_per_prefix == 0 {
            bail!("--keys_per_prefix ({keys_per_prefix}) must be <= --num ({num})");
        }
        Ok(KeyGen {
            key_size,
            prefix_size,
            keys_per_prefix,
            num,
        })
    }

    /// Key length in bytes.
    pub fn key_size(&self) -> usize {
        self.key_size
    }

    /// Writes the key for `v` into `out` (`out.len()` must be `key_size`).
    pub fn fill(&self, v: u64, out: &mut [u8]) {
        debug_assert_eq!(out.len(), self.key_size);
        let mut pos = 0;
        if let Some(num_prefix) = self.num.checked_div(self.keys_per_prefix) {
            let prefix = v % num_prefix;
            let n = self.prefix_size.min(8);
            write_be_low(prefix, &mut out[..n]);
            for b in &mut out[n..self.prefix_size] {
                *b = b'0';
            }
            pos = self.prefix_size;
        }
        let n = (self.key_size - pos).min(8);
        write_be_low(v, &mut out[pos..pos + n]);
        for b in &mut out[pos + n..] {
            *b = b'0';
        }
    }

    /// Convenience: the key for `v` as a new vector.
    pub fn key(&self, v: u64) -> Vec<u8> {
        let mut k = vec![0u8; self.key_size];
        self.fill(v, &mut k);
        k
    }
}

/// Writes the low `out.len()` (≤ 8) bytes of `v`, most significant first.
fn write_be_low(v: u64, out: &mut [u8]) {
    let n = out.len();
    debug_assert!(n <= 8);
    for (i, b) in out.iter_mut().enumerate() {
        *b = (v >> ((n - i - 1) * 8)) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02X}")).collect()
    }

    #[test]
    fn db_bench_examples() {
        // DB_BENCH.md §2.1, verified with `ldb scan --key_hex`.
        let k = KeyGen::new(16, 0, 0, 1_000_000).unwrap();
        assert_eq!(hex(&k.key(2)), "00000000000000023030303030303030");
        let k = KeyGen::new(6, 0, 0, 1_000_000).unwrap();
        assert_eq!(hex(&k.key(299)), "00000000012B");
        let k = KeyGen::new(16, 4, 10, 100).unwrap();
        assert_eq!(hex(&k.key(99)), "00000009000000000000006330303030");
        // prefix_size 10, key_size 20: <8-byte BE prefix> 3030 <8-byte BE v> 3030.
        let k = KeyGen::new(20, 10, 10, 100).unwrap();
        assert_eq!(hex(&k.key(99)), "0000000000000009303000000000000000633030");
    }

    #[test]
    fn order_matches_numeric_order_without_prefix() {
        let k = KeyGen::new(16, 0, 0, 1000).unwrap();
        for v in 0..999u64 {
            assert!(k.key(v) < k.key(v + 1));
        }
    }

    #[test]
    fn short_keys_wrap() {
        let k = KeyGen::new(1, 0, 0, 1000).unwrap();
        assert_eq!(k.key(256), k.key(0));
        assert_eq!(k.key(257), vec![1]);
    }

    #[test]
    fn rejects_bad_layouts() {
        assert!(KeyGen::new(4, 5, 1, 10).is_err());
        assert!(KeyGen::new(16, 4, 100, 10).is_err());
        assert!(KeyGen::new(0, 0, 0, 10).is_err());
    }
}
