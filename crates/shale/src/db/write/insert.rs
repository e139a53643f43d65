//! A write group's memtable inserts: each record to its family's active
//! memtable (`MemRouter`, any `MemTarget`: recovery replays through the
//! same `insert_batch`), the followers' shares run in parallel
//! (`InsertJob`), and the count the leader waits on before it publishes
//! (`GroupInserts`).

use crate::base::SeqNo;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::shared::DbInner;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a follower yields before it sleeps waiting for its group.
pub(super) const SPIN_WAIT: Duration = Duration::from_micros(100);

/// A follower's share of a group's memtable inserts.
pub(super) struct InsertJob {
    pub(super) db: Arc<DbInner>,
    pub(super) default_mem: Arc<MemTable>,
    pub(super) batch: WriteBatch,
    pub(super) group: Arc<GroupInserts>,
}

impl InsertJob {
    /// Inserts the batch, reports to the group, and returns the group's
    /// result once the leader published it.
    pub(super) fn run(self) -> Result<()> {
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
pub(super) struct MemRouter<'a> {
    pub(super) db: &'a DbInner,
    pub(super) default: &'a Arc<MemTable>,
    /// The last non-default family resolved: (id, memtable, write buffer size).
    pub(super) last: Option<(u32, Arc<MemTable>, usize)>,
}

impl<'a> MemRouter<'a> {
    pub(super) fn new(db: &'a DbInner, default: &'a Arc<MemTable>) -> Self {
        MemRouter {
            db,
            default,
            last: None,
        }
    }

    /// Reports the last family resolved if its memtable is full.
    pub(super) fn report_full(&mut self) {
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
    pub(super) fn finish(mut self) {
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
pub(super) struct GroupInserts {
    pub(super) pending: AtomicUsize,
    pub(super) published: AtomicBool,
    /// The first insert error of any member: the whole group's result.
    pub(super) err: Mutex<Option<Error>>,
    pub(super) lock: Mutex<()>,
    pub(super) cv: Condvar,
}

impl GroupInserts {
    pub(super) fn new(followers: usize) -> Self {
        GroupInserts {
            pending: AtomicUsize::new(followers),
            published: AtomicBool::new(false),
            err: Mutex::new(None),
            lock: Mutex::new(()),
            cv: Condvar::new(),
        }
    }

    pub(super) fn record(&self, r: Result<()>) {
        if let Err(e) = r {
            self.err.lock().get_or_insert(e);
        }
    }

    /// A follower's insert is done.
    pub(super) fn finish(&self, r: Result<()>) {
        self.record(r);
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let _g = self.lock.lock();
            self.cv.notify_all();
        }
    }

    /// The leader: waits until every follower has inserted.
    pub(super) fn wait_inserted(&self) {
        wait_until(&self.lock, &self.cv, || {
            self.pending.load(Ordering::Acquire) == 0
        });
    }

    /// The leader: the group is visible; release the followers.
    pub(super) fn set_published(&self) {
        self.published.store(true, Ordering::Release);
        let _g = self.lock.lock();
        self.cv.notify_all();
    }

    /// A follower: waits until the leader published the group; the group's
    /// result.
    pub(super) fn wait_published(&self) -> Result<()> {
        wait_until(&self.lock, &self.cv, || {
            self.published.load(Ordering::Acquire)
        });
        self.result()
    }

    pub(super) fn result(&self) -> Result<()> {
        match &*self.err.lock() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

/// Waits until `done()` (set by another thread, which then notifies `cv`
/// under `lock`): yields for a short while first, since a group finishes
/// within microseconds and a futex sleep and wake-up costs more.
pub(super) fn wait_until(lock: &Mutex<()>, cv: &Condvar, done: impl Fn() -> bool) {
    let spin_until = Instant::now() + SPIN_WAIT;
    while !done() && Instant::now() < spin_until {
        std::thread::yield_now();
    }
    let mut g = lock.lock();
    while !done() {
        cv.wait_for(&mut g, Duration::from_millis(10));
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
