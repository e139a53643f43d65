//! Checks for Shale's on-disk decoders, one entry point per decoder. The
//! cargo-fuzz targets in `/fuzz` are one-line wrappers around them, and
//! `cargo test -p shale-fuzz` runs them over the seed corpus in
//! `/fuzz/corpus` plus seeded random mutations (see `/fuzz/README.md`).
//!
//! Each function takes arbitrary bytes, runs one decoder over them the way
//! the engine does (through `shale::testing`, the engine's doc-hidden
//! decoder surface behind feature `testing`), and returns the decoder's
//! `Result`. Bad input must give `Err` (normally `Corruption` naming the
//! file); it must never panic, hang or allocate without bound. The functions
//! also check *differential* invariants that hold for any input (a reference
//! decoder, forward versus backward iteration, re-encoding, the
//! recovery-mode table) with `assert!`: a panic here is always an engine
//! bug, never a harness limitation.
//!
//! Checksums would stop almost every mutated input at the first check, so
//! [`table`], [`wal`] and [`blob_record`] run twice: on the raw bytes, then
//! on a copy whose block trailers / record headers / blob checksums were
//! recomputed ([`repair_sst`], [`repair_wal`], [`repair_blob`]), which lets
//! the fuzzer reach the block, properties, filter, compression,
//! fragment-reassembly and blob-record decoders behind the checksums.
//!
//! Thread-safety: plain functions over borrowed bytes; no shared state.

mod blob;
mod block;
mod codec;
mod table;
mod version_edit;
mod wal;
mod write_batch;

pub use blob::{blob_record, repair_blob};
pub use block::block;
pub use table::{repair_sst, table};
pub use version_edit::version_edit;
pub use wal::{repair_wal, wal};
pub use write_batch::write_batch;

use shale::Error;

/// File name used in errors for fuzzed SSTs and blocks.
pub const SST_FILE: &str = "000001.sst";
/// File name used in errors for fuzzed logs.
pub const WAL_FILE: &str = "000007.log";
/// Log number the fuzzed logs are bound to (the seed corpus uses it too).
pub const WAL_NUMBER: u64 = 7;
/// File name used in errors for fuzzed MANIFEST records.
pub const MANIFEST_FILE: &str = "MANIFEST-000001";
/// File name used in errors for fuzzed blob files.
pub const BLOB_FILE: &str = "000009.blob";
/// Number of the fuzzed blob files (bound into their record checksums; the
/// seed corpus uses it too).
pub const BLOB_NUMBER: u64 = 9;

/// A check: arbitrary bytes in, the decoder's result (a count of decoded
/// items) out.
pub type Target = fn(&[u8]) -> shale::Result<usize>;

/// Every check, by fuzz-target name (the names of `/fuzz/fuzz_targets/*.rs`
/// and of the corpus directories).
pub const TARGETS: [(&str, Target); 6] = [
    ("block", block),
    ("table", table),
    ("wal", wal),
    ("version_edit", version_edit),
    ("write_batch", write_batch),
    ("blob_record", blob_record),
];

/// True when `e` is `Corruption` naming `file`.
fn is_corruption_in(e: &Error, file: &str) -> bool {
    matches!(e, Error::Corruption { file: f, .. } if f == file)
}
