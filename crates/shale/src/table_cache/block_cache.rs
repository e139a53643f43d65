//! Connects the generic block cache (`cache/`) to the SST reader's cache
//! hook (`sst::BlockCacheHook`), so `sst/` never depends on `cache/`.
//!
//! The cache holds [`CachedBlock`]s: data and index blocks, and bloom
//! filters (with `cache_index_and_filter_blocks`), and blob values (the
//! blob source's hook, `blob::source::BlobCacheHook`). Index blocks and
//! filters are inserted and looked up at high priority, data blocks at low,
//! blobs at bottom.

use std::sync::Arc;

use crate::blob::source::BlobCacheHook;
use crate::cache::{BlockCache, CacheKey, CacheValue, Priority};
use crate::error::Result;
use crate::options::{CacheType, Options};
use crate::sst::{Block, BlockCacheHook, BlockKind, BloomFilter};

/// A cache entry: a parsed block or a parsed filter. A `(file, offset)`
/// key always names the same kind of entry.
#[derive(Clone)]
pub(crate) enum CachedBlock {
    Block(Arc<Block>),
    Filter(Arc<BloomFilter>),
    /// A blob value (bottom priority).
    Blob(Arc<[u8]>),
}

impl CacheValue for CachedBlock {
    fn is_pinned(&self) -> bool {
        match self {
            CachedBlock::Block(b) => b.is_pinned(),
            CachedBlock::Filter(f) => f.is_pinned(),
            CachedBlock::Blob(b) => b.is_pinned(),
        }
    }

    fn evicted(self) {
        if let CachedBlock::Blob(b) = self {
            crate::blob::recycle::give(b);
        }
    }
}

/// The DB's block cache as the SST reader sees it.
pub(crate) struct SharedBlockCache {
    pub cache: BlockCache<CachedBlock>,
}

/// Bytes an entry costs beyond its block (charged with it, as RocksDB's
/// default `kFullChargeCacheMetadata`): the shard's node and map slot, the
/// `Arc` header and the allocator's headers of the two allocations.
const ENTRY_METADATA: usize = 128;

impl SharedBlockCache {
    fn put(&self, file_number: u64, offset: u64, v: CachedBlock, charge: usize, pri: Priority) {
        // A refused insert (strict capacity limit) only means no caching.
        let _ = self.cache.insert(
            CacheKey::new(file_number, offset),
            v,
            charge + ENTRY_METADATA,
            pri,
        );
    }
}

impl BlockCacheHook for SharedBlockCache {
    fn lookup(&self, file_number: u64, offset: u64, kind: BlockKind) -> Option<Arc<Block>> {
        let pri = match kind {
            BlockKind::Data => Priority::Low,
            BlockKind::Index => Priority::High,
        };
        match self
            .cache
            .lookup(&CacheKey::new(file_number, offset), pri)?
        {
            CachedBlock::Block(b) => Some(b),
            CachedBlock::Filter(_) | CachedBlock::Blob(_) => None,
        }
    }

    fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>, kind: BlockKind) {
        let pri = match kind {
            BlockKind::Data => Priority::Low,
            BlockKind::Index => Priority::High,
        };
        let charge = block.size();
        self.put(file_number, offset, CachedBlock::Block(block), charge, pri);
    }

    fn lookup_filter(&self, file_number: u64, offset: u64) -> Option<Arc<BloomFilter>> {
        match self
            .cache
            .lookup(&CacheKey::new(file_number, offset), Priority::High)?
        {
            CachedBlock::Filter(f) => Some(f),
            CachedBlock::Block(_) | CachedBlock::Blob(_) => None,
        }
    }

    fn insert_filter(&self, file_number: u64, offset: u64, filter: Arc<BloomFilter>) {
        let charge = filter.size();
        let v = CachedBlock::Filter(filter);
        self.put(file_number, offset, v, charge, Priority::High);
    }
}

impl BlobCacheHook for SharedBlockCache {
    fn lookup_blob(&self, file_number: u64, offset: u64) -> Option<Arc<[u8]>> {
        match self
            .cache
            .lookup(&CacheKey::new(file_number, offset), Priority::Bottom)?
        {
            CachedBlock::Blob(b) => Some(b),
            CachedBlock::Block(_) | CachedBlock::Filter(_) => None,
        }
    }

    fn insert_blob(&self, file_number: u64, offset: u64, value: Arc<[u8]>) {
        let charge = value.len();
        self.put(
            file_number,
            offset,
            CachedBlock::Blob(value),
            charge,
            Priority::Bottom,
        );
    }
}

/// Builds the cache `opts` asks for (`None` when `cache_size` is 0). Bad
/// cache options are `InvalidArgument` (`Options::validate` checks them
/// before any I/O).
pub(crate) fn make_block_cache(opts: &Options) -> Result<Option<Arc<SharedBlockCache>>> {
    if opts.cache_size == 0 {
        return Ok(None);
    }
    let co = opts.cache_options();
    co.validate()?;
    let cache = match opts.cache_type {
        CacheType::Lru => BlockCache::lru(&co),
        CacheType::Clock => BlockCache::clock(&co),
    };
    Ok(Some(Arc::new(SharedBlockCache { cache })))
}

#[cfg(test)]
mod tests;
