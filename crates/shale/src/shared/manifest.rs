//! `log_and_apply` for the running DB: one MANIFEST writer at a time, with
//! the DB mutex released during the MANIFEST append + fsync (or roll), as
//! RocksDB's `VersionSet::LogAndApply` does.
//!
//! Protocol (all steps but the IO under the DB mutex):
//! 1. wait on `DbInner::manifest_cv` until no write is in flight;
//! 2. `VersionSet::begin_apply`: check the edit, build the new version on
//!    the current one, capture `next_file_number` / `last_sequence` into it,
//!    take the writer out of the set;
//! 3. release the DB mutex, `ManifestWrite::run` (append + sync, or write a
//!    new MANIFEST and switch CURRENT), re-take the mutex;
//! 4. `VersionSet::finish_apply`: install (or keep what a failed write may
//!    have persisted), wake the next writer.
//!
//! Invariants while the mutex is released: the current version does not
//! change (only step 4 installs, and writes are serialized), so the version
//! built in step 2 is the correct successor. Tables the edit adds are in
//! `pending_outputs` until the caller removes them after step 4; files the
//! edit deletes are in the current version until step 4; a MANIFEST being
//! rolled to is in `VersionSet::protected_manifests`. So the obsolete-file
//! sweep, which may run meanwhile, deletes none of them. File numbers handed
//! out meanwhile are at least the captured `next_file_number`, and every
//! table a later edit adds was numbered before that edit's capture.

use parking_lot::MutexGuard;

use crate::error::Result;
use crate::version::VersionEdit;

use crate::shared::{DbInner, DbState};

/// Logs `edit` to the MANIFEST and installs the resulting version; the DB
/// mutex (held by the caller through `st`) is released during the IO. On
/// success `st.versions.current(edit.column_family)` includes the edit; the
/// caller still has to publish a super version.
pub(crate) fn log_and_apply(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    edit: &mut VersionEdit,
) -> Result<()> {
    log_and_apply_group(db, st, std::slice::from_mut(edit))
}

/// `log_and_apply` for several edits written as one atomic group, with one
/// sync.
pub(crate) fn log_and_apply_group(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    edits: &mut [VersionEdit],
) -> Result<()> {
    wait_for_writer(db, st);
    apply_now(db, st, edits)
}

/// Like `log_and_apply` for a job's edit of family `edit.column_family`:
/// if the family was dropped while the job ran (or while it waited for the
/// MANIFEST), nothing is written and `Ok(false)` is returned; the caller
/// discards its outputs.
pub(crate) fn log_and_apply_if_live(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    edit: &mut VersionEdit,
) -> Result<bool> {
    wait_for_writer(db, st);
    if st.versions.family(edit.column_family).is_none() {
        return Ok(false);
    }
    apply_now(db, st, std::slice::from_mut(edit)).map(|()| true)
}

/// Waits until no MANIFEST write is in flight (the DB mutex is released
/// while waiting). For a caller that then takes the WAL lock and writes
/// with [`log_and_apply_locked`].
pub(crate) fn wait_for_manifest_writer(db: &DbInner, st: &mut MutexGuard<'_, DbState>) {
    wait_for_writer(db, st)
}

/// `log_and_apply_group` without releasing the DB mutex during the IO, for
/// a caller that holds the WAL lock too (ingestion: writes stay stopped
/// and no thread holding the DB mutex can be waiting for the WAL lock).
/// Requires that no MANIFEST write is in flight (`wait_for_manifest_writer`
/// under the same guard).
pub(crate) fn log_and_apply_locked(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    edits: &mut [VersionEdit],
) -> Result<()> {
    let mut write = st.versions.begin_apply(edits)?;
    let result = write.run();
    let r = st.versions.finish_apply(write, result);
    db.manifest_cv.notify_all();
    r
}

fn wait_for_writer(db: &DbInner, st: &mut MutexGuard<'_, DbState>) {
    while st.versions.manifest_write_in_flight() {
        db.manifest_cv.wait(st);
    }
}

fn apply_now(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    edits: &mut [VersionEdit],
) -> Result<()> {
    let mut write = st.versions.begin_apply(edits)?;
    if st.file_deletions_disabled > 0 {
        write.keep_previous_manifest();
    }
    let result = MutexGuard::unlocked(st, || {
        crate::sync_point!("ManifestWriter::BeforeWrite");
        write.run()
    });
    let r = st.versions.finish_apply(write, result);
    db.manifest_cv.notify_all();
    r
}
