//! `VersionBuilder`: applies a sequence of `VersionEdit`s to a base `Version`
//! and produces the resulting `Version`.
//!
//! Used for every `log_and_apply` (one edit) and for MANIFEST recovery (all
//! edits). Rejects edits that do not fit the state they apply to, as
//! `Corruption` naming the edit's file and offset: deleting a file that is not
//! on that level, adding a file number that is already present, a level
//! beyond `num_levels` (that one is `InvalidArgument`: the DB was written with
//! more levels than it is opened with), and results that break the `Version`
//! invariants (overlapping L1+ files).
//!
//! Within one edit deletions apply before additions, so a trivial move
//! (delete from Ln, add the same file to Ln+1) is one edit. Unchanged levels
//! share their `Arc<FileMeta>`s with the base. Single-threaded.

use std::collections::HashMap;
use std::sync::Arc;

use crate::base::FileNum;
use crate::error::{Error, Result};

use super::edit::VersionEdit;
use super::file_meta::{BlobFileMeta, FileMeta};
use super::version::{l0_order, level_order, Version};

/// Accumulates edits on top of a base version.
pub(crate) struct VersionBuilder<'a> {
    base: &'a Version,
    /// Levels touched by an edit, materialized from the base on first touch.
    changed: Vec<Option<HashMap<FileNum, Arc<FileMeta>>>>,
    /// Level of every file currently present.
    location: HashMap<FileNum, usize>,
    /// The family's blob files after the edits applied so far (`None`:
    /// the base's, untouched).
    blob_files: Option<std::collections::BTreeMap<FileNum, BlobFileMeta>>,
    /// File and offset of the last edit applied, for errors from `build`.
    last: (String, u64),
}

impl<'a> VersionBuilder<'a> {
    /// A builder starting from `base`.
    pub(crate) fn new(base: &'a Version) -> VersionBuilder<'a> {
        let mut location = HashMap::with_capacity(base.total_files());
        for level in 0..base.num_levels() {
            for f in base.files(level) {
                location.insert(f.number, level);
            }
        }
        VersionBuilder {
            base,
            changed: vec![None; base.num_levels()],
            location,
            blob_files: None,
            last: (String::new(), 0),
        }
    }

    fn level_map(&mut self, level: usize) -> Option<&mut HashMap<FileNum, Arc<FileMeta>>> {
        let base = self.base;
        let slot = self.changed.get_mut(level)?;
        Some(slot.get_or_insert_with(|| {
            base.files(level)
                .iter()
                .map(|f| (f.number, Arc::clone(f)))
                .collect()
        }))
    }

    fn check_level(&self, level: usize, number: FileNum, file: &str, offset: u64) -> Result<()> {
        if level >= self.changed.len() {
            return Err(Error::InvalidArgument(format!(
                "{file} at offset {offset}: file {number} is on level {level} but the DB is opened with {} levels",
                self.changed.len()
            )));
        }
        Ok(())
    }

    /// Applies one edit. `file`/`offset` name the edit in errors.
    pub(crate) fn apply(&mut self, edit: &VersionEdit, file: &str, offset: u64) -> Result<()> {
        self.last = (file.to_string(), offset);
        for &(level, number) in &edit.deleted_files {
            self.check_level(level, number, file, offset)?;
            if self.location.get(&number) != Some(&level) {
                return Err(Error::corruption(
                    file,
                    offset,
                    format!("version edit deletes file {number} from L{level}, where it is not"),
                ));
            }
            self.location.remove(&number);
            if let Some(m) = self.level_map(level) {
                m.remove(&number);
            }
        }
        for (level, f) in &edit.new_files {
            let level = *level;
            self.check_level(level, f.number, file, offset)?;
            if let Some(at) = self.location.get(&f.number) {
                return Err(Error::corruption(
                    file,
                    offset,
                    format!(
                        "version edit adds file {} to L{level}, but it is already on L{at}",
                        f.number
                    ),
                ));
            }
            self.location.insert(f.number, level);
            let meta = Arc::new(f.clone());
            if let Some(m) = self.level_map(level) {
                m.insert(meta.number, meta);
            }
        }
        self.apply_blob_files(edit, file, offset)
    }

    /// Blob file additions, then garbage (a file may get both in one
    /// edit); a file whose blobs are all garbage leaves the family.
    fn apply_blob_files(&mut self, edit: &VersionEdit, file: &str, offset: u64) -> Result<()> {
        if edit.blob_file_additions.is_empty() && edit.blob_file_garbage.is_empty() {
            return Ok(());
        }
        let base = self.base;
        let blobs = self
            .blob_files
            .get_or_insert_with(|| base.blob_files().clone());
        let corrupt = |what: String| Error::corruption(file, offset, what);
        for a in &edit.blob_file_additions {
            if blobs.contains_key(&a.number) || self.location.contains_key(&a.number) {
                return Err(corrupt(format!(
                    "version edit adds blob file {}, which is already present",
                    a.number
                )));
            }
            blobs.insert(
                a.number,
                BlobFileMeta {
                    number: a.number,
                    file_size: a.file_size,
                    count: a.count,
                    bytes: a.bytes,
                    garbage_count: 0,
                    garbage_bytes: 0,
                },
            );
        }
        for g in &edit.blob_file_garbage {
            let Some(b) = blobs.get_mut(&g.number) else {
                return Err(corrupt(format!(
                    "version edit adds garbage to blob file {}, which is not present",
                    g.number
                )));
            };
            b.garbage_count = b.garbage_count.saturating_add(g.count);
            b.garbage_bytes = b.garbage_bytes.saturating_add(g.bytes);
            if b.garbage_count > b.count || b.garbage_bytes > b.bytes {
                return Err(corrupt(format!(
                    "blob file {}: garbage ({} blobs, {} bytes) exceeds its contents ({} blobs, {} bytes)",
                    g.number, b.garbage_count, b.garbage_bytes, b.count, b.bytes
                )));
            }
            if b.is_all_garbage() {
                blobs.remove(&g.number);
            }
        }
        Ok(())
    }

    /// The version after all applied edits.
    pub(crate) fn build(self) -> Result<Version> {
        let mut levels = Vec::with_capacity(self.changed.len());
        for (level, changed) in self.changed.into_iter().enumerate() {
            let files = match changed {
                None => self.base.files(level).to_vec(),
                Some(m) => {
                    let mut files: Vec<Arc<FileMeta>> = m.into_values().collect();
                    if level == 0 {
                        files.sort_by(|a, b| l0_order(a, b));
                    } else {
                        files.sort_by(|a, b| level_order(a, b));
                    }
                    files
                }
            };
            levels.push(files);
        }
        let blob_files = self
            .blob_files
            .unwrap_or_else(|| self.base.blob_files().clone());
        Version::try_from_levels(levels, blob_files).map_err(|what| {
            let (file, offset) = self.last;
            Error::corruption(
                file,
                offset,
                format!("version edits give an invalid LSM shape: {what}"),
            )
        })
    }
}

#[cfg(test)]
mod tests;
