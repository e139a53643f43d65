//! Deletes files no version references: WALs that hold no write some
//! family has not flushed (every family's oldest memtable with data starts
//! at or after them; an idle family pins none), SSTs and blob files outside every live version and pending output (and not
//! added by a failed MANIFEST edit, see `VersionSet::live_files`), and old
//! MANIFESTs (but not one being rolled to). Up to `recycle_log_file_num`
//! obsolete WALs that this instance closed and synced are kept instead, for
//! the next memtable switch to reuse (`DbState::recycle_wals`).
//!
//! The live set and the next file number are taken under the DB mutex; the
//! directory is listed and files removed without it. A table's deletion (its
//! LOG line and listener call) and a blob file's (its LOG line) are
//! recorded after the removal, with its outcome (so after the version
//! dropping the file was installed). Only files numbered
//! below the captured next file number are candidates, so a file created
//! after the capture is never touched. Nothing is deleted while
//! `Db::disable_file_deletions` holds (`DbState::file_deletions_disabled`).
//! With WAL archiving an obsolete WAL moves to `archive/` instead, and the
//! archive is trimmed at the end of each pass (`shared::wal_archive`).

use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::version::filename::{parse_file_name, FileType};

use crate::shared::{DbInner, DbState};

pub(crate) fn delete_obsolete_files(db: &Arc<DbInner>, st: &mut MutexGuard<'_, DbState>) {
    if st.file_deletions_disabled > 0 {
        // `Db::disable_file_deletions`: everything stays (closed WALs stay
        // in `closed_wals` too) until the pass that enabling runs.
        return;
    }
    let mut live = st.versions.live_files();
    live.extend(st.pending_outputs.iter().copied());
    let current_wal = db.wals.current.lock().number;
    // WALs no family needs in memory, but never one that recovery would
    // still read (a family idle since its last flush keeps an old log
    // number in the MANIFEST until a flush edit carries the DB-wide
    // minimum): a deletion is not durable before the next directory sync,
    // and a WAL read after a power loss must hold what it held.
    let log_number = unflushed_wal_floor(st, current_wal).min(st.versions.recovery_log_floor());
    while let Some(&(number, _)) = st.closed_wals.front() {
        if number >= log_number {
            break;
        }
        st.closed_wals.pop_front();
        // Kept for reuse: a WAL this instance closed, known synced (so its
        // file holds exactly its records, see `fs::reuse_writable`).
        if st.recycle_wals.len() < db.opts.recycle_log_file_num && db.wals.closed_wal_synced(number)
        {
            st.recycle_wals.push_back(number);
        }
    }
    // Obsolete WALs a flush did not sync (one family): their writers go.
    db.wals.forget_closed_wals_before(log_number);
    let recycling: Vec<u64> = st.recycle_wals.iter().copied().collect();
    let manifest = st.versions.manifest_file_number();
    // A MANIFEST being rolled to (the write runs without the DB mutex) or
    // one CURRENT may name after a failed switch, and their CURRENT temp
    // files.
    let protected = st.versions.protected_manifests();
    let limit = st.versions.next_file_number();
    MutexGuard::unlocked(st, || {
        crate::sync_point!("DeleteObsoleteFiles:Unlocked");
        db.wals.drop_retired_wals();
        // One pass at a time, so two passes never delete the same file.
        let _purge = db.purge_lock.lock();
        let Ok(names) = db.fs.list(&db.dir) else {
            return;
        };
        for name in names {
            let Some((kind, number)) = parse_file_name(&name) else {
                continue;
            };
            if number >= limit {
                continue;
            }
            let obsolete = match kind {
                FileType::Log => number < log_number && !recycling.contains(&number),
                FileType::Table | FileType::Blob => !live.contains(&number),
                FileType::Manifest => number != manifest && !protected.contains(&number),
                // An OPTIONS file being written at run time is a pending output.
                FileType::Temp => !protected.contains(&number) && !live.contains(&number),
                _ => false,
            };
            if obsolete && kind == FileType::Log && db.opts.archives_wals() {
                let now = db.opts.clock.now_secs();
                if let Err(e) = db
                    .wal_archive
                    .archive(db.fs.as_ref(), &db.dir, &name, number, now)
                {
                    db.log
                        .warn(&format!("could not archive obsolete {name}: {e}"));
                }
                continue;
            }
            if obsolete {
                if kind == FileType::Blob {
                    db.blobs.forget(number);
                }
                if kind == FileType::Table {
                    db.table_cache.evict(number);
                }
                let r = db.fs.remove(&db.dir.join(&name));
                if let Err(e) = &r {
                    db.log
                        .warn(&format!("could not delete obsolete {name}: {e}"));
                }
                match kind {
                    FileType::Table => crate::shared::events::table_deleted(db, number, r),
                    FileType::Blob => crate::shared::events::blob_deleted(db, number, r),
                    _ => {}
                }
            }
        }
        if db.opts.archives_wals() {
            let now = db.opts.clock.now_secs();
            for (name, e) in db.wal_archive.trim(db.fs.as_ref(), &db.dir, &db.opts, now) {
                db.log
                    .warn(&format!("could not delete archived WAL {name}: {e}"));
            }
        }
    });
}

/// The oldest WAL that holds a write some family has not flushed, as the
/// memtables say (`current_wal` when none does): an idle family pins none.
pub(crate) fn unflushed_wal_floor(st: &DbState, current_wal: u64) -> u64 {
    st.cfs
        .values()
        .filter_map(|c| c.oldest_unflushed_wal())
        .fold(current_wal, u64::min)
}
