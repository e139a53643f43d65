//! [`OverlayFs`]: a file system that reads a base file system and keeps
//! every change in memory, so that the engine's open (which may flush
//! recovered WAL data to L0, roll the MANIFEST, create a WAL, write an
//! OPTIONS file and a LOG) changes no byte of the base. It is what
//! `Db::open_read_only` opens through (`ops/read_only.rs`): RocksDB's
//! `OpenForReadOnly`, obtained from the file-system seam instead of a
//! second recovery path, so a read-only open recovers exactly as a
//! read-write one does.
//!
//! Invariants: the base is only read (`open_random*`, `open_sequential`,
//! `list`, `exists`, `file_size`); a path is served from memory once
//! created here or renamed from memory (`written`), from a base file once
//! a base file is renamed to it (`aliases`: nothing is copied, so rotating
//! a large `LOG` costs no memory), hidden once removed or renamed away
//! (`hidden`), read from the base otherwise. [`OverlayFs::freeze`]
//! makes every later create, rename and link fail, so nothing after the
//! open can grow the memory side. `lock` is taken in memory only: a
//! read-only open takes no LOCK and several processes may hold one each,
//! beside a writer (whose later deletions may show as read errors, as in
//! RocksDB's read-only mode).
//!
//! With [`OverlayFs::with_log_dir`] (the secondary instance's), the DB's
//! `LOG` files (`LOG`, `LOG.old.*` in the DB directory) are real files of
//! another directory of the base instead, as RocksDB's `db_log_dir` puts
//! them: the only writes that reach the base, and never in the DB
//! directory.
//!
//! Thread-safety: `Send + Sync`; the path sets are under one mutex.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::{
    FileLock, FileOptions, FileSystem, LinkKind, MemFileSystem, RandomAccessFile, SequentialFile,
    WritableFile,
};
use crate::error::{Error, Result};

#[derive(Default)]
struct Paths {
    /// Paths whose content lives in `mem`.
    written: HashSet<PathBuf>,
    /// Paths served by another path of the base (a base file renamed).
    aliases: HashMap<PathBuf, PathBuf>,
    /// Paths of the base removed or renamed away.
    hidden: HashSet<PathBuf>,
}

/// Where reads of a path go.
enum Source {
    Mem,
    Base(PathBuf),
    Hidden,
}

/// See the module comment.
pub struct OverlayFs {
    base: Arc<dyn FileSystem>,
    mem: MemFileSystem,
    paths: Mutex<Paths>,
    frozen: AtomicBool,
    /// (the DB directory, the directory its `LOG` files go to).
    log_dir: Option<(PathBuf, PathBuf)>,
}

/// `LOG` and its rotated `LOG.old.*`.
fn is_log_name(name: &str) -> bool {
    name == "LOG" || name.starts_with("LOG.old.")
}

fn not_found(op: &str, path: &Path) -> Error {
    Error::Io {
        context: format!("{op} {}", path.display()),
        kind: io::ErrorKind::NotFound,
        message: "No such file or directory (removed in the read-only view)".into(),
    }
}

impl OverlayFs {
    /// An overlay over `base`, with nothing changed yet.
    pub fn new(base: Arc<dyn FileSystem>) -> Arc<OverlayFs> {
        Arc::new(OverlayFs {
            base,
            mem: MemFileSystem::new(),
            paths: Mutex::new(Paths::default()),
            frozen: AtomicBool::new(false),
            log_dir: None,
        })
    }

    /// An overlay over `base` whose `LOG` files of `db_dir` are the base's
    /// files in `log_dir` (see the module comment).
    pub fn with_log_dir(
        base: Arc<dyn FileSystem>,
        db_dir: &Path,
        log_dir: &Path,
    ) -> Arc<OverlayFs> {
        Arc::new(OverlayFs {
            base,
            mem: MemFileSystem::new(),
            paths: Mutex::new(Paths::default()),
            frozen: AtomicBool::new(false),
            log_dir: Some((db_dir.to_path_buf(), log_dir.to_path_buf())),
        })
    }

    /// Where `path` lives in the base when it is a redirected `LOG` file.
    fn log_target(&self, path: &Path) -> Option<PathBuf> {
        let (db_dir, log_dir) = self.log_dir.as_ref()?;
        let name = path.file_name()?.to_str()?;
        (path.parent() == Some(db_dir.as_path()) && is_log_name(name)).then(|| log_dir.join(name))
    }

    /// From now on, creates, renames and links fail.
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::Release);
    }

    fn check_not_frozen(&self, op: &str, path: &Path) -> Result<()> {
        if self.frozen.load(Ordering::Acquire) {
            return Err(Error::NotSupported(format!(
                "{op} {}: the DB is open read-only",
                path.display()
            )));
        }
        Ok(())
    }

    fn paths(&self) -> MutexGuard<'_, Paths> {
        self.paths.lock()
    }

    /// Where reads of `path` go.
    fn source(&self, path: &Path) -> Source {
        let p = self.paths();
        if p.written.contains(path) {
            Source::Mem
        } else if let Some(base) = p.aliases.get(path) {
            Source::Base(base.clone())
        } else if p.hidden.contains(path) {
            Source::Hidden
        } else {
            Source::Base(path.to_path_buf())
        }
    }

    fn mem_dir(&self, path: &Path) -> Result<()> {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => self.mem.create_dir_all(d),
            _ => Ok(()),
        }
    }

    /// Records `path` as served from memory from now on.
    fn mark_written(&self, path: &Path) {
        let mut p = self.paths();
        p.aliases.remove(path);
        p.written.insert(path.to_path_buf());
        p.hidden.insert(path.to_path_buf());
    }
}

impl FileSystem for OverlayFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        if let Some(t) = self.log_target(path) {
            return self.base.create(&t);
        }
        self.check_not_frozen("create", path)?;
        self.mem_dir(path)?;
        let f = self.mem.create(path)?;
        self.mark_written(path);
        Ok(f)
    }

    fn create_with(&self, path: &Path, _opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        // A file in memory has no page cache to bypass.
        self.create(path)
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        match self.source(path) {
            Source::Mem => self.mem.open_random(path),
            Source::Base(b) => self.base.open_random(&b),
            Source::Hidden => Err(not_found("open", path)),
        }
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        match self.source(path) {
            Source::Mem => self.mem.open_random(path),
            Source::Base(b) => self.base.open_random_with(&b, opts),
            Source::Hidden => Err(not_found("open", path)),
        }
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        if let Some(t) = self.log_target(path) {
            return self.base.open_sequential(&t);
        }
        match self.source(path) {
            Source::Mem => self.mem.open_sequential(path),
            Source::Base(b) => self.base.open_sequential(&b),
            Source::Hidden => Err(not_found("open", path)),
        }
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        if let (Some(f), Some(t)) = (self.log_target(from), self.log_target(to)) {
            return self.base.rename(&f, &t);
        }
        self.check_not_frozen("rename", from)?;
        match self.source(from) {
            Source::Mem => {
                self.mem_dir(to)?;
                self.mem.rename(from, to)?;
                self.mark_written(to);
            }
            Source::Base(b) if self.base.exists(&b) => {
                let mut p = self.paths();
                p.written.remove(to);
                p.hidden.insert(to.to_path_buf());
                p.aliases.insert(to.to_path_buf(), b);
            }
            _ => return Err(not_found("rename", from)),
        }
        let mut p = self.paths();
        p.written.remove(from);
        p.aliases.remove(from);
        p.hidden.insert(from.to_path_buf());
        Ok(())
    }

    fn link(&self, from: &Path, to: &Path) -> Result<LinkKind> {
        self.check_not_frozen("link", to)?;
        if self.exists(to) {
            return Err(Error::Io {
                context: format!("link {}", to.display()),
                kind: io::ErrorKind::AlreadyExists,
                message: "File exists".into(),
            });
        }
        match self.source(from) {
            Source::Mem => {
                self.mem_dir(to)?;
                let kind = self.mem.link(from, to)?;
                self.mark_written(to);
                Ok(kind)
            }
            // The new name serves the base file: nothing is copied.
            Source::Base(b) if self.base.exists(&b) => {
                let mut p = self.paths();
                p.written.remove(to);
                p.hidden.insert(to.to_path_buf());
                p.aliases.insert(to.to_path_buf(), b);
                Ok(LinkKind::HardLink)
            }
            _ => Err(not_found("link", from)),
        }
    }

    fn remove(&self, path: &Path) -> Result<()> {
        if let Some(t) = self.log_target(path) {
            return self.base.remove(&t);
        }
        match self.source(path) {
            Source::Mem => self.mem.remove(path)?,
            Source::Base(b) if self.base.exists(&b) => {}
            _ => return Err(not_found("remove", path)),
        }
        let mut p = self.paths();
        p.written.remove(path);
        p.aliases.remove(path);
        p.hidden.insert(path.to_path_buf());
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names: Vec<String> = if self.base.exists(dir) {
            self.base.list(dir)?
        } else {
            Vec::new()
        };
        if let Some((db_dir, log_dir)) = &self.log_dir {
            if dir == db_dir {
                names.retain(|n| !is_log_name(n));
                if self.base.exists(log_dir) {
                    let logs = self.base.list(log_dir)?;
                    names.extend(logs.into_iter().filter(|n| is_log_name(n)));
                }
            }
        }
        let p = self.paths();
        names.retain(|n| !p.hidden.contains(&dir.join(n)));
        for w in p.written.iter().chain(p.aliases.keys()) {
            if w.parent() == Some(dir) {
                if let Some(n) = w.file_name().and_then(|n| n.to_str()) {
                    names.push(n.to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.mem.create_dir_all(dir)
    }

    fn sync_dir(&self, _dir: &Path) -> Result<()> {
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        if let Some(t) = self.log_target(path) {
            return self.base.exists(&t);
        }
        match self.source(path) {
            Source::Mem => true,
            Source::Base(b) => self.base.exists(&b),
            Source::Hidden => false,
        }
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        if let Some(t) = self.log_target(path) {
            return self.base.file_size(&t);
        }
        match self.source(path) {
            Source::Mem => self.mem.file_size(path),
            Source::Base(b) => self.base.file_size(&b),
            Source::Hidden => Err(not_found("stat", path)),
        }
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.mem_dir(path)?;
        self.mem.lock(path)
    }

    fn max_request_bytes(&self, dir: &Path) -> Option<usize> {
        self.base.max_request_bytes(dir)
    }
}

#[cfg(test)]
mod tests;
