//! [`Table`]: an open SST. `open` reads and verifies the footer, metaindex,
//! properties, index block and filter. By default the table then owns the
//! index and filter in memory; with `cache_index_and_filter_blocks` (and a
//! block cache) they live in the block cache at high priority instead,
//! charged to its capacity and evictable, and are read again on a miss.
//! Data blocks are read on demand, through the optional block cache.
//!
//! The cache is reached through [`BlockCacheHook`] so that `sst/` does not
//! depend on `cache/`. Cache keys are `(file_number, block offset)`.
//!
//! Every block read is bounds-checked against the file (a handle must end
//! before the footer), verified by its trailer checksum (bound to the offset
//! and the file's checksum base) and, if compressed, decompressed with a
//! bounded size; failures are `Error::Corruption` naming the file and the
//! block offset.
//!
//! Thread-safety: `Table` is immutable after `open` and shared as
//! `Arc<Table>`; the counters are relaxed atomics.

use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

use crate::base::{extract_user_key, PrefixExtractor, Striped};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::memory::{Charge, Ledger, Meter, Part};
use crate::range_del::Fragments;
use crate::sst::block::{Block, BlockIterator};
use crate::sst::compression::{decompress, TYPE_NONE};
use crate::sst::filter::BloomFilter;
use crate::sst::format::{verify_block, BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN};
use crate::sst::index_search::IndexSearch;
use crate::sst::properties::TableProperties;
use crate::sst::readahead::{aligned_span, Readahead};
use crate::sst::{
    METAINDEX_FILTER, METAINDEX_PREFIX_FILTER, METAINDEX_PROPERTIES, METAINDEX_RANGE_DEL,
};

/// What a cached block is, so a cache can pick its priority: data blocks
/// go to the low-priority pool, index blocks (and filters, which have their
/// own hook methods) to the high-priority pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    Data,
    Index,
}

/// The block cache as seen by the reader. Implemented by `cache/`.
pub(crate) trait BlockCacheHook: Send + Sync {
    /// The cached block at `offset` of table `file_number`, if any.
    fn lookup(&self, file_number: u64, offset: u64, kind: BlockKind) -> Option<Arc<Block>>;
    /// Caches a block; charge `block.size()`.
    fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>, kind: BlockKind);
    /// The cached filter at `offset` of table `file_number`, if any.
    fn lookup_filter(&self, file_number: u64, offset: u64) -> Option<Arc<BloomFilter>>;
    /// Caches a filter (high priority); charge `filter.size()`.
    fn insert_filter(&self, file_number: u64, offset: u64, filter: Arc<BloomFilter>);
}

/// One stripe of a table's counters (relaxed; for statistics only).
#[derive(Debug, Default)]
pub(crate) struct TableCounters {
    /// Blocks read from the file (cache misses and open-time reads).
    pub blocks_read: AtomicU64,
    /// Bytes read from the file for those blocks.
    pub bytes_read: AtomicU64,
    /// Data blocks served by the cache.
    pub cache_hits: AtomicU64,
    /// Filter checks made by `may_contain`.
    pub filter_checks: AtomicU64,
    /// Filter checks that ruled the key out.
    pub filter_useful: AtomicU64,
    /// Point lookups the filter let through that found no entry of the key
    /// (false positives; also a key with only versions newer than the
    /// read).
    pub filter_false_positives: AtomicU64,
    /// Prefix checks made by `may_contain_prefix` (seeks).
    pub prefix_checks: AtomicU64,
    /// Prefix checks that ruled the prefix out.
    pub prefix_useful: AtomicU64,
    /// Index blocks served by the block cache
    /// (`cache_index_and_filter_blocks` only).
    pub index_cache_hits: AtomicU64,
    /// Index blocks the block cache did not have.
    pub index_cache_misses: AtomicU64,
    /// Filters served by the block cache.
    pub filter_cache_hits: AtomicU64,
    /// Filters the block cache did not have.
    pub filter_cache_misses: AtomicU64,
}

/// Per-table counters, striped so that threads reading one table at once
/// do not share a cache line (see `base::Striped`).
#[derive(Default)]
pub(crate) struct TableStats(Striped<TableCounters>);

impl TableStats {
    fn bump(&self, field: impl Fn(&TableCounters) -> &AtomicU64, n: u64) {
        field(self.0.local()).fetch_add(n, AtomicOrdering::Relaxed);
    }

    /// The sum of one counter over the stripes.
    pub(crate) fn sum(&self, field: impl Fn(&TableCounters) -> &AtomicU64) -> u64 {
        self.0
            .all()
            .map(|c| field(c).load(AtomicOrdering::Relaxed))
            .sum()
    }
}

/// The result of a point lookup: the first entry at or after the lookup
/// key, served from its block without copying the value. The internal key
/// is materialized in `key` (one allocation per lookup: the buffer the
/// block seek decoded it into). Only the table tests and the fuzz harness
/// use it; the read path uses [`Table::get_point`].
#[cfg(any(test, feature = "testing"))]
pub(crate) struct TableEntry {
    block: Arc<Block>,
    key: Vec<u8>,
    value_range: std::ops::Range<usize>,
}

#[cfg(any(test, feature = "testing"))]
impl TableEntry {
    /// The entry's internal key.
    pub(crate) fn ikey(&self) -> &[u8] {
        &self.key
    }

    /// The entry's value, a slice of the cached block.
    pub(crate) fn value(&self) -> &[u8] {
        self.block
            .data()
            .get(self.value_range.clone())
            .unwrap_or(&[])
    }

    /// The block holding the value (keeps it alive, e.g. to pin it).
    #[cfg(test)]
    pub(crate) fn block(&self) -> &Arc<Block> {
        &self.block
    }
}

/// Largest block read through the per-thread scratch buffer (bigger ones
/// get a buffer of their own, so the scratch never pins much memory).
const SCRATCH_MAX: usize = 256 << 10;

thread_local! {
    /// Stored bytes of the block being read by this thread.
    static READ_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    /// Key buffer reused by point lookups of this thread.
    static KEY_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A point-lookup hit: the entry's `seqno << 8 | kind` and its value, a
/// slice of the (cached) block.
pub(crate) struct PointEntry {
    block: Arc<Block>,
    value_range: std::ops::Range<usize>,
    /// `seqno << 8 | kind` of the entry.
    pub trailer: u64,
}

impl PointEntry {
    /// An expiring entry's value (its stored bytes less the expiry suffix)
    /// and expiry; `None` when the stored bytes are too short.
    pub(crate) fn split_expiry(mut self) -> Option<(PointEntry, u64)> {
        let (_, expiry) = crate::base::expiry::split_expiring(self.value())?;
        self.value_range.end -= crate::base::expiry::EXPIRY_LEN;
        Some((self, expiry))
    }

    /// The value bytes.
    pub(crate) fn value(&self) -> &[u8] {
        self.block
            .data()
            .get(self.value_range.clone())
            .unwrap_or(&[])
    }
}

/// The data blocks one batched lookup (`multi_get`) has fetched: the last
/// block per table. Keys are looked up in sorted order, so a batch moves
/// forward through each table and keys that share a block find it here.
#[derive(Default)]
pub(crate) struct BlockMemo {
    last: std::collections::HashMap<u64, (u64, Arc<Block>)>,
}

impl BlockMemo {
    fn block(&mut self, t: &Table, h: BlockHandle, fill_cache: bool) -> Result<Arc<Block>> {
        if let Some((off, b)) = self.last.get(&t.file_number) {
            if *off == h.offset {
                return Ok(Arc::clone(b));
            }
        }
        let b = t.data_block(h, fill_cache)?;
        self.last.insert(t.file_number, (h.offset, Arc::clone(&b)));
        Ok(b)
    }
}

/// Reads verified blocks from one file.
struct FileReader {
    file: Arc<dyn RandomAccessFile>,
    file_name: Arc<str>,
    checksum_base: u32,
    /// First byte of the footer: no block may extend past it.
    footer_offset: u64,
}

impl FileReader {
    fn corruption(&self, offset: u64, what: &str) -> Error {
        Error::corruption(&*self.file_name, offset, what)
    }

    /// Reads, verifies and decompresses the block at `h`.
    fn read_block(
        &self,
        h: BlockHandle,
        stats: &TableStats,
        ra: Option<&mut Readahead>,
    ) -> Result<Vec<u8>> {
        if h.end_with_trailer() > self.footer_offset || h.size > self.footer_offset {
            return Err(Error::corruption(
                &*self.file_name,
                h.offset,
                format!(
                    "block handle (offset {}, size {}) runs past the data area ({} bytes)",
                    h.offset, h.size, self.footer_offset
                ),
            ));
        }
        let n = usize::try_from(h.size)
            .map_err(|_| self.corruption(h.offset, "block size does not fit in memory"))?;
        let total = n + BLOCK_TRAILER_LEN;
        let mut buf = match ra {
            Some(ra) => match ra.get(h.offset, total) {
                Some(b) => {
                    let b = b.to_vec();
                    ra.note_buffered(h.offset, total);
                    b
                }
                None => {
                    let file = Arc::clone(ra.file().unwrap_or(&self.file));
                    match ra.plan(h.offset, total) {
                        Some(want) => {
                            // Read ahead, but never past the data area
                            // (aligned for a direct handle: see readahead).
                            let avail = self.footer_offset.saturating_sub(h.offset);
                            let len = (want as u64).min(avail).max(total as u64) as usize;
                            let (start, len, align) = match file.direct_alignment() {
                                Some(a) => {
                                    let (s, l) = aligned_span(h.offset, len, total, a, file.len());
                                    (s, l, a)
                                }
                                None => (h.offset, len, 1),
                            };
                            let mut big = ra.take_buffer(len, align);
                            file.read_exact_at(start, &mut big)?;
                            let rel = (h.offset - start) as usize;
                            let b = big[rel..rel + total].to_vec();
                            ra.fill(start, big);
                            b
                        }
                        None => {
                            let mut b = vec![0u8; total];
                            file.read_exact_at(h.offset, &mut b)?;
                            ra.reads += 1;
                            b
                        }
                    }
                }
            },
            None if total <= SCRATCH_MAX => return self.read_via_scratch(h, n, stats),
            None => {
                let mut b = vec![0u8; total];
                self.file.read_exact_at(h.offset, &mut b)?;
                b
            }
        };
        stats.bump(|c| &c.blocks_read, 1);
        stats.bump(|c| &c.bytes_read, buf.len() as u64);
        let ctype = verify_block(&buf, h.offset, self.checksum_base, &self.file_name)?;
        if ctype == TYPE_NONE {
            buf.truncate(n);
            Ok(buf)
        } else {
            decompress(
                ctype,
                buf.get(..n).unwrap_or(&[]),
                &self.file_name,
                h.offset,
            )
        }
    }

    /// `read_block` without readahead for blocks up to `SCRATCH_MAX`: reads
    /// into this thread's scratch buffer, so a compressed block costs only
    /// its decompressed copy (no allocation, zeroing and free of the stored
    /// bytes) and an uncompressed one a copy instead of a zeroed allocation.
    fn read_via_scratch(&self, h: BlockHandle, n: usize, stats: &TableStats) -> Result<Vec<u8>> {
        let total = n + BLOCK_TRAILER_LEN;
        READ_BUF.with(|cell| {
            let mut scratch = cell.borrow_mut();
            if scratch.len() < total {
                scratch.resize(total, 0);
            }
            let buf = &mut scratch[..total];
            self.file.read_exact_at(h.offset, buf)?;
            stats.bump(|c| &c.blocks_read, 1);
            stats.bump(|c| &c.bytes_read, total as u64);
            let ctype = verify_block(buf, h.offset, self.checksum_base, &self.file_name)?;
            let stored = buf.get(..n).unwrap_or(&[]);
            if ctype == TYPE_NONE {
                Ok(stored.to_vec())
            } else {
                decompress(ctype, stored, &self.file_name, h.offset)
            }
        })
    }

    fn read_filter(&self, h: BlockHandle, stats: &TableStats) -> Result<BloomFilter> {
        BloomFilter::new(self.read_block(h, stats, None)?, &self.file_name, h.offset)
    }

    fn read_block_parsed(&self, h: BlockHandle, stats: &TableStats) -> Result<Block> {
        Block::new(
            self.read_block(h, stats, None)?,
            self.file_name.clone(),
            h.offset,
        )
    }
}

/// An open SST. See the module comment.
pub(crate) struct Table {
    r: FileReader,
    file_number: u64,
    cache: Option<Arc<dyn BlockCacheHook>>,
    /// Offset where the data blocks end (first meta block).
    #[cfg(any(test, feature = "testing"))]
    data_end: u64,
    index_h: BlockHandle,
    /// The index block when the table owns it; `None` when it lives in the
    /// block cache (then `cache` is `Some`).
    index: Option<Arc<Block>>,
    /// Point-lookup accelerator over `index` (only when the table owns it).
    index_search: Option<IndexSearch>,
    filter_h: Option<BlockHandle>,
    /// The filter holds whole keys (`shale.filter`); false: only prefixes
    /// (`shale.filter.prefix`).
    filter_whole_keys: bool,
    /// The extractor whose prefixes the filter holds (from the properties;
    /// `None`: no prefixes, or a name this build does not know).
    filter_prefix: Option<PrefixExtractor>,
    /// The filter when the table owns it; `None` when the table has no
    /// filter (`filter_h` is `None`) or it lives in the block cache.
    filter: Option<Arc<BloomFilter>>,
    props: TableProperties,
    stats: TableStats,
    /// The range tombstones of the range-deletion block, read at open.
    range_dels: Option<Arc<Fragments>>,
    /// Set when the table is charged to a DB's memory ledger.
    memory: OnceLock<TableMemory>,
    /// The sequence number every entry reads as (an ingested external
    /// table's, from the MANIFEST; its stored ones are 0). `None`: entries
    /// read as stored.
    global_seqno: Option<u64>,
}

/// A table's place in the DB's memory ledger (see `crate::memory`).
struct TableMemory {
    /// The reader's own memory, released when the table is dropped.
    _reader: Charge,
    /// Where its iterators charge their readahead buffers.
    buffers: Meter,
}

/// Either a reference to a block the table owns or a clone of a cached one:
/// the owned case costs no reference count traffic.
enum BlockRef<'a> {
    Owned(&'a Block),
    Cached(Arc<Block>),
}

impl std::ops::Deref for BlockRef<'_> {
    type Target = Block;
    fn deref(&self) -> &Block {
        match self {
            BlockRef::Owned(b) => b,
            BlockRef::Cached(b) => b,
        }
    }
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("file", &self.r.file_name)
            .field("file_number", &self.file_number)
            .finish_non_exhaustive()
    }
}

mod get;

impl Table {
    /// Opens a table: footer, metaindex, properties, index and filter. With
    /// `cache_meta` and a `cache`, the index and filter are put in the cache
    /// (high priority) instead of being held by the table.
    pub(crate) fn open(
        file: Arc<dyn RandomAccessFile>,
        file_name: String,
        file_number: u64,
        cache: Option<Arc<dyn BlockCacheHook>>,
        cache_meta: bool,
    ) -> Result<Arc<Table>> {
        Table::open_at(file, file_name, file_number, cache, cache_meta, None)
    }

    /// `open`, presenting every entry (and range tombstone) at
    /// `global_seqno` when set: an ingested external table (its properties
    /// must say so, else `Corruption`).
    pub(crate) fn open_at(
        file: Arc<dyn RandomAccessFile>,
        file_name: String,
        file_number: u64,
        cache: Option<Arc<dyn BlockCacheHook>>,
        cache_meta: bool,
        global_seqno: Option<u64>,
    ) -> Result<Arc<Table>> {
        let file_name: Arc<str> = Arc::from(file_name);
        let len = file.len();
        let footer_offset = len.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(
                &*file_name,
                0,
                format!("file of {len} bytes is too short for an SST"),
            )
        })?;
        let mut buf = [0u8; FOOTER_LEN];
        file.read_exact_at(footer_offset, &mut buf)?;
        let footer = Footer::decode(&buf, &file_name, footer_offset)?;

        let r = FileReader {
            file,
            file_name,
            checksum_base: footer.checksum_base,
            footer_offset,
        };
        let stats = TableStats::default();
        #[cfg(any(test, feature = "testing"))]
        let mut data_end = footer.index.offset.min(footer.metaindex.offset);

        // Metaindex: name -> handle; unknown names are ignored.
        let meta = Arc::new(r.read_block_parsed(footer.metaindex, &stats)?);
        let (mut filter_h, mut props_h, mut range_h) = (None, None, None);
        let mut prefix_filter_h = None;
        let mut it = BlockIterator::new(meta);
        it.seek_to_first();
        while it.valid() {
            let name = it.key();
            let slot = if name == METAINDEX_FILTER.as_bytes() {
                &mut filter_h
            } else if name == METAINDEX_PREFIX_FILTER.as_bytes() {
                &mut prefix_filter_h
            } else if name == METAINDEX_PROPERTIES.as_bytes() {
                &mut props_h
            } else if name == METAINDEX_RANGE_DEL.as_bytes() {
                &mut range_h
            } else {
                it.next();
                continue;
            };
            let h = BlockHandle::decode_exact(it.value())
                .ok_or_else(|| r.corruption(footer.metaindex.offset, "bad handle in metaindex"))?;
            #[cfg(any(test, feature = "testing"))]
            {
                data_end = data_end.min(h.offset);
            }
            *slot = Some(h);
            it.next();
        }
        it.status()?;

        let props_h = props_h
            .ok_or_else(|| r.corruption(footer.metaindex.offset, "metaindex lacks properties"))?;
        let props = TableProperties::decode(Arc::new(r.read_block_parsed(props_h, &stats)?))?;
        // A whole-key filter wins; a prefix-only one is used for prefixes.
        let filter_whole_keys = filter_h.is_some();
        let filter_h = filter_h.or(prefix_filter_h);
        // An unknown or damaged name: the prefixes are never consulted.
        let filter_prefix = PrefixExtractor::parse(&props.prefix_extractor);
        // Both are read (and verified) at open either way, as RocksDB's
        // prefetch_index_and_filter_in_cache does.
        let index = Arc::new(r.read_block_parsed(footer.index, &stats)?);
        let filter = match filter_h {
            Some(h) => Some(Arc::new(r.read_filter(h, &stats)?)),
            None => None,
        };
        if global_seqno.is_some() && props.external_version == 0 {
            return Err(r.corruption(
                props_h.offset,
                "the MANIFEST gives a global sequence number to a table not written as external",
            ));
        }
        let range_dels = match range_h {
            Some(h) => {
                let mut f =
                    super::range_del_block::decode(Arc::new(r.read_block_parsed(h, &stats)?))?;
                if let Some(g) = global_seqno {
                    f = f.at_seqno(g);
                }
                (!f.is_empty()).then(|| Arc::new(f))
            }
            None => None,
        };
        let mut table = Table {
            r,
            file_number,
            cache,
            #[cfg(any(test, feature = "testing"))]
            data_end,
            index_h: footer.index,
            index_search: None,
            index: Some(index),
            filter_h,
            filter_whole_keys,
            filter_prefix,
            filter,
            props,
            stats,
            range_dels,
            memory: OnceLock::new(),
            global_seqno,
        };
        if cache_meta {
            if let Some(c) = &table.cache {
                if let Some(b) = table.index.take() {
                    c.insert(file_number, footer.index.offset, b, BlockKind::Index);
                }
                if let (Some(f), Some(h)) = (table.filter.take(), filter_h) {
                    c.insert_filter(file_number, h.offset, f);
                }
            }
        }
        table.index_search = table.index.as_ref().and_then(IndexSearch::build);
        Ok(Arc::new(table))
    }

    /// The index block: the table's own, or from the block cache.
    fn index(&self) -> Result<BlockRef<'_>> {
        match &self.index {
            Some(b) => Ok(BlockRef::Owned(b)),
            None => Ok(BlockRef::Cached(self.cached_index()?)),
        }
    }

    /// The index block from the block cache, read from the file and cached
    /// again on a miss (only when the table does not own it).
    fn cached_index(&self) -> Result<Arc<Block>> {
        let h = self.index_h;
        if let Some(c) = &self.cache {
            if let Some(b) = c.lookup(self.file_number, h.offset, BlockKind::Index) {
                self.stats.bump(|c| &c.index_cache_hits, 1);
                return Ok(b);
            }
        }
        self.stats.bump(|c| &c.index_cache_misses, 1);
        let b = Arc::new(self.r.read_block_parsed(h, &self.stats)?);
        if let Some(c) = &self.cache {
            c.insert(self.file_number, h.offset, Arc::clone(&b), BlockKind::Index);
        }
        Ok(b)
    }

    /// The index block as a shared handle (iterators keep it alive).
    pub(crate) fn index_block(&self) -> Result<Arc<Block>> {
        match &self.index {
            Some(b) => Ok(Arc::clone(b)),
            None => self.cached_index(),
        }
    }

    /// The filter, when the table has one: the table's own, or from the
    /// block cache (read and cached again on a miss).
    fn filter(&self) -> Result<Option<Arc<BloomFilter>>> {
        let Some(h) = self.filter_h else {
            return Ok(None);
        };
        if let Some(f) = &self.filter {
            return Ok(Some(Arc::clone(f)));
        }
        if let Some(c) = &self.cache {
            if let Some(f) = c.lookup_filter(self.file_number, h.offset) {
                self.stats.bump(|c| &c.filter_cache_hits, 1);
                return Ok(Some(f));
            }
        }
        self.stats.bump(|c| &c.filter_cache_misses, 1);
        let f = Arc::new(self.r.read_filter(h, &self.stats)?);
        if let Some(c) = &self.cache {
            c.insert_filter(self.file_number, h.offset, Arc::clone(&f));
        }
        Ok(Some(f))
    }

    /// The data block at `h`, from the cache or the file.
    pub(crate) fn data_block(&self, h: BlockHandle, fill_cache: bool) -> Result<Arc<Block>> {
        self.data_block_with(h, fill_cache, None)
    }

    /// Like `data_block`, reading through a scan's readahead buffer.
    pub(crate) fn data_block_with(
        &self,
        h: BlockHandle,
        fill_cache: bool,
        ra: Option<&mut Readahead>,
    ) -> Result<Arc<Block>> {
        if let Some(c) = &self.cache {
            if let Some(b) = c.lookup(self.file_number, h.offset, BlockKind::Data) {
                self.stats.bump(|c| &c.cache_hits, 1);
                return Ok(b);
            }
        }
        let data = self.r.read_block(h, &self.stats, ra)?;
        let b = Arc::new(Block::new(data, self.r.file_name.clone(), h.offset)?);
        if fill_cache {
            if let Some(c) = &self.cache {
                c.insert(self.file_number, h.offset, Arc::clone(&b), BlockKind::Data);
            }
        }
        Ok(b)
    }

    /// Decodes an index entry's value.
    pub(crate) fn decode_handle(&self, v: &[u8]) -> Result<BlockHandle> {
        BlockHandle::decode_exact(v).ok_or_else(|| {
            self.r
                .corruption(self.index_h.offset, "bad block handle in index")
        })
    }

    pub(crate) fn properties(&self) -> &TableProperties {
        &self.props
    }

    /// The sequence number every entry reads as, for an ingested table
    /// that has one (see `open_at`).
    #[inline]
    pub(crate) fn global_seqno(&self) -> Option<u64> {
        self.global_seqno
    }

    pub(crate) fn stats(&self) -> &TableStats {
        &self.stats
    }

    /// Charges the table's own memory to `ledger` until it is dropped, and
    /// its iterators' readahead buffers while they hold them. Once.
    pub(crate) fn charge_to(&self, ledger: &Arc<Ledger>) {
        let mut reader = ledger.meter(Part::TableReaders).charge();
        reader.set(self.memory_usage());
        let _ = self.memory.set(TableMemory {
            _reader: reader,
            buffers: ledger.meter(Part::Buffers),
        });
    }

    /// A charge for an iterator's readahead buffer, when the table is
    /// charged to a ledger.
    pub(crate) fn buffer_charge(&self) -> Option<Charge> {
        self.memory.get().map(|m| m.buffers.charge())
    }

    /// Memory held by the table itself (index and filter; nothing of what
    /// lives in the block cache).
    pub(crate) fn memory_usage(&self) -> usize {
        self.index.as_ref().map_or(0, |b| b.size())
            + self.index_search.as_ref().map_or(0, IndexSearch::size)
            + self.filter.as_ref().map_or(0, |f| f.size())
    }

    /// The table's range tombstones, fragmented (`None`: it has none).
    #[inline]
    pub(crate) fn range_fragments(&self) -> Option<&Arc<Fragments>> {
        self.range_dels.as_ref()
    }

    /// About `max` sample points of the table's keys, in key order: the
    /// user key ending a run of data blocks (from the index) and the bytes
    /// of those blocks. Subcompactions split their work by these.
    pub(crate) fn key_anchors(&self, max: usize) -> Result<Vec<(Vec<u8>, u64)>> {
        let mut it = BlockIterator::new(self.index_block()?);
        let mut blocks: Vec<(Vec<u8>, u64)> = Vec::new();
        it.seek_to_first();
        while it.valid() {
            let size = self.decode_handle(it.value())?.size;
            blocks.push((extract_user_key(it.key()).to_vec(), size));
            it.next();
        }
        it.status()?;
        // Runs of `every` blocks, each named by its last block's key.
        let every = blocks.len().div_ceil(max.max(1)).max(1);
        Ok(blocks
            .chunks(every)
            .filter_map(|run| {
                let (key, _) = run.last()?;
                Some((key.clone(), run.iter().map(|(_, size)| size).sum()))
            })
            .collect())
    }

    /// Approximate file offset where `ikey` would be: the offset of the
    /// data block that would hold it, or the end of the data area.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        let Ok(index) = self.index_block() else {
            return self.data_end;
        };
        let mut idx = BlockIterator::new(index);
        idx.seek(ikey);
        if idx.valid() {
            if let Ok(h) = self.decode_handle(idx.value()) {
                return h.offset;
            }
        }
        self.data_end
    }
}
