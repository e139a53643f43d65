use super::base::default_shard_bits;
use super::*;
use std::collections::HashSet;
use std::sync::Arc;

#[test]
fn default_shard_bits_follow_rocksdb() {
    assert_eq!(default_shard_bits(0), 0);
    assert_eq!(default_shard_bits(512 << 10), 0);
    assert_eq!(default_shard_bits(1 << 20), 1);
    assert_eq!(default_shard_bits((1 << 20) - 1), 0);
    assert_eq!(default_shard_bits(8 << 20), 4);
    assert_eq!(default_shard_bits(32 << 20), 6);
    assert_eq!(default_shard_bits(1 << 40), 6);
    let o = CacheOptions {
        num_shard_bits: 3,
        ..CacheOptions::default()
    };
    assert_eq!(o.shard_bits(), 3);
    assert_eq!(CacheOptions::per_shard(10, 2), 3);
}

#[test]
fn defaults_match_rocksdb_lru_cache_options() {
    let o = CacheOptions::default();
    assert_eq!(o.num_shard_bits, -1);
    assert!(!o.strict_capacity_limit);
    assert_eq!(o.high_pri_pool_ratio, 0.5);
    assert_eq!(o.low_pri_pool_ratio, 0.0);
    assert!(o.validate().is_ok());
}

#[test]
fn validate_rejects_bad_ratios_and_bits() {
    let bad = [
        CacheOptions {
            high_pri_pool_ratio: 1.5,
            ..CacheOptions::default()
        },
        CacheOptions {
            high_pri_pool_ratio: 0.6,
            low_pri_pool_ratio: 0.6,
            ..CacheOptions::default()
        },
        CacheOptions {
            low_pri_pool_ratio: -0.1,
            ..CacheOptions::default()
        },
        CacheOptions {
            num_shard_bits: 21,
            ..CacheOptions::default()
        },
        CacheOptions {
            estimated_entry_charge: 0,
            ..CacheOptions::default()
        },
    ];
    for o in bad {
        assert!(o.validate().is_err(), "{o:?}");
    }
}

#[test]
fn hash_spreads_block_offsets_over_shards() {
    // Typical keys: a few files, offsets every ~4 KiB.
    let mut per_shard = [0usize; 64];
    let mut seen = HashSet::new();
    for f in 1..5u64 {
        for i in 0..4096u64 {
            let h = hash_key(&CacheKey::new(f, i * 4133));
            seen.insert(h);
            per_shard[shard_of(h, 6)] += 1;
        }
    }
    assert_eq!(seen.len(), 4 * 4096);
    let (min, max) = (
        per_shard.iter().min().copied(),
        per_shard.iter().max().copied(),
    );
    // 256 expected per shard.
    assert!(
        min.unwrap_or(0) > 180 && max.unwrap_or(0) < 340,
        "{min:?} {max:?}"
    );
}

#[test]
fn arc_is_pinned_while_cloned() {
    let a = Arc::new(5u32);
    assert!(!a.is_pinned());
    let b = a.clone();
    assert!(a.is_pinned());
    drop(b);
    assert!(!a.is_pinned());
}
