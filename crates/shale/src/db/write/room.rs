//! Room for a write group: the leader switches full memtables and applies
//! write stalls (slowdown and stop by the families' LSM shapes, the memory
//! the memtables may use, `max_total_wal_size`) before it writes
//! (`make_room`), on a fast path that skips the DB mutex while nothing
//! changed (`room_is_clear`).

use crate::error::{Error, Result};
use crate::memory::Part;
use crate::shared::memtables::{memtable_budget, memtable_stop, switch_memtable};
use crate::shared::{DbInner, DbState};
use parking_lot::MutexGuard;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
pub(super) fn make_room(db: &Arc<DbInner>) -> Result<()> {
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
                db.wake_bg(&mut st);
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
pub(super) fn wait_for_flushes(
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
    db.wake_bg(st);
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
pub(super) fn room_is_clear(db: &DbInner) -> bool {
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
pub(super) fn limit_wal_size(db: &Arc<DbInner>, st: &mut DbState) -> Result<bool> {
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
    db.wake_bg(st);
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
pub(super) fn limit_memtable_memory(db: &Arc<DbInner>, st: &mut DbState) -> Result<()> {
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
