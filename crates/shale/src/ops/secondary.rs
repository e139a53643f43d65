//! The secondary instance: RocksDB's `OpenAsSecondary` with
//! `TryCatchUpWithPrimary`. A [`SecondaryDb`] follows a primary that another
//! handle (usually another process) writes: each catch-up makes a new
//! read-only view of the primary's directory (`ops/read_only.rs`: its
//! MANIFEST, its tables, its WALs replayed into memory) and swaps it in.
//!
//! How this differs from RocksDB: RocksDB's secondary tails the MANIFEST
//! and the WALs from where it stopped; this one re-reads them, so a
//! catch-up costs the live MANIFEST, the live WALs and opening the live
//! tables (`docs/perf/operations.md` has the measurements), and a view's
//! caches start cold.
//!
//! Invariants:
//! - What a view reads is a prefix of the primary's writes that reached
//!   its WAL (as of the view's making; every write acknowledged before
//!   `try_catch_up_with_primary` is called is in it when the primary's WAL
//!   is memory-mapped, the default, or after the primary's `flush_wal`).
//! - A view stays readable while the primary compacts and deletes files:
//!   it opens every live table and blob file when it is made and keeps them
//!   open. Hence `max_open_files = -1` and `paranoid_checks = true` are
//!   required (RocksDB requires `max_open_files = -1` for the same reason).
//! - A view is kept only when the primary's CURRENT and MANIFEST size
//!   were the same before and after it was made (`open_view`). A failed
//!   catch-up (the primary changed its MANIFEST or deleted a file while
//!   each of the tries was made) keeps the previous view and returns the
//!   error (`TryAgain` for the former).
//! - Handles from [`SecondaryDb::db`] (and their iterators and snapshots)
//!   keep the view they were taken from; later catch-ups do not move them.
//! - `secondary_dir` holds the secondary's own `LOG` files (RocksDB's
//!   `secondary_path`); nothing is ever written in the primary's directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::db::Db;
use crate::error::{Error, Result};
use crate::fs::OverlayFs;
use crate::options::Options;

/// Tries a catch-up makes before it gives up (each one a new view).
const CATCH_UP_TRIES: u32 = 16;

/// A read-only follower of a primary DB (see the module comment).
pub struct SecondaryDb {
    primary: PathBuf,
    secondary_dir: PathBuf,
    opts: Options,
    view: RwLock<Db>,
}

impl std::fmt::Debug for SecondaryDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecondaryDb({})", self.primary.display())
    }
}

impl Db {
    /// Opens a secondary instance of the DB at `primary` (see
    /// [`SecondaryDb`]), its `LOG` in `secondary_dir` (created if missing;
    /// it must not be `primary`). `opts` as for `Db::open_read_only`, with
    /// `max_open_files = -1` and `paranoid_checks = true` (the defaults):
    /// other values are `InvalidArgument`.
    pub fn open_secondary(
        primary: impl AsRef<Path>,
        secondary_dir: impl AsRef<Path>,
        opts: Options,
    ) -> Result<SecondaryDb> {
        let (primary, secondary_dir) = (primary.as_ref(), secondary_dir.as_ref());
        if opts.max_open_files != -1 {
            return Err(Error::InvalidArgument(format!(
                "open_secondary: max_open_files must be -1 (is {}): a secondary keeps \
                 every table it reads open, so the primary's deletions cannot break it",
                opts.max_open_files
            )));
        }
        if !opts.paranoid_checks {
            return Err(Error::InvalidArgument(
                "open_secondary: paranoid_checks must be true: a secondary opens every \
                 live table when it catches up"
                    .into(),
            ));
        }
        if secondary_dir == primary {
            return Err(Error::InvalidArgument(format!(
                "open_secondary: the secondary directory {} is the primary's",
                secondary_dir.display()
            )));
        }
        opts.fs.create_dir_all(secondary_dir)?;
        let view = open_view(primary, secondary_dir, &opts)?;
        Ok(SecondaryDb {
            primary: primary.to_path_buf(),
            secondary_dir: secondary_dir.to_path_buf(),
            opts,
            view: RwLock::new(view),
        })
    }
}

/// One read-only view of `primary`, its LOG in `secondary_dir`. A view is
/// kept only if the primary's CURRENT and the size of the MANIFEST it names
/// were the same before and after it was made: then the view read a whole
/// MANIFEST (no record half-written) and every WAL that MANIFEST needs
/// (the primary deletes a WAL only after a MANIFEST edit that no longer
/// needs it, which the view would have seen).
fn open_view(primary: &Path, secondary_dir: &Path, opts: &Options) -> Result<Db> {
    let mut last = None;
    for _ in 0..CATCH_UP_TRIES {
        let before = manifest_state(opts, primary);
        let overlay = OverlayFs::with_log_dir(Arc::clone(&opts.fs), primary, secondary_dir);
        match super::read_only::open_over(primary, opts.clone(), overlay) {
            Ok(db) if before.is_some() && manifest_state(opts, primary) == before => return Ok(db),
            Ok(_) => {
                last = Some(Error::TryAgain(format!(
                    "{}: the primary changed its MANIFEST while the view was made, \
                     {CATCH_UP_TRIES} times",
                    primary.display()
                )))
            }
            // The primary moved on while the view was made (a file listed
            // or named was deleted): try a fresh view.
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Err(last.unwrap_or_else(|| Error::TryAgain("open_secondary: no try made".into())))
}

/// The primary's CURRENT text and the size of the MANIFEST it names.
fn manifest_state(opts: &Options, primary: &Path) -> Option<(Vec<u8>, u64)> {
    let current = opts.fs.read_all(&primary.join("CURRENT")).ok()?;
    let name = std::str::from_utf8(&current).ok()?.trim_end();
    let size = opts.fs.file_size(&primary.join(name)).ok()?;
    Some((current, size))
}

impl SecondaryDb {
    /// Makes a new view of the primary as it is now and serves reads from
    /// it (handles taken before keep theirs). On error the previous view
    /// stays.
    pub fn try_catch_up_with_primary(&self) -> Result<()> {
        let view = open_view(&self.primary, &self.secondary_dir, &self.opts)?;
        let old = std::mem::replace(&mut *self.view.write(), view);
        // The old view closes when its last handle goes.
        drop(old);
        Ok(())
    }

    /// The current view: a read-only `Db` (reads, iterators, snapshots,
    /// properties; changes are `NotSupported`). Cheap: a handle clone.
    pub fn db(&self) -> Db {
        self.view.read().clone()
    }

    /// The primary's directory.
    pub fn primary_path(&self) -> &Path {
        &self.primary
    }

    /// Closes the current view (handles taken from it fail afterwards).
    pub fn close(self) -> Result<()> {
        self.view.into_inner().close()
    }
}
