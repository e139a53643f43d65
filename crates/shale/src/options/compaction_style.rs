//! The compaction style of a column family and the options of each style,
//! with RocksDB's names, meanings and defaults: leveled (the default),
//! universal (tiered: sorted runs merged by size ratio and space
//! amplification) and FIFO (the oldest tables dropped past a size or an
//! age).
//!
//! Text form (the MANIFEST's and the OPTIONS file's `name=value` lines):
//! a style and each option are written only when they differ from the
//! default, so a leveled family's persisted text is what older builds
//! wrote. `compaction_style` takes RocksDB's names
//! (`kCompactionStyleLevel`, `kCompactionStyleUniversal`,
//! `kCompactionStyleFIFO`); the style options are prefixed as RocksDB
//! prints them (`compaction_options_universal.size_ratio=1`).

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

/// RocksDB's `CompactionOptionsUniversal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniversalCompactionOptions {
    /// Percentage flexibility when comparing run sizes: a run joins a
    /// merge while it is at most `(100 + size_ratio)%` of the picked
    /// runs' size (see `stop_style`). Default 1.
    pub size_ratio: u32,
    /// Fewest runs a size-ratio merge takes (≥ 2). Default 2.
    pub min_merge_width: u32,
    /// Most runs a size-ratio merge takes (≥ `min_merge_width`). Default
    /// `u32::MAX`.
    pub max_merge_width: u32,
    /// Space amplification (bytes of all runs but the oldest, over the
    /// oldest's, in percent) past which every run is merged into one.
    /// Default 200.
    pub max_size_amplification_percent: u32,
    /// Percentage of the data, newest first, left uncompressed (-1: every
    /// output follows the family's compression). Default -1.
    pub compression_size_percent: i32,
    /// See [`UniversalStopStyle`]. Default `TotalSize`.
    pub stop_style: UniversalStopStyle,
    /// Move runs that do not overlap into the output level without
    /// rewriting them. Default false.
    pub allow_trivial_move: bool,
    /// Space-amplification merges of a large DB run as several smaller
    /// compactions of key ranges of the oldest run (RocksDB's
    /// `incremental`), so they never need the DB's size free at once.
    /// Default false.
    pub incremental: bool,
}

impl Default for UniversalCompactionOptions {
    fn default() -> Self {
        UniversalCompactionOptions {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: u32::MAX,
            max_size_amplification_percent: 200,
            compression_size_percent: -1,
            stop_style: UniversalStopStyle::TotalSize,
            allow_trivial_move: false,
            incremental: false,
        }
    }
}

/// RocksDB's `CompactionOptionsFIFO` (with the family's `ttl`, which only
/// FIFO honours here). A FIFO family keeps every table in L0 (the DB-wide
/// `num_levels` does not matter to it; a family with tables below L0 is
/// refused at open), has no L0 write stalls, and loses its oldest data by
/// design: see `compaction::fifo` and `db::fifo_runner`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FifoCompactionOptions {
    /// Total table bytes past which the oldest tables are dropped (until
    /// the total is at most this). Must be > 0. Default 1 GiB.
    pub max_table_files_size: u64,
    /// Merge small L0 tables into larger ones (RocksDB's intra-L0 FIFO
    /// compaction: at least `level0_file_num_compaction_trigger` of the
    /// newest tables, each about a memtable's size or smaller) so reads
    /// check fewer files, at the cost of rewriting them once. Default
    /// false.
    pub allow_compaction: bool,
    /// Tables whose newest entry is older than this many seconds by the
    /// DB's clock are dropped, oldest first (0: never by age). A table's
    /// age is its `newest_key_time` (MANIFEST sub-field 72: the flush's
    /// time); tables written by builds without it are never dropped by
    /// age. Default 0.
    pub ttl_secs: u64,
}

impl Default for FifoCompactionOptions {
    fn default() -> Self {
        FifoCompactionOptions {
            max_table_files_size: 1 << 30,
            allow_compaction: false,
            ttl_secs: 0,
        }
    }
}

/// Checks the chosen style's options; `InvalidArgument` names the first
/// bad one (`incremental` universal compaction is refused: not built).
pub(crate) fn validate(
    style: CompactionStyle,
    u: &UniversalCompactionOptions,
    f: &FifoCompactionOptions,
) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidArgument(m));
    if u.min_merge_width < 2 {
        return bad(format!(
            "compaction_options_universal.min_merge_width {} < 2",
            u.min_merge_width
        ));
    }
    if u.max_merge_width < u.min_merge_width {
        return bad(format!(
            "compaction_options_universal.max_merge_width {} < min_merge_width {}",
            u.max_merge_width, u.min_merge_width
        ));
    }
    if !(-1..=100).contains(&u.compression_size_percent) {
        return bad(format!(
            "compaction_options_universal.compression_size_percent {} not in [-1, 100]",
            u.compression_size_percent
        ));
    }
    if f.max_table_files_size == 0 {
        return bad("compaction_options_fifo.max_table_files_size must be > 0".into());
    }
    if style == CompactionStyle::Universal && u.incremental {
        return bad(
            "compaction_options_universal.incremental: not supported by this build yet".into(),
        );
    }
    Ok(())
}

/// The `name=value` lines of what differs from the defaults.
pub(crate) fn text_lines(
    style: CompactionStyle,
    u: &UniversalCompactionOptions,
    f: &FifoCompactionOptions,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if style != CompactionStyle::Level {
        out.push(("compaction_style".to_string(), style.name().to_string()));
    }
    let du = UniversalCompactionOptions::default();
    let mut uni = |k: &str, v: String, d: String| {
        if v != d {
            out.push((format!("compaction_options_universal.{k}"), v));
        }
    };
    uni(
        "size_ratio",
        u.size_ratio.to_string(),
        du.size_ratio.to_string(),
    );
    uni(
        "min_merge_width",
        u.min_merge_width.to_string(),
        du.min_merge_width.to_string(),
    );
    uni(
        "max_merge_width",
        u.max_merge_width.to_string(),
        du.max_merge_width.to_string(),
    );
    uni(
        "max_size_amplification_percent",
        u.max_size_amplification_percent.to_string(),
        du.max_size_amplification_percent.to_string(),
    );
    uni(
        "compression_size_percent",
        u.compression_size_percent.to_string(),
        du.compression_size_percent.to_string(),
    );
    uni(
        "stop_style",
        u.stop_style.name().to_string(),
        du.stop_style.name().to_string(),
    );
    uni(
        "allow_trivial_move",
        u.allow_trivial_move.to_string(),
        du.allow_trivial_move.to_string(),
    );
    uni(
        "incremental",
        u.incremental.to_string(),
        du.incremental.to_string(),
    );
    let df = FifoCompactionOptions::default();
    let mut fifo = |k: &str, v: String, d: String| {
        if v != d {
            out.push((format!("compaction_options_fifo.{k}"), v));
        }
    };
    fifo(
        "max_table_files_size",
        f.max_table_files_size.to_string(),
        df.max_table_files_size.to_string(),
    );
    fifo(
        "allow_compaction",
        f.allow_compaction.to_string(),
        df.allow_compaction.to_string(),
    );
    fifo("ttl", f.ttl_secs.to_string(), df.ttl_secs.to_string());
    out
}

/// Sets the option `key` (a name `text_lines` writes) from `value`:
/// `Ok(false)` when `key` is not a compaction-style option.
pub(crate) fn parse_line(
    key: &str,
    value: &str,
    style: &mut CompactionStyle,
    universal: &mut UniversalCompactionOptions,
    fifo: &mut FifoCompactionOptions,
) -> Result<bool> {
    let bad = || Error::InvalidArgument(format!("option {key}: bad value {value:?}"));
    fn num<T: std::str::FromStr>(v: &str, bad: impl Fn() -> Error) -> Result<T> {
        v.parse().map_err(|_| bad())
    }
    match key {
        "compaction_style" => *style = CompactionStyle::parse(value)?,
        "compaction_options_universal.size_ratio" => universal.size_ratio = num(value, bad)?,
        "compaction_options_universal.min_merge_width" => {
            universal.min_merge_width = num(value, bad)?
        }
        "compaction_options_universal.max_merge_width" => {
            universal.max_merge_width = num(value, bad)?
        }
        "compaction_options_universal.max_size_amplification_percent" => {
            universal.max_size_amplification_percent = num(value, bad)?
        }
        "compaction_options_universal.compression_size_percent" => {
            universal.compression_size_percent = num(value, bad)?
        }
        "compaction_options_universal.stop_style" => {
            universal.stop_style = UniversalStopStyle::parse(value)?
        }
        "compaction_options_universal.allow_trivial_move" => {
            universal.allow_trivial_move = num(value, bad)?
        }
        "compaction_options_universal.incremental" => universal.incremental = num(value, bad)?,
        "compaction_options_fifo.max_table_files_size" => {
            fifo.max_table_files_size = num(value, bad)?
        }
        "compaction_options_fifo.allow_compaction" => fifo.allow_compaction = num(value, bad)?,
        "compaction_options_fifo.ttl" => fifo.ttl_secs = num(value, bad)?,
        _ => return Ok(false),
    }
    Ok(true)
}
