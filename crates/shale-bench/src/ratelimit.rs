//! Rate limiting and open-loop pacing.
//!
//! `RateLimiter` is a shared virtual-clock limiter: each request reserves
//! `n / rate` seconds after the previous reservation and sleeps until its
//! slot (bursts of at most ~100 ms are allowed, like RocksDB's 100 ms
//! refill). `Pacer` gives one thread fixed intended start times for
//! open-loop mode. RateLimiter is thread-safe (a mutex around one number).

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

/// Open-loop schedule of one thread: op i is due at `start + i / rate`.
#[derive(Debug, Clone)]
pub struct Pacer {
    start: u64,
    interval: f64,
    issued: u64,
}

impl Pacer {
    /// `rate` ops per second for this thread, starting now.
    pub fn new(rate: f64) -> Pacer {
        debug_assert!(rate > 0.0);
        Pacer {
            start: now_micros(),
            interval: 1e6 / rate,
            issued: 0,
        }
    }

    /// The intended start of the next op (µs); sleeps until then if early.
    /// When behind schedule it returns a time in the past, so that the
    /// latency measured from it includes the queueing delay.
    pub fn next_op(&mut self) -> u64 {
        let due = self.start + (self.issued as f64 * self.interval) as u64;
        self.issued += 1;
        let now = now_micros();
        if due > now {
            std::thread::sleep(Duration::from_micros(due - now));
        }
        due
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

    #[test]
    fn pacer_keeps_intended_times_when_late() {
        let mut p = Pacer::new(1000.0);
        let a = p.next_op();
        std::thread::sleep(Duration::from_millis(20));
        let b = p.next_op();
        assert_eq!(b - a, 1000);
        assert!(now_micros() - b >= 19_000); // latency includes the lateness
        let c = p.next_op();
        assert_eq!(c - b, 1000);
    }
}
