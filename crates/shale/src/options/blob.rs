//! Validation of a family's blob-file options (the types, declared with
//! their text, live in `blob::options`, re-exported here).
//!
//! Text form: RocksDB's option names (`enable_blob_files=true`), each
//! written only when it differs from the default, so a family without blob
//! files persists what older builds wrote.

use crate::error::{Error, Result};

pub use crate::blob::options::{BlobOptions, PrepopulateBlobCache};

use super::compaction_style::CompactionStyle;

/// Checks the options and their combination with the compaction style;
/// `InvalidArgument` names the first bad one.
pub(crate) fn validate(b: &BlobOptions, style: CompactionStyle) -> Result<()> {
    b.check_fields()?;
    if b.enable_blob_files && style == CompactionStyle::Fifo {
        // FIFO drops whole tables without reading them: the blobs they
        // reference could never be counted as garbage.
        return Err(Error::InvalidArgument(
            "enable_blob_files is not supported with FIFO compaction".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
