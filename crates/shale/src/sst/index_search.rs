//! [`IndexSearch`]: a point-lookup accelerator for an index block the table
//! owns. It keeps the first 8 bytes of every entry's user key as a
//! big-endian `u64` in one contiguous array, so a lookup binary-searches
//! 8-byte integers in a few cache lines instead of decoding and comparing a
//! scattered entry at every step; only entries whose prefix equals the
//! target's are compared in full (usually none or one).
//!
//! Correctness: zero-padded big-endian prefixes are monotone in user-key
//! order (`a <= b` implies `prefix(a) <= prefix(b)`), and internal keys sort
//! by user key first, so every entry with a smaller prefix is before the
//! target and every entry with a larger one after it. Built only for blocks
//! with one restart point per entry (how index blocks are written), checked
//! at build time together with the monotonicity; otherwise the table uses
//! the block's own search.
//!
//! Thread-safety: immutable after `build`; shared with its table.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::base::{compare_internal, extract_user_key, TRAILER_LEN};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::sst::block::{Block, BlockIterator};

/// See the module comment.
pub(crate) struct IndexSearch {
    prefixes: Box<[u64]>,
}

#[inline]
fn prefix_of(user_key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = user_key.len().min(8);
    b[..n].copy_from_slice(&user_key[..n]);
    u64::from_be_bytes(b)
}

impl IndexSearch {
    /// The accelerator for `index`, or `None` when the block does not have
    /// one restart point per entry or its keys are not sorted internal keys.
    pub(crate) fn build(index: &Arc<Block>) -> Option<IndexSearch> {
        let n = index.num_restarts();
        let mut entries = 0usize;
        let mut it = BlockIterator::new(Arc::clone(index));
        it.seek_to_first();
        while it.valid() {
            entries += 1;
            it.next();
        }
        if it.status().is_err() || entries != n {
            return None;
        }
        let mut prefixes = Vec::with_capacity(n);
        for i in 0..n {
            let (k, _) = index.restart_entry(i).ok()?;
            if k.len() < TRAILER_LEN {
                return None;
            }
            let p = prefix_of(extract_user_key(k));
            if prefixes.last().is_some_and(|&last| last > p) {
                return None;
            }
            prefixes.push(p);
        }
        Some(IndexSearch {
            prefixes: prefixes.into_boxed_slice(),
        })
    }

    /// Like `Block::seek_point` on the block it was built from: the value
    /// range of the first entry with internal key >= `target`, `None` when
    /// every key is smaller.
    pub(crate) fn seek(&self, index: &Block, target: &[u8]) -> Result<Option<Range<usize>>> {
        debug_assert_eq!(index.num_restarts(), self.prefixes.len());
        let t = prefix_of(extract_user_key(target));
        let lo = self.prefixes.partition_point(|&p| p < t);
        let hi = lo + self.prefixes[lo..].partition_point(|&p| p == t);
        // Entries before `lo` are smaller than the target and entries from
        // `hi` on are larger: the answer is in [lo, hi], found by comparing
        // full keys inside [lo, hi) only.
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = a + (b - a) / 2;
            let (k, _) = index.restart_entry(mid)?;
            if compare_internal(k, target) == Ordering::Less {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        if a < self.prefixes.len() {
            Ok(Some(index.restart_entry(a)?.1))
        } else {
            Ok(None)
        }
    }

    /// Bytes of memory held.
    pub(crate) fn size(&self) -> usize {
        self.prefixes.len() * 8
    }
}

#[cfg(test)]
mod tests {
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
}
