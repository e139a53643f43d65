//! `Version`: the shape of the LSM tree at one point in time — which SSTs are
//! on which level — and the key-range queries reads and compaction ask of it.
//!
//! Immutable once built and shared as `Arc<Version>`; readers hold an `Arc`
//! for as long as they read the files it lists, which is how obsolete-file
//! deletion knows what is still in use (see `VersionSet::live_files`).
//!
//! Invariants (checked by [`Version::check_invariants`], a `debug_assert!` on
//! construction, and turned into `Corruption` by the builder):
//! - L0 is ordered newest first: `largest_seq` descending, then file number
//!   descending. L0 files may overlap.
//! - Every level ≥ 1 is sorted by smallest internal key and its files are
//!   disjoint: each file's largest internal key < the next file's smallest.
//!   (Compaction does not split a user key across files of one level, so in
//!   practice user-key ranges are disjoint too; [`Version::find_file`]
//!   returns the first candidate.)
//! - Every file has `smallest ≤ largest` and appears at most once.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::Arc;

use crate::base::{compare_internal, FileNum};
use crate::range_del::Fragments;

use super::file_meta::{BlobFileMeta, FileMeta};

/// The files of every level at one point in time.
#[derive(Debug)]
pub(crate) struct Version {
    levels: Vec<Vec<Arc<FileMeta>>>,
    /// The family's blob files by number (each with a blob some table of
    /// this version references).
    blob_files: std::collections::BTreeMap<FileNum, BlobFileMeta>,
    /// Per level ≥ 1: its files' range tombstones as one fragment list,
    /// computed by the first iterator that needs it (the DB layer opens
    /// the tables).
    level_range_dels: RangeDelCache,
}

/// Lazily computed per-level range tombstones (see `Version`).
#[derive(Debug, Default)]
struct RangeDelCache(Vec<std::sync::OnceLock<Option<Arc<Fragments>>>>);

impl RangeDelCache {
    fn new(levels: usize) -> Self {
        RangeDelCache((0..levels).map(|_| std::sync::OnceLock::new()).collect())
    }
}

/// L0 order: newest first (largest seqno descending, then number descending).
pub(crate) fn l0_order(a: &FileMeta, b: &FileMeta) -> Ordering {
    b.largest_seq
        .cmp(&a.largest_seq)
        .then(b.number.cmp(&a.number))
}

/// L1+ order: by smallest internal key.
pub(crate) fn level_order(a: &FileMeta, b: &FileMeta) -> Ordering {
    compare_internal(&a.smallest, &b.smallest).then(a.number.cmp(&b.number))
}

impl Version {
    /// A version with `num_levels` empty levels.
    pub(crate) fn new_empty(num_levels: usize) -> Version {
        Version {
            levels: vec![Vec::new(); num_levels],
            blob_files: Default::default(),
            level_range_dels: RangeDelCache::new(num_levels),
        }
    }

    /// Wraps already-ordered levels. Requires the module invariants
    /// (debug-asserted); the builder checks them for data read from disk.
    #[cfg(test)]
    pub(crate) fn from_levels(levels: Vec<Vec<Arc<FileMeta>>>) -> Version {
        let n = levels.len();
        let v = Version {
            levels,
            blob_files: Default::default(),
            level_range_dels: RangeDelCache::new(n),
        };
        debug_assert_eq!(v.check_invariants(), Ok(()));
        v
    }

    /// Wraps levels after checking the module invariants; `Err` describes the
    /// first violation (used for data read from disk).
    pub(crate) fn try_from_levels(
        levels: Vec<Vec<Arc<FileMeta>>>,
        blob_files: std::collections::BTreeMap<FileNum, BlobFileMeta>,
    ) -> std::result::Result<Version, String> {
        let n = levels.len();
        let v = Version {
            levels,
            blob_files,
            level_range_dels: RangeDelCache::new(n),
        };
        v.check_invariants()?;
        Ok(v)
    }

    /// Checks the module invariants; `Err` describes the first violation.
    pub(crate) fn check_invariants(&self) -> std::result::Result<(), String> {
        let mut seen = HashSet::new();
        for (level, files) in self.levels.iter().enumerate() {
            for f in files {
                if compare_internal(&f.smallest, &f.largest).is_gt() {
                    return Err(format!("file {} at L{level}: smallest > largest", f.number));
                }
                if !seen.insert(f.number) {
                    return Err(format!("file {} appears twice", f.number));
                }
            }
            for w in files.windows(2) {
                let (a, b) = (&w[0], &w[1]);
                if level == 0 {
                    if l0_order(a, b).is_gt() {
                        return Err(format!(
                            "L0 files {} and {} not newest first",
                            a.number, b.number
                        ));
                    }
                } else if compare_internal(&a.largest, &b.smallest).is_ge() {
                    return Err(format!(
                        "L{level} files {} and {} overlap or are unsorted",
                        a.number, b.number
                    ));
                }
            }
        }
        Ok(())
    }

    /// The range tombstones of `level`'s files as one fragment list,
    /// computed once per version by `compute` (a failure is returned and
    /// not cached).
    pub(crate) fn level_range_dels<E>(
        &self,
        level: usize,
        compute: impl FnOnce(&[Arc<FileMeta>]) -> std::result::Result<Option<Arc<Fragments>>, E>,
    ) -> std::result::Result<Option<Arc<Fragments>>, E> {
        let Some(cell) = self.level_range_dels.0.get(level) else {
            return Ok(None);
        };
        if let Some(v) = cell.get() {
            return Ok(v.clone());
        }
        let v = compute(self.files(level))?;
        Ok(cell.get_or_init(|| v).clone())
    }

    /// Number of levels.
    #[inline]
    pub(crate) fn num_levels(&self) -> usize {
        self.levels.len()
    }

    /// The files of `level` (empty for a level beyond `num_levels`).
    #[inline]
    pub(crate) fn files(&self, level: usize) -> &[Arc<FileMeta>] {
        self.levels.get(level).map_or(&[], |v| v.as_slice())
    }

    /// Number of files on `level`.
    #[inline]
    pub(crate) fn num_files(&self, level: usize) -> usize {
        self.files(level).len()
    }

    /// Number of files on each level.
    pub(crate) fn files_per_level(&self) -> Vec<usize> {
        self.levels.iter().map(Vec::len).collect()
    }

    /// Total size of the files on `level`.
    pub(crate) fn level_bytes(&self, level: usize) -> u64 {
        self.files(level).iter().map(|f| f.file_size).sum()
    }

    /// Number of files on all levels.
    pub(crate) fn total_files(&self) -> usize {
        self.levels.iter().map(Vec::len).sum()
    }

    /// Total size of the files on all levels.
    pub(crate) fn total_bytes(&self) -> u64 {
        (0..self.num_levels()).map(|l| self.level_bytes(l)).sum()
    }

    /// Adds the number of every file of this version to `out`.
    pub(crate) fn live_file_numbers(&self, out: &mut HashSet<FileNum>) {
        for files in &self.levels {
            out.extend(files.iter().map(|f| f.number));
        }
        out.extend(self.blob_files.keys());
    }

    /// The family's blob files, by number (oldest first).
    pub(crate) fn blob_files(&self) -> &std::collections::BTreeMap<FileNum, BlobFileMeta> {
        &self.blob_files
    }

    /// The file of `level` with this number, if any.
    #[cfg(test)]
    pub(crate) fn file_by_number(&self, level: usize, number: FileNum) -> Option<&Arc<FileMeta>> {
        self.files(level).iter().find(|f| f.number == number)
    }

    /// Files of `level` whose user-key range intersects
    /// `[smallest_user_key, largest_user_key]`. On L0 the range is widened to
    /// the files found, repeatedly, so the result holds every L0 file that
    /// overlaps any file in it (as LevelDB's `GetOverlappingInputs`).
    pub(crate) fn overlapping_files(
        &self,
        level: usize,
        smallest_user_key: &[u8],
        largest_user_key: &[u8],
    ) -> Vec<Arc<FileMeta>> {
        self.overlapping_files_in_range(level, Some(smallest_user_key), Some(largest_user_key))
    }

    /// [`Version::overlapping_files`] with optional bounds (`None` =
    /// unbounded on that side). L0 results are in L0 order, others by key.
    pub(crate) fn overlapping_files_in_range<'a>(
        &'a self,
        level: usize,
        mut lo: Option<&'a [u8]>,
        mut hi: Option<&'a [u8]>,
    ) -> Vec<Arc<FileMeta>> {
        let files = self.files(level);
        let mut out = Vec::new();
        if level > 0 {
            let start = files.partition_point(|f| lo.is_some_and(|lo| f.largest_user_key() < lo));
            for f in files.get(start..).unwrap_or(&[]) {
                if hi.is_some_and(|hi| f.smallest_user_key() > hi) {
                    break;
                }
                out.push(Arc::clone(f));
            }
            return out;
        }
        let mut i = 0;
        while let Some(f) = files.get(i) {
            i += 1;
            if !f.overlaps_user_range(lo, hi) {
                continue;
            }
            if lo.is_some_and(|lo| f.smallest_user_key() < lo) {
                lo = Some(f.smallest_user_key());
                out.clear();
                i = 0;
            } else if hi.is_some_and(|hi| f.largest_user_key() > hi) {
                hi = Some(f.largest_user_key());
                out.clear();
                i = 0;
            } else {
                out.push(Arc::clone(f));
            }
        }
        out
    }

    /// For a level ≥ 1: the file whose user-key range contains `user_key`,
    /// found by binary search on largest keys. `None` for L0 (search all L0
    /// files instead) or when no file covers the key.
    pub(crate) fn find_file(&self, level: usize, user_key: &[u8]) -> Option<&Arc<FileMeta>> {
        if level == 0 {
            return None;
        }
        let files = self.files(level);
        // A file ending in a range tombstone's (exclusive) end does not hold
        // that key; the next file may.
        let i = files.partition_point(|f| {
            f.largest_user_key() < user_key
                || (f.largest_user_key() == user_key && f.largest_is_range_end())
        });
        files.get(i).filter(|f| f.smallest_user_key() <= user_key)
    }

    /// For a level ≥ 1: the index of the first file whose largest internal
    /// key is ≥ `ikey` (`num_files` when none), for seeks by internal key.
    #[cfg(test)]
    pub(crate) fn find_file_index(&self, level: usize, ikey: &[u8]) -> usize {
        self.files(level)
            .partition_point(|f| compare_internal(&f.largest, ikey).is_lt())
    }

    /// A one-line shape summary, e.g. `files[4 2 0] bytes[... ]`.
    #[cfg(test)]
    pub(crate) fn level_summary(&self) -> String {
        let counts: Vec<String> = self.levels.iter().map(|l| l.len().to_string()).collect();
        let bytes: Vec<String> = (0..self.num_levels())
            .map(|l| self.level_bytes(l).to_string())
            .collect();
        format!("files[{}] bytes[{}]", counts.join(" "), bytes.join(" "))
    }
}

#[cfg(test)]
pub(crate) mod tests;
