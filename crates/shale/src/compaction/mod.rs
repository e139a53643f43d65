//! Compaction: choosing what to compact and running it.
//!
//! Choosing (pure functions of a `Version` and the family's options): the
//! leveled picker (`picker`, ranking levels by `version::sizing`), the
//! universal one (`universal`, with `universal_incremental`'s key-range
//! slices of its space-amplification merges), FIFO's (`fifo`: whole tables
//! dropped by size or age, small newest L0 tables merged), and the removal
//! of files wholly under range tombstones (`delete_only`).
//!
//! What the pickers share: `plan` (`PickerOptions`, `Plan`) and
//! `sorted_runs`.
//!
//! Running: one planned compaction as a computation (`job`: inputs →
//! outputs through `build/`, edit, statistics), split into key ranges run
//! in parallel (`subcompaction`, `execute`); `runner` runs plans against
//! the DB's state (marks inputs under the DB mutex, writes outside it,
//! logs the edit, installs), `fifo_runner` runs FIFO's drops, and
//! `schedule` answers the scheduler (`bg/`): is a compaction due, which
//! one, and manual compactions of a range.

pub(crate) mod delete_only;
pub(crate) mod execute;
pub(crate) mod fifo;
pub(crate) mod fifo_runner;
pub(crate) mod job;
pub(crate) mod picker;
pub(crate) mod plan;
pub(crate) mod runner;
pub(crate) mod schedule;
pub(crate) mod sorted_runs;
pub(crate) mod subcompaction;
pub(crate) mod universal;
pub(crate) mod universal_incremental;

use crate::options::CompactionStyle;
use crate::version::Version;

use plan::{PickerOptions, Plan, RunningOutput};

/// The most urgent runnable compaction of `v` under the family's style.
pub(crate) fn pick_for_style(
    v: &Version,
    o: &PickerOptions,
    running: &[RunningOutput],
    cursors: &mut [usize],
) -> Option<Plan> {
    match o.style {
        CompactionStyle::Universal => universal::pick(v, o),
        _ => picker::pick(v, o, running, cursors),
    }
}
