//! IO policy above the file-system seam: what the engine's reads and writes
//! cost and how fast they may go. `fs` performs IO; this module decides
//! and records (the rate limiter that paces flush and compaction writes,
//! the accounting of bytes and requests per purpose, the writeback cadence
//! of `bytes_per_sync`).
pub(crate) mod accounting;

mod append_hook;
mod limited_file;
mod range_sync;
mod rate_limiter;

pub(crate) use limited_file::RateLimit;
pub(crate) use range_sync::RangeSyncer;
pub use rate_limiter::{IoPriority, RateLimiter};
