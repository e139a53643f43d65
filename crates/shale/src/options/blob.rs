//! Validation and the persisted text of a family's blob-file options (the
//! types live in `blob::options`, re-exported here).
//!
//! Text form: RocksDB's option names (`enable_blob_files=true`), each
//! written only when it differs from the default, so a family without blob
//! files persists what older builds wrote.

use crate::error::{Error, Result};

pub use crate::blob::options::{BlobOptions, PrepopulateBlobCache};

use super::compaction_style::CompactionStyle;
use super::text_value::TextValue;

/// Checks the options and their combination with the compaction style;
/// `InvalidArgument` names the first bad one.
pub(crate) fn validate(b: &BlobOptions, style: CompactionStyle) -> Result<()> {
    let bad = |m: String| Err(Error::InvalidArgument(m));
    if b.blob_file_size == 0 {
        return bad("blob_file_size must be > 0".into());
    }
    for (name, v) in [
        (
            "blob_garbage_collection_age_cutoff",
            b.blob_garbage_collection_age_cutoff,
        ),
        (
            "blob_garbage_collection_min_garbage_ratio",
            b.blob_garbage_collection_min_garbage_ratio,
        ),
        (
            "blob_garbage_collection_force_threshold",
            b.blob_garbage_collection_force_threshold,
        ),
    ] {
        if !(0.0..=1.0).contains(&v) {
            return bad(format!("{name} {v} not in [0, 1]"));
        }
    }
    if b.enable_blob_files && style == CompactionStyle::Fifo {
        // FIFO drops whole tables without reading them: the blobs they
        // reference could never be counted as garbage.
        return bad("enable_blob_files is not supported with FIFO compaction".into());
    }
    Ok(())
}

/// Every persisted blob option by its text name: the one list that
/// `text_lines` writes and `parse_line` reads.
fn fields(b: &mut BlobOptions) -> [(&'static str, &mut dyn TextValue); 11] {
    [
        ("enable_blob_files", &mut b.enable_blob_files),
        ("min_blob_size", &mut b.min_blob_size),
        ("blob_file_size", &mut b.blob_file_size),
        ("blob_compression_type", &mut b.blob_compression_type),
        (
            "enable_blob_garbage_collection",
            &mut b.enable_blob_garbage_collection,
        ),
        (
            "blob_garbage_collection_age_cutoff",
            &mut b.blob_garbage_collection_age_cutoff,
        ),
        (
            "blob_garbage_collection_min_garbage_ratio",
            &mut b.blob_garbage_collection_min_garbage_ratio,
        ),
        (
            "blob_garbage_collection_force_threshold",
            &mut b.blob_garbage_collection_force_threshold,
        ),
        (
            "blob_compaction_readahead_size",
            &mut b.blob_compaction_readahead_size,
        ),
        ("blob_file_starting_level", &mut b.blob_file_starting_level),
        ("prepopulate_blob_cache", &mut b.prepopulate_blob_cache),
    ]
}

/// The `name=value` lines of what differs from the defaults.
pub(crate) fn text_lines(b: &BlobOptions) -> Vec<(String, String)> {
    let mut b = b.clone();
    let mut d = BlobOptions::default();
    fields(&mut b)
        .into_iter()
        .zip(fields(&mut d))
        .filter_map(|((name, v), (_, d))| {
            let (v, d) = (v.text(), d.text());
            (v != d).then(|| (name.to_string(), v))
        })
        .collect()
}

/// True when `key` names a blob option.
pub(crate) fn is_option(key: &str) -> bool {
    fields(&mut BlobOptions::default())
        .iter()
        .any(|(n, _)| *n == key)
}

/// Sets the option `key` from `value`: `Ok(false)` when `key` is not a
/// blob option.
pub(crate) fn parse_line(key: &str, value: &str, b: &mut BlobOptions) -> Result<bool> {
    let Some((_, field)) = fields(b).into_iter().find(|(n, _)| *n == key) else {
        return Ok(false);
    };
    field
        .set(value)
        .ok_or_else(|| Error::InvalidArgument(format!("option {key}: bad value {value:?}")))?;
    Ok(true)
}

#[cfg(test)]
mod tests;
