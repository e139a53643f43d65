//! Key-value separation in flush and compaction outputs: which values go
//! to blob files, which blob references are relocated (garbage
//! collection), and the garbage a job leaves in the blob files it read.
//!
//! - Extraction: a plain value of at least `min_blob_size` bytes, in a job
//!   whose output level is at or past `blob_file_starting_level`, is
//!   appended to the job's current blob file, and the table gets a
//!   `BlobIndex` entry (same user key and sequence number) instead.
//! - Relocation: with garbage collection on, a reference into one of the
//!   oldest `age_cutoff` share of the family's blob files is read
//!   (readahead `blob_compaction_readahead_size`) and written again into
//!   the job's blob file, so that the old file empties; with
//!   `blob_garbage_collection_min_garbage_ratio`, only if that file's
//!   garbage share reached the ratio when the job started ([`Relocation`]).
//! - Garbage: every reference the job reads ([`BlobRefMeter`] counts them
//!   as the inputs stream by) and does not write again (dropped as
//!   shadowed or deleted, or relocated) is garbage of its file; the job's
//!   MANIFEST edit adds it (RocksDB's `BlobGarbageMeter`). A file whose
//!   blobs are all garbage leaves the version and is deleted once no
//!   reader holds a version that lists it.
//!
//! Syncs: a blob file the job is done with (past `blob_file_size`) gets
//! its footer and its writeback started at once, and is synced later: by
//! [`BlobWriter::finish`] with the rest, or as soon as more than
//! [`MAX_UNSYNCED`] files wait. A flush that fills two blob files thus
//! waits once for the disk, at its end, instead of once in the middle with
//! the job stopped (measured: docs/PERFORMANCE.md, "Key-value
//! separation").
//!
//! Invariant: every blob file the job wrote is finished (footer) and synced
//! when `finish` returns (before the caller syncs the directory and before
//! any MANIFEST edit names it).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::base::{parse_internal_key, ValueKind, TRAILER_LEN};
use crate::blob::source::{BlobSource, Fill};
use crate::blob::{BlobFileBuilder, BlobFileInfo, BlobIndex};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sst::Compression;
use crate::version::filename::blob_file_name;
use crate::version::{BlobFileAddition, BlobFileGarbage};

/// Blob references per blob file: (count, whole-record bytes).
pub(crate) type BlobRefs = BTreeMap<u64, (u64, u64)>;

/// Which blob references a compaction relocates: those into files
/// numbered below `below`, except the files of `keep` (sorted; see
/// `shared::blob_glue::relocation`). The default relocates none.
#[derive(Clone, Debug, Default)]
pub(crate) struct Relocation {
    pub below: u64,
    pub keep: Vec<u64>,
}

impl Relocation {
    /// Relocates every reference below `below` (0: none).
    pub(crate) fn below(below: u64) -> Relocation {
        Relocation {
            below,
            keep: Vec::new(),
        }
    }

    /// True when references into blob file `file` are relocated.
    pub(crate) fn relocates(&self, file: u64) -> bool {
        file < self.below && self.keep.binary_search(&file).is_err()
    }
}

/// How a job treats values and blob references (see the module comment).
#[derive(Clone)]
pub(crate) struct BlobOutputSpec {
    pub cf: u32,
    /// Plain values of at least this many bytes go to blob files (`None`:
    /// every value stays in the table).
    pub min_blob_size: Option<u64>,
    pub blob_file_size: u64,
    pub compression: Compression,
    /// Which references are relocated (garbage collection).
    pub relocate: Relocation,
    /// Bytes read ahead when relocating (0: one read per blob).
    pub readahead: u64,
    /// Blobs written go into the block cache (`prepopulate_blob_cache`
    /// for flushes).
    pub prepopulate: bool,
    pub source: Arc<BlobSource>,
}

/// What the job wrote into blob files and which references its tables
/// hold.
#[derive(Default, Debug)]
pub(crate) struct BlobOutcome {
    pub files: Vec<BlobFileInfo>,
    /// References written into the job's tables.
    pub refs_out: BlobRefs,
    /// Blob bytes read (relocated) and written (whole files).
    pub bytes_read: u64,
    pub bytes_written: u64,
}

impl BlobOutcome {
    /// Adds another range's outcome (subcompactions).
    pub(crate) fn absorb(&mut self, o: BlobOutcome) {
        self.files.extend(o.files);
        add_refs(&mut self.refs_out, &o.refs_out);
        self.bytes_read += o.bytes_read;
        self.bytes_written += o.bytes_written;
    }

    /// The MANIFEST records of the blob files written.
    pub(crate) fn additions(&self) -> Vec<BlobFileAddition> {
        self.files
            .iter()
            .map(|f| BlobFileAddition {
                number: f.number,
                count: f.count,
                bytes: f.bytes,
                file_size: f.file_size,
            })
            .collect()
    }
}

/// Adds `b` into `a`.
pub(crate) fn add_refs(a: &mut BlobRefs, b: &BlobRefs) {
    for (&n, &(c, by)) in b {
        let e = a.entry(n).or_default();
        e.0 += c;
        e.1 += by;
    }
}

/// Garbage per blob file: what the inputs referenced and the outputs do
/// not. References into the job's own new files are never garbage.
pub(crate) fn garbage(refs_in: &BlobRefs, refs_out: &BlobRefs) -> Vec<BlobFileGarbage> {
    refs_in
        .iter()
        .filter_map(|(&number, &(c, b))| {
            let (oc, ob) = refs_out.get(&number).copied().unwrap_or_default();
            let (count, bytes) = (c.saturating_sub(oc), b.saturating_sub(ob));
            (count > 0).then_some(BlobFileGarbage {
                number,
                count,
                bytes,
            })
        })
        .collect()
}

/// A relocation read buffer: bytes `[offset, offset + buf.len())` of blob
/// file `file`.
#[derive(Default)]
struct Readahead {
    file: u64,
    offset: u64,
    buf: Vec<u8>,
}

/// Finished blob files a job keeps open, unsynced, at most (their
/// writeback started); the oldest is synced when one more finishes.
pub(crate) const MAX_UNSYNCED: usize = 4;

/// The blob side of one job's output loop.
pub(crate) struct BlobWriter {
    spec: BlobOutputSpec,
    current: Option<BlobFileBuilder>,
    /// Finished files not synced yet, oldest first (see the module
    /// comment).
    unsynced: std::collections::VecDeque<Box<dyn crate::fs::WritableFile>>,
    outcome: BlobOutcome,
    /// The rewritten entry: internal key with kind `BlobIndex`, and the
    /// encoded index.
    key: Vec<u8>,
    value: Vec<u8>,
    /// Smallest blob file referenced by the table being built (0: none).
    oldest_in_table: u64,
    readahead: Readahead,
}

/// Creates blob file `number` for the job.
pub(crate) type CreateBlob<'a> = dyn FnMut(u64) -> Result<Box<dyn crate::fs::WritableFile>> + 'a;

impl BlobWriter {
    pub(crate) fn new(spec: BlobOutputSpec) -> BlobWriter {
        BlobWriter {
            spec,
            current: None,
            unsynced: std::collections::VecDeque::new(),
            outcome: BlobOutcome::default(),
            key: Vec::new(),
            value: Vec::new(),
            oldest_in_table: 0,
            readahead: Readahead::default(),
        }
    }

    /// The entry to write for `(ikey, value)`: itself, or a `BlobIndex`
    /// entry after writing or relocating its value (`Some`, borrowed from
    /// the writer). Counts the references written.
    pub(crate) fn transform(
        &mut self,
        ikey: &[u8],
        value: &[u8],
        new_number: &mut dyn FnMut() -> u64,
        create: &mut CreateBlob<'_>,
    ) -> Result<Option<(&[u8], &[u8])>> {
        let Some(kind) = ikey
            .len()
            .checked_sub(TRAILER_LEN)
            .and_then(|at| ValueKind::from_u8(ikey[at]))
        else {
            return Ok(None);
        };
        let user_key = &ikey[..ikey.len() - TRAILER_LEN];
        match kind {
            ValueKind::Value
                if self
                    .spec
                    .min_blob_size
                    .is_some_and(|m| value.len() as u64 >= m) =>
            {
                let idx = self.append(user_key, value, new_number, create)?;
                Ok(Some(self.rewritten(ikey, &idx)))
            }
            ValueKind::BlobIndex => {
                let idx = BlobIndex::decode(value).ok_or_else(|| {
                    Error::corruption(
                        "<compaction input>",
                        0,
                        format!("malformed blob index for key {user_key:?}"),
                    )
                })?;
                if self.spec.relocate.relocates(idx.file_number) {
                    let v = self.read_for_relocation(&idx, user_key)?;
                    self.outcome.bytes_read += idx.record_len(user_key.len());
                    if self.spec.min_blob_size.is_some_and(|m| v.len() as u64 >= m) {
                        let new_idx = self.append(user_key, &v, new_number, create)?;
                        Ok(Some(self.rewritten(ikey, &new_idx)))
                    } else {
                        // Blob files are off at this level now, or the
                        // value is below today's `min_blob_size`: it goes
                        // back into the table (RocksDB does the same).
                        self.key.clear();
                        self.key.extend_from_slice(ikey);
                        let at = self.key.len() - TRAILER_LEN;
                        self.key[at] = ValueKind::Value as u8;
                        self.value = v;
                        Ok(Some((&self.key, &self.value)))
                    }
                } else {
                    self.count_ref(&idx, user_key.len());
                    Ok(None)
                }
            }
            _ => Ok(None),
        }
    }

    fn rewritten(&mut self, ikey: &[u8], idx: &BlobIndex) -> (&[u8], &[u8]) {
        self.key.clear();
        self.key.extend_from_slice(ikey);
        let at = self.key.len() - TRAILER_LEN;
        self.key[at] = ValueKind::BlobIndex as u8;
        self.value.clear();
        idx.encode(&mut self.value);
        (&self.key, &self.value)
    }

    fn count_ref(&mut self, idx: &BlobIndex, key_len: usize) {
        let e = self.outcome.refs_out.entry(idx.file_number).or_default();
        e.0 += 1;
        e.1 += idx.record_len(key_len);
        if self.oldest_in_table == 0 || idx.file_number < self.oldest_in_table {
            self.oldest_in_table = idx.file_number;
        }
    }

    /// Appends `value` to the job's current blob file (starting one, or
    /// the next once it is past `blob_file_size`).
    fn append(
        &mut self,
        user_key: &[u8],
        value: &[u8],
        new_number: &mut dyn FnMut() -> u64,
        create: &mut CreateBlob<'_>,
    ) -> Result<BlobIndex> {
        if self
            .current
            .as_ref()
            .is_some_and(|b| b.file_size() >= self.spec.blob_file_size)
        {
            self.finish_current()?;
        }
        let b = match &mut self.current {
            Some(b) => b,
            None => {
                let number = new_number();
                let file = create(number)?;
                self.current.insert(BlobFileBuilder::new(
                    file,
                    blob_file_name(number),
                    number,
                    self.spec.cf,
                    self.spec.compression,
                )?)
            }
        };
        let idx = b.add(user_key, value)?;
        if self.spec.prepopulate {
            self.spec.source.prepopulate(&idx, value);
        }
        self.count_ref(&idx, user_key.len());
        Ok(idx)
    }

    /// Reads a blob being relocated, through a readahead buffer when
    /// `readahead` is set (a relocating compaction reads a blob file's
    /// references mostly in file order).
    fn read_for_relocation(&mut self, idx: &BlobIndex, user_key: &[u8]) -> Result<Vec<u8>> {
        if self.spec.readahead == 0 {
            return Ok(self
                .spec
                .source
                .get_index(idx, user_key, Fill::No)?
                .to_vec());
        }
        let reader = self.spec.source.reader(idx.file_number)?;
        let len = idx.record_len(user_key.len());
        let ra = &mut self.readahead;
        let covered = ra.file == idx.file_number
            && idx.offset >= ra.offset
            && idx.offset + len <= ra.offset + ra.buf.len() as u64;
        if !covered {
            ra.file = idx.file_number;
            ra.offset = idx.offset;
            let _io = crate::io::accounting::scope(crate::io::accounting::Purpose::Blob);
            reader.read_ahead(idx.offset, len.max(self.spec.readahead), &mut ra.buf)?;
        }
        // Counted as a blob read as the unbuffered path counts it.
        let stats = &self.spec.source.stats;
        stats
            .reads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        stats
            .bytes_read
            .fetch_add(len, std::sync::atomic::Ordering::Relaxed);
        let start = (idx.offset - ra.offset) as usize;
        let record = ra.buf.get(start..start + len as usize).ok_or_else(|| {
            Error::corruption(
                reader.name(),
                idx.offset,
                "blob record past the end of the records",
            )
        })?;
        crate::blob::reader::decode_record(
            record,
            idx.file_number,
            idx.offset,
            idx,
            user_key,
            reader.name(),
        )
    }

    /// The smallest blob file number the table just finished references
    /// (0: none); starts counting for the next table.
    pub(crate) fn take_oldest_in_table(&mut self) -> u64 {
        std::mem::take(&mut self.oldest_in_table)
    }

    /// Finishes the open blob file, leaving it unsynced (syncing the
    /// oldest unsynced one past [`MAX_UNSYNCED`]).
    fn finish_current(&mut self) -> Result<()> {
        if let Some(b) = self.current.take() {
            let (info, file) = b.finish_unsynced()?;
            // Whole files, header and footer too, as tables count.
            self.outcome.bytes_written += info.file_size;
            self.outcome.files.push(info);
            self.unsynced.push_back(file);
            while self.unsynced.len() > MAX_UNSYNCED {
                if let Some(mut oldest) = self.unsynced.pop_front() {
                    oldest.sync()?;
                }
            }
        }
        Ok(())
    }

    /// Finishes the open blob file and syncs every file the job wrote;
    /// returns what the job wrote.
    pub(crate) fn finish(mut self) -> Result<BlobOutcome> {
        self.finish_current()?;
        for mut f in self.unsynced.drain(..) {
            f.sync()?;
        }
        Ok(self.outcome)
    }

    /// Finished files not synced yet.
    #[cfg(test)]
    pub(crate) fn unsynced(&self) -> usize {
        self.unsynced.len()
    }

    /// Numbers of the blob files created so far, including an unfinished
    /// one (for removal when the job fails).
    pub(crate) fn created(&self) -> Vec<u64> {
        self.outcome
            .files
            .iter()
            .map(|f| f.number)
            .chain(self.current.as_ref().map(BlobFileBuilder::number))
            .collect()
    }
}

/// Wraps a job's input and counts the blob references it yields (each
/// entry once, as the input moves forward), when `enabled`.
pub(crate) struct BlobRefMeter<'a> {
    inner: &'a mut dyn InternalIterator,
    enabled: bool,
    pub refs: BlobRefs,
}

impl<'a> BlobRefMeter<'a> {
    pub(crate) fn new(inner: &'a mut dyn InternalIterator, enabled: bool) -> Self {
        BlobRefMeter {
            inner,
            enabled,
            refs: BlobRefs::new(),
        }
    }

    fn count(&mut self) {
        if !self.enabled || !self.inner.valid() {
            return;
        }
        let Some(p) = parse_internal_key(self.inner.key()) else {
            return;
        };
        if p.kind == ValueKind::BlobIndex {
            // A malformed index fails the job where it is read; here it
            // counts nothing.
            if let Some(idx) = BlobIndex::decode(self.inner.value()) {
                let e = self.refs.entry(idx.file_number).or_default();
                e.0 += 1;
                e.1 += idx.record_len(p.user_key.len());
            }
        }
    }
}

impl InternalIterator for BlobRefMeter<'_> {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.count();
    }
    // A job's input only moves forward (from `seek_to_first` or a
    // subcompaction's `seek`); backward moves pass through uncounted.
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.count();
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target);
    }
    fn next(&mut self) {
        self.inner.next();
        self.count();
    }
    fn prev(&mut self) {
        self.inner.prev();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        self.inner.status()
    }
}

#[cfg(test)]
mod tests;
