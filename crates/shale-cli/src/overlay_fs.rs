//! [`OverlayFs`]: a `shale::fs::FileSystem` that reads a real directory and
//! keeps every change in memory, so that `Db::open` (which rolls the
//! MANIFEST, flushes recovered WAL data to L0, writes an OPTIONS file and
//! deletes obsolete files) can serve reading commands without changing
//! one byte of the DB. RocksDB's `OpenForReadOnly`, obtained from the
//! engine's file-system seam instead of a second open path.
//!
//! No compaction runs in the view (it would copy the DB into memory): once
//! the open creates the DB's new WAL (recovery has written its L0 tables by
//! then, and background work starts only later; `db/open.rs`) creating a
//! table fails, and once the open returns [`OverlayFs::freeze`] makes every
//! create and rename fail.
//! A failed background compaction leaves reads unaffected.
//!
//! Invariants: the real file system is only read (`open_random`,
//! `open_sequential`, `list`, `exists`, `file_size`); a path is served
//! from memory once created or renamed into here (`written`), hidden once
//! removed or renamed away (`hidden`), read from disk otherwise. The DB's
//! `LOCK` is taken in memory only: like RocksDB's read-only mode, this
//! does not keep a writer out (its later changes may show as errors).
//!
//! Thread-safety: `Send + Sync`; the path sets are under one mutex.

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use shale::fs::{
    FileLock, FileSystem, LinkKind, MemFileSystem, PosixFileSystem, RandomAccessFile,
    SequentialFile, WritableFile,
};
use shale::{Error, Result};

#[derive(Default)]
struct Paths {
    /// Paths whose content lives in `mem`.
    written: HashSet<PathBuf>,
    /// Paths of the real directory removed or renamed away.
    hidden: HashSet<PathBuf>,
}

/// See the module comment.
pub struct OverlayFs {
    disk: PosixFileSystem,
    mem: MemFileSystem,
    paths: Mutex<Paths>,
    frozen: AtomicBool,
    /// The new WAL was created: recovery is done; no more tables.
    tables_frozen: AtomicBool,
}

fn not_found(op: &str, path: &Path) -> Error {
    Error::Io {
        context: format!("{op} {}", path.display()),
        kind: io::ErrorKind::NotFound,
        message: "No such file or directory (removed in the read-only view)".into(),
    }
}

impl OverlayFs {
    /// An overlay over the real file system, with nothing changed yet.
    pub fn new() -> Arc<OverlayFs> {
        Arc::new(OverlayFs {
            disk: PosixFileSystem::default(),
            mem: MemFileSystem::new(),
            paths: Mutex::new(Paths::default()),
            frozen: AtomicBool::new(false),
            tables_frozen: AtomicBool::new(false),
        })
    }

    /// From now on, creates and renames fail (see the module comment).
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::Release);
    }

    fn check_not_frozen(&self, op: &str, path: &Path) -> Result<()> {
        let table = path.extension().is_some_and(|e| e == "sst" || e == "blob");
        if self.frozen.load(Ordering::Acquire)
            || (table && self.tables_frozen.load(Ordering::Acquire))
        {
            return Err(Error::Io {
                context: format!("{op} {}", path.display()),
                kind: io::ErrorKind::PermissionDenied,
                message: "the DB is open read-only (no background work)".into(),
            });
        }
        Ok(())
    }

    fn paths(&self) -> MutexGuard<'_, Paths> {
        self.paths.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where reads of `path` go: `Some(true)` memory, `Some(false)` disk,
    /// `None` hidden.
    fn source(&self, path: &Path) -> Option<bool> {
        let p = self.paths();
        if p.written.contains(path) {
            Some(true)
        } else if p.hidden.contains(path) {
            None
        } else {
            Some(false)
        }
    }

    fn mem_dir(&self, path: &Path) -> Result<()> {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => self.mem.create_dir_all(d),
            _ => Ok(()),
        }
    }
}

impl FileSystem for OverlayFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.check_not_frozen("create", path)?;
        if path.extension().is_some_and(|e| e == "log") {
            self.tables_frozen.store(true, Ordering::Release);
        }
        self.mem_dir(path)?;
        let f = self.mem.create(path)?;
        let mut p = self.paths();
        p.written.insert(path.to_path_buf());
        p.hidden.insert(path.to_path_buf());
        Ok(f)
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        match self.source(path) {
            Some(true) => self.mem.open_random(path),
            Some(false) => self.disk.open_random(path),
            None => Err(not_found("open", path)),
        }
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        match self.source(path) {
            Some(true) => self.mem.open_sequential(path),
            Some(false) => self.disk.open_sequential(path),
            None => Err(not_found("open", path)),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.check_not_frozen("rename", from)?;
        match self.source(from) {
            Some(true) => {
                self.mem_dir(to)?;
                self.mem.rename(from, to)?;
            }
            Some(false) => {
                let bytes = self.disk.read_all(from)?;
                self.mem_dir(to)?;
                let mut f = self.mem.create(to)?;
                f.append(&bytes)?;
                f.flush()?;
            }
            None => return Err(not_found("rename", from)),
        }
        let mut p = self.paths();
        p.written.remove(from);
        p.hidden.insert(from.to_path_buf());
        p.written.insert(to.to_path_buf());
        p.hidden.insert(to.to_path_buf());
        Ok(())
    }

    /// A second name in memory: a link of the in-memory file, or a copy
    /// of the real one (the real directory is never changed).
    fn link(&self, from: &Path, to: &Path) -> Result<LinkKind> {
        self.check_not_frozen("link", to)?;
        if self.exists(to) {
            return Err(Error::Io {
                context: format!("link {}", to.display()),
                kind: io::ErrorKind::AlreadyExists,
                message: "File exists".into(),
            });
        }
        let kind = match self.source(from) {
            Some(true) => {
                self.mem_dir(to)?;
                self.mem.link(from, to)?
            }
            Some(false) => {
                let bytes = self.disk.read_all(from)?;
                self.mem_dir(to)?;
                let mut f = self.mem.create(to)?;
                f.append(&bytes)?;
                f.sync()?;
                LinkKind::Copied
            }
            None => return Err(not_found("link", from)),
        };
        let mut p = self.paths();
        p.written.insert(to.to_path_buf());
        p.hidden.insert(to.to_path_buf());
        Ok(kind)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        match self.source(path) {
            Some(true) => self.mem.remove(path)?,
            Some(false) if self.disk.exists(path) => {}
            _ => return Err(not_found("remove", path)),
        }
        let mut p = self.paths();
        p.written.remove(path);
        p.hidden.insert(path.to_path_buf());
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names: Vec<String> = if self.disk.exists(dir) {
            self.disk.list(dir)?
        } else {
            Vec::new()
        };
        let p = self.paths();
        names.retain(|n| !p.hidden.contains(&dir.join(n)));
        for w in &p.written {
            if w.parent() == Some(dir) {
                if let Some(n) = w.file_name().and_then(|n| n.to_str()) {
                    names.push(n.to_string());
                }
            }
        }
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.mem.create_dir_all(dir)
    }

    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        match self.source(path) {
            Some(true) => true,
            Some(false) => self.disk.exists(path),
            None => false,
        }
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        match self.source(path) {
            Some(true) => self.mem.file_size(path),
            Some(false) => self.disk.file_size(path),
            None => Err(not_found("stat", path)),
        }
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.mem_dir(path)?;
        self.mem.lock(path)
    }
}

#[cfg(test)]
mod tests;
