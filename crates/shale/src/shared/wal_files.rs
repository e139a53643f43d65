//! The DB's WAL files: the current one (`WalFiles::current`, the WAL
//! lock), the closed ones not yet synced, and the writers of closed ones
//! waiting to be dropped outside every lock; and how a WAL file is created
//! or recycled. The write path appends to the current WAL under the WAL
//! lock; a memtable switch closes it and starts the next
//! (`shared::memtables`); flushes sync the closed ones before their edits
//! are logged; obsolete-file deletion forgets them.
//!
//! Lock order: the DB mutex, then `current`, then `closed`.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::base::SeqNo;
use crate::error::Result;
use crate::fs::FileSystem;
use crate::options::Options;
use crate::wal::LogWriter;

/// The WAL being written, owned by the current leader.
pub(crate) struct WalState {
    pub writer: Option<LogWriter>,
    pub number: u64,
    /// The last sequence number given to a group (published or not).
    pub last_allocated: SeqNo,
    /// With WAL archiving: the time (Unix microseconds) of the current
    /// WAL's last time record, 0 before its first (`db::write` writes one
    /// with the first group of each WAL and then at most once a second).
    pub last_time_mark: u64,
}

/// Creates a WAL file: through a memory mapping with `wal_mmap_writes`,
/// written back every `wal_bytes_per_sync` bytes.
pub(crate) fn create_wal_file(
    fs: &Arc<dyn crate::fs::FileSystem>,
    opts: &Options,
    wal_bytes_per_sync: u64,
    path: &std::path::Path,
) -> Result<Box<dyn crate::fs::WritableFile>> {
    let file = if opts.wal_mmap_writes {
        fs.create_mapped(path)?
    } else {
        fs.create(path)?
    };
    Ok(crate::io::RangeSyncer::wrap(file, wal_bytes_per_sync))
}

/// Opens the obsolete WAL `old` (kept by `recycle_log_file_num`) as the new
/// WAL `path`: renamed and overwritten in place, as `create_wal_file`
/// otherwise.
pub(crate) fn reuse_wal_file(
    fs: &Arc<dyn crate::fs::FileSystem>,
    opts: &Options,
    wal_bytes_per_sync: u64,
    old: &std::path::Path,
    path: &std::path::Path,
) -> Result<Box<dyn crate::fs::WritableFile>> {
    let file = fs.reuse_writable(old, path, opts.wal_mmap_writes)?;
    Ok(crate::io::RangeSyncer::wrap(file, wal_bytes_per_sync))
}

/// The DB's WAL files (see the module header).
pub(crate) struct WalFiles {
    /// The WAL being written (the WAL lock).
    pub(crate) current: Mutex<WalState>,
    /// The current WAL is memory-mapped: appending a record hands it to the
    /// OS, so non-sync writes need no group (see `write`). Set with the
    /// writer, under the WAL lock.
    pub(crate) mapped: AtomicBool,
    /// WALs closed by a memtable switch and not yet synced, oldest first
    /// (see `switch_memtable`). Lock order: `current`, then `closed`.
    pub(crate) closed: Mutex<VecDeque<LogWriter>>,
    /// Writers of closed WALs that are synced or obsolete, waiting to be
    /// dropped outside the DB mutex and the WAL lock (`drop_retired_wals`):
    /// dropping a memory-mapped writer unmaps it and truncates the file to
    /// its records, and a truncation frees blocks, which on a file system
    /// mounted with `discard` waits for the device (measured 11 ms per WAL
    /// on this project's VM, stalling every writer). Only without
    /// `recycle_log_file_num`: a recycled file must not be cut by its old
    /// writer's late drop, so with recycling writers drop at once.
    retired: Mutex<Vec<LogWriter>>,
    /// False with `recycle_log_file_num` > 0 (see `retired`).
    pub(crate) retire: bool,
    /// A WAL was created (or renamed for reuse) since the DB directory was
    /// last synced: `sync_closed_wals` syncs it before anything that must
    /// survive a power loss relies on a WAL's directory entry.
    pub(crate) wal_dir_unsynced: AtomicBool,
}

impl WalFiles {
    /// The WAL files with `writer` (WAL `number`) current, whose next group gets
    /// sequence numbers after `last_seq`.
    pub(crate) fn new(writer: LogWriter, number: u64, last_seq: SeqNo, recycling: bool) -> Self {
        WalFiles {
            retired: Mutex::new(Vec::new()),
            retire: !recycling,
            wal_dir_unsynced: AtomicBool::new(false),
            mapped: AtomicBool::new(writer.appends_reach_os()),
            current: Mutex::new(WalState {
                writer: Some(writer),
                number,
                last_allocated: last_seq,
                last_time_mark: 0,
            }),
            closed: Mutex::new(VecDeque::new()),
        }
    }

    /// True when WAL `number` is known synced: it is not among the closed
    /// WALs waiting for a sync (`false` too when another thread holds that
    /// list: never waits, as the caller holds the DB mutex).
    pub(crate) fn closed_wal_synced(&self, number: u64) -> bool {
        self.closed
            .try_lock()
            .is_some_and(|c| c.iter().all(|w| w.log_number() != number))
    }

    /// Drops the writers of closed, unsynced WALs older than `log_number`
    /// (obsolete: their writes are in durable tables) without syncing them.
    /// Skipped while a sync holds them (called under the DB mutex, which
    /// must not wait for IO); the next call prunes them.
    pub(crate) fn forget_closed_wals_before(&self, log_number: u64) {
        if let Some(mut closed) = self.closed.try_lock() {
            while closed.front().is_some_and(|w| w.log_number() < log_number) {
                if let Some(w) = closed.pop_front() {
                    self.retire(w);
                }
            }
        }
    }

    /// Drops `w` now, or keeps it for `drop_retired_wals` (see `retired`).
    pub(crate) fn retire(&self, w: LogWriter) {
        if self.retire {
            self.retired.lock().push(w);
        }
    }

    /// Drops the writers of closed WALs that are synced or obsolete (see
    /// `retired`). Called without the DB mutex and the WAL lock.
    pub(crate) fn drop_retired_wals(&self) {
        let retired = std::mem::take(&mut *self.retired.lock());
        drop(retired);
    }

    /// Syncs the closed WALs not yet synced, oldest first, and drops their
    /// writers. On return every WAL closed before the call is durable. A
    /// sync write calls this before syncing the current WAL, and a flush
    /// before logging its edit (see `switch_memtable`). May be called with
    /// the WAL lock held, not with `closed`.
    pub(crate) fn sync_closed_wals(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        let mut closed = self.closed.lock();
        while let Some(w) = closed.front_mut() {
            w.sync()?;
            if let Some(w) = closed.pop_front() {
                self.retire(w);
            }
        }
        // Under `closed`, so a concurrent caller cannot return before the
        // directory sync another one started has finished.
        if self.wal_dir_unsynced.swap(false, Ordering::AcqRel) {
            if let Err(e) = fs.sync_dir(dir) {
                self.wal_dir_unsynced.store(true, Ordering::Release);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Takes the WAL lock and waits until no group is in flight: every
    /// allocated sequence number is inserted and published, and none is
    /// allocated until the guard is dropped. A memtable switch needs this.
    /// Inserting and publishing take neither the DB mutex nor the WAL lock,
    /// so callers may hold the DB mutex.
    ///
    /// A group is in flight from its sequence allocation (under the WAL
    /// lock) until it publishes, and groups publish in allocation order:
    /// none is in flight once `visible` reaches the last allocated number.
    /// (Writers count nothing else: a shared counter bumped twice per write
    /// cost concurrent writers a cache-line transfer each time.)
    pub(crate) fn lock_wal_quiesced(&self, visible: &AtomicU64) -> MutexGuard<'_, WalState> {
        let wal = self.current.lock();
        let mut spins = 0u32;
        while visible.load(Ordering::Acquire) != wal.last_allocated {
            backoff(&mut spins);
        }
        wal
    }
}

/// One step of a wait for another thread's imminent progress: spins, then
/// yields the core (two cores are shared by every thread). The waits it
/// serves last about one memtable insert of another running writer (a few
/// microseconds): 512 spins (roughly 10-30 us) cover that, where a yield
/// per wait (a system call and a pass through the scheduler) cost
/// concurrent writers ~10% of their cycles.
#[inline]
pub(crate) fn backoff(spins: &mut u32) {
    if *spins < 512 {
        std::hint::spin_loop();
    } else {
        std::thread::yield_now();
    }
    *spins = spins.saturating_add(1);
}
