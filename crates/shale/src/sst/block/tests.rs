use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::base::{make_internal_key, ValueKind, KIND_FOR_SEEK};
use crate::sst::block_builder::BlockBuilder;

/// Internal keys wrapped so a BTreeMap orders them like the block.
#[derive(Clone, PartialEq, Eq, Debug)]
struct IKey(Vec<u8>);
impl Ord for IKey {
    fn cmp(&self, o: &Self) -> Ordering {
        compare_internal(&self.0, &o.0)
    }
}
impl PartialOrd for IKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

fn ikey(user: &[u8], seq: u64, kind: u8) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, user, seq, kind);
    k
}

fn random_user_key(rng: &mut SmallRng) -> Vec<u8> {
    // Small alphabet and shared prefixes so prefix compression matters.
    let len = rng.gen_range(0..12);
    (0..len)
        .map(|_| b"aab c\xff"[rng.gen_range(0..6)])
        .collect()
}

fn build(model: &BTreeMap<IKey, Vec<u8>>, interval: usize) -> Arc<Block> {
    let mut b = BlockBuilder::new(interval);
    for (k, v) in model {
        b.add(&k.0, v);
    }
    let data = b.finish().to_vec();
    Arc::new(Block::new(data, Arc::from("test.sst"), 4096).unwrap())
}

fn check_against_model(seed: u64, interval: usize, n: usize) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut model = BTreeMap::new();
    for _ in 0..n {
        let k = ikey(
            &random_user_key(&mut rng),
            rng.gen_range(0..50),
            rng.gen_range(0..2),
        );
        let vlen = rng.gen_range(0..20);
        let v: Vec<u8> = (0..vlen).map(|_| rng.gen()).collect();
        model.insert(IKey(k), v);
    }
    let block = build(&model, interval);
    let entries: Vec<(Vec<u8>, Vec<u8>)> = model
        .iter()
        .map(|(k, v)| (k.0.clone(), v.clone()))
        .collect();
    let mut it = BlockIterator::new(block);

    // Full forward and backward scans.
    it.seek_to_first();
    for (k, v) in &entries {
        assert!(it.valid(), "seed {seed}");
        assert_eq!(it.key(), &k[..], "seed {seed}");
        assert_eq!(it.value(), &v[..], "seed {seed}");
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, v) in entries.iter().rev() {
        assert!(it.valid(), "seed {seed}");
        assert_eq!(it.key(), &k[..], "seed {seed}");
        assert_eq!(it.value(), &v[..], "seed {seed}");
        it.prev();
    }
    assert!(!it.valid());
    it.status().unwrap();

    // Random seeks followed by short random walks.
    for _ in 0..300 {
        let target = ikey(
            &random_user_key(&mut rng),
            rng.gen_range(0..60),
            KIND_FOR_SEEK,
        );
        let t = IKey(target.clone());
        let mut pos = entries.partition_point(|(k, _)| IKey(k.clone()) < t);
        if rng.gen_bool(0.5) {
            it.seek(&target);
        } else {
            it.seek_for_prev(&target);
            pos = entries.partition_point(|(k, _)| IKey(k.clone()) <= t);
            if pos == 0 {
                assert!(!it.valid(), "seed {seed}");
                continue;
            }
            pos -= 1;
        }
        for _ in 0..rng.gen_range(0..8) {
            if pos >= entries.len() {
                break;
            }
            assert!(it.valid(), "seed {seed}");
            assert_eq!(it.key(), &entries[pos].0[..], "seed {seed}");
            assert_eq!(it.value(), &entries[pos].1[..], "seed {seed}");
            if rng.gen_bool(0.5) {
                it.next();
                pos += 1;
            } else if pos == 0 {
                it.prev();
                assert!(!it.valid(), "seed {seed}");
                break;
            } else {
                it.prev();
                pos -= 1;
            }
        }
        if pos >= entries.len() {
            assert!(!it.valid(), "seed {seed}");
        }
    }
    it.status().unwrap();
}

#[test]
fn block_iterator_matches_btreemap_model() {
    let base: u64 = rand::random();
    for (i, interval) in [1usize, 16, 2, 3].into_iter().enumerate() {
        for n in [0usize, 1, 5, 40, 700] {
            let seed = base.wrapping_add((i * 1000 + n) as u64);
            println!("seed {seed} interval {interval} n {n}");
            check_against_model(seed, interval, n);
        }
    }
}

#[test]
fn empty_block() {
    let mut b = BlockBuilder::new(16);
    let block = Arc::new(Block::new(b.finish().to_vec(), Arc::from("f"), 0).unwrap());
    assert!(block.is_empty());
    let mut it = BlockIterator::new(block);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(&ikey(b"a", 1, 1));
    assert!(!it.valid());
    it.seek_for_prev(&ikey(b"a", 1, 1));
    assert!(!it.valid());
    it.status().unwrap();
}

#[test]
fn bad_restart_arrays_are_corruption() {
    let f: Arc<str> = Arc::from("x.sst");
    for bad in [
        vec![],
        vec![1, 0, 0],
        vec![0, 0, 0, 0],                         // zero restarts
        vec![0, 0, 0, 0, 2, 0, 0, 0],             // too many restarts
        vec![0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0], // first restart != 0
    ] {
        match Block::new(bad.clone(), f.clone(), 77) {
            Err(Error::Corruption { file, offset, .. }) => {
                assert_eq!((file.as_str(), offset), ("x.sst", 77), "{bad:?}");
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
}

/// Every single-byte change of a valid block, and random garbage, must
/// either parse or give Corruption, and iterating must never panic.
#[test]
fn damaged_blocks_never_panic() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut model = BTreeMap::new();
    for i in 0..60u32 {
        let k = ikey(
            format!("key{:05}", i * 7).as_bytes(),
            9,
            ValueKind::Value as u8,
        );
        model.insert(IKey(k), vec![b'v'; (i % 9) as usize]);
    }
    let good = build(&model, 4).data().to_vec();
    let mut inputs: Vec<Vec<u8>> = Vec::new();
    for i in 0..good.len() {
        let mut b = good.clone();
        b[i] ^= 1 << rng.gen_range(0..8);
        inputs.push(b);
    }
    for _ in 0..300 {
        let n = rng.gen_range(0..200);
        inputs.push((0..n).map(|_| rng.gen()).collect());
    }
    for data in inputs {
        let Ok(block) = Block::new(data, Arc::from("f"), 0) else {
            continue;
        };
        let mut it = BlockIterator::new(Arc::new(block));
        exercise(&mut it, &mut rng);
    }
}

fn exercise(it: &mut BlockIterator, rng: &mut SmallRng) {
    let mut steps = 0;
    it.seek_to_first();
    while it.valid() && steps < 10_000 {
        let _ = (it.key(), it.value());
        it.next();
        steps += 1;
    }
    it.seek_to_last();
    while it.valid() && steps < 20_000 {
        it.prev();
        steps += 1;
    }
    for _ in 0..20 {
        let t = ikey(
            format!("key{:05}", rng.gen_range(0..500)).as_bytes(),
            5,
            KIND_FOR_SEEK,
        );
        it.seek(&t);
        if it.valid() {
            it.prev();
        }
        it.seek_for_prev(&t);
        if it.valid() {
            it.next();
        }
    }
    if let Err(e) = it.status() {
        assert!(e.is_corruption(), "{e:?}");
    }
}
