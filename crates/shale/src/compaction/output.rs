//! Writes the surviving entries of a sorted input stream into output SSTs.
//!
//! Used by flushes (one output file) and compactions (outputs cut at the
//! target file size, only between user keys, so that the versions of one
//! user key never span two files of a sorted level). A compaction also cuts
//! an output early once it would overlap more than `max_compaction_bytes`
//! of the grandparent level (LevelDB's `ShouldStopBefore`), so that a later
//! compaction of that output into the next level stays bounded.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::base::extract_user_key;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::sst::{TableBuilder, TableOptions};
use crate::version::filename::table_file_name;
use crate::version::FileMeta;

use super::filter::{Decision, EntryFilter};

/// Where and how outputs are written.
pub(crate) struct OutputSpec<'a> {
    pub fs: &'a Arc<dyn FileSystem>,
    pub dir: &'a Path,
    pub table_opts: TableOptions,
    /// Cut a new file once this many bytes were written (u64::MAX: never).
    pub target_file_size: u64,
    /// Allocates a file number for the next output (and protects it from
    /// obsolete-file deletion).
    pub new_file_number: &'a mut dyn FnMut() -> u64,
    /// Checked between entries; a set flag aborts the job.
    pub shutting_down: &'a AtomicBool,
}

/// Cuts outputs where they would overlap too many grandparent bytes.
pub(crate) struct GrandparentCutter {
    /// (smallest user key, largest user key, bytes) of the grandparent
    /// level's files overlapping the compaction, in key order.
    files: Vec<(Vec<u8>, Vec<u8>, u64)>,
    max_overlap: u64,
    next: usize,
    seen_key: bool,
    overlapped: u64,
}

impl GrandparentCutter {
    /// `files` must be sorted by key and disjoint (a level ≥ 1).
    pub(crate) fn new(files: &[Arc<FileMeta>], max_overlap: u64) -> Self {
        GrandparentCutter {
            files: files
                .iter()
                .map(|f| {
                    (
                        f.smallest_user_key().to_vec(),
                        f.largest_user_key().to_vec(),
                        f.file_size,
                    )
                })
                .collect(),
            max_overlap,
            next: 0,
            seen_key: false,
            overlapped: 0,
        }
    }

    /// Called with the first entry of each user key, in order: true when
    /// the current output should end before this key.
    pub(crate) fn should_stop_before(&mut self, user_key: &[u8]) -> bool {
        while let Some((_, largest, size)) = self.files.get(self.next) {
            if user_key <= largest.as_slice() {
                break;
            }
            if self.seen_key {
                self.overlapped += size;
            }
            self.next += 1;
        }
        self.seen_key = true;
        if self.overlapped > self.max_overlap {
            self.overlapped = 0;
            return true;
        }
        false
    }

    /// Starts counting afresh for a new output file.
    fn reset(&mut self) {
        self.overlapped = 0;
    }
}

/// Output of a job: the new files (already synced) and what was written.
pub(crate) struct Outputs {
    pub files: Vec<FileMeta>,
    pub bytes_written: u64,
}

/// Drains `input` through `filter` into output tables. On error, the files
/// written so far are removed.
pub(crate) fn write_outputs(
    input: &mut dyn InternalIterator,
    filter: &mut EntryFilter<'_>,
    spec: &mut OutputSpec<'_>,
) -> Result<Outputs> {
    write_outputs_cut(input, filter, spec, None)
}

/// [`write_outputs`] that also cuts outputs at grandparent boundaries.
pub(crate) fn write_outputs_cut(
    input: &mut dyn InternalIterator,
    filter: &mut EntryFilter<'_>,
    spec: &mut OutputSpec<'_>,
    cutter: Option<&mut GrandparentCutter>,
) -> Result<Outputs> {
    let mut out = Outputs {
        files: Vec::new(),
        bytes_written: 0,
    };
    let mut r = run(input, filter, spec, cutter, &mut out);
    if r.is_ok() && !out.files.is_empty() {
        // The new tables' directory entries must be durable before a
        // MANIFEST edit names them.
        r = spec.fs.sync_dir(spec.dir);
    }
    if r.is_err() {
        for f in &out.files {
            let _ = spec.fs.remove(&spec.dir.join(table_file_name(f.number)));
        }
    }
    r.map(|()| out)
}

fn run(
    input: &mut dyn InternalIterator,
    filter: &mut EntryFilter<'_>,
    spec: &mut OutputSpec<'_>,
    mut cutter: Option<&mut GrandparentCutter>,
    out: &mut Outputs,
) -> Result<()> {
    let mut builder: Option<(u64, TableBuilder)> = None;
    let mut last_user_key: Vec<u8> = Vec::new();
    let mut n = 0u64;
    while input.valid() {
        n += 1;
        if n.is_multiple_of(1024) && spec.shutting_down.load(Ordering::Acquire) {
            if let Some((number, b)) = builder.take() {
                drop(b);
                let _ = spec.fs.remove(&spec.dir.join(table_file_name(number)));
            }
            return Err(Error::ShutdownInProgress);
        }
        let key = input.key();
        let file_hint = builder.as_ref().map_or_else(
            || "<compaction input>".to_string(),
            |(n, _)| table_file_name(*n),
        );
        if filter.decide(key, &file_hint)? == Decision::Keep {
            let user_key = extract_user_key(key);
            // Cut only at a user-key boundary.
            let new_key = builder.is_none() || user_key != last_user_key.as_slice();
            let gp_stop = new_key
                && cutter
                    .as_deref_mut()
                    .is_some_and(|c| c.should_stop_before(user_key));
            let cut = match &builder {
                Some((_, b)) => {
                    new_key && (gp_stop || b.estimated_file_size() >= spec.target_file_size)
                }
                None => false,
            };
            if cut {
                if let Some(c) = cutter.as_deref_mut() {
                    c.reset();
                }
                if let Some((number, b)) = builder.take() {
                    finish(number, b, out)?;
                }
            }
            if builder.is_none() {
                let number = (spec.new_file_number)();
                let name = table_file_name(number);
                let file = spec.fs.create(&spec.dir.join(&name))?;
                builder = Some((
                    number,
                    TableBuilder::new(file, name, number, spec.table_opts.clone()),
                ));
            }
            if let Some((_, b)) = builder.as_mut() {
                b.add(key, input.value())?;
            }
            last_user_key.clear();
            last_user_key.extend_from_slice(user_key);
        }
        input.next();
    }
    input.status()?;
    if let Some((number, b)) = builder.take() {
        finish(number, b, out)?;
    }
    Ok(())
}

fn finish(number: u64, b: TableBuilder, out: &mut Outputs) -> Result<()> {
    let built = b.finish()?;
    out.bytes_written += built.file_size;
    out.files.push(FileMeta::new(
        number,
        built.file_size,
        built.smallest,
        built.largest,
        built.smallest_seq,
        built.largest_seq,
        built.num_entries,
        built.props.num_deletions,
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::{make_internal_key, ValueKind};

    fn gp(lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
        let mut a = Vec::new();
        make_internal_key(&mut a, lo.as_bytes(), 1, ValueKind::Value as u8);
        let mut b = Vec::new();
        make_internal_key(&mut b, hi.as_bytes(), 1, ValueKind::Value as u8);
        Arc::new(FileMeta::new(1, size, a, b, 1, 1, 1, 0))
    }

    #[test]
    fn grandparent_cutter_stops_after_the_overlap_limit() {
        let files = vec![
            gp("a", "b", 10),
            gp("c", "d", 10),
            gp("e", "f", 10),
            gp("g", "h", 10),
        ];
        let mut c = GrandparentCutter::new(&files, 15);
        assert!(!c.should_stop_before(b"a0")); // inside the first file
        assert!(!c.should_stop_before(b"c0")); // passed a..b: 10
        assert!(c.should_stop_before(b"e0")); // passed c..d: 20 > 15
        c.reset();
        assert!(!c.should_stop_before(b"e1"));
        assert!(!c.should_stop_before(b"g0")); // passed e..f: 10
        assert!(c.should_stop_before(b"z")); // passed g..h: 20
                                             // The first key never counts the files before it.
        let mut c = GrandparentCutter::new(&files, 15);
        assert!(!c.should_stop_before(b"z"));
    }
}
