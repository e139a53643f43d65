//! Read-only inspection and offline repair of a DB directory, for the admin
//! CLI (`crates/shale-cli`, binary `shale`) and for operators' own tools:
//! RocksDB's `ldb` / `sst_dump` / `RepairDB` in one narrow module.
//!
//! What it offers, each returning typed, owned structs (no engine types):
//! - [`ManifestReader`]: every edit of a MANIFEST, decoded ([`ManifestEdit`]);
//! - [`WalReader`]: every batch of a WAL with its sequence numbers and
//!   records ([`WalBatch`]);
//! - [`SstReader`]: an SST's properties, index entries, entries, range
//!   tombstones, and a verification of every block checksum;
//! - [`OptionsFile`]: an `OPTIONS-NNNNNN` file, parsed into sections;
//! - [`check_db`]: verifies every checksum of every live file of a DB
//!   (tables, blob files, WALs, MANIFEST);
//! - [`repair_db`]: rebuilds a MANIFEST from the tables, blob files and
//!   WALs present;
//! - [`destroy_db`]: removes a DB's own files (RocksDB's `DestroyDB`),
//!   refused while the DB is open;
//! - [`load_latest_options`]: the options of the newest OPTIONS file
//!   (RocksDB's `LoadLatestOptions`), to reopen a DB as it was configured.
//!
//! Formats: docs/format/ (manifest.md, wal.md, batch.md, sst.md, blob.md)
//! and the OPTIONS section of docs/FORMAT.md. The decoding is the engine's
//! own (the same code recovery and reads run), so what these tools accept
//! is exactly what the engine accepts.
//!
//! Invariants: nothing here panics on file contents or allocates by a size
//! read from disk without the engine's bounds; damage is always
//! `Error::Corruption { file, offset, what }` naming the file (the path as
//! given) and the byte offset. Everything except [`repair_db`] and
//! [`destroy_db`] only reads and takes no lock: run it on a DB no process
//! has open, or accept that a live DB may change underneath
//! ([`check_db`] says when it does). `repair_db` and `destroy_db` take
//! the DB's `LOCK`.
//!
//! Thread-safety: readers are single-owner values; no shared state.

mod blob_file;
mod check;
mod destroy;
mod keys;
mod load_options;
mod manifest;
mod options_file;
mod repair;
mod repair_blobs;
mod sst;
mod wal;

pub use check::{check_db, CheckReport, CheckedFile};
pub use destroy::{destroy_db, DestroyReport};
pub use keys::{EntryKind, InternalKey};
pub use load_options::{load_latest_options, LoadedOptions, SuppliedCode};
pub use manifest::{
    BlobFileAddition, BlobFileGarbage, DeletedFile, ManifestEdit, ManifestReader, NewFile,
};
pub use options_file::{OptionsFile, OptionsSection};
pub use repair::{repair_db, RepairReport};
pub use sst::{IndexEntry, RangeTombstone, SstEntry, SstProperties, SstReader};
pub use wal::{WalBatch, WalEntry, WalReader};

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::version::filename::{manifest_file_name, parse_file_name, FileType};
use crate::version::read_current;

/// The MANIFEST that `dir/CURRENT` names (its path; it may be missing).
/// A malformed CURRENT is `Corruption` naming it.
pub fn current_manifest(dir: &Path) -> Result<PathBuf> {
    let n = read_current(&*default_fs(), dir)?;
    Ok(dir.join(manifest_file_name(n)))
}

/// The number in a DB file's name (`000012.log`, `MANIFEST-000005`), which
/// seeds log checksums; `InvalidArgument` when the name has none of `ty`.
fn file_number(path: &Path, ty: FileType) -> Result<u64> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    match parse_file_name(name) {
        Some((t, n)) if t == ty => Ok(n),
        _ => Err(Error::InvalidArgument(format!(
            "{}: not named like a {} file (the number in the name seeds its checksums)",
            path.display(),
            match ty {
                FileType::Log => "WAL (NNNNNN.log)",
                FileType::Manifest => "MANIFEST (MANIFEST-NNNNNN)",
                FileType::Table => "table (NNNNNN.sst)",
                _ => "DB",
            }
        ))),
    }
}
