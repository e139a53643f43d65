use super::*;

fn build(keys: impl Iterator<Item = Vec<u8>>, bits: f64) -> BloomFilter {
    let mut b = FilterBuilder::new(bits);
    for k in keys {
        b.add(&k);
    }
    let mut out = Vec::new();
    b.finish(&mut out);
    BloomFilter::new(out, "f", 0).unwrap()
}

#[test]
fn probe_choice_matches_fast_local_bloom() {
    assert_eq!(choose_num_probes(10_000), 6);
    assert_eq!(choose_num_probes(16_000), 9);
    assert_eq!(choose_num_probes(1_000), 1);
    assert_eq!(choose_num_probes(28_000), 12);
    assert_eq!(choose_num_probes(28_001), 13);
    assert_eq!(choose_num_probes(50_000), 23);
    assert_eq!(choose_num_probes(50_001), 24);
    assert_eq!(choose_num_probes(1_000_000), 24);
}

#[test]
fn false_positive_rate_at_10_bits_per_key() {
    let n = 100_000u32;
    let f = build((0..n).map(|i| format!("key{i:08}").into_bytes()), 10.0);
    assert_eq!(f.num_probes(), 6);
    assert_eq!(f.num_lines() as u64, (u64::from(n) * 10).div_ceil(512));
    for i in 0..n {
        assert!(
            f.may_contain(format!("key{i:08}").as_bytes()),
            "false negative {i}"
        );
    }
    let trials = 200_000u32;
    let fp = (0..trials)
        .filter(|i| f.may_contain(format!("absent{i:08}").as_bytes()))
        .count();
    let rate = fp as f64 / f64::from(trials);
    println!("false-positive rate at 10 bits/key: {:.3}%", rate * 100.0);
    assert!(rate < 0.016, "fp rate {rate}");
    assert!(rate > 0.003, "fp rate {rate} implausibly low");
}

#[test]
fn no_false_negatives_at_any_density() {
    for bits in [0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0, 100.0] {
        for n in [1u32, 3, 100, 5000] {
            let f = build((0..n).map(|i| (i * 31).to_le_bytes().to_vec()), bits);
            for i in 0..n {
                assert!(
                    f.may_contain(&(i * 31).to_le_bytes()),
                    "bits {bits} n {n} key {i}"
                );
            }
        }
    }
}

#[test]
fn duplicates_counted_once_and_empty_filter() {
    let f = build(std::iter::repeat_n(b"same".to_vec(), 1000), 10.0);
    assert_eq!(f.num_lines(), 1);
    assert!(f.may_contain(b"same"));
    let empty = build(std::iter::empty(), 10.0);
    assert_eq!(empty.num_lines(), 0);
    assert!(!empty.may_contain(b"anything"));
}

#[test]
fn damaged_filter_blocks_are_corruption() {
    let mut good = Vec::new();
    let mut b = FilterBuilder::new(10.0);
    b.add(b"a");
    b.finish(&mut good);
    assert_eq!(good.len(), 64 + 5);
    let mut too_many = good.clone();
    too_many[64] = 2;
    let mut no_probes = good.clone();
    no_probes[68] = 0;
    for bad in [vec![], vec![0; 4], too_many, no_probes, good[1..].to_vec()] {
        assert!(BloomFilter::new(bad, "f", 3).err().unwrap().is_corruption());
    }
}

/// The theoretical false-positive rate of a cache-local bloom filter
/// with `bits` bits per key and `k` probes: the standard formula per
/// 512-bit line, averaged over the Poisson-distributed line loads.
pub(crate) fn theoretical_fp_rate(bits: f64, k: u32) -> f64 {
    let mean = 512.0 / bits;
    let mut p = (-mean).exp(); // P(load = 0)
    let mut total = 0.0;
    for load in 0..(mean * 4.0 + 50.0) as u32 {
        if load > 0 {
            p *= mean / f64::from(load);
        }
        let fill = 1.0 - (1.0 - 1.0 / 512.0f64).powf(f64::from(k * load));
        total += p * fill.powi(k as i32);
    }
    total
}

#[test]
fn fractional_densities_match_theory() {
    let n = 50_000u32;
    for bits in [4.5, 7.25, 12.0] {
        let f = build((0..n).map(|i| format!("k{i}").into_bytes()), bits);
        assert_eq!(
            f.num_lines() as u64,
            (u64::from(n) * (bits * 1000.0) as u64).div_ceil(1000 * 512)
        );
        let trials = 100_000u32;
        let fp = (0..trials)
            .filter(|i| f.may_contain(format!("x{i}").as_bytes()))
            .count() as f64
            / f64::from(trials);
        let theory = theoretical_fp_rate(bits, f.num_probes());
        assert!(
            fp < theory * 1.3 + 0.001 && fp > theory * 0.7 - 0.001,
            "{bits} bits: measured {fp}, theory {theory}"
        );
    }
}

#[test]
fn prefixes_have_no_false_negatives_and_theoretical_fp_rate() {
    use crate::base::PrefixExtractor;
    // Random keys in 2,000 prefixes of 8 bytes, about 10 keys each.
    let e = PrefixExtractor::Fixed(8);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut keys: Vec<Vec<u8>> = (0..20_000)
        .map(|_| {
            let p = rnd() % 2_000;
            let mut k = format!("{p:08}").into_bytes();
            k.extend_from_slice(&rnd().to_le_bytes()[..(rnd() % 9) as usize]);
            k
        })
        .collect();
    keys.sort();
    for whole in [true, false] {
        let mut b = FilterBuilder::new(10.0);
        for k in &keys {
            if let Some(p) = e.prefix(k) {
                b.add_prefix(p);
            }
            if whole {
                b.add(k);
            }
        }
        let mut out = Vec::new();
        b.finish(&mut out);
        let f = BloomFilter::new(out, "f", 0).unwrap();
        let mut distinct: Vec<&[u8]> = keys.iter().filter_map(|k| e.prefix(k)).collect();
        distinct.dedup();
        let entries = distinct.len() + if whole { keys.len() } else { 0 };
        // Sized by distinct entries: duplicates were counted once.
        assert!(
            (f.num_lines() as usize) <= (entries * 10).div_ceil(512) + 1,
            "{} lines for {entries} entries",
            f.num_lines()
        );
        for k in &keys {
            assert!(f.may_contain(e.prefix(k).unwrap()), "prefix of {k:?}");
            if whole {
                assert!(f.may_contain(k), "{k:?}");
            }
        }
        let trials = 100_000u32;
        let fp = (0..trials)
            .filter(|i| f.may_contain(format!("{:08}", 10_000 + i).as_bytes()))
            .count() as f64
            / f64::from(trials);
        let bits = f64::from(f.num_lines()) * 512.0 / entries as f64;
        let theory = theoretical_fp_rate(bits, f.num_probes());
        println!("whole={whole}: prefix fp {fp:.4}, theory {theory:.4} at {bits:.2} bits");
        assert!(
            fp < theory * 1.3 + 0.001 && fp > theory * 0.7 - 0.001,
            "measured {fp}, theory {theory}"
        );
    }
}
