//! Table-level tests: builder + reader + iterator against a model, each
//! compression, the block cache hook, damage to every byte, misplaced
//! blocks, and the layering rule.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::base::{
    extract_user_key, make_internal_key, parse_internal_key, PrefixExtractor, ValueKind,
    KIND_FOR_SEEK,
};
use crate::error::Error;
use crate::fs::{FileSystem, PosixFileSystem};
use crate::iter::InternalIterator;

fn ik(user: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, user, seq, kind as u8);
    k
}

fn lookup_key(user: &[u8], seq: u64) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, user, seq, KIND_FOR_SEEK);
    k
}

fn user_key(i: u64) -> Vec<u8> {
    format!("user{:010}", i * 3).into_bytes()
}

fn value_of(i: u64) -> Vec<u8> {
    // Compressible but distinct, of varied length.
    let mut v = format!("value-{i}-").into_bytes();
    v.resize(v.len() + (i % 40) as usize, b'x');
    v
}

/// Sorted entries: keys `user_key(i)`, some with two versions and some
/// deletions.
fn model(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..n {
        let uk = user_key(i);
        if i % 7 == 0 {
            out.push((ik(&uk, 1000 + i, ValueKind::Value), value_of(i + 1)));
        }
        let kind = if i % 11 == 0 {
            ValueKind::Deletion
        } else {
            ValueKind::Value
        };
        out.push((ik(&uk, 10 + i, kind), value_of(i)));
    }
    out
}

fn build(path: &Path, entries: &[(Vec<u8>, Vec<u8>)], opts: TableOptions) -> BuiltTable {
    let fs = PosixFileSystem::default();
    let f = fs.create(path).unwrap();
    let mut b = TableBuilder::new(f, path.display().to_string(), 7, opts);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.num_entries(), entries.len() as u64);
    b.finish().unwrap()
}

fn open(path: &Path, cache: Option<Arc<dyn BlockCacheHook>>) -> Result<Arc<Table>, Error> {
    open_with(path, cache, false)
}

fn open_with(
    path: &Path,
    cache: Option<Arc<dyn BlockCacheHook>>,
    cache_meta: bool,
) -> Result<Arc<Table>, Error> {
    let fs = PosixFileSystem::default();
    Table::open(
        fs.open_random(path)?,
        path.display().to_string(),
        7,
        cache,
        cache_meta,
    )
}

fn opts(compression: Compression) -> TableOptions {
    TableOptions {
        compression,
        db_id: "test-db".into(),
        ..TableOptions::default()
    }
}

#[test]
fn roundtrip_100k_entries_each_compression() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let n = 100_000;
    let entries = model(n);
    let dir = tempfile::tempdir().unwrap();
    let mut sizes = Vec::new();
    for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let path = dir.path().join(format!("{c:?}.sst"));
        let built = build(&path, &entries, opts(c));
        sizes.push(built.file_size);
        assert_eq!(built.file_size, std::fs::metadata(&path).unwrap().len());
        assert_eq!(built.num_entries, entries.len() as u64);
        assert_eq!(built.smallest, entries[0].0);
        assert_eq!(built.largest, entries.last().unwrap().0);
        assert_eq!(built.smallest_seq, 10);
        assert_eq!(built.largest_seq, 1000 + (n - 1) / 7 * 7);

        let t = open(&path, None).unwrap();
        let p = t.properties();
        assert_eq!(p, &built.props);
        assert_eq!(p.num_entries, entries.len() as u64);
        assert_eq!(p.num_deletions, n.div_ceil(11));
        assert_eq!(p.compression_name, c.name());
        assert_eq!(p.db_id, "test-db");
        assert_eq!(p.file_number, 7);
        assert_eq!(p.format_version, u64::from(format::FORMAT_VERSION_INTERNAL));
        assert_eq!(p.unique_id.len(), 32);
        assert!(p.num_data_blocks > 100);
        assert!(p.filter_size > n * 10 / 8);
        assert_eq!(
            p.raw_key_size,
            entries.iter().map(|e| e.0.len() as u64).sum::<u64>()
        );

        // Point lookups of present keys: newest version at a high seqno,
        // the older one below it.
        for _ in 0..5000 {
            let i = rng.gen_range(0..n);
            let uk = user_key(i);
            let e = t
                .get(&lookup_key(&uk, u64::MAX >> 8), true)
                .unwrap()
                .unwrap();
            let want = if i % 7 == 0 {
                value_of(i + 1)
            } else {
                value_of(i)
            };
            assert_eq!(extract_user_key(e.ikey()), &uk[..], "seed {seed} i {i}");
            assert_eq!(e.value(), &want[..], "seed {seed} i {i}");
            let e = t.get(&lookup_key(&uk, 10 + i), true).unwrap().unwrap();
            let pk = parse_internal_key(e.ikey()).unwrap();
            assert_eq!((pk.user_key, pk.seq), (&uk[..], 10 + i));
            let want_kind = if i % 11 == 0 {
                ValueKind::Deletion
            } else {
                ValueKind::Value
            };
            assert_eq!(pk.kind, want_kind);
            assert_eq!(e.value(), &value_of(i)[..]);
            // Below every version: nothing for this user key.
            if let Some(e) = t.get(&lookup_key(&uk, 9 + i), true).unwrap() {
                assert_ne!(extract_user_key(e.ikey()), &uk[..], "seed {seed} i {i}");
            }
        }
        // Absent keys (between and beyond the stored ones): never a match,
        // mostly filtered.
        let before = t.stats().sum(|c| &c.filter_useful);
        let absent = 5000;
        for _ in 0..absent {
            let i = rng.gen_range(0..n + 100);
            let uk = format!("user{:010}", i * 3 + 1).into_bytes();
            if let Some(e) = t.get(&lookup_key(&uk, u64::MAX >> 8), true).unwrap() {
                assert_ne!(extract_user_key(e.ikey()), &uk[..], "seed {seed}");
            }
        }
        let useful = t.stats().sum(|c| &c.filter_useful) - before;
        assert!(useful > absent * 95 / 100, "filter ruled out only {useful}");

        check_iteration(&t, &entries, &mut rng, seed);
    }
    // Compression works on this compressible data.
    assert!(
        sizes[1] < sizes[0] * 8 / 10 && sizes[2] < sizes[0] * 8 / 10,
        "{sizes:?}"
    );
}

fn check_iteration(t: &Arc<Table>, entries: &[(Vec<u8>, Vec<u8>)], rng: &mut SmallRng, seed: u64) {
    let mut it = t.iter(false);
    it.seek_to_first();
    for (k, v) in entries {
        assert!(it.valid(), "seed {seed}");
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "seed {seed}");
        it.next();
    }
    assert!(!it.valid());
    it.status().unwrap();
    it.seek_to_last();
    for (k, v) in entries.iter().rev() {
        assert!(it.valid(), "seed {seed}");
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "seed {seed}");
        it.prev();
    }
    assert!(!it.valid());
    it.status().unwrap();

    let n = entries.len() as u64 / 2;
    for _ in 0..2000 {
        let i = rng.gen_range(0..n + 20);
        let uk = format!("user{:010}", i * 3 + rng.gen_range(0..2)).into_bytes();
        let target = lookup_key(&uk, rng.gen_range(0..2000));
        let mut pos =
            entries.partition_point(|(k, _)| crate::base::compare_internal(k, &target).is_lt());
        if rng.gen_bool(0.5) {
            it.seek(&target);
        } else {
            it.seek_for_prev(&target);
            pos =
                entries.partition_point(|(k, _)| crate::base::compare_internal(k, &target).is_le());
            if pos == 0 {
                assert!(!it.valid());
                continue;
            }
            pos -= 1;
        }
        for _ in 0..rng.gen_range(1..6) {
            if pos >= entries.len() {
                assert!(!it.valid(), "seed {seed}");
                break;
            }
            assert!(it.valid(), "seed {seed}");
            assert_eq!(it.key(), &entries[pos].0[..], "seed {seed}");
            assert_eq!(it.value(), &entries[pos].1[..], "seed {seed}");
            if rng.gen_bool(0.6) {
                it.next();
                pos += 1;
            } else {
                it.prev();
                if pos == 0 {
                    assert!(!it.valid());
                    break;
                }
                pos -= 1;
            }
        }
    }
    it.status().unwrap();
}

#[test]
fn small_blocks_restart_interval_one_and_no_filter() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let entries = model(3000);
    let path = dir.path().join("a.sst");
    let o = TableOptions {
        block_size: 64,
        block_restart_interval: 1,
        bloom_bits_per_key: 0.0,
        ..TableOptions::default()
    };
    let built = build(&path, &entries, o);
    assert_eq!(built.props.filter_size, 0);
    let t = open(&path, None).unwrap();
    assert!(t.may_contain(b"anything", None).unwrap());
    assert!(t.properties().num_data_blocks > 500);
    check_iteration(&t, &entries, &mut rng, seed);
    // Point lookups with versions of one user key split across blocks.
    for (j, (k, v)) in entries.iter().enumerate() {
        let e = t.get(k, true).unwrap().unwrap();
        assert_eq!((e.ikey(), e.value()), (&k[..], &v[..]));
        let pk = parse_internal_key(k).unwrap();
        let below = lookup_key(pk.user_key, pk.seq - 1);
        let next_same = entries
            .get(j + 1)
            .filter(|(nk, _)| extract_user_key(nk) == pk.user_key);
        match (t.get(&below, true).unwrap(), next_same) {
            (Some(e), Some((nk, nv))) => assert_eq!((e.ikey(), e.value()), (&nk[..], &nv[..])),
            (Some(e), None) => assert_ne!(extract_user_key(e.ikey()), pk.user_key),
            (None, None) => {}
            (None, Some(_)) => panic!("older version of entry {j} not found"),
        }
    }
    // approximate_offset_of grows with the key and ends at the data end.
    let a = t.approximate_offset_of(&lookup_key(&user_key(10), 5));
    let b = t.approximate_offset_of(&lookup_key(&user_key(2000), 5));
    let z = t.approximate_offset_of(&lookup_key(b"zzz", 5));
    assert!(a < b && b < z, "{a} {b} {z}");
    assert_eq!(z, t.properties().data_size);
}

#[test]
fn empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.sst");
    let built = build(&path, &[], opts(Compression::Zstd));
    assert_eq!(built.num_entries, 0);
    assert!(built.smallest.is_empty() && built.largest.is_empty());
    let t = open(&path, None).unwrap();
    assert!(!t.may_contain(b"k", None).unwrap());
    assert!(t.get(&lookup_key(b"k", 5), true).unwrap().is_none());
    let mut it = t.iter(true);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(&lookup_key(b"k", 5));
    assert!(!it.valid());
    it.status().unwrap();
}

/// A toy block cache keyed like the real one.
#[derive(Default)]
struct MapCache {
    map: Mutex<HashMap<(u64, u64), Arc<Block>>>,
    filters: Mutex<HashMap<(u64, u64), Arc<BloomFilter>>>,
    inserts: Mutex<Vec<BlockKind>>,
}

impl BlockCacheHook for MapCache {
    fn lookup(&self, file_number: u64, offset: u64, _kind: BlockKind) -> Option<Arc<Block>> {
        self.map.lock().get(&(file_number, offset)).cloned()
    }
    fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>, kind: BlockKind) {
        assert!(block.size() >= block.data().len());
        self.inserts.lock().push(kind);
        self.map.lock().insert((file_number, offset), block);
    }
    fn lookup_filter(&self, file_number: u64, offset: u64) -> Option<Arc<BloomFilter>> {
        self.filters.lock().get(&(file_number, offset)).cloned()
    }
    fn insert_filter(&self, file_number: u64, offset: u64, filter: Arc<BloomFilter>) {
        self.filters.lock().insert((file_number, offset), filter);
    }
}

#[test]
fn index_and_filter_live_in_the_cache_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.sst");
    let entries = model(2000);
    build(&path, &entries, opts(Compression::None));
    let cache = Arc::new(MapCache::default());
    let t = open_with(&path, Some(cache.clone() as Arc<dyn BlockCacheHook>), true).unwrap();
    // Put in the cache at open, not held by the table.
    assert_eq!(*cache.inserts.lock(), vec![BlockKind::Index]);
    assert_eq!(cache.filters.lock().len(), 1);
    assert_eq!(t.memory_usage(), 0);
    let read = |t: &Table| t.stats().sum(|c| &c.blocks_read);
    let opened = read(&t);

    let (k, v) = &entries[77];
    let e = t.get_point(k, false, None, None).unwrap().unwrap();
    assert_eq!(e.value(), &v[..]);
    assert_eq!(read(&t), opened + 1, "only the data block is read");
    let s = t.stats();
    assert_eq!(s.sum(|c| &c.index_cache_hits), 1);
    assert_eq!(s.sum(|c| &c.filter_cache_hits), 1);

    // Evicted: the next probe reads index and filter again and re-caches them.
    cache.map.lock().clear();
    cache.filters.lock().clear();
    let e = t.get_point(k, false, None, None).unwrap().unwrap();
    assert_eq!(e.value(), &v[..]);
    assert_eq!(read(&t), opened + 4, "index, filter and data block");
    assert_eq!(s.sum(|c| &c.index_cache_misses), 1);
    assert_eq!(s.sum(|c| &c.filter_cache_misses), 1);
    assert_eq!(cache.filters.lock().len(), 1);
    assert!(!t.may_contain(b"not a key at all", None).unwrap());

    // Iterators load the index from the cache too.
    cache.map.lock().clear();
    let mut it = t.iter(false);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.key(), &entries[n].0[..]);
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, entries.len());
}

#[test]
fn a_batch_memo_reads_each_block_once_without_a_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.sst");
    let entries = model(2000);
    build(&path, &entries, opts(Compression::None));
    let t = open(&path, None).unwrap();
    let read = |t: &Table| t.stats().sum(|c| &c.blocks_read);
    let before = read(&t);
    // Without a memo, ten keys of one block read it ten times.
    for (k, _) in &entries[..10] {
        t.get_point(k, false, None, None).unwrap().unwrap();
    }
    assert_eq!(read(&t), before + 10);
    let mut memo = BlockMemo::default();
    let before = read(&t);
    for (k, v) in &entries[..10] {
        let e = t
            .get_point(k, false, Some(&mut memo), None)
            .unwrap()
            .unwrap();
        assert_eq!(e.value(), &v[..]);
    }
    assert_eq!(read(&t), before + 1);
}

#[test]
fn block_cache_hook_is_used_and_fill_cache_respected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.sst");
    let entries = model(2000);
    build(&path, &entries, opts(Compression::Lz4));
    let cache = Arc::new(MapCache::default());
    let t = open(&path, Some(cache.clone() as Arc<dyn BlockCacheHook>)).unwrap();
    let opened_reads = t.stats().sum(|c| &c.blocks_read);
    assert_eq!(opened_reads, 4); // metaindex, properties, index, filter

    let k = lookup_key(&user_key(5), u64::MAX >> 8);
    t.get(&k, false).unwrap().unwrap();
    assert!(cache.map.lock().is_empty());
    t.get(&k, true).unwrap().unwrap();
    assert_eq!(cache.map.lock().len(), 1);
    let reads = t.stats().sum(|c| &c.blocks_read);
    let e = t.get(&k, true).unwrap().unwrap();
    assert_eq!(t.stats().sum(|c| &c.blocks_read), reads);
    assert_eq!(t.stats().sum(|c| &c.cache_hits), 1);
    // The entry's value lives in the cached block.
    let cached = cache.map.lock().values().next().unwrap().clone();
    assert!(Arc::ptr_eq(e.block(), &cached));

    let mut it = t.iter(true);
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    it.status().unwrap();
    assert_eq!(
        cache.map.lock().len() as u64,
        t.properties().num_data_blocks
    );
    assert!(cache.inserts.lock().iter().all(|k| *k == BlockKind::Data));
}

/// Flips bytes of a small table: open/get/iterate must either give the
/// right answers or `Corruption`, never a wrong value and never a panic.
#[test]
fn every_flipped_byte_is_detected_or_harmless() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let entries = model(150);
    for c in [Compression::None, Compression::Lz4, Compression::Zstd] {
        let path = dir.path().join("good.sst");
        let o = TableOptions {
            block_size: 512,
            compression: c,
            ..TableOptions::default()
        };
        build(&path, &entries, o);
        let good = std::fs::read(&path).unwrap();
        let bad_path = dir.path().join("bad.sst");
        let (mut detected, mut harmless) = (0, 0);
        for pos in 0..good.len() {
            let mut bytes = good.clone();
            bytes[pos] ^= 1 << rng.gen_range(0..8);
            std::fs::write(&bad_path, &bytes).unwrap();
            match check_table(&bad_path, &entries) {
                Ok(()) => harmless += 1,
                Err(Error::Corruption { file, .. }) => {
                    assert_eq!(file, bad_path.display().to_string());
                    detected += 1;
                }
                Err(e) => panic!("{c:?} byte {pos} seed {seed}: unexpected error {e:?}"),
            }
        }
        println!(
            "{c:?}: {} bytes, {detected} detected, {harmless} harmless",
            good.len()
        );
        // Every byte is covered by a checksum.
        assert_eq!(harmless, 0, "{c:?}");
    }
    // Truncations are corruption too.
    let good = std::fs::read(dir.path().join("good.sst")).unwrap();
    let bad_path = dir.path().join("bad.sst");
    for len in [0, 10, good.len() / 2, good.len() - 1] {
        std::fs::write(&bad_path, &good[..len]).unwrap();
        assert!(check_table(&bad_path, &entries)
            .unwrap_err()
            .is_corruption());
    }
}

/// Opens the table and checks every answer; the first error is returned.
fn check_table(path: &Path, entries: &[(Vec<u8>, Vec<u8>)]) -> Result<(), Error> {
    let t = open(path, None)?;
    for (k, v) in entries {
        let e = t.get(k, true)?;
        // A damaged filter may only cause false positives, never negatives
        // (the filter bytes are checksummed, so it is intact here).
        let e = e.expect("stored key not found in a table that opened");
        assert_eq!((e.ikey(), e.value()), (&k[..], &v[..]), "wrong answer");
    }
    let mut it = t.iter(false);
    it.seek_to_first();
    for (k, v) in entries {
        if !it.valid() {
            it.status()?;
            panic!("iteration ended early without error");
        }
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]), "wrong entry");
        it.next();
    }
    assert!(!it.valid());
    it.status()
}

#[test]
fn block_at_wrong_offset_or_from_other_file_fails_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let entries = model(500);
    let o = TableOptions {
        block_size: 256,
        ..TableOptions::default()
    };
    let pa = dir.path().join("a.sst");
    let pb = dir.path().join("b.sst");
    build(&pa, &entries, o.clone());
    build(&pb, &entries, o);
    let a = std::fs::read(&pa).unwrap();
    let b = std::fs::read(&pb).unwrap();
    assert_eq!(a.len(), b.len());
    // Same content, different checksum bases: data bytes equal, trailers differ.
    let first_block_end = {
        let t = open(&pa, None).unwrap();
        let mut idx = BlockIterator::new(t.index_block().unwrap());
        idx.seek_to_first();
        let h = BlockHandle::decode_exact(idx.value()).unwrap();
        assert_eq!(h.offset, 0);
        (h.size + 5) as usize
    };
    assert_eq!(a[..first_block_end - 4], b[..first_block_end - 4]);
    assert_ne!(
        a[first_block_end - 4..first_block_end],
        b[first_block_end - 4..first_block_end]
    );

    // Block 0 of file A spliced into file B at the same offset.
    let mut spliced = b.clone();
    spliced[..first_block_end].copy_from_slice(&a[..first_block_end]);
    let ps = dir.path().join("spliced.sst");
    std::fs::write(&ps, &spliced).unwrap();
    let t = open(&ps, None).unwrap();
    let err = t.get(&entries[0].0, true).err().unwrap();
    match err {
        Error::Corruption { offset, what, .. } => {
            assert_eq!(offset, 0);
            assert!(what.contains("checksum"), "{what}");
        }
        e => panic!("{e:?}"),
    }

    // The whole file shifted by 64 bytes: every handle now points at the
    // wrong offset, which the checksums notice.
    let mut shifted = vec![0u8; 64];
    shifted.extend_from_slice(&a);
    let psh = dir.path().join("shifted.sst");
    std::fs::write(&psh, &shifted).unwrap();
    assert!(open(&psh, None).unwrap_err().is_corruption());

    // A data block copied (with its trailer) over the next block, and the
    // index pointing at the copy's new offset: checksum mismatch.
    let t = open(&pa, None).unwrap();
    let mut idx = BlockIterator::new(t.index_block().unwrap());
    idx.seek_to_first();
    let h0 = BlockHandle::decode_exact(idx.value()).unwrap();
    let moved = BlockHandle {
        offset: h0.end_with_trailer(),
        size: h0.size,
    };
    let mut copied = a.clone();
    let n = first_block_end;
    copied.copy_within(0..n, n);
    let pc = dir.path().join("copied.sst");
    std::fs::write(&pc, &copied).unwrap();
    let tc = open(&pc, None).unwrap();
    assert!(tc.data_block(moved, false).unwrap_err().is_corruption());
    assert!(tc.data_block(h0, false).is_ok());
}

#[test]
fn unknown_format_version_is_not_supported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v.sst");
    build(&path, &model(10), TableOptions::default());
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let footer_start = n - format::FOOTER_LEN;
    let mut f = format::Footer::decode(&bytes[footer_start..], "x", 0).unwrap();
    f.format_version = format::FORMAT_VERSION + 1;
    let mut enc = Vec::new();
    f.encode_to(&mut enc);
    bytes[footer_start..].copy_from_slice(&enc);
    std::fs::write(&path, &bytes).unwrap();
    assert!(matches!(open(&path, None), Err(Error::NotSupported(_))));
}

#[test]
fn thread_safety_contracts() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<TableBuilder>();
    send::<TableIterator>();
    send::<BlockIterator>();
    send_sync::<Table>();
    send_sync::<Block>();
    send_sync::<TableEntry>();
}

/// Keys `{p:06}{i:04}` for even `p` only: odd prefixes are absent.
fn prefixed_entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for p in (0..400u64).step_by(2) {
        for i in 0..(p % 5 + 1) {
            let uk = format!("{p:06}{i:04}").into_bytes();
            out.push((ik(&uk, 10 + p, ValueKind::Value), value_of(p + i)));
        }
    }
    out
}

fn prefix_opts(e: Option<PrefixExtractor>, whole: bool) -> TableOptions {
    TableOptions {
        block_size: 512,
        prefix_extractor: e,
        whole_key_filtering: whole,
        ..TableOptions::default()
    }
}

#[test]
fn prefix_filters_are_used_only_with_the_recorded_extractor() {
    let dir = tempfile::tempdir().unwrap();
    let entries = prefixed_entries();
    let (fixed, capped) = (PrefixExtractor::Fixed(6), PrefixExtractor::Capped(6));
    for whole in [true, false] {
        let path = dir.path().join(format!("p{whole}.sst"));
        let built = build(&path, &entries, prefix_opts(Some(fixed), whole));
        assert_eq!(built.props.prefix_extractor, "rocksdb.FixedPrefix.6");
        let t = open(&path, None).unwrap();
        assert!(t.has_prefix_filter(fixed));
        assert!(!t.has_prefix_filter(capped));
        assert!(!t.has_prefix_filter(PrefixExtractor::Fixed(5)));
        let (mut ruled_out, mut absent) = (0, 0);
        for p in 0..400u64 {
            let prefix = format!("{p:06}").into_bytes();
            let may = t.may_contain_prefix(&prefix, fixed).unwrap();
            if p % 2 == 0 {
                assert!(may, "false negative for prefix {p}");
            } else {
                absent += 1;
                ruled_out += usize::from(!may);
            }
            // Read with another extractor: no prefix filtering at all.
            assert!(t.may_contain_prefix(&prefix, capped).unwrap());
            let missing = format!("{p:06}9999").into_bytes();
            // Point reads: whole keys when present; else the prefix, only
            // with the recorded extractor.
            let by_key = t.may_contain(&missing, None).unwrap();
            let by_prefix = t.may_contain(&missing, Some(fixed)).unwrap();
            assert!(t.may_contain(&missing, Some(capped)).unwrap() || whole);
            if whole {
                // Whole keys win: the prefix is not consulted.
                assert_eq!(by_key, by_prefix);
            } else {
                assert!(
                    by_key,
                    "a prefix-only filter ruled a key out without prefixes"
                );
                assert_eq!(by_prefix, may);
            }
        }
        assert!(
            ruled_out * 100 >= absent * 95,
            "only {ruled_out} of {absent} absent prefixes ruled out"
        );
        // Every key is found whatever extractor the reader has.
        for (k, v) in &entries {
            let uk = extract_user_key(k);
            for e in [None, Some(fixed), Some(capped)] {
                let got = t.get_point(&lookup_key(uk, u64::MAX >> 8), false, None, e);
                let got = got.unwrap().expect("stored key not found");
                assert_eq!(got.value(), &v[..]);
            }
        }
        assert!(t.stats().sum(|c| &c.prefix_useful) > 0);
    }
    // A table written without an extractor, or with an unknown name, is
    // never prefix-filtered.
    let path = dir.path().join("none.sst");
    build(&path, &entries, prefix_opts(None, true));
    let t = open(&path, None).unwrap();
    assert!(!t.has_prefix_filter(fixed));
    assert!(t.may_contain_prefix(b"000001", fixed).unwrap());
    let path = dir.path().join("unknown.sst");
    let fs = PosixFileSystem::default();
    let mut b = TableBuilder::new(
        fs.create(&path).unwrap(),
        path.display().to_string(),
        7,
        prefix_opts(Some(fixed), false),
    );
    b.set_prefix_name("rocksdb.FixedPrefix.6x");
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    let t = open(&path, None).unwrap();
    assert!(!t.has_prefix_filter(fixed));
    assert!(t.may_contain_prefix(b"000001", fixed).unwrap());
    assert!(t.may_contain(b"0000019999", Some(fixed)).unwrap());
}

#[test]
fn damaged_prefix_tables_are_corruption_never_wrong() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let entries: Vec<_> = prefixed_entries().into_iter().take(120).collect();
    let fixed = PrefixExtractor::Fixed(6);
    let path = dir.path().join("good.sst");
    build(&path, &entries, prefix_opts(Some(fixed), false));
    let good = std::fs::read(&path).unwrap();
    let bad_path = dir.path().join("bad.sst");
    let check = |p: &Path| -> Result<(), Error> {
        check_table(p, &entries)?;
        let t = open(p, None)?;
        for (k, _) in &entries {
            let uk = extract_user_key(k);
            assert!(t.may_contain_prefix(&uk[..6], fixed)?, "false negative");
            assert!(t.may_contain(uk, Some(fixed))?, "false negative");
        }
        Ok(())
    };
    for pos in 0..good.len() {
        let mut bytes = good.clone();
        bytes[pos] ^= 1 << rng.gen_range(0..8);
        std::fs::write(&bad_path, &bytes).unwrap();
        match check(&bad_path) {
            Ok(()) => panic!("byte {pos} seed {seed}: damage not detected"),
            Err(Error::Corruption { file, .. }) => {
                assert_eq!(file, bad_path.display().to_string())
            }
            Err(e) => panic!("byte {pos} seed {seed}: unexpected error {e:?}"),
        }
    }
}

/// Data block handles of table `t`, in order.
fn data_handles(t: &Arc<Table>) -> Vec<BlockHandle> {
    let mut idx = BlockIterator::new(t.index_block().unwrap());
    idx.seek_to_first();
    let mut out = Vec::new();
    while idx.valid() {
        out.push(BlockHandle::decode_exact(idx.value()).unwrap());
        idx.next();
    }
    out
}

fn aligned(block_size: usize) -> TableOptions {
    TableOptions {
        block_size,
        block_align: true,
        ..opts(Compression::None)
    }
}

/// `block_align`: every data block starts at a multiple of min(block_size,
/// 4 KiB) and, with its trailer, fits in `block_size` (so a 4 KiB block is
/// one page); an entry larger than a block gets a block of its own and the
/// next block is aligned again; everything reads back; the padding is
/// counted in `data_size`.
#[test]
fn aligned_blocks_start_at_page_multiples_and_fit_in_a_block() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut entries = model(20_000);
    // A few entries larger than a block.
    for i in [100, 7_000, 19_000] {
        entries[i].1 = vec![b'L'; 9_000 + i];
    }
    for block_size in [4096, 1024, 16 << 10] {
        let path = dir.path().join(format!("aligned-{block_size}.sst"));
        let built = build(&path, &entries, aligned(block_size));
        let t = open(&path, None).unwrap();
        let unit = block_size.min(4096) as u64;
        let handles = data_handles(&t);
        assert_eq!(handles.len() as u64, built.props.num_data_blocks);
        let mut large = 0;
        for h in &handles {
            assert_eq!(h.offset % unit, 0, "block at {} (unit {unit})", h.offset);
            if h.size + 5 > block_size as u64 {
                large += 1; // a block holding one entry larger than a block
            }
        }
        assert!(large <= 3, "{large} blocks over {block_size} bytes");
        let last = handles.last().unwrap();
        assert_eq!(
            built.props.data_size,
            (last.offset + last.size + 5).next_multiple_of(unit),
            "data_size counts the padding"
        );
        check_iteration(&t, &entries, &mut rng, seed);
        for (k, v) in entries.iter().step_by(13) {
            let e = t.get(k, true).unwrap().unwrap();
            assert_eq!((e.ikey(), e.value()), (&k[..], &v[..]));
        }
        // Unaligned, the same entries take fewer bytes and straddle pages.
        let plain = dir.path().join(format!("plain-{block_size}.sst"));
        let p = build(
            &plain,
            &entries,
            TableOptions {
                block_size,
                ..opts(Compression::None)
            },
        );
        assert!(p.file_size < built.file_size);
    }
}

/// The padding of aligned blocks is covered by no checksum (no handle
/// points into it, as in RocksDB): a flipped padding byte is harmless,
/// every other flipped byte is detected, as without alignment.
#[test]
fn aligned_tables_detect_every_flip_outside_the_padding() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let entries = model(150);
    let path = dir.path().join("good.sst");
    build(&path, &entries, aligned(512));
    let good = std::fs::read(&path).unwrap();
    let t = open(&path, None).unwrap();
    let mut padding = vec![false; good.len()];
    let handles = data_handles(&t);
    for w in handles.windows(2) {
        let end = (w[0].offset + w[0].size + 5) as usize;
        padding[end..w[1].offset as usize].fill(true);
    }
    let last = handles.last().unwrap();
    let end = (last.offset + last.size + 5) as usize;
    padding[end..t.properties().data_size as usize].fill(true);
    let padded = padding.iter().filter(|&&p| p).count();
    assert!(padded > 0, "no padding in a table of 512-byte blocks");
    assert!(good.iter().zip(&padding).all(|(b, p)| !p || *b == 0));
    let bad_path = dir.path().join("bad.sst");
    for pos in 0..good.len() {
        let mut bytes = good.clone();
        bytes[pos] ^= 1 << rng.gen_range(0..8);
        std::fs::write(&bad_path, &bytes).unwrap();
        match check_table(&bad_path, &entries) {
            Ok(()) => assert!(padding[pos], "byte {pos} seed {seed}: flip not detected"),
            Err(Error::Corruption { .. }) => {
                assert!(!padding[pos], "byte {pos}: padding flip reported")
            }
            Err(e) => panic!("byte {pos} seed {seed}: unexpected error {e:?}"),
        }
    }
}

/// `block_size_deviation` (RocksDB's rule): a block is cut before the
/// entry that would take it past `block_size` once it holds more than
/// `100 - deviation` percent, so every block but the last holds more than
/// that; with entries under the deviation's share of a block (300-byte
/// values) each also stays within `block_size`, and with larger ones
/// (1,500 bytes) only a large deviation cuts early. At 0 and 100 the rule
/// is off: every block but the last reaches `block_size`. Everything reads
/// back either way.
#[test]
fn block_size_deviation_cuts_blocks_before_an_overflowing_entry() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let block_size = 4096u64;
    for value_size in [300, 1_500] {
        let entries: Vec<(Vec<u8>, Vec<u8>)> = (0..3_000u64)
            .map(|i| {
                (
                    ik(&user_key(i), 10 + i, ValueKind::Value),
                    vec![b'v'; value_size],
                )
            })
            .collect();
        let mut blocks = Vec::new();
        for deviation in [0u32, 10, 50, 100] {
            let path = dir.path().join(format!("dev-{value_size}-{deviation}.sst"));
            let built = build(
                &path,
                &entries,
                TableOptions {
                    block_size: block_size as usize,
                    block_size_deviation: deviation,
                    ..opts(Compression::None)
                },
            );
            let t = open(&path, None).unwrap();
            let handles = data_handles(&t);
            assert_eq!(handles.len() as u64, built.props.num_data_blocks);
            let limit = super::builder::deviation_limit(block_size as usize, deviation) as u64;
            for h in &handles[..handles.len() - 1] {
                let what = format!(
                    "values of {value_size}, deviation {deviation}: block of {}",
                    h.size
                );
                if limit == 0 {
                    assert!(h.size >= block_size, "{what}");
                } else {
                    assert!(h.size > limit, "{what} not over {limit}");
                    if value_size == 300 {
                        assert!(h.size <= block_size, "{what}");
                    }
                }
            }
            check_iteration(&t, &entries, &mut rng, seed);
            for (k, v) in entries.iter().step_by(17) {
                let e = t.get(k, true).unwrap().unwrap();
                assert_eq!((e.ikey(), e.value()), (&k[..], &v[..]));
            }
            blocks.push(handles.len());
        }
        // Off at 0 and 100 alike; an early cut makes more, smaller blocks.
        assert_eq!(blocks[0], blocks[3], "values of {value_size}: {blocks:?}");
        if value_size == 300 {
            assert!(
                blocks[1] > blocks[0] && blocks[2] == blocks[1],
                "{blocks:?}"
            );
        } else {
            assert!(
                blocks[1] == blocks[0] && blocks[2] > blocks[1],
                "{blocks:?}"
            );
        }
    }
}
