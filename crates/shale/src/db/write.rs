//! The write path: group commit with pipelined, concurrent memtable inserts.
//!
//! Each `write` call queues a request. The request at the head of the queue
//! becomes the leader: it makes room (memtable switch, stalls), takes the
//! requests behind it into one group (up to `MAX_GROUP_BYTES`, never mixing a
//! sync request into a non-sync leader's group), and under the WAL lock
//! assigns the group's sequence numbers, appends one WAL record per request
//! with one `write(2)` and at most one fsync for the group, and registers the
//! group as in flight. Then it leaves the queue, so the next group's leader
//! writes the WAL while this group inserts into the memtable (RocksDB's
//! pipelined write).
//!
//! With `allow_concurrent_memtable_write` (default, as RocksDB) every member
//! of a group inserts its own batch (`Request::insert`), outside the WAL lock,
//! at the same time as the members of other groups. A group publishes its
//! sequence numbers once all its members have inserted and every earlier
//! group has published (`publish`), so readers see writes in sequence order
//! and never part of a group. Without it the leader inserts the whole group
//! under the WAL lock, one group at a time.
//!
//! A non-sync write with nothing to share with a group skips the queue
//! (`write_unqueued`): without the WAL, or with a memory-mapped WAL
//! (`Options::wal_mmap_writes`), where appending a record is a copy into the
//! page cache, it takes its sequence numbers and appends its record under
//! the WAL lock itself, then inserts and publishes like a group of one. The
//! queue remains for sync writes (one fsync per group) and for WALs written
//! with `write(2)` (one system call per group).
//!
//! Column families: a batch names families by id; each record goes to the
//! active memtable of its family (`MemRouter`). A batch naming a dropped
//! family is refused before it is queued; a family dropped after that check
//! loses the batch's records for it (the write is ordered before the drop).
//! A family's memtable that fills is reported in `DbInner::full_cfs` and
//! switched by the next leader, which also enforces `max_total_wal_size`,
//! `db_write_buffer_size` and the memtables' share of `memory_budget`.
//!
//! Invariants: only a leader holding the WAL lock touches `WalState`
//! (sequence allocation included); a group is in flight from its sequence
//! allocation (under the WAL lock) until it is published (`visible_seq`
//! reaches its last number), and a memtable switch takes the WAL lock and
//! then waits for no group in flight (`lock_wal_quiesced`), so no insert
//! ever goes
//! into a memtable after it became immutable and a flushed memtable's
//! entries are all visible; sequence numbers become visible in order.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::base::{SeqNo, ValueKind};
use crate::batch::{Owner, WriteBatch};
use crate::error::{Error, Result};
use crate::memory::Part;
use crate::memtable::MemTable;
use crate::options::WriteOptions;

use crate::shared::memtables::{memtable_budget, memtable_stop, switch_memtable};
use crate::shared::wal_files::backoff;
use crate::shared::{DbInner, DbState, Reason};

const MAX_GROUP_BYTES: usize = 1 << 20;

/// How long a follower yields before it sleeps waiting for its group.
const SPIN_WAIT: Duration = Duration::from_micros(100);

struct Request {
    batch: Option<WriteBatch>,
    sync: bool,
    disable_wal: bool,
    /// Set by the leader: insert this batch into the memtable, then wait for
    /// the group to be published.
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
    /// Inserts the batch, reports to the group, and returns the group's
    /// result once the leader published it.
    fn run(self) -> Result<()> {
        let mut router = MemRouter::new(&self.db, &self.default_mem);
        let r = insert_batch(&mut router, &self.batch);
        router.finish();
        self.group.finish(r);
        self.group.wait_published()
    }
}

/// Where the records of a batch go: the memtable of each family id.
pub(crate) trait MemTarget {
    /// The memtable of family `cf`; `None` drops the record (a family
    /// dropped meanwhile, or one recovery must skip).
    fn mem(&mut self, cf: u32) -> Option<&MemTable>;

    /// Told after each entry added to family `cf`'s memtable, with the
    /// entry's key and value bytes (recovery counts them; writes do not).
    #[inline]
    fn added(&mut self, _cf: u32, _bytes: usize) {}
}

/// Resolves family ids to their active memtables for a write group. Valid
/// while the group is in flight (no memtable switch meanwhile).
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
                // After the push: a leader that stores `room_clear` before
                // this sees the push when it checks again (`make_room`).
                self.db.room_clear.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Done inserting: report a full memtable (the default family's to
    /// `make_room`'s fast path, which then takes the slow one).
    fn finish(mut self) {
        self.report_full();
        if self.default.approximate_memory_usage() >= self.db.default_cf.opts().write_buffer_size {
            self.db.room_clear.store(false, Ordering::SeqCst);
        }
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
            self.last = Some((cf, mem, fam.opts().write_buffer_size));
        }
        self.last.as_ref().map(|(_, m, _)| &**m)
    }
}

/// A group of several requests inserting in parallel: counts the members
/// still inserting (the leader waits for 0), then tells the followers the
/// group is published.
struct GroupInserts {
    pending: AtomicUsize,
    published: AtomicBool,
    /// The first insert error of any member: the whole group's result.
    err: Mutex<Option<Error>>,
    lock: Mutex<()>,
    cv: Condvar,
}

impl GroupInserts {
    fn new(followers: usize) -> Self {
        GroupInserts {
            pending: AtomicUsize::new(followers),
            published: AtomicBool::new(false),
            err: Mutex::new(None),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    fn record(&self, r: Result<()>) {
        if let Err(e) = r {
            self.err.lock().get_or_insert(e);
        }
    }

    /// A follower's insert is done.
    fn finish(&self, r: Result<()>) {
        self.record(r);
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
    }

    /// The leader: waits until every follower has inserted.
    fn wait_inserted(&self) {
        wait_until(&self.lock, &self.cv, || {
            self.pending.load(Ordering::Acquire) == 0
        });
    }

    /// The leader: the group is visible; release the followers.
    fn set_published(&self) {
        self.published.store(true, Ordering::Release);
        let _g = self.lock.lock();
        self.cv.notify_all();
    }

    /// A follower: waits until the leader published the group; the group's
    /// result.
    fn wait_published(&self) -> Result<()> {
        wait_until(&self.lock, &self.cv, || {
            self.published.load(Ordering::Acquire)
        });
        self.result()
    }

    fn result(&self) -> Result<()> {
        match &*self.err.lock() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// Waits until `done()` (set by another thread, which then notifies `cv`
/// under `lock`): yields for a short while first, since a group finishes
/// within microseconds and a futex sleep and wake-up costs more.
fn wait_until(lock: &Mutex<()>, cv: &Condvar, done: impl Fn() -> bool) {
    let spin_until = Instant::now() + SPIN_WAIT;
    while !done() && Instant::now() < spin_until {
        std::thread::yield_now();
    }
    let mut g = lock.lock();
    while !done() {
        cv.wait_for(&mut g, Duration::from_millis(10));
    }
}

struct Slot {
    req: Mutex<Request>,
    cv: Condvar,
}

/// The queue of write requests: the request at its head leads the next
/// group (see the module header). Owned by the DB handle (`Db`): only
/// writes use it.
pub(crate) struct WriteQueue {
    queue: Mutex<VecDeque<Arc<Slot>>>,
    /// The leader's group and batch vectors, kept between groups so that a
    /// group allocates nothing (only a leader takes it, and gives it back
    /// before its inserts: rarely contended).
    scratch: Mutex<(Vec<Arc<Slot>>, Vec<WriteBatch>)>,
}

impl WriteQueue {
    pub(crate) fn new() -> Self {
        WriteQueue {
            queue: Mutex::new(VecDeque::new()),
            scratch: Mutex::new((Vec::new(), Vec::new())),
        }
    }
}

thread_local! {
    /// This thread's request slot, reused by its next write once nobody
    /// else holds it (a write allocates no slot in the common case).
    static SLOT: std::cell::RefCell<Option<Arc<Slot>>> = const { std::cell::RefCell::new(None) };
}

/// `Db::flush_wal`: flushes (and optionally syncs) the WAL.
pub(crate) fn flush_wal(db: &DbInner, sync: bool) -> Result<()> {
    let mut wal = db.wals.current.lock();
    let Some(w) = wal.writer.as_mut() else {
        return Ok(());
    };
    let r = if sync {
        db.wals
            .sync_closed_wals(db.fs.as_ref(), &db.dir)
            .and_then(|()| w.sync())
    } else {
        w.flush()
    };
    drop(wal);
    if let Err(e) = &r {
        let mut st = db.state.lock();
        db.set_bg_error(&mut st, e.clone(), Reason::Wal);
    }
    r
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

pub(crate) fn write(
    db: &Arc<DbInner>,
    wq: &WriteQueue,
    batch: WriteBatch,
    opts: &WriteOptions,
) -> Result<()> {
    if opts.sync && opts.disable_wal {
        return Err(Error::InvalidArgument(
            "WriteOptions: sync and disable_wal together (nothing to sync)".into(),
        ));
    }
    db.check_writable()?;
    if batch.is_empty() {
        // Nothing to write, but `sync` still promises that every earlier
        // write is durable when this returns.
        return if opts.sync {
            flush_wal(db, true)
        } else {
            Ok(())
        };
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
    if batch.names_other_families() || batch.has_merges() {
        check_families(db, &batch)?;
    }
    let batch = if db.cfs.any_ttl() || db.default_cf.opts().default_ttl_secs > 0 {
        with_default_ttl(db, batch)?
    } else {
        batch
    };
    if db.opts.allow_concurrent_memtable_write
        && !opts.sync
        && (opts.disable_wal || db.wals.mapped.load(Ordering::Relaxed))
    {
        return write_unqueued(db, batch, !opts.disable_wal);
    }
    let slot = take_slot(batch, opts);
    let r = queue_and_write(db, wq, &slot);
    return_slot(slot);
    r
}

/// A non-sync write that has no `write(2)` or fsync to share with other
/// writes (no WAL, or a memory-mapped WAL where appending a record hands it
/// to the OS) skips the queue: it makes room, takes its sequence numbers
/// and appends its record under the WAL lock like a group of one, inserts,
/// and publishes in order.
fn write_unqueued(db: &Arc<DbInner>, mut batch: WriteBatch, wal: bool) -> Result<()> {
    make_room(db)?;
    if !wal {
        // Only in the memtable: a clean close must flush it.
        db.unpersisted.store(true, Ordering::Release);
    }
    let w = write_wal(db, std::slice::from_mut(&mut batch), false, wal, 1, false)?;
    crate::sync_point!("Write::BeforeMemtableInsert");
    // The memtable cannot change before this group publishes (a switch
    // waits for it), and borrowing it through the super version's guard
    // writes no reference count that other writers' cores share.
    let sv = db.default_cf.super_version.load();
    let mut router = MemRouter::new(db, &sv.mem);
    let r = insert_batch(&mut router, &batch);
    router.finish();
    publish(db, &w);
    r
}

/// Queues `slot` and waits until a leader has written it, or hands it its
/// insert, or it reaches the front and leads a group.
fn queue_and_write(db: &Arc<DbInner>, wq: &WriteQueue, slot: &Arc<Slot>) -> Result<()> {
    let job = {
        let mut q = wq.queue.lock();
        q.push_back(Arc::clone(slot));
        let mut spin_until: Option<Instant> = None;
        loop {
            if q.front().is_some_and(|f| Arc::ptr_eq(f, slot)) {
                break None;
            }
            // Wait until a leader finishes us, hands us our insert, or we
            // reach the front. The request's own mutex is taken briefly.
            {
                let mut r = slot.req.lock();
                if r.done {
                    return std::mem::replace(&mut r.result, Ok(()));
                }
                if let Some(job) = r.insert.take() {
                    break Some(job);
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
    };
    match job {
        Some(job) => job.run(),
        None => lead(db, wq, slot),
    }
}

/// Refuses a batch that names a family that is not live (dropped, or never
/// created in this DB), holds a merge operand for a family without a
/// merge operator, or a range deletion whose start is after its end.
fn check_families(db: &DbInner, batch: &WriteBatch) -> Result<()> {
    let mut last = 0u32;
    for e in batch.iter() {
        let e = e.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("malformed write batch: {what}"))
            }
            other => other,
        })?;
        if e.kind == ValueKind::RangeDeletion && e.key > e.value {
            return Err(Error::InvalidArgument(format!(
                "delete_range: start {} is after end {}",
                crate::merge::printable(e.key),
                crate::merge::printable(e.value)
            )));
        }
        if e.kind == ValueKind::Merge {
            let has_op = match e.cf {
                0 => db.default_cf.opts().merge_operator.is_some(),
                id => db
                    .cfs
                    .get(id)
                    .is_none_or(|cf| cf.opts().merge_operator.is_some()),
            };
            if !has_op {
                return Err(Error::InvalidArgument(format!(
                    "merge in column family {} which has no merge_operator",
                    e.cf
                )));
            }
        }
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

/// `batch` with the puts of families that have a default TTL rewritten as
/// expiring puts (living at least the TTL: `base::expiry::expiry_after`);
/// unchanged when it has none.
fn with_default_ttl(db: &DbInner, batch: WriteBatch) -> Result<WriteBatch> {
    let ttl_of = |cf: u32| -> u64 {
        if cf == 0 {
            db.default_cf.opts().default_ttl_secs
        } else {
            db.cfs.get(cf).map_or(0, |c| c.opts().default_ttl_secs)
        }
    };
    let mut any = false;
    for e in batch.iter() {
        let e = e.map_err(|e| Error::InvalidArgument(format!("malformed write batch: {e}")))?;
        if e.kind == ValueKind::Value && ttl_of(e.cf) > 0 {
            any = true;
            break;
        }
    }
    if !any {
        return Ok(batch);
    }
    let now = db.opts.clock.now_secs();
    let mut out = WriteBatch::with_capacity(batch.size_in_bytes() + 64);
    out.copy_owner(&batch);
    for e in batch.iter() {
        let e = e.map_err(|e| Error::InvalidArgument(format!("malformed write batch: {e}")))?;
        match e.kind {
            ValueKind::Value if ttl_of(e.cf) > 0 => out.put_expiring_in(
                e.cf,
                e.key,
                e.value,
                crate::base::expiry::expiry_after(
                    now,
                    std::time::Duration::from_secs(ttl_of(e.cf)),
                ),
            ),
            _ => out.push_entry(&e),
        }
    }
    Ok(out)
}

/// Runs the group headed by `leader` (the queue's front).
fn lead(db: &Arc<DbInner>, wq: &WriteQueue, leader: &Arc<Slot>) -> Result<()> {
    let room = make_room(db);
    let (mut group, mut batches) = std::mem::take(&mut *wq.scratch.lock());
    let (mut sync, mut any_wal) = (false, false);
    {
        let q = wq.queue.lock();
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
    let concurrent = db.opts.allow_concurrent_memtable_write;
    let written = match room {
        Err(e) => Err(e),
        Ok(()) => {
            if !any_wal {
                // Only in the memtable: a clean close must flush it.
                db.unpersisted.store(true, Ordering::Release);
            }
            write_wal(db, &mut batches, sync, any_wal, group.len(), !concurrent)
        }
    };
    let result = match written {
        Ok(w) if concurrent => {
            return insert_pipelined(db, wq, w, group, batches);
        }
        Ok(_) => Ok(()), // inserted and published under the WAL lock
        Err(e) => Err(e),
    };
    // Finish the group and hand leadership to the next request.
    let mut q = wq.queue.lock();
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
    return_scratch(wq, group, batches);
    result
}

/// Gives the group vectors back for the next leader.
fn return_scratch(wq: &WriteQueue, mut group: Vec<Arc<Slot>>, mut batches: Vec<WriteBatch>) {
    group.clear();
    batches.clear();
    *wq.scratch.lock() = (group, batches);
}

/// A group whose records are in the WAL: sequence numbers `first..=last`,
/// in flight until published.
struct Written {
    first: SeqNo,
    last: SeqNo,
}

/// Under the WAL lock: assigns the group's sequence numbers, appends its
/// records to the WAL (flushed to the OS unless `manual_wal_flush`, synced
/// if `sync`), and registers the group as in flight. With `insert_now` the
/// group is also inserted and published before the lock is released.
fn write_wal(
    db: &Arc<DbInner>,
    batches: &mut [WriteBatch],
    sync: bool,
    any_wal: bool,
    requests: usize,
    insert_now: bool,
) -> Result<Written> {
    let mut wal = db.wals.current.lock();
    if wal.writer.is_none() {
        // Closed (see `DbHandle::shutdown`).
        return Err(Error::ShutdownInProgress);
    }
    let first = wal.last_allocated + 1;
    let mut seq = first;
    let mut ingest = 0u64;
    for b in batches.iter_mut() {
        b.set_sequence(seq);
        seq += u64::from(b.count());
        ingest += b.size_in_bytes() as u64;
    }
    let last = seq - 1;
    if any_wal {
        let Some(w) = wal.writer.as_mut() else {
            return Err(Error::ShutdownInProgress);
        };
        let wal_bytes_before = w.file_size();
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
            // Earlier WALs first: this group must not become durable while
            // writes before it are not.
            res = db
                .wals
                .sync_closed_wals(db.fs.as_ref(), &db.dir)
                .and_then(|()| w.sync());
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
        if sync {
            db.stats.wal_syncs.add(1);
        }
        db.stats.wal_bytes.add(wal_bytes);
        db.stats.wal_writes.add(requests as u64);
    }
    wal.last_allocated = last;
    db.stats.writes.add(requests as u64);
    db.stats.keys_written.add(last + 1 - first);
    db.stats.commit_groups.add(1);
    db.stats.ingest_bytes.add(ingest);
    let written = Written { first, last };
    if insert_now {
        let sv = db.default_cf.super_version.load();
        let mut router = MemRouter::new(db, &sv.mem);
        let r = batches
            .iter()
            .try_for_each(|b| insert_batch(&mut router, b));
        router.finish();
        publish(db, &written);
        r?;
    }
    Ok(written)
}

/// Makes `first..=last` visible once every earlier group is, and ends the
/// group's time in flight. Called exactly once per group, after all its
/// inserts (also failed ones: the sequence numbers are used either way).
fn publish(db: &DbInner, w: &Written) {
    let mut spins = 0u32;
    while db.visible_seq.load(Ordering::Acquire) != w.first - 1 {
        backoff(&mut spins);
    }
    db.visible_seq.store(w.last, Ordering::Release);
}

/// After the WAL write: leaves the queue (the next leader may start), hands
/// each follower its batch (`batches[i]` belongs to `group[i]`; `group[0]`
/// is the leader), inserts the leader's, waits for the followers, publishes.
fn insert_pipelined(
    db: &Arc<DbInner>,
    wq: &WriteQueue,
    w: Written,
    group: Vec<Arc<Slot>>,
    mut batches: Vec<WriteBatch>,
) -> Result<()> {
    debug_assert_eq!(batches.len(), group.len());
    let shared = (group.len() > 1).then(|| Arc::new(GroupInserts::new(group.len() - 1)));
    // The memtables cannot change before this group publishes (a switch
    // waits for it).
    let sv = db.default_cf.super_version.load();
    {
        // Followers wait on their condvar with the queue lock: hand them
        // their jobs under it so no wake-up is lost (lock order: queue,
        // request).
        let mut q = wq.queue.lock();
        for (i, s) in group.iter().enumerate() {
            let front = q.pop_front();
            debug_assert!(front.is_some_and(|f| Arc::ptr_eq(&f, s)));
            if let (Some(shared), Some(b)) = (&shared, batches.get_mut(i)) {
                if i == 0 {
                    continue;
                }
                let job = InsertJob {
                    db: Arc::clone(db),
                    default_mem: Arc::clone(&sv.mem),
                    batch: std::mem::replace(b, WriteBatch::moved_out()),
                    group: Arc::clone(shared),
                };
                s.req.lock().insert = Some(job);
                s.cv.notify_one();
            }
        }
        if let Some(next) = q.front() {
            next.cv.notify_one();
        }
    }
    let own = batches
        .first_mut()
        .map(|b| std::mem::replace(b, WriteBatch::moved_out()));
    return_scratch(wq, group, batches);
    // In the WAL, not yet in the memtable: the window in which later groups
    // may insert first and a memtable switch must wait.
    crate::sync_point!("Write::BeforeMemtableInsert");
    let mut router = MemRouter::new(db, &sv.mem);
    let r = own.map_or(Ok(()), |b| insert_batch(&mut router, &b));
    router.finish();
    match shared {
        None => {
            publish(db, &w);
            r
        }
        Some(shared) => {
            shared.record(r);
            shared.wait_inserted();
            publish(db, &w);
            shared.set_published();
            shared.result()
        }
    }
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
            target.added(e.cf, e.key.len() + e.value.len());
        }
    }
    Ok(())
}

/// Before a group is written: apply write stalls, then switch full
/// memtables and flush what the WAL and memory limits ask for.
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
/// per waiting group. Stall time is booked by cause. Called by leaders and
/// by writes without the WAL (`write_unqueued`): everything past the
/// lock-free fast path runs under the DB mutex.
fn make_room(db: &Arc<DbInner>) -> Result<()> {
    use crate::stats::{StallCause, StallCondition};
    if room_is_clear(db) {
        return Ok(());
    }
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
            .observe(cond, db.stats.ingest_bytes.get());
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
                    let bytes = wc.take_ingest(db.stats.ingest_bytes.get());
                    wc.delay(bytes, db.mutable.delayed_write_rate(), Instant::now())
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
            .is_some_and(|c| c.mem.approximate_memory_usage() >= c.cf.opts().write_buffer_size)
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
                if c.imm.len() + 1 >= c.cf.opts().max_write_buffer_number {
                    waiting.push(id);
                    continue;
                }
                switch_memtable(db, &mut st, id)?;
            }
            if !waiting.is_empty() {
                st.pending_switch = waiting;
                wait_for_flushes(db, &mut st, &mut memtable_wait, Duration::from_millis(100));
                continue;
            }
        }
        if limit_wal_size(db, &mut st)? {
            // The live WALs are a write buffer past the limit and the
            // flushes that free the oldest have not finished: wait for them
            // rather than let the WALs grow further.
            wait_for_flushes(db, &mut st, &mut memtable_wait, Duration::from_millis(10));
            continue;
        }
        limit_memtable_memory(db, &mut st)?;
        let stop = memtable_stop(db);
        if stop > 0 && db.memory.get(Part::Memtables) >= stop && st.any_flush_work() {
            // Twice the budget (or all that the memory budget leaves) while
            // flushes are under way: wait for them (they free memory, so
            // this cannot wedge) rather than outrun them without bound.
            wait_for_flushes(db, &mut st, &mut memtable_wait, Duration::from_millis(10));
            continue;
        }
        let clear = st.stalled.is_empty()
            && st.pending_switch.is_empty()
            && st.closed_wals.is_empty()
            && st.errors.current.is_none();
        db.room_clear.store(clear, Ordering::SeqCst);
        let default_full = || {
            st.cfs
                .get(&0)
                .is_some_and(|c| c.mem.approximate_memory_usage() >= c.cf.opts().write_buffer_size)
        };
        if clear && (!db.full_cfs.lock().is_empty() || default_full()) {
            // Filled while we looked (see `MemRouter::finish`, which stores
            // false after the insert: one of the two sees the other).
            db.room_clear.store(false, Ordering::SeqCst);
        }
        return Ok(());
    }
}

/// One wait of a writer for flushes (a memtable stop): counted once per
/// waiting writer, timed per wait.
fn wait_for_flushes(
    db: &DbInner,
    st: &mut MutexGuard<'_, DbState>,
    counted: &mut bool,
    timeout: Duration,
) {
    use crate::stats::StallCause;
    if !*counted {
        *counted = true;
        db.stats.count_stall(StallCause::MemtableStop, false);
    }
    let t = Instant::now();
    db.bg_cv.notify_all();
    db.bg_cv.wait_for(st, timeout);
    db.stats
        .add_stall_time(StallCause::MemtableStop, t.elapsed());
}

/// `make_room`'s fast path: true when the last full pass found nothing to
/// do (`DbInner::room_clear`; a full memtable clears it, see
/// `MemRouter::finish`) and nothing that changes with every write needs the
/// slow path: the memtables are within `db_write_buffer_size`, and the DB
/// is open and writable. Lock-free.
#[inline]
fn room_is_clear(db: &DbInner) -> bool {
    if !db.room_clear.load(Ordering::SeqCst)
        || db.stop_writes.load(Ordering::Acquire)
        || db.shutting_down.load(Ordering::Acquire)
    {
        return false;
    }
    let budget = memtable_budget(db);
    // Under 7/8 of the budget in all, the active ones cannot be over it
    // (see `limit_memtable_memory`).
    budget == 0 || db.memory.get(Part::Memtables) <= budget / 8 * 7
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
    let limit = match db.mutable.max_total_wal_size() {
        0 => st.sum_write_buffers.saturating_mul(4),
        n => n,
    };
    let total = db.live_wal_bytes(st);
    if total <= limit {
        return Ok(false);
    }
    if st.wal_flush_requested >= oldest {
        let slack = st
            .cfs
            .values()
            .map(|c| c.cf.opts().write_buffer_size as u64)
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
            if c.imm.len() + 1 >= c.cf.opts().max_write_buffer_number {
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

/// `db_write_buffer_size`, RocksDB's write buffer manager rule: switches
/// the largest active memtable when the active (mutable) memtables
/// together use more than 7/8 of the budget, or when all memtables use the
/// whole budget and the active ones at least half of it (immutable ones are
/// on their way out). Writers wait only once all memtables use twice the
/// budget while flushes are under way (`make_room`).
///
/// (It used to switch one memtable at a time, the next only once that one's
/// flush finished: with several families growing together the memtables
/// then grew past the budget by the flush's latency each round, and a run
/// of `the_db_wide_memtable_budget_flushes_the_largest_without_a_wedge`
/// peaked at the whole 21 MB written against a 4 MiB budget.)
fn limit_memtable_memory(db: &Arc<DbInner>, st: &mut DbState) -> Result<()> {
    let budget = memtable_budget(db);
    let total = db.memory.get(Part::Memtables);
    if budget == 0 || total < budget / 2 {
        return Ok(());
    }
    let mutable: usize = st
        .cfs
        .values()
        .map(|c| c.mem.approximate_memory_usage())
        .sum();
    let due = mutable > budget / 8 * 7 || (total >= budget && mutable >= budget / 2);
    if !due {
        return Ok(());
    }
    // The largest by its entries: a switch frees those, while the next
    // memtable gets a bloom filter of its own. One holding under 1/16 of the
    // budget is left alone (switching it would flush nearly empty
    // memtables back to back while fixed costs keep the total up).
    let largest = st
        .cfs
        .iter()
        .filter(|(_, c)| {
            c.mem.num_entries() > 0
                && c.mem.entries_memory_usage() >= budget / 16
                && c.imm.len() + 1 < c.cf.opts().max_write_buffer_number
        })
        .max_by_key(|(_, c)| c.mem.entries_memory_usage())
        .map(|(&id, _)| id);
    if let Some(id) = largest {
        switch_memtable(db, st, id)?;
    }
    Ok(())
}
