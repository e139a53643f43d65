use super::*;

#[test]
fn no_false_negatives_and_about_one_percent_false_positives() {
    // 10 bits per key.
    let n = 20_000u32;
    let f = MemBloom::new(n as usize * 10 / 8);
    for i in 0..n {
        f.add(MemBloom::hash(format!("key{i}").as_bytes()));
    }
    for i in 0..n {
        assert!(f.may_contain(MemBloom::hash(format!("key{i}").as_bytes())));
    }
    let fp = (0..100_000u32)
        .filter(|i| f.may_contain(MemBloom::hash(format!("absent{i}").as_bytes())))
        .count();
    let rate = fp as f64 / 100_000.0;
    assert!(rate < 0.02, "false-positive rate {rate}");
    assert!(rate > 0.0, "a 10-bit filter must show some false positives");
}

#[test]
fn concurrent_adds_are_all_seen() {
    let f = std::sync::Arc::new(MemBloom::new(4096));
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let f = std::sync::Arc::clone(&f);
            std::thread::spawn(move || {
                for i in 0..2_000u32 {
                    f.add(MemBloom::hash(&(t * 1_000_000 + i).to_le_bytes()));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for t in 0..4u32 {
        for i in 0..2_000u32 {
            assert!(f.may_contain(MemBloom::hash(&(t * 1_000_000 + i).to_le_bytes())));
        }
    }
    assert_eq!(f.size(), 4096);
}

#[test]
fn an_empty_filter_rules_everything_out() {
    let f = MemBloom::new(0);
    assert_eq!(f.size(), 64);
    assert!(!f.may_contain(MemBloom::hash(b"x")));
}
