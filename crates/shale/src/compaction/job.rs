//! Writes the surviving entries of a sorted input stream into output SSTs.
//!
//! Used by flushes (one output file) and compactions (outputs cut at the
//! target file size, only between user keys, so that the versions of one
//! user key never span two files of a sorted level).

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
    let mut out = Outputs {
        files: Vec::new(),
        bytes_written: 0,
    };
    let r = run(input, filter, spec, &mut out);
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
    out: &mut Outputs,
) -> Result<()> {
    let mut builder: Option<(u64, TableBuilder)> = None;
    let mut last_user_key: Vec<u8> = Vec::new();
    let mut n = 0u64;
    while input.valid() {
        n += 1;
        if n % 1024 == 0 && spec.shutting_down.load(Ordering::Acquire) {
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
            let cut = match &builder {
                Some((_, b)) => {
                    b.estimated_file_size() >= spec.target_file_size
                        && user_key != last_user_key.as_slice()
                }
                None => false,
            };
            if cut {
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
