//! Bloom filters in the model: the false-positive rate of a filter with
//! `bits` bits per key, the memory of filters, and the per-run allocation
//! of a fixed filter budget that minimises the expected false positives of
//! a point read (Monkey, Dayan et al., SIGMOD 2017).
//!
//! Pure functions; no state. Requires `bits >= 0`.

/// ln(2)^2: a standard Bloom filter with the best number of probes has a
/// false-positive rate of e^(-bits * ln(2)^2).
const LN2_SQ: f64 = std::f64::consts::LN_2 * std::f64::consts::LN_2;

/// False-positive rate of a Bloom filter with `bits` bits per key (1.0 with
/// no filter).
pub fn false_positive_rate(bits: f64) -> f64 {
    if bits <= 0.0 {
        1.0
    } else {
        (-bits * LN2_SQ).exp().min(1.0)
    }
}

/// Bits per key that give the false-positive rate `fp` (0 for fp >= 1).
pub fn bits_for_rate(fp: f64) -> f64 {
    if fp >= 1.0 {
        0.0
    } else {
        -fp.max(1e-12).ln() / LN2_SQ
    }
}

/// Monkey: given the entries of each sorted run and a budget of
/// `total_bits` filter bits, the bits per key of each run that minimise the
/// sum of the runs' false-positive rates. With a Lagrange multiplier the
/// optimum has each run's rate proportional to its entries (p_i = c * n_i,
/// capped at 1), so large runs get fewer bits per key than small ones;
/// `c` is found by bisection so the bits add up to the budget.
pub fn monkey_bits(entries: &[f64], total_bits: f64) -> Vec<f64> {
    let bits_at = |c: f64| -> Vec<f64> {
        entries
            .iter()
            .map(|&n| bits_for_rate((c * n).min(1.0)))
            .collect()
    };
    let used = |c: f64| -> f64 {
        bits_at(c)
            .iter()
            .zip(entries)
            .map(|(b, n)| b * n)
            .sum::<f64>()
    };
    if entries.is_empty() || total_bits <= 0.0 {
        return vec![0.0; entries.len()];
    }
    // used(c) falls as c grows; bisect on log(c).
    let (mut lo, mut hi) = (-80.0f64, 10.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if used(mid.exp()) > total_bits {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    bits_at(hi.exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_bits_is_about_one_percent() {
        let fp = false_positive_rate(10.0);
        assert!((fp - 0.00819).abs() < 1e-4, "{fp}");
        assert_eq!(false_positive_rate(0.0), 1.0);
        assert!((bits_for_rate(fp) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn monkey_spends_the_budget_and_beats_uniform_bits() {
        let entries = [1e4, 1e5, 1e6, 1e7];
        let n: f64 = entries.iter().sum();
        let bits = monkey_bits(&entries, 10.0 * n);
        let spent: f64 = bits.iter().zip(&entries).map(|(b, n)| b * n).sum();
        assert!((spent / (10.0 * n) - 1.0).abs() < 1e-6, "{spent}");
        assert!(bits.windows(2).all(|w| w[0] > w[1]), "{bits:?}");
        let monkey: f64 = bits.iter().map(|&b| false_positive_rate(b)).sum();
        let uniform = 4.0 * false_positive_rate(10.0);
        assert!(monkey < uniform, "{monkey} >= {uniform}");
    }
}
