//! Randomized model test: thousands of random puts, deletes, batches,
//! snapshots, gets and iterations (forward, backward, direction changes,
//! bounds) checked against a `BTreeMap`, with flushes, compactions and
//! close/reopen in between. A failing seed is printed; rerun one with
//! `SHALE_SEED=<seed> cargo test --test model`.

use std::collections::BTreeMap;
use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{
    CacheType, Compression, Db, Options, ReadOptions, WalRecoveryMode, WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(rng: &mut SmallRng, space: u32) -> Vec<u8> {
    format!("k{:05}", rng.gen_range(0..space)).into_bytes()
}

/// A key for a write: half the time from a narrow window that moves now
/// and then, so flushed tables cover narrow, partly overlapping key ranges
/// (the shapes bounded compactions and reads must get right); else from
/// the whole key space.
fn write_key(rng: &mut SmallRng, space: u32, window: &mut u32) -> Vec<u8> {
    if rng.gen_range(0..200) == 0 {
        *window = rng.gen_range(0..space);
    }
    if rng.gen_bool(0.5) {
        let k = (*window + rng.gen_range(0..40)).min(space - 1);
        format!("k{k:05}").into_bytes()
    } else {
        key(rng, space)
    }
}

fn value(rng: &mut SmallRng) -> Vec<u8> {
    let n = rng.gen_range(0..200);
    (0..n).map(|_| rng.gen_range(b'a'..=b'z')).collect()
}

fn small_options(rng: &mut SmallRng) -> Options {
    let mut o = Options {
        create_if_missing: true,
        write_buffer_size: rng.gen_range(4096..64 * 1024),
        block_size: [64, 256, 4096][rng.gen_range(0..3)],
        block_restart_interval: [1, 4, 16][rng.gen_range(0..3)],
        bloom_bits_per_key: [0, 10][rng.gen_range(0..2)],
        // 2 compacts L0 almost at once; 100 keeps L0 files overlapping and
        // every deeper shape to the manual compactions below.
        level0_file_num_compaction_trigger: [2, 4, 100][rng.gen_range(0..3)],
        level0_slowdown_writes_trigger: 100,
        level0_stop_writes_trigger: 100,
        max_bytes_for_level_base: 64 * 1024,
        target_file_size_base: 16 * 1024,
        num_levels: rng.gen_range(2..=7),
        ..Options::default()
    };
    o.compression_per_level =
        vec![[Compression::None, Compression::Lz4, Compression::Zstd][rng.gen_range(0..3)]];
    // No cache, a cache small enough to evict index and filter blocks, or a
    // roomy one; either cache type; index and filter in the cache or not.
    o.cache_size = [0, 16 << 10, 8 << 20][rng.gen_range(0..3)];
    o.cache_type = [CacheType::Lru, CacheType::Clock][rng.gen_range(0..2)];
    o.cache_index_and_filter_blocks = o.cache_size > 0 && rng.gen_bool(0.5);
    o.block_restart_bytes = [0, 64, 1024][rng.gen_range(0..3)];
    // No memtable bloom, a one-line one (mostly false positives), the default.
    o.memtable_bloom_size_ratio = [0.0, 0.001, 0.02][rng.gen_range(0..3)];
    o.level_compaction_dynamic_level_bytes = rng.gen_bool(0.7);
    o.max_background_jobs = rng.gen_range(1..=4);
    o.target_file_size_multiplier = rng.gen_range(1..=2);
    o.max_bytes_for_level_multiplier = [2.0, 10.0][rng.gen_range(0..2)];
    o.max_write_buffer_number = rng.gen_range(2..=4);
    o.allow_concurrent_memtable_write = rng.gen_bool(0.5);
    o.manual_wal_flush = rng.gen_bool(0.2);
    o.paranoid_checks = rng.gen_bool(0.5);
    o.compaction_readahead_size = [0, 4096, 2 << 20][rng.gen_range(0..3)];
    o.max_auto_readahead_size = [8 << 10, 256 << 10][rng.gen_range(0..2)];
    if rng.gen_bool(0.3) {
        o.bottommost_compression =
            Some([Compression::None, Compression::Lz4, Compression::Zstd][rng.gen_range(0..3)]);
    }
    if rng.gen_bool(0.3) {
        o.max_compaction_bytes = rng.gen_range(16 << 10..256 << 10);
    }
    o.cache_numshardbits = [-1, 0, 2][rng.gen_range(0..3)];
    o.cache_high_pri_pool_ratio = [0.0, 0.5][rng.gen_range(0..2)];
    o.cache_low_pri_pool_ratio = [0.0, 0.3][rng.gen_range(0..2)];
    o.cache_strict_capacity_limit = o.cache_size > 0 && rng.gen_bool(0.3);
    o.wal_recovery_mode = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTime,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ][rng.gen_range(0..4)];
    if rng.gen_bool(0.3) {
        // Stalls on pending compaction bytes, slowed to a small write rate.
        o.soft_pending_compaction_bytes_limit = 256 << 10;
        o.hard_pending_compaction_bytes_limit = 64 << 20;
        o.delayed_write_rate = 64 << 20;
    }
    // Every table kept open, or a table cache of 10 readers (evicting).
    o.max_open_files = [-1, 20][rng.gen_range(0..2)];
    o
}

/// Options for a reopen: new random choices for everything a DB may
/// change between opens (the level count stays: fewer levels than the
/// DB uses is refused, as in RocksDB).
fn changed_options(rng: &mut SmallRng, old: &Options) -> Options {
    Options {
        num_levels: old.num_levels,
        ..small_options(rng)
    }
}

/// A bound for reads and compactions: a key, a string between keys, one
/// before or after every key, or none.
fn random_bound(rng: &mut SmallRng, space: u32) -> Option<Vec<u8>> {
    match rng.gen_range(0..10) {
        0..=1 => None,
        2 => Some(b"a".to_vec()),
        3 => Some(b"z".to_vec()),
        4 => {
            let mut k = key(rng, space);
            k.push(b'x');
            Some(k)
        }
        _ => Some(key(rng, space)),
    }
}

/// Reads `m` (the model of the state `ro` reads) through a bounded cursor
/// at `ro`, in both directions, and through `multi_get`.
fn check_read_at(
    db: &Db,
    m: &Model,
    ro: &mut ReadOptions<'_>,
    rng: &mut SmallRng,
    space: u32,
    ctx: &str,
) {
    let lo = random_bound(rng, space);
    let hi = random_bound(rng, space);
    ro.iterate_lower_bound = lo.clone();
    ro.iterate_upper_bound = hi.clone();
    let want: Vec<(&Vec<u8>, &Vec<u8>)> = m
        .iter()
        .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l) && hi.as_ref().is_none_or(|h| *k < h))
        .collect();
    let mut it = db.iter(ro);
    let mut got = Vec::new();
    it.seek_to_first();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let want_fwd: Vec<(Vec<u8>, Vec<u8>)> = want
        .iter()
        .map(|(k, v)| ((*k).clone(), (*v).clone()))
        .collect();
    assert!(
        got == want_fwd,
        "{ctx}: bounded forward scan [{lo:?}, {hi:?}) differs"
    );
    let mut back = Vec::new();
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    back.reverse();
    assert!(
        back == want_fwd,
        "{ctx}: bounded reverse scan [{lo:?}, {hi:?}) differs"
    );
    // multi_get at the same state, with keys inside and outside the data.
    ro.iterate_lower_bound = None;
    ro.iterate_upper_bound = None;
    let keys: Vec<Vec<u8>> = (0..rng.gen_range(1..12)).map(|_| key(rng, space)).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    for (k, r) in keys.iter().zip(db.multi_get(&refs, ro)) {
        let got = r.unwrap().map(|v| v.to_vec());
        assert_eq!(got, m.get(k).cloned(), "{ctx}: multi_get {k:?}");
    }
}

/// Checks a full scan in both directions and a few bounded scans.
fn check_iteration(db: &Db, model: &Model, rng: &mut SmallRng, seed: u64) {
    let got: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got.len(), want.len(), "seed {seed}: scan length");
    assert!(got == want, "seed {seed}: forward scan differs");
    let back: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).rev().map(|r| r.unwrap()).collect();
    let want_back: Vec<_> = want.iter().rev().cloned().collect();
    assert!(back == want_back, "seed {seed}: reverse scan differs");

    // Bounded cursor with random walks.
    for _ in 0..5 {
        let a = key(rng, 2000);
        let b = key(rng, 2000);
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let mut ro = ReadOptions::new();
        ro.iterate_lower_bound = Some(lo.clone());
        ro.iterate_upper_bound = Some(hi.clone());
        let mut it = db.iter(&ro);
        let sub: Vec<(&Vec<u8>, &Vec<u8>)> = model.range(lo.clone()..hi.clone()).collect();
        let target = key(rng, 2000);
        it.seek(&target);
        // Model position: first key >= max(target, lo) within bounds.
        let mut pos: Option<usize> = sub
            .iter()
            .position(|(k, _)| k.as_slice() >= target.as_slice());
        for _ in 0..30 {
            match pos {
                Some(p) => {
                    assert!(
                        it.valid(),
                        "seed {seed}: cursor invalid, model at {:?}",
                        sub[p].0
                    );
                    assert_eq!(it.key(), sub[p].0.as_slice(), "seed {seed}: cursor key");
                    assert_eq!(it.value(), sub[p].1.as_slice(), "seed {seed}: cursor value");
                }
                None => {
                    assert!(
                        !it.valid(),
                        "seed {seed}: cursor valid at {:?}, model exhausted",
                        it.key()
                    );
                    it.status().unwrap();
                    break;
                }
            }
            let p = pos.unwrap_or(0);
            if rng.gen_bool(0.5) {
                it.next();
                pos = (p + 1 < sub.len()).then_some(p + 1);
            } else {
                it.prev();
                pos = p.checked_sub(1);
            }
        }
        // seek_for_prev
        let t = key(rng, 2000);
        it.seek_for_prev(&t);
        let want = sub.iter().rev().find(|(k, _)| k.as_slice() <= t.as_slice());
        match want {
            Some((k, _)) => assert_eq!(it.key(), k.as_slice(), "seed {seed}: seek_for_prev"),
            None => assert!(!it.valid(), "seed {seed}: seek_for_prev should be invalid"),
        }
        it.seek_to_last();
        match sub.last() {
            Some((k, _)) => assert_eq!(
                it.key(),
                k.as_slice(),
                "seed {seed}: seek_to_last with bounds"
            ),
            None => assert!(!it.valid()),
        }
    }
    // Prefix and range API.
    let p = format!("k{:03}", rng.gen_range(0..20)).into_bytes();
    let got: Vec<Vec<u8>> = db.prefix(&p).map(|r| r.unwrap().0).collect();
    let want: Vec<Vec<u8>> = model
        .keys()
        .filter(|k| k.starts_with(&p))
        .cloned()
        .collect();
    assert_eq!(got, want, "seed {seed}: prefix scan");
    let a = key(rng, 2000);
    let got: Vec<Vec<u8>> = db
        .range((Bound::Excluded(a.as_slice()), Bound::Unbounded))
        .map(|r| r.unwrap().0)
        .collect();
    let want: Vec<Vec<u8>> = model
        .range((Bound::Excluded(a.clone()), Bound::Unbounded))
        .map(|(k, _)| k.clone())
        .collect();
    assert_eq!(got, want, "seed {seed}: excluded-start range");
}

fn run_seed(seed: u64, ops: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut opts = small_options(&mut rng);
    let mut db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model: Model = BTreeMap::new();
    let mut snaps: Vec<(shale::Snapshot, Model)> = Vec::new();
    let space: u32 = rng.gen_range(50..2000);
    let mut window: u32 = 0;
    for i in 0..ops {
        match rng.gen_range(0..100) {
            0..=39 => {
                let (k, v) = (write_key(&mut rng, space, &mut window), value(&mut rng));
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            40..=49 => {
                let k = write_key(&mut rng, space, &mut window);
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            50..=59 => {
                let mut b = WriteBatch::new();
                for _ in 0..rng.gen_range(1..10) {
                    let k = write_key(&mut rng, space, &mut window);
                    if rng.gen_bool(0.7) {
                        let v = value(&mut rng);
                        b.put(&k, &v);
                        model.insert(k, v);
                    } else {
                        b.delete(&k);
                        model.remove(&k);
                    }
                }
                db.write(
                    b,
                    &WriteOptions {
                        sync: rng.gen_bool(0.05),
                        disable_wal: false,
                    },
                )
                .unwrap();
            }
            60..=79 => {
                let k = key(&mut rng, space);
                let got = db.get(&k).unwrap().map(|v| v.to_vec());
                assert_eq!(got, model.get(&k).cloned(), "seed {seed} op {i}: get {k:?}");
            }
            98 => {
                let mut ro = ReadOptions::new();
                ro.fill_cache = rng.gen_bool(0.5);
                ro.readahead_size = [0, 4096][rng.gen_range(0..2)];
                check_read_at(
                    &db,
                    &model,
                    &mut ro,
                    &mut rng,
                    space,
                    &format!("seed {seed} op {i}: latest"),
                );
            }
            80..=84 => {
                // Nearby keys (shared blocks), in random order, duplicates allowed.
                let base = rng.gen_range(0..space);
                let keys: Vec<Vec<u8>> = (0..rng.gen_range(1..16))
                    .map(|_| format!("k{:05}", base + rng.gen_range(0..20)).into_bytes())
                    .collect();
                let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
                let mut ro = ReadOptions::new();
                ro.fill_cache = rng.gen_bool(0.5);
                let got = db.multi_get(&refs, &ro);
                assert_eq!(got.len(), keys.len());
                for (k, r) in keys.iter().zip(got) {
                    let got = r.unwrap().map(|v| v.to_vec());
                    assert_eq!(
                        got,
                        model.get(k).cloned(),
                        "seed {seed} op {i}: multi_get {k:?}"
                    );
                }
            }
            85..=87 => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), model.clone()));
                } else {
                    snaps.remove(rng.gen_range(0..snaps.len()));
                }
            }
            88..=90 => {
                if let Some((s, m)) = snaps.get(rng.gen_range(0..snaps.len().max(1))) {
                    let k = key(&mut rng, space);
                    let mut ro = ReadOptions::new();
                    ro.snapshot = Some(s);
                    let got = db.get_opt(&k, &ro).unwrap().map(|v| v.to_vec());
                    assert_eq!(got, m.get(&k).cloned(), "seed {seed} op {i}: snapshot get");
                    let ctx = format!("seed {seed} op {i}: at snapshot {}", s.sequence());
                    check_read_at(&db, m, &mut ro, &mut rng, space, &ctx);
                    let mut it = db.iter(&ro);
                    it.seek_to_first();
                    let mut n = 0;
                    let mut mi = m.iter();
                    while it.valid() && n < 50 {
                        let (mk, mv) = mi.next().expect("model shorter than snapshot iterator");
                        assert_eq!(
                            (it.key(), it.value()),
                            (mk.as_slice(), mv.as_slice()),
                            "seed {seed}: snapshot iter"
                        );
                        it.next();
                        n += 1;
                    }
                }
            }
            91..=92 => db.flush().unwrap(),
            93..=94 => {
                // Every bound shape: none, either side, both, empty, beyond.
                let a = random_bound(&mut rng, space);
                let b = random_bound(&mut rng, space);
                let r = db.compact_range(a.as_deref(), b.as_deref());
                match (&a, &b) {
                    (Some(a), Some(b)) if a > b => assert!(
                        matches!(r, Err(shale::Error::InvalidArgument(_))),
                        "seed {seed} op {i}: reversed compact_range: {r:?}"
                    ),
                    _ => r.unwrap(),
                }
                if rng.gen_bool(0.2) {
                    db.wait_for_compaction().unwrap();
                }
            }
            95 => check_iteration(&db, &model, &mut rng, seed),
            96 => {
                // A range read from both ends, interleaved, while the DB
                // changes under it: it must read the state of its creation.
                let lo = random_bound(&mut rng, space);
                let want: Vec<(Vec<u8>, Vec<u8>)> = model
                    .iter()
                    .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let mut r = match &lo {
                    Some(l) => db.range(l.clone()..),
                    None => db.range(..),
                };
                let (mut front, mut back) = (Vec::new(), Vec::new());
                let mut step = 0;
                loop {
                    if step == 3 {
                        // Changes after creation are not seen.
                        let k = key(&mut rng, space);
                        db.delete(&k).unwrap();
                        model.remove(&k);
                        db.flush().unwrap();
                        db.compact_range(None, None).unwrap();
                    }
                    step += 1;
                    let item = if rng.gen_bool(0.5) {
                        r.next().map(|x| (true, x))
                    } else {
                        r.next_back().map(|x| (false, x))
                    };
                    match item {
                        Some((true, kv)) => front.push(kv.unwrap()),
                        Some((false, kv)) => back.push(kv.unwrap()),
                        None => break,
                    }
                }
                back.reverse();
                front.extend(back);
                assert!(
                    front == want,
                    "seed {seed} op {i}: range from both ends differs"
                );
            }
            97 => {
                let wo = WriteOptions {
                    sync: false,
                    disable_wal: true,
                };
                let (k, v) = (key(&mut rng, space), value(&mut rng));
                let mut b = WriteBatch::new();
                b.put(&k, &v);
                db.write(b, &wo).unwrap();
                model.insert(k, v);
            }
            _ => {
                if rng.gen_bool(0.3) {
                    snaps.clear();
                    db.close().unwrap();
                    opts = if rng.gen_bool(0.5) {
                        changed_options(&mut rng, &opts)
                    } else {
                        opts
                    };
                    db = Db::open(dir.path(), opts.clone()).unwrap();
                } else if opts.manual_wal_flush {
                    db.flush_wal(rng.gen_bool(0.5)).unwrap();
                } else {
                    // No background error: resume is a no-op that succeeds.
                    db.resume().unwrap();
                }
            }
        }
    }
    check_iteration(&db, &model, &mut rng, seed);
    snaps.clear();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    check_iteration(&db, &model, &mut rng, seed);
}

#[test]
fn model_random_seeds() {
    if let Ok(s) = std::env::var("SHALE_SEED") {
        run_seed(s.parse().unwrap(), 3000);
        return;
    }
    let base: u64 = 0x5ea1e;
    for i in 0..12 {
        let seed = base + i;
        let r = std::panic::catch_unwind(|| run_seed(seed, 2500));
        if r.is_err() {
            panic!("model test failed: reproduce with SHALE_SEED={seed} cargo test --test model");
        }
    }
}

#[test]
#[ignore = "long: 200 seeds"]
fn model_many_seeds() {
    for seed in 0..200 {
        let r = std::panic::catch_unwind(|| run_seed(seed, 2000));
        if r.is_err() {
            panic!("model test failed: reproduce with SHALE_SEED={seed} cargo test --test model");
        }
    }
}
