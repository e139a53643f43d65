//! Tests of the LRU cache: a pool-aware model, priority semantics, strict
//! capacity, pinning, counters and drop accounting.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::cache::test_util::{seed, Tracker};

fn k(i: u64) -> CacheKey {
    CacheKey::new(i / 7, i)
}

fn opts(capacity: usize, high: f64, low: f64) -> CacheOptions {
    CacheOptions {
        capacity,
        num_shard_bits: 0,
        strict_capacity_limit: false,
        high_pri_pool_ratio: high,
        low_pri_pool_ratio: low,
        estimated_entry_charge: 1,
    }
}

/// The same policy written the obvious way: three `VecDeque`s, linear
/// searches, no pinning.
struct Model {
    /// Bottom, Low, High; each oldest first. Entries: (key, charge, pri, hit).
    lists: [VecDeque<(CacheKey, usize, Priority, bool)>; 3],
    capacity: usize,
    high_ratio: f64,
    low_ratio: f64,
    inserted: u64,
    evicted: u64,
}

impl Model {
    fn usage(&self) -> usize {
        self.lists.iter().flatten().map(|e| e.1).sum()
    }

    fn pool_usage(&self, l: usize) -> usize {
        self.lists[l].iter().map(|e| e.1).sum()
    }

    fn caps(&self) -> (usize, usize) {
        (
            (self.capacity as f64 * self.high_ratio) as usize,
            (self.capacity as f64 * self.low_ratio) as usize,
        )
    }

    fn find(&self, key: &CacheKey) -> Option<(usize, usize)> {
        for (l, list) in self.lists.iter().enumerate() {
            if let Some(p) = list.iter().position(|e| e.0 == *key) {
                return Some((l, p));
            }
        }
        None
    }

    fn place(&mut self, e: (CacheKey, usize, Priority, bool)) {
        let l = if self.high_ratio > 0.0 && (e.2 == Priority::High || e.3) {
            2
        } else if self.low_ratio > 0.0 && (e.2 != Priority::Bottom || e.3) {
            1
        } else {
            0
        };
        self.lists[l].push_back(e);
        self.rebalance();
    }

    fn rebalance(&mut self) {
        let (hc, lc) = self.caps();
        while self.pool_usage(2) > hc {
            if let Some(e) = self.lists[2].pop_front() {
                self.lists[1].push_back(e);
            }
        }
        while self.pool_usage(1) > lc {
            if let Some(e) = self.lists[1].pop_front() {
                self.lists[0].push_back(e);
            }
        }
    }

    fn evict(&mut self, charge: usize) {
        while self.usage() + charge > self.capacity {
            let Some(l) = (0..3).find(|&l| !self.lists[l].is_empty()) else {
                return;
            };
            if let Some(e) = self.lists[l].pop_front() {
                self.evicted += e.1 as u64;
            }
        }
    }

    fn insert(&mut self, key: CacheKey, charge: usize, pri: Priority) {
        if self.find(&key).is_some() {
            return;
        }
        self.evict(charge);
        self.inserted += charge as u64;
        if self.usage() + charge > self.capacity {
            self.evicted += charge as u64;
            return;
        }
        self.place((key, charge, pri, false));
    }

    fn lookup(&mut self, key: &CacheKey) -> bool {
        let Some((l, p)) = self.find(key) else {
            return false;
        };
        if let Some(mut e) = self.lists[l].remove(p) {
            e.3 = true;
            self.place(e);
        }
        true
    }

    fn erase(&mut self, key: &CacheKey) {
        if let Some((l, p)) = self.find(key) {
            self.lists[l].remove(p);
        }
    }

    fn order(&self) -> Vec<CacheKey> {
        self.lists.iter().flatten().map(|e| e.0).collect()
    }
}

#[test]
fn matches_model_with_priority_pools() {
    let s = seed("lru::matches_model_with_priority_pools");
    let mut rng = SmallRng::seed_from_u64(s);
    let ratios = [
        (0.0, 0.0),
        (0.5, 0.0),
        (0.3, 0.3),
        (0.0, 0.5),
        (1.0, 0.0),
        (0.2, 0.8),
    ];
    for round in 0..30 {
        let (high, low) = ratios[round % ratios.len()];
        let cap = rng.gen_range(10..80);
        let cache: LruCache<Arc<u64>> = LruCache::new(&opts(cap, high, low));
        let mut m = Model {
            lists: Default::default(),
            capacity: cap,
            high_ratio: high,
            low_ratio: low,
            inserted: 0,
            evicted: 0,
        };
        let (mut hits, mut misses) = (0u64, 0u64);
        for step in 0..600 {
            let key = k(rng.gen_range(0..40));
            match rng.gen_range(0..100) {
                0..=44 => {
                    let charge = rng.gen_range(1..12);
                    let pri = Priority::ALL[rng.gen_range(0..3)];
                    assert!(cache.insert(key, Arc::new(key.offset), charge, pri).is_ok());
                    m.insert(key, charge, pri);
                }
                45..=89 => {
                    let got = cache.lookup(&key, Priority::Low);
                    let want = m.lookup(&key);
                    assert_eq!(got.is_some(), want, "seed {s} round {round} step {step}");
                    if let Some(v) = got {
                        assert_eq!(*v, key.offset);
                        hits += 1;
                    } else {
                        misses += 1;
                    }
                }
                90..=97 => {
                    cache.erase(&key);
                    m.erase(&key);
                }
                _ => {
                    let c = rng.gen_range(5..90);
                    cache.set_capacity(c);
                    m.capacity = c;
                    m.rebalance();
                    m.evict(0);
                }
            }
            cache.check_invariants();
            let (order, pinned) = cache.order(0);
            assert!(pinned.is_empty());
            assert_eq!(order, m.order(), "seed {s} round {round} step {step}");
            assert_eq!(cache.usage(), m.usage());
            assert_eq!(
                cache.pool_usage(0),
                (m.pool_usage(2), m.pool_usage(1), m.pool_usage(0))
            );
        }
        let st = cache.stats();
        assert_eq!(st.hits_for(Priority::Low), hits);
        assert_eq!(st.misses_for(Priority::Low), misses);
        assert_eq!(st.bytes_inserted, m.inserted);
        assert_eq!(st.bytes_evicted, m.evicted);
        assert_eq!(st.entries, m.order().len());
        assert_eq!(st.usage, m.usage());
    }
}

#[test]
fn plain_lru_order_without_pools() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(3, 0.0, 0.0));
    for i in 0..3 {
        assert!(cache.insert(k(i), Arc::new(i), 1, Priority::Low).is_ok());
    }
    assert!(cache.lookup(&k(0), Priority::Low).is_some()); // order now 1, 2, 0
    assert!(cache.insert(k(3), Arc::new(3), 1, Priority::Low).is_ok());
    assert!(cache.lookup(&k(1), Priority::Low).is_none());
    assert_eq!(cache.order(0).0, vec![k(2), k(0), k(3)]);
}

#[test]
fn high_priority_pool_protects_index_blocks() {
    // Capacity 100, high pool 50: five High blocks of 10 fill the pool; a
    // stream of Low blocks then churns through the bottom pool only.
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(100, 0.5, 0.0));
    for i in 0..5 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::High).is_ok());
    }
    for i in 100..130 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::Low).is_ok());
    }
    for i in 0..5 {
        assert!(
            cache.lookup(&k(i), Priority::High).is_some(),
            "high entry {i} evicted"
        );
    }
    // Only the five newest Low blocks remain.
    for i in 100..125 {
        assert!(
            cache.lookup(&k(i), Priority::Low).is_none(),
            "low entry {i} kept"
        );
    }
    for i in 125..130 {
        assert!(cache.lookup(&k(i), Priority::Low).is_some());
    }
    cache.check_invariants();
}

#[test]
fn hit_promotes_low_entry_above_midpoint() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(100, 0.5, 0.0));
    assert!(cache.insert(k(0), Arc::new(0), 10, Priority::Low).is_ok());
    assert!(cache.lookup(&k(0), Priority::Low).is_some()); // now in the high pool
    assert_eq!(cache.pool_usage(0), (10, 0, 0));
    for i in 1..40 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::Low).is_ok());
    }
    assert!(cache.lookup(&k(0), Priority::Low).is_some());
    assert!(cache.lookup(&k(1), Priority::Low).is_none());
}

#[test]
fn high_pool_overflow_demotes_oldest_high_entries() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(100, 0.3, 0.3));
    for i in 0..5 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::High).is_ok());
    }
    // High pool holds 30: keys 2, 3, 4. Keys 0, 1 were demoted to Low.
    assert_eq!(cache.pool_usage(0), (30, 20, 0));
    assert_eq!(cache.order(0).0, vec![k(0), k(1), k(2), k(3), k(4)]);
    for i in 5..10 {
        assert!(cache
            .insert(k(i), Arc::new(i), 10, Priority::Bottom)
            .is_ok());
    }
    // Full (100). Bottom entries are evicted before the demoted High ones.
    assert!(cache
        .insert(k(10), Arc::new(10), 10, Priority::Bottom)
        .is_ok());
    assert!(cache.lookup(&k(5), Priority::Bottom).is_none());
    assert!(cache.order(0).0.contains(&k(0)));
}

#[test]
fn strict_capacity_limit_refuses_and_returns_value() {
    let o = CacheOptions {
        strict_capacity_limit: true,
        ..opts(10, 0.5, 0.0)
    };
    let cache: LruCache<Arc<u64>> = LruCache::new(&o);
    let a = Arc::new(1);
    assert!(cache.insert(k(1), a.clone(), 6, Priority::Low).is_ok());
    let b = Arc::new(2);
    // `a` is pinned (we hold a clone): no room for 6 more.
    match cache.insert(k(2), b.clone(), 6, Priority::Low) {
        Err(back) => assert!(Arc::ptr_eq(&back, &b)),
        Ok(()) => panic!("strict limit not enforced"),
    }
    assert_eq!(cache.usage(), 6);
    assert_eq!(cache.pinned_usage(), 6);
    // Larger than the whole capacity: refused even when empty of others.
    assert!(cache.insert(k(3), Arc::new(3), 11, Priority::Low).is_err());
    drop(a);
    assert_eq!(cache.pinned_usage(), 0);
    assert!(cache.insert(k(2), b, 6, Priority::Low).is_ok());
    assert!(cache.lookup(&k(1), Priority::Low).is_none());
    assert_eq!(cache.usage(), 6);
    cache.check_invariants();
}

#[test]
fn non_strict_over_capacity_keeps_pinned_and_drops_unpinned() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(10, 0.5, 0.0));
    let a = Arc::new(1);
    assert!(cache.insert(k(1), a.clone(), 8, Priority::Low).is_ok());
    // Pinned newcomer: inserted over capacity.
    let b = Arc::new(2);
    assert!(cache.insert(k(2), b.clone(), 8, Priority::Low).is_ok());
    assert_eq!(cache.usage(), 16);
    assert_eq!(cache.pinned_usage(), 16);
    // Unpinned newcomer with no room: inserted and evicted at once.
    assert!(cache.insert(k(3), Arc::new(3), 8, Priority::Low).is_ok());
    assert!(cache.lookup(&k(3), Priority::Low).is_none());
    assert_eq!(cache.stats().bytes_evicted, 8);
    // Both pinned entries are parked, and are found again by lookups.
    let (lru, parked) = cache.order(0);
    assert!(lru.is_empty());
    assert_eq!(parked.len(), 2);
    assert!(cache.lookup(&k(1), Priority::Low).is_some());
    drop((a, b));
    // Unpinned now: the next insert evicts down to capacity.
    assert!(cache.insert(k(4), Arc::new(4), 2, Priority::Low).is_ok());
    assert!(cache.usage() <= 10, "usage {}", cache.usage());
    cache.check_invariants();
}

#[test]
fn capacity_exceeded_only_by_pinned_entries_randomized() {
    let s = seed("lru::capacity_exceeded_only_by_pinned_entries_randomized");
    let mut rng = SmallRng::seed_from_u64(s);
    for bits in [0, 2] {
        let o = CacheOptions {
            num_shard_bits: bits,
            ..opts(200, 0.5, 0.1)
        };
        let cache: LruCache<Arc<u64>> = LruCache::new(&o);
        let mut held: Vec<Arc<u64>> = Vec::new();
        for _ in 0..5000 {
            let key = k(rng.gen_range(0..300));
            match rng.gen_range(0..10) {
                0..=4 => {
                    let charge = rng.gen_range(1..30);
                    let v = Arc::new(key.offset);
                    if rng.gen_bool(0.2) {
                        held.push(v.clone());
                    }
                    let present = cache.contains(&key);
                    assert!(cache
                        .insert(key, v, charge, Priority::ALL[rng.gen_range(0..3)])
                        .is_ok());
                    if present {
                        continue;
                    }
                    // The shard inserted into is within capacity, or every
                    // entry but the new one is pinned.
                    let (usage, pinned, cap) = cache.shard_state(&key);
                    assert!(
                        usage <= cap || usage <= pinned + charge,
                        "seed {s}: usage {usage} pinned {pinned} charge {charge}"
                    );
                    if bits == 0 {
                        assert_eq!(cache.pinned_usage(), pinned);
                    }
                }
                5..=7 => {
                    if let Some(v) = cache.lookup(&key, Priority::Low) {
                        assert_eq!(*v, key.offset);
                        if rng.gen_bool(0.1) {
                            held.push(v);
                        }
                    }
                }
                8 => cache.erase(&key),
                _ => {
                    if !held.is_empty() {
                        let i = rng.gen_range(0..held.len());
                        held.swap_remove(i);
                    }
                }
            }
            cache.check_invariants();
        }
    }
}

#[test]
fn no_value_leaked_or_dropped_twice() {
    let t = Tracker::new();
    {
        let cache = LruCache::new(&opts(50, 0.5, 0.0));
        let mut held = Vec::new();
        for i in 0..500u64 {
            let v = t.make(k(i % 60));
            if i % 17 == 0 {
                held.push(v.clone());
            }
            let _ = cache.insert(
                k(i % 60),
                v,
                1 + (i as usize % 7),
                Priority::ALL[i as usize % 3],
            );
            if i % 5 == 0 {
                if let Some(v) = cache.lookup(&k(i / 2 % 60), Priority::High) {
                    assert_eq!(v.key, k(i / 2 % 60));
                }
            }
            if i % 11 == 0 {
                cache.erase(&k(i % 13));
            }
        }
        assert_eq!(
            t.live(),
            cache.stats().entries + held.iter().filter(|h| Arc::strong_count(h) == 1).count()
        );
        drop(held);
    }
    assert_eq!(t.made(), 500);
    assert_eq!(t.dropped(), 500);
}

#[test]
fn counters_count_hits_misses_per_priority() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&CacheOptions {
        num_shard_bits: 3,
        ..CacheOptions::with_capacity(1000)
    });
    for i in 0..10 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::Low).is_ok());
    }
    for i in 0..15 {
        let pri = if i % 2 == 0 {
            Priority::High
        } else {
            Priority::Bottom
        };
        let _ = cache.lookup(&k(i), pri);
    }
    let st = cache.stats();
    // Keys 0..10 hit: evens (0,2,4,6,8) High, odds Bottom; 10..15 miss.
    assert_eq!(st.hits, [5, 0, 5]);
    assert_eq!(st.misses, [3, 0, 2]);
    assert_eq!(st.bytes_inserted, 100);
    assert_eq!(st.bytes_evicted, 0);
    assert_eq!(st.entries, 10);
    assert_eq!(st.usage, 100);
    cache.erase(&k(0));
    assert_eq!(cache.stats().entries, 9);
    assert_eq!(cache.usage(), 90);
    // Duplicate insert keeps the first value.
    assert!(cache.insert(k(1), Arc::new(99), 10, Priority::Low).is_ok());
    assert_eq!(cache.lookup(&k(1), Priority::Low).map(|v| *v), Some(1));
    assert_eq!(cache.usage(), 90);
}

#[test]
fn set_capacity_shrinks_and_evicts() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&opts(100, 0.5, 0.0));
    for i in 0..10 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::Low).is_ok());
    }
    cache.set_capacity(35);
    assert_eq!(cache.capacity(), 35);
    assert_eq!(cache.usage(), 30);
    assert!(cache.lookup(&k(9), Priority::Low).is_some());
    assert!(cache.lookup(&k(6), Priority::Low).is_none());
    cache.check_invariants();
}

#[test]
fn concurrent_use_keeps_structure_consistent() {
    let cache: LruCache<Arc<u64>> = LruCache::new(&CacheOptions {
        num_shard_bits: 2,
        ..opts(4000, 0.5, 0.0)
    });
    std::thread::scope(|sc| {
        for t in 0..4u64 {
            let cache = &cache;
            sc.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(t);
                for _ in 0..20_000 {
                    let key = k(rng.gen_range(0..1000));
                    if rng.gen_bool(0.5) {
                        if let Some(v) = cache.lookup(&key, Priority::Low) {
                            assert_eq!(*v, key.offset);
                        }
                    } else {
                        let _ = cache.insert(key, Arc::new(key.offset), 10, Priority::Low);
                    }
                }
            });
        }
    });
    cache.check_invariants();
    assert!(cache.usage() <= 4000);
}

/// A value that, when dropped, records whether its cache's shard lock was
/// free (it must be: evicted values are dropped after the lock).
struct LockProbe {
    cache: Arc<std::sync::OnceLock<std::sync::Weak<LruCache<Arc<LockProbe>>>>>,
    dropped_under_lock: Arc<std::sync::atomic::AtomicUsize>,
    dropped: Arc<std::sync::atomic::AtomicUsize>,
}

impl Drop for LockProbe {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.dropped.fetch_add(1, SeqCst);
        if let Some(c) = self.cache.get().and_then(|w| w.upgrade()) {
            if c.shards[0].inner.try_lock().is_none() {
                self.dropped_under_lock.fetch_add(1, SeqCst);
            }
        }
    }
}

#[test]
fn evicted_values_are_dropped_outside_the_shard_lock() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    let cache = Arc::new(LruCache::<Arc<LockProbe>>::new(&opts(10, 0.5, 0.0)));
    let slot = Arc::new(std::sync::OnceLock::new());
    slot.set(Arc::downgrade(&cache)).ok().unwrap();
    let under = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let probe = || {
        Arc::new(LockProbe {
            cache: Arc::clone(&slot),
            dropped_under_lock: Arc::clone(&under),
            dropped: Arc::clone(&dropped),
        })
    };
    // Inserts evict one entry each once full.
    for i in 0..40 {
        assert!(cache.insert(k(i), probe(), 1, Priority::Low).is_ok());
    }
    assert_eq!(dropped.load(SeqCst), 30);
    // A shrink evicts many at once: four after the lock, the rest under it.
    cache.set_capacity(2);
    assert_eq!(dropped.load(SeqCst), 38);
    assert_eq!(
        under.load(SeqCst),
        4,
        "only a shrink's overflow is dropped under the lock"
    );
    // Unpinned newcomer with no room at all: inserted and dropped at once,
    // outside the lock.
    cache.set_capacity(0);
    assert_eq!(dropped.load(SeqCst), 40);
    assert!(cache.insert(k(100), probe(), 1, Priority::Low).is_ok());
    assert_eq!(dropped.load(SeqCst), 41);
    assert_eq!(under.load(SeqCst), 4);
}
