//! Stress and crash testing for Shale.
//!
//! - [`lincheck`]: a linearizability checker (Wing & Gong with Lowe's
//!   memoization, partitioned by key) with Porcupine-compatible JSON.
//! - [`recorder`]: records concurrent histories on a [`store::Store`] with
//!   per-thread logs and a shared monotonic [`clock::Clock`].
//! - [`history_log`]: histories on disk that survive `kill -9`, loaded as
//!   one history across every crash.
//! - [`stress`]: the `shale-stress` tool (RocksDB db_stress style): random
//!   concurrent operations checked against an expected-state file that
//!   survives `kill -9`.
//!
//! This file only declares modules.

pub mod clock;
pub mod history_log;
pub mod lincheck;
pub mod recorder;
pub mod store;
pub mod stress;
