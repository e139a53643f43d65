//! Validation and the persisted text of a family's compaction style and
//! its options (the types live in `compaction::style`, re-exported here).
//!
//! Text form (the MANIFEST's and the OPTIONS file's `name=value` lines):
//! a style and each option are written only when they differ from the
//! default, so a leveled family's persisted text is what older builds
//! wrote. `compaction_style` takes RocksDB's names
//! (`kCompactionStyleLevel`, `kCompactionStyleUniversal`,
//! `kCompactionStyleFIFO`); the style options are prefixed as RocksDB
//! prints them (`compaction_options_universal.size_ratio=1`).

use crate::error::{Error, Result};

pub use crate::compaction::style::{
    CompactionStyle, FifoCompactionOptions, UniversalCompactionOptions, UniversalStopStyle,
};

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
