//! [`destroy_db`]: removes a DB's own files from its directory, as
//! RocksDB's `DestroyDB` does, and nothing else.
//!
//! Invariants:
//! - Only names the engine writes are removed (`parse_file_name`:
//!   tables, blob files, WALs, MANIFESTs, `CURRENT`, `OPTIONS-*`, `LOG*`,
//!   temporary files, `LOCK`); every other entry stays, and so does the
//!   directory while anything is left in it.
//! - It holds the DB's `LOCK` while it removes: a DB another handle or
//!   process has open is refused with `Error::Locked` and loses nothing.
//! - A directory that holds entries but none that only a Shale DB writes
//!   (no `CURRENT`, `MANIFEST-*`, `OPTIONS-*`, table, blob or WAL file) is
//!   not a Shale DB: `InvalidArgument`, nothing removed.
//! - `CURRENT` goes first, so a destroy cut short by a crash never leaves
//!   a directory that opens as a DB with some of its files missing; running
//!   `destroy_db` again finishes the job.

use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::lock_db;
use crate::options::Options;
use crate::version::filename::{parse_file_name, FileType, CURRENT_FILE_NAME, LOCK_FILE_NAME};

/// What [`destroy_db`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DestroyReport {
    /// The DB files removed (names, `CURRENT` first).
    pub removed: Vec<String>,
    /// Entries left because they are not the DB's (names, sorted).
    pub kept: Vec<String>,
    /// True when the directory itself was removed (it was empty after).
    pub removed_dir: bool,
}

/// Removes the DB in `dir` through `opts.fs`: its own files, then the
/// directory if nothing else is in it (see the module comment). A missing
/// directory is not an error (nothing to do).
pub fn destroy_db(dir: impl AsRef<Path>, opts: &Options) -> Result<DestroyReport> {
    let dir = dir.as_ref();
    let fs = &opts.fs;
    let mut report = DestroyReport::default();
    if !fs.exists(dir) {
        return Ok(report);
    }
    let mut names = fs.list(dir)?;
    names.sort();
    let is_db_evidence = |n: &String| {
        matches!(
            parse_file_name(n),
            Some((
                FileType::Current
                    | FileType::Manifest
                    | FileType::Options
                    | FileType::Table
                    | FileType::Blob
                    | FileType::Log,
                _
            ))
        )
    };
    if !names.is_empty() && !names.iter().any(is_db_evidence) {
        return Err(Error::InvalidArgument(format!(
            "{}: not a Shale DB (no CURRENT, MANIFEST, OPTIONS, table, blob or WAL file); \
             nothing removed (it holds: {})",
            dir.display(),
            preview(&names)
        )));
    }
    let lock = lock_db(fs, dir).map_err(|e| match e {
        Error::Locked(m) => Error::Locked(format!(
            "{}: the DB is in use (its LOCK is held), nothing removed: {m}",
            dir.display()
        )),
        e => e,
    })?;
    // CURRENT first (see the module comment), LOCK last.
    names.sort_by_key(|n| (n != CURRENT_FILE_NAME, n == LOCK_FILE_NAME));
    for name in names {
        match parse_file_name(&name) {
            Some((FileType::Lock, _)) => {}
            Some(_) => {
                fs.remove(&dir.join(&name))?;
                report.removed.push(name);
            }
            None => report.kept.push(name),
        }
    }
    drop(lock);
    // The LOCK file itself, once unlocked (RocksDB removes it too).
    if fs.exists(&dir.join(LOCK_FILE_NAME)) {
        fs.remove(&dir.join(LOCK_FILE_NAME))?;
        report.removed.push(LOCK_FILE_NAME.to_string());
    }
    report.kept.sort();
    if report.kept.is_empty() {
        match fs.remove_dir(dir) {
            Ok(()) => report.removed_dir = true,
            Err(Error::NotSupported(_)) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(report)
}

/// The first few of `names`, for an error message.
fn preview(names: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

#[cfg(test)]
mod tests;
