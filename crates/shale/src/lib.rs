//! Shale: an embedded, ordered, crash-safe LSM-tree key-value store.
//!
//! This file only declares modules and re-exports the public API.

#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod base;
mod codec;
mod db;
mod error;
pub mod fs;
mod iter;
mod options;

pub use base::{FileNum, SeqNo};
pub use db::Snapshot;
pub use error::{Error, Result};
pub use options::{CacheType, Compression, Options, ReadOptions, WalRecoveryMode, WriteOptions};
