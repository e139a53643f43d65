//! The history clock: nanoseconds since a start `Instant`, fenced so a time
//! taken before a call is not reordered after the call's first memory access
//! (and the return time not before its last).
//!
//! `Instant` is monotonic (CLOCK_MONOTONIC on Linux) and shared by all
//! threads, so times from different clients are comparable. `Clock` is
//! `Copy`: a history that spans a reopen keeps using the same clock.

use std::sync::atomic::{fence, Ordering};
use std::time::Instant;

/// A shared monotonic clock for recording histories.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    /// A clock reading 0 now.
    pub fn start() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }

    /// Nanoseconds since the start.
    pub fn now(&self) -> u64 {
        fence(Ordering::SeqCst);
        let t = self.start.elapsed().as_nanos() as u64;
        fence(Ordering::SeqCst);
        t
    }
}

impl Default for Clock {
    fn default() -> Self {
        Clock::start()
    }
}
