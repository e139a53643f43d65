//! Rate limiting (`--benchmark_write_rate_limit`, `--benchmark_read_rate_limit`).
//!
//! `RateLimiter` is a shared virtual-clock limiter: each request reserves
//! `n / rate` seconds after the previous reservation and sleeps until its
//! slot (bursts of at most ~100 ms are allowed, like RocksDB's 100 ms
//! refill). Closed-loop throttling only: its sleeps may overshoot, which is
//! harmless there because the latency clock restarts after them. Open-loop
//! pacing, where oversleep would be charged to the engine, is `pacer`.
//! Thread-safe (a mutex around one number).

use std::sync::Mutex;
use std::time::Duration;

use crate::clock::now_micros;

/// A token bucket shared by threads: `rate` units per second.
#[derive(Debug)]
pub struct RateLimiter {
    rate: f64,
    next_free: Mutex<f64>,
}

const BURST_MICROS: f64 = 100_000.0;

impl RateLimiter {
    /// `rate` units (bytes or ops) per second; must be > 0.
    pub fn new(rate: u64) -> RateLimiter {
        debug_assert!(rate > 0);
        RateLimiter {
            rate: rate as f64,
            next_free: Mutex::new(now_micros() as f64),
        }
    }

    /// Reserves `n` units and returns how long the caller must wait (µs).
    pub fn reserve(&self, n: u64, now: u64) -> u64 {
        let now = now as f64;
        let mut next = self.next_free.lock().unwrap_or_else(|e| e.into_inner());
        let start = next.max(now - BURST_MICROS);
        *next = start + n as f64 * 1e6 / self.rate;
        (*next - now).max(0.0) as u64
    }

    /// Reserves `n` units and sleeps until they are available.
    pub fn request(&self, n: u64) {
        let wait = self.reserve(n, now_micros());
        if wait > 0 {
            std::thread::sleep(Duration::from_micros(wait));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_spaces_requests() {
        let l = RateLimiter::new(1000); // 1000 units/s = 1 ms per unit
        let t = now_micros() + 1_000_000;
        assert_eq!(l.reserve(100, t), 0); // burst credit: starts 100 ms back
        let w = l.reserve(100, t);
        assert!((99_000..=100_001).contains(&w), "{w}");
        let w = l.reserve(1000, t);
        assert!((1_099_000..=1_100_001).contains(&w), "{w}");
    }
}
