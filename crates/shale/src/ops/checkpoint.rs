//! `Db::checkpoint`: an openable copy of the live DB in another directory
//! (RocksDB's `Checkpoint::CreateCheckpoint`), consistent across every
//! column family.
//!
//! Steps:
//! 1. Refuse an existing target (`InvalidArgument`); clear a `DIR.tmp`
//!    left by an earlier crash and create it afresh, beside the target.
//! 2. Hold off file deletions (`live_files::DeletionsHeld`) until the end.
//! 3. Flush every family first when `log_size_for_flush` asks (0: always;
//!    otherwise when the live WALs hold more bytes than it).
//! 4. Capture, under the DB mutex with no MANIFEST write in flight, every
//!    family's table and blob files, the MANIFEST's name and size, and the
//!    live WALs with the bytes of records each holds (`live_files::capture`;
//!    the current WAL's size is read under the WAL lock, so it ends at a
//!    record boundary and holds every write acknowledged before the call).
//! 5. Hand the WAL's buffered bytes to the OS (`Db::flush_wal`), then, with
//!    no lock held: hard-link the tables and blob files (a file system that
//!    cannot link across devices copies them), copy the MANIFEST up to its
//!    captured size, write CURRENT, copy the latest OPTIONS file, copy each
//!    WAL recovery from that MANIFEST reads up to its captured size (a memory-mapped WAL's reserved zero tail
//!    is never copied: the copy ends at the last record), sync everything.
//! 6. Sync `DIR.tmp`, rename it to `DIR`, sync the parent.
//!
//! Crash safety: `DIR` appears only by the rename of a complete, synced
//! directory, so a crash at any point leaves no `DIR`, or a complete one; a
//! left-over `DIR.tmp` is not at the target path (the next checkpoint to
//! `DIR` removes it). The
//! copy shares no writable file with the DB: tables and blob files are
//! immutable, the MANIFEST, CURRENT, WALs and OPTIONS are copies.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, LinkKind};
use crate::shared::DbInner;
use crate::version::filename::{parse_file_name, FileType, CURRENT_FILE_NAME};

use super::live_files::{capture, DeletionsHeld};

/// Options of [`Db::checkpoint_with`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CheckpointOptions {
    /// RocksDB's `log_size_for_flush`: 0 (the default) flushes every
    /// family's memtable before the copy; otherwise the families are
    /// flushed only when the live WALs hold more than this many bytes, and
    /// the copy carries the WALs instead (`u64::MAX`: never flush).
    pub log_size_for_flush: u64,
}

impl CheckpointOptions {
    /// The defaults (flush first).
    pub fn new() -> Self {
        Self::default()
    }
}

/// What [`Db::checkpoint`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckpointReport {
    /// The families were flushed first (`log_size_for_flush`).
    pub flushed: bool,
    /// Table and blob files hard-linked.
    pub files_linked: usize,
    /// Their bytes (shared, not written).
    pub bytes_linked: u64,
    /// Table and blob files copied (the file system could not link them).
    pub files_copied: usize,
    /// Bytes written into the checkpoint: copied tables and blob files,
    /// the MANIFEST prefix, CURRENT, OPTIONS and the WALs.
    pub bytes_copied: u64,
    /// WALs copied.
    pub wal_files: usize,
    /// The largest sequence number in the copied tables (the WALs' records
    /// may go beyond it).
    pub largest_table_sequence: u64,
}

/// `DIR.tmp`: where a checkpoint to `dir` is built.
pub(super) fn temp_dir_of(dir: &Path) -> Result<PathBuf> {
    let name = dir.file_name().ok_or_else(|| {
        Error::InvalidArgument(format!(
            "checkpoint directory {} has no name",
            dir.display()
        ))
    })?;
    let mut tmp = name.to_os_string();
    tmp.push(".tmp");
    Ok(dir.with_file_name(tmp))
}

/// Removes `dir` and the files in it (a checkpoint's temporary directory,
/// a backup's staging or private one: no subdirectories). Best effort where the file system cannot remove
/// directories.
pub(super) fn remove_temp_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    for name in fs.list(dir)? {
        fs.remove(&dir.join(name))?;
    }
    match fs.remove_dir(dir) {
        Err(Error::NotSupported(_)) => Ok(()),
        r => r,
    }
}

/// The newest `OPTIONS-NNNNNN` in the DB directory, if any.
fn latest_options_file(fs: &dyn FileSystem, dir: &Path) -> Result<Option<String>> {
    Ok(fs
        .list(dir)?
        .into_iter()
        .filter_map(|n| match parse_file_name(&n) {
            Some((FileType::Options, number)) => Some((number, n)),
            _ => None,
        })
        .max()
        .map(|(_, n)| n))
}

/// Gives `from` the name `to`: a hard link, or a copy where the file
/// system cannot link (`NotSupported`).
pub(super) fn link_or_copy(fs: &dyn FileSystem, from: &Path, to: &Path) -> Result<LinkKind> {
    match fs.link(from, to) {
        Err(Error::NotSupported(_)) => {
            fs.copy_file(from, to, None)?;
            Ok(LinkKind::Copied)
        }
        r => r,
    }
}

/// Steps 3 to 5 of the module docs, into `tmp`.
fn fill(
    db: &Db,
    inner: &Arc<DbInner>,
    tmp: &Path,
    opts: &CheckpointOptions,
) -> Result<CheckpointReport> {
    let fs = inner.fs.as_ref();
    let mut report = CheckpointReport::default();
    let flush = opts.log_size_for_flush == 0 || {
        let st = inner.state.lock();
        inner.live_wal_bytes(&st) > opts.log_size_for_flush
    };
    if flush {
        crate::bg::scheduler::flush_all_and_wait(inner)?;
        report.flushed = true;
    }
    crate::sync_point!("Checkpoint:BeforeCapture");
    let cap = capture(inner)?;
    report.largest_table_sequence = cap.largest_seq;
    // Every byte the capture counts reaches the OS (a switched WAL was
    // handed over at the switch; this hands over the current one's).
    db.flush_wal(false)?;
    crate::sync_point!("Checkpoint:Captured");
    for f in &cap.live.files {
        let kind = link_or_copy(fs, &inner.dir.join(&f.name), &tmp.join(&f.name))?;
        match kind {
            LinkKind::HardLink => {
                report.files_linked += 1;
                report.bytes_linked += f.size;
            }
            LinkKind::Copied => {
                report.files_copied += 1;
                report.bytes_copied += f.size;
            }
        }
    }
    let manifest = &cap.live.manifest;
    report.bytes_copied += fs.copy_file(
        &inner.dir.join(manifest),
        &tmp.join(manifest),
        Some(cap.live.manifest_size),
    )?;
    let current = format!("{manifest}\n");
    let mut f = fs.create(&tmp.join(CURRENT_FILE_NAME))?;
    f.append(current.as_bytes())?;
    f.sync()?;
    drop(f);
    report.bytes_copied += current.len() as u64;
    {
        // Options changes rewrite (and prune) the OPTIONS files under this
        // lock.
        let _options = inner.options_lock.lock();
        if let Some(name) = latest_options_file(fs, &inner.dir)? {
            report.bytes_copied += fs.copy_file(&inner.dir.join(&name), &tmp.join(&name), None)?;
        }
    }
    let needed = |n: u64| n >= cap.wal_floor || (n == cap.prev_log && n != 0);
    for w in cap.wals.iter().filter(|w| w.current || needed(w.number)) {
        report.bytes_copied +=
            fs.copy_file(&inner.dir.join(&w.name), &tmp.join(&w.name), Some(w.size))?;
        report.wal_files += 1;
    }
    Ok(report)
}

/// Makes `dir` (which must not exist; the caller checked) through
/// `DIR.tmp` (module docs, steps 1, 2 and 6): clears a temporary directory
/// an earlier crash left, runs `fill` on a fresh one with file deletions
/// held off, then syncs it, renames it to `dir` and syncs the parent. On
/// any failure the temporary directory is removed. Checkpoints and
/// column family exports are built this way.
pub(super) fn build_dir<T>(
    inner: &Arc<DbInner>,
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<T>,
) -> Result<T> {
    let fs = inner.fs.as_ref();
    let tmp = temp_dir_of(dir)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs.create_dir_all(&parent)?;
    if fs.exists(&tmp) {
        // Left by a build that crashed or failed.
        remove_temp_dir(fs, &tmp)?;
    }
    fs.create_dir_all(&tmp)?;
    let held = DeletionsHeld::new(inner);
    let filled = fill(&tmp);
    drop(held);
    let out = match filled {
        Ok(r) => r,
        Err(e) => {
            let _ = remove_temp_dir(fs, &tmp);
            return Err(e);
        }
    };
    crate::sync_point!("Checkpoint:BeforeRename");
    let placed = fs
        .sync_dir(&tmp)
        .and_then(|()| fs.rename(&tmp, dir))
        .and_then(|()| fs.sync_dir(&parent));
    if let Err(e) = placed {
        if !fs.exists(dir) {
            let _ = remove_temp_dir(fs, &tmp);
        }
        return Err(e);
    }
    Ok(out)
}

/// `Db::checkpoint_with` (see the module docs).
fn create(db: &Db, dir: &Path, opts: &CheckpointOptions) -> Result<CheckpointReport> {
    let inner = db.inner();
    inner.check_open()?;
    // A read-only view's file system keeps writes in memory: a checkpoint
    // of it would not reach the disk.
    inner.check_read_write("checkpoint")?;
    let fs = inner.fs.as_ref();
    if fs.exists(dir) {
        return Err(Error::InvalidArgument(format!(
            "checkpoint directory {} already exists",
            dir.display()
        )));
    }
    let report = build_dir(inner, dir, |tmp| fill(db, inner, tmp, opts))?;
    inner.log.info(&format!(
        "checkpoint {}: {} files linked ({} bytes), {} copied, {} WALs, {} bytes written{}",
        dir.display(),
        report.files_linked,
        report.bytes_linked,
        report.files_copied,
        report.wal_files,
        report.bytes_copied,
        if report.flushed {
            ", after a flush"
        } else {
            ""
        }
    ));
    Ok(report)
}

impl Db {
    /// Makes an openable copy of the DB in `dir` (which must not exist),
    /// consistent across every column family, flushing the memtables
    /// first (RocksDB's `CreateCheckpoint` with `log_size_for_flush = 0`).
    /// Table and blob files are hard-linked where the file system can,
    /// so the copy costs little space while the DB keeps them.
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<CheckpointReport> {
        self.checkpoint_with(dir, &CheckpointOptions::default())
    }

    /// [`Db::checkpoint`] with [`CheckpointOptions`]: with a nonzero
    /// `log_size_for_flush` the copy may carry the live WALs instead of a
    /// flush; it holds every write acknowledged before the call (writes
    /// made with `disable_wal` only when flushed).
    pub fn checkpoint_with(
        &self,
        dir: impl AsRef<Path>,
        opts: &CheckpointOptions,
    ) -> Result<CheckpointReport> {
        create(self, dir.as_ref(), opts)
    }
}
