//! [`DbInner`]: the state one open DB shares between its handle and its
//! background threads, and [`DbState`], the part guarded by the DB mutex.
//!
//! Concurrency model:
//! - `DbInner::state` (the DB mutex) guards the version set, every column
//!   family's memtable lists (`cf::CfState`), the scheduling state and the
//!   background-error state. MANIFEST writes release it
//!   (`shared::manifest`: one writer at a time); the memtable switch still
//!   creates the next WAL under it.
//! - The WAL lock (`WalFiles::current`) is taken after the DB mutex, never
//!   before it.
//! - Readers load their family's `SuperVersion` from an `ArcSwap` and the
//!   visible sequence number from an atomic: no mutex on the read path.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use crate::base::SeqNo;
use crate::cf::{CfRegistry, CfState, ColumnFamily};
use crate::error::{Error, Result};
use crate::events::info_log::InfoLog;
use crate::fs::{FileLock, FileSystem};
use crate::memory::Ledger;
use crate::options::Options;
use crate::stats::{DbStats, StallCondition};
use crate::table_cache::TableCache;
use crate::version::VersionSet;

use super::error_state::ErrorState;
use super::wal_files::WalFiles;
use crate::base::snapshots::SnapshotList;

/// State guarded by the DB mutex.
pub(crate) struct DbState {
    pub versions: VersionSet,
    /// Every live column family's memtables and scheduling state, by id.
    pub cfs: BTreeMap<u32, CfState>,
    /// Families that may have an immutable memtable to flush, in the order
    /// they asked (entries may be stale: checked when taken).
    pub flush_queue: VecDeque<u32>,
    /// Families whose LSM changed since a compaction was last looked for.
    pub compaction_queue: BTreeSet<u32>,
    /// Families whose active memtable filled (or that a budget asked to
    /// flush): switched by the next write leader.
    pub pending_switch: Vec<u32>,
    /// Families whose current version asks writers to slow down or stop.
    pub stalled: BTreeMap<u32, StallCondition>,
    /// WALs before the current one that are not yet deleted, oldest first,
    /// with their sizes.
    pub closed_wals: VecDeque<(u64, u64)>,
    /// Obsolete WALs kept for reuse as new WALs (`recycle_log_file_num`),
    /// oldest first: only ones this instance closed and synced.
    pub recycle_wals: VecDeque<u64>,
    /// Sum of every family's `write_buffer_size` (for `max_total_wal_size`).
    pub sum_write_buffers: u64,
    /// The WAL whose families were last asked to flush because the live
    /// WALs grew past `max_total_wal_size` (asked once per WAL).
    pub wal_flush_requested: u64,
    /// Number of running flushes (at most one per family).
    pub flushes_running: usize,
    /// Number of running compactions.
    pub compactions_running: usize,
    /// Manual compactions waiting or running.
    pub manual_compactions: usize,
    /// File numbers being written by jobs (not yet in a version): never
    /// deleted as obsolete.
    pub pending_outputs: std::collections::HashSet<u64>,
    /// The outstanding background error and the recovery state.
    pub errors: ErrorState,
    /// Wakeups sent to the background threads ([`DbInner::wake_bg`]). A
    /// thread sleeps only if none was sent since it began looking for
    /// work: one sent while it had the mutex released (the delete-only
    /// check opens tables unlocked) found no thread waiting, and is not
    /// lost.
    pub bg_wakeups: u64,
    /// `Db::disable_file_deletions` calls not yet matched by an enable
    /// (RocksDB's counted semantics): while above 0 no obsolete file is
    /// deleted (`shared::obsolete`) and a MANIFEST roll keeps the old one.
    pub file_deletions_disabled: u32,
}

impl DbState {
    /// The state of family `id` (`None` once dropped).
    pub(crate) fn cf(&self, id: u32) -> Option<&CfState> {
        self.cfs.get(&id)
    }

    /// The DB-wide stall condition: the worst of every family's.
    pub(crate) fn worst_stall(&self) -> StallCondition {
        let mut worst = StallCondition::Normal;
        for c in self.stalled.values() {
            match (worst, c) {
                (_, StallCondition::Stopped(_)) => return *c,
                (StallCondition::Normal, StallCondition::Delayed(_)) => worst = *c,
                _ => {}
            }
        }
        worst
    }

    /// True when some family has an immutable memtable or a running flush.
    pub(crate) fn any_flush_work(&self) -> bool {
        self.flushes_running > 0
            || self
                .flush_queue
                .iter()
                .any(|id| self.cfs.get(id).is_some_and(|c| !c.imm.is_empty()))
    }
}

pub(crate) struct DbInner {
    pub dir: PathBuf,
    pub opts: Options,
    /// `opts.fs`, wrapped to count every IO by purpose into `io`.
    pub fs: Arc<dyn FileSystem>,
    /// Bytes and requests read and written, by purpose.
    pub io: Arc<crate::io::accounting::IoCounters>,
    /// The `LOCK` file's lock, released by `close` (or the last handle's
    /// drop) even while iterators or ranges still hold this struct.
    pub(crate) lock: Mutex<Option<Box<dyn FileLock>>>,
    /// Highest sequence number visible to readers.
    pub visible_seq: AtomicU64,
    /// Identity of this open instance (handles of other opens are refused).
    pub instance: u64,
    /// The `default` family (id 0; never dropped).
    pub default_cf: Arc<ColumnFamily>,
    /// Live families by id and name, for lookups without the DB mutex.
    pub cfs: CfRegistry,
    /// Families whose memtable a write group filled, reported by the write
    /// leader (which holds the WAL lock, not the DB mutex) for the next
    /// leader to switch.
    pub full_cfs: Mutex<Vec<u32>>,
    /// The memory ledger: memtables, table readers and background buffers
    /// charged by their owners, and `memory_budget` enforced over them and
    /// the block cache (see `crate::memory`).
    pub memory: Arc<Ledger>,
    /// The largest read the DB's device serves as one request
    /// (`FileSystem::max_request_bytes`, 512 KiB when unknown): compaction
    /// readahead never asks for more.
    pub max_read_request: usize,
    pub state: Mutex<DbState>,
    /// Signalled when background work finishes or is scheduled (by
    /// `wake_bg` when the background threads are to look for work).
    pub bg_cv: Condvar,
    /// The WAL files (the current one is the WAL lock).
    pub wals: WalFiles,
    pub snapshots: Arc<SnapshotList>,
    pub table_cache: Arc<TableCache>,
    pub block_cache: Option<Arc<crate::table_cache::block_cache::SharedBlockCache>>,
    /// Reads of blob values (every family's blob files).
    pub blobs: Arc<crate::blob::source::BlobSource>,
    pub stats: DbStats,
    pub log: Arc<InfoLog>,
    /// Delivers events to `opts.listeners` (see `crate::events`).
    pub events: Arc<crate::events::Notifier>,
    pub shutting_down: AtomicBool,
    /// Set when the DB starts closing (before the flush of unpersisted
    /// memtables): table writes stop waiting on `opts.rate_limiter`.
    pub io_cancel: Arc<AtomicBool>,
    /// Set while a hard or fatal background error is outstanding (mirrors
    /// `DbState::errors`): writes are refused.
    pub stop_writes: AtomicBool,
    /// Opened by `Db::open_read_only` (over an `OverlayFs`, with no
    /// background threads): writes, flushes, compactions, family and
    /// option changes are `NotSupported`.
    pub read_only: bool,
    /// Signalled when a MANIFEST write finishes (`shared::manifest`).
    pub manifest_cv: Condvar,
    pub wal_recovery_report: String,
    /// Families whose persisted options could not be read at open (opened
    /// with defaults), one line each.
    pub cf_options_report: String,
    /// Set by writes that skipped the WAL: close flushes the memtables so a
    /// clean shutdown loses nothing (as RocksDB does).
    pub unpersisted: AtomicBool,
    /// Serializes obsolete-file deletion passes.
    pub purge_lock: Mutex<()>,
    /// Archived WALs (`wal_ttl_seconds`, `wal_size_limit_mb`).
    pub wal_archive: crate::shared::wal_archive::WalArchive,
    /// Serializes `set_options` and `set_db_options` calls (and their
    /// OPTIONS files).
    pub options_lock: Mutex<()>,
    /// The DB-wide options `set_db_options` changes: read from here, not
    /// from `opts`.
    pub mutable: crate::options::mutable_db::MutableDbOptions,
    /// A reader released a super version that was no longer current: the
    /// background threads run an obsolete-file pass.
    pub purge_requested: AtomicBool,
    /// Set by a leader's full `make_room` pass that found nothing to do
    /// beyond the per-write checks (no stall, no pending switch, no closed
    /// WAL, no error); cleared under the DB mutex by whatever may change
    /// that (a version with a stall, a switch, an error, a family created
    /// or dropped) and by an inserter reporting a full memtable. While set,
    /// leaders skip the DB mutex (see `db/write/room.rs`, `make_room`).
    pub room_clear: AtomicBool,
}

impl DbInner {
    /// Allocates a file number for a job's output table and protects it from
    /// obsolete-file deletion until the job installs or drops it; the number
    /// is also recorded in the job's own `allocated` list.
    pub(crate) fn new_output_number(&self, allocated: &mut Vec<u64>) -> u64 {
        let mut s = self.state.lock();
        let n = s.versions.new_file_number();
        s.pending_outputs.insert(n);
        allocated.push(n);
        n
    }

    /// The rate limit for a job's table writes at `priority` (`None`
    /// without `Options::rate_limiter`).
    pub(crate) fn rate_limit(
        &self,
        priority: crate::io::IoPriority,
    ) -> Option<crate::io::RateLimit> {
        self.opts
            .rate_limiter
            .as_ref()
            .map(|limiter| crate::io::RateLimit {
                limiter: Arc::clone(limiter),
                priority,
                cancel: Arc::clone(&self.io_cancel),
            })
    }

    /// `NotSupported` naming `op` when the DB is open read-only.
    pub(crate) fn check_read_write(&self, op: &str) -> Result<()> {
        if self.read_only {
            return Err(Error::NotSupported(format!(
                "{op}: {} is open read-only",
                self.dir.display()
            )));
        }
        Ok(())
    }

    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_read_write("write")?;
        if self.stop_writes.load(Ordering::Acquire) {
            if let Some(e) = self.state.lock().errors.write_error() {
                return Err(e);
            }
        }
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShutdownInProgress);
        }
        Ok(())
    }

    /// `ShutdownInProgress` once the DB is closing or closed (reads).
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(Error::ShutdownInProgress);
        }
        Ok(())
    }

    /// Bytes of the WALs not yet deleted (the closed ones and the current
    /// one). Requires the DB mutex; takes the WAL lock.
    pub(crate) fn live_wal_bytes(&self, st: &DbState) -> u64 {
        let current = self
            .wals
            .current
            .lock()
            .writer
            .as_ref()
            .map_or(0, |w| w.file_size());
        st.closed_wals.iter().map(|w| w.1).sum::<u64>() + current
    }

    /// Wakes the background threads for work recorded in `st` (or in a
    /// flag such as `shutting_down`, set under the same mutex): counts the
    /// wakeup in `bg_wakeups`, then notifies `bg_cv`. Requires the DB
    /// mutex (`st` is its state), so a thread that looked for work before
    /// the change either sees the count move or is already waiting.
    pub(crate) fn wake_bg(&self, st: &mut DbState) {
        st.bg_wakeups = st.bg_wakeups.wrapping_add(1);
        self.bg_cv.notify_all();
    }

    /// Asks the background threads for an obsolete-file pass (a reader let
    /// go of tables nothing else may hold). Without the DB mutex (a
    /// reader's drop must not take it): a thread re-reads the flag before
    /// it sleeps, but a request landing between that read and the sleep
    /// waits for the next wakeup or the idle timeout.
    pub(crate) fn request_purge(&self) {
        if !self.purge_requested.swap(true, Ordering::AcqRel) {
            self.bg_cv.notify_one();
        }
    }

    pub(crate) fn last_visible(&self) -> SeqNo {
        self.visible_seq.load(Ordering::Acquire)
    }
}
