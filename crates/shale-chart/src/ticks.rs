//! Axes: what an axis shows ([`Axis`]: the quantity, its unit and how its
//! numbers print) and its ticks at round numbers (1, 2, 2.5 or 5 times a
//! power of ten; for bytes, of the binary unit in use).
//!
//! Invariants of [`Ticks`]: at least two values, increasing, evenly
//! spaced; the first is at or below every value given and at or below 0,
//! the last at or above every value given. All labels of one axis use the
//! same prefix and number of decimals.

/// How the numbers of an axis print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumberFormat {
    /// SI prefixes: 2.5k, 10M.
    Si,
    /// Binary units of bytes: 512 KiB, 1.5 GiB.
    Bytes,
}

/// One axis: the quantity (`"throughput"`), its unit (`"ops/s"`) and the
/// format of its tick labels. The axis title reads `quantity (unit)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// What is measured.
    pub quantity: String,
    /// Its unit (empty for a ratio or a count).
    pub unit: String,
    /// How tick labels print.
    pub format: NumberFormat,
}

impl Axis {
    /// An axis of `quantity` in `unit`, SI-prefixed tick labels.
    pub fn new(quantity: impl Into<String>, unit: impl Into<String>) -> Axis {
        Axis {
            quantity: quantity.into(),
            unit: unit.into(),
            format: NumberFormat::Si,
        }
    }

    /// An axis of `quantity` in bytes (binary units).
    pub fn bytes(quantity: impl Into<String>) -> Axis {
        Axis {
            quantity: quantity.into(),
            unit: "bytes".into(),
            format: NumberFormat::Bytes,
        }
    }

    /// The axis title: `quantity (unit)`, or the quantity alone.
    pub fn title(&self) -> String {
        if self.unit.is_empty() {
            self.quantity.clone()
        } else {
            format!("{} ({})", self.quantity, self.unit)
        }
    }
}

/// The ticks of an axis and their labels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ticks {
    /// Tick values, increasing.
    pub values: Vec<f64>,
    /// One label per value.
    pub labels: Vec<String>,
}

impl Ticks {
    /// The lowest tick.
    pub(crate) fn lo(&self) -> f64 {
        self.values.first().copied().unwrap_or(0.0)
    }

    /// The highest tick.
    pub(crate) fn hi(&self) -> f64 {
        self.values.last().copied().unwrap_or(1.0)
    }
}

/// About this many intervals between ticks.
const TARGET_INTERVALS: f64 = 5.0;

/// The round step near `raw`: 1, 2, 2.5 or 5 times a power of ten.
fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// Decimals that print every multiple of `step` exactly (at most 6).
fn decimals(step: f64) -> usize {
    (0..=6usize)
        .find(|&d| {
            let x = step * 10f64.powi(d as i32);
            (x - x.round()).abs() < 1e-6 * x.abs().max(1.0)
        })
        .unwrap_or(6)
}

const SI: [&str; 6] = ["", "k", "M", "G", "T", "P"];
const BINARY: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// The unit index for `v`: the largest k with `v >= base^k`.
fn unit_index(v: f64, base: f64) -> usize {
    let mut k = 0;
    while k + 1 < SI.len() && v.abs() >= base.powi(k as i32 + 1) {
        k += 1;
    }
    k
}

/// Ticks covering `0`, `lo` and `hi` (non-finite bounds are ignored).
pub(crate) fn ticks(lo: f64, hi: f64, format: NumberFormat) -> Ticks {
    let lo = if lo.is_finite() { lo.min(0.0) } else { 0.0 };
    let mut hi = if hi.is_finite() { hi.max(0.0) } else { 0.0 };
    if hi <= lo {
        hi = lo + 1.0;
    }
    let base = match format {
        NumberFormat::Si => 1000.0,
        NumberFormat::Bytes => 1024.0,
    };
    // Bytes: round numbers of the unit in use (0.5 GiB, not 536.9M).
    let k = match format {
        NumberFormat::Si => 0,
        NumberFormat::Bytes => unit_index(hi.max(-lo), base),
    };
    let scale = base.powi(k as i32);
    let (slo, shi) = (lo / scale, hi / scale);
    let step = nice_step((shi - slo) / TARGET_INTERVALS);
    let first = (slo / step).floor();
    let last = (shi / step - 1e-9).ceil().max(first + 1.0);
    let n = (last - first).round() as usize;
    let values: Vec<f64> = (0..=n)
        .map(|i| (first + i as f64) * step * scale)
        .map(|v| {
            if v.abs() < step * scale * 1e-9 {
                0.0
            } else {
                v
            }
        })
        .collect();
    // Labels: one prefix for the whole axis, from its largest tick.
    let top = values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let (k, names) = match format {
        NumberFormat::Si => (unit_index(top, base), &SI),
        NumberFormat::Bytes => (k, &BINARY),
    };
    let factor = base.powi(k as i32);
    let d = decimals(step * scale / factor);
    let labels = values
        .iter()
        .map(|&v| {
            if v == 0.0 {
                return "0".to_string();
            }
            let s = format!("{:.d$}", v / factor);
            match format {
                NumberFormat::Si => format!("{s}{}", names[k]),
                NumberFormat::Bytes => format!("{s} {}", names[k]),
            }
        })
        .collect();
    Ticks { values, labels }
}

/// `bytes` in binary units with one decimal (`512 B`, `1.5 MiB`).
pub fn format_bytes(bytes: u64) -> String {
    let v = bytes as f64;
    let k = unit_index(v, 1024.0);
    if k == 0 {
        format!("{bytes} B")
    } else {
        format!("{:.1} {}", v / 1024f64.powi(k as i32), BINARY[k])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(lo: f64, hi: f64, f: NumberFormat) -> Vec<String> {
        ticks(lo, hi, f).labels
    }

    #[test]
    fn si_ticks_are_round_and_cover_the_data() {
        let t = ticks(0.0, 37_412.0, NumberFormat::Si);
        assert_eq!(t.values, vec![0.0, 10e3, 20e3, 30e3, 40e3]);
        assert_eq!(t.labels, vec!["0", "10k", "20k", "30k", "40k"]);
        assert_eq!(
            labels(0.0, 11.0, NumberFormat::Si),
            vec!["0", "2.5", "5.0", "7.5", "10.0", "12.5"]
        );
        assert_eq!(labels(0.0, 0.9, NumberFormat::Si)[1], "0.2");
        assert_eq!(
            labels(0.0, 2.4e6, NumberFormat::Si),
            vec!["0", "0.5M", "1.0M", "1.5M", "2.0M", "2.5M"]
        );
        // An exact round maximum is the top tick, not one past it.
        assert_eq!(ticks(0.0, 50.0, NumberFormat::Si).hi(), 50.0);
    }

    #[test]
    fn degenerate_ranges_still_have_two_ticks() {
        for (lo, hi) in [(0.0, 0.0), (5.0, 5.0), (f64::NAN, f64::INFINITY)] {
            let t = ticks(lo, hi, NumberFormat::Si);
            assert!(t.values.len() >= 2, "{lo} {hi}: {t:?}");
            let want = if hi.is_finite() { hi } else { 0.0 };
            assert!(t.lo() <= 0.0 && t.hi() >= want, "{lo} {hi}: {t:?}");
        }
        let t = ticks(-3.0, 7.0, NumberFormat::Si);
        assert_eq!(t.values, vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
    }

    #[test]
    fn byte_ticks_use_one_binary_unit() {
        let gib = 1024.0 * 1024.0 * 1024.0;
        assert_eq!(
            labels(0.0, 1.4 * gib, NumberFormat::Bytes),
            vec!["0", "0.5 GiB", "1.0 GiB", "1.5 GiB"]
        );
        assert_eq!(labels(0.0, 600.0, NumberFormat::Bytes)[1], "200 B");
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(3 * 1024 * 1024 / 2), "1.5 MiB");
    }

    #[test]
    fn axis_titles_carry_the_unit() {
        assert_eq!(
            Axis::new("throughput", "ops/s").title(),
            "throughput (ops/s)"
        );
        assert_eq!(Axis::new("write-amp", "").title(), "write-amp");
        assert_eq!(Axis::bytes("size").title(), "size (bytes)");
    }
}
