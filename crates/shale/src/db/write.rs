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
//! Column families: a batch names families by id; each record goes to the
//! active memtable of its family (`MemRouter`), resolved while the WAL lock
//! is held. A batch naming a dropped family is refused before it is queued;
//! a family dropped after that check loses the batch's records for it (the
//! write is ordered before the drop). A family's memtable that fills is
//! reported in `DbInner::full_cfs` and switched by the next leader, which
//! also enforces `max_total_wal_size` and `db_write_buffer_size`.
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
use crate::batch::{Owner, WriteBatch};
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
    db: Arc<DbInner>,
    default_mem: Arc<MemTable>,
    batch: WriteBatch,
    group: Arc<GroupInserts>,
}

impl InsertJob {
    fn run(self) {
        let mut router = MemRouter::new(&self.db, &self.default_mem);
        let r = insert_batch(&mut router, &self.batch);
        router.finish();
        self.group.finish(r);
    }
}

/// Where the records of a batch go: the memtable of each family id.
pub(crate) trait MemTarget {
    /// The memtable of family `cf`; `None` drops the record (a family
    /// dropped meanwhile, or one recovery must skip).
    fn mem(&mut self, cf: u32) -> Option<&MemTable>;
}

/// Resolves family ids to their active memtables for a write group. Valid
/// while the leader holds the WAL lock (no memtable switch meanwhile).
struct MemRouter<'a> {
    db: &'a DbInner,
    default: &'a Arc<MemTable>,
    /// The last non-default family resolved: (id, memtable, write buffer size).
    last: Option<(u32, Arc<MemTable>, usize)>,
}

impl<'a> MemRouter<'a> {
    fn new(db: &'a DbInner, default: &'a Arc<MemTable>) -> Self {
        MemRouter {
            db,
            default,
            last: None,
        }
    }

    /// Reports the last family resolved if its memtable is full.
    fn report_full(&mut self) {
        if let Some((id, mem, limit)) = self.last.take() {
            if mem.approximate_memory_usage() >= limit {
                self.db.full_cfs.lock().push(id);
            }
        }
    }

    /// Done inserting: report a full memtable.
    fn finish(mut self) {
        self.report_full();
    }
}

impl MemTarget for MemRouter<'_> {
    #[inline]
    fn mem(&mut self, cf: u32) -> Option<&MemTable> {
        if cf == 0 {
            return Some(self.default);
        }
        if self.last.as_ref().is_none_or(|(id, _, _)| *id != cf) {
            self.report_full();
            let fam = self.db.cfs.get(cf)?;
            let mem = Arc::clone(&fam.super_version.load().mem);
            self.last = Some((cf, mem, fam.opts.write_buffer_size));
        }
        self.last.as_ref().map(|(_, m, _)| &**m)
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
    /// The leader's group and batch vectors, kept between groups so that a
    /// group allocates nothing (only the leader takes it: uncontended).
    scratch: Mutex<(Vec<Arc<Slot>>, Vec<WriteBatch>)>,
}

thread_local! {
    /// This thread's request slot, reused by its next write once nobody
    /// else holds it (a write allocates no slot in the common case).
    static SLOT: std::cell::RefCell<Option<Arc<Slot>>> = const { std::cell::RefCell::new(None) };
}

/// A slot for a new request: this thread's previous one if it is free.
fn take_slot(batch: WriteBatch, opts: &WriteOptions) -> Arc<Slot> {
    let request = Request {
        batch: Some(batch),
        sync: opts.sync,
        disable_wal: opts.disable_wal,
        insert: None,
        done: false,
        result: Ok(()),
    };
    let reused = SLOT
        .try_with(|s| s.borrow_mut().take())
        .ok()
        .flatten()
        .filter(|s| Arc::strong_count(s) == 1);
    match reused {
        Some(slot) => {
            *slot.req.lock() = request;
            slot
        }
        None => Arc::new(Slot {
            req: Mutex::new(request),
            cv: Condvar::new(),
        }),
    }
}

/// Keeps `slot` for this thread's next write.
fn return_slot(slot: Arc<Slot>) {
    let _ = SLOT.try_with(|s| *s.borrow_mut() = Some(slot));
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
            scratch: Mutex::new((Vec::new(), Vec::new())),
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
    match batch.owner() {
        Owner::Any => {}
        Owner::One(i) if i == db.instance => {}
        _ => {
            return Err(Error::InvalidArgument(
                "write batch built with a column family handle of another DB \
                 (or of an earlier open of this one)"
                    .into(),
            ))
        }
    }
    if batch.names_other_families() {
        check_families(db, &batch)?;
    }
    let slot = take_slot(batch, opts);
    let r = queue_and_write(db, &slot);
    return_slot(slot);
    r
}

/// Queues `slot` and waits until a leader has written it, or leads a group.
fn queue_and_write(db: &Arc<DbInner>, slot: &Arc<Slot>) -> Result<()> {
    {
        let mut q = db.writer.queue.lock();
        q.push_back(Arc::clone(slot));
        let mut spin_until: Option<Instant> = None;
        loop {
            let is_front = q.front().is_some_and(|f| Arc::ptr_eq(f, slot));
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
    lead(db, slot)
}

/// Refuses a batch that names a family that is not live (dropped, or never
/// created in this DB).
fn check_families(db: &DbInner, batch: &WriteBatch) -> Result<()> {
    let mut last = 0u32;
    for e in batch.iter() {
        let e = e.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("malformed write batch: {what}"))
            }
            other => other,
        })?;
        if e.cf == 0 || e.cf == last {
            continue;
        }
        if db.cfs.get(e.cf).is_none() {
            return Err(Error::InvalidArgument(format!(
                "write batch names column family {}, which was dropped or does not exist",
                e.cf
            )));
        }
        last = e.cf;
    }
    Ok(())
}

/// Runs the group headed by `leader` (the queue's front).
fn lead(db: &Arc<DbInner>, leader: &Arc<Slot>) -> Result<()> {
    let room = make_room(db);
    let (mut group, mut batches) = std::mem::take(&mut *db.writer.scratch.lock());
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
    drop(q);
    group.clear();
    batches.clear();
    *db.writer.scratch.lock() = (group, batches);
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
    let mem = Arc::clone(&db.default_cf.super_version.load().mem);
    if db.opts.allow_concurrent_memtable_write && group.len() > 1 {
        insert_in_parallel(db, &mem, batches, group)?;
    } else {
        let mut router = MemRouter::new(db, &mem);
        for b in batches.iter() {
            insert_batch(&mut router, b)?;
        }
        router.finish();
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
    db: &Arc<DbInner>,
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
        let _q = db.writer.queue.lock();
        for (s, b) in group.iter().zip(batches.iter_mut()).skip(1) {
            let job = InsertJob {
                db: Arc::clone(db),
                default_mem: Arc::clone(mem),
                batch: std::mem::take(b),
                group: Arc::clone(&sync),
            };
            s.req.lock().insert = Some(job);
            s.cv.notify_one();
        }
    }
    let mut router = MemRouter::new(db, mem);
    let own = batches
        .first()
        .map_or(Ok(()), |b| insert_batch(&mut router, b));
    router.finish();
    let others = sync.wait();
    own.and(others)
}

/// Inserts every record of `b` into the memtable of its family (records
/// of families `target` does not know are skipped) with consecutive
/// sequence numbers.
pub(crate) fn insert_batch(target: &mut impl MemTarget, b: &WriteBatch) -> Result<()> {
    let first: SeqNo = b.sequence();
    for (seq, e) in (first..).zip(b.iter()) {
        let e = e.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("malformed write batch: {what}"))
            }
            other => other,
        })?;
        if let Some(mem) = target.mem(e.cf) {
            mem.add(seq, e.kind, e.key, e.value);
        }
    }
    Ok(())
}

/// Before a group is written: apply write stalls, then switch full
/// memtables and flush what the WAL and memory limits ask for. Called by the
/// leader only.
///
/// Stalls, as RocksDB's write controller (DB-wide: the worst condition of
/// any family): L0 files ≥ `level0_stop_writes_trigger` or pending
/// compaction bytes ≥ the hard limit in some family stop writes until
/// compaction catches up; L0 files ≥ `level0_slowdown_writes_trigger` or
/// pending bytes ≥ the soft limit delay each group at `delayed_write_rate`,
/// charging the bytes ingested since the previous charge (the previous
/// groups, as RocksDB charges the last group's size); a full memtable of a
/// family with `max_write_buffer_number` memtables in use waits for that
/// family's flush. L0/pending-bytes stalls are counted once per version
/// that causes them (when the version is installed); memtable stops once
/// per waiting group. Stall time is booked by cause.
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
        let cond = st.worst_stall();
        db.stats
            .write_controller
            .lock()
            .observe(cond, db.stats.ingest_bytes.load(Ordering::Relaxed));
        match cond {
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
        // Memtables that filled: the default family's is checked here, the
        // others were reported by the leaders that filled them.
        {
            let reported = std::mem::take(&mut *db.full_cfs.lock());
            st.pending_switch.extend(reported);
        }
        if st
            .cfs
            .get(&0)
            .is_some_and(|c| c.mem.approximate_memory_usage() >= c.cf.opts.write_buffer_size)
        {
            st.pending_switch.push(0);
        }
        if !st.pending_switch.is_empty() {
            st.pending_switch.sort_unstable();
            st.pending_switch.dedup();
            let mut waiting = Vec::new();
            for id in std::mem::take(&mut st.pending_switch) {
                let Some(c) = st.cfs.get(&id) else { continue };
                if c.mem.num_entries() == 0 {
                    continue;
                }
                if c.imm.len() + 1 >= c.cf.opts.max_write_buffer_number {
                    waiting.push(id);
                    continue;
                }
                switch_memtable(db, &mut st, id)?;
            }
            if !waiting.is_empty() {
                st.pending_switch = waiting;
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
        }
        if limit_wal_size(db, &mut st)? {
            // The live WALs are a write buffer past the limit and the
            // flushes that free the oldest have not finished: wait for them
            // rather than let the WALs grow further.
            if !memtable_wait {
                memtable_wait = true;
                db.stats.count_stall(StallCause::MemtableStop, false);
            }
            let t = Instant::now();
            db.bg_cv.notify_all();
            db.bg_cv.wait_for(&mut st, Duration::from_millis(10));
            db.stats
                .add_stall_time(StallCause::MemtableStop, t.elapsed());
            continue;
        }
        limit_memtable_memory(db, &mut st)?;
        return Ok(());
    }
}

/// `max_total_wal_size`: once the live WALs exceed it, switches the
/// memtables of every family that still has writes in the oldest live WAL
/// (once per oldest WAL; their flushes go first), so that it can be
/// deleted. Returns true when the writer must wait: the live WALs exceed the
/// limit by more than half the largest write buffer while those flushes
/// have not finished, so the live WAL bytes stay within the limit plus one
/// write buffer whatever the flushes' latency (a group larger than half a
/// write buffer may still pass it once).
fn limit_wal_size(db: &Arc<DbInner>, st: &mut DbState) -> Result<bool> {
    let Some(&(oldest, _)) = st.closed_wals.front() else {
        return Ok(false);
    };
    let limit = match db.opts.max_total_wal_size {
        0 => st.sum_write_buffers.saturating_mul(4),
        n => n,
    };
    let current = db
        .writer
        .wal
        .lock()
        .writer
        .as_ref()
        .map_or(0, |w| w.file_size());
    let total: u64 = st.closed_wals.iter().map(|w| w.1).sum::<u64>() + current;
    if total <= limit {
        return Ok(false);
    }
    if st.wal_flush_requested >= oldest {
        let slack = st
            .cfs
            .values()
            .map(|c| c.cf.opts.write_buffer_size as u64)
            .max()
            .unwrap_or(0);
        // Half a buffer of headroom: the group about to be written comes
        // on top of `total`.
        return Ok(total > limit.saturating_add(slack / 2));
    }
    st.wal_flush_requested = oldest;
    let holders: Vec<u32> = st
        .cfs
        .iter()
        .filter(|(_, c)| c.oldest_unflushed_wal().is_some_and(|w| w <= oldest))
        .map(|(&id, _)| id)
        .collect();
    db.log.info(&format!(
        "live WALs hold {total} bytes > max_total_wal_size {limit}: flushing {} column families with writes in WAL {oldest}",
        holders.len()
    ));
    for id in holders {
        let Some(c) = st.cfs.get(&id) else { continue };
        if c.mem.num_entries() > 0 && c.mem.id() <= oldest {
            if c.imm.len() + 1 >= c.cf.opts.max_write_buffer_number {
                st.pending_switch.push(id);
            } else {
                switch_memtable(db, st, id)?;
            }
        }
        // These flushes free WALs: ahead of the busy families' own.
        st.flush_queue.retain(|&x| x != id);
        st.flush_queue.push_front(id);
    }
    db.bg_cv.notify_all();
    Ok(false)
}

/// `db_write_buffer_size`: once every memtable together uses more, switches
/// the largest active memtable (one at a time: the next only after that
/// flush finished). Writers never wait on the budget itself.
fn limit_memtable_memory(db: &Arc<DbInner>, st: &mut DbState) -> Result<()> {
    let budget = db.opts.db_write_buffer_size;
    if budget == 0 || st.budget_flush_pending || db.memtable_bytes.load(Ordering::Relaxed) < budget
    {
        return Ok(());
    }
    let largest = st
        .cfs
        .iter()
        .filter(|(_, c)| {
            c.mem.num_entries() > 0 && c.imm.len() + 1 < c.cf.opts.max_write_buffer_number
        })
        .max_by_key(|(_, c)| c.mem.approximate_memory_usage())
        .map(|(&id, _)| id);
    if let Some(id) = largest {
        st.budget_flush_pending = true;
        switch_memtable(db, st, id)?;
    }
    Ok(())
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
    // A WAL that is still empty is kept: the memtable's writes are all in
    // earlier (synced) WALs. Checked under the same WAL lock that swaps the
    // memtable, so no group can write it in between.
    {
        let wal = db.writer.wal.lock();
        if wal.writer.as_ref().is_some_and(|w| w.file_size() == 0) {
            return install_new_memtable(db, st, cf, wal);
        }
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
    // leader loads the memtables under this lock, so no group can write the
    // new WAL but insert into the old memtable.
    let mut wal = db.writer.wal.lock();
    {
        if let Some(old) = wal.writer.as_mut() {
            // Sync the old WAL: a sync write to the new WAL must not become
            // durable while earlier writes in the old one are not, and after
            // a power loss the unsynced writes that survive must form a
            // prefix (a later WAL's blocks may reach the disk before an
            // earlier WAL's tail; syncing here rules that out). It also
            // makes every write of an immutable memtable durable before its
            // flush is logged, which keeps cross-family batches atomic when
            // families flush at different times. This costs one fdatasync
            // per switch; a cheaper scheme (recording each WAL's final size
            // in its successor and stopping recovery at a short log) is
            // noted in docs/RELIABILITY.md.
            if let Err(e) = old.sync() {
                drop(wal);
                db.set_bg_error(st, e.clone(), Reason::Wal);
                return Err(e);
            }
            let old_size = old.file_size();
            st.closed_wals.push_back((wal.number, old_size));
        }
        wal.number = new_writer.log_number();
        wal.writer = Some(new_writer);
    }
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
    let fresh = super::new_memtable(db, &c.cf.opts, number);
    let old = std::mem::replace(&mut c.mem, fresh);
    c.imm.push(old);
    db.install_super_version(st, cf);
    drop(wal);
    st.flush_queue.push_back(cf);
    db.bg_cv.notify_all();
    Ok(())
}
