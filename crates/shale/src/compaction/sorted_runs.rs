//! Sorted runs (universal compaction's unit): each L0 file, and each
//! non-empty level below it as a whole.

use std::sync::Arc;

use crate::version::{FileMeta, Version};

/// One sorted run: an L0 file, or a whole level ≥ 1.
#[derive(Debug, Clone)]
pub(crate) struct SortedRun {
    pub level: usize,
    pub files: Vec<Arc<FileMeta>>,
    pub size: u64,
    pub being_compacted: bool,
}

/// The sorted runs of `v`, newest first.
/// Levels from `num_levels` down (the last one reserved by
/// `allow_ingest_behind`) are not runs: no compaction reads them.
pub(crate) fn sorted_runs(v: &Version, num_levels: usize) -> Vec<SortedRun> {
    let mut runs: Vec<SortedRun> = v
        .files(0)
        .iter()
        .map(|f| SortedRun {
            level: 0,
            files: vec![Arc::clone(f)],
            size: f.file_size,
            being_compacted: f.is_being_compacted(),
        })
        .collect();
    for level in 1..num_levels.min(v.num_levels()) {
        let files = v.files(level);
        if files.is_empty() {
            continue;
        }
        runs.push(SortedRun {
            level,
            files: files.to_vec(),
            size: files.iter().map(|f| f.file_size).sum(),
            being_compacted: files.iter().any(|f| f.is_being_compacted()),
        });
    }
    runs
}
