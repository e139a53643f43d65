use super::*;

#[test]
fn counters_sum_over_shards() {
    let a = ShardCounters::default();
    let b = ShardCounters::default();
    a.hit(Priority::High);
    b.hit(Priority::High);
    b.miss(Priority::Bottom);
    a.inserted(10);
    b.evicted(4);
    a.usage.store(6, Relaxed);
    b.entries.store(2, Relaxed);
    let mut s = CacheStats::default();
    a.add_to(&mut s);
    b.add_to(&mut s);
    assert_eq!(s.hits_for(Priority::High), 2);
    assert_eq!(s.misses_for(Priority::Bottom), 1);
    assert_eq!(s.total_hits(), 2);
    assert_eq!(s.total_misses(), 1);
    assert_eq!(
        (s.bytes_inserted, s.bytes_evicted, s.usage, s.entries),
        (10, 4, 6, 2)
    );
    assert_eq!(std::mem::align_of::<ShardCounters>(), 64);
}
