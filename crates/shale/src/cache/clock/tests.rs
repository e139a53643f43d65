//! Tests of the clock cache: single-threaded semantics against a map model,
//! priorities, strict capacity, pinning, the Invisible path, counter
//! folding, and a concurrent stress test with drop accounting.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::cache::test_util::{seed, Tracked, Tracker};

fn k(i: u64) -> CacheKey {
    CacheKey::new(i % 5, i * 4096)
}

fn opts(capacity: usize, est: usize, bits: i32) -> CacheOptions {
    CacheOptions {
        capacity,
        num_shard_bits: bits,
        strict_capacity_limit: false,
        estimated_entry_charge: est,
        ..CacheOptions::default()
    }
}

/// Iteration scale: Miri is ~1000x slower.
fn scaled(n: usize) -> usize {
    if cfg!(miri) {
        (n / 100).max(10)
    } else {
        n
    }
}

#[test]
fn insert_lookup_erase_and_counters() {
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(1000, 10, 1));
    for i in 0..10 {
        assert!(cache.insert(k(i), Arc::new(i), 10, Priority::Low).is_ok());
    }
    for i in 0..15 {
        let pri = if i % 2 == 0 {
            Priority::High
        } else {
            Priority::Bottom
        };
        let got = cache.lookup(&k(i), pri);
        assert_eq!(got.map(|v| *v), if i < 10 { Some(i) } else { None });
    }
    let st = cache.stats();
    assert_eq!(st.hits, [5, 0, 5]);
    assert_eq!(st.misses, [3, 0, 2]);
    assert_eq!(
        (st.bytes_inserted, st.bytes_evicted, st.entries, st.usage),
        (100, 0, 10, 100)
    );
    // Duplicate insert keeps the first value.
    assert!(cache.insert(k(3), Arc::new(99), 10, Priority::Low).is_ok());
    assert_eq!(cache.lookup(&k(3), Priority::Low).map(|v| *v), Some(3));
    cache.erase(&k(3));
    cache.erase(&k(3));
    assert!(cache.lookup(&k(3), Priority::Low).is_none());
    assert_eq!(cache.usage(), 90);
    assert_eq!(cache.stats().entries, 9);
    cache.check_invariants();
}

#[test]
fn randomized_against_map_model() {
    let s = seed("clock::randomized_against_map_model");
    let mut rng = SmallRng::seed_from_u64(s);
    for round in 0..scaled(20) {
        let cap = rng.gen_range(20..200);
        let est = rng.gen_range(1..12);
        let bits = rng.gen_range(0..2);
        let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(cap, est, bits));
        // What was inserted under each key (values never change per key).
        let mut model: BTreeMap<CacheKey, u64> = BTreeMap::new();
        let mut held: Vec<Arc<u64>> = Vec::new();
        for step in 0..scaled(1500) {
            let i = rng.gen_range(0..120);
            let key = k(i);
            match rng.gen_range(0..10) {
                0..=3 => {
                    let charge = rng.gen_range(1..10);
                    let v = Arc::new(i);
                    let pinned = rng.gen_bool(0.1);
                    if pinned {
                        held.push(v.clone());
                    }
                    assert!(cache
                        .insert(key, v, charge, Priority::ALL[rng.gen_range(0..3)])
                        .is_ok());
                    model.insert(key, i);
                    // A pinned value that fits the table is always kept.
                    if pinned && cache.stats().entries < cache.table_len() {
                        assert!(
                            cache.lookup(&key, Priority::Low).is_some(),
                            "seed {s} round {round} step {step}"
                        );
                    }
                }
                4..=7 => {
                    if let Some(v) = cache.lookup(&key, Priority::Low) {
                        assert_eq!(
                            Some(&*v),
                            model.get(&key),
                            "seed {s} round {round} step {step}"
                        );
                    }
                }
                8 => {
                    cache.erase(&key);
                    assert!(cache.lookup(&key, Priority::Low).is_none());
                }
                _ => {
                    if !held.is_empty() {
                        let j = rng.gen_range(0..held.len());
                        held.swap_remove(j);
                    }
                    if rng.gen_bool(0.05) {
                        cache.set_capacity(rng.gen_range(10..200));
                    }
                }
            }
            cache.check_invariants();
        }
        // With nothing pinned, the clock brings usage within capacity.
        held.clear();
        cache.set_capacity(cache.capacity());
        // Shard capacities are rounded up.
        let bound = CacheOptions::per_shard(cache.capacity(), bits as u32) << bits;
        assert!(
            cache.usage() <= bound,
            "seed {s} round {round}: {} > {bound}",
            cache.usage()
        );
        assert_eq!(cache.pinned_usage(), 0);
    }
}

#[test]
fn capacity_exceeded_only_by_pinned_entries() {
    let s = seed("clock::capacity_exceeded_only_by_pinned_entries");
    let mut rng = SmallRng::seed_from_u64(s);
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(300, 5, 0));
    let mut held: Vec<Arc<u64>> = Vec::new();
    for _ in 0..scaled(5000) {
        let i = rng.gen_range(0..400);
        let charge = rng.gen_range(1..10);
        let v = Arc::new(i);
        if rng.gen_bool(0.05) {
            held.push(v.clone());
        }
        if rng.gen_bool(0.1) && !held.is_empty() {
            let j = rng.gen_range(0..held.len());
            held.swap_remove(j);
        }
        let present = cache.lookup(&k(i), Priority::Low).is_some();
        assert!(cache.insert(k(i), v, charge, Priority::Low).is_ok());
        if !present {
            let (usage, pinned) = (cache.usage(), cache.pinned_usage());
            assert!(
                usage <= 300 || usage <= pinned + charge,
                "seed {s}: usage {usage} pinned {pinned}"
            );
        }
    }
}

/// Fills a cache of `2n` entries with `n` of priority `a` and `n` of `b`
/// (interleaved), streams `n` Bottom entries through it and returns how
/// many of the `a` and `b` entries survived.
fn survivors(n: u64, a: Priority, b: Priority) -> (usize, usize) {
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(2 * n as usize * 10, 10, 0));
    for i in 0..n {
        assert!(cache.insert(k(2 * i), Arc::new(0), 10, a).is_ok());
        assert!(cache.insert(k(2 * i + 1), Arc::new(1), 10, b).is_ok());
    }
    for i in 0..n {
        assert!(cache
            .insert(k(10_000 + i), Arc::new(2), 10, Priority::Bottom)
            .is_ok());
    }
    let count = |parity: u64| {
        (0..n)
            .filter(|i| cache.lookup(&k(2 * i + parity), Priority::Low).is_some())
            .count()
    };
    (count(0), count(1))
}

#[test]
fn clock_evicts_lower_priorities_first() {
    let n = 200;
    // Countdowns 3 vs 2: the Low entries reach zero a pass earlier.
    let (high, low) = survivors(n, Priority::High, Priority::Low);
    assert!(
        high > low && high as u64 >= n * 3 / 4,
        "high {high} low {low}"
    );
    // Countdowns 2 vs 1.
    let (low, bottom) = survivors(n, Priority::Low, Priority::Bottom);
    assert!(
        low > bottom && low as u64 >= n * 3 / 4,
        "low {low} bottom {bottom}"
    );
}

#[test]
fn hits_protect_entries_from_the_clock() {
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(100, 10, 0));
    for i in 0..10 {
        assert!(cache
            .insert(k(i), Arc::new(i), 10, Priority::Bottom)
            .is_ok());
    }
    // Keep hitting key 0 while streaming new entries through the cache.
    for i in 10..100 {
        assert!(
            cache.lookup(&k(0), Priority::Low).is_some(),
            "hot entry evicted before {i}"
        );
        assert!(cache
            .insert(k(i), Arc::new(i), 10, Priority::Bottom)
            .is_ok());
    }
}

#[test]
fn strict_capacity_limit_refuses_and_returns_value() {
    let o = CacheOptions {
        strict_capacity_limit: true,
        ..opts(10, 5, 0)
    };
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&o);
    let a = Arc::new(1);
    assert!(cache.insert(k(1), a.clone(), 6, Priority::Low).is_ok());
    let b = Arc::new(2);
    match cache.insert(k(2), b.clone(), 6, Priority::Low) {
        Err(back) => assert!(Arc::ptr_eq(&back, &b)),
        Ok(()) => panic!("strict limit not enforced"),
    }
    assert_eq!(cache.pinned_usage(), 6);
    assert!(cache.insert(k(3), Arc::new(3), 11, Priority::Low).is_err());
    drop(a);
    assert!(cache.insert(k(2), b, 6, Priority::Low).is_ok());
    assert!(cache.lookup(&k(1), Priority::Low).is_none());
    assert_eq!(cache.usage(), 6);
    cache.check_invariants();
}

#[test]
fn non_strict_over_capacity_keeps_pinned_and_drops_unpinned() {
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(10, 5, 0));
    let a = Arc::new(1);
    let b = Arc::new(2);
    assert!(cache.insert(k(1), a.clone(), 8, Priority::Low).is_ok());
    assert!(cache.insert(k(2), b.clone(), 8, Priority::Low).is_ok());
    assert_eq!((cache.usage(), cache.pinned_usage()), (16, 16));
    assert!(cache.insert(k(3), Arc::new(3), 8, Priority::Low).is_ok());
    assert!(cache.lookup(&k(3), Priority::Low).is_none());
    assert_eq!(cache.stats().bytes_evicted, 8);
    drop((a, b));
    assert!(cache.insert(k(4), Arc::new(4), 2, Priority::Low).is_ok());
    assert!(cache.usage() <= 10);
    cache.check_invariants();
}

#[test]
fn full_table_of_pinned_entries_rejects_more() {
    // Capacity is large but the table has 16 slots.
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(1 << 30, 1 << 30, 0));
    assert_eq!(cache.table_len(), 16);
    let held: Vec<Arc<u64>> = (0..20).map(Arc::new).collect();
    for (i, v) in held.iter().enumerate() {
        assert!(cache
            .insert(k(i as u64), v.clone(), 1, Priority::High)
            .is_ok());
    }
    assert_eq!(cache.stats().entries, 16);
    assert!(cache.lookup(&k(19), Priority::Low).is_none());
    for i in 0..20 {
        if let Some(v) = cache.lookup(&k(i), Priority::Low) {
            assert_eq!(*v, i);
        }
    }
    cache.check_invariants();
    drop(held);
    // Unpinned: the table turns over again, within the load limit.
    for i in 100..140 {
        assert!(cache.insert(k(i), Arc::new(i), 1, Priority::Low).is_ok());
        assert!(cache.lookup(&k(i), Priority::Low).is_some());
    }
    assert!(cache.stats().entries <= 13);
    cache.check_invariants();
}

#[test]
fn erase_of_referenced_entry_goes_invisible_then_freed() {
    let t = Tracker::new();
    let cache: ClockCache<Arc<Tracked>> = ClockCache::new(&opts(100, 10, 0));
    assert!(cache.insert(k(1), t.make(k(1)), 10, Priority::Low).is_ok());
    let shard = &cache.shards[0];
    let i = shard
        .find_visible(&k(1), hash_key(&k(1)))
        .expect("entry present");
    let slot = &shard.slots[i];
    // Simulate a lookup in the middle of cloning.
    slot.meta.fetch_add(ACQ_ONE, Acquire);
    cache.erase(&k(1));
    assert_eq!(state(slot.meta.load(Relaxed)), INVISIBLE);
    assert!(cache.lookup(&k(1), Priority::Low).is_none());
    assert_eq!(cache.usage(), 10);
    // Still referenced: the clock cannot free it.
    cache.set_capacity(0);
    assert_eq!(t.live(), 1);
    release(slot);
    cache.set_capacity(0);
    assert_eq!(t.live(), 0);
    assert_eq!(cache.usage(), 0);
    assert_eq!(state(slot.meta.load(Relaxed)), EMPTY);
    cache.check_invariants();
}

#[test]
fn counters_fold_before_overflow() {
    let cache: ClockCache<Arc<u64>> = ClockCache::new(&opts(100, 10, 0));
    assert!(cache.insert(k(1), Arc::new(1), 10, Priority::Low).is_ok());
    let shard = &cache.shards[0];
    let i = shard
        .find_visible(&k(1), hash_key(&k(1)))
        .expect("entry present");
    let slot = &shard.slots[i];
    let big = CORRECTION_THRESHOLD + 5;
    slot.meta.store(meta(VISIBLE, big, big), Release);
    assert_eq!(cache.lookup(&k(1), Priority::Low).map(|v| *v), Some(1));
    let m = slot.meta.load(Relaxed);
    assert_eq!(state(m), VISIBLE);
    assert_eq!((acquires(m), releases(m)), (MAX_COUNTDOWN, MAX_COUNTDOWN));
    // Still evictable after folding.
    cache.set_capacity(0);
    assert_eq!(cache.usage(), 0);
    cache.check_invariants();
}

#[test]
fn no_value_leaked_or_dropped_twice() {
    let t = Tracker::new();
    {
        let cache = ClockCache::new(&opts(50, 3, 1));
        let mut held = Vec::new();
        for i in 0..scaled(2000) as u64 {
            let key = k(i % 60);
            let v = t.make(key);
            if i % 17 == 0 {
                held.push(v.clone());
            }
            let _ = cache.insert(key, v, 1 + (i as usize % 7), Priority::ALL[i as usize % 3]);
            if let Some(v) = cache.lookup(&k(i / 2 % 60), Priority::High) {
                assert_eq!(v.key, k(i / 2 % 60));
            }
            if i % 11 == 0 {
                cache.erase(&k(i % 13));
            }
            if i % 50 == 0 {
                held.clear();
            }
        }
        cache.check_invariants();
    }
    assert_eq!(t.made(), t.dropped());
}

/// Threads insert, look up and erase random keys; every value carries its
/// key, and every lookup must return the value of the key asked for.
fn stress(duration: Duration, threads: usize) {
    let s = seed("clock::stress");
    let t = Tracker::new();
    let max_ops = if cfg!(miri) { 300 } else { usize::MAX };
    {
        // Small, so that slots are constantly evicted and reused.
        let cache: ClockCache<Arc<Tracked>> = ClockCache::new(&opts(256, 4, 1));
        let stop = AtomicBool::new(false);
        let total_ops: usize = std::thread::scope(|sc| {
            let mut handles = Vec::new();
            for th in 0..threads {
                let (cache, stop, t) = (&cache, &stop, &t);
                handles.push(sc.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(s.wrapping_add(th as u64));
                    let mut held: Vec<Arc<Tracked>> = Vec::new();
                    let mut ops = 0;
                    while !stop.load(Relaxed) && ops < max_ops {
                        ops += 1;
                        let key = k(rng.gen_range(0..300));
                        match rng.gen_range(0..100) {
                            0..=29 => {
                                let v = t.make(key);
                                if rng.gen_bool(0.02) {
                                    held.push(v.clone());
                                }
                                let pri = Priority::ALL[rng.gen_range(0..3)];
                                let _ = cache.insert(key, v, rng.gen_range(1..8), pri);
                            }
                            30..=94 => {
                                if let Some(v) = cache.lookup(&key, Priority::Low) {
                                    assert_eq!(v.key, key, "seed {s}");
                                    if rng.gen_bool(0.01) {
                                        held.push(v);
                                    }
                                }
                            }
                            _ => cache.erase(&key),
                        }
                        if held.len() > 8 {
                            held.swap_remove(rng.gen_range(0..held.len()));
                        }
                    }
                    ops
                }));
            }
            // Under Miri the threads stop after `max_ops` operations each.
            if !cfg!(miri) {
                let start = Instant::now();
                while start.elapsed() < duration {
                    std::thread::sleep(Duration::from_millis(10));
                }
                stop.store(true, Relaxed);
            }
            handles
                .into_iter()
                .map(|h| h.join().expect("stress thread panicked"))
                .sum()
        });
        if cfg!(miri) {
            assert_eq!(total_ops, threads * max_ops);
        } else {
            assert!(total_ops > threads * 1000, "only {total_ops} operations");
        }
        cache.check_invariants();
        assert_eq!(
            t.live(),
            cache.stats().entries,
            "values alive outside the cache after threads ended"
        );
        let st = cache.stats();
        println!("stress: {total_ops} ops, {st:?}, values made {}", t.made());
        assert!(st.total_hits() + st.total_misses() > 0);
    }
    assert_eq!(t.made(), t.dropped(), "seed {s}");
}

#[test]
fn concurrent_stress_values_match_keys() {
    stress(Duration::from_secs(1), 4);
}

#[test]
#[ignore]
fn concurrent_stress_long() {
    stress(Duration::from_secs(30), 8);
}
