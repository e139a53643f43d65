//! Removing the DB at `--db` before a fresh run, as db_bench's `DestroyDB`
//! does, for every engine: only the files the engine's DB owns, refused
//! while another process holds the DB's lock, and the directory itself
//! only when it is empty afterwards.
//!
//! Invariants (each a test below or in the engine files):
//! - A directory holding entries but nothing of the selected engine's DB
//!   is refused with an error naming it; nothing is removed.
//! - A DB another process has open is refused; nothing is removed.
//! - Files that are not the DB's stay, and so does the directory.
//!
//! Shale uses the engine's own `shale::destroy_db`, RocksDB its
//! `DB::destroy`; fjall has no destroy call, so [`remove_owned`] removes
//! the entries of its layout (`version`, `lock`, `keyspaces/`, `*.jnl`)
//! under its lock.

use std::path::Path;

use crate::error::{bail, Result};
use crate::flags::Flags;

/// Removes the DB at `path` (the engine must be closed); see the module
/// comment. A missing directory is not an error.
pub fn destroy(flags: &Flags, path: &Path) -> Result<()> {
    match flags.engine.as_str() {
        "memory" => {
            super::memory::MemoryEngine::destroy(path);
            Ok(())
        }
        #[cfg(feature = "shale-engine")]
        "shale" => super::shale::destroy(path),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => super::rocksdb::destroy(path),
        #[cfg(feature = "fjall")]
        "fjall" => super::fjall::destroy(path),
        other => bail!("engine '{other}' is not available in this build"),
    }
}

/// The entries of `dir` (names, sorted); `None` when it does not exist.
pub fn entries(dir: &Path) -> Result<Option<Vec<String>>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("--db={}: {e}", dir.display()),
    };
    let mut names = Vec::new();
    for e in rd {
        names.push(e?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(Some(names))
}

/// The error for a directory that holds files but not `engine`'s DB.
pub fn not_a_db(dir: &Path, engine: &str, names: &[String]) -> crate::error::Error {
    const SHOWN: usize = 5;
    let mut shown = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        shown.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    crate::error::Error::msg(format!(
        "--db={}: the directory holds files that are not a {engine} DB ({shown}); \
         refusing to delete them: choose an empty or new directory for --db",
        dir.display()
    ))
}

/// The error for a DB another process holds open.
pub fn in_use(dir: &Path, engine: &str) -> crate::error::Error {
    crate::error::Error::msg(format!(
        "--db={}: the {engine} DB there is in use by another process (its lock is held); \
         refusing to destroy it",
        dir.display()
    ))
}

/// Removes the entries of `dir` that `owned` says belong to the DB (a
/// directory entry is removed with its contents), keeping the rest; then
/// the directory if it is empty. The caller holds the DB's lock.
pub fn remove_owned(dir: &Path, names: &[String], owned: impl Fn(&str) -> bool) -> Result<()> {
    let mut kept = 0;
    for n in names {
        if !owned(n) {
            kept += 1;
            continue;
        }
        let p = dir.join(n);
        let r = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
        if let Err(e) = r {
            bail!("cannot remove {}: {e}", p.display());
        }
    }
    if kept == 0 {
        if let Err(e) = std::fs::remove_dir(dir) {
            bail!("cannot remove DB directory {}: {e}", dir.display());
        }
    }
    Ok(())
}

/// An exclusive, non-blocking `flock` on `path` (the way fjall locks its
/// DBs; RocksDB uses fcntl record locks, which its own DestroyDB checks),
/// released when the file closes; `Ok(None)` when another handle holds it.
pub fn try_flock(path: &Path) -> Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)?;
    // SAFETY: `f` is an open file for the whole call; flock only reads the
    // descriptor number and touches no memory.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r == 0 {
        Ok(Some(f))
    } else {
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            bail!("flock {}: {e}", path.display())
        }
    }
}

/// The contract every engine's `destroy` keeps (issue 36, defect 1), for
/// the engines behind features: a DB `open` made is refused while the
/// returned handle lives; after, only its files go (a user's file stays,
/// and so does the directory); a directory holding only that file is not a
/// `engine` DB; an empty one is removed; a missing one is fine.
#[cfg(all(test, any(feature = "rocksdb", feature = "fjall")))]
pub fn check_destroy_contract<E>(
    engine: &str,
    open: impl Fn(&Path) -> E,
    destroy: impl Fn(&Path) -> Result<()>,
) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    let handle = open(&dir);
    let err = destroy(&dir).unwrap_err();
    assert!(err.0.contains("in use"), "{err}");
    drop(handle);
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    destroy(&dir).unwrap();
    assert_eq!(entries(&dir).unwrap().unwrap(), vec!["notes.txt"]);
    let err = destroy(&dir).unwrap_err();
    assert!(err.0.contains(&format!("not a {engine} DB")), "{err}");
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    destroy(&dir).unwrap();
    assert!(!dir.exists());
    destroy(&dir).unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remove_owned_keeps_what_is_not_the_dbs() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("db");
        std::fs::create_dir_all(dir.join("keyspaces/0")).unwrap();
        std::fs::write(dir.join("version"), b"FJL\x03").unwrap();
        std::fs::write(dir.join("mine.txt"), b"x").unwrap();
        let names = entries(&dir).unwrap().unwrap();
        remove_owned(&dir, &names, |n| n != "mine.txt").unwrap();
        assert_eq!(entries(&dir).unwrap().unwrap(), vec!["mine.txt"]);
        std::fs::remove_file(dir.join("mine.txt")).unwrap();
        remove_owned(&dir, &[], |_| true).unwrap();
        assert!(entries(&dir).unwrap().is_none());
    }

    #[test]
    fn try_flock_sees_a_held_lock() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lock");
        std::fs::write(&p, b"").unwrap();
        let held = try_flock(&p).unwrap().expect("free");
        assert!(try_flock(&p).unwrap().is_none());
        drop(held);
        assert!(try_flock(&p).unwrap().is_some());
    }
}
