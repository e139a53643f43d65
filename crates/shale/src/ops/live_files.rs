//! What an external backup tool needs from a live DB (RocksDB's
//! `DisableFileDeletions` / `EnableFileDeletions`, `GetLiveFilesMetaData`
//! with the MANIFEST's size, `GetSortedWalFiles`), and the capture
//! `checkpoint` builds on.
//!
//! Deletions are counted: each `disable_file_deletions` needs one
//! `enable_file_deletions(false)`, or one `enable_file_deletions(true)`
//! ends them all. While disabled, the obsolete-file sweep deletes nothing
//! and a MANIFEST roll keeps the old MANIFEST (`shared::manifest`); the
//! enable that brings the count to 0 runs a sweep.
//!
//! A [`LiveFiles`] is taken under the DB mutex with no MANIFEST write in
//! flight: its MANIFEST, read up to `manifest_size`, describes exactly its
//! table and blob files (every family's current version), so copying that
//! prefix and those files gives a consistent set. With deletions disabled
//! the files stay on disk until enabled again.

use std::sync::Arc;

use crate::base::FileNum;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::shared::DbInner;
use crate::version::filename::{
    blob_file_name, log_file_name, manifest_file_name, table_file_name,
};

/// What a live file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveFileKind {
    /// A table (`NNNNNN.sst`).
    Table,
    /// A blob file (`NNNNNN.blob`, key-value separation).
    Blob,
}

/// One table or blob file of a family's current version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFile {
    /// The file's name in the DB directory.
    pub name: String,
    /// Its number.
    pub number: FileNum,
    /// Table or blob file.
    pub kind: LiveFileKind,
    /// The family it belongs to.
    pub column_family: String,
    /// The table's level (`None` for a blob file).
    pub level: Option<usize>,
    /// Size in bytes.
    pub size: u64,
}

/// The files a consistent copy of the DB needs, as of one moment (see the
/// module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFiles {
    /// Every family's tables and blob files.
    pub files: Vec<LiveFile>,
    /// The live MANIFEST's name (`MANIFEST-NNNNNN`).
    pub manifest: String,
    /// The bytes of the MANIFEST that describe `files`: copy this prefix.
    pub manifest_size: u64,
}

/// One WAL not yet deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveWalFile {
    /// The file's name (`NNNNNN.log`).
    pub name: String,
    /// Its number.
    pub number: FileNum,
    /// Bytes of records: for a closed WAL its final size, for the current
    /// one what was appended so far. A memory-mapped WAL's file is longer
    /// (a reserved zero tail): copy this many bytes.
    pub size: u64,
    /// True for the WAL being written.
    pub current: bool,
}

/// The capture `checkpoint` copies from: the live files, then the WALs.
pub(crate) struct Capture {
    pub(crate) live: LiveFiles,
    pub(crate) wals: Vec<LiveWalFile>,
    /// The WALs recovery from this MANIFEST state reads: numbered at or
    /// above this, or `prev_log` (RocksDB's `MinLogNumberToKeep`). Older
    /// ones (kept only while deletions are held off) hold nothing it needs.
    pub(crate) wal_floor: FileNum,
    pub(crate) prev_log: FileNum,
    /// The largest sequence number in the captured tables.
    pub(crate) largest_seq: crate::base::SeqNo,
}

/// Takes [`Capture`] under the DB mutex (and the WAL lock for the current
/// WAL's size), waiting for a MANIFEST write in flight to finish.
pub(crate) fn capture(db: &DbInner) -> Result<Capture> {
    db.check_open()?;
    let mut st = db.state.lock();
    while st.versions.manifest_write_in_flight() {
        db.manifest_cv.wait(&mut st);
    }
    if !st.versions.has_manifest_writer() {
        // A MANIFEST write failed: the on-disk MANIFEST may hold an edit
        // the current version does not (the next write rolls).
        return Err(st.errors.write_error().unwrap_or_else(|| {
            Error::WritesStopped("a MANIFEST write failed; resume or reopen the DB".into())
        }));
    }
    let mut files = Vec::new();
    let mut largest_seq = 0;
    for (_, family) in st.versions.families() {
        let v = family.current();
        for level in 0..v.num_levels() {
            for f in v.files(level) {
                largest_seq = largest_seq.max(f.global_seqno.unwrap_or(f.largest_seq));
                files.push(LiveFile {
                    name: table_file_name(f.number),
                    number: f.number,
                    kind: LiveFileKind::Table,
                    column_family: family.name.clone(),
                    level: Some(level),
                    size: f.file_size,
                });
            }
        }
        for (&number, b) in v.blob_files() {
            files.push(LiveFile {
                name: blob_file_name(number),
                number,
                kind: LiveFileKind::Blob,
                column_family: family.name.clone(),
                level: None,
                size: b.file_size,
            });
        }
    }
    let live = LiveFiles {
        files,
        manifest: manifest_file_name(st.versions.manifest_file_number()),
        manifest_size: st.versions.manifest_file_size(),
    };
    let mut wals: Vec<LiveWalFile> = st
        .closed_wals
        .iter()
        .map(|&(number, size)| LiveWalFile {
            name: log_file_name(number),
            number,
            size,
            current: false,
        })
        .collect();
    {
        let wal = db.wals.current.lock();
        if let Some(w) = &wal.writer {
            wals.push(LiveWalFile {
                name: log_file_name(wal.number),
                number: wal.number,
                size: w.file_size(),
                current: true,
            });
        }
    }
    Ok(Capture {
        live,
        wals,
        wal_floor: st.versions.recovery_log_floor(),
        prev_log: st.versions.prev_log_number(),
        largest_seq,
    })
}

/// `Db::enable_file_deletions`, also run by `DeletionsHeld`'s drop.
fn enable(db: &Arc<DbInner>, force: bool) {
    let mut st = db.state.lock();
    if force {
        st.file_deletions_disabled = 0;
    } else {
        st.file_deletions_disabled = st.file_deletions_disabled.saturating_sub(1);
    }
    if st.file_deletions_disabled == 0 {
        crate::shared::obsolete::delete_obsolete_files(db, &mut st);
    }
}

/// `Db::disable_file_deletions`: counts one more, then waits for a sweep
/// already deleting to finish, so nothing is deleted after the return.
fn disable(db: &DbInner) {
    db.state.lock().file_deletions_disabled += 1;
    drop(db.purge_lock.lock());
}

/// File deletions disabled until dropped (one count).
pub(crate) struct DeletionsHeld(Arc<DbInner>);

impl DeletionsHeld {
    pub(crate) fn new(db: &Arc<DbInner>) -> DeletionsHeld {
        disable(db);
        DeletionsHeld(Arc::clone(db))
    }
}

impl Drop for DeletionsHeld {
    fn drop(&mut self) {
        enable(&self.0, false);
    }
}

impl Db {
    /// Stops the deletion of obsolete files (tables, blob files, WALs,
    /// MANIFESTs) until a matching [`Db::enable_file_deletions`]; calls are
    /// counted, as in RocksDB. On return no deletion is under way, so the
    /// files [`Db::live_files`] and [`Db::live_wal_files`] name stay until
    /// deletions are enabled again.
    pub fn disable_file_deletions(&self) -> Result<()> {
        self.inner().check_open()?;
        disable(self.inner());
        Ok(())
    }

    /// Undoes one [`Db::disable_file_deletions`] (`force`: all of them).
    /// When none is left, the files that became obsolete meanwhile are
    /// deleted now.
    pub fn enable_file_deletions(&self, force: bool) -> Result<()> {
        self.inner().check_open()?;
        enable(self.inner(), force);
        Ok(())
    }

    /// Every family's table and blob files, and the MANIFEST prefix that
    /// describes exactly them (see [`LiveFiles`]). For a copy that stays
    /// valid, disable file deletions first.
    pub fn live_files(&self) -> Result<LiveFiles> {
        Ok(capture(self.inner())?.live)
    }

    /// The WALs not yet deleted, oldest first, the current one last, with
    /// the bytes of records each holds. Writes acknowledged before the
    /// call are within those bytes once [`Db::flush_wal`] has run.
    pub fn live_wal_files(&self) -> Result<Vec<LiveWalFile>> {
        Ok(capture(self.inner())?.wals)
    }
}
