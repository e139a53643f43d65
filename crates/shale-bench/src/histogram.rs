//! RocksDB's `HistogramImpl`: its 109 bucket limits, percentile
//! interpolation and printed format, plus an atomic variant for interval
//! percentiles read by the reporter thread.
//!
//! `Histogram` is owned by one thread and merged after the run;
//! `AtomicHistogram` is written by one bench thread and read concurrently by
//! the reporter (relaxed counters; a read may be a few samples stale).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The bucket upper limits: 1, 2, then ×1.5 truncated to two significant
/// digits, up to u64::MAX (RocksDB's `HistogramBucketMapper`).
pub fn bucket_limits() -> &'static [u64] {
    static LIMITS: OnceLock<Vec<u64>> = OnceLock::new();
    LIMITS.get_or_init(|| {
        let mut v: Vec<u64> = vec![1, 2];
        let mut val = 2.0f64;
        loop {
            val *= 1.5;
            if val > u64::MAX as f64 {
                break;
            }
            let mut b = val as u64;
            let mut pow = 1u64;
            while b / 10 > 10 {
                b /= 10;
                pow *= 10;
            }
            v.push(b * pow);
        }
        v
    })
}

/// Index of the first bucket whose limit ≥ `value`.
#[inline]
pub fn bucket_index(value: u64) -> usize {
    let l = bucket_limits();
    let last = l.len() - 1;
    if value >= l[last] {
        return last;
    }
    l.partition_point(|&x| x < value)
}

/// A latency histogram with RocksDB's buckets.
#[derive(Debug, Clone)]
pub struct Histogram {
    min: u64,
    max: u64,
    num: u64,
    sum: u64,
    sum_squares: f64,
    buckets: Vec<u64>,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram::new()
    }
}

impl Histogram {
    /// An empty histogram.
    pub fn new() -> Histogram {
        let l = bucket_limits();
        Histogram {
            min: l[l.len() - 1],
            max: 0,
            num: 0,
            sum: 0,
            sum_squares: 0.0,
            buckets: vec![0; l.len()],
        }
    }

    /// Records one sample.
    #[inline]
    pub fn add(&mut self, value: u64) {
        self.buckets[bucket_index(value)] += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.num += 1;
        self.sum = self.sum.wrapping_add(value);
        self.sum_squares += (value as f64) * (value as f64);
    }

    /// Adds `other`'s samples.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
            *a += b;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.num += other.num;
        self.sum = self.sum.wrapping_add(other.sum);
        self.sum_squares += other.sum_squares;
    }

    /// Builds a histogram from bucket counts alone (interval percentiles).
    pub fn from_buckets(buckets: &[u64]) -> Histogram {
        let mut h = Histogram::new();
        let l = bucket_limits();
        for (i, &c) in buckets.iter().enumerate().take(l.len()) {
            if c == 0 {
                continue;
            }
            h.buckets[i] = c;
            h.num += c;
            let left = if i == 0 { 0 } else { l[i - 1] };
            h.min = h.min.min(left);
            h.max = h.max.max(l[i]);
        }
        h
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.num
    }

    /// Largest sample (0 when empty).
    pub fn max(&self) -> u64 {
        if self.num == 0 {
            0
        } else {
            self.max
        }
    }

    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        if self.num == 0 {
            0
        } else {
            self.min
        }
    }

    /// Mean (0 when empty).
    pub fn average(&self) -> f64 {
        if self.num == 0 {
            0.0
        } else {
            self.sum as f64 / self.num as f64
        }
    }

    /// Population standard deviation.
    pub fn std_dev(&self) -> f64 {
        if self.num == 0 {
            return 0.0;
        }
        let n = self.num as f64;
        let s = self.sum as f64;
        let var = (self.sum_squares * n - s * s) / (n * n);
        var.max(0.0).sqrt()
    }

    /// The `p`-th percentile, interpolated within its bucket and clamped to
    /// [min, max] as `HistogramStat::Percentile`.
    pub fn percentile(&self, p: f64) -> f64 {
        let l = bucket_limits();
        let threshold = self.num as f64 * (p / 100.0);
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            cumulative += count;
            if cumulative as f64 >= threshold {
                let left = if b == 0 { 0 } else { l[b - 1] };
                let right = l[b];
                let left_sum = cumulative - count;
                let pos = if count != 0 {
                    (threshold - left_sum as f64) / count as f64
                } else {
                    0.0
                };
                let mut r = left as f64 + (right - left) as f64 * pos;
                r = r.max(self.min as f64);
                r = r.min(self.max as f64);
                return r;
            }
        }
        self.max as f64
    }

    /// The median (P50).
    pub fn median(&self) -> f64 {
        self.percentile(50.0)
    }

    /// The text db_bench prints under `Microseconds per <op>:`.
    pub fn to_db_bench_string(&self) -> String {
        let mut r = String::new();
        let _ = writeln!(
            r,
            "Count: {} Average: {:.4}  StdDev: {:.2}",
            self.num,
            self.average(),
            self.std_dev()
        );
        let _ = writeln!(
            r,
            "Min: {}  Median: {:.4}  Max: {}",
            self.min(),
            self.median(),
            self.max()
        );
        let _ = writeln!(
            r,
            "Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}",
            self.percentile(50.0),
            self.percentile(75.0),
            self.percentile(99.0),
            self.percentile(99.9),
            self.percentile(99.99)
        );
        r.push_str("------------------------------------------------------\n");
        if self.num == 0 {
            return r;
        }
        let l = bucket_limits();
        let mult = 100.0 / self.num as f64;
        let mut cumulative = 0u64;
        for (b, &count) in self.buckets.iter().enumerate() {
            if count == 0 {
                continue;
            }
            cumulative += count;
            let _ = write!(
                r,
                "{} {:>7}, {:>7} ] {:>8} {:>7.3}% {:>7.3}% ",
                if b == 0 { '[' } else { '(' },
                if b == 0 { 0 } else { l[b - 1] },
                l[b],
                count,
                mult * count as f64,
                mult * cumulative as f64
            );
            let marks = (mult * count as f64 / 5.0 + 0.5) as usize;
            r.push_str(&"#".repeat(marks));
            r.push('\n');
        }
        r
    }
}

/// Bucket counts written by one thread, read by the interval reporter.
#[derive(Debug)]
pub struct AtomicHistogram {
    buckets: Vec<AtomicU64>,
}

impl Default for AtomicHistogram {
    fn default() -> Self {
        AtomicHistogram {
            buckets: (0..bucket_limits().len())
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }
}

impl AtomicHistogram {
    /// Records one sample (single writer; relaxed).
    #[inline]
    pub fn add(&self, value: u64) {
        let b = &self.buckets[bucket_index(value)];
        b.store(b.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// Adds the current counts into `out` (same length as the limits).
    pub fn add_to(&self, out: &mut [u64]) {
        for (o, b) in out.iter_mut().zip(&self.buckets) {
            *o += b.load(Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_limits_match_rocksdb() {
        let l = bucket_limits();
        assert_eq!(l.len(), 109);
        assert_eq!(
            &l[..27],
            &[
                1, 2, 3, 4, 6, 10, 15, 22, 34, 51, 76, 110, 170, 250, 380, 580, 870, 1300, 1900,
                2900, 4400, 6600, 9900, 14000, 22000, 33000, 50000
            ]
        );
        assert_eq!(bucket_index(0), 0);
        assert_eq!(bucket_index(1), 0);
        assert_eq!(bucket_index(5), 4);
        assert_eq!(bucket_index(6), 4);
        assert_eq!(bucket_index(7), 5);
        assert_eq!(bucket_index(u64::MAX), 108);
    }

    #[test]
    fn percentiles_interpolate_within_buckets() {
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.add(v);
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.min(), 1);
        assert_eq!(h.max(), 100);
        assert!((h.average() - 50.5).abs() < 1e-9);
        // Population stddev of 1..=100.
        assert!((h.std_dev() - 28.866).abs() < 1e-3);
        // P50: threshold 50; buckets: ...(34,51] holds 35..=51 (17), cumulative
        // up to 34 is 34 → 34 + 17 * (50-34)/17 = 50.
        assert!((h.percentile(50.0) - 50.0).abs() < 1e-9);
        // P99: threshold 99 in (76,110] holding 77..=100 (24), before 76:
        // 76 + 34 * (99-76)/24 = 108.58 → clamped to max 100.
        assert_eq!(h.percentile(99.0), 100.0);
        // P10: threshold 10 in (6,10] holding 7..=10, before 6 →
        // 6 + 4 * (10-6)/4 = 10.
        assert!((h.percentile(10.0) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn single_value_clamps_to_it() {
        let mut h = Histogram::new();
        for _ in 0..10 {
            h.add(300);
        }
        assert_eq!(h.percentile(50.0), 300.0);
        assert_eq!(h.percentile(99.99), 300.0);
        assert_eq!(h.std_dev(), 0.0);
    }

    #[test]
    fn merge_adds_counts() {
        let mut a = Histogram::new();
        let mut b = Histogram::new();
        a.add(1);
        b.add(1000);
        a.merge(&b);
        assert_eq!(a.count(), 2);
        assert_eq!(a.min(), 1);
        assert_eq!(a.max(), 1000);
    }

    #[test]
    fn printed_format() {
        let mut h = Histogram::new();
        h.add(1);
        h.add(1);
        h.add(3);
        h.add(5);
        let s = h.to_db_bench_string();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(lines[0], "Count: 4 Average: 2.5000  StdDev: 1.66");
        assert!(lines[1].starts_with("Min: 1  Median: "));
        assert!(lines[1].ends_with("  Max: 5"));
        assert!(lines[2].starts_with("Percentiles: P50: "));
        assert_eq!(lines[3], "-".repeat(54));
        assert_eq!(
            lines[4],
            "[       0,       1 ]        2  50.000%  50.000% ##########"
        );
        assert_eq!(
            lines[5],
            "(       2,       3 ]        1  25.000%  75.000% #####"
        );
        assert_eq!(
            lines[6],
            "(       4,       6 ]        1  25.000% 100.000% #####"
        );
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn atomic_histogram_feeds_from_buckets() {
        let a = AtomicHistogram::default();
        for v in [1u64, 2, 2, 1000] {
            a.add(v);
        }
        let mut counts = vec![0; bucket_limits().len()];
        a.add_to(&mut counts);
        let h = Histogram::from_buckets(&counts);
        assert_eq!(h.count(), 4);
        assert_eq!(h.max(), 1300);
    }
}
