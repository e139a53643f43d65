//! Shale: an embedded, ordered, crash-safe LSM-tree key-value store.
//!
//! This file only declares modules and re-exports the public API.

#![forbid(unsafe_op_in_unsafe_fn)]
// Engine code never unwraps or expects (it returns an error, or states the
// invariant with a non-panicking construct), and every unsafe block says
// why it is sound. Test modules may unwrap (clippy.toml). Set here rather
// than in Cargo.toml's [lints], which would also reach the helpers of the
// ~45 integration-test crates.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::undocumented_unsafe_blocks
)]
#![warn(missing_docs)]

mod base;
mod batch;
mod bg;
mod blob;
mod build;
mod cache;
mod cf;
mod codec;
mod compaction;
mod db;
mod error;
mod events;
mod flush;
pub mod fs;
mod io;
mod iter;
mod memory;
mod memtable;
mod merge;
mod observe;
mod ops;
mod options;
mod range_del;
mod shared;
mod sst;
mod stats;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod sync_point;
#[cfg(not(feature = "testing"))]
#[doc(hidden)]
#[macro_export]
/// Without feature `testing`, sync points compile to nothing.
macro_rules! sync_point {
    ($name:expr) => {};
}
mod table_cache;
#[cfg(feature = "testing")]
#[doc(hidden)]
pub mod testing;
pub mod tools;
mod txn;
mod version;
mod wal;

pub use base::expiry::{Clock, SystemClock};
pub use base::{FileNum, PrefixExtractor, SeqNo};
pub use batch::{ColumnFamilyId, WriteBatch, MAX_KEY_LEN, MAX_VALUE_LEN};
pub use build::user_filter::{CompactionFilter, FilterDecision};
pub use cf::Cf;
pub use db::{Db, DbIterator, DbRange, KeyRange, PinnableValue, ReclaimProgress, Snapshot};
pub use error::{Error, Result};
pub use events::{
    BackgroundErrorInfo, BackgroundErrorReason, CompactionJobInfo, CompactionReason,
    ErrorRecoveryCompletedInfo, ErrorRecoveryInfo, ErrorSeverity, EventListener, FlushJobInfo,
    TableFileCreationInfo, TableFileCreationReason, TableFileDeletionInfo, TableFileInfo,
    WriteStallCondition, WriteStallInfo,
};
pub use io::{IoPriority, RateLimiter};
pub use merge::{MaxOperator, MergeOperator, StringAppendOperator, UInt64AddOperator};
pub use ops::{
    BackupEngine, BackupEngineOptions, BackupInfo, BackupProgress, CheckpointOptions,
    CheckpointReport, ExportMetadata, ExportedBlobFile, ExportedTable, ExternalSstFileInfo,
    HexBytes, ImportOptions, IngestOptions, LiveFile, LiveFileKind, LiveFiles, LiveWalFile,
    PointInTimeRestore, ProgressCallback, SecondaryDb, SstFileWriter, WalBackupReport,
    EXPORT_FORMAT_VERSION, EXPORT_METADATA_FILE,
};
pub use options::{
    BlobOptions, CacheType, CfOption, CfOptions, CompactionStyle, Compression, DbOption,
    FifoCompactionOptions, InfoLogLevel, OptionInfo, Options, PrepopulateBlobCache, ReadOptions,
    SstPartitioner, UniversalCompactionOptions, UniversalStopStyle, WalRecoveryMode, WriteOptions,
};
pub use stats::report::{
    BackgroundStats, CacheStats, CfStats, CompactionStats, IoPurposeStats, IoStats,
    LevelCompaction, LevelStats, MemoryStats, OpStats, RateLimiterStats, StallCauseStats,
    StallExplanation, StallReason, StallState, StallStats, Stats, WalStats,
};
pub use tools::{destroy_db, load_latest_options, DestroyReport, LoadedOptions, SuppliedCode};
pub use txn::{BatchRead, WbwiIterator, WbwiRange, WriteBatchWithIndex, WriteType};
