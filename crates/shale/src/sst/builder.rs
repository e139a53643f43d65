//! [`TableBuilder`]: writes one SST from internal keys added in increasing
//! order. File layout (see `docs/format/sst.md`):
//!
//! ```text
//! data block 0 .. data block n-1   (each followed by its 5-byte trailer)
//! filter block                     (when bloom_bits_per_key > 0; whole
//!                                   keys and/or prefixes)
//! index block
//! properties block
//! metaindex block
//! footer (60 bytes)
//! ```
//!
//! A data block is cut when its size estimate reaches `block_size`, or
//! before an entry that would take it past `block_size` once it is more
//! than `100 - block_size_deviation` percent full (RocksDB's rule: blocks
//! end near `block_size`, not an entry past it); with `block_align`
//! instead before any entry that would take it (with its trailer) past
//! `block_size` (a power of two), and zeros pad it to the
//! next multiple of the alignment unit (`TableOptions::alignment`), so every
//! data block starts at a multiple of the unit and a block of at most one
//! page is one page read. Its
//! index entry is written when the next key arrives (or at `finish`), so
//! the index key can be a short separator between the two blocks.
//!
//! Buffers (block builders, compression output, key scratch) are reused
//! across blocks; `add` does not allocate once they reach their working
//! size (the filter's hash list grows by one u64 per user key).
//!
//! After any error the builder refuses further work and returns the same
//! error; the caller deletes the file.
//!
//! Thread-safety: owned by one thread (flush or compaction job).

use std::cmp::Ordering;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::{SystemTime, UNIX_EPOCH};

use xxhash_rust::xxh3::xxh3_128;

use crate::base::{
    compare_internal, extract_user_key, make_internal_key, pack_trailer, parse_internal_key,
    ValueKind, KIND_FOR_SEEK, MAX_SEQNO, TRAILER_LEN,
};
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::range_del::Fragment;
use crate::sst::block_builder::BlockBuilder;
use crate::sst::compression::{Compressor, TYPE_NONE};
use crate::sst::filter::FilterBuilder;
use crate::sst::format::{
    make_trailer, BlockHandle, Footer, BLOCK_TRAILER_LEN, FORMAT_VERSION, FORMAT_VERSION_INTERNAL,
};
use crate::sst::properties::TableProperties;
use crate::sst::{
    TableOptions, METAINDEX_FILTER, METAINDEX_PREFIX_FILTER, METAINDEX_PROPERTIES,
    METAINDEX_RANGE_DEL,
};

/// What `finish` reports about the written table.
#[derive(Debug, Clone)]
pub(crate) struct BuiltTable {
    pub file_size: u64,
    pub num_entries: u64,
    /// Smallest internal key (empty for an empty table).
    pub smallest: Vec<u8>,
    /// Largest internal key (empty for an empty table).
    pub largest: Vec<u8>,
    pub smallest_seq: u64,
    pub largest_seq: u64,
    pub props: TableProperties,
    /// The user keys its range tombstones span: the first one's start and
    /// the last one's (exclusive) end; `None` without range tombstones.
    pub range_del_span: Option<(Vec<u8>, Vec<u8>)>,
}

/// Appends blocks with their trailers and tracks the file offset.
struct BlockWriter {
    file: Box<dyn WritableFile>,
    offset: u64,
    checksum_base: u32,
    compressor: Compressor,
    compressed: Vec<u8>,
}

impl BlockWriter {
    /// Writes `raw`, compressed when `compress` and worth it.
    fn write(&mut self, raw: &[u8], compress: bool) -> Result<BlockHandle> {
        let ctype = if compress {
            self.compressor.compress(raw, &mut self.compressed)
        } else {
            TYPE_NONE
        };
        let stored: &[u8] = if ctype == TYPE_NONE {
            raw
        } else {
            &self.compressed
        };
        let handle = BlockHandle {
            offset: self.offset,
            size: stored.len() as u64,
        };
        let trailer = make_trailer(stored, ctype, self.offset, self.checksum_base);
        self.file.append(stored)?;
        self.file.append(&trailer)?;
        self.offset = handle.end_with_trailer();
        Ok(handle)
    }

    /// Appends zeros up to the next multiple of `unit` (a power of two);
    /// returns how many. No block handle points into them.
    fn pad_to(&mut self, unit: u64) -> Result<u64> {
        const ZEROS: [u8; 4096] = [0; 4096];
        let pad = self.offset.next_multiple_of(unit) - self.offset;
        let mut left = pad as usize;
        while left > 0 {
            let n = left.min(ZEROS.len());
            self.file.append(&ZEROS[..n])?;
            left -= n;
        }
        self.offset += pad;
        Ok(pad)
    }
}

/// RocksDB's `block_size_deviation_limit_`: `block_size` less
/// `deviation` percent, rounded up; 0 (no early cut) when `deviation` is
/// 0 or at least 100.
pub(crate) fn deviation_limit(block_size: usize, deviation: u32) -> usize {
    if deviation == 0 || deviation >= 100 {
        return 0;
    }
    (block_size * (100 - deviation as usize)).div_ceil(100)
}

/// Builds one SST. See the module comment.
pub(crate) struct TableBuilder {
    w: BlockWriter,
    file_name: String,
    file_number: u64,
    opts: TableOptions,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter: Option<FilterBuilder>,
    /// Handle of the last data block, whose index entry waits for the next key.
    pending_handle: Option<BlockHandle>,
    last_key: Vec<u8>,
    smallest: Vec<u8>,
    /// Scratch for index keys and handles.
    sep: Vec<u8>,
    handle_buf: Vec<u8>,
    props: TableProperties,
    error: Option<Error>,
    /// Range tombstone fragments for the range-deletion block (disjoint,
    /// sorted).
    range_dels: Vec<Fragment>,
    /// Bytes above which a block is cut before an entry that would take
    /// it past `block_size` (`block_size_deviation`; 0: never).
    deviation_limit: usize,
}

impl TableBuilder {
    /// Starts a table in `file` (empty, freshly created).
    pub(crate) fn new(
        file: Box<dyn WritableFile>,
        file_name: String,
        file_number: u64,
        opts: TableOptions,
    ) -> TableBuilder {
        debug_assert!(file.is_empty());
        let filter =
            (opts.bloom_bits_per_key > 0.0).then(|| FilterBuilder::new(opts.bloom_bits_per_key));
        let props = TableProperties {
            prefix_extractor: opts.prefix_extractor.map(|e| e.name()).unwrap_or_default(),
            smallest_seqno: u64::MAX,
            compression_name: opts.compression.name().to_string(),
            file_number,
            format_version: u64::from(FORMAT_VERSION_INTERNAL),
            db_id: opts.db_id.clone(),
            column_family: opts.column_family.clone(),
            ..TableProperties::default()
        };
        TableBuilder {
            w: BlockWriter {
                offset: file.len(),
                file,
                checksum_base: random_u64() as u32,
                compressor: Compressor::new(opts.compression),
                compressed: Vec::new(),
            },
            file_name,
            file_number,
            data_block: BlockBuilder::with_restart_bytes(
                opts.block_restart_interval,
                opts.block_restart_bytes,
            ),
            index_block: BlockBuilder::new(1),
            filter,
            pending_handle: None,
            last_key: Vec::new(),
            smallest: Vec::new(),
            sep: Vec::new(),
            handle_buf: Vec::new(),
            props,
            error: None,
            range_dels: Vec::new(),
            deviation_limit: deviation_limit(opts.block_size, opts.block_size_deviation),
            opts,
        }
    }

    /// Bytes the builder holds until `finish`: the current data block, the
    /// index, the filter's key hashes and the compression buffer.
    pub(crate) fn memory_usage(&self) -> usize {
        self.data_block.memory_usage()
            + self.index_block.memory_usage()
            + self.filter.as_ref().map_or(0, FilterBuilder::memory_usage)
            + self.w.compressed.capacity()
    }

    /// Adds an entry. Requires `ikey` to be a valid internal key greater
    /// (by `compare_internal`) than every key added before.
    pub(crate) fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        debug_assert!(
            self.props.num_entries == 0 || compare_internal(&self.last_key, ikey) == Ordering::Less,
            "keys added out of order"
        );
        if u32::try_from(ikey.len()).is_err() || u32::try_from(value.len()).is_err() {
            return Err(Error::InvalidArgument(format!(
                "SST entries are limited to 4 GiB keys and values (key {} bytes, value {} bytes)",
                ikey.len(),
                value.len()
            )));
        }
        let parsed = parse_internal_key(ikey);
        debug_assert!(parsed.is_some(), "not an internal key");
        if self.block_almost_full(ikey, value) {
            // Cut before the entry. Before `last_key` moves on: the
            // block's index separator lies between its last key and this
            // one.
            self.flush_data_block()?;
        }
        if let Some(h) = self.pending_handle.take() {
            shortest_separator(&self.last_key, ikey, &mut self.sep);
            self.add_index_entry(h);
        }
        if let Some(f) = &mut self.filter {
            let user_key = extract_user_key(ikey);
            match self.opts.prefix_extractor {
                None => f.add(user_key),
                Some(e) => {
                    if let Some(p) = e.prefix(user_key) {
                        f.add_prefix(p);
                    }
                    if self.opts.whole_key_filtering {
                        f.add(user_key);
                    }
                }
            }
        }
        if self.props.num_entries == 0 {
            self.smallest.clear();
            self.smallest.extend_from_slice(ikey);
        }
        if let Some(p) = parsed {
            self.props.smallest_seqno = self.props.smallest_seqno.min(p.seq);
            self.props.largest_seqno = self.props.largest_seqno.max(p.seq);
            if matches!(p.kind, ValueKind::Deletion | ValueKind::SingleDeletion) {
                self.props.num_deletions += 1;
            }
            if p.kind == ValueKind::ValueWithExpiry {
                if let Some((_, e)) = crate::base::expiry::split_expiring(value) {
                    self.props.expiry_entries += 1;
                    self.props.expiry_max = self.props.expiry_max.max(e);
                }
            }
        }
        self.props.num_entries += 1;
        self.props.raw_key_size += ikey.len() as u64;
        self.props.raw_value_size += value.len() as u64;
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
        self.data_block.add(ikey, value);
        if self.data_block.size_estimate() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Whether the current data block must be cut before `ikey`/`value`
    /// (RocksDB's `FlushBlockBySizePolicy::BlockAlmostFull`): with
    /// `block_align` when the entry would push the block and its trailer
    /// past `block_size`; otherwise when it would push the block past
    /// `block_size` and the block already holds more than `100 -
    /// block_size_deviation` percent of it. An empty block is never cut.
    fn block_almost_full(&self, ikey: &[u8], value: &[u8]) -> bool {
        if self.data_block.is_empty() {
            return false;
        }
        let after = self.data_block.size_estimate_after(ikey, value);
        if self.opts.block_align {
            return after + BLOCK_TRAILER_LEN > self.opts.block_size;
        }
        let limit = self.deviation_limit;
        limit > 0 && after > self.opts.block_size && self.data_block.size_estimate() > limit
    }

    fn add_index_entry(&mut self, h: BlockHandle) {
        self.handle_buf.clear();
        h.encode_to(&mut self.handle_buf);
        self.index_block.add(&self.sep, &self.handle_buf);
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let res = self.w.write(self.data_block.finish(), true);
        let h = self.check(res)?;
        let padding = if self.opts.block_align {
            let res = self.w.pad_to(self.opts.alignment() as u64);
            self.check(res)?
        } else {
            0
        };
        self.data_block.reset();
        self.props.num_data_blocks += 1;
        self.props.data_size += h.end_with_trailer() - h.offset + padding;
        self.pending_handle = Some(h);
        Ok(())
    }

    /// Latches an error so later calls return it too.
    fn check<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            self.error = Some(e.clone());
        }
        r
    }

    /// Sets the range tombstones of the table: disjoint, sorted fragments
    /// (their keys may lie outside the point entries' range; the table's
    /// bounds grow to cover them).
    pub(crate) fn set_range_dels(&mut self, frags: Vec<Fragment>) {
        debug_assert!(frags.windows(2).all(|w| w[0].end <= w[1].start));
        debug_assert!(frags.iter().all(|f| f.start < f.end && !f.seqs.is_empty()));
        self.range_dels = frags;
    }

    /// Marks the table as an external file (`SstFileWriter`): the
    /// external-file properties and format version 3.
    pub(crate) fn set_external(&mut self) {
        self.props.external_version = 1;
        self.props.external_global_seqno = 0;
        self.props.format_version = u64::from(FORMAT_VERSION);
    }

    /// True when the table would hold nothing at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.props.num_entries == 0 && self.range_dels.is_empty()
    }

    /// The file's name (for errors).
    pub(crate) fn name(&self) -> &str {
        &self.file_name
    }

    /// Bytes written so far plus the open data block.
    pub(crate) fn estimated_file_size(&self) -> u64 {
        self.w.offset + self.data_block.size_estimate() as u64
    }

    #[cfg(test)]
    pub(crate) fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    /// Records `name` as the prefix extractor (tests of unknown names).
    #[cfg(test)]
    pub(crate) fn set_prefix_name(&mut self, name: &str) {
        self.props.prefix_extractor = name.to_string();
    }

    /// Writes the open data block, filter, index, properties, metaindex
    /// and footer, then syncs the file (jobs use
    /// [`finish_unsynced`](Self::finish_unsynced) and sync their outputs
    /// together); tests and the fuzzing surface (`shale::testing`).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn finish(mut self) -> Result<BuiltTable> {
        self.finish_inner(true)
    }

    /// [`finish`](Self::finish) without the sync: every byte is handed to
    /// the OS and the file is returned, for the caller to sync before
    /// anything names the table (a job with many outputs syncs them
    /// together: see `build::writer`).
    pub(crate) fn finish_unsynced(mut self) -> Result<(BuiltTable, Box<dyn WritableFile>)> {
        let built = self.finish_inner(false)?;
        Ok((built, self.w.file))
    }

    fn finish_inner(&mut self, sync: bool) -> Result<BuiltTable> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.flush_data_block()?;
        if let Some(h) = self.pending_handle.take() {
            short_successor(&self.last_key, &mut self.sep);
            self.add_index_entry(h);
        }
        let mut scratch = Vec::new();
        let mut meta: Vec<(&str, BlockHandle)> = Vec::new();

        if let Some(f) = &mut self.filter {
            f.finish(&mut scratch);
            let res = self.w.write(&scratch, false);
            let h = self.check(res)?;
            self.props.filter_size = h.end_with_trailer() - h.offset;
            let prefix_only =
                self.opts.prefix_extractor.is_some() && !self.opts.whole_key_filtering;
            meta.push((
                if prefix_only {
                    METAINDEX_PREFIX_FILTER
                } else {
                    METAINDEX_FILTER
                },
                h,
            ));
        }

        // Range-deletion block: (start, seq, RangeDeletion) -> end, one
        // entry per fragment and sequence number, in internal-key order.
        let mut range_bounds: Option<(Vec<u8>, Vec<u8>)> = None;
        if !self.range_dels.is_empty() {
            let mut rb = BlockBuilder::new(1);
            let mut ikey = Vec::new();
            for f in &self.range_dels {
                for &seq in &f.seqs {
                    ikey.clear();
                    make_internal_key(&mut ikey, &f.start, seq, ValueKind::RangeDeletion as u8);
                    rb.add(&ikey, &f.end);
                    self.props.num_range_deletions += 1;
                    self.props.smallest_seqno = self.props.smallest_seqno.min(seq);
                    self.props.largest_seqno = self.props.largest_seqno.max(seq);
                }
            }
            let res = self.w.write(rb.finish(), false);
            meta.push((METAINDEX_RANGE_DEL, self.check(res)?));
            let (first, last) = (
                &self.range_dels[0],
                &self.range_dels[self.range_dels.len() - 1],
            );
            let mut lo = Vec::new();
            make_internal_key(
                &mut lo,
                &first.start,
                first.seqs[0],
                ValueKind::RangeDeletion as u8,
            );
            // The end is exclusive: the sentinel (end, MAX_SEQNO) sorts
            // before every entry of the end key.
            let mut hi = Vec::new();
            make_internal_key(
                &mut hi,
                &last.end,
                MAX_SEQNO,
                ValueKind::RangeDeletion as u8,
            );
            range_bounds = Some((lo, hi));
        }

        let res = self.w.write(self.index_block.finish(), true);
        let index = self.check(res)?;
        self.props.index_size = index.end_with_trailer() - index.offset;

        if self.props.num_entries == 0 && self.range_dels.is_empty() {
            self.props.smallest_seqno = 0;
        }

        self.props.creation_time = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.props.unique_id = self.unique_id();
        let mut props_block = BlockBuilder::new(1);
        let res = self.w.write(self.props.encode(&mut props_block), false);
        meta.push((METAINDEX_PROPERTIES, self.check(res)?));

        // Metaindex: names in bytewise order.
        meta.sort_by(|a, b| a.0.cmp(b.0));
        let mut mb = BlockBuilder::new(1);
        for (name, h) in &meta {
            self.handle_buf.clear();
            h.encode_to(&mut self.handle_buf);
            mb.add(name.as_bytes(), &self.handle_buf);
        }
        let res = self.w.write(mb.finish(), false);
        let metaindex = self.check(res)?;

        scratch.clear();
        Footer {
            metaindex,
            index,
            checksum_base: self.w.checksum_base,
            format_version: u32::try_from(self.props.format_version)
                .unwrap_or(FORMAT_VERSION_INTERNAL),
        }
        .encode_to(&mut scratch);
        let res = self.w.file.append(&scratch).and_then(|_| {
            if sync {
                self.w.file.sync()
            } else {
                self.w.file.flush()
            }
        });
        self.check(res)?;
        let file_size = self.w.offset + scratch.len() as u64;
        debug_assert_eq!(file_size, self.w.file.len());

        let empty = self.props.num_entries == 0;
        let (mut smallest, mut largest) = if empty {
            (Vec::new(), Vec::new())
        } else {
            (
                std::mem::take(&mut self.smallest),
                std::mem::take(&mut self.last_key),
            )
        };
        if let Some((lo, hi)) = range_bounds {
            if empty || compare_internal(&lo, &smallest).is_lt() {
                smallest = lo;
            }
            if empty || compare_internal(&hi, &largest).is_gt() {
                largest = hi;
            }
        }
        let range_del_span = match (self.range_dels.first(), self.range_dels.last()) {
            (Some(first), Some(last)) => Some((first.start.clone(), last.end.clone())),
            _ => None,
        };
        Ok(BuiltTable {
            file_size,
            num_entries: self.props.num_entries,
            smallest,
            largest,
            smallest_seq: self.props.smallest_seqno,
            largest_seq: self.props.largest_seqno,
            props: std::mem::take(&mut self.props),
            range_del_span,
        })
    }

    /// 128 bits from the DB id, file number, time, checksum base and
    /// per-process random state, as 32 hex digits.
    fn unique_id(&self) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut buf = Vec::with_capacity(64 + self.opts.db_id.len());
        buf.extend_from_slice(self.opts.db_id.as_bytes());
        buf.extend_from_slice(&self.file_number.to_le_bytes());
        buf.extend_from_slice(&nanos.to_le_bytes());
        buf.extend_from_slice(&self.w.checksum_base.to_le_bytes());
        buf.extend_from_slice(&random_u64().to_le_bytes());
        buf.extend_from_slice(self.file_name.as_bytes());
        format!("{:032x}", xxh3_128(&buf))
    }
}

/// A random u64 from std's randomly keyed hasher (no extra dependency).
fn random_u64() -> u64 {
    let mut h = RandomState::new().build_hasher();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(nanos);
    h.finish()
}

/// Sets `dst` to a short internal key `k` with `start <= k < limit`, with
/// the smallest trailer, by RocksDB's bytewise rule: where the user keys
/// first differ, the start's byte incremented (when that stays below the
/// limit's byte, or the limit goes on after it: the result is then a proper
/// prefix of the limit), else the first later start byte that is not 0xff
/// incremented; `start` itself when the user keys are equal, one is a
/// prefix of the other, or nothing can be incremented.
pub(crate) fn shortest_separator(start: &[u8], limit: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    if start.len() >= TRAILER_LEN && limit.len() >= TRAILER_LEN {
        let (us, ul) = (extract_user_key(start), extract_user_key(limit));
        let diff = us.iter().zip(ul).take_while(|(a, b)| a == b).count();
        if diff < us.len().min(ul.len()) && us[diff] < ul[diff] {
            let end = if diff + 1 < ul.len() || us[diff] + 1 < ul[diff] {
                Some(diff)
            } else {
                // `us[diff] + 1 == ul[diff]` and the limit ends there:
                // keep that byte and increment a later one.
                (diff + 1..us.len()).find(|&i| us[i] < 0xff)
            };
            if let Some(i) = end {
                dst.extend_from_slice(&us[..=i]);
                dst[i] += 1;
                dst.extend_from_slice(&pack_trailer(MAX_SEQNO, KIND_FOR_SEEK).to_le_bytes());
                debug_assert_eq!(compare_internal(start, dst), Ordering::Less);
                debug_assert_eq!(compare_internal(dst, limit), Ordering::Less);
                return;
            }
        }
    }
    dst.extend_from_slice(start);
}

/// Sets `dst` to a short internal key `k >= key`: the first user-key byte
/// that is not 0xff incremented, the rest dropped; `key` itself when every
/// byte is 0xff.
pub(crate) fn short_successor(key: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    if key.len() >= TRAILER_LEN {
        let uk = extract_user_key(key);
        if let Some(i) = uk.iter().position(|&b| b != 0xff) {
            dst.extend_from_slice(&uk[..=i]);
            dst[i] += 1;
            dst.extend_from_slice(&pack_trailer(MAX_SEQNO, KIND_FOR_SEEK).to_le_bytes());
            debug_assert_eq!(compare_internal(key, dst), Ordering::Less);
            return;
        }
    }
    dst.extend_from_slice(key);
}

#[cfg(test)]
mod tests;
