//! Writes the surviving entries of a sorted input stream into output SSTs.
//!
//! Used by flushes (one output file) and compactions (outputs cut at the
//! target file size, only between user keys, so that the versions of one
//! user key never span two files of a sorted level). A compaction also cuts
//! an output early where the `GrandparentCutter` says: before it overlaps
//! more than `max_compaction_bytes` of the level below the output level
//! (LevelDB's `ShouldStopBefore`), and, with
//! `level_compaction_dynamic_file_size`, at that level's file boundaries.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::base::{extract_user_key, parse_internal_key};
use crate::error::{Error, Result};
use crate::fs::{explain_direct_refusal, FileOptions, FileSystem, WritableFile};
use crate::io::{RangeSyncer, RateLimit};
use crate::iter::InternalIterator;
use crate::memory::Meter;
use crate::range_del::{clip, Fragment};
use crate::sst::{TableBuilder, TableOptions, TableProperties};
use crate::version::filename::{blob_file_name, table_file_name};
use crate::version::FileMeta;

use super::blob_output::{BlobOutcome, BlobOutputSpec, BlobWriter};
use super::cuts::{SstPartitioner, StreamDetector};
use super::filter::EntryFilter;

/// Creates the output file `name` as `spec` says; a refused direct open
/// names the option that asked for it.
fn create_output(spec: &OutputSpec<'_>, name: &str) -> Result<Box<dyn WritableFile>> {
    let path = spec.dir.join(name);
    spec.fs
        .create_with(&path, spec.file_opts)
        .map_err(|e| explain_direct_refusal("use_direct_io_for_flush_and_compaction", &path, e))
}

/// Where and how outputs are written.
pub(crate) struct OutputSpec<'a> {
    pub fs: &'a Arc<dyn FileSystem>,
    pub dir: &'a Path,
    /// How output files are created: `direct` with
    /// `use_direct_io_for_flush_and_compaction`.
    pub file_opts: FileOptions,
    pub table_opts: TableOptions,
    /// Cut a new file once this many bytes were written (u64::MAX: never).
    pub target_file_size: u64,
    /// Allocates a file number for the next output (and protects it from
    /// obsolete-file deletion).
    pub new_file_number: &'a mut dyn FnMut() -> u64,
    /// Checked between entries; a set flag aborts the job.
    pub shutting_down: &'a AtomicBool,
    /// Range tombstones to write (disjoint, sorted): each output gets the
    /// pieces between its first key and the next output's first key (the
    /// first from the start, the last to the end); with no point entry at
    /// all, one output holds them alone.
    pub range_dels: Vec<Fragment>,
    /// Where the output builders' memory (pending index, filter hashes,
    /// block buffers) is charged while they build (`None`: nowhere).
    pub memory: Option<Meter>,
    /// Cut a new file once the builder holds this many bytes (under a
    /// memory budget; `usize::MAX`: never). A table's filter needs every
    /// key's hash until it is finished: 8 bytes a key, 16 MiB for a 64 MiB
    /// table of small entries.
    pub builder_memory_limit: usize,
    /// The limiter the output tables' appends go through, at the job's
    /// priority (`None`: unlimited).
    pub rate_limit: Option<RateLimit>,
    /// `Options::bytes_per_sync` for the output files (0: off).
    pub bytes_per_sync: u64,
    /// Key-value separation (`None`: values stay in the tables and blob
    /// references pass through).
    pub blob: Option<BlobOutputSpec>,
    /// Outputs never span two of its partitions (`sst_partitioner_factory`).
    pub partitioner: Option<SstPartitioner>,
    /// Outputs end where an ascending insert stream ends (flushes of
    /// leveled families; `None`: never).
    pub streams: Option<StreamDetector>,
}

/// Decides where a compaction's outputs end, from the files of the level
/// below the output level (the grandparents).
///
/// Two rules, RocksDB's (`CompactionOutputs::ShouldStopBefore`):
/// - an output never overlaps more than `max_compaction_bytes` of
///   grandparents, so compacting it one level down later stays bounded
///   (LevelDB's rule);
/// - with `align` (RocksDB's `level_compaction_dynamic_file_size`), outputs
///   end at grandparent file boundaries: once the output holds 50% of the
///   target size, plus 5% per boundary it has already passed (at most 90%),
///   the next boundary crossed ends it; and an output ends before a key
///   that would make it span a whole grandparent file of more than 1/8 of
///   the target size that it could skip. Aligned outputs each overlap few
///   files below, so later compactions out of this level rewrite less.
///
/// The cutter is told every user key that starts a new user key of the
/// output stream (in order), with the current output's size.
pub(crate) struct GrandparentCutter {
    /// (smallest user key, largest user key, bytes) of the grandparent
    /// level's files overlapping the compaction, in key order, disjoint.
    files: Vec<(Vec<u8>, Vec<u8>, u64)>,
    max_overlap: u64,
    target_file_size: u64,
    align: bool,
    /// The grandparent file the last key is in (`in_gap` false) or before
    /// (`in_gap` true); `files.len()` once past the last one.
    next: usize,
    in_gap: bool,
    seen_key: bool,
    /// Grandparent bytes the current output overlaps.
    overlapped: u64,
    /// Boundaries (file starts and ends) the current output has crossed.
    switched: u64,
}

impl GrandparentCutter {
    /// `files` must be sorted by key and disjoint (a level ≥ 1).
    pub(crate) fn new(
        files: &[Arc<FileMeta>],
        max_overlap: u64,
        target_file_size: u64,
        align: bool,
    ) -> Self {
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
            target_file_size,
            align,
            next: 0,
            in_gap: true,
            seen_key: false,
            overlapped: 0,
            switched: 0,
        }
    }

    /// Moves past the boundaries between the last key and `user_key`;
    /// returns how many were crossed (0 for the first key).
    fn advance(&mut self, user_key: &[u8]) -> u64 {
        let mut crossed = 0;
        while let Some((smallest, largest, size)) = self.files.get(self.next) {
            if self.in_gap {
                if user_key < smallest.as_slice() {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                    self.overlapped += size;
                }
                self.in_gap = false;
            } else {
                if user_key <= largest.as_slice() {
                    break;
                }
                if self.seen_key {
                    crossed += 1;
                }
                self.in_gap = true;
                self.next += 1;
            }
        }
        if !self.seen_key {
            self.overlapped = self.current_file_bytes();
        }
        self.seen_key = true;
        self.switched += crossed;
        crossed
    }

    /// Bytes of the grandparent file the last key is in (0 in a gap).
    fn current_file_bytes(&self) -> u64 {
        match (self.in_gap, self.files.get(self.next)) {
            (false, Some((_, _, size))) => *size,
            _ => 0,
        }
    }

    /// Called with the first entry of each user key, in order, and the
    /// size of the output being written (`None` when none is open): true
    /// when that output should end before this key.
    pub(crate) fn should_stop_before(&mut self, user_key: &[u8], output_size: Option<u64>) -> bool {
        let before = self.overlapped;
        let crossed = self.advance(user_key);
        let Some(size) = output_size else {
            return false;
        };
        if crossed == 0 {
            return false;
        }
        if self.overlapped.saturating_add(size) > self.max_overlap {
            return true;
        }
        if !self.align {
            return false;
        }
        // Entering a file from a gap crosses one boundary per skipped file
        // end and start: 2 (from a gap) or 3 (from inside a file) mean a
        // whole file was passed.
        let skippable = if self.in_gap { 2 } else { 3 };
        if crossed >= skippable && self.overlapped - before > self.target_file_size / 8 {
            return true;
        }
        let percent = 50 + (self.switched * 5).min(40);
        size >= self.target_file_size.div_ceil(100).saturating_mul(percent)
    }

    /// Starts counting afresh for a new output that begins at the last key.
    fn reset(&mut self) {
        self.overlapped = self.current_file_bytes();
        self.switched = 0;
    }
}

/// Output of a job: the new files (already synced) and what was written.
#[derive(Default)]
pub(crate) struct Outputs {
    pub files: Vec<FileMeta>,
    /// The properties of each table of `files` (for the LOG's
    /// `table_file_creation`; `file_number` names the table).
    pub props: Vec<TableProperties>,
    /// Bytes of the tables written.
    pub bytes_written: u64,
    /// The blob files written and the blob references the tables hold.
    pub blobs: BlobOutcome,
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
    let mut out = Outputs::default();
    let mut blob = spec.blob.clone().map(BlobWriter::new);
    let mut r = run(input, filter, spec, cutter, &mut out, blob.as_mut());
    let mut created_blobs = blob.as_ref().map(BlobWriter::created).unwrap_or_default();
    if let (Ok(()), Some(b)) = (&r, blob) {
        match b.finish() {
            Ok(o) => out.blobs = o,
            Err(e) => r = Err(e),
        }
    }
    if r.is_ok() && !(out.files.is_empty() && out.blobs.files.is_empty()) {
        // The new tables' and blob files' directory entries must be
        // durable before a MANIFEST edit names them.
        r = spec.fs.sync_dir(spec.dir);
    }
    if r.is_err() {
        for f in &out.files {
            let _ = spec.fs.remove(&spec.dir.join(table_file_name(f.number)));
        }
        for n in created_blobs.drain(..) {
            let _ = spec.fs.remove(&spec.dir.join(blob_file_name(n)));
        }
    }
    r.map(|()| out)
}

/// `bytes_per_sync` for a job's output files (off with direct IO, which
/// leaves no dirty pages: RocksDB skips it there too).
fn output_bytes_per_sync(spec: &OutputSpec<'_>) -> u64 {
    if spec.file_opts.direct {
        0
    } else {
        spec.bytes_per_sync
    }
}

/// Creates blob file `number` of a job, written as its tables are.
fn create_blob_file(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    file_opts: FileOptions,
    bytes_per_sync: u64,
    limit: Option<&RateLimit>,
    number: u64,
) -> Result<Box<dyn WritableFile>> {
    let path = dir.join(blob_file_name(number));
    let file = fs
        .create_with(&path, file_opts)
        .map_err(|e| explain_direct_refusal("use_direct_io_for_flush_and_compaction", &path, e))?;
    let mut file = RangeSyncer::wrap(file, bytes_per_sync);
    if let Some(limit) = limit {
        file = limit.wrap(file);
    }
    Ok(file)
}

fn run(
    input: &mut dyn InternalIterator,
    filter: &mut EntryFilter<'_>,
    spec: &mut OutputSpec<'_>,
    mut cutter: Option<&mut GrandparentCutter>,
    out: &mut Outputs,
    mut blob: Option<&mut BlobWriter>,
) -> Result<()> {
    let mut builder: Option<(u64, TableBuilder)> = None;
    let mut last_user_key: Vec<u8> = Vec::new();
    let range_dels = std::mem::take(&mut spec.range_dels);
    // The first key of the current output (None for the first one).
    let mut output_lo: Option<Vec<u8>> = None;
    let mut charge = spec.memory.as_ref().map(Meter::charge);
    let mut unsynced = UnsyncedOutputs::new(output_bytes_per_sync(spec) == 0);
    let mut n = 0u64;
    loop {
        n += 1;
        if n.is_multiple_of(256) {
            if let (Some(c), Some((_, b))) = (charge.as_mut(), builder.as_ref()) {
                c.set(b.memory_usage());
            }
        }
        if n.is_multiple_of(1024) && spec.shutting_down.load(Ordering::Acquire) {
            if let Some((number, b)) = builder.take() {
                drop(b);
                let _ = spec.fs.remove(&spec.dir.join(table_file_name(number)));
            }
            return Err(Error::ShutdownInProgress);
        }
        let file_hint = builder
            .as_ref()
            .map_or("<compaction input>", |(_, b)| b.name());
        if !filter.advance(input, file_hint)? {
            break;
        }
        let (key, value) = filter.entry(&*input);
        let user_key = extract_user_key(key);
        // Cut only at a user-key boundary.
        let new_key = builder.is_none() || user_key != last_user_key.as_slice();
        let size = builder.as_ref().map(|(_, b)| b.estimated_file_size());
        let gp_stop = new_key
            && cutter
                .as_deref_mut()
                .is_some_and(|c| c.should_stop_before(user_key, size));
        let stream_end = new_key
            && spec.streams.as_mut().is_some_and(|d| {
                let seq = parse_internal_key(key).map_or(0, |p| p.seq);
                d.should_cut(seq, size.unwrap_or(0))
            });
        let cut = new_key
            && builder.as_ref().is_some_and(|(_, b)| {
                gp_stop
                    || stream_end
                    || b.estimated_file_size() >= spec.target_file_size
                    || b.memory_usage() >= spec.builder_memory_limit
                    || spec
                        .partitioner
                        .is_some_and(|p| p.must_cut(&last_user_key, user_key))
            });
        if cut {
            if let Some(c) = cutter.as_deref_mut() {
                c.reset();
            }
            if let Some(d) = spec.streams.as_mut() {
                d.output_ended();
            }
            if let Some((number, mut b)) = builder.take() {
                if !range_dels.is_empty() {
                    b.set_range_dels(clip(&range_dels, output_lo.as_deref(), Some(user_key)));
                    output_lo = Some(user_key.to_vec());
                }
                finish(number, b, out, blob.as_deref_mut(), &mut unsynced)?;
            }
        }
        if builder.is_none() {
            builder = Some(new_output(spec)?);
        }
        // The entry itself, or its blob reference (after the cut, so the
        // reference counts for the table it goes to).
        let (mut key, mut value) = (key, value);
        if let Some(b) = blob.as_deref_mut() {
            let (fs, dir, file_opts) = (spec.fs, spec.dir, spec.file_opts);
            let sync = output_bytes_per_sync(spec);
            let limit = spec.rate_limit.as_ref();
            let mut create = |n: u64| create_blob_file(fs, dir, file_opts, sync, limit, n);
            if let Some((k, v)) =
                b.transform(key, value, &mut *spec.new_file_number, &mut create)?
            {
                (key, value) = (k, v);
            }
        }
        if let Some((_, b)) = builder.as_mut() {
            b.add(key, value)?;
        }
        last_user_key.clear();
        last_user_key.extend_from_slice(user_key);
    }
    if builder.is_none() && !range_dels.is_empty() {
        builder = Some(new_output(spec)?);
    }
    if let Some((number, mut b)) = builder.take() {
        if !range_dels.is_empty() {
            b.set_range_dels(clip(&range_dels, output_lo.as_deref(), None));
        }
        if b.is_empty() {
            // Every piece fell before the outputs' keys: cannot happen with
            // a first output from the start, but never write an empty file.
            drop(b);
            let _ = spec.fs.remove(&spec.dir.join(table_file_name(number)));
        } else {
            finish(number, b, out, blob, &mut unsynced)?;
        }
    }
    unsynced.sync_all()
}

/// Creates the next output table (behind the spec's rate limit).
fn new_output(spec: &mut OutputSpec<'_>) -> Result<(u64, TableBuilder)> {
    let number = (spec.new_file_number)();
    let name = table_file_name(number);
    let mut file = RangeSyncer::wrap(create_output(spec, &name)?, output_bytes_per_sync(spec));
    if let Some(limit) = &spec.rate_limit {
        file = limit.wrap(file);
    }
    Ok((
        number,
        TableBuilder::new(file, name, number, spec.table_opts.clone()),
    ))
}

/// Finished outputs not yet synced. A job that cuts many outputs (a flush
/// of N insert streams writes N tables) would wait for one device sync per
/// table, each committing the file system's journal for that table's
/// blocks alone. Instead each finished table's writeback starts at once
/// (`range_sync`: Linux `sync_file_range(SYNC_FILE_RANGE_WRITE)`) and the
/// tables are synced together, every [`UNSYNCED_MAX`] tables and at the end
/// of the job: by then their blocks are allocated and written back, so the
/// first sync commits the journal for all of them and the others find
/// little left to do. Every table is synced before the job returns, so
/// before any MANIFEST edit names it.
///
/// A job of one output requests no writeback (its sync follows at once),
/// nor does one whose files already stream their writeback
/// (`bytes_per_sync`: `io::RangeSyncer` owns the requests then).
struct UnsyncedOutputs {
    files: Vec<Box<dyn WritableFile>>,
    /// Start each table's writeback when the next output begins.
    early_writeback: bool,
    /// Tables written (for `early_writeback`: the first waits for a
    /// second).
    finished: usize,
}

/// Most finished tables left unsynced (open files held) at once.
const UNSYNCED_MAX: usize = 16;

impl UnsyncedOutputs {
    fn new(early_writeback: bool) -> UnsyncedOutputs {
        UnsyncedOutputs {
            files: Vec::new(),
            early_writeback,
            finished: 0,
        }
    }

    fn push(&mut self, file: Box<dyn WritableFile>) -> Result<()> {
        self.finished += 1;
        self.files.push(file);
        if self.early_writeback && self.finished >= 2 {
            // The first table's request waited for this second one; every
            // later table's is made as it is pushed.
            let from = if self.finished == 2 {
                0
            } else {
                self.files.len() - 1
            };
            for f in &mut self.files[from..] {
                let len = f.len();
                f.range_sync(0, len)?;
            }
        }
        if self.files.len() >= UNSYNCED_MAX {
            self.sync_all()?;
        }
        Ok(())
    }

    fn sync_all(&mut self) -> Result<()> {
        for mut f in self.files.drain(..) {
            f.sync()?;
        }
        Ok(())
    }
}

fn finish(
    number: u64,
    b: TableBuilder,
    out: &mut Outputs,
    blob: Option<&mut BlobWriter>,
    unsynced: &mut UnsyncedOutputs,
) -> Result<()> {
    let (built, file) = b.finish_unsynced()?;
    unsynced.push(file)?;
    out.bytes_written += built.file_size;
    let mut f = FileMeta::new(
        number,
        built.file_size,
        built.smallest,
        built.largest,
        built.smallest_seq,
        built.largest_seq,
        built.num_entries,
        built.props.num_deletions,
    );
    f.num_range_deletions = built.props.num_range_deletions;
    f.expiry_max = built.props.expiry_max;
    f.expiry_entries = built.props.expiry_entries;
    f.oldest_blob_file = blob.map_or(0, BlobWriter::take_oldest_in_table);
    if let Some(span) = built.range_del_span {
        let _ = f.range_del_span.set(span);
    }
    out.files.push(f);
    out.props.push(built.props);
    Ok(())
}

#[cfg(test)]
mod tests;
