//! The block cache's and the table readers' properties
//! (`shale.block-cache-*`, `shale.block-reads`, `shale.bloom-*`,
//! `shale.prefix-*`): counters of the shared block cache and the sums of
//! every table reader's read counters.

use crate::cache::Priority;
use crate::shared::DbInner;

/// Block-cache and table-read properties (`shale.block-cache-*`,
/// `shale.block-reads`, `shale.bloom-*`); `None` for other names.
pub(crate) fn property(db: &DbInner, name: &str) -> Option<String> {
    let t = db.table_cache.sum_stats();
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
            "index-hits" => t.index_cache_hits.to_string(),
            "index-misses" => t.index_cache_misses.to_string(),
            "filter-hits" => t.filter_cache_hits.to_string(),
            "filter-misses" => t.filter_cache_misses.to_string(),
            "bytes-inserted" => s.bytes_inserted.to_string(),
            "bytes-evicted" => s.bytes_evicted.to_string(),
            _ => return None,
        });
    }
    Some(match name {
        "shale.block-reads" => t.blocks_read.to_string(),
        "shale.block-read-bytes" => t.bytes_read.to_string(),
        "shale.bloom-checks" => t.filter_checks.to_string(),
        "shale.bloom-useful" => t.filter_useful.to_string(),
        "shale.bloom-false-positives" => t.filter_false_positives.to_string(),
        "shale.prefix-checks" => t.prefix_checks.to_string(),
        "shale.prefix-useful" => t.prefix_useful.to_string(),
        _ => return None,
    })
}
