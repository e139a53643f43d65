//! A group's WAL write and its publication: the leader appends one record
//! per request under the WAL lock (`write_wal`), the group inserts
//! (`insert_pipelined`), and its sequence numbers become visible in order
//! (`publish`). Also `Db::flush_wal`.

use crate::base::SeqNo;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::shared::wal_files::backoff;
use crate::shared::wal_marks::Logged;
use crate::shared::{DbInner, Reason};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::insert::{insert_batch, GroupInserts, InsertJob, MemRouter};
use super::queue::{return_scratch, Slot, WriteQueue};

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

/// A group whose records are in the WAL: sequence numbers `first..=last`,
/// in flight until published.
pub(super) struct Written {
    pub(super) first: SeqNo,
    pub(super) last: SeqNo,
}

/// Under the WAL lock: assigns the group's sequence numbers, appends its
/// records to the WAL (flushed to the OS unless `manual_wal_flush`, synced
/// if `sync`), and registers the group as in flight. With `insert_now` the
/// group is also inserted and published before the lock is released.
pub(super) fn write_wal(
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
    if db.opts.archives_wals() {
        // Point-in-time restore's records (docs/format/wal.md): when this
        // group was written, and that it is not in the log. The WAL lock
        // orders them with the records around them.
        if let Err(e) = crate::shared::wal_marks::mark_wal(
            db,
            &mut wal,
            first,
            last,
            if any_wal { Logged::Yes } else { Logged::No },
        ) {
            drop(wal);
            let mut st = db.state.lock();
            db.set_bg_error(&mut st, e.clone(), Reason::Wal);
            return Err(e);
        }
    }
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
pub(super) fn publish(db: &DbInner, w: &Written) {
    let mut spins = 0u32;
    while db.visible_seq.load(Ordering::Acquire) != w.first - 1 {
        backoff(&mut spins);
    }
    db.visible_seq.store(w.last, Ordering::Release);
}

/// After the WAL write: leaves the queue (the next leader may start), hands
/// each follower its batch (`batches[i]` belongs to `group[i]`; `group[0]`
/// is the leader), inserts the leader's, waits for the followers, publishes.
pub(super) fn insert_pipelined(
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
