use super::*;
use crate::cache::CacheOptions;

fn make(clock: bool, capacity: usize) -> BlockCache<Arc<u64>> {
    let o = CacheOptions::with_capacity(capacity);
    if clock {
        BlockCache::clock(&o)
    } else {
        BlockCache::lru(&o)
    }
}

#[test]
fn short_bench_runs_and_hits() {
    for clock in [false, true] {
        let c = make(clock, 1 << 20);
        let entries = (1 << 20) / BENCH_CHARGE as u64;
        let r = cache_bench(&c, 2, 90, entries / 2, Duration::from_millis(50));
        assert!(r.ops > 0);
        // Half the entries fit: after warm-up nearly every lookup hits.
        assert!(r.hit_rate > 0.5, "clock={clock} hit rate {}", r.hit_rate);
        assert!(c.usage() <= c.capacity());
    }
}

/// The benchmark table. `cargo test --release -- --ignored --nocapture cache_bench_table`
#[test]
#[ignore]
fn cache_bench_table() {
    let capacity = 64 << 20;
    let entries = (capacity / BENCH_CHARGE) as u64;
    // (name, lookup %, key space)
    let mixes = [
        ("lookup-only", 100, entries / 2),
        ("lookup-heavy", 95, entries * 5 / 4),
        ("insert-heavy", 50, entries * 4),
    ];
    println!(
        "{:<6} {:<13} {:>7} {:>14} {:>8}",
        "cache", "mix", "threads", "ops/sec", "hit%"
    );
    for clock in [false, true] {
        for (name, pct, space) in mixes {
            for threads in [1, 2] {
                let c = make(clock, capacity);
                // Warm up so the cache is full.
                let _ = cache_bench(&c, threads, pct, space, Duration::from_millis(300));
                let r = cache_bench(&c, threads, pct, space, Duration::from_secs(2));
                println!(
                    "{:<6} {:<13} {:>7} {:>14.0} {:>7.1}%",
                    if clock { "clock" } else { "lru" },
                    name,
                    threads,
                    r.ops_per_sec(),
                    r.hit_rate * 100.0
                );
                assert!(c.usage() <= c.capacity());
            }
        }
    }
}
