//! Operations a service runs on a live DB, above the handle (`db`): RocksDB's
//! `Checkpoint`, `BackupEngine`, `SstFileWriter` with `IngestExternalFile`,
//! `ExportColumnFamily` with `CreateColumnFamilyWithImport`,
//! and the read-only and secondary opens.
//!
//! Each submodule uses the handle's and the shared state's own calls (the
//! version, the MANIFEST writer, the file-system seam) and adds no state to
//! `DbInner` beyond what its own call needs. Invariants every operation
//! keeps: a crash mid-way leaves the DB and every earlier product (checkpoint
//! directory, backup) as they were, and the new product absent or complete;
//! nothing a live version, an iterator or a backup needs is deleted.

mod backup;
mod checkpoint;
mod export;
mod import;
mod ingest;
mod live_files;
mod pitr;
mod read_only;
mod secondary;
mod sst_file_writer;
mod wal_scan;

pub use backup::{
    BackupEngine, BackupEngineOptions, BackupInfo, BackupProgress, ProgressCallback,
    WalBackupReport,
};
pub use checkpoint::{CheckpointOptions, CheckpointReport};
pub use export::{
    ExportMetadata, ExportedBlobFile, ExportedTable, HexBytes, EXPORT_FORMAT_VERSION,
    EXPORT_METADATA_FILE,
};
pub use import::ImportOptions;
pub use ingest::IngestOptions;
pub use live_files::{LiveFile, LiveFileKind, LiveFiles, LiveWalFile};
pub use pitr::PointInTimeRestore;
pub use secondary::SecondaryDb;
pub use sst_file_writer::{ExternalSstFileInfo, SstFileWriter};
