//! Seeds: the base seed, per-thread seeds, and every derived stream.
//!
//! As RocksDB ≥ 7.2: base = `--seed`, or the time in microseconds when it is
//! 0; thread seed = base + C where C is a process-wide counter incremented
//! before each thread is created, across the whole `--benchmarks` list.
//! Beyond db_bench (issue #9640) every other stream derives from these too:
//! the filluniquerandom shuffle and the value generator use a mix of the
//! thread seed, unless `--db_bench_compat_values=1` keeps the fixed 301 value
//! seed. Thread-safe (atomic counter).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::values::DB_BENCH_VALUE_SEED;

/// SplitMix64 finalizer: spreads a seed so derived streams are unrelated.
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const VALUE_TAG: u64 = 0x5641_4c55_4553_0001; // "VALUES"
const SHUFFLE_TAG: u64 = 0x5348_5546_464c_0002; // "SHUFFL"

/// The seed source of one process.
#[derive(Debug)]
pub struct Seeds {
    base: u64,
    counter: AtomicU64,
    compat_values: bool,
}

impl Seeds {
    /// From `--seed` (0 = time-based, `now_micros`). Returns the message
    /// db_bench prints when it picks the seed itself.
    pub fn new(flag_seed: u64, now_micros: u64, compat_values: bool) -> (Seeds, Option<String>) {
        let (base, msg) = if flag_seed == 0 {
            (
                now_micros,
                Some(format!("Set seed to {now_micros} because --seed was 0")),
            )
        } else {
            (flag_seed, None)
        };
        (
            Seeds {
                base,
                counter: AtomicU64::new(0),
                compat_values,
            },
            msg,
        )
    }

    /// The base seed.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// The seed of the next thread to be created: base + (++C).
    pub fn next_thread_seed(&self) -> u64 {
        let c = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        self.base.wrapping_add(c)
    }

    /// The value-generator seed of a thread (301 in compat mode).
    pub fn value_seed(&self, thread_seed: u64) -> u32 {
        if self.compat_values {
            DB_BENCH_VALUE_SEED
        } else {
            (mix64(thread_seed ^ VALUE_TAG) >> 33) as u32
        }
    }

    /// The seed of the filluniquerandom shuffle of a thread.
    pub fn shuffle_seed(&self, thread_seed: u64) -> u64 {
        mix64(thread_seed ^ SHUFFLE_TAG)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn zero_seed_is_time_based_and_announced() {
        let (s, msg) = Seeds::new(0, 1_700_000_000_123_456, false);
        assert_eq!(s.base(), 1_700_000_000_123_456);
        assert_eq!(
            msg.as_deref(),
            Some("Set seed to 1700000000123456 because --seed was 0")
        );
        let (s, msg) = Seeds::new(42, 99, false);
        assert_eq!(s.base(), 42);
        assert!(msg.is_none());
    }

    #[test]
    fn thread_seeds_distinct_across_benchmarks_and_threads() {
        let (s, _) = Seeds::new(12345, 0, false);
        // Benchmark 1 with 4 threads, benchmark 2 with 4 threads (+1 writer).
        let mut all = Vec::new();
        for _ in 0..4 {
            all.push(s.next_thread_seed());
        }
        assert_eq!(all[0], 12346); // first thread of first benchmark = base + 1
        for _ in 0..5 {
            all.push(s.next_thread_seed());
        }
        let set: BTreeSet<u64> = all.iter().copied().collect();
        assert_eq!(set.len(), all.len());
        let values: BTreeSet<u32> = all.iter().map(|&t| s.value_seed(t)).collect();
        assert_eq!(values.len(), all.len());
        let shuffles: BTreeSet<u64> = all.iter().map(|&t| s.shuffle_seed(t)).collect();
        assert_eq!(shuffles.len(), all.len());
    }

    #[test]
    fn compat_values_use_301() {
        let (s, _) = Seeds::new(5, 0, true);
        assert_eq!(s.value_seed(6), 301);
        assert_eq!(s.value_seed(7), 301);
    }
}
