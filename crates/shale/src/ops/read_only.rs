//! `Db::open_read_only`: RocksDB's `OpenForReadOnly`. The open runs the
//! engine's own recovery over an [`OverlayFs`] (the DB's file system
//! underneath, every change kept in memory), so it recovers exactly as a
//! read-write open would (the WALs replayed into memory) and changes no
//! byte of the directory; then the overlay is frozen.
//!
//! Invariants: no LOCK is taken (any number of read-only opens, in any
//! number of processes, beside one writer); no background thread runs;
//! writes, `flush`, `compact_range`, `reclaim`, family creation and drops
//! and option changes are `NotSupported`. The view is the DB as of the
//! open: a writer's later changes are not seen (reopen, or use a secondary
//! instance), and the writer may delete files the view reads, which then
//! fail with an IO error, unless the view keeps them open
//! (`max_open_files = -1` keeps every table open from the first read;
//! `paranoid_checks` opens them all at open).

use std::path::Path;
use std::sync::Arc;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::fs::OverlayFs;
use crate::options::Options;

impl Db {
    /// Opens the DB at `path` for reading only (see the module comment):
    /// every column family the DB has (`opts.column_families` may give
    /// their options; a family listed there that does not exist is
    /// `InvalidArgument`, as nothing can be created). A directory with no
    /// DB is `InvalidArgument`.
    pub fn open_read_only(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let overlay = OverlayFs::new(Arc::clone(&opts.fs));
        open_over(path.as_ref(), opts, overlay)
    }
}

/// `Db::open_read_only` through `overlay`, which must be over `opts.fs`.
pub(super) fn open_over(path: &Path, mut opts: Options, overlay: Arc<OverlayFs>) -> Result<Db> {
    if !opts.fs.exists(&path.join("CURRENT")) {
        return Err(Error::InvalidArgument(format!(
            "{}: no DB here (a read-only open creates nothing)",
            path.display()
        )));
    }
    opts.fs = overlay.clone();
    opts.create_if_missing = false;
    opts.create_missing_column_families = false;
    let db = Db::open_mode(path, opts, true)?;
    overlay.freeze();
    Ok(db)
}
