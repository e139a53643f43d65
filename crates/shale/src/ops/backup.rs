//! [`BackupEngine`]: RocksDB's `BackupEngine` over a backup directory.
//!
//! Layout (docs/FORMAT.md, "Backup directory"):
//! - `meta/<id>`: one JSON document per backup ([`Meta`]): id, time,
//!   sequence number, application metadata, and every file with its name in
//!   the DB, where it is stored, its size and CRC32C. A backup exists
//!   exactly when its `meta/<id>` does.
//! - `shared/<stem>_<crc32c>_<size>.<ext>`: table and blob files, shared by
//!   every backup holding the same file (same name, size and checksum:
//!   RocksDB's `share_files_with_checksum` naming), so a backup copies only
//!   the files the earlier ones do not have.
//! - `private/<id>/`: the backup's MANIFEST, CURRENT, OPTIONS and WALs.
//! - `wal/`: copies of the DB's WALs for point-in-time restore (`pitr`),
//!   kept while a backup's WALs reach them.
//! - `LOCK`: held by a writing engine.
//!
//! A backup is a checkpoint (`ops/checkpoint.rs`, carrying the live WALs)
//! made in `private/<id>.staging` and then taken apart: its tables and blob
//! files move into `shared/` (or go, when `shared/` has them), the rest
//! becomes `private/<id>`, and `meta/<id>` is written last (a temporary
//! name, synced, renamed). On the DB's own file system the checkpoint hard
//! links, so a backup there writes little; elsewhere it copies.
//!
//! Pacing and progress ([`BackupEngineOptions`], RocksDB's
//! `backup_rate_limiter` / `restore_rate_limiter` and progress callback):
//! a backup's reads of the files it checksums and copies, and a restore's
//! copies, go through the rate limiter at `IoPriority::Low`, and the
//! callback is told after every file. On the DB's own file system a
//! backup's tables are hard links, so what it paces is the checksum
//! reading.
//!
//! Invariants: a crash during `create_backup` leaves every earlier backup
//! intact and the new one absent (no `meta/<id>`) or complete; what it left
//! (a staging directory, unreferenced shared files, a `meta/*.tmp`) is
//! removed when a writing engine opens next. A shared file is deleted only
//! when no `meta/` file names it. Thread-safety: `Send + Sync`; every call
//! takes the engine's mutex.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::db::Db;
use crate::error::{Error, Result};
use crate::fs::{FileLock, FileSystem};
use crate::ops::CheckpointOptions;
use crate::version::filename::{parse_file_name, FileType};

use super::wal_scan;

/// The backup directory's folder of WAL copies.
pub(super) const WAL_DIR: &str = "wal";

/// `wal/TIMES`: one line `<sequence> <unix micros>` per `backup_wals`:
/// every write up to that sequence number was made by that time (it was
/// visible before the copy began, which ended at that time).
const TIMES_FILE: &str = "TIMES";

/// The largest `wal/TIMES` read.
const MAX_TIMES_BYTES: u64 = 64 << 20;

/// The format of `meta/<id>` this build writes; it reads 1 too (format 2
/// added `max_sequence`).
const META_VERSION: u32 = 2;
/// The largest `meta/<id>` file read (a bound on what a damaged one costs).
const MAX_META_BYTES: u64 = 64 << 20;

/// One file of a backup.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct MetaFile {
    /// Its name in the DB directory.
    pub(super) name: String,
    /// Its path in the backup directory.
    pub(super) stored: String,
    pub(super) size: u64,
    crc32c: u32,
}

/// `meta/<id>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Meta {
    version: u32,
    pub(super) id: u32,
    /// Unix seconds when the backup was made.
    pub(super) timestamp: u64,
    /// Every write up to this sequence number is in the backup.
    sequence: u64,
    app_metadata: String,
    pub(super) files: Vec<MetaFile>,
    /// The largest sequence number in the backup (its tables and its WALs'
    /// records): it holds no write after it. Format 2; `None` in format 1.
    #[serde(default)]
    pub(super) max_sequence: Option<u64>,
}

/// What [`BackupEngine::list`] tells of one backup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupInfo {
    /// The backup's id (increasing).
    pub id: u32,
    /// Unix seconds when it was made.
    pub timestamp: u64,
    /// Bytes of its files (shared ones counted in full).
    pub size: u64,
    /// Its files.
    pub file_count: usize,
    /// Every write up to this sequence number is in it.
    pub sequence: u64,
    /// The application's text given to `create_backup_with_metadata`.
    pub app_metadata: String,
}

/// How far a backup or restore is (given to
/// [`BackupEngineOptions::progress`] after each file).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BackupProgress {
    /// Files handled so far.
    pub files_done: usize,
    /// Files the backup or restore handles.
    pub files_total: usize,
    /// Their bytes handled so far.
    pub bytes_done: u64,
    /// All their bytes.
    pub bytes_total: u64,
}

/// Callback for [`BackupEngineOptions::progress`].
pub type ProgressCallback = Arc<dyn Fn(&BackupProgress) + Send + Sync>;

/// Options of [`BackupEngine::open_with`].
#[derive(Clone, Default)]
pub struct BackupEngineOptions {
    /// Paces what a backup reads (checksums) and copies (RocksDB's
    /// `backup_rate_limiter`). Default none.
    pub backup_rate_limiter: Option<Arc<crate::io::RateLimiter>>,
    /// Paces what a restore copies (RocksDB's `restore_rate_limiter`).
    /// Default none.
    pub restore_rate_limiter: Option<Arc<crate::io::RateLimiter>>,
    /// Called after every file of a backup or restore. Default none.
    pub progress: Option<ProgressCallback>,
}

impl std::fmt::Debug for BackupEngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupEngineOptions")
            .field("backup_rate_limiter", &self.backup_rate_limiter.is_some())
            .field("restore_rate_limiter", &self.restore_rate_limiter.is_some())
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// A backup's or restore's pacing and progress (see the module docs).
struct Pace<'a> {
    limiter: Option<&'a crate::io::RateLimiter>,
    progress: Option<&'a ProgressCallback>,
    state: BackupProgress,
}

/// Never set: paced requests are not cancelled.
static NEVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Pace<'_> {
    fn bytes(&self, n: usize) {
        if let Some(l) = self.limiter {
            l.request(n as u64, crate::io::IoPriority::Low, &NEVER);
        }
    }

    fn file_done(&mut self, bytes: u64) {
        self.state.files_done += 1;
        self.state.bytes_done += bytes;
        if let Some(p) = self.progress {
            p(&self.state);
        }
    }
}

/// Backups of a DB in one directory (see the module comment).
pub struct BackupEngine {
    pub(super) dir: PathBuf,
    pub(super) fs: Arc<dyn FileSystem>,
    opts: BackupEngineOptions,
    /// `None` for an engine opened read-only (inspection and restore).
    lock: Option<Box<dyn FileLock>>,
    pub(super) mutex: Mutex<()>,
}

impl std::fmt::Debug for BackupEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BackupEngine({})", self.dir.display())
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl BackupEngine {
    /// Opens (creating) the backup directory `dir` through `fs` for
    /// backups, restores and deletions; takes its `LOCK`, and removes what
    /// an interrupted `create_backup` or `delete` left. `fs` must reach the
    /// DBs it backs up (it is their file system, normally).
    pub fn open(dir: impl AsRef<Path>, fs: Arc<dyn FileSystem>) -> Result<BackupEngine> {
        Self::open_with(dir, fs, BackupEngineOptions::default())
    }

    /// [`BackupEngine::open`] with pacing and a progress callback.
    pub fn open_with(
        dir: impl AsRef<Path>,
        fs: Arc<dyn FileSystem>,
        opts: BackupEngineOptions,
    ) -> Result<BackupEngine> {
        let dir = dir.as_ref().to_path_buf();
        for sub in ["meta", "shared", "private"] {
            fs.create_dir_all(&dir.join(sub))?;
        }
        let lock = crate::fs::lock_db(&fs, &dir)?;
        let engine = BackupEngine {
            dir,
            fs,
            opts,
            lock: Some(lock),
            mutex: Mutex::new(()),
        };
        engine.collect_garbage()?;
        Ok(engine)
    }

    /// Opens `dir` for inspection and restores only: no LOCK, nothing
    /// written in it; `create_backup`, `delete` and `purge_old` are
    /// `NotSupported`.
    pub fn open_read_only(dir: impl AsRef<Path>, fs: Arc<dyn FileSystem>) -> Result<BackupEngine> {
        Self::open_read_only_with(dir, fs, BackupEngineOptions::default())
    }

    /// [`BackupEngine::open_read_only`] with restores paced and reported
    /// (`restore_rate_limiter`, `progress`).
    pub fn open_read_only_with(
        dir: impl AsRef<Path>,
        fs: Arc<dyn FileSystem>,
        opts: BackupEngineOptions,
    ) -> Result<BackupEngine> {
        let dir = dir.as_ref().to_path_buf();
        if !fs.exists(&dir.join("meta")) {
            return Err(Error::InvalidArgument(format!(
                "{}: not a backup directory (no meta/)",
                dir.display()
            )));
        }
        Ok(BackupEngine {
            dir,
            fs,
            opts,
            lock: None,
            mutex: Mutex::new(()),
        })
    }

    fn check_writable(&self, op: &str) -> Result<()> {
        match self.lock {
            Some(_) => Ok(()),
            None => Err(Error::NotSupported(format!(
                "{op}: the backup engine of {} is open read-only",
                self.dir.display()
            ))),
        }
    }

    /// Backs `db` up (every column family, tables and blob files shared
    /// with earlier backups where they hold the same file); returns the new
    /// backup's id.
    pub fn create_backup(&self, db: &Db) -> Result<u32> {
        self.create_backup_with_metadata(db, "")
    }

    /// [`BackupEngine::create_backup`] with the application's `metadata`
    /// kept beside it ([`BackupInfo::app_metadata`]).
    pub fn create_backup_with_metadata(&self, db: &Db, metadata: &str) -> Result<u32> {
        self.check_writable("create_backup")?;
        let _g = self.mutex.lock();
        let id = self.ids()?.last().map_or(1, |l| l + 1);
        let staging = self.dir.join("private").join(format!("{id}.staging"));
        self.remove_tree(&staging)?;
        // Every write acknowledged before the checkpoint is in it.
        let sequence = db.inner().last_visible();
        let report = db.checkpoint_with(
            &staging,
            &CheckpointOptions {
                log_size_for_flush: u64::MAX,
            },
        )?;
        let mut max_sequence = report.largest_table_sequence;
        let private = self.dir.join("private").join(id.to_string());
        let mut files = Vec::new();
        let mut names = self.fs.list(&staging)?;
        names.sort();
        let mut pace = self.pace(true);
        for name in &names {
            pace.state.files_total += 1;
            pace.state.bytes_total += self.fs.file_size(&staging.join(name))?;
        }
        for name in names {
            let path = staging.join(&name);
            if let Some((FileType::Log, n)) = parse_file_name(&name) {
                max_sequence =
                    max_sequence.max(wal_scan::last_sequence(self.fs.as_ref(), &path, n)?);
            }
            let (size, crc) = self.checksum_paced(&path, &pace)?;
            pace.file_done(size);
            let stored = match shared_name(&name, crc, size) {
                Some(shared) => {
                    let to = self.dir.join("shared").join(&shared);
                    if self.fs.exists(&to) {
                        self.fs.remove(&path)?;
                    } else {
                        self.fs.rename(&path, &to)?;
                    }
                    format!("shared/{shared}")
                }
                None => format!("private/{id}/{name}"),
            };
            files.push(MetaFile {
                name,
                stored,
                size,
                crc32c: crc,
            });
        }
        self.fs.sync_dir(&self.dir.join("shared"))?;
        self.fs.rename(&staging, &private)?;
        self.fs.sync_dir(&self.dir.join("private"))?;
        let meta = Meta {
            version: META_VERSION,
            id,
            timestamp: now_secs(),
            sequence,
            app_metadata: metadata.to_string(),
            files,
            max_sequence: Some(max_sequence),
        };
        self.write_meta(&meta)?;
        if db.inner().opts.archives_wals() {
            self.backup_wals_locked(db)?;
        }
        Ok(id)
    }

    /// Every backup, oldest first.
    pub fn list(&self) -> Result<Vec<BackupInfo>> {
        let _g = self.mutex.lock();
        self.ids()?
            .into_iter()
            .map(|id| {
                let m = self.read_meta(id)?;
                Ok(BackupInfo {
                    id,
                    timestamp: m.timestamp,
                    size: m.files.iter().map(|f| f.size).sum(),
                    file_count: m.files.len(),
                    sequence: m.sequence,
                    app_metadata: m.app_metadata,
                })
            })
            .collect()
    }

    /// Checks every file of backup `id`: present, of its size, of its
    /// CRC32C; `Corruption` naming the first that is not.
    pub fn verify(&self, id: u32) -> Result<()> {
        let _g = self.mutex.lock();
        self.verify_locked(&self.read_meta(id)?)
    }

    fn verify_locked(&self, meta: &Meta) -> Result<()> {
        for f in &meta.files {
            let path = self.dir.join(&f.stored);
            let (size, crc) = self.checksum(&path).map_err(|e| {
                Error::corruption(path.display().to_string(), 0, format!("unreadable: {e}"))
            })?;
            if size != f.size || crc != f.crc32c {
                return Err(Error::corruption(
                    path.display().to_string(),
                    0,
                    format!(
                        "backup {}: {} bytes with CRC32C {crc:08x}, expected {} bytes with {:08x}",
                        meta.id, size, f.size, f.crc32c
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Restores backup `id` into `target` (which must not exist): verified
    /// first, copied into `target.tmp`, synced and renamed into place, so a
    /// crash never leaves a half-restored DB at `target`.
    pub fn restore(&self, id: u32, target: impl AsRef<Path>) -> Result<()> {
        let _g = self.mutex.lock();
        let meta = self.read_meta(id)?;
        self.restore_locked(&meta, target.as_ref(), |_| Ok(()))
    }

    /// `restore` of `meta` into `target`, with `more` adding files to the
    /// temporary directory before it is synced and renamed (a WAL the
    /// `more` writes replaces the backup's own copy of it).
    pub(super) fn restore_locked(
        &self,
        meta: &Meta,
        target: &Path,
        more: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<()> {
        if self.fs.exists(target) {
            return Err(Error::InvalidArgument(format!(
                "restore: {} already exists",
                target.display()
            )));
        }
        self.verify_locked(meta)?;
        let tmp = super::checkpoint::temp_dir_of(target)?;
        self.remove_tree(&tmp)?;
        self.fs.create_dir_all(&tmp)?;
        let filled = (|| {
            let mut pace = self.pace(false);
            pace.state.files_total = meta.files.len();
            pace.state.bytes_total = meta.files.iter().map(|f| f.size).sum();
            for f in &meta.files {
                crate::fs::copy_paced(
                    self.fs.as_ref(),
                    &self.dir.join(&f.stored),
                    &tmp.join(&f.name),
                    Some(f.size),
                    &mut |n| pace.bytes(n),
                )?;
                pace.file_done(f.size);
            }
            more(&tmp)
        })();
        if let Err(e) = filled {
            let _ = self.remove_tree(&tmp);
            return Err(e);
        }
        self.fs.sync_dir(&tmp)?;
        self.fs.rename(&tmp, target)?;
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.fs.sync_dir(parent)?;
        }
        Ok(())
    }

    /// Deletes backup `id` (its `meta/` file first: then it is gone) and
    /// the shared files no other backup names.
    pub fn delete(&self, id: u32) -> Result<()> {
        self.check_writable("delete")?;
        let _g = self.mutex.lock();
        self.delete_locked(id)?;
        self.collect_garbage()
    }

    fn delete_locked(&self, id: u32) -> Result<()> {
        let meta = self.dir.join("meta").join(id.to_string());
        if !self.fs.exists(&meta) {
            return Err(Error::InvalidArgument(format!("no backup {id}")));
        }
        self.fs.remove(&meta)?;
        self.fs.sync_dir(&self.dir.join("meta"))
    }

    /// Deletes every backup but the newest `keep`.
    pub fn purge_old(&self, keep: usize) -> Result<()> {
        self.check_writable("purge_old")?;
        let _g = self.mutex.lock();
        let ids = self.ids()?;
        for &id in &ids[..ids.len().saturating_sub(keep)] {
            self.delete_locked(id)?;
        }
        self.collect_garbage()
    }

    /// Copies the WALs of `db` (which must archive WALs:
    /// `Options::wal_ttl_seconds` or `wal_size_limit_mb`) into `wal/` of
    /// the backup directory: every archived WAL and closed live WAL not yet
    /// copied whole, and the current WAL up to its last record. Called by
    /// `create_backup` for such a DB; call it between backups to move the
    /// latest restorable point forward (module docs).
    pub fn backup_wals(&self, db: &Db) -> Result<WalBackupReport> {
        self.check_writable("backup_wals")?;
        let _g = self.mutex.lock();
        self.backup_wals_locked(db)
    }

    pub(super) fn backup_wals_locked(&self, db: &Db) -> Result<WalBackupReport> {
        let inner = db.inner();
        if !inner.opts.archives_wals() {
            return Err(Error::InvalidArgument(
                "backup_wals: the DB does not archive its WALs (set wal_ttl_seconds or \
                 wal_size_limit_mb): point-in-time restore needs every WAL"
                    .into(),
            ));
        }
        let out = self.dir.join(WAL_DIR);
        self.fs.create_dir_all(&out)?;
        // Every write visible now is in the WALs copied below.
        let visible = db.latest_sequence_number();
        // Nothing moves to the archive or leaves it while this copies.
        let _held = super::live_files::DeletionsHeld::new(inner);
        db.flush_wal(false)?;
        let mut sources: BTreeMap<u64, (PathBuf, u64)> = BTreeMap::new();
        let archive = crate::shared::wal_archive::archive_dir(&inner.dir);
        if self.fs.exists(&archive) {
            for name in self.fs.list(&archive)? {
                if let Some((FileType::Log, n)) = parse_file_name(&name) {
                    let path = archive.join(&name);
                    let size = self.fs.file_size(&path)?;
                    sources.insert(n, (path, size));
                }
            }
        }
        for w in db.live_wal_files()? {
            sources.insert(w.number, (inner.dir.join(&w.name), w.size));
        }
        let mut report = WalBackupReport::default();
        for (n, (from, size)) in sources {
            let name = crate::version::filename::log_file_name(n);
            let to = out.join(&name);
            if self.fs.exists(&to) && self.fs.file_size(&to)? >= size {
                continue;
            }
            let tmp = out.join(format!("{name}.tmp"));
            report.bytes_copied += self.fs.copy_file(&from, &tmp, Some(size))?;
            self.fs.rename(&tmp, &to)?;
            report.files_copied += 1;
        }
        self.fs.sync_dir(&out)?;
        let mut times = self.read_times()?;
        times.push((visible, inner.opts.clock.now_micros()));
        let text: String = times.iter().map(|(s, t)| format!("{s} {t}\n")).collect();
        let tmp = out.join(format!("{TIMES_FILE}.tmp"));
        let mut f = self.fs.create(&tmp)?;
        f.append(text.as_bytes())?;
        f.sync()?;
        drop(f);
        self.fs.rename(&tmp, &out.join(TIMES_FILE))?;
        self.fs.sync_dir(&out)?;
        Ok(report)
    }

    /// The (sequence, Unix micros) pairs of `wal/TIMES`; a line that does
    /// not parse is `Corruption` naming the file and its offset.
    pub(super) fn read_times(&self) -> Result<Vec<(u64, u64)>> {
        let path = self.dir.join(WAL_DIR).join(TIMES_FILE);
        if !self.fs.exists(&path) {
            return Ok(Vec::new());
        }
        let name = path.display().to_string();
        let size = self.fs.file_size(&path)?;
        if size > MAX_TIMES_BYTES {
            return Err(Error::corruption(
                name,
                0,
                format!("{size} bytes: too large"),
            ));
        }
        let bytes = self.fs.read_all(&path)?;
        let mut out = Vec::new();
        let mut offset = 0u64;
        for line in bytes.split(|&b| b == b'\n') {
            let parsed = std::str::from_utf8(line).ok().and_then(|l| {
                let (s, t) = l.split_once(' ')?;
                Some((s.parse().ok()?, t.parse().ok()?))
            });
            match parsed {
                Some(p) => out.push(p),
                None if line.is_empty() => {}
                None => return Err(Error::corruption(name, offset, "not `<sequence> <micros>`")),
            }
            offset += line.len() as u64 + 1;
        }
        Ok(out)
    }

    /// The WAL copies in `wal/`, by number.
    pub(super) fn kept_wals(&self) -> Result<BTreeMap<u64, PathBuf>> {
        let dir = self.dir.join(WAL_DIR);
        let mut out = BTreeMap::new();
        if !self.fs.exists(&dir) {
            return Ok(out);
        }
        for name in self.fs.list(&dir)? {
            if let Some((FileType::Log, n)) = parse_file_name(&name) {
                out.insert(n, dir.join(name));
            }
        }
        Ok(out)
    }

    /// The oldest WAL number a backup's recovery reads (its own WAL
    /// copies' smallest), `None` for a backup without WALs.
    pub(super) fn wal_floor(meta: &Meta) -> Option<u64> {
        meta.files
            .iter()
            .filter_map(|f| match parse_file_name(&f.name) {
                Some((FileType::Log, n)) => Some(n),
                _ => None,
            })
            .min()
    }

    /// The ids of `meta/`, ascending.
    pub(super) fn ids(&self) -> Result<Vec<u32>> {
        let mut ids: Vec<u32> = self
            .fs
            .list(&self.dir.join("meta"))?
            .iter()
            .filter_map(|n| n.parse().ok())
            .collect();
        ids.sort_unstable();
        Ok(ids)
    }

    pub(super) fn read_meta(&self, id: u32) -> Result<Meta> {
        let path = self.dir.join("meta").join(id.to_string());
        if !self.fs.exists(&path) {
            return Err(Error::InvalidArgument(format!("no backup {id}")));
        }
        let size = self.fs.file_size(&path)?;
        if size > MAX_META_BYTES {
            return Err(Error::corruption(
                path.display().to_string(),
                0,
                format!("{size} bytes: larger than any backup's description"),
            ));
        }
        let bytes = self.fs.read_all(&path)?;
        let meta: Meta = serde_json::from_slice(&bytes).map_err(|e| {
            Error::corruption(path.display().to_string(), e.column() as u64, e.to_string())
        })?;
        if !(1..=META_VERSION).contains(&meta.version) || meta.id != id {
            return Err(Error::corruption(
                path.display().to_string(),
                0,
                format!(
                    "version {} id {} (expected 1..={META_VERSION}, {id})",
                    meta.version, meta.id
                ),
            ));
        }
        Ok(meta)
    }

    fn write_meta(&self, meta: &Meta) -> Result<()> {
        let dir = self.dir.join("meta");
        let tmp = dir.join(format!("{}.tmp", meta.id));
        let bytes = serde_json::to_vec_pretty(meta)
            .map_err(|e| Error::InvalidArgument(format!("backup meta: {e}")))?;
        let mut f = self.fs.create(&tmp)?;
        f.append(&bytes)?;
        f.sync()?;
        drop(f);
        self.fs.rename(&tmp, &dir.join(meta.id.to_string()))?;
        self.fs.sync_dir(&dir)
    }

    /// The pacing of a backup (`true`) or a restore.
    fn pace(&self, backup: bool) -> Pace<'_> {
        let limiter = if backup {
            &self.opts.backup_rate_limiter
        } else {
            &self.opts.restore_rate_limiter
        };
        Pace {
            limiter: limiter.as_deref(),
            progress: self.opts.progress.as_ref(),
            state: BackupProgress::default(),
        }
    }

    /// Size and CRC32C of a file, read in 1 MiB pieces.
    fn checksum(&self, path: &Path) -> Result<(u64, u32)> {
        self.checksum_paced(path, &self.pace(true))
    }

    /// `checksum`, each piece paced by `pace`.
    fn checksum_paced(&self, path: &Path, pace: &Pace<'_>) -> Result<(u64, u32)> {
        let mut f = self.fs.open_sequential(path)?;
        let mut buf = vec![0u8; 1 << 20];
        let (mut size, mut crc) = (0u64, 0u32);
        loop {
            pace.bytes(buf.len());
            let n = f.read(&mut buf)?;
            if n == 0 {
                return Ok((size, crc));
            }
            let piece = buf.get(..n).unwrap_or_default();
            crc = crc32c::crc32c_append(crc, piece);
            size += n as u64;
        }
    }

    /// Removes a directory and the files in it, if it exists.
    fn remove_tree(&self, dir: &Path) -> Result<()> {
        if !self.fs.exists(dir) {
            return Ok(());
        }
        super::checkpoint::remove_temp_dir(self.fs.as_ref(), dir)
    }

    /// Removes what no backup needs: staging and private directories and
    /// `meta/*.tmp` of backups that do not exist, and shared files no
    /// `meta/` file names.
    fn collect_garbage(&self) -> Result<()> {
        let ids = self.ids()?;
        let mut needed = BTreeSet::new();
        for &id in &ids {
            for f in self.read_meta(id)?.files {
                needed.insert(f.stored);
            }
        }
        let meta_dir = self.dir.join("meta");
        for name in self.fs.list(&meta_dir)? {
            if name.ends_with(".tmp") {
                self.fs.remove(&meta_dir.join(name))?;
            }
        }
        let private = self.dir.join("private");
        for name in self.fs.list(&private)? {
            let live = name.parse::<u32>().is_ok_and(|id| ids.contains(&id));
            if !live {
                self.remove_tree(&private.join(name))?;
            }
        }
        let shared = self.dir.join("shared");
        for name in self.fs.list(&shared)? {
            if !needed.contains(&format!("shared/{name}")) {
                self.fs.remove(&shared.join(name))?;
            }
        }
        // WAL copies older than every backup's oldest WAL serve no restore
        // (all of them when no backup is left), and interrupted copies.
        let wal_dir = self.dir.join(WAL_DIR);
        if self.fs.exists(&wal_dir) {
            let mut floor = u64::MAX;
            for &id in &ids {
                if let Some(f) = Self::wal_floor(&self.read_meta(id)?) {
                    floor = floor.min(f);
                }
            }
            for name in self.fs.list(&wal_dir)? {
                let old = match parse_file_name(&name) {
                    Some((FileType::Log, n)) => n < floor,
                    _ => name != "TIMES",
                };
                if old {
                    self.fs.remove(&wal_dir.join(name))?;
                }
            }
        }
        Ok(())
    }
}

/// What [`BackupEngine::backup_wals`] copied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WalBackupReport {
    /// WAL files copied (new, or grown since the last copy).
    pub files_copied: usize,
    /// Their bytes.
    pub bytes_copied: u64,
}

/// `<stem>_<crc32c>_<size>.<ext>` for a table or blob file, `None` for the
/// files every backup keeps privately.
fn shared_name(name: &str, crc: u32, size: u64) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    matches!(ext, "sst" | "blob").then(|| format!("{stem}_{crc:08x}_{size}.{ext}"))
}
