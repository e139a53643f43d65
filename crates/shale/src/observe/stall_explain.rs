//! "Why is it slow": each write slowdown or stop in force now, explained in
//! words with its cause, the value measured, the threshold and the option
//! that sets it, and what to consider changing.
//!
//! The conditions are the ones the write path applies (`make_room` in
//! `db/write/room.rs` and `shared::stall::stall_condition`), re-read from the same state without
//! changing it:
//! - a family's LSM shape: L0 files against `level0_slowdown_writes_trigger`
//!   / `level0_stop_writes_trigger`, pending compaction bytes against the
//!   soft / hard limits (the condition installed with its current version);
//! - a family with `max_write_buffer_number` memtables whose active one is
//!   full (or waits for a switch): writers wait for its flush;
//! - the live WALs past `max_total_wal_size` plus half a write buffer with
//!   the flushes that free them asked for: writers wait;
//! - the memtables at twice `db_write_buffer_size` (or their part of
//!   `memory_budget`) while flushes run;
//! - an outstanding background error that refuses writes.
//!
//! Requires the DB mutex (the caller passes the guarded state); takes the
//! WAL lock briefly (for the current WAL's size), as the write path does.

use crate::memory::Part;
use crate::stats::report::{StallExplanation, StallReason, StallState};
use crate::stats::{StallCause, StallCondition};
use crate::version::sizing;

use crate::compaction::runner::picker_options;
use crate::shared::stall::l0_compaction_running;
use crate::shared::{DbInner, DbState};

/// The stalls in force now, families' first (by id), then the DB-wide ones.
pub(crate) fn explain(db: &DbInner, st: &DbState) -> Vec<StallExplanation> {
    let mut out = Vec::new();
    let l0_running = l0_compaction_running(db);
    for (&id, c) in &st.cfs {
        let o = &c.cf.opts();
        let name = &c.cf.name;
        let v = st.versions.current(id);
        let (state, cause) = match c.stall {
            StallCondition::Normal => (StallState::Normal, None),
            StallCondition::Delayed(cause) => (StallState::Delayed, Some(cause)),
            StallCondition::Stopped(cause) => (StallState::Stopped, Some(cause)),
        };
        let verb = if state == StallState::Stopped {
            "writes stopped"
        } else {
            "writes delayed"
        };
        let compacting = if l0_running {
            "an L0->L1 compaction is running"
        } else if st.compactions_running > 0 {
            "compactions are running, none from L0"
        } else {
            "no compaction is running"
        };
        match cause {
            None => {}
            Some(cause @ (StallCause::L0Slowdown | StallCause::L0Stop)) => {
                let stop = cause == StallCause::L0Stop;
                let (reason, threshold, option) = if stop {
                    (
                        StallReason::L0Stop,
                        o.level0_stop_writes_trigger,
                        "level0_stop_writes_trigger",
                    )
                } else {
                    (
                        StallReason::L0Slowdown,
                        o.level0_slowdown_writes_trigger,
                        "level0_slowdown_writes_trigger",
                    )
                };
                // A universal family counts sorted runs (L0 files and
                // non-empty levels) against the same triggers.
                let universal = o.compaction_style == crate::options::CompactionStyle::Universal;
                let (files, what) = if universal {
                    (
                        crate::compaction::universal::num_sorted_runs(&v),
                        "sorted runs",
                    )
                } else {
                    (v.num_files(0), "L0 files")
                };
                out.push(StallExplanation {
                    family: Some(name.clone()),
                    reason,
                    state,
                    value: Some(files as u64),
                    threshold: Some(threshold as u64),
                    option: Some(option),
                    message: format!(
                        "{verb} in column family '{name}': {files} {what} >= {option} {threshold}; {compacting}; L0 is flushed faster than it is compacted: consider more max_background_jobs (now {}), a larger write_buffer_size (fewer, larger L0 files) or a higher {option}",
                        db.mutable.max_background_jobs()
                    ),
                });
            }
            Some(cause @ (StallCause::PendingSlowdown | StallCause::PendingStop)) => {
                let stop = cause == StallCause::PendingStop;
                let (reason, threshold, option) = if stop {
                    (
                        StallReason::PendingCompactionStop,
                        o.hard_pending_compaction_bytes_limit,
                        "hard_pending_compaction_bytes_limit",
                    )
                } else {
                    (
                        StallReason::PendingCompactionSlowdown,
                        o.soft_pending_compaction_bytes_limit,
                        "soft_pending_compaction_bytes_limit",
                    )
                };
                let pending = sizing::pending_compaction_bytes(
                    &v,
                    &picker_options(o, st.versions.num_levels()),
                );
                out.push(StallExplanation {
                    family: Some(name.clone()),
                    reason,
                    state,
                    value: Some(pending),
                    threshold: Some(threshold),
                    option: Some(option),
                    message: format!(
                        "{verb} in column family '{name}': {pending} bytes of pending compaction >= {option} {threshold}; {} compactions running; compaction is behind the write rate: consider more max_background_jobs (now {}) or a higher {option}",
                        st.compactions_running, db.mutable.max_background_jobs()
                    ),
                });
            }
            // Never the condition of a version: the memtable stop is below.
            Some(StallCause::MemtableStop) => {}
        }
        let mem_full = c.mem.num_entries() > 0
            && (st.pending_switch.contains(&id)
                || c.mem.approximate_memory_usage() >= o.write_buffer_size);
        if mem_full && c.imm.len() + 1 >= o.max_write_buffer_number {
            let count = c.imm.len() + 1;
            out.push(StallExplanation {
                family: Some(name.clone()),
                reason: StallReason::MemtableLimit,
                state: StallState::Stopped,
                value: Some(count as u64),
                threshold: Some(o.max_write_buffer_number as u64),
                option: Some("max_write_buffer_number"),
                message: format!(
                    "writes stopped in column family '{name}': {count} memtables >= max_write_buffer_number {} and the active one is full; {}; writers wait for a flush: consider a higher max_write_buffer_number, more max_background_jobs (now {}) or faster storage for flushes",
                    o.max_write_buffer_number,
                    if c.flush_running { "its flush is running" } else { "no flush of it is running yet" },
                    db.mutable.max_background_jobs()
                ),
            });
        }
    }
    if let Some(&(oldest, _)) = st.closed_wals.front() {
        let limit = match db.mutable.max_total_wal_size() {
            0 => st.sum_write_buffers.saturating_mul(4),
            n => n,
        };
        let slack = st
            .cfs
            .values()
            .map(|c| c.cf.opts().write_buffer_size as u64)
            .max()
            .unwrap_or(0);
        let total = db.live_wal_bytes(st);
        if st.wal_flush_requested >= oldest && total > limit.saturating_add(slack / 2) {
            out.push(StallExplanation {
                family: None,
                reason: StallReason::WalSize,
                state: StallState::Stopped,
                value: Some(total),
                threshold: Some(limit),
                option: Some("max_total_wal_size"),
                message: format!(
                    "writes stopped: the live WALs hold {total} bytes > max_total_wal_size {limit} (plus half a write buffer) and the flushes that free WAL {oldest} have not finished; writers wait for them: consider a larger max_total_wal_size or more max_background_jobs (now {})",
                    db.mutable.max_background_jobs()
                ),
            });
        }
    }
    let stop = crate::shared::memtables::memtable_stop(db);
    let mem = db.memory.get(Part::Memtables);
    if stop > 0 && mem >= stop && st.any_flush_work() {
        let budget = db.opts.db_write_buffer_size;
        let (option, message) = if db.memory.limit() == 0 {
            (
                "db_write_buffer_size",
                format!(
                    "writes stopped: memtables use {mem} bytes >= twice db_write_buffer_size {budget} while {} flushes run; writers wait for them to free memory: consider a larger db_write_buffer_size or more max_background_jobs (now {})",
                    st.flushes_running, db.mutable.max_background_jobs()
                ),
            )
        } else {
            (
                "memory_budget",
                format!(
                    "writes stopped: memtables use {mem} bytes >= {stop}, their part of memory_budget {} (table readers {} and buffers {} bytes take the rest), while {} flushes run; writers wait for them to free memory: consider a larger memory_budget, a smaller db_write_buffer_size (now {budget}) or more max_background_jobs (now {})",
                    db.memory.limit(),
                    db.memory.get(Part::TableReaders),
                    db.memory.get(Part::Buffers),
                    st.flushes_running,
                    db.mutable.max_background_jobs()
                ),
            )
        };
        out.push(StallExplanation {
            family: None,
            reason: StallReason::WriteBufferMemory,
            state: StallState::Stopped,
            value: Some(mem as u64),
            threshold: Some(stop as u64),
            option: Some(option),
            message,
        });
    }
    if let Some(e) = st.errors.write_error() {
        let cause = st
            .errors
            .current
            .as_ref()
            .map_or_else(|| e.to_string(), |b| b.error.to_string());
        out.push(StallExplanation {
            family: None,
            reason: StallReason::BackgroundError,
            state: StallState::Stopped,
            value: None,
            threshold: None,
            option: None,
            message: format!(
                "writes stopped: background error ({cause}); {}",
                if st.errors.recovery_pending() {
                    "an automatic resume is scheduled (max_bgerror_resume_count)"
                } else {
                    "fix the cause, then call Db::resume (or reopen the DB if the error is fatal)"
                }
            ),
        });
    }
    out
}
