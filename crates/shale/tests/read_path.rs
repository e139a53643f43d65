//! Read-path behaviour seen from the public API: `multi_get` reads each
//! needed block once per batch (even with no block cache), and
//! `cache_index_and_filter_blocks` keeps index blocks and filters in a block
//! cache that is allowed to evict them, without changing any result.
//! Block reads are counted by the engine (`shale.block-reads`).

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use shale::{CacheType, Db, Error, Options, ReadOptions};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-").repeat(8).into_bytes()
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name)
        .unwrap_or_else(|| panic!("no property {name}"))
        .parse()
        .unwrap()
}

fn load(db: &Db, n: u32) {
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
}

#[test]
fn multi_get_reads_each_block_once_without_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cache_size: 0,
            ..Options::default()
        },
    )
    .unwrap();
    load(&db, 5_000);
    // 30 adjacent keys of ~100 bytes: 3 KB of entries, at most 2 blocks of 4 KiB.
    let mut ids: Vec<u32> = (1000..1030).collect();
    ids.shuffle(&mut SmallRng::seed_from_u64(7));
    let keys: Vec<Vec<u8>> = ids.iter().map(|&i| key(i)).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let ro = ReadOptions::new();
    // Open the table (footer, index and filter reads) before counting.
    assert!(db.get(&key(0)).unwrap().is_some());

    let before = prop(&db, "shale.block-reads");
    for k in &refs {
        assert!(db.get(k).unwrap().is_some());
    }
    let single = prop(&db, "shale.block-reads") - before;
    assert_eq!(single, 30, "one block read per get without a cache");

    let before = prop(&db, "shale.block-reads");
    let got = db.multi_get(&refs, &ro);
    let batched = prop(&db, "shale.block-reads") - before;
    assert!(
        batched <= 2,
        "multi_get read {batched} blocks for 30 adjacent keys"
    );
    for (&i, r) in ids.iter().zip(got) {
        assert_eq!(r.unwrap().unwrap().to_vec(), value(i));
    }
}

fn cached_meta_db(dir: &std::path::Path, cache_type: CacheType, on: bool) -> Db {
    Db::open(
        dir,
        Options {
            create_if_missing: true,
            cf: shale::CfOptions {
                write_buffer_size: 64 << 10,
                target_file_size_base: 64 << 10,
                max_bytes_for_level_base: 256 << 10,
                ..Default::default()
            },
            // Far smaller than the index and filter blocks of all tables.
            cache_size: 64 << 10,
            cache_type,
            cache_index_and_filter_blocks: on,
            ..Options::default()
        },
    )
    .unwrap()
}

#[test]
fn index_and_filter_blocks_in_a_small_cache_serve_every_read() {
    for cache_type in [CacheType::Lru, CacheType::Clock] {
        let dir = tempfile::tempdir().unwrap();
        let db = cached_meta_db(dir.path(), cache_type, true);
        load(&db, 20_000);
        let tables: u64 = (0..7)
            .map(|l| prop(&db, &format!("shale.num-files-at-level{l}")))
            .sum();
        assert!(tables >= 10, "want many tables, got {tables}");
        for i in (0..20_000).step_by(7) {
            assert_eq!(db.get(&key(i)).unwrap().unwrap().to_vec(), value(i));
        }
        for i in 20_000..20_500 {
            assert!(db.get(&key(i)).unwrap().is_none());
        }
        let n = db.range(..).count();
        assert_eq!(n, 20_000);
        let hits = prop(&db, "shale.block-cache-index-hits");
        let misses = prop(&db, "shale.block-cache-index-misses");
        let fhits = prop(&db, "shale.block-cache-filter-hits");
        let fmisses = prop(&db, "shale.block-cache-filter-misses");
        assert!(hits > 0 && fhits > 0, "{cache_type:?}: {hits} {fhits}");
        // The cache is too small for them all, so some were evicted and read again.
        assert!(misses + fmisses > 0, "{cache_type:?}: {misses} {fmisses}");
        let usage = prop(&db, "shale.block-cache-usage");
        let pinned = prop(&db, "shale.block-cache-pinned-usage");
        assert!(
            usage <= (64 << 10) + pinned,
            "usage {usage} pinned {pinned}"
        );
        // Reopen: results survive and the counters start again.
        db.close().unwrap();
        let db = cached_meta_db(dir.path(), cache_type, true);
        assert_eq!(db.get(&key(4242)).unwrap().unwrap().to_vec(), value(4242));
    }
}

#[test]
fn tables_own_index_and_filter_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = cached_meta_db(dir.path(), CacheType::Lru, false);
    load(&db, 5_000);
    for i in 0..100 {
        assert!(db.get(&key(i)).unwrap().is_some());
    }
    for name in ["index-hits", "index-misses", "filter-hits", "filter-misses"] {
        assert_eq!(prop(&db, &format!("shale.block-cache-{name}")), 0, "{name}");
    }
}

#[test]
fn cached_index_and_filter_need_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    let r = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cache_size: 0,
            cache_index_and_filter_blocks: true,
            ..Options::default()
        },
    );
    match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("cache_index_and_filter_blocks")),
        Err(e) => panic!("wrong error {e}"),
        Ok(_) => panic!("opened"),
    }
}
