//! Group commit: `write` queues the request (or, when nothing is gained
//! by a group, writes alone: `write_unqueued`); the request at the head
//! leads a group (`lead`): makes room, takes the requests behind it,
//! writes the WAL and has the group insert and publish (`publish.rs`).

use crate::base::ValueKind;
use crate::batch::{Owner, WriteBatch};
use crate::error::{Error, Result};
use crate::options::WriteOptions;
use crate::shared::DbInner;
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::insert::{insert_batch, MemRouter, SPIN_WAIT};
use super::publish::{flush_wal, insert_pipelined, publish, write_wal};
use super::queue::{return_scratch, return_slot, take_slot, Slot, WriteQueue};
use super::room::make_room;

const MAX_GROUP_BYTES: usize = 1 << 20;

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
    if let Some(why) = batch.refused() {
        return Err(Error::InvalidArgument(why.to_string()));
    }
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
