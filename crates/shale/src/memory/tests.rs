use super::*;

#[test]
fn charges_add_up_and_release_on_drop() {
    let l = Ledger::new(0);
    let m = l.meter(Part::Memtables);
    m.add(100);
    let mut c = l.meter(Part::Buffers).charge();
    c.set(50);
    c.set(30);
    assert_eq!(c.bytes(), 30);
    assert_eq!(l.get(Part::Memtables), 100);
    assert_eq!(l.get(Part::Buffers), 30);
    assert_eq!(l.charged(), 130);
    drop(c);
    m.sub(100);
    assert_eq!(l.charged(), 0);
    // No budget: nothing to attach, no room.
    l.attach_cache(1 << 20, |_| panic!("resized without a budget"));
    assert_eq!(l.cache_target(), None);
    assert_eq!(l.room(), 0);
}

#[test]
fn the_cache_gets_what_the_parts_leave_within_a_granule() {
    let limit = 64 << 20;
    let l = Ledger::new(limit);
    let cap = Arc::new(AtomicUsize::new(0));
    let c2 = Arc::clone(&cap);
    l.attach_cache(48 << 20, move |n| c2.store(n, Ordering::Relaxed));
    // Bounded by cache_size while the parts leave more.
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
    let m = l.meter(Part::Memtables);
    m.add(8 << 20);
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
    m.add(16 << 20);
    assert_eq!(cap.load(Ordering::Relaxed), 40 << 20);
    // A move under a granule (512 KiB here) does not resize.
    m.add(100 << 10);
    assert_eq!(cap.load(Ordering::Relaxed), 40 << 20);
    m.add(500 << 10);
    let want = limit - (24 << 20) - (600 << 10);
    assert_eq!(cap.load(Ordering::Relaxed), want);
    // Past the budget: the cache gets nothing.
    let t = l.meter(Part::TableReaders);
    t.add(64 << 20);
    assert_eq!(cap.load(Ordering::Relaxed), 0);
    assert_eq!(l.cache_target(), Some(0));
    // Released: back to the bound.
    t.sub(64 << 20);
    m.sub((24 << 20) + (600 << 10));
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
}

#[test]
fn the_memtables_share_is_held_for_them() {
    let l = Ledger::with_memtable_reserve(64 << 20, 16 << 20);
    let cap = Arc::new(AtomicUsize::new(0));
    let c2 = Arc::clone(&cap);
    l.attach_cache(64 << 20, move |n| c2.store(n, Ordering::Relaxed));
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
    let m = l.meter(Part::Memtables);
    m.add(10 << 20); // within the share: the cache keeps its room
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
    m.add(10 << 20); // 4 MiB beyond it: given back
    assert_eq!(cap.load(Ordering::Relaxed), 44 << 20);
    m.sub(20 << 20);
    assert_eq!(cap.load(Ordering::Relaxed), 48 << 20);
}

#[test]
fn concurrent_charges_sum_to_zero_and_leave_the_cache_at_its_target() {
    let l = Ledger::new(16 << 20);
    let cap = Arc::new(AtomicUsize::new(0));
    let c2 = Arc::clone(&cap);
    l.attach_cache(16 << 20, move |n| c2.store(n, Ordering::Relaxed));
    std::thread::scope(|s| {
        for t in 0..4 {
            let l = &l;
            s.spawn(move || {
                let part = [Part::Memtables, Part::TableReaders, Part::Buffers][t % 3];
                let mut c = l.meter(part).charge();
                for i in 0..10_000usize {
                    c.set((i * 7919) % (3 << 20));
                }
            });
        }
    });
    assert_eq!(l.charged(), 0);
    assert_eq!(cap.load(Ordering::Relaxed), 16 << 20);
}
