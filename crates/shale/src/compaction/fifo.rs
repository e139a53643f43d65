//! The FIFO compaction picker (RocksDB's `FIFOCompactionPicker`): a pure
//! function of a family's version, its FIFO options, the clock and the
//! family's running jobs that returns a plan (or nothing). It does no IO.
//!
//! Every table of a FIFO family lives in L0 (flushes write there, nothing
//! moves deeper). In order of precedence, as RocksDB:
//! 1. **TTL** (`ttl_secs > 0`): from the oldest table on, every table whose
//!    `newest_key_time` is older than `now - ttl_secs` is dropped; the scan
//!    stops at the first younger table or one of unknown time (0), so only
//!    a suffix of L0 (its oldest tables) ever goes.
//! 2. **Size**: while the total table size exceeds `max_table_files_size`,
//!    the oldest tables are dropped until it no longer does.
//! 3. **Intra-L0** (`allow_compaction`, nothing to drop): the newest run of
//!    small tables (RocksDB's `FindIntraL0Compaction` with
//!    `max_compact_bytes_per_del_file = 1.1 × write_buffer_size`: at least
//!    `level0_file_num_compaction_trigger` tables, at most
//!    `max_compaction_bytes` in all, the bytes per file removed staying under
//!    that bound) merges into one L0 table, so reads check fewer tables.
//!
//! Drops are MANIFEST edits that delete whole tables (no IO on data);
//! readers holding an older version keep reading them until released.
//!
//! Invariants: a drop is always a suffix of L0 (its oldest tables), so the
//! family's data after it is exactly the writes newer than the dropped
//! tables' newest sequence number (L0 tables of one family hold disjoint,
//! ordered sequence ranges: flushes install in order and intra-L0 merges a
//! prefix, the newest tables). An intra-L0 plan takes the newest tables,
//! so its output stays the newest. One FIFO job runs at a time per family
//! (RocksDB's rule: "no need to run parallel compactions since they are
//! very fast"): nothing is picked while `running` is not empty or any L0
//! table is being compacted.
//!
//! Requires: the family has no table below L0 (the DB refuses to open a
//! FIFO family that has some, see `db::open`).

use std::sync::Arc;

use super::picker::{Plan, RunningOutput};
use crate::events::CompactionReason;
use crate::version::{FileMeta, Version};

/// The options the FIFO picker reads (a narrow view of `CfOptions`).
#[derive(Debug, Clone)]
pub(crate) struct FifoPickerOptions {
    /// `compaction_options_fifo.max_table_files_size`.
    pub max_table_files_size: u64,
    /// `compaction_options_fifo.allow_compaction`.
    pub allow_compaction: bool,
    /// `compaction_options_fifo.ttl` (0: never by age).
    pub ttl_secs: u64,
    /// Fewest tables an intra-L0 merge takes
    /// (`level0_file_num_compaction_trigger`, at least 2).
    pub min_merge_files: usize,
    /// Most bytes an intra-L0 merge reads (`max_compaction_bytes`).
    pub max_compaction_bytes: u64,
    /// Bound on the bytes per table removed by an intra-L0 merge (1.1 ×
    /// `write_buffer_size`, RocksDB's).
    pub max_bytes_per_removed_file: u64,
    /// The clock, Unix seconds.
    pub now: u64,
}

/// Why FIFO drops tables (RocksDB's `kFIFOTtl`, `kFIFOMaxSize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DropReason {
    /// Their newest entry is older than `ttl_secs`.
    Ttl,
    /// The family's tables exceed `max_table_files_size`.
    MaxSize,
}

impl DropReason {
    /// The compaction reason reported for the drop.
    pub(crate) fn compaction_reason(self) -> CompactionReason {
        match self {
            DropReason::Ttl => CompactionReason::FifoTtl,
            DropReason::MaxSize => CompactionReason::FifoMaxSize,
        }
    }

    /// The name written to the LOG.
    pub(crate) fn name(self) -> &'static str {
        match self {
            DropReason::Ttl => "ttl",
            DropReason::MaxSize => "max_table_files_size",
        }
    }
}

/// What FIFO compaction does next in a family.
#[derive(Debug, Clone)]
pub(crate) enum FifoPlan {
    /// Delete these L0 tables by a MANIFEST edit (oldest last, as in L0).
    Drop {
        files: Vec<Arc<FileMeta>>,
        reason: DropReason,
    },
    /// Merge the newest L0 tables into one (run as a compaction job).
    IntraL0(Plan),
}

/// The next FIFO step in a family whose version is `v` (see the module
/// comment), or nothing.
pub(crate) fn pick(
    v: &Version,
    o: &FifoPickerOptions,
    running: &[RunningOutput],
) -> Option<FifoPlan> {
    let files = v.files(0);
    if !running.is_empty() || files.iter().any(|f| f.is_being_compacted()) {
        return None;
    }
    if let Some(plan) = pick_ttl(files, o) {
        return Some(plan);
    }
    if let Some(plan) = pick_size(files, o) {
        return Some(plan);
    }
    if o.allow_compaction {
        return pick_intra_l0(files, o).map(FifoPlan::IntraL0);
    }
    None
}

/// The oldest tables whose newest entry is older than the TTL.
fn pick_ttl(files: &[Arc<FileMeta>], o: &FifoPickerOptions) -> Option<FifoPlan> {
    if o.ttl_secs == 0 || o.now < o.ttl_secs {
        return None;
    }
    let cutoff = o.now - o.ttl_secs;
    let mut out: Vec<Arc<FileMeta>> = files
        .iter()
        .rev()
        .take_while(|f| f.newest_key_time != 0 && f.newest_key_time < cutoff)
        .cloned()
        .collect();
    if out.is_empty() {
        return None;
    }
    out.reverse();
    Some(FifoPlan::Drop {
        files: out,
        reason: DropReason::Ttl,
    })
}

/// The oldest tables to drop for the total to fit the size cap.
fn pick_size(files: &[Arc<FileMeta>], o: &FifoPickerOptions) -> Option<FifoPlan> {
    let mut total: u64 = files.iter().map(|f| f.file_size).sum();
    if total <= o.max_table_files_size {
        return None;
    }
    let mut out = Vec::new();
    for f in files.iter().rev() {
        if total <= o.max_table_files_size {
            break;
        }
        total -= f.file_size;
        out.push(Arc::clone(f));
    }
    out.reverse();
    Some(FifoPlan::Drop {
        files: out,
        reason: DropReason::MaxSize,
    })
}

/// The newest run of small tables to merge into one, RocksDB's
/// `FindIntraL0Compaction`: from the newest L0 table on, tables are added
/// while the bytes per removed table do not grow and the total stays
/// within `max_compaction_bytes`; the run merges when it has at least
/// `min_merge_files` tables and, at its end, fewer than
/// `max_bytes_per_removed_file` bytes per removed table. So tables of about
/// a memtable's size merge once enough of them sit together (the limit
/// applies to the whole run, not to its first pair), and a big merged
/// table is not merged again until enough small ones sit on top of it
/// (adding it would make the bytes per removed table grow).
fn pick_intra_l0(files: &[Arc<FileMeta>], o: &FifoPickerOptions) -> Option<Plan> {
    let min = o.min_merge_files.max(2);
    let first = files.first()?;
    if first.file_size > o.max_compaction_bytes {
        return None;
    }
    let mut bytes = first.file_size;
    let mut per_removed = u64::MAX;
    let mut take = 1;
    for f in &files[1..] {
        let total = bytes + f.file_size;
        let per = total / take as u64;
        if per > per_removed || total > o.max_compaction_bytes {
            break;
        }
        bytes = total;
        per_removed = per;
        take += 1;
    }
    if take < min || per_removed >= o.max_bytes_per_removed_file {
        return None;
    }
    Some(Plan {
        score: take as f64 / min as f64,
        ..Plan::new(
            0,
            0,
            files[..take].to_vec(),
            Vec::new(),
            CompactionReason::FifoReduceNumFiles,
        )
    })
}

#[cfg(test)]
mod tests;
