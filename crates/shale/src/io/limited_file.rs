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
mod tests {
    use super::*;
    use crate::fs::{FileSystem, MemFileSystem};
    use std::path::Path;
    use std::sync::atomic::Ordering;

    #[test]
    fn appends_are_charged_and_pass_through() {
        let fs = MemFileSystem::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let limiter = Arc::new(RateLimiter::new(1 << 30).unwrap());
        let limit = RateLimit {
            limiter: Arc::clone(&limiter),
            priority: IoPriority::High,
            cancel: Arc::new(AtomicBool::new(false)),
        };
        let mut f = limit.wrap(fs.create(Path::new("/d/1.sst")).unwrap());
        f.append(b"hello").unwrap();
        f.append(&[7u8; 1000]).unwrap();
        f.sync().unwrap();
        assert_eq!(f.len(), 1005);
        assert_eq!(
            limiter.get_total_bytes_through(Some(IoPriority::High)),
            1005
        );
        assert_eq!(limiter.get_total_requests(None), 2);
        // Cancelled: appends go through without asking the limiter.
        limit.cancel.store(true, Ordering::Release);
        f.append(b"more").unwrap();
        assert_eq!(f.len(), 1009);
        assert_eq!(limiter.get_total_requests(None), 2);
        drop(f);
        assert_eq!(fs.read_all(Path::new("/d/1.sst")).unwrap().len(), 1009);
    }
}
