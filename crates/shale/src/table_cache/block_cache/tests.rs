use super::*;
use crate::blob::recycle::shared_copy;
use crate::cache::CacheOptions;

/// Both cache kinds hand an evicted blob to `blob::recycle`: the
/// inserting thread's next copy of that length reuses its buffer. (A
/// blob a reader holds is pinned, never evicted; `recycle`'s own tests
/// show a shared buffer is not kept.)
#[test]
fn a_blob_the_cache_evicts_is_reused_by_the_evicting_thread() {
    let opts = CacheOptions {
        capacity: 300,
        num_shard_bits: 0,
        estimated_entry_charge: 100,
        ..CacheOptions::default()
    };
    for cache in [BlockCache::lru(&opts), BlockCache::clock(&opts)] {
        let c = SharedBlockCache { cache };
        let first: Arc<[u8]> = Arc::from(&[1u8; 40][..]);
        let addr = first.as_ptr();
        c.insert_blob(7, 0, first);
        // Charged 40 + ENTRY_METADATA bytes each: the second evicts the
        // first.
        c.insert_blob(7, 100, Arc::from(&[2u8; 40][..]));
        assert!(c.lookup_blob(7, 0).is_none());
        let reused = shared_copy(&[3u8; 40]);
        assert_eq!(reused.as_ptr(), addr, "the evicted buffer is reused");
        assert!(reused.iter().all(|&b| b == 3));
    }
}
