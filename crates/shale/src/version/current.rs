//! The `CURRENT` file: names the live MANIFEST as `MANIFEST-NNNNNN\n`.
//!
//! Replaced atomically (docs/format/manifest.md, "CURRENT protocol"): write
//! the new content to `NNNNNN.dbtmp` (NNNNNN = the MANIFEST's number), sync
//! it, rename it over `CURRENT`, sync the directory. A crash at any point
//! leaves either the old or the new `CURRENT`, never a partial one (rename is
//! atomic; the temp file may be left behind and is obsolete).
//!
//! Stateless functions; callers serialize them: the MANIFEST writer (one at
//! a time, `shared::manifest`, outside the DB mutex), and `repair`, which
//! holds the DB's LOCK.

use std::path::Path;

use crate::base::FileNum;
use crate::error::{Error, Result};
use crate::fs::FileSystem;

use super::filename::{
    manifest_file_name, parse_file_name, temp_file_name, FileType, CURRENT_FILE_NAME,
};

/// Points `dir/CURRENT` at `MANIFEST-<manifest_number>` (which must already
/// be written and synced).
pub(crate) fn set_current(fs: &dyn FileSystem, dir: &Path, manifest_number: FileNum) -> Result<()> {
    let contents = format!("{}\n", manifest_file_name(manifest_number));
    let tmp = dir.join(temp_file_name(manifest_number));
    let written = (|| {
        let mut f = fs.create(&tmp)?;
        f.append(contents.as_bytes())?;
        f.sync()?;
        drop(f);
        fs.rename(&tmp, &dir.join(CURRENT_FILE_NAME))
    })();
    if written.is_err() {
        // Best effort: the temp file is obsolete either way.
        let _ = fs.remove(&tmp);
    }
    written?;
    fs.sync_dir(dir)
}

/// Reads `dir/CURRENT` and returns the number of the MANIFEST it names.
/// Anything but exactly `MANIFEST-<digits>\n` is `Corruption` naming CURRENT.
pub(crate) fn read_current(fs: &dyn FileSystem, dir: &Path) -> Result<FileNum> {
    let path = dir.join(CURRENT_FILE_NAME);
    let name = path.display().to_string();
    let bytes = fs.read_all(&path)?;
    let bad = |what: &str| Error::corruption(name.as_str(), 0, what);
    if bytes.is_empty() {
        return Err(bad("CURRENT is empty"));
    }
    let Some(body) = bytes.strip_suffix(b"\n") else {
        return Err(bad("CURRENT does not end with a newline"));
    };
    let body = std::str::from_utf8(body).map_err(|_| bad("CURRENT is not UTF-8"))?;
    match parse_file_name(body) {
        Some((FileType::Manifest, n)) => Ok(n),
        _ => Err(bad("CURRENT does not name a MANIFEST file")),
    }
}

#[cfg(test)]
mod tests;
