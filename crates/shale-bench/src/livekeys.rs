//! An estimate of the live user data, for space-amplification: a bitmap
//! over the key space `[0, num)` set by puts and cleared by deletes issued
//! in this process. With `--use_existing_db` the bitmap starts full (the
//! DB is assumed filled, as benchmark_compare.sh's sequence does).
//! Thread-safe (atomic words); disabled above 2^32 keys (512 MiB bitmap).

use std::sync::atomic::{AtomicU64, Ordering};

/// Bitmap of live key numbers.
#[derive(Debug)]
pub struct LiveKeys {
    words: Vec<AtomicU64>,
    num: u64,
}

const MAX_TRACKED: u64 = 1 << 32;

impl LiveKeys {
    /// A bitmap over `[0, num)`, all live if `full`.
    pub fn new(num: u64, full: bool) -> LiveKeys {
        if num > MAX_TRACKED {
            return LiveKeys {
                words: Vec::new(),
                num,
            };
        }
        let n = num.div_ceil(64) as usize;
        let fill = if full { u64::MAX } else { 0 };
        let words: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(fill)).collect();
        if full && !num.is_multiple_of(64) {
            if let Some(last) = words.last() {
                last.store((1u64 << (num % 64)) - 1, Ordering::Relaxed);
            }
        }
        LiveKeys { words, num }
    }

    /// Marks key `v` written.
    #[inline]
    pub fn put(&self, v: u64) {
        if let Some(w) = self.words.get((v / 64) as usize) {
            let bit = 1u64 << (v % 64);
            if w.load(Ordering::Relaxed) & bit == 0 {
                w.fetch_or(bit, Ordering::Relaxed);
            }
        }
    }

    /// Marks key `v` deleted.
    #[inline]
    pub fn delete(&self, v: u64) {
        if let Some(w) = self.words.get((v / 64) as usize) {
            w.fetch_and(!(1u64 << (v % 64)), Ordering::Relaxed);
        }
    }

    /// Clears everything (the DB was destroyed).
    pub fn clear(&self) {
        for w in &self.words {
            w.store(0, Ordering::Relaxed);
        }
    }

    /// Number of live keys, or None when not tracked.
    pub fn count(&self) -> Option<u64> {
        if self.words.is_empty() && self.num > 0 {
            return None;
        }
        Some(
            self.words
                .iter()
                .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
                .sum(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_puts_and_deletes() {
        let l = LiveKeys::new(130, false);
        for v in [0, 1, 64, 129, 1, 500] {
            l.put(v);
        }
        assert_eq!(l.count(), Some(4)); // 500 is outside the key space
        l.delete(1);
        l.delete(7);
        assert_eq!(l.count(), Some(3));
        l.clear();
        assert_eq!(l.count(), Some(0));
        assert_eq!(LiveKeys::new(130, true).count(), Some(130));
        assert_eq!(LiveKeys::new(128, true).count(), Some(128));
        assert_eq!(LiveKeys::new(MAX_TRACKED + 1, false).count(), None);
    }
}
