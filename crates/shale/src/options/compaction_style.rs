//! Validation of a family's compaction style and its options (the types,
//! declared with their text, live in `compaction_types.rs`, re-exported
//! here).
//!
//! Text form (the MANIFEST's and the OPTIONS file's `name=value` lines):
//! a style and each option are written only when they differ from the
//! default, so a leveled family's persisted text is what older builds
//! wrote. `compaction_style` takes RocksDB's names
//! (`kCompactionStyleLevel`, `kCompactionStyleUniversal`,
//! `kCompactionStyleFIFO`); the style options are prefixed as RocksDB
//! prints them (`compaction_options_universal.size_ratio=1`).

use crate::error::{Error, Result};

pub use super::compaction_types::{
    CompactionStyle, FifoCompactionOptions, UniversalCompactionOptions, UniversalStopStyle,
};

/// Checks the chosen style's options; `InvalidArgument` names the first
/// bad one. What depends on the DB's `num_levels` is checked by
/// [`validate_levels`].
pub(crate) fn validate(u: &UniversalCompactionOptions, f: &FifoCompactionOptions) -> Result<()> {
    u.check_fields()?;
    if u.max_merge_width < u.min_merge_width {
        return Err(Error::InvalidArgument(format!(
            "compaction_options_universal.max_merge_width {} < min_merge_width {}",
            u.max_merge_width, u.min_merge_width
        )));
    }
    f.check_fields()
}

/// Fewest levels incremental universal compaction works with: its slices
/// are files of a level ≥ 1 above the last (`compaction::universal_incremental`).
/// With two levels every run above the last is an L0 file, no slice can
/// ever be cut, and every size-amplification merge would be the full one
/// the option exists to avoid.
pub(crate) const INCREMENTAL_MIN_LEVELS: usize = 3;

/// Fewest levels `allow_ingest_behind` works with (RocksDB's rule): the
/// reserved last level, and two for compactions.
pub(crate) const INGEST_BEHIND_MIN_LEVELS: usize = 3;

/// Checks the style's options against the DB's `num_levels` and
/// `allow_ingest_behind` (which refuses FIFO and fewer than three levels).
pub(crate) fn validate_levels(
    style: CompactionStyle,
    u: &UniversalCompactionOptions,
    num_levels: usize,
    ingest_behind: bool,
) -> Result<()> {
    if ingest_behind {
        if style == CompactionStyle::Fifo {
            return Err(Error::InvalidArgument(
                "allow_ingest_behind reserves the last level, and FIFO compaction keeps every \
                 file in L0: use leveled or universal compaction"
                    .into(),
            ));
        }
        if num_levels < INGEST_BEHIND_MIN_LEVELS {
            return Err(Error::InvalidArgument(format!(
                "allow_ingest_behind needs num_levels >= {INGEST_BEHIND_MIN_LEVELS} (it is \
                 {num_levels}): the last level is reserved, and compactions need two more"
            )));
        }
    }
    // With the last level reserved, compactions see one level fewer.
    let num_levels = num_levels - usize::from(ingest_behind);
    if style == CompactionStyle::Universal && u.incremental && num_levels < INCREMENTAL_MIN_LEVELS {
        return Err(Error::InvalidArgument(format!(
            "compaction_options_universal.incremental needs num_levels >= \
             {INCREMENTAL_MIN_LEVELS} (it is {num_levels}): its slices are cut from a level \
             between L0 and the last one, and with {num_levels} levels there is none"
        )));
    }
    Ok(())
}
