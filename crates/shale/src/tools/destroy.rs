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
mod tests {
    use super::*;
    use crate::db::Db;

    fn opts() -> Options {
        Options {
            create_if_missing: true,
            ..Options::default()
        }
    }

    fn write_db(dir: &Path) {
        let db = Db::open(dir, opts()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
        db.close().unwrap();
    }

    #[test]
    fn removes_only_the_db_files_and_keeps_the_rest() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("db");
        write_db(&dir);
        std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
        std::fs::create_dir(dir.join("sub")).unwrap();
        let r = destroy_db(&dir, &opts()).unwrap();
        assert_eq!(r.removed[0], "CURRENT");
        assert!(r.removed.iter().any(|n| n.ends_with(".sst")), "{r:?}");
        assert!(r.removed.iter().any(|n| n == "LOCK"), "{r:?}");
        assert_eq!(r.kept, vec!["notes.txt".to_string(), "sub".to_string()]);
        assert!(!r.removed_dir);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, r.kept);
        assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    }

    #[test]
    fn an_emptied_directory_is_removed_and_a_missing_one_is_fine() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("db");
        write_db(&dir);
        let r = destroy_db(&dir, &opts()).unwrap();
        assert!(r.removed_dir && r.kept.is_empty(), "{r:?}");
        assert!(!dir.exists());
        assert_eq!(destroy_db(&dir, &opts()).unwrap(), DestroyReport::default());
    }

    #[test]
    fn an_open_db_is_refused_and_keeps_every_file() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("db");
        write_db(&dir);
        let db = Db::open(&dir, opts()).unwrap();
        let before = std::fs::read_dir(&dir).unwrap().count();
        let e = destroy_db(&dir, &opts()).unwrap_err();
        assert!(
            matches!(&e, Error::Locked(m) if m.contains("in use")),
            "{e:?}"
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
        db.close().unwrap();
    }

    #[test]
    fn a_directory_that_is_not_a_db_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("photo.jpg"), b"x").unwrap();
        std::fs::write(d.path().join("LOG"), b"someone else's").unwrap();
        let e = destroy_db(d.path(), &opts()).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("not a Shale DB")),
            "{e:?}"
        );
        assert!(d.path().join("photo.jpg").exists() && d.path().join("LOG").exists());
        // An empty directory is a DB with no files: removed.
        let empty = d.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(destroy_db(&empty, &opts()).unwrap().removed_dir);
    }

    #[test]
    fn works_through_the_in_memory_file_system() {
        let fs = crate::fs::MemFileSystem::new();
        let o = Options {
            fs: std::sync::Arc::new(fs.clone()),
            ..opts()
        };
        let dir = Path::new("/db");
        let db = Db::open(dir, o.clone()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.close().unwrap();
        let r = destroy_db(dir, &o).unwrap();
        assert!(r.removed_dir, "{r:?}");
        assert!(!o.fs.exists(dir));
    }
}
