//! The compaction styles and their option types, with RocksDB's names,
//! meanings and defaults: leveled (the default), universal (tiered: sorted
//! runs merged by size ratio and space amplification) and FIFO (the oldest
//! tables dropped past a size or an age). Plain data: the pickers
//! (`compaction::picker`, `compaction::universal`, `compaction::fifo`) read
//! them; `options` re-exports them and validates and persists them
//! (`options/compaction_style.rs`).

use crate::base::declare::declare_options;
use crate::error::{Error, Result};

/// How a family's tables are compacted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStyle {
    /// Leveled: each level past L0 is one sorted run ~`multiplier` times
    /// larger than the one above (RocksDB's `kCompactionStyleLevel`).
    #[default]
    Level,
    /// Tiered: sorted runs (L0 tables and whole levels) merged when their
    /// sizes are similar or space amplification grows too large (RocksDB's
    /// `kCompactionStyleUniversal`).
    Universal,
    /// First in, first out: every table stays in L0 and the oldest are
    /// dropped past a total size or an age (RocksDB's `kCompactionStyleFIFO`).
    Fifo,
}

impl CompactionStyle {
    /// RocksDB's name of the style.
    pub fn name(self) -> &'static str {
        match self {
            CompactionStyle::Level => "kCompactionStyleLevel",
            CompactionStyle::Universal => "kCompactionStyleUniversal",
            CompactionStyle::Fifo => "kCompactionStyleFIFO",
        }
    }

    /// Parses RocksDB's name (or `level`, `universal`, `fifo`).
    pub fn parse(s: &str) -> Result<CompactionStyle> {
        match s {
            "kCompactionStyleLevel" | "level" => Ok(CompactionStyle::Level),
            "kCompactionStyleUniversal" | "universal" => Ok(CompactionStyle::Universal),
            "kCompactionStyleFIFO" | "fifo" => Ok(CompactionStyle::Fifo),
            _ => Err(Error::InvalidArgument(format!(
                "compaction_style {s:?}: expected kCompactionStyleLevel, \
                 kCompactionStyleUniversal or kCompactionStyleFIFO"
            ))),
        }
    }
}

/// When universal compaction stops adding runs to a size-ratio merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UniversalStopStyle {
    /// Stop at a run larger than the previous run (not the sum) by more
    /// than `size_ratio` percent (`kCompactionStopStyleSimilarSize`).
    SimilarSize,
    /// Stop at a run larger than the sum of the runs picked so far by more
    /// than `size_ratio` percent (`kCompactionStopStyleTotalSize`, the
    /// default).
    #[default]
    TotalSize,
}

impl UniversalStopStyle {
    /// RocksDB's name.
    pub fn name(self) -> &'static str {
        match self {
            UniversalStopStyle::SimilarSize => "kCompactionStopStyleSimilarSize",
            UniversalStopStyle::TotalSize => "kCompactionStopStyleTotalSize",
        }
    }

    /// Parses RocksDB's name.
    pub fn parse(s: &str) -> Result<UniversalStopStyle> {
        match s {
            "kCompactionStopStyleSimilarSize" => Ok(UniversalStopStyle::SimilarSize),
            "kCompactionStopStyleTotalSize" => Ok(UniversalStopStyle::TotalSize),
            _ => Err(Error::InvalidArgument(format!(
                "compaction_options_universal.stop_style {s:?}"
            ))),
        }
    }
}

declare_options! {
    /// RocksDB's `CompactionOptionsUniversal`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct UniversalCompactionOptions;
    {
        /// Percentage flexibility when comparing run sizes: a run joins a
        /// merge while it is at most `(100 + size_ratio)%` of the picked
        /// runs' size (see `stop_style`). Default 1.
        size_ratio / SizeRatio: u32 = 1, mutable sparse Cf "size_ratio";
        /// Fewest runs a size-ratio merge takes (≥ 2). Default 2.
        min_merge_width / MinMergeWidth: u32 = 2, mutable sparse Cf "min_merge_width",
            check(v) *v < 2 => format!("compaction_options_universal.min_merge_width {v} < 2");
        /// Most runs a size-ratio merge takes (≥ `min_merge_width`). Default
        /// `u32::MAX`.
        max_merge_width / MaxMergeWidth: u32 = u32::MAX, mutable sparse Cf "max_merge_width";
        /// Space amplification (bytes of all runs but the oldest, over the
        /// oldest's, in percent) past which every run is merged into one.
        /// Default 200.
        max_size_amplification_percent / MaxSizeAmplificationPercent: u32 = 200,
            mutable sparse Cf "max_size_amplification_percent";
        /// Percentage of the data, newest first, left uncompressed (-1: every
        /// output follows the family's compression). Default -1.
        compression_size_percent / CompressionSizePercent: i32 = -1,
            mutable sparse Cf "compression_size_percent",
            check(v) !(-1..=100).contains(v) => format!(
                "compaction_options_universal.compression_size_percent {v} not in [-1, 100]"
            );
        /// See [`UniversalStopStyle`]. Default `TotalSize`.
        stop_style / StopStyle: UniversalStopStyle = UniversalStopStyle::TotalSize,
            mutable sparse Cf "stop_style";
        /// Move runs that do not overlap into the output level without
        /// rewriting them. Default false.
        allow_trivial_move / AllowTrivialMove: bool = false, mutable sparse Cf "allow_trivial_move";
        /// Space-amplification merges run as key-range slices (RocksDB's
        /// `incremental`): instead of merging every run into the last level at
        /// once, which needs up to the DB's size free until it ends, each pick
        /// merges a window of files of the second-oldest run (a level ≥ 1) with
        /// the files of the oldest run they overlap, at most about
        /// `max_compaction_bytes`, the window rewriting the fewest old bytes
        /// per new byte. Merges of newer runs cut their outputs in line with
        /// the files of the level below (at most 1.5 target files of it each),
        /// so slices stay cheap. Where no slice pays (the second-oldest run is
        /// an L0 file, or holds too little of the newer data), the newer runs
        /// first merge into the level above the oldest (RocksDB would merge
        /// everything); a full merge still runs when that level is the only
        /// newer run. Costs more write-amp (boundary files rewritten, newer
        /// data merged twice) and smaller files above the last level. Needs
        /// `num_levels` ≥ 3 (refused otherwise). Slices are whole files of the
        /// last level, cut at `target_file_size_base ×
        /// target_file_size_multiplier^(level − 1)`: with a multiplier above 1
        /// the last level's files grow large and each slice with them (keep
        /// the default 1). `compact_range` still merges everything. See
        /// `compaction::universal_incremental`. Default false.
        incremental / Incremental: bool = false, mutable sparse Cf "incremental";
    }
}

declare_options! {
    /// RocksDB's `CompactionOptionsFIFO` (with the family's `ttl`, which only
    /// FIFO honours here). A FIFO family keeps every table in L0 (the DB-wide
    /// `num_levels` does not matter to it; a family with tables below L0 is
    /// refused at open), has no L0 write stalls, and loses its oldest data by
    /// design: see `compaction::fifo` and `compaction::fifo_runner`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct FifoCompactionOptions;
    {
        /// Total table bytes past which the oldest tables are dropped (until
        /// the total is at most this). Must be > 0. Default 1 GiB.
        max_table_files_size / MaxTableFilesSize: u64 = 1 << 30,
            mutable sparse Cf "max_table_files_size",
            check(v) *v == 0 => "compaction_options_fifo.max_table_files_size must be > 0".into();
        /// Merge small L0 tables into larger ones (RocksDB's intra-L0 FIFO
        /// compaction: at least `level0_file_num_compaction_trigger` of the
        /// newest tables, each about a memtable's size or smaller) so reads
        /// check fewer files, at the cost of rewriting them once. Default
        /// false.
        allow_compaction / AllowCompaction: bool = false, mutable sparse Cf "allow_compaction";
        /// Tables whose newest entry is older than this many seconds by the
        /// DB's clock are dropped, oldest first (0: never by age). A table's
        /// age is its `newest_key_time` (MANIFEST sub-field 72: the flush's
        /// time); tables written by builds without it are never dropped by
        /// age. Default 0.
        ttl_secs / TtlSecs: u64 = 0, mutable sparse Cf "ttl";
    }
}
