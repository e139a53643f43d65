//! [`verify_blob_file`]: reads one blob file whole, for [`super::check_db`]
//! and [`super::repair_db`]: header and footer (`BlobFileReader::open`:
//! magic, checksums, the file number in the header, the footer's byte
//! count filling the file), then every record (`verify_all`: checksum
//! bound to file and offset, compression, the walk ending at the footer
//! after the footer's record count). Layout in docs/format/blob.md.
//!
//! Damage is `Corruption` naming the file (the path as given) and the
//! offset of the header (0), the record or the footer. Read-only.

use std::path::Path;

use crate::blob::BlobFileReader;
use crate::error::Result;
use crate::fs::FileSystem;

/// Opens blob file `number` at `path` and checks every byte of it; returns
/// the reader, whose footer counts (`record_count`, `total_bytes`) are
/// then those of the records walked.
pub(super) fn verify_blob_file(
    fs: &dyn FileSystem,
    path: &Path,
    number: u64,
) -> Result<BlobFileReader> {
    let name = path.display().to_string();
    let r = BlobFileReader::open(fs.open_random(path)?, &name, number)?;
    r.verify_all()?;
    Ok(r)
}
