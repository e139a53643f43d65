//! Sorted string tables: immutable, block-based files of internal keys in
//! `base::compare_internal` order, like RocksDB's block-based tables.
//! The format is specified byte by byte in `docs/format/sst.md`.
//!
//! - `block_builder` / `block`: the shared block format (prefix-compressed
//!   entries, restart points) and its bidirectional iterator;
//! - `filter`: the cache-local bloom filter over user keys;
//! - `format`: block handles, block trailers (checksum bound to offset and
//!   file), footer, magic: the FROZEN parts;
//! - `compression`: per-block LZ4 / zstd with bounded decompression;
//! - `properties`: the properties block;
//! - `builder`: [`TableBuilder`]; `reader`: [`Table`]; `table_iter`: the
//!   two-level [`TableIterator`]; `index_search`: the in-memory prefix
//!   array that speeds up point lookups in an owned index block.
//!
//! Layering: `sst/` depends only on `base`, `codec`, `error`, `fs`, `iter`
//! and `options`; never on `version/`, `db/`, `memtable/` or `cache/` (the
//! block cache is reached through [`BlockCacheHook`]). A test checks this.
//!
//! Thread-safety: builders are single-threaded; `Table` is shared as
//! `Arc<Table>` and is immutable after open.

use crate::base::PrefixExtractor;

mod block;
mod block_builder;
mod builder;
// Blob files (`blob/`) compress values with the same codecs and rules.
pub(crate) mod compression;
mod filter;
mod format;
mod index_search;
mod properties;
mod range_del_block;
mod readahead;
mod reader;
mod table_iter;
#[cfg(test)]
mod tests;

pub(crate) use block::{Block, BlockIterator};
pub(crate) use builder::TableBuilder;
pub use compression::Compression;
pub(crate) use filter::BloomFilter;
pub(crate) use format::BlockHandle;
pub(crate) use properties::TableProperties;
pub(crate) use readahead::ReadaheadPolicy;
pub(crate) use reader::{BlockCacheHook, BlockKind, BlockMemo, PointEntry, Table};
// Used by the decoder fuzz entry points and the table tests.
#[cfg(any(test, feature = "testing"))]
pub(crate) use format::{FORMAT_VERSION, MAGIC};
#[cfg(test)]
pub(crate) use {builder::BuiltTable, reader::TableEntry, table_iter::TableIterator};

/// Metaindex name of the bloom filter block holding whole user keys (and,
/// when the table records a prefix extractor, their prefixes too). FROZEN.
pub(crate) const METAINDEX_FILTER: &str = "shale.filter";
/// Metaindex name of a bloom filter block holding only prefixes
/// (`whole_key_filtering` off): a reader that does not know prefixes
/// ignores it rather than rule keys out by it. FROZEN.
pub(crate) const METAINDEX_PREFIX_FILTER: &str = "shale.filter.prefix";
/// Metaindex name of the properties block. FROZEN.
pub(crate) const METAINDEX_PROPERTIES: &str = "shale.properties";
/// Metaindex name of the range-deletion block. FROZEN.
pub(crate) const METAINDEX_RANGE_DEL: &str = "shale.range_del";

/// What the table builder needs from [`Options`].
#[derive(Debug, Clone)]
pub(crate) struct TableOptions {
    /// Target uncompressed size of a data block: a block is cut when its
    /// size estimate reaches this. Default 4 KiB.
    pub block_size: usize,
    /// Entries between restart points in data blocks (index blocks always
    /// use 1). Default 16.
    pub block_restart_interval: usize,
    /// Data blocks also restart once the entries since the last restart
    /// span this many bytes (0 = count only). Default 0 here; the DB's
    /// default comes from `Options`.
    pub block_restart_bytes: usize,
    /// Bloom filter bits per key (fractions allowed); 0 writes no filter.
    /// Default 10 (≈1% false positives).
    pub bloom_bits_per_key: f64,
    /// Also add each key's prefix to the filter, and record the
    /// extractor's name in the properties. Default `None`.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// Add whole keys to the filter (always, without an extractor).
    /// Default true.
    pub whole_key_filtering: bool,
    /// Compression of data and index blocks. Default none.
    pub compression: Compression,
    /// Id of the DB, stored as the `shale.db.id` property. Default empty.
    pub db_id: String,
    /// The column family (id, name) the table belongs to, stored as the
    /// `shale.column.family.*` properties (repair restores families from
    /// them). Default `None` (a table written outside a DB).
    pub column_family: Option<(u32, String)>,
    /// Data blocks start at multiples of [`TableOptions::alignment`] and,
    /// with their trailer, fit in `block_size` unless a single entry is
    /// larger (RocksDB's `block_align`): with 4 KiB blocks a block read is
    /// one page from the device. Requires no compression and a power-of-two
    /// `block_size` (checked by the options). Default false.
    pub block_align: bool,
    /// Cut a data block before an entry that would take it past
    /// `block_size` once it is more than `100 - block_size_deviation`
    /// percent full (RocksDB's `block_size_deviation`; 0 or 100: only
    /// after the entry that reaches `block_size`). Default 10.
    pub block_size_deviation: u32,
}

impl TableOptions {
    /// The unit aligned data blocks keep to: the smaller of the page size
    /// (4 KiB) and `block_size`, rounded down to a power of two.
    pub(crate) fn alignment(&self) -> usize {
        let unit = self.block_size.clamp(1, 4096);
        1 << unit.ilog2()
    }
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            block_restart_interval: 16,
            block_restart_bytes: 0,
            bloom_bits_per_key: 10.0,
            prefix_extractor: None,
            whole_key_filtering: true,
            compression: Compression::None,
            db_id: String::new(),
            column_family: None,
            block_align: false,
            block_size_deviation: 10,
        }
    }
}
