use super::*;
use crate::base::{make_internal_key, KIND_FOR_SEEK};
use crate::sst::block_builder::BlockBuilder;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, user, seq, 1);
    k
}

fn block(keys: &[Vec<u8>], interval: usize) -> Arc<Block> {
    let mut b = BlockBuilder::new(interval);
    for (i, k) in keys.iter().enumerate() {
        b.add(k, format!("handle{i}").as_bytes());
    }
    let data = b.finish().to_vec();
    Arc::new(Block::new(data, Arc::from("t.sst"), 0).unwrap())
}

/// User keys with long shared prefixes, short keys and exact 8-byte
/// keys, so many entries tie on their prefix.
fn user_keys(rng: &mut SmallRng, n: usize) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..n)
        .map(|_| match rng.gen_range(0..4) {
            0 => format!("user:{:06}", rng.gen_range(0..500)).into_bytes(),
            1 => vec![rng.gen_range(0..4u8); rng.gen_range(0..10)],
            2 => (rng.gen_range(0..1000u64) << 20).to_be_bytes().to_vec(),
            _ => format!("{:016}", rng.gen_range(0..100_000)).into_bytes(),
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

#[test]
fn agrees_with_the_block_search_on_every_target() {
    for seed in 0..20u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let users = user_keys(&mut rng, 300);
        // Several versions of some keys, in internal-key order.
        let mut keys = Vec::new();
        for u in &users {
            for s in (0..rng.gen_range(1..3u64)).rev() {
                keys.push(ikey(u, 10 + s * 7));
            }
        }
        let b = block(&keys, 1);
        let search = IndexSearch::build(&b).expect("one restart per entry");
        let mut buf = Vec::new();
        let mut targets = user_keys(&mut rng, 200);
        targets.extend(users.iter().cloned());
        for u in &targets {
            for seq in [0, 12, 20, u64::MAX >> 8] {
                let mut t = Vec::new();
                make_internal_key(&mut t, u, seq, KIND_FOR_SEEK);
                let want = b.seek_point(&t, &mut buf).unwrap();
                let got = search.seek(&b, &t).unwrap();
                assert_eq!(got, want, "seed {seed} target {u:?}@{seq}");
            }
        }
    }
}

#[test]
fn refuses_blocks_with_shared_restart_intervals() {
    let keys: Vec<Vec<u8>> = (0..50u32)
        .map(|i| ikey(format!("k{i:04}").as_bytes(), 1))
        .collect();
    assert!(IndexSearch::build(&block(&keys, 4)).is_none());
    let s = IndexSearch::build(&block(&keys, 1)).unwrap();
    assert_eq!(s.size(), 50 * 8);
}
