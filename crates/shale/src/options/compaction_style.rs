//! Validation and the persisted text of a family's compaction style and
//! its options (the types live in `compaction_types.rs`, re-exported here).
//!
//! Text form (the MANIFEST's and the OPTIONS file's `name=value` lines):
//! a style and each option are written only when they differ from the
//! default, so a leveled family's persisted text is what older builds
//! wrote. `compaction_style` takes RocksDB's names
//! (`kCompactionStyleLevel`, `kCompactionStyleUniversal`,
//! `kCompactionStyleFIFO`); the style options are prefixed as RocksDB
//! prints them (`compaction_options_universal.size_ratio=1`).

use crate::error::{Error, Result};

use super::text_value::TextValue;

pub use super::compaction_types::{
    CompactionStyle, FifoCompactionOptions, UniversalCompactionOptions, UniversalStopStyle,
};

/// Checks the chosen style's options; `InvalidArgument` names the first
/// bad one. What depends on the DB's `num_levels` is checked by
/// [`validate_levels`].
pub(crate) fn validate(u: &UniversalCompactionOptions, f: &FifoCompactionOptions) -> Result<()> {
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
    Ok(())
}

/// Fewest levels incremental universal compaction works with: its slices
/// are files of a level ≥ 1 above the last (`compaction::universal_incremental`).
/// With two levels every run above the last is an L0 file, no slice can
/// ever be cut, and every size-amplification merge would be the full one
/// the option exists to avoid.
pub(crate) const INCREMENTAL_MIN_LEVELS: usize = 3;

/// Checks the style's options against the DB's `num_levels`.
pub(crate) fn validate_levels(
    style: CompactionStyle,
    u: &UniversalCompactionOptions,
    num_levels: usize,
) -> Result<()> {
    if style == CompactionStyle::Universal && u.incremental && num_levels < INCREMENTAL_MIN_LEVELS {
        return Err(Error::InvalidArgument(format!(
            "compaction_options_universal.incremental needs num_levels >= \
             {INCREMENTAL_MIN_LEVELS} (it is {num_levels}): its slices are cut from a level \
             between L0 and the last one, and with {num_levels} levels there is none"
        )));
    }
    Ok(())
}

/// Every persisted style option, by its text name: the one list that
/// `text_lines` writes and `parse_line` reads.
fn fields<'a>(
    u: &'a mut UniversalCompactionOptions,
    f: &'a mut FifoCompactionOptions,
) -> [(&'static str, &'a mut dyn TextValue); 11] {
    [
        ("compaction_options_universal.size_ratio", &mut u.size_ratio),
        (
            "compaction_options_universal.min_merge_width",
            &mut u.min_merge_width,
        ),
        (
            "compaction_options_universal.max_merge_width",
            &mut u.max_merge_width,
        ),
        (
            "compaction_options_universal.max_size_amplification_percent",
            &mut u.max_size_amplification_percent,
        ),
        (
            "compaction_options_universal.compression_size_percent",
            &mut u.compression_size_percent,
        ),
        ("compaction_options_universal.stop_style", &mut u.stop_style),
        (
            "compaction_options_universal.allow_trivial_move",
            &mut u.allow_trivial_move,
        ),
        (
            "compaction_options_universal.incremental",
            &mut u.incremental,
        ),
        (
            "compaction_options_fifo.max_table_files_size",
            &mut f.max_table_files_size,
        ),
        (
            "compaction_options_fifo.allow_compaction",
            &mut f.allow_compaction,
        ),
        ("compaction_options_fifo.ttl", &mut f.ttl_secs),
    ]
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
    let (mut u, mut f) = (u.clone(), f.clone());
    let (mut du, mut df) = Default::default();
    for ((name, v), (_, d)) in fields(&mut u, &mut f)
        .into_iter()
        .zip(fields(&mut du, &mut df))
    {
        let (v, d) = (v.text(), d.text());
        if v != d {
            out.push((name.to_string(), v));
        }
    }
    out
}

/// True when `key` names a compaction-style option (`compaction_style` or
/// one of the universal or FIFO options).
pub(crate) fn is_option(key: &str) -> bool {
    key == "compaction_style"
        || fields(&mut Default::default(), &mut Default::default())
            .iter()
            .any(|(n, _)| *n == key)
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
    if key == "compaction_style" {
        *style = CompactionStyle::parse(value)?;
        return Ok(true);
    }
    let Some((_, field)) = fields(universal, fifo).into_iter().find(|(n, _)| *n == key) else {
        return Ok(false);
    };
    field
        .set(value)
        .ok_or_else(|| Error::InvalidArgument(format!("option {key}: bad value {value:?}")))?;
    Ok(true)
}
