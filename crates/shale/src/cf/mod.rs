//! Column families: independent key spaces of one DB, each with its own
//! options, memtables and LSM version, sharing the DB's WAL, sequence
//! numbers, snapshots, file numbers, caches and background threads.
//!
//! Three pieces per family:
//! - [`ColumnFamily`]: what every reader and writer needs without the DB
//!   mutex — id, name, options and the published [`SuperVersion`] — shared
//!   as `Arc` by the handles and the registry;
//! - [`CfState`]: the mutable scheduling state (active and immutable
//!   memtables, flush flags, compaction cursors, stall condition), kept in
//!   the DB state under the DB mutex;
//! - the family's versions, name, persisted options and log number in the
//!   `VersionSet` (the MANIFEST's view).
//!
//! [`Cf`] is the public handle. [`CfRegistry`] maps ids to families for the
//! write path (a batch names families by id).
//!
//! Invariants: ids are never reused, so a stale id (in a WAL record, in a
//! handle of a dropped family) never reaches another family; a family's
//! `dropped` flag is set under the DB mutex in the same step that removes
//! it from the registry and the DB state; `super_version` changes only
//! under the DB mutex (and, for the memtable, under the WAL lock as well).

mod registry;
mod super_version;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::CfOptions;
use crate::stats::StallCondition;
use crate::version::Version;

pub(crate) use registry::CfRegistry;
pub(crate) use super_version::SuperVersion;

/// The shared, lock-free part of a family (see the module comment).
pub(crate) struct ColumnFamily {
    pub id: u32,
    pub name: String,
    /// The family's options: swapped whole by `Db::set_options` under the
    /// DB mutex; a job reads them once when it starts.
    opts: ArcSwap<CfOptions>,
    /// What a read needs, swapped atomically.
    pub super_version: ArcSwap<SuperVersion>,
    /// Identity of the open DB instance the family belongs to (a handle of
    /// another DB, or of an earlier open of this one, is refused).
    pub db_instance: u64,
    dropped: AtomicBool,
}

impl ColumnFamily {
    /// A family whose super version holds `mem` and `version`.
    pub(crate) fn new(
        id: u32,
        name: String,
        opts: CfOptions,
        db_instance: u64,
        mem: Arc<MemTable>,
        version: Arc<Version>,
    ) -> Self {
        ColumnFamily {
            id,
            name,
            opts: ArcSwap::from_pointee(opts),
            super_version: ArcSwap::from_pointee(SuperVersion {
                mem,
                imm: Vec::new(),
                version,
            }),
            db_instance,
            dropped: AtomicBool::new(false),
        }
    }

    /// The family's current options.
    #[inline]
    pub(crate) fn opts(&self) -> arc_swap::Guard<Arc<CfOptions>> {
        self.opts.load()
    }

    /// Replaces the family's options (under the DB mutex).
    pub(crate) fn set_opts(&self, opts: CfOptions) {
        self.opts.store(Arc::new(opts));
    }

    /// Marks the family dropped (under the DB mutex).
    pub(crate) fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }

    /// Replaces the published super version by an empty one, so that
    /// handles of a dropped family pin none of its memtables and tables.
    pub(crate) fn release_data(&self, num_levels: usize) {
        self.super_version.store(Arc::new(SuperVersion {
            mem: Arc::new(MemTable::new(0)),
            imm: Vec::new(),
            version: Arc::new(Version::new_empty(num_levels)),
        }));
    }

    /// True once the family was dropped.
    pub(crate) fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// `InvalidArgument` naming the family if it was dropped or belongs to
    /// another DB instance than `db_instance`.
    #[inline]
    pub(crate) fn check(&self, db_instance: u64) -> Result<()> {
        if self.db_instance != db_instance {
            return Err(Error::InvalidArgument(format!(
                "column family \"{}\" belongs to another DB (or an earlier open of this one)",
                self.name
            )));
        }
        if self.is_dropped() {
            return Err(Error::InvalidArgument(format!(
                "column family \"{}\" was dropped",
                self.name
            )));
        }
        Ok(())
    }
}

/// A handle to a column family: cheap to clone, `Send + Sync + 'static`.
/// It stays valid while the DB is open; once the family is dropped (or the
/// DB closed and reopened) calls with it fail with `InvalidArgument`.
#[derive(Clone)]
pub struct Cf(pub(crate) Arc<ColumnFamily>);

impl Cf {
    /// The family's name (`"default"` for family 0).
    pub fn name(&self) -> &str {
        &self.0.name
    }

    /// The family's id (0 for `default`; never reused within a DB).
    pub fn id(&self) -> u32 {
        self.0.id
    }
}

impl std::fmt::Debug for Cf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cf({:?}, id {})", self.0.name, self.0.id)
    }
}

impl crate::batch::ColumnFamilyId for Cf {
    fn column_family_id(&self) -> u32 {
        self.0.id
    }

    fn db_instance(&self) -> Option<u64> {
        Some(self.0.db_instance)
    }
}

/// A family's scheduling state, under the DB mutex.
pub(crate) struct CfState {
    pub cf: Arc<ColumnFamily>,
    /// The active memtable (also in the super version).
    pub mem: Arc<MemTable>,
    /// Immutable memtables, oldest first.
    pub imm: Vec<Arc<MemTable>>,
    /// A flush of this family is running.
    pub flush_running: bool,
    /// Round-robin cursor per level for the compaction picker.
    pub compact_cursors: Vec<usize>,
    /// The stall condition of the family's current version.
    pub stall: StallCondition,
    /// The version (by address) delete-only compaction last looked at,
    /// with the oldest snapshot then: nothing to look for again until
    /// either changes.
    pub delete_only_checked: Option<(usize, Option<crate::base::SeqNo>, u64)>,
    /// A background thread is looking (tables opened without the mutex).
    pub delete_only_running: bool,
}

impl CfState {
    /// State for `cf` with `mem` active and nothing immutable.
    pub(crate) fn new(cf: Arc<ColumnFamily>, mem: Arc<MemTable>, num_levels: usize) -> Self {
        CfState {
            cf,
            mem,
            imm: Vec::new(),
            flush_running: false,
            compact_cursors: vec![0; num_levels],
            stall: StallCondition::Normal,
            delete_only_checked: None,
            delete_only_running: false,
        }
    }

    /// The WAL number of the oldest memtable still holding writes, if any:
    /// WALs numbered below it hold nothing of this family that is not in a
    /// table.
    pub(crate) fn oldest_unflushed_wal(&self) -> Option<u64> {
        self.imm
            .iter()
            .chain(std::iter::once(&self.mem))
            .find(|m| m.num_entries() > 0)
            .map(|m| m.id())
    }

    /// Bytes of all the family's memtables.
    pub(crate) fn memtable_bytes(&self) -> usize {
        self.imm
            .iter()
            .chain(std::iter::once(&self.mem))
            .map(|m| m.approximate_memory_usage())
            .sum()
    }

    /// Publishes a new super version from the state and `version`.
    /// Requires the DB mutex (the WAL lock too when `mem` changed).
    pub(crate) fn install_super_version(&self, version: Arc<Version>) {
        let mut imm: Vec<Arc<MemTable>> = self.imm.clone();
        imm.reverse();
        self.cf.super_version.store(Arc::new(SuperVersion {
            mem: Arc::clone(&self.mem),
            imm,
            version,
        }));
    }
}
