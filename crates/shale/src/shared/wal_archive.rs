//! WAL archiving (RocksDB's `WAL_ttl_seconds` / `WAL_size_limit_MB`): with
//! either option nonzero, an obsolete WAL is renamed into `archive/` in the
//! DB directory instead of being deleted (`shared::obsolete`), and the
//! archive is trimmed after every obsolete-file pass: a WAL archived longer
//! than `wal_ttl_seconds` ago goes, then the oldest go while the archive
//! holds more than `wal_size_limit_mb` MiB. `BackupEngine::backup_wals`
//! copies archived WALs out for point-in-time restore.
//!
//! A WAL's age counts from when this instance archived it; the WALs an open
//! finds already archived count from that open (the file system seam has
//! no modification times), so a restart can keep a WAL up to one TTL
//! longer, never shorter.
//!
//! Invariants: an archived WAL is never written again (it is a closed,
//! obsolete log; archiving refuses `recycle_log_file_num`); nothing is
//! removed while `Db::disable_file_deletions` holds (the caller checks); the
//! rename is not followed by a directory sync: after a power loss the WAL
//! may be back in the DB directory, where the next pass archives it again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

use crate::error::Result;
use crate::fs::FileSystem;
use crate::options::Options;
use crate::version::filename::{parse_file_name, FileType};

/// The archive's directory name inside the DB directory.
pub const ARCHIVE_DIR: &str = "archive";

/// The archive's path for DB directory `dir`.
pub(crate) fn archive_dir(dir: &Path) -> PathBuf {
    dir.join(ARCHIVE_DIR)
}

/// One archived WAL.
#[derive(Debug, Clone, Copy)]
struct Archived {
    /// When it was archived (or found at open), Unix seconds of the DB's
    /// clock.
    since: u64,
    size: u64,
}

/// The archived WALs, by number (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct WalArchive {
    files: Mutex<BTreeMap<u64, Archived>>,
}

impl WalArchive {
    /// The archive of the DB at `dir`: created when `opts` archive WALs,
    /// with the WALs already in it counted from `now`.
    pub(crate) fn open(fs: &dyn FileSystem, dir: &Path, opts: &Options) -> Result<WalArchive> {
        let archive = WalArchive::default();
        if !opts.archives_wals() {
            return Ok(archive);
        }
        let at = archive_dir(dir);
        fs.create_dir_all(&at)?;
        let now = opts.clock.now_secs();
        let mut files = archive.files.lock();
        for name in fs.list(&at)? {
            if let Some((FileType::Log, number)) = parse_file_name(&name) {
                let size = fs.file_size(&at.join(&name))?;
                files.insert(number, Archived { since: now, size });
            }
        }
        drop(files);
        Ok(archive)
    }

    /// Moves obsolete WAL `name` (number `number`) from `dir` into the
    /// archive.
    pub(crate) fn archive(
        &self,
        fs: &dyn FileSystem,
        dir: &Path,
        name: &str,
        number: u64,
        now: u64,
    ) -> Result<()> {
        let to = archive_dir(dir).join(name);
        let size = fs.file_size(&dir.join(name))?;
        fs.rename(&dir.join(name), &to)?;
        self.files
            .lock()
            .insert(number, Archived { since: now, size });
        Ok(())
    }

    /// Removes the WALs the TTL and size limit of `opts` no longer keep
    /// (module docs); returns the names it could not remove, with why.
    pub(crate) fn trim(
        &self,
        fs: &dyn FileSystem,
        dir: &Path,
        opts: &Options,
        now: u64,
    ) -> Vec<(String, crate::error::Error)> {
        let mut doomed = Vec::new();
        {
            let mut files = self.files.lock();
            if opts.wal_ttl_seconds > 0 {
                files.retain(|&n, a| {
                    let keep = now.saturating_sub(a.since) < opts.wal_ttl_seconds;
                    if !keep {
                        doomed.push(n);
                    }
                    keep
                });
            }
            if opts.wal_size_limit_mb > 0 {
                let limit = opts.wal_size_limit_mb.saturating_mul(1 << 20);
                let mut total: u64 = files.values().map(|a| a.size).sum();
                while total > limit {
                    let Some((n, a)) = files.pop_first() else {
                        break;
                    };
                    total -= a.size;
                    doomed.push(n);
                }
            }
        }
        let at = archive_dir(dir);
        let mut failed = Vec::new();
        for n in doomed {
            let name = crate::version::filename::log_file_name(n);
            if let Err(e) = fs.remove(&at.join(&name)) {
                failed.push((name, e));
            }
        }
        failed
    }

    /// The archived WALs' numbers, ascending.
    #[cfg(test)]
    pub(crate) fn numbers(&self) -> Vec<u64> {
        self.files.lock().keys().copied().collect()
    }
}

#[cfg(test)]
mod tests;
