//! A narrow window onto the on-disk decoders and writers, for the decoder
//! harness crate `crates/shale-fuzz` (whose checks cargo-fuzz runs from
//! `/fuzz` and `cargo test -p shale-fuzz` runs over the seed corpus).
//! Compiled with feature `testing` (this crate's own tests enable it
//! through its dev-dependency on itself, so `cargo test -p shale`
//! type-checks it). Hidden from the docs; not a stable API.
//!
//! Invariants: this module holds no checks and no logic of its own. Each
//! item forwards to exactly one engine type or function and behaves as it
//! does (same results, same `Corruption` errors); the wrappers exist only
//! because the engine's types are crate-private. Internal keys, varints and
//! checksums are not exposed: the harness encodes them itself from
//! `docs/format/`, which keeps its reference decoders independent.
//!
//! What it exposes: [`Block`] and [`Sst`] (SST block and table readers) with
//! one [`Cursor`] over their entries, [`decode_block_handle`],
//! [`SstWriter`]; [`LogReader`],
//! [`replay`] and [`LogWriter`] (the log format shared by WALs and
//! MANIFESTs); the crate-private parts of [`WriteBatch`] (`batch_*`);
//! [`MemTable`] insertion; [`VersionEdit`] decode/encode; blob files
//! ([`BlobIndex`], [`blob_decode_header`], [`blob_decode_record`],
//! [`blob_decode_footer`], [`BlobReader`], [`BlobWriter`]); and the FROZEN
//! format constants the checksum-repair helpers need.
//!
//! Thread-safety: that of the wrapped types; no shared state here.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::base::{compare_internal, SeqNo, ValueKind};
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::fs::{RandomAccessFile, SequentialFile, WritableFile};
use crate::iter::InternalIterator;
use crate::sst::{Compression, TableOptions};
use crate::wal::{ReadOutcome, WalRecoveryMode};

pub use crate::base::MAX_SEQNO;

/// SST footer magic number (docs/format/sst.md). FROZEN.
pub const SST_MAGIC: u64 = crate::sst::MAGIC;
/// SST format version written in the footer (docs/format/sst.md).
pub const SST_FORMAT_VERSION: u32 = crate::sst::FORMAT_VERSION;
/// Size of a log block (docs/format/wal.md). FROZEN.
pub const WAL_BLOCK_SIZE: usize = crate::wal::BLOCK_SIZE;
/// Size of a log record header (docs/format/wal.md). FROZEN.
pub const WAL_HEADER_LEN: usize = crate::wal::HEADER_LEN;
/// The `file` that batch decoding errors name before `batch_validate`
/// relocates them to the log holding the batch.
pub const BATCH_ERROR_FILE: &str = crate::batch::BATCH_ERROR_FILE;

/// The engine's total order on internal keys.
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    compare_internal(a, b)
}

// ---------------------------------------------------------------- SSTs

/// An iterator over the internal entries of a [`Block`] or an [`Sst`].
pub struct Cursor(Box<dyn InternalIterator>);

impl Cursor {
    /// True when positioned at an entry.
    pub fn valid(&self) -> bool {
        self.0.valid()
    }
    /// Positions at the first entry.
    pub fn seek_to_first(&mut self) {
        self.0.seek_to_first()
    }
    /// Positions at the last entry.
    pub fn seek_to_last(&mut self) {
        self.0.seek_to_last()
    }
    /// Positions at the first entry with internal key ≥ `target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.0.seek(target)
    }
    /// Positions at the last entry with internal key ≤ `target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) {
        self.0.seek_for_prev(target)
    }
    /// Moves to the next entry. Requires `valid()`.
    pub fn next(&mut self) {
        self.0.next()
    }
    /// Moves to the previous entry. Requires `valid()`.
    pub fn prev(&mut self) {
        self.0.prev()
    }
    /// The current internal key. Requires `valid()`.
    pub fn key(&self) -> &[u8] {
        self.0.key()
    }
    /// The current value. Requires `valid()`.
    pub fn value(&self) -> &[u8] {
        self.0.value()
    }
    /// The error that made the iterator invalid, if any.
    pub fn status(&self) -> Result<()> {
        self.0.status()
    }
}

/// One block's contents (uncompressed, without its trailer), parsed by
/// `sst::Block::new`.
pub struct Block(Arc<crate::sst::Block>);

impl Block {
    /// Checks the restart array; errors name `file` and `offset`.
    pub fn new(data: Vec<u8>, file: &str, offset: u64) -> Result<Block> {
        crate::sst::Block::new(data, Arc::from(file), offset).map(|b| Block(Arc::new(b)))
    }
    /// A `BlockIterator` over the block.
    pub fn iter(&self) -> Cursor {
        Cursor(Box::new(crate::sst::BlockIterator::new(Arc::clone(
            &self.0,
        ))))
    }
}

/// `BlockHandle::decode_from`: the (offset, size) varint pair at the front
/// of `src`, advancing it; `None` when truncated or overlong.
pub fn decode_block_handle(src: &mut &[u8]) -> Option<(u64, u64)> {
    crate::sst::BlockHandle::decode_from(src).map(|h| (h.offset, h.size))
}

/// An open SST (`sst::Table`), without a block cache.
pub struct Sst(Arc<crate::sst::Table>);

impl Sst {
    /// `Table::open`: footer, metaindex, properties, index and filter.
    pub fn open(file: Arc<dyn RandomAccessFile>, file_name: &str, file_number: u64) -> Result<Sst> {
        crate::sst::Table::open(file, file_name.to_string(), file_number, None, false).map(Sst)
    }
    /// A two-level `TableIterator` (not filling a cache).
    pub fn iter(&self) -> Cursor {
        Cursor(Box::new(self.0.iter(false)))
    }
    /// `Table::get`: the first entry at or after `lookup_ikey` (an internal
    /// key of at least 8 bytes), as (internal key, value).
    pub fn get(&self, lookup_ikey: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let e = self.0.get(lookup_ikey, false)?;
        Ok(e.map(|e| (e.ikey().to_vec(), e.value().to_vec())))
    }
    /// `Table::approximate_offset_of`.
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        self.0.approximate_offset_of(ikey)
    }
    /// `Table::memory_usage`.
    pub fn memory_usage(&self) -> usize {
        self.0.memory_usage()
    }
    /// `Table::may_contain` (the filter, when there is one), consulting a
    /// prefix-only filter when `prefix` is the table's extractor.
    pub fn may_contain(
        &self,
        user_key: &[u8],
        prefix: Option<crate::base::PrefixExtractor>,
    ) -> Result<bool> {
        self.0.may_contain(user_key, prefix)
    }
    /// `Table::may_contain_prefix`.
    pub fn may_contain_prefix(
        &self,
        prefix: &[u8],
        extractor: crate::base::PrefixExtractor,
    ) -> Result<bool> {
        self.0.may_contain_prefix(prefix, extractor)
    }
}

/// What an [`SstWriter`] is built with: `sst::TableOptions` with
/// `block_restart_bytes` 0 (restarts by count only).
#[derive(Debug, Clone)]
pub struct SstWriterOptions {
    /// Target uncompressed size of a data block.
    pub block_size: usize,
    /// Entries between restart points in data blocks.
    pub block_restart_interval: usize,
    /// Bloom filter bits per key; 0 writes no filter.
    pub bloom_bits_per_key: u32,
    /// Prefixes added to the filter (and recorded), if any.
    pub prefix_extractor: Option<crate::base::PrefixExtractor>,
    /// Whole keys in the filter (always without an extractor).
    pub whole_key_filtering: bool,
    /// Compression of data and index blocks.
    pub compression: Compression,
    /// The `shale.db.id` property.
    pub db_id: String,
    /// Aligned, zero-padded data blocks (`CfOptions::block_align`; the
    /// caller keeps `compression` none and `block_size` a power of two).
    pub block_align: bool,
}

/// `sst::TableBuilder`, for building seed tables.
pub struct SstWriter(crate::sst::TableBuilder);

impl SstWriter {
    /// Starts a table in `file`, which must be empty.
    pub fn new(
        file: Box<dyn WritableFile>,
        file_name: &str,
        file_number: u64,
        o: SstWriterOptions,
    ) -> SstWriter {
        let opts = TableOptions {
            block_size: o.block_size,
            block_restart_interval: o.block_restart_interval,
            block_restart_bytes: 0,
            bloom_bits_per_key: f64::from(o.bloom_bits_per_key),
            prefix_extractor: o.prefix_extractor,
            whole_key_filtering: o.whole_key_filtering,
            compression: o.compression,
            db_id: o.db_id,
            column_family: None,
            block_align: o.block_align,
            block_size_deviation: 10,
        };
        SstWriter(crate::sst::TableBuilder::new(
            file,
            file_name.to_string(),
            file_number,
            opts,
        ))
    }
    /// Adds an entry; internal keys must come in increasing order.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.0.add(ikey, value)
    }
    /// Writes the meta blocks and the footer.
    pub fn finish(self) -> Result<()> {
        self.0.finish().map(|_| ())
    }
}

// ---------------------------------------------------------------- logs

/// What [`LogReader::read_record`] found (`wal::ReadOutcome`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogRecord {
    /// A complete record starting at `offset`; the payload is in `out`.
    Record {
        /// File offset of the record's first fragment.
        offset: u64,
    },
    /// Clean end of the log.
    Eof,
    /// The log ends inside the record at `offset`; next comes `Eof`.
    TornTail {
        /// File offset of the incomplete record.
        offset: u64,
    },
    /// `dropped_bytes` bytes from `offset` were skipped.
    Corrupt {
        /// File offset of the first skipped byte.
        offset: u64,
        /// What check failed.
        what: String,
        /// Number of bytes skipped.
        dropped_bytes: u64,
    },
}

impl From<ReadOutcome> for LogRecord {
    fn from(o: ReadOutcome) -> LogRecord {
        match o {
            ReadOutcome::Record { offset } => LogRecord::Record { offset },
            ReadOutcome::Eof => LogRecord::Eof,
            ReadOutcome::TornTail { offset } => LogRecord::TornTail { offset },
            ReadOutcome::Corrupt {
                offset,
                what,
                dropped_bytes,
            } => LogRecord::Corrupt {
                offset,
                what,
                dropped_bytes,
            },
        }
    }
}

/// `wal::LogReader`: the records of one log file.
pub struct LogReader(crate::wal::LogReader);

impl LogReader {
    /// Reads log `log_number` (which seeds the record checksums) from `file`.
    pub fn new(file: Box<dyn SequentialFile>, file_name: &str, log_number: u64) -> LogReader {
        LogReader(crate::wal::LogReader::new(
            file,
            file_name.to_string(),
            log_number,
        ))
    }
    /// The next record (payload into `out`) or event.
    pub fn read_record(&mut self, out: &mut Vec<u8>) -> Result<LogRecord> {
        self.0.read_record(out).map(LogRecord::from)
    }
    /// Bytes of the file consumed so far.
    pub fn consumed(&self) -> u64 {
        self.0.consumed()
    }
}

/// What [`replay`] reported (`wal::ReplayReport`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaySummary {
    /// Records handed to the callback and accepted by it.
    pub records: u64,
    /// Number of stretches of the log that were skipped.
    pub dropped: usize,
    /// Replay stopped at damage (later logs must not be replayed).
    pub stopped_early: bool,
}

/// `wal::replay`: recovery's walk over one log under `mode`.
pub fn replay(
    reader: &mut LogReader,
    mode: WalRecoveryMode,
    is_last_log: bool,
    on_record: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<ReplaySummary> {
    let r = crate::wal::replay(&mut reader.0, mode, is_last_log, on_record)?;
    Ok(ReplaySummary {
        records: r.records,
        dropped: r.dropped.len(),
        stopped_early: r.stopped_early,
    })
}

/// `wal::LogWriter`, for building seed logs.
pub struct LogWriter(crate::wal::LogWriter);

impl LogWriter {
    /// Writes log `log_number` into `file`, which must be empty.
    pub fn new(file: Box<dyn WritableFile>, log_number: u64) -> LogWriter {
        LogWriter(crate::wal::LogWriter::new(file, log_number))
    }
    /// Appends one logical record.
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        self.0.add_record(payload)
    }
    /// Flushes buffered bytes to the file.
    pub fn flush(&mut self) -> Result<()> {
        self.0.flush()
    }
}

// ---------------------------------------------------------------- batches

/// One decoded record of a batch (`batch::BatchEntry`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchRecord<'a> {
    kind: ValueKind,
    /// Column family id (0 = default).
    pub cf: u32,
    /// The user key.
    pub key: &'a [u8],
    /// The value; empty for deletions.
    pub value: &'a [u8],
}

impl BatchRecord<'_> {
    /// True for a `Value` record; false for a deletion.
    pub fn is_value(&self) -> bool {
        self.kind == ValueKind::Value
    }
}

/// `WriteBatch::push_entry`: appends `r` as it was decoded, whatever its
/// kind.
pub fn batch_push_record(b: &mut WriteBatch, r: &BatchRecord<'_>) {
    b.push_entry(&crate::batch::BatchEntry {
        kind: r.kind,
        cf: r.cf,
        key: r.key,
        value: r.value,
    })
}

/// `WriteBatch::from_data`: a batch over bytes read from a log (header only
/// checked).
pub fn batch_from_data(data: Vec<u8>) -> Result<WriteBatch> {
    WriteBatch::from_data(data)
}

/// `WriteBatch::iter`: its records, decoded lazily; an error ends them.
pub fn batch_records(b: &WriteBatch) -> impl Iterator<Item = Result<BatchRecord<'_>>> {
    b.iter().map(|e| {
        e.map(|e| BatchRecord {
            kind: e.kind,
            cf: e.cf,
            key: e.key,
            value: e.value,
        })
    })
}

/// `WriteBatch::validate`: every record decodes, the count matches and the
/// sequence numbers fit; errors name `file` and `offset`.
pub fn batch_validate(b: &WriteBatch, file: &str, offset: u64) -> Result<()> {
    b.validate(file, offset)
}

/// The batch's first sequence number.
pub fn batch_sequence(b: &WriteBatch) -> SeqNo {
    b.sequence()
}

/// Sets the batch's first sequence number.
pub fn batch_set_sequence(b: &mut WriteBatch, seq: SeqNo) {
    b.set_sequence(seq)
}

/// The record count in the batch header.
pub fn batch_count(b: &WriteBatch) -> u32 {
    b.count()
}

/// The batch's encoding (docs/format/batch.md), as written to a log.
pub fn batch_data(b: &WriteBatch) -> &[u8] {
    b.data()
}

/// `WriteBatch::put_cf` with a raw family id.
pub fn batch_put_cf(b: &mut WriteBatch, cf: u32, key: &[u8], value: &[u8]) {
    b.put_cf(&cf, key, value)
}

/// `WriteBatch::delete_cf` with a raw family id.
pub fn batch_delete_cf(b: &mut WriteBatch, cf: u32, key: &[u8]) {
    b.delete_cf(&cf, key)
}

// ---------------------------------------------------------------- memtable

/// A `memtable::MemTable`, for inserting batches the way recovery does.
pub struct MemTable(crate::memtable::MemTable);

impl MemTable {
    /// An empty memtable.
    pub fn new() -> MemTable {
        MemTable(crate::memtable::MemTable::new(0))
    }
    /// `MemTable::add` of `r` at `seq`. Requires `seq <= MAX_SEQNO` and
    /// (user key, seq) not added before, as the engine's does.
    pub fn add(&self, seq: SeqNo, r: &BatchRecord<'_>) {
        self.0.add(seq, r.kind, r.key, r.value)
    }
}

impl Default for MemTable {
    fn default() -> Self {
        MemTable::new()
    }
}

// ---------------------------------------------------------------- MANIFEST

/// One decoded MANIFEST record (`version::VersionEdit`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionEdit(crate::version::VersionEdit);

impl VersionEdit {
    /// `VersionEdit::decode`; errors name `file` and `offset`.
    pub fn decode(src: &[u8], file: &str, offset: u64) -> Result<VersionEdit> {
        crate::version::VersionEdit::decode(src, file, offset).map(VersionEdit)
    }
    /// `VersionEdit::encode`.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.0.encode(&mut v);
        v
    }
    /// Number of file additions plus deletions in the edit.
    pub fn file_changes(&self) -> usize {
        self.0.new_files.len() + self.0.deleted_files.len()
    }
}

// ---------------------------------------------------------------- blob files

/// Blob file magic, at both ends of the file (docs/format/blob.md). FROZEN.
pub const BLOB_MAGIC: u32 = crate::blob::format::BLOB_MAGIC;
/// Length of a blob file header (docs/format/blob.md). FROZEN.
pub const BLOB_HEADER_LEN: usize = crate::blob::format::HEADER_LEN;
/// Length of a blob record header (docs/format/blob.md). FROZEN.
pub const BLOB_RECORD_HEADER_LEN: usize = crate::blob::format::RECORD_HEADER_LEN;
/// Length of a blob file footer (docs/format/blob.md). FROZEN.
pub const BLOB_FOOTER_LEN: usize = crate::blob::format::FOOTER_LEN;

/// A reference to a value in a blob file (`blob::BlobIndex`), with its
/// fields public so that the harness can aim it anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobIndex {
    /// Number of the blob file.
    pub file_number: u64,
    /// Offset of the record in the blob file.
    pub offset: u64,
    /// Stored length of the value.
    pub size: u64,
    /// Compression type byte of the stored value.
    pub compression: u8,
}

impl From<crate::blob::BlobIndex> for BlobIndex {
    fn from(i: crate::blob::BlobIndex) -> BlobIndex {
        BlobIndex {
            file_number: i.file_number,
            offset: i.offset,
            size: i.size,
            compression: i.compression,
        }
    }
}

impl BlobIndex {
    fn engine(&self) -> crate::blob::BlobIndex {
        crate::blob::BlobIndex {
            file_number: self.file_number,
            offset: self.offset,
            size: self.size,
            compression: self.compression,
        }
    }
    /// `BlobIndex::decode`: `None` for anything malformed.
    pub fn decode(src: &[u8]) -> Option<BlobIndex> {
        crate::blob::BlobIndex::decode(src).map(BlobIndex::from)
    }
    /// `BlobIndex::encode`.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::new();
        self.engine().encode(&mut v);
        v
    }
    /// `BlobIndex::record_len`.
    pub fn record_len(&self, key_len: usize) -> u64 {
        self.engine().record_len(key_len)
    }
}

/// What `blob::format::decode_header` read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHeader {
    /// The file's compression type byte.
    pub compression: u8,
    /// The column family id.
    pub column_family: u32,
    /// The file number.
    pub file_number: u64,
}

/// `blob::format::decode_header` of a file's first bytes; errors name
/// `file` at offset 0.
pub fn blob_decode_header(buf: &[u8], file: &str) -> Result<BlobHeader> {
    crate::blob::format::decode_header(buf, file).map(|h| BlobHeader {
        compression: h.compression,
        column_family: h.column_family,
        file_number: h.file_number,
    })
}

/// `blob::format::decode_footer` of a file's last bytes, which start at
/// `offset`: (record count, record bytes).
pub fn blob_decode_footer(buf: &[u8], file: &str, offset: u64) -> Result<(u64, u64)> {
    crate::blob::format::decode_footer(buf, file, offset).map(|f| (f.record_count, f.record_bytes))
}

/// `blob::reader::decode_record`: the value of the record `buf` (read at
/// `offset` of blob file `file_number`) that `idx` points to for
/// `user_key`.
pub fn blob_decode_record(
    buf: &[u8],
    file_number: u64,
    offset: u64,
    idx: &BlobIndex,
    user_key: &[u8],
    file: &str,
) -> Result<Vec<u8>> {
    crate::blob::reader::decode_record(buf, file_number, offset, &idx.engine(), user_key, file)
}

/// An open blob file (`blob::BlobFileReader`).
pub struct BlobReader(crate::blob::BlobFileReader);

impl BlobReader {
    /// `BlobFileReader::open`: header and footer checked.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_name: &str,
        number: u64,
    ) -> Result<BlobReader> {
        crate::blob::BlobFileReader::open(file, file_name, number).map(BlobReader)
    }
    /// `BlobFileReader::read_shared`, copied out.
    pub fn read(&self, idx: &BlobIndex, user_key: &[u8]) -> Result<Vec<u8>> {
        self.0
            .read_shared(&idx.engine(), user_key)
            .map(|v| v.to_vec())
    }
    /// `BlobFileReader::verify_all`: the number of records.
    pub fn verify_all(&self) -> Result<u64> {
        self.0.verify_all()
    }
    /// Record count from the footer.
    pub fn record_count(&self) -> u64 {
        self.0.record_count()
    }
    /// Record bytes from the footer.
    pub fn total_bytes(&self) -> u64 {
        self.0.total_bytes()
    }
}

/// `blob::BlobFileBuilder`, for building seed files.
pub struct BlobWriter(crate::blob::BlobFileBuilder);

impl BlobWriter {
    /// Writes the header of blob file `number` into `file`, which must be
    /// empty.
    pub fn new(
        file: Box<dyn WritableFile>,
        file_name: &str,
        number: u64,
        cf: u32,
        compression: Compression,
    ) -> Result<BlobWriter> {
        crate::blob::BlobFileBuilder::new(file, file_name.to_string(), number, cf, compression)
            .map(BlobWriter)
    }
    /// Appends a record; returns its index.
    pub fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<BlobIndex> {
        self.0.add(user_key, value).map(BlobIndex::from)
    }
    /// Writes the footer and syncs.
    pub fn finish(self) -> Result<()> {
        self.0.finish().map(|_| ())
    }
}
