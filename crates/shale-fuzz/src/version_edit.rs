//! The `version_edit` check: one MANIFEST record through
//! `VersionEdit::decode`. Invariant: an edit that decodes re-encodes to
//! bytes that decode to the same edit.
//!
//! Thread-safety: plain functions.

use shale::testing::VersionEdit;
use shale::Result;

use crate::MANIFEST_FILE;

/// Decodes a MANIFEST record; a decoded edit must survive encode/decode.
/// Returns the number of file additions and deletions.
pub fn version_edit(data: &[u8]) -> Result<usize> {
    let e = VersionEdit::decode(data, MANIFEST_FILE, 0)?;
    let again = e.encode();
    let e2 = VersionEdit::decode(&again, MANIFEST_FILE, 0);
    assert_eq!(e2.as_ref(), Ok(&e), "version edit does not round-trip");
    Ok(e.file_changes())
}
