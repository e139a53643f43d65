//! The write path: group commit.
//!
//! Each `write` call queues a request. The request at the head of the queue
//! becomes the leader: it makes room (memtable switch, stalls), takes the
//! requests behind it into one group (up to `MAX_GROUP_BYTES`, never mixing a
//! sync request into a non-sync leader's group), assigns their sequence
//! numbers, appends one WAL record per request with one `write(2)` and at most
//! one fsync for the group, inserts the group into the memtable, publishes
//! the new visible sequence number, and wakes the followers.
//!
//! With `allow_concurrent_memtable_write` (default, as RocksDB) a group of
//! several requests is inserted in parallel: after the WAL write the leader
//! hands each follower its own batch (`Request::insert`), inserts its own,
//! and waits until every member has finished before it publishes the
//! group's sequence numbers. Followers insert instead of idling, and the
//! skiplist takes concurrent inserts.
//!
//! Invariants: only the leader touches `WalState`; memtable inserts happen
//! only while the leader holds the WAL lock (so no memtable switch runs
//! concurrently); sequence numbers become visible in order, and only after
//! every insert of their group is done.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::base::SeqNo;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::version::filename::log_file_name;
use crate::wal::LogWriter;

use super::{DbInner, DbState, Reason};

const MAX_GROUP_BYTES: usize = 1 << 20;

/// How long a follower yields before it sleeps waiting for its group.
const SPIN_WAIT: Duration = Duration::from_micros(100);

struct Request {
    batch: Option<WriteBatch>,
    sync: bool,
    disable_wal: bool,
    /// Set by the leader: insert this batch into the memtable, then report
    /// to the group (parallel memtable writes).
    insert: Option<InsertJob>,
    done: bool,
    result: Result<()>,
}

/// A follower's share of a group's memtable inserts.
struct InsertJob {
    mem: Arc<MemTable>,
    batch: WriteBatch,
    group: Arc<GroupInserts>,
}

impl InsertJob {
    fn run(self) {
        let r = insert_batch(&self.mem, &self.batch);
        self.group.finish(r);
    }
}

/// Counts the members of a group still inserting; the leader waits for 0.
struct GroupInserts {
    pending: std::sync::atomic::AtomicUsize,
    err: Mutex<Option<Error>>,
    lock: Mutex<()>,
    cv: Condvar,
}

impl GroupInserts {
    fn finish(&self, r: Result<()>) {
        if let Err(e) = r {
            self.err.lock().get_or_insert(e);
        }
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
    }

    /// Waits until every member is done (yielding briefly first, like the
    /// followers); the first error, if any.
    fn wait(&self) -> Result<()> {
        let spin_until = Instant::now() + SPIN_WAIT;
        while self.pending.load(Ordering::Acquire) != 0 && Instant::now() < spin_until {
            std::thread::yield_now();
        }
        let mut g = self.lock.lock();
        while self.pending.load(Ordering::Acquire) != 0 {
            self.cv.wait_for(&mut g, Duration::from_millis(10));
        }
        drop(g);
        match self.err.lock().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

struct Slot {
    req: Mutex<Request>,
    cv: Condvar,
}

/// The WAL being written, owned by the current leader.
pub(crate) struct WalState {
    pub writer: Option<LogWriter>,
    pub number: u64,
    /// Bytes appended but not yet fsynced.
    pub unsynced: bool,
}

pub(crate) struct WriteQueue {
    queue: Mutex<VecDeque<Arc<Slot>>>,
    pub(crate) wal: Mutex<WalState>,
}

impl WriteQueue {
    pub(crate) fn new(writer: LogWriter, number: u64) -> Self {
        WriteQueue {
            queue: Mutex::new(VecDeque::new()),
            wal: Mutex::new(WalState {
                writer: Some(writer),
                number,
                unsynced: false,
            }),
        }
    }

    /// Flushes (and optionally syncs) the WAL.
    pub(crate) fn flush_wal(&self, db: &DbInner, sync: bool) -> Result<()> {
        let mut wal = self.wal.lock();
        let Some(w) = wal.writer.as_mut() else {
            return Ok(());
        };
        let r = if sync { w.sync() } else { w.flush() };
        if r.is_ok() && sync {
            wal.unsynced = false;
        }
        drop(wal);
        if let Err(e) = &r {
            let mut st = db.state.lock();
            db.set_bg_error(&mut st, e.clone(), Reason::Wal);
        }
        r
    }
}

pub(crate) fn write(db: &Arc<DbInner>, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
    if opts.sync && opts.disable_wal {
        return Err(Error::InvalidArgument(
            "WriteOptions: sync and disable_wal together (nothing to sync)".into(),
        ));
    }
    db.check_writable()?;
    if batch.is_empty() {
        return Ok(());
    }
    let slot = Arc::new(Slot {
        req: Mutex::new(Request {
            batch: Some(batch),
            sync: opts.sync,
            disable_wal: opts.disable_wal,
            insert: None,
            done: false,
            result: Ok(()),
        }),
        cv: Condvar::new(),
    });
    {
        let mut q = db.writer.queue.lock();
        q.push_back(Arc::clone(&slot));
        let mut spin_until: Option<Instant> = None;
        loop {
            let is_front = q.front().is_some_and(|f| Arc::ptr_eq(f, &slot));
            if is_front {
                break;
            }
            // Wait until a leader finishes us or we reach the front. The
            // request's own mutex is taken briefly to check `done`.
            {
                let mut r = slot.req.lock();
                if r.done {
                    return std::mem::replace(&mut r.result, Ok(()));
                }
                if let Some(job) = r.insert.take() {
                    drop(r);
                    MutexGuard::unlocked(&mut q, || job.run());
                    continue;
                }
            }
            // A group usually finishes within microseconds: yield for a
            // short while before sleeping on the condvar, which would cost a
            // futex sleep and wake-up per write (as RocksDB's AwaitState).
            if spin_until.is_none() {
                spin_until = Some(Instant::now() + SPIN_WAIT);
            }
            if spin_until.is_some_and(|t| Instant::now() < t) {
                MutexGuard::unlocked(&mut q, std::thread::yield_now);
                continue;
            }
            slot.cv.wait_for(&mut q, Duration::from_millis(50));
        }
    }
    lead(db, &slot)
}

/// Runs the group headed by `leader` (the queue's front).
fn lead(db: &Arc<DbInner>, leader: &Arc<Slot>) -> Result<()> {
    let room = make_room(db);
    let mut group: Vec<Arc<Slot>> = Vec::new();
    let mut batches: Vec<WriteBatch> = Vec::new();
    let (mut sync, mut any_wal) = (false, false);
    {
        let q = db.writer.queue.lock();
        let leader_sync = leader.req.lock().sync;
        let mut bytes = 0usize;
        for s in q.iter() {
            let mut r = s.req.lock();
            if room.is_err() && !Arc::ptr_eq(s, leader) {
                break; // only the leader fails; followers retry as leaders
            }
            if !group.is_empty() {
                if r.sync && !leader_sync {
                    break;
                }
                let sz = r.batch.as_ref().map_or(0, |b| b.size_in_bytes());
                if bytes + sz > MAX_GROUP_BYTES {
                    break;
                }
            }
            if let Some(b) = r.batch.take() {
                bytes += b.size_in_bytes();
                sync |= r.sync;
                any_wal |= !r.disable_wal;
                batches.push(b);
            }
            group.push(Arc::clone(s));
        }
    }
    let result = match room {
        Err(e) => Err(e),
        Ok(()) => {
            if !any_wal {
                // Only in the memtable: a clean close must flush it.
                db.unpersisted.store(true, Ordering::Release);
            }
            commit(db, &mut batches, sync, any_wal, &group)
        }
    };
    // Finish the group and hand leadership to the next request.
    let mut q = db.writer.queue.lock();
    for s in &group {
        let front = q.pop_front();
        debug_assert!(front.is_some_and(|f| Arc::ptr_eq(&f, s)));
        if !Arc::ptr_eq(s, leader) {
            let mut r = s.req.lock();
            r.done = true;
            r.result = result.clone();
            drop(r);
            s.cv.notify_one();
        }
    }
    if let Some(next) = q.front() {
        next.cv.notify_one();
    }
    result
}

/// Writes the group to the WAL and the memtable; returns after the group is
/// visible.
fn commit(
    db: &Arc<DbInner>,
    batches: &mut [WriteBatch],
    sync: bool,
    any_wal: bool,
    group: &[Arc<Slot>],
) -> Result<()> {
    let first_seq = db.last_visible() + 1;
    let mut seq = first_seq;
    let mut keys = 0u64;
    let mut ingest = 0u64;
    for b in batches.iter_mut() {
        b.set_sequence(seq);
        seq += u64::from(b.count());
        keys += u64::from(b.count());
        ingest += b.size_in_bytes() as u64;
    }
    let last_seq = seq - 1;
    let mut wal = db.writer.wal.lock();
    if wal.writer.is_none() {
        // Closed (see `DbHandle::shutdown`).
        return Err(Error::ShutdownInProgress);
    }
    if any_wal {
        let wal_bytes_before = wal.writer.as_ref().map_or(0, |w| w.file_size());
        let Some(w) = wal.writer.as_mut() else {
            return Err(Error::ShutdownInProgress);
        };
        let mut res = Ok(());
        for b in batches.iter() {
            res = w.add_record(b.data());
            if res.is_err() {
                break;
            }
        }
        if res.is_ok() && !db.opts.manual_wal_flush {
            res = w.flush();
        }
        if res.is_ok() && sync {
            res = w.sync();
        }
        if let Err(e) = res {
            // The WAL may hold part of this group: refuse further writes so
            // nothing after the gap can be acknowledged. (Lock order is
            // state before wal, so release the WAL first.)
            drop(wal);
            let mut st = db.state.lock();
            db.set_bg_error(&mut st, e.clone(), Reason::Wal);
            return Err(e);
        }
        let wal_bytes = w.file_size() - wal_bytes_before;
        wal.unsynced = !sync;
        if sync {
            db.stats.wal_syncs.fetch_add(1, Ordering::Relaxed);
        }
        db.stats.wal_bytes.fetch_add(wal_bytes, Ordering::Relaxed);
        db.stats
            .wal_writes
            .fetch_add(group.len() as u64, Ordering::Relaxed);
    }
    // Insert into the memtable while still holding the WAL lock (no switch
    // can run meanwhile): by the leader alone, or by every member at once.
    let mem = Arc::clone(&db.super_version.load().mem);
    if db.opts.allow_concurrent_memtable_write && group.len() > 1 {
        insert_in_parallel(&db.writer.queue, &mem, batches, group)?;
    } else {
        for b in batches.iter() {
            insert_batch(&mem, b)?;
        }
    }
    db.visible_seq.store(last_seq, Ordering::Release);
    drop(wal);
    db.stats
        .writes
        .fetch_add(group.len() as u64, Ordering::Relaxed);
    db.stats.keys_written.fetch_add(keys, Ordering::Relaxed);
    db.stats.commit_groups.fetch_add(1, Ordering::Relaxed);
    db.stats.ingest_bytes.fetch_add(ingest, Ordering::Relaxed);
    Ok(())
}

/// Hands each follower of `group` its batch (`batches[i]` belongs to
/// `group[i]`; `group[0]` is the leader), inserts the leader's, and returns
/// once every member has inserted.
fn insert_in_parallel(
    queue: &Mutex<VecDeque<Arc<Slot>>>,
    mem: &Arc<MemTable>,
    batches: &mut [WriteBatch],
    group: &[Arc<Slot>],
) -> Result<()> {
    debug_assert_eq!(batches.len(), group.len());
    let sync = Arc::new(GroupInserts {
        pending: std::sync::atomic::AtomicUsize::new(group.len() - 1),
        err: Mutex::new(None),
        lock: Mutex::new(()),
        cv: Condvar::new(),
    });
    {
        // Followers wait on their condvar with the queue lock: notify under
        // it so no wake-up is lost (lock order: WAL, queue, request).
        let _q = queue.lock();
        for (s, b) in group.iter().zip(batches.iter_mut()).skip(1) {
            let job = InsertJob {
                mem: Arc::clone(mem),
                batch: std::mem::take(b),
                group: Arc::clone(&sync),
            };
            s.req.lock().insert = Some(job);
            s.cv.notify_one();
        }
    }
    let own = batches.first().map_or(Ok(()), |b| insert_batch(mem, b));
    let others = sync.wait();
    own.and(others)
}

/// Inserts every record of `b` into `mem` with consecutive sequence numbers.
pub(crate) fn insert_batch(mem: &MemTable, b: &WriteBatch) -> Result<()> {
    let first: SeqNo = b.sequence();
    for (seq, e) in (first..).zip(b.iter()) {
        let e = e.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("malformed write batch: {what}"))
            }
            other => other,
        })?;
        if e.cf != 0 {
            return Err(Error::NotSupported(format!("column family {}", e.cf)));
        }
        mem.add(seq, e.kind, e.key, e.value);
    }
    Ok(())
}

/// Before a group is written: apply write stalls, then switch a full
/// memtable. Called by the leader only.
///
/// Stalls, as RocksDB's write controller: L0 files ≥
/// `level0_stop_writes_trigger` or pending compaction bytes ≥ the hard limit
/// stop writes until compaction catches up; L0 files ≥
/// `level0_slowdown_writes_trigger` or pending bytes ≥ the soft limit delay
/// each group at `delayed_write_rate`, charging the bytes ingested since the
/// previous charge (the previous groups, as RocksDB charges the last group's
/// size); a full memtable with `max_write_buffer_number` memtables in use
/// waits for a flush. L0/pending-bytes stalls are counted once per LSM shape
/// that causes them (RocksDB counts them when it recalculates the
/// condition); memtable stops once per waiting group. Stall time is booked
/// by cause.
fn make_room(db: &Arc<DbInner>) -> Result<()> {
    use crate::stats::{StallCause, StallCondition};
    let mut st = db.state.lock();
    let mut delayed = false;
    let mut stopped_since: Option<(StallCause, Instant)> = None;
    let mut memtable_wait = false;
    let book_stop = |since: &mut Option<(StallCause, Instant)>| {
        if let Some((cause, t)) = since.take() {
            db.stats.add_stall_time(cause, t.elapsed());
        }
    };
    loop {
        if let Some(e) = st.errors.write_error() {
            book_stop(&mut stopped_since);
            return Err(e);
        }
        if db.shutting_down.load(Ordering::Acquire) {
            book_stop(&mut stopped_since);
            return Err(Error::ShutdownInProgress);
        }
        match super::background::stall_condition(db, &st) {
            StallCondition::Stopped(cause) => {
                if let Some(e) = &st.errors.current {
                    if !st.errors.recovery_pending() {
                        // Compactions are paused by a soft error nobody
                        // will resume automatically: do not wait forever.
                        book_stop(&mut stopped_since);
                        return Err(Error::WritesStopped(e.error.to_string()));
                    }
                }
                if stopped_since.is_none() {
                    stopped_since = Some((cause, Instant::now()));
                }
                db.bg_cv.notify_all();
                db.bg_cv.wait_for(&mut st, Duration::from_millis(100));
                continue;
            }
            StallCondition::Delayed(cause) if !delayed => {
                book_stop(&mut stopped_since);
                delayed = true;
                let wait = {
                    let mut wc = db.stats.write_controller.lock();
                    let bytes = wc.take_ingest(db.stats.ingest_bytes.load(Ordering::Relaxed));
                    wc.delay(bytes, db.opts.delayed_write_rate, Instant::now())
                };
                if !wait.is_zero() {
                    let t = Instant::now();
                    drop(st);
                    std::thread::sleep(wait);
                    db.stats.add_stall_time(cause, t.elapsed());
                    st = db.state.lock();
                    continue; // the shape may have changed while we slept
                }
            }
            _ => book_stop(&mut stopped_since),
        }
        if st.mem.approximate_memory_usage() < db.opts.write_buffer_size {
            return Ok(());
        }
        if st.imm.len() + 1 >= db.opts.max_write_buffer_number {
            if !memtable_wait {
                memtable_wait = true;
                db.stats.count_stall(StallCause::MemtableStop, false);
            }
            let t = Instant::now();
            db.bg_cv.notify_all();
            db.bg_cv.wait_for(&mut st, Duration::from_millis(100));
            db.stats
                .add_stall_time(StallCause::MemtableStop, t.elapsed());
            continue;
        }
        switch_memtable(db, &mut st)?;
        return Ok(());
    }
}

/// Makes the active memtable immutable and starts a new WAL + memtable.
/// Requires the DB mutex; takes the WAL lock (lock order: state, then wal).
pub(crate) fn switch_memtable(db: &Arc<DbInner>, st: &mut DbState) -> Result<()> {
    if db.shutting_down.load(Ordering::Acquire) {
        return Err(Error::ShutdownInProgress);
    }
    let number = st.versions.new_file_number();
    let path = db.dir.join(log_file_name(number));
    let file = match db.fs.create(&path) {
        Ok(f) => f,
        Err(e) => {
            db.set_bg_error(st, e.clone(), Reason::Wal);
            return Err(e);
        }
    };
    // The new WAL's directory entry must be durable before a sync write
    // to it is acknowledged.
    if let Err(e) = db.fs.sync_dir(&db.dir) {
        db.set_bg_error(st, e.clone(), Reason::Wal);
        return Err(e);
    }
    let new_writer = LogWriter::new(file, number);
    // Swap WAL, memtable and super version together under the WAL lock: the
    // leader loads the memtable under this lock, so no group can write the
    // new WAL but insert into the old memtable.
    let mut wal = db.writer.wal.lock();
    if let Some(old) = wal.writer.as_mut() {
        // Sync the old WAL: a sync write to the new WAL must not become
        // durable while earlier writes in the old one are not, and after a
        // power loss the unsynced writes that survive must form a prefix
        // (a later WAL's blocks may reach the disk before an earlier WAL's
        // tail; syncing here rules that out). This costs one fdatasync per
        // memtable switch; a cheaper scheme (recording each WAL's final size
        // in its successor and stopping recovery at a short log) is noted in
        // docs/RELIABILITY.md.
        if let Err(e) = old.sync() {
            drop(wal);
            db.set_bg_error(st, e.clone(), Reason::Wal);
            return Err(e);
        }
    }
    wal.writer = Some(new_writer);
    wal.number = number;
    let bloom = db.opts.memtable_bloom_bytes();
    let old = std::mem::replace(&mut st.mem, Arc::new(MemTable::with_bloom(number, bloom)));
    st.imm.push(old);
    db.install_super_version(st);
    drop(wal);
    db.bg_cv.notify_all();
    Ok(())
}
