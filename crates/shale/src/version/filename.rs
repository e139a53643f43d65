//! Names of the files in a DB directory, exactly as RocksDB names them, and
//! the parser that classifies a directory entry.
//!
//! | type          | name               |
//! |---------------|--------------------|
//! | WAL           | `000007.log`       |
//! | SST           | `000009.sst`       |
//! | blob          | `000010.blob`      |
//! | MANIFEST      | `MANIFEST-000005`  |
//! | CURRENT       | `CURRENT`          |
//! | temp file     | `000005.dbtmp`     |
//! | LOCK          | `LOCK`             |
//! | info log      | `LOG`, `LOG.old.<micros>` |
//! | options       | `OPTIONS-000011`   |
//!
//! Numbers are printed with at least six digits (`{:06}`) and parsed with any
//! number of digits. Pure functions; no IO. See docs/format/manifest.md.

#[cfg(test)]
use std::path::{Path, PathBuf};

use crate::base::FileNum;

/// What a file in the DB directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FileType {
    /// `NNNNNN.log`: a write-ahead log.
    Log,
    /// `NNNNNN.sst`: a sorted table.
    Table,
    /// `NNNNNN.blob`: a blob file (key-value separation, docs/format/blob.md).
    Blob,
    /// `MANIFEST-NNNNNN`: a log of version edits.
    Manifest,
    /// `CURRENT`: names the live MANIFEST.
    Current,
    /// `NNNNNN.dbtmp`: a temporary file (e.g. the next CURRENT).
    Temp,
    /// `LOCK`: the process lock.
    Lock,
    /// `LOG` or `LOG.old.*`: the human-readable info log.
    InfoLog,
    /// `OPTIONS-NNNNNN`: the options the DB was opened with.
    Options,
}

/// `NNNNNN.log`.
pub(crate) fn log_file_name(number: FileNum) -> String {
    format!("{number:06}.log")
}

/// `NNNNNN.sst`.
pub(crate) fn table_file_name(number: FileNum) -> String {
    format!("{number:06}.sst")
}

/// `NNNNNN.blob`.
pub(crate) fn blob_file_name(number: FileNum) -> String {
    format!("{number:06}.blob")
}

/// `MANIFEST-NNNNNN`.
pub(crate) fn manifest_file_name(number: FileNum) -> String {
    format!("MANIFEST-{number:06}")
}

/// `NNNNNN.dbtmp`.
pub(crate) fn temp_file_name(number: FileNum) -> String {
    format!("{number:06}.dbtmp")
}

/// `OPTIONS-NNNNNN`.
pub(crate) fn options_file_name(number: FileNum) -> String {
    format!("OPTIONS-{number:06}")
}

/// `CURRENT`.
pub(crate) const CURRENT_FILE_NAME: &str = "CURRENT";
/// `LOCK`.
pub(crate) const LOCK_FILE_NAME: &str = "LOCK";
/// `LOG`.
pub(crate) const INFO_LOG_FILE_NAME: &str = "LOG";

/// `dir/name` for a numbered file type (`Log`, `Table`, `Blob`, `Manifest`,
/// `Temp`, `Options`); the number is ignored for the others.
#[cfg(test)]
pub(crate) fn file_path(dir: &Path, ty: FileType, number: FileNum) -> PathBuf {
    let name = match ty {
        FileType::Log => log_file_name(number),
        FileType::Table => table_file_name(number),
        FileType::Blob => blob_file_name(number),
        FileType::Manifest => manifest_file_name(number),
        FileType::Temp => temp_file_name(number),
        FileType::Options => options_file_name(number),
        FileType::Current => CURRENT_FILE_NAME.to_string(),
        FileType::Lock => LOCK_FILE_NAME.to_string(),
        FileType::InfoLog => INFO_LOG_FILE_NAME.to_string(),
    };
    dir.join(name)
}

/// Parses a decimal file number: one or more ASCII digits, no sign, fits u64.
fn parse_number(s: &str) -> Option<FileNum> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Classifies a directory entry. Returns `None` for names that are not DB
/// files. Unnumbered files (`CURRENT`, `LOCK`, `LOG`, `LOG.old.*`) get 0.
pub(crate) fn parse_file_name(name: &str) -> Option<(FileType, FileNum)> {
    match name {
        CURRENT_FILE_NAME => return Some((FileType::Current, 0)),
        LOCK_FILE_NAME => return Some((FileType::Lock, 0)),
        INFO_LOG_FILE_NAME => return Some((FileType::InfoLog, 0)),
        _ => {}
    }
    if name.starts_with("LOG.old.") {
        return Some((FileType::InfoLog, 0));
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return Some((FileType::Manifest, parse_number(rest)?));
    }
    if let Some(rest) = name.strip_prefix("OPTIONS-") {
        return Some((FileType::Options, parse_number(rest)?));
    }
    let (num, suffix) = name.split_once('.')?;
    let ty = match suffix {
        "log" => FileType::Log,
        "sst" => FileType::Table,
        "blob" => FileType::Blob,
        "dbtmp" => FileType::Temp,
        _ => return None,
    };
    Some((ty, parse_number(num)?))
}

#[cfg(test)]
mod tests;
