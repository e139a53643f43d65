//! The LSM shape and its persistent log: `FileMeta` (one SST), `VersionEdit`
//! (one MANIFEST record), `Version` (the files of every level, immutable),
//! `VersionBuilder` (edits → version), `VersionSet` (the MANIFEST, CURRENT
//! and the file-number / sequence counters), and the DB directory's file
//! names. Format: docs/format/manifest.md.

mod builder;
mod current;
mod edit;
mod file_meta;
pub(crate) mod filename;
mod manifest_write;
mod set;
pub(crate) mod sizing;
#[allow(clippy::module_inception)]
mod version;

// Re-exports for db/, flush/, compaction/ and tools/.
pub(crate) use current::{read_current, set_current};
pub(crate) use edit::{BlobFileAddition, BlobFileGarbage, VersionEdit};
pub(crate) use file_meta::FileMeta;
pub(crate) use set::{VersionSet, COMPARATOR_NAME, DEFAULT_COLUMN_FAMILY};
pub(crate) use version::Version;
