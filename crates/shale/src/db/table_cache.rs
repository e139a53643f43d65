//! Open table readers, keyed by file number.
//!
//! Sharded `RwLock<HashMap>`: a hit takes one shard's read lock (no global
//! mutex on the read path). A miss opens the file outside any lock, then
//! inserts; two threads racing to open the same file both succeed and one
//! reader is kept.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::sst::{BlockCacheHook, Table};
use crate::version::filename::table_file_name;

const SHARDS: usize = 16;

/// Read counters summed over the open tables.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TableStatsSum {
    pub blocks_read: u64,
    pub bytes_read: u64,
    pub filter_checks: u64,
    pub filter_useful: u64,
    pub index_cache_hits: u64,
    pub index_cache_misses: u64,
    pub filter_cache_hits: u64,
    pub filter_cache_misses: u64,
}

pub(crate) struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    block_cache: Option<Arc<dyn BlockCacheHook>>,
    /// Tables keep their index and filter in the block cache.
    cache_index_and_filter_blocks: bool,
    shards: Vec<RwLock<HashMap<u64, Arc<Table>>>>,
}

impl TableCache {
    pub(crate) fn new(
        dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        block_cache: Option<Arc<dyn BlockCacheHook>>,
        cache_index_and_filter_blocks: bool,
    ) -> Self {
        TableCache {
            dir,
            fs,
            block_cache,
            cache_index_and_filter_blocks,
            shards: (0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect(),
        }
    }

    fn shard(&self, number: u64) -> &RwLock<HashMap<u64, Arc<Table>>> {
        &self.shards[(number as usize) % SHARDS]
    }

    /// The reader of table `number`, opening it on first use.
    pub(crate) fn get(&self, number: u64) -> Result<Arc<Table>> {
        if let Some(t) = self.shard(number).read().get(&number) {
            return Ok(Arc::clone(t));
        }
        let name = table_file_name(number);
        let path = self.dir.join(&name);
        let file = self.fs.open_random(&path)?;
        let table = Table::open(
            file,
            name.clone(),
            number,
            self.block_cache.clone(),
            self.cache_index_and_filter_blocks,
        )?;
        // A table stored under another table's name verifies block by block;
        // its properties name the file it was written as.
        let recorded = table.properties().file_number;
        if recorded != number {
            return Err(Error::corruption(
                name,
                0,
                format!("table properties say this is file {recorded}, not {number}"),
            ));
        }
        let mut shard = self.shard(number).write();
        Ok(Arc::clone(shard.entry(number).or_insert(table)))
    }

    /// Sums the read counters of every open table.
    pub(crate) fn sum_stats(&self) -> TableStatsSum {
        let mut out = TableStatsSum::default();
        for shard in &self.shards {
            for t in shard.read().values() {
                let s = t.stats();
                out.blocks_read += s.sum(|c| &c.blocks_read);
                out.bytes_read += s.sum(|c| &c.bytes_read);
                out.filter_checks += s.sum(|c| &c.filter_checks);
                out.filter_useful += s.sum(|c| &c.filter_useful);
                out.index_cache_hits += s.sum(|c| &c.index_cache_hits);
                out.index_cache_misses += s.sum(|c| &c.index_cache_misses);
                out.filter_cache_hits += s.sum(|c| &c.filter_cache_hits);
                out.filter_cache_misses += s.sum(|c| &c.filter_cache_misses);
            }
        }
        out
    }

    /// Forgets table `number` (its file is being deleted).
    pub(crate) fn evict(&self, number: u64) {
        self.shard(number).write().remove(&number);
    }
}
