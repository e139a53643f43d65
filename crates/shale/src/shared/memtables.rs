//! The memtables' life at the DB level: a new one for a family, the
//! memory they may use (`db_write_buffer_size`, `memory_budget`), and the
//! switch that makes a family's active memtable immutable and starts the
//! next WAL. The write path's leader switches full memtables; flushes
//! requested by the user, by the WAL size limit, by the memory budget or
//! by an error's recovery switch them too.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::memory::Part;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::version::filename::log_file_name;
use crate::wal::{LogWriter, PredecessorWal, WalRecoveryMode};

use super::wal_files::{create_wal_file, reuse_wal_file, WalState};
use super::{DbInner, DbState, Reason};

/// A new, empty memtable for a family with options `opts`, starting at WAL
/// `wal_number`, charged to the DB's memtable budget. Its arena chunk and
/// bloom filter are allocated by its first write.
pub(crate) fn new_memtable(db: &DbInner, opts: &CfOptions, wal_number: u64) -> Arc<MemTable> {
    Arc::new(
        MemTable::charged(
            wal_number,
            opts.memtable_bloom_bytes(db.opts.write_buffer_budget()),
            Some(db.memory.meter(Part::Memtables)),
            opts.write_buffer_size,
        )
        .with_prefix(opts.prefix_extractor, opts.memtable_whole_key_filtering),
    )
}

/// Bytes of `memory_budget` held for memtables that can hold
/// `memtables_max` at once: their share of the budget
/// (`Options::write_buffer_budget`), or all they can hold if that is less.
pub(crate) fn memtable_reserve(opts: &Options, memtables_max: usize) -> usize {
    opts.write_buffer_budget().min(memtables_max)
}

/// What the memtables may use before the largest active one is switched
/// (0: no DB-wide limit): `db_write_buffer_size`, or half of
/// `memory_budget`, lowered to what table readers and buffers leave of the
/// budget, but not below 1/8 of it (so a budget overcommitted by its table
/// readers flushes early, not continuously).
pub(crate) fn memtable_budget(db: &DbInner) -> usize {
    let share = db.opts.write_buffer_budget();
    let limit = db.memory.limit();
    if limit == 0 {
        return share;
    }
    let others = db.memory.get(Part::TableReaders) + db.memory.get(Part::Buffers);
    share.min(limit.saturating_sub(others)).max(limit / 8)
}

/// Memtable bytes at which writers wait for running flushes (0: never):
/// twice [`memtable_budget`], and with a memory budget at most what table
/// readers and buffers leave of it (never below the budget itself).
pub(crate) fn memtable_stop(db: &DbInner) -> usize {
    let budget = memtable_budget(db);
    let stop = budget.saturating_mul(2);
    let limit = db.memory.limit();
    if limit == 0 {
        return stop;
    }
    let others = db.memory.get(Part::TableReaders) + db.memory.get(Part::Buffers);
    stop.min(limit.saturating_sub(others).max(budget))
}

/// Makes family `cf`'s active memtable immutable and gives it a new one,
/// starting a new WAL unless the current one is still empty (then the old
/// memtable's writes are all in earlier, synced WALs). Requires the DB
/// mutex; takes the WAL lock (lock order: state, then wal).
pub(crate) fn switch_memtable(db: &Arc<DbInner>, st: &mut DbState, cf: u32) -> Result<()> {
    if db.shutting_down.load(Ordering::Acquire) {
        return Err(Error::ShutdownInProgress);
    }
    if !st.cfs.contains_key(&cf) {
        return Ok(());
    }
    db.room_clear.store(false, Ordering::SeqCst);
    // A WAL holding no record yet is kept: the memtable's writes are all in
    // earlier WALs. Checked under the same WAL lock that swaps the memtable,
    // so no group can write it in between.
    {
        let wal = db.wals.lock_wal_quiesced(&db.visible_seq);
        if wal.writer.as_ref().is_some_and(|w| w.has_no_records()) {
            return install_new_memtable(db, st, cf, wal);
        }
    }
    let number = st.versions.new_file_number();
    let path = db.dir.join(log_file_name(number));
    // An obsolete WAL kept by `recycle_log_file_num` is reused when there
    // is one (a failed reuse falls back to a new file; the old one, if
    // still there, is deleted as obsolete).
    let mut recycled = None;
    let mut file = None;
    if let Some(old) = st.recycle_wals.pop_front() {
        let old_path = db.dir.join(log_file_name(old));
        match reuse_wal_file(
            &db.fs,
            &db.opts,
            db.mutable.wal_bytes_per_sync(),
            &old_path,
            &path,
        ) {
            Ok(f) => {
                file = Some(f);
                recycled = Some(old);
            }
            Err(e) => db
                .log
                .warn(&format!("could not recycle WAL {old} as {number}: {e}")),
        }
    }
    let file = match file.map_or_else(
        || create_wal_file(&db.fs, &db.opts, db.mutable.wal_bytes_per_sync(), &path),
        Ok,
    ) {
        Ok(f) => f,
        Err(e) => {
            db.set_bg_error(st, e.clone(), Reason::Wal);
            return Err(e);
        }
    };
    // The recovery modes that refuse a short older WAL also refuse a
    // missing one, so with them the switch makes the old WAL durable and
    // the new one's directory entry too (see below).
    let sync_now = matches!(
        db.opts.wal_recovery_mode,
        WalRecoveryMode::TolerateCorruptedTailRecords | WalRecoveryMode::AbsoluteConsistency
    );
    // The new WAL's directory entry must be durable before a sync write
    // to it is acknowledged: `sync_closed_wals` syncs the directory first
    // (RocksDB's `log_dir_synced_`), not this switch, which runs under the
    // DB mutex (a directory fsync took 11 ms on this project's VM). A power
    // loss may so keep a later WAL's entry and not this one's: recovery
    // stops at the hole (the next WAL's predecessor record names this one).
    if sync_now {
        if let Err(e) = db.fs.sync_dir(&db.dir) {
            db.set_bg_error(st, e.clone(), Reason::Wal);
            return Err(e);
        }
    } else {
        db.wals.wal_dir_unsynced.store(true, Ordering::Release);
    }
    let mut new_writer = LogWriter::new(file, number);
    // Swap WAL, memtable and super version together under the WAL lock: the
    // leader loads the memtables under this lock, so no group can write the
    // new WAL but insert into the old memtable.
    let mut wal = db.wals.lock_wal_quiesced(&db.visible_seq);
    if let Some(mut old) = wal.writer.take() {
        // After a power loss the unsynced writes that survive must form a
        // prefix of commit order, but a later WAL's blocks may reach the
        // disk before an earlier WAL's tail. The new WAL's first record
        // names the old one and its final size, and point-in-time recovery
        // stops at a WAL shorter than its successor says (docs/RELIABILITY.md,
        // "WAL switch"). The old WAL is handed to the OS now and synced
        // later, outside this lock: before any sync write (which must not
        // become durable ahead of earlier writes) and before a flush is
        // logged (a flushed family must not hold writes another family
        // loses). The recovery modes that refuse a short older WAL keep the
        // old rule instead: sync it here (`sync_now`).
        let predecessor = PredecessorWal {
            log_number: wal.number,
            size: old.file_size(),
            last_sequence: wal.last_allocated,
        };
        // Handing the records to the OS is all the switch needs: the old
        // writer is never appended to again. Unmapping and cutting the
        // file's reserved tail (`finish`) wait for the device on some file
        // systems and are left to `WalFiles::drop_retired_wals`, outside
        // this lock and the DB mutex, unless recycling must see the file
        // cut now or the WAL is synced here anyway.
        let finish_now = sync_now || !db.wals.retire;
        let r = (if finish_now {
            old.finish()
        } else {
            old.flush()
        })
        .and_then(|()| if sync_now { old.sync() } else { Ok(()) })
        .and_then(|()| new_writer.add_predecessor(&predecessor))
        .and_then(|()| match recycled {
            // Old records follow the new ones: the reader must know.
            Some(old) => new_writer.add_recycled(old),
            None => Ok(()),
        })
        .and_then(|()| new_writer.flush());
        if let Err(e) = r {
            wal.writer = Some(old);
            drop(wal);
            db.set_bg_error(st, e.clone(), Reason::Wal);
            return Err(e);
        }
        st.closed_wals.push_back((wal.number, predecessor.size));
        if !sync_now {
            db.wals.closed.lock().push_back(old);
        }
    }
    wal.number = new_writer.log_number();
    wal.last_time_mark = 0;
    db.wals
        .mapped
        .store(new_writer.appends_reach_os(), Ordering::Relaxed);
    wal.writer = Some(new_writer);
    install_new_memtable(db, st, cf, wal)
}

/// The second half of a switch: family `cf` gets a new memtable starting at
/// the current WAL, its old one becomes immutable and is queued for flush.
/// Takes the WAL lock's guard (released once the super version is out).
fn install_new_memtable(
    db: &Arc<DbInner>,
    st: &mut DbState,
    cf: u32,
    wal: parking_lot::MutexGuard<'_, WalState>,
) -> Result<()> {
    let number = wal.number;
    let Some(c) = st.cfs.get_mut(&cf) else {
        return Ok(());
    };
    let fresh = new_memtable(db, &c.cf.opts(), number);
    let old = std::mem::replace(&mut c.mem, fresh);
    c.imm.push(old);
    db.install_super_version(st, cf);
    drop(wal);
    st.flush_queue.push_back(cf);
    db.wake_bg(st);
    Ok(())
}

impl DbInner {
    /// Holds the memtables' share of `memory_budget` for the families open
    /// now (after a family is created or dropped, or its write buffers
    /// resized). Requires the DB mutex.
    pub(crate) fn refresh_memtable_reserve(&self, state: &DbState) {
        let max = state
            .cfs
            .values()
            .map(|c| c.cf.opts().memtables_max())
            .fold(0, usize::saturating_add);
        self.memory
            .set_memtable_reserve(memtable_reserve(&self.opts, max));
    }
}
