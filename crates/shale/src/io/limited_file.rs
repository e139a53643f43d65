//! [`RateLimit`]: a [`WritableFile`]'s appends first ask a
//! [`RateLimiter`] for their bytes (RocksDB's `WritableFileWriter` with a
//! rate limiter). Flush and compaction outputs are written through it.
//!
//! Only appends are charged (`flush`, `sync` and the rest pass through).
//! Once the cancel flag is set (the DB is closing), appends stop waiting
//! and go through at once: closing never waits on the limiter, and the
//! jobs' own shutdown checks end them.
//!
//! Thread-safety: owned by one writer, like the file it wraps.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::fs::WritableFile;

use super::append_hook::{AppendHook, Hooked};

use super::rate_limiter::{IoPriority, RateLimiter};

/// Which limiter a job's writes go through, at which priority, and the
/// flag that ends its waits.
#[derive(Clone)]
pub(crate) struct RateLimit {
    pub limiter: Arc<RateLimiter>,
    pub priority: IoPriority,
    /// Set when the DB closes ([`RateLimiter::wake_all`] then wakes the
    /// waiters).
    pub cancel: Arc<AtomicBool>,
}

impl RateLimit {
    /// `file` behind this limit.
    pub(crate) fn wrap(&self, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        Hooked::boxed(file, self.clone())
    }
}

/// Each append first asks the limiter for its bytes.
impl AppendHook for RateLimit {
    fn before(&mut self, len: usize) {
        // Cancelled or not, the bytes are written: cancellation only ends
        // the wait.
        let _ = self
            .limiter
            .request(len as u64, self.priority, &self.cancel);
    }
}

#[cfg(test)]
mod tests;
