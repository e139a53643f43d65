//! Connects the generic block cache (`cache/`) to the SST reader's cache
//! hook (`sst::BlockCacheHook`), so `sst/` never depends on `cache/`.

use std::sync::Arc;

use crate::cache::{BlockCache, CacheKey, CacheOptions, Priority};
use crate::error::Result;
use crate::options::{CacheType, Options};
use crate::sst::{Block, BlockCacheHook, BlockKind};

/// The DB's block cache as the SST reader sees it.
pub(crate) struct SharedBlockCache {
    pub cache: BlockCache<Arc<Block>>,
}

impl BlockCacheHook for SharedBlockCache {
    fn lookup(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        self.cache
            .lookup(&CacheKey::new(file_number, offset), Priority::Low)
    }

    fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>, kind: BlockKind) {
        let pri = match kind {
            BlockKind::Data => Priority::Low,
        };
        let charge = block.size();
        // A refused insert (strict capacity limit) only means no caching.
        let _ = self
            .cache
            .insert(CacheKey::new(file_number, offset), block, charge, pri);
    }
}

/// Builds the cache `opts` asks for (`None` when `cache_size` is 0). Bad
/// cache options are `InvalidArgument` (checked at open, before any I/O).
pub(crate) fn make_block_cache(opts: &Options) -> Result<Option<Arc<SharedBlockCache>>> {
    if opts.cache_size == 0 {
        return Ok(None);
    }
    let co = CacheOptions {
        estimated_entry_charge: opts.block_size.max(256),
        ..CacheOptions::with_capacity(opts.cache_size)
    };
    co.validate()?;
    let cache = match opts.cache_type {
        CacheType::Lru => BlockCache::lru(&co),
        CacheType::Clock => BlockCache::clock(&co),
    };
    Ok(Some(Arc::new(SharedBlockCache { cache })))
}

/// Block-cache and table-read properties (`shale.block-cache-*`,
/// `shale.block-reads`, `shale.bloom-*`); `None` for other names.
pub(crate) fn property(db: &super::DbInner, name: &str) -> Option<String> {
    use crate::cache::Priority;
    if let Some(rest) = name.strip_prefix("shale.block-cache-") {
        let Some(c) = &db.block_cache else {
            return Some("0".to_string());
        };
        let s = c.cache.stats();
        return Some(match rest {
            "capacity" => c.cache.capacity().to_string(),
            "usage" => c.cache.usage().to_string(),
            "pinned-usage" => c.cache.pinned_usage().to_string(),
            "entries" => s.entries.to_string(),
            "hits" => s.total_hits().to_string(),
            "misses" => s.total_misses().to_string(),
            "data-hits" => s.hits_for(Priority::Low).to_string(),
            "data-misses" => s.misses_for(Priority::Low).to_string(),
            "bytes-inserted" => s.bytes_inserted.to_string(),
            "bytes-evicted" => s.bytes_evicted.to_string(),
            _ => return None,
        });
    }
    let t = db.table_cache.sum_stats();
    Some(match name {
        "shale.block-reads" => t.blocks_read.to_string(),
        "shale.block-read-bytes" => t.bytes_read.to_string(),
        "shale.bloom-checks" => t.filter_checks.to_string(),
        "shale.bloom-useful" => t.filter_useful.to_string(),
        _ => return None,
    })
}
