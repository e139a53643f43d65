use super::*;
use std::sync::atomic::AtomicU64;

#[test]
fn threads_count_on_their_stripes_and_sums_add_up() {
    let c: Striped<AtomicU64> = Striped::default();
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..1000 {
                    c.local().fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let total: u64 = c.all().map(|x| x.load(Ordering::Relaxed)).sum();
    assert_eq!(total, 8000);
    // Eight threads over four stripes: every stripe was used.
    assert!(c.all().all(|x| x.load(Ordering::Relaxed) > 0));
    assert_eq!(std::mem::align_of::<Padded<AtomicU64>>(), 128);
}
