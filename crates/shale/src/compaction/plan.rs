//! What a picker works with: the family's options as the pickers read them
//! ([`PickerOptions`]), the output ranges of running compactions
//! ([`RunningOutput`]) and the picked compaction ([`Plan`]). Shared by the
//! leveled, universal and FIFO pickers and by the runners.

use std::sync::Arc;

use crate::base::SeqNo;
use crate::build::cuts::SstPartitioner;
use crate::events::CompactionReason;
use crate::options::{CompactionStyle, UniversalCompactionOptions};
use crate::version::sizing::LevelSizing;
use crate::version::FileMeta;

/// Options the picker reads (a narrow view of `Options`).
#[derive(Debug, Clone)]
pub(crate) struct PickerOptions {
    pub num_levels: usize,
    pub l0_trigger: usize,
    pub max_bytes_for_level_base: u64,
    pub multiplier: f64,
    pub dynamic: bool,
    pub max_compaction_bytes: u64,
    /// Compression byte of files written to each level (trivial moves need
    /// a match); the last entry applies to deeper levels.
    pub compression_per_level: Vec<u8>,
    /// Compression byte of the bottommost level, when it differs.
    pub bottommost_compression: Option<u8>,
    /// A manual compaction rewrites even a single file of the last level
    /// (RocksDB's `BottommostLevelCompaction::kIfHaveCompactionFilter`,
    /// its default: set when the family has a compaction filter).
    pub rewrite_bottommost: bool,
    /// The clock (Unix seconds): files whose every value expired by then
    /// are compacted on their own. 0: none is.
    pub now: u64,
    /// The oldest live snapshot: a last-level file with tombstones is
    /// rewritten only when none is older than its newest entry (else the
    /// tombstones would stay and the rewrite would repeat).
    pub oldest_snapshot: Option<SeqNo>,
    /// The family's compaction style: which picker runs.
    pub style: CompactionStyle,
    /// Universal compaction's options (`l0_trigger` is its run trigger).
    pub universal: UniversalCompactionOptions,
    /// Forced blob garbage collection: tables referencing blob files
    /// numbered below this are rewritten (0: none; see
    /// `shared::blob_glue::forced_gc_below`).
    pub blob_gc_below: u64,
    /// One past the newest blob file garbage collection relocates from
    /// (`shared::blob_glue::relocated_end`): tables whose oldest blob file is
    /// below it are not moved trivially.
    pub blob_relocate_below: u64,
    /// The family's output partitioner: a file spanning two partitions is
    /// rewritten (cut) rather than moved.
    pub partitioner: Option<SstPartitioner>,
    /// The DB's last level is reserved for files ingested behind
    /// (`allow_ingest_behind`): `num_levels` then counts only the levels
    /// above it, which are all the pickers see, and the last of those is
    /// never rewritten for its tombstones (they stay: data may arrive
    /// beneath them, so the rewrite would repeat forever).
    pub ingest_behind: bool,
}

impl From<&PickerOptions> for LevelSizing {
    fn from(o: &PickerOptions) -> Self {
        LevelSizing {
            num_levels: o.num_levels,
            l0_trigger: o.l0_trigger,
            max_bytes_for_level_base: o.max_bytes_for_level_base,
            multiplier: o.multiplier,
            dynamic: o.dynamic,
        }
    }
}

/// The user-key range a running compaction writes at its output level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunningOutput {
    pub output_level: usize,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

/// What to compact.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub level: usize,
    pub output_level: usize,
    pub inputs: Vec<Arc<FileMeta>>,
    /// Whole levels strictly between `level` and `output_level`, each a
    /// sorted run merged in (universal compaction only; empty otherwise).
    pub middle: Vec<(usize, Vec<Arc<FileMeta>>)>,
    pub output_inputs: Vec<Arc<FileMeta>>,
    /// Files of `output_level + 1` overlapping the plan (outputs are cut
    /// where they would overlap more than `max_compaction_bytes` of them).
    pub grandparents: Vec<Arc<FileMeta>>,
    /// Move the input files by a MANIFEST edit alone.
    pub trivial_move: bool,
    /// Write the outputs uncompressed whatever the level's compression
    /// (universal's `compression_size_percent`).
    pub uncompressed: bool,
    /// No data below the output level overlaps the inputs.
    pub bottommost: bool,
    pub score: f64,
    /// Why the picker chose it: reported to listeners and the LOG.
    pub reason: CompactionReason,
}

impl Plan {
    /// A plan of `inputs` of `level` and `output_inputs` of
    /// `output_level`, picked for `reason`, with nothing else yet (no
    /// middle levels, grandparents, move or score): `finish_plan` fills in
    /// the rest.
    pub(crate) fn new(
        level: usize,
        output_level: usize,
        inputs: Vec<Arc<FileMeta>>,
        output_inputs: Vec<Arc<FileMeta>>,
        reason: CompactionReason,
    ) -> Plan {
        Plan {
            level,
            output_level,
            inputs,
            middle: Vec::new(),
            output_inputs,
            grandparents: Vec::new(),
            trivial_move: false,
            uncompressed: false,
            bottommost: false,
            score: 0.0,
            reason,
        }
    }

    /// Every input file: the input level's, the middle levels', the output
    /// level's.
    pub(crate) fn all_inputs(&self) -> impl Iterator<Item = &Arc<FileMeta>> {
        self.inputs
            .iter()
            .chain(self.middle.iter().flat_map(|(_, f)| f.iter()))
            .chain(self.output_inputs.iter())
    }

    /// The user-key range the plan writes at its output level.
    pub(crate) fn output_range(&self) -> Option<RunningOutput> {
        let (lo, hi) = user_range(self.all_inputs())?;
        Some(RunningOutput {
            output_level: self.output_level,
            smallest: lo,
            largest: hi,
        })
    }
}

/// Smallest and largest user key of `files`.
pub(crate) fn user_range<'a>(
    files: impl Iterator<Item = &'a Arc<FileMeta>>,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut range: Option<(&[u8], &[u8])> = None;
    for f in files {
        let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
        range = Some(match range {
            None => (lo, hi),
            Some((a, b)) => (a.min(lo), b.max(hi)),
        });
    }
    range.map(|(a, b)| (a.to_vec(), b.to_vec()))
}
