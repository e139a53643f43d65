//! A small `cache_bench`: threads hammer a [`BlockCache`] with a mix of
//! lookups (insert on miss, as a block reader does) and inserts, for a fixed
//! time, and report operations per second.
//!
//! Values are `Arc<u64>` allocated per insert (a block read allocates too),
//! charged 4 KiB each. Keys are uniform over a key space chosen relative to
//! the number of entries that fit. Threads own their RNG (xorshift) and only
//! share the cache and a stop flag. Run the printed table with
//! `cargo test --release -- --ignored --nocapture cache_bench`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{BlockCache, CacheKey, Priority};

/// One measured configuration.
#[derive(Debug, Clone)]
pub(crate) struct BenchResult {
    /// Operations completed by all threads.
    pub ops: u64,
    /// Wall time.
    pub secs: f64,
    /// Lookups that hit, over lookups.
    pub hit_rate: f64,
}

impl BenchResult {
    /// Operations per second over all threads.
    pub(crate) fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs
    }
}

/// Charge of each inserted value.
pub(crate) const BENCH_CHARGE: usize = 4096;

/// Runs `threads` threads for `duration`. Each operation picks a key
/// uniformly in `0..key_space`; with probability `lookup_pct`% it looks the
/// key up and inserts it on a miss, otherwise it inserts it.
pub(crate) fn cache_bench(
    cache: &BlockCache<Arc<u64>>,
    threads: usize,
    lookup_pct: u32,
    key_space: u64,
    duration: Duration,
) -> BenchResult {
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let totals: Vec<(u64, u64, u64)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                s.spawn(move || worker(cache, stop, t as u64, lookup_pct, key_space))
            })
            .collect();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or((0, 0, 0)))
            .collect()
    });
    let secs = start.elapsed().as_secs_f64();
    let ops = totals.iter().map(|t| t.0).sum();
    let lookups: u64 = totals.iter().map(|t| t.1).sum();
    let hits: u64 = totals.iter().map(|t| t.2).sum();
    BenchResult {
        ops,
        secs,
        hit_rate: if lookups == 0 {
            0.0
        } else {
            hits as f64 / lookups as f64
        },
    }
}

/// Returns (ops, lookups, hits).
fn worker(
    cache: &BlockCache<Arc<u64>>,
    stop: &AtomicBool,
    seed: u64,
    lookup_pct: u32,
    key_space: u64,
) -> (u64, u64, u64) {
    let mut rng =
        0x9E37_79B9_7F4A_7C15u64 ^ (seed.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut ops, mut lookups, mut hits) = (0u64, 0u64, 0u64);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..256 {
            let r = next();
            let k = (r >> 8) % key_space.max(1);
            let key = CacheKey::new(k >> 20, (k & 0xf_ffff) * BENCH_CHARGE as u64);
            if (r & 0xff) as u32 * 100 < lookup_pct * 256 {
                lookups += 1;
                match cache.lookup(&key, Priority::Low) {
                    Some(v) => {
                        hits += 1;
                        debug_assert_eq!(*v, k);
                    }
                    None => {
                        let _ = cache.insert(key, Arc::new(k), BENCH_CHARGE, Priority::Low);
                    }
                }
            } else {
                let _ = cache.insert(key, Arc::new(k), BENCH_CHARGE, Priority::Low);
            }
            ops += 1;
        }
    }
    (ops, lookups, hits)
}

#[cfg(test)]
mod tests;
