use super::*;
use std::sync::Arc;

fn keys(l: &Lru<Arc<u64>>) -> Vec<u64> {
    l.values().map(|v| **v).collect()
}

#[test]
fn holds_at_most_capacity_and_evicts_least_recent() {
    let mut l = Lru::new(3);
    for k in 1..=3 {
        let (v, ev) = l.insert(k, Arc::new(k));
        assert_eq!(*v, k);
        assert!(ev.is_empty());
    }
    assert_eq!(keys(&l), vec![3, 2, 1]);
    // Touching 1 makes 2 the least recently used.
    assert_eq!(l.get(1).map(|v| *v), Some(1));
    assert_eq!(keys(&l), vec![1, 3, 2]);
    let (_, ev) = l.insert(4, Arc::new(4));
    assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![2]);
    assert_eq!(l.len(), 3);
    assert!(l.get(2).is_none());
    assert_eq!(keys(&l), vec![4, 1, 3]);
    let (_, ev) = l.insert(5, Arc::new(5));
    assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![3]);
    assert_eq!(keys(&l), vec![5, 4, 1]);
}

#[test]
fn insert_of_present_key_keeps_the_cached_value() {
    let mut l = Lru::new(2);
    l.insert(1, Arc::new(10));
    l.insert(2, Arc::new(20));
    let (v, ev) = l.insert(1, Arc::new(99));
    assert_eq!(*v, 10);
    assert!(ev.is_empty());
    // The repeated insert counted as a use: 2 is evicted next.
    let (_, ev) = l.insert(3, Arc::new(30));
    assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![20]);
}

#[test]
fn evicted_value_in_use_stays_valid() {
    let mut l = Lru::new(1);
    let (held, _) = l.insert(1, Arc::new(7));
    assert_eq!(Arc::strong_count(&held), 2);
    let (_, ev) = l.insert(2, Arc::new(8));
    drop(ev);
    // The cache dropped its handle; the user's is the last one.
    assert_eq!(*held, 7);
    assert_eq!(Arc::strong_count(&held), 1);
    assert!(l.get(1).is_none());
}

#[test]
fn remove_and_slot_reuse_keep_the_list_consistent() {
    let mut l = Lru::new(4);
    for k in 0..4 {
        l.insert(k, Arc::new(k));
    }
    assert_eq!(l.remove(2).map(|v| *v), Some(2));
    assert_eq!(l.remove(2), None);
    assert_eq!(l.remove(3).map(|v| *v), Some(3)); // the head
    assert_eq!(l.remove(0).map(|v| *v), Some(0)); // the tail
    assert_eq!(keys(&l), vec![1]);
    for k in 10..13 {
        l.insert(k, Arc::new(k));
    }
    assert_eq!(keys(&l), vec![12, 11, 10, 1]);
    assert_eq!(l.slots.len(), 4, "freed slots are reused");
    l.insert(13, Arc::new(13));
    assert_eq!(keys(&l), vec![13, 12, 11, 10]);
    assert_eq!(l.remove(13).map(|v| *v), Some(13));
    assert_eq!(l.remove(10).map(|v| *v), Some(10));
    assert_eq!(keys(&l), vec![12, 11]);
}

#[test]
fn random_ops_match_a_model() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x7ab1e);
    for cap in 1..6 {
        let mut l: Lru<Arc<u64>> = Lru::new(cap);
        // Model: keys, most recent first.
        let mut model: Vec<u64> = Vec::new();
        for _ in 0..2000 {
            let k = rng.gen_range(0..10u64);
            match rng.gen_range(0..3) {
                0 => {
                    let got = l.get(k).map(|v| *v);
                    let pos = model.iter().position(|&m| m == k);
                    assert_eq!(got, pos.map(|_| k));
                    if let Some(p) = pos {
                        model.remove(p);
                        model.insert(0, k);
                    }
                }
                1 => {
                    let (_, ev) = l.insert(k, Arc::new(k));
                    let mut want = Vec::new();
                    if let Some(p) = model.iter().position(|&m| m == k) {
                        model.remove(p);
                    } else {
                        while model.len() >= cap {
                            want.push(model.pop().unwrap_or_default());
                        }
                    }
                    model.insert(0, k);
                    assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), want);
                }
                _ => {
                    let got = l.remove(k).map(|v| *v);
                    let pos = model.iter().position(|&m| m == k);
                    assert_eq!(got, pos.map(|_| k));
                    if let Some(p) = pos {
                        model.remove(p);
                    }
                }
            }
            assert!(l.len() <= cap);
            assert_eq!(keys(&l), model);
        }
    }
}
