use super::*;

const PERIOD: u64 = 100_000;

/// A bucket of 1 MB/s: 100 000-byte bursts.
fn bucket(fairness: u32, auto_tuned: bool) -> Bucket {
    Bucket::new(1_000_000, PERIOD, fairness, auto_tuned, 42)
}

fn enqueue(b: &mut Bucket, pri: IoPriority, bytes: u64, now: u64) -> Arc<Waiter> {
    let left = b.take(bytes, pri, now);
    let w = Arc::new(Waiter {
        remaining: AtomicU64::new(left),
        cv: Condvar::new(),
    });
    if left > 0 {
        b.queues[pri as usize].push_back(Arc::clone(&w));
    }
    w
}

#[test]
fn a_refill_is_one_period_of_the_rate_and_idle_time_is_not_saved() {
    let mut b = bucket(10, false);
    assert_eq!(b.refill_bytes, 100_000);
    // Nothing is available until someone waits and refills.
    let w = enqueue(&mut b, IoPriority::Low, 60_000, 0);
    assert_eq!(w.remaining(), 60_000);
    b.refill(0);
    assert_eq!(w.remaining(), 0);
    assert_eq!(b.available, 40_000);
    // The rest of the burst is taken at once, then the bucket is dry.
    assert_eq!(b.take(50_000, IoPriority::Low, 1), 10_000);
    // Ten idle seconds later a refill still holds one burst only.
    let w = enqueue(&mut b, IoPriority::Low, 1, 10_000_000);
    b.refill(10_000_000);
    assert_eq!((w.remaining(), b.available), (0, 99_999));
    assert_eq!(b.bytes_through[IoPriority::Low as usize], 100_001);
    assert_eq!(b.requests[IoPriority::Low as usize], 3);
    // A tiny rate still refills the smallest burst.
    assert_eq!(refill_bytes_for(10, PERIOD), MIN_REFILL_BYTES);
    assert_eq!(refill_bytes_for(u64::MAX, PERIOD), u64::MAX / 10);
}

#[test]
fn high_priority_is_served_first_and_each_queue_in_order() {
    // Fairness so large that low never goes first.
    let mut b = bucket(u32::MAX, false);
    let low1 = enqueue(&mut b, IoPriority::Low, 30_000, 0);
    let low2 = enqueue(&mut b, IoPriority::Low, 30_000, 0);
    let high1 = enqueue(&mut b, IoPriority::High, 60_000, 0);
    let high2 = enqueue(&mut b, IoPriority::High, 30_000, 0);
    b.refill(0);
    // 100 000 bytes: both high (90 000), then 10 000 of the first low.
    assert_eq!((high1.remaining(), high2.remaining()), (0, 0));
    assert_eq!((low1.remaining(), low2.remaining()), (20_000, 30_000));
    b.refill(PERIOD);
    assert_eq!((low1.remaining(), low2.remaining()), (0, 0));
    assert!(b.queues.iter().all(VecDeque::is_empty));
    assert_eq!(b.bytes_through, [60_000, 90_000]);
}

#[test]
fn fairness_serves_low_first_once_in_fairness_refills() {
    let mut b = bucket(10, false);
    let mut low_first = 0;
    let n = 20_000;
    for i in 0..n {
        // One burst wanted at each priority: whoever goes first gets it.
        let low = enqueue(&mut b, IoPriority::Low, 100_000, i * PERIOD);
        let high = enqueue(&mut b, IoPriority::High, 100_000, i * PERIOD);
        b.refill(i * PERIOD);
        if low.remaining() == 0 {
            low_first += 1;
            assert_eq!(high.remaining(), 100_000);
        }
        b.queues = [VecDeque::new(), VecDeque::new()];
    }
    // 1 in 10 expected: 2000 of 20 000.
    assert!((1_700..2_300).contains(&low_first), "{low_first}");
    // Fairness 1: low always first.
    let mut b = bucket(1, false);
    let low = enqueue(&mut b, IoPriority::Low, 100_000, 0);
    let high = enqueue(&mut b, IoPriority::High, 100_000, 0);
    b.refill(0);
    assert_eq!((low.remaining(), high.remaining()), (0, 100_000));
}

/// Runs `periods` refill periods from `t`, of which the first `drained`
/// drain the bucket; returns the time after them.
fn run_periods(b: &mut Bucket, t: u64, periods: u64, drained: u64) -> u64 {
    for i in 0..periods {
        let now = t + i * PERIOD;
        if i < drained {
            b.refill(now);
            let burst = b.refill_bytes;
            let _ = b.take(burst, IoPriority::Low, now);
            b.note_drain();
            // The same period counts once.
            b.note_drain();
        }
    }
    t + periods * PERIOD
}

#[test]
fn auto_tuning_moves_the_rate_with_the_share_of_drained_periods() {
    let max = 1_000_000;
    let mut b = bucket(10, true);
    assert_eq!(b.bytes_per_sec, max / 2);
    // Always drained: +5% per 100 periods, up to the max.
    let mut t = run_periods(&mut b, 0, 100, 100);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, 525_000);
    assert_eq!(b.refill_bytes, 52_500);
    for _ in 0..20 {
        t = run_periods(&mut b, t, 100, 100);
        b.maybe_tune(t);
    }
    assert_eq!(b.bytes_per_sec, max);
    // Drained 70% of the time: unchanged.
    t = run_periods(&mut b, t, 100, 70);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, max);
    // Drained 30%: -5%.
    t = run_periods(&mut b, t, 100, 30);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, max * 100 / 105);
    // Not before 100 periods.
    let before = b.bytes_per_sec;
    t = run_periods(&mut b, t, 99, 0);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, before);
    // Idle: straight to the minimum, max / 20.
    t = run_periods(&mut b, t, 1, 0);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, max / 20);
    // Rarely drained at the minimum: stays there.
    t = run_periods(&mut b, t, 100, 10);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, max / 20);
    // A request after a long idle time tunes first.
    let _ = b.take(1, IoPriority::High, t + 1000 * PERIOD);
    assert_eq!(b.tuned_at_us, t + 1000 * PERIOD);
    // Not auto-tuned: never moves.
    let mut b = bucket(10, false);
    let t = run_periods(&mut b, 0, 100, 0);
    b.maybe_tune(t);
    assert_eq!(b.bytes_per_sec, max);
}

#[test]
fn construction_and_set_rate_are_validated() {
    assert!(matches!(
        RateLimiter::new(0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(RateLimiter::generic(1, 0, 10, false).is_err());
    assert!(RateLimiter::generic(1, 1, 0, false).is_err());
    let r = RateLimiter::new(1 << 20).unwrap();
    assert_eq!(r.get_single_burst_bytes(), (1 << 20) / 10);
    assert!(r.set_bytes_per_second(0).is_err());
    r.set_bytes_per_second(1 << 30).unwrap();
    assert_eq!(r.get_bytes_per_second(), 1 << 30);
    assert_eq!(r.get_single_burst_bytes(), (1 << 30) / 10);
    // A lowered rate holds at once: what a larger burst left is cut.
    let no = AtomicBool::new(false);
    assert_eq!(r.request(1, IoPriority::Low, &no), Grant::Granted);
    assert_eq!(r.bucket.lock().available, (1 << 30) / 10 - 1);
    r.set_bytes_per_second(1000).unwrap();
    assert_eq!(r.bucket.lock().available, MIN_REFILL_BYTES);
    // Auto-tuned: starts at half; a new ceiling clamps the rate.
    let r = RateLimiter::generic(1_000_000, PERIOD, 10, true).unwrap();
    assert!(r.is_auto_tuned());
    assert_eq!(r.get_bytes_per_second(), 500_000);
    r.set_bytes_per_second(200_000).unwrap();
    assert_eq!(
        (r.get_bytes_per_second(), r.get_max_bytes_per_second()),
        (200_000, 200_000)
    );
    r.set_bytes_per_second(100_000_000).unwrap();
    assert_eq!(r.get_bytes_per_second(), 5_000_000);
}

#[test]
fn large_requests_are_split_into_bursts() {
    // 1 ms periods of 1000 bytes.
    let r = RateLimiter::generic(1_000_000, 1_000, 10, false).unwrap();
    let no = AtomicBool::new(false);
    assert_eq!(r.request(3_500, IoPriority::Low, &no), Grant::Granted);
    assert_eq!(r.get_total_requests(Some(IoPriority::Low)), 4);
    assert_eq!(r.get_total_bytes_through(None), 3_500);
    assert_eq!(r.get_total_requests(Some(IoPriority::High)), 0);
    assert_eq!(r.waiting(), 0);
}

#[test]
fn a_waiting_flush_is_granted_before_a_waiting_compaction() {
    // 10 ms periods of 1000 bytes; low never goes first.
    let r = Arc::new(RateLimiter::generic(100_000, 10_000, u32::MAX, false).unwrap());
    let no = Arc::new(AtomicBool::new(false));
    let done = Arc::new(Mutex::new(Vec::new()));
    let spawn = |pri: IoPriority, bytes: u64| {
        let (r, no, done) = (Arc::clone(&r), Arc::clone(&no), Arc::clone(&done));
        std::thread::spawn(move || {
            assert_eq!(r.request(bytes, pri, &no), Grant::Granted);
            done.lock().push(pri);
        })
    };
    // The compaction wants 100 bursts; once it waits, the flush asks 3.
    let low = spawn(IoPriority::Low, 100_000);
    while r.waiting() == 0 {
        std::thread::yield_now();
    }
    let high = spawn(IoPriority::High, 3_000);
    high.join().unwrap();
    low.join().unwrap();
    assert_eq!(*done.lock(), vec![IoPriority::High, IoPriority::Low]);
    assert_eq!(r.get_total_bytes_through(Some(IoPriority::High)), 3_000);
    assert_eq!(r.get_total_bytes_through(Some(IoPriority::Low)), 100_000);
    assert!(r.get_total_wait_micros(Some(IoPriority::Low)) > 0);
}

#[test]
fn a_cancelled_wait_returns_when_woken() {
    // 100 bytes a second: the request would wait about 100 seconds.
    let r = Arc::new(RateLimiter::generic(100, 1_000_000, 10, false).unwrap());
    let cancel = Arc::new(AtomicBool::new(false));
    let t = {
        let (r, cancel) = (Arc::clone(&r), Arc::clone(&cancel));
        std::thread::spawn(move || r.request(10_000, IoPriority::Low, &cancel))
    };
    while r.waiting() == 0 {
        std::thread::yield_now();
    }
    cancel.store(true, Ordering::Release);
    r.wake_all();
    assert_eq!(t.join().unwrap(), Grant::Cancelled);
    assert_eq!(r.waiting(), 0);
    // Set already: no wait at all.
    assert_eq!(
        r.request(10_000, IoPriority::High, &cancel),
        Grant::Cancelled
    );
    // Another user of the limiter is not disturbed by the wake.
    let no = AtomicBool::new(false);
    assert_eq!(r.request(50, IoPriority::High, &no), Grant::Granted);
}
