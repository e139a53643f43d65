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
mod set;
#[allow(clippy::module_inception)]
mod version;

// Re-exports for db/, flush/, compaction/ and inspect/ (not all wired yet).
#[allow(unused_imports)]
pub(crate) use builder::VersionBuilder;
#[allow(unused_imports)]
pub(crate) use current::{read_current, set_current};
#[allow(unused_imports)]
pub(crate) use edit::{VersionEdit, EDIT_FORMAT_VERSION};
#[allow(unused_imports)]
pub(crate) use file_meta::FileMeta;
#[allow(unused_imports)]
pub(crate) use filename::{
    blob_file_name, file_path, log_file_name, manifest_file_name, options_file_name,
    parse_file_name, table_file_name, temp_file_name, FileType, CURRENT_FILE_NAME,
    INFO_LOG_FILE_NAME, LOCK_FILE_NAME,
};
#[allow(unused_imports)]
pub(crate) use set::{read_manifest, VersionSet, COMPARATOR_NAME};
#[allow(unused_imports)]
pub(crate) use version::Version;
