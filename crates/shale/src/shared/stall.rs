//! Installing a family's new super version, and what depends on its
//! version: when writes must slow down or stop. A family's stall condition from its
//! LSM shape (L0 files or sorted runs, the pending-compaction estimate)
//! under its options, computed once per installed version
//! (`DbInner::refresh_stall`); the write path applies it
//! (`db/write/room.rs`), and `observe::stall_explain` explains it.

use std::sync::atomic::Ordering;

use crate::options::CfOptions;
use crate::stats::StallCondition;
use crate::version::Version;

use super::{DbInner, DbState};

/// The stall condition of a family's LSM shape `v` under its options
/// (computed once per version, when it is installed: it scans every level).
pub(crate) fn stall_condition(
    o: &CfOptions,
    v: &Version,
    num_levels: usize,
) -> crate::stats::StallCondition {
    use crate::stats::{StallCause, StallCondition};
    if o.compaction_style == crate::options::CompactionStyle::Fifo || o.disable_auto_compactions {
        // RocksDB's sanitizing: no L0 or pending-bytes stall under FIFO
        // (see `compaction::fifo_runner`); and none without automatic compactions,
        // which would never lift it (RocksDB's
        // `GetWriteStallConditionAndCause`).
        return StallCondition::Normal;
    }
    let universal = o.compaction_style == crate::options::CompactionStyle::Universal;
    // A universal family counts sorted runs where a leveled one counts L0
    // files (RocksDB's `l0_delay_trigger_count`), and has no pending-bytes
    // estimate (RocksDB computes it for leveled compaction only).
    let l0 = if universal {
        crate::version::sizing::num_sorted_runs(v)
    } else {
        v.num_files(0)
    };
    let pending = if !universal
        && (o.soft_pending_compaction_bytes_limit > 0 || o.hard_pending_compaction_bytes_limit > 0)
    {
        crate::version::sizing::pending_compaction_bytes(v, o.level_sizing(num_levels))
    } else {
        0
    };
    let hard = o.hard_pending_compaction_bytes_limit;
    let soft = o.soft_pending_compaction_bytes_limit;
    if l0 >= o.level0_stop_writes_trigger {
        StallCondition::Stopped(StallCause::L0Stop)
    } else if hard > 0 && pending >= hard {
        StallCondition::Stopped(StallCause::PendingStop)
    } else if l0 >= o.level0_slowdown_writes_trigger {
        StallCondition::Delayed(StallCause::L0Slowdown)
    } else if soft > 0 && pending >= soft {
        StallCondition::Delayed(StallCause::PendingSlowdown)
    } else {
        StallCondition::Normal
    }
}

/// True when an L0 compaction is running (for the `_with_compaction` stall
/// counts).
pub(crate) fn l0_compaction_running(db: &DbInner) -> bool {
    db.stats.running.lock().iter().any(|j| j.input_level == 0)
}

impl DbInner {
    /// Publishes a new super version of family `cf` from `state`, and
    /// refreshes what depends on its version: its stall condition (counted
    /// once per version that causes one) and its place in the compaction
    /// queue. Requires the DB mutex (the caller passes the guarded state).
    pub(crate) fn install_super_version(&self, state: &mut DbState, cf: u32) {
        let version = state.versions.current(cf);
        let Some(c) = state.cfs.get_mut(&cf) else {
            return;
        };
        c.install_super_version(std::sync::Arc::clone(&version));
        self.refresh_stall(state, cf, true);
    }

    /// Recomputes family `cf`'s stall condition from its current version
    /// and options, and queues it for the compaction picker; a stall is
    /// counted in the stats when `count` (once per version that causes it:
    /// not again when only the options changed). Requires the DB mutex.
    pub(crate) fn refresh_stall(&self, state: &mut DbState, cf: u32, count: bool) {
        let version = state.versions.current(cf);
        let Some(c) = state.cfs.get_mut(&cf) else {
            return;
        };
        let cond = stall_condition(&c.cf.opts(), &version, state.versions.num_levels());
        let prev = std::mem::replace(&mut c.stall, cond);
        super::events::stall_changed(self, cf, &c.cf.name, prev, cond);
        match cond {
            StallCondition::Normal => {
                state.stalled.remove(&cf);
            }
            StallCondition::Stopped(cause) | StallCondition::Delayed(cause) => {
                self.room_clear.store(false, Ordering::SeqCst);
                if count {
                    let l0_busy = l0_compaction_running(self);
                    self.stats.count_stall(cause, l0_busy);
                }
                state.stalled.insert(cf, cond);
            }
        }
        state.compaction_queue.insert(cf);
    }
}
