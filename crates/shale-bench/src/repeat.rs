//! db_bench's repeat / warm-up suffix on benchmark names and the combined
//! throughput lines printed over the repeated passes (DB_BENCH.md §5.6).
//!
//! `name[X<n>]`, `name[W<m>]`, `name[X<n>-W<m>]` and `name[W<m>-X<n>]` run
//! `m` warm-up passes and then `n` measured passes (`n` ≥ 1, `m` ≥ 0). Unlike
//! db_bench, which silently ignores unknown letters and aborts on a missing
//! number, every malformed suffix is an error. `Combined` collects each
//! measured pass's throughput and formats db_bench 7.8.3's lines exactly:
//! after every pass from the 2nd `<name> [AVG <k> runs] : …`, after the last
//! `[AVG    <n> runs]` and `[MEDIAN <n> runs]`. Plain data; not shared.

use crate::error::{bail, Result};

/// One entry of `--benchmarks`: the benchmark name and its pass counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BenchSpec {
    /// The benchmark name without the suffix (what result lines show).
    pub name: String,
    /// Measured passes (`X`, default 1).
    pub repeats: u32,
    /// Warm-up passes before them (`W`, default 0).
    pub warmups: u32,
}

impl BenchSpec {
    /// True if the entry carried a suffix asking for more than one plain pass.
    pub fn is_repeated(&self) -> bool {
        self.repeats != 1 || self.warmups != 0
    }
}

/// Parses one `--benchmarks` entry such as `readrandom[X3-W1]`.
pub fn parse_entry(entry: &str) -> Result<BenchSpec> {
    let Some(open) = entry.find('[') else {
        if entry.contains(']') {
            bail!("benchmark '{entry}': ']' without '['");
        }
        return Ok(BenchSpec {
            name: entry.to_string(),
            repeats: 1,
            warmups: 0,
        });
    };
    let name = &entry[..open];
    let Some(args) = entry[open + 1..].strip_suffix(']') else {
        bail!("benchmark '{entry}': repeat suffix must end with ']' ({FORMS})");
    };
    if name.is_empty() {
        bail!("benchmark '{entry}': missing benchmark name before '['");
    }
    let (repeats, warmups) = parse_args(entry, args)?;
    Ok(BenchSpec {
        name: name.to_string(),
        repeats: repeats.unwrap_or(1),
        warmups: warmups.unwrap_or(0),
    })
}

const FORMS: &str = "expected name[X<n>], name[W<m>], name[X<n>-W<m>] or name[W<m>-X<n>]";

/// Parses the text between the brackets into (X, W).
fn parse_args(entry: &str, args: &str) -> Result<(Option<u32>, Option<u32>)> {
    let parts: Vec<&str> = args.split('-').collect();
    if parts.len() > 2 {
        bail!("benchmark '{entry}': too many parts in the repeat suffix ({FORMS})");
    }
    let (mut repeats, mut warmups) = (None, None);
    for part in parts {
        let (slot, letter) = match part.chars().next() {
            Some('X') => (&mut repeats, 'X'),
            Some('W') => (&mut warmups, 'W'),
            _ => bail!("benchmark '{entry}': bad repeat argument '{part}' ({FORMS})"),
        };
        if slot.is_some() {
            bail!("benchmark '{entry}': '{letter}' given twice ({FORMS})");
        }
        *slot = Some(parse_count(entry, part)?);
    }
    if repeats == Some(0) {
        bail!("benchmark '{entry}': the repeat count X must be at least 1");
    }
    Ok((repeats, warmups))
}

/// The decimal number after the letter of `part` (digits only).
fn parse_count(entry: &str, part: &str) -> Result<u32> {
    let digits = &part[1..];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        bail!(
            "benchmark '{entry}': '{part}' needs a non-negative number after the letter ({FORMS})"
        );
    }
    match digits.parse::<u32>() {
        Ok(n) => Ok(n),
        Err(_) => bail!("benchmark '{entry}': '{part}' is too large"),
    }
}

/// The throughput of each measured pass of one repeated benchmark
/// (db_bench's `CombinedStats`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Combined {
    ops_per_sec: Vec<f64>,
    mb_per_sec: Vec<f64>,
}

impl Combined {
    /// Adds a pass: `ops` done in `elapsed_secs`, and its MB/s if bytes were
    /// counted. As db_bench, 0 ops count as 1.
    pub fn add(&mut self, ops: u64, elapsed_secs: f64, mb_per_sec: Option<f64>) {
        self.ops_per_sec.push(ops.max(1) as f64 / elapsed_secs);
        if let Some(mb) = mb_per_sec {
            self.mb_per_sec.push(mb);
        }
    }

    /// Passes added so far.
    pub fn runs(&self) -> usize {
        self.ops_per_sec.len()
    }

    /// The line printed after each pass from the 2nd on (None before).
    pub fn progress_line(&self, name: &str) -> Option<String> {
        self.avg_line(name, &format!("[AVG {} runs]", self.runs()))
    }

    /// The two lines printed after the last pass (None with fewer than two
    /// passes), without the final newline.
    pub fn final_lines(&self, name: &str) -> Option<String> {
        let avg = self.avg_line(name, &format!("[AVG    {} runs]", self.runs()))?;
        let n = self.runs();
        let ops = median(&self.ops_per_sec) as i32;
        let median_line = if self.has_mb() {
            let mb = median(&self.mb_per_sec);
            format!("{name} [MEDIAN {n} runs] : {ops} ops/sec; {mb:6.1} MB/sec")
        } else {
            format!("{name} [MEDIAN {n} runs] : {ops} ops/sec")
        };
        Some(format!("{avg}\n{median_line}"))
    }

    /// The MB part is printed only when every pass counted bytes.
    fn has_mb(&self) -> bool {
        self.mb_per_sec.len() == self.ops_per_sec.len()
    }

    fn avg_line(&self, name: &str, tag: &str) -> Option<String> {
        if self.runs() < 2 {
            return None;
        }
        let ops = mean(&self.ops_per_sec) as i32;
        let ops_ci = ci95(&self.ops_per_sec) as i32;
        let mut line = format!("{name} {tag} : {ops} (\u{b1} {ops_ci}) ops/sec");
        if self.has_mb() {
            let (mb, mb_ci) = (mean(&self.mb_per_sec), ci95(&self.mb_per_sec));
            line.push_str(&format!("; {mb:6.1} (\u{b1} {mb_ci:.1}) MB/sec"));
        }
        Some(line)
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Half-width of the 95% confidence interval of the mean, assuming normal
/// samples: 1.959964 × sample stddev (n−1) / √n. Requires `v.len() >= 2`.
fn ci95(v: &[f64]) -> f64 {
    let avg = mean(v);
    let squares: f64 = v.iter().map(|x| (x - avg) * (x - avg)).sum();
    let std_error = (squares / (v.len() - 1) as f64).sqrt() / (v.len() as f64).sqrt();
    1.959964 * std_error
}

/// Median (mean of the middle two for an even count). Requires a non-empty slice.
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mid = s.len() / 2;
    if s.len() % 2 == 1 {
        s[mid]
    } else {
        (s[mid] + s[mid - 1]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(e: &str) -> (String, u32, u32) {
        let s = parse_entry(e).unwrap();
        (s.name, s.repeats, s.warmups)
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(spec("readrandom"), ("readrandom".into(), 1, 0));
        assert_eq!(spec("readrandom[X3]"), ("readrandom".into(), 3, 0));
        assert_eq!(spec("readrandom[W2]"), ("readrandom".into(), 1, 2));
        assert_eq!(spec("readrandom[X3-W1]"), ("readrandom".into(), 3, 1));
        assert_eq!(spec("fillseq[W1-X2]"), ("fillseq".into(), 2, 1));
        assert_eq!(spec("readseq[X10-W0]"), ("readseq".into(), 10, 0));
        assert!(!parse_entry("readrandom[X1]").unwrap().is_repeated());
        assert!(parse_entry("readrandom[X2]").unwrap().is_repeated());
        assert!(parse_entry("readrandom[W1]").unwrap().is_repeated());
    }

    #[test]
    fn rejects_malformed_suffixes_with_a_clear_error() {
        let cases = [
            ("readrandom[X0]", "must be at least 1"),
            ("readrandom[Y3]", "bad repeat argument 'Y3'"),
            ("readrandom[X3", "must end with ']'"),
            ("readrandom[X-1]", "'X' needs a non-negative number"),
            ("readrandom[X3-W1-X2]", "too many parts"),
            ("readrandom[X3-X2]", "'X' given twice"),
            ("readrandom[]", "bad repeat argument ''"),
            ("readrandom[X]", "'X' needs a non-negative number"),
            ("readrandom[X+3]", "'X+3' needs a non-negative number"),
            ("readrandom[X3]x", "must end with ']'"),
            ("readrandom[X99999999999]", "too large"),
            ("[X3]", "missing benchmark name"),
            ("readrandomX3]", "']' without '['"),
        ];
        for (entry, want) in cases {
            let err = parse_entry(entry).unwrap_err().0;
            assert!(err.contains(want), "{entry}: {err}");
            assert!(
                err.contains(entry),
                "{entry}: error does not name the entry: {err}"
            );
        }
    }

    /// Hand-computed: ops/sec 100, 200, 400 → mean 233.33, sample stddev
    /// √(((−133.33)² + (−33.33)² + 166.67²)/2) = √23333.33 = 152.753,
    /// ci95 = 1.959964 × 152.753 / √3 = 172.85. MB/s 1.0, 2.0, 4.0 → mean
    /// 2.333, ci95 1.7285, median 2.0.
    #[test]
    fn avg_and_median_lines_match_db_bench_format() {
        let mut c = Combined::default();
        c.add(100, 1.0, Some(1.0));
        assert_eq!(c.progress_line("readrandom"), None);
        assert_eq!(c.final_lines("readrandom"), None);
        c.add(400, 2.0, Some(2.0));
        // 100, 200: mean 150, stddev 70.711, ci95 = 1.959964 × 50 = 97.998.
        assert_eq!(
            c.progress_line("readrandom").unwrap(),
            "readrandom [AVG 2 runs] : 150 (\u{b1} 97) ops/sec;    1.5 (\u{b1} 1.0) MB/sec"
        );
        c.add(1600, 4.0, Some(4.0));
        assert_eq!(
            c.progress_line("readrandom").unwrap(),
            "readrandom [AVG 3 runs] : 233 (\u{b1} 172) ops/sec;    2.3 (\u{b1} 1.7) MB/sec"
        );
        assert_eq!(
            c.final_lines("readrandom").unwrap(),
            "readrandom [AVG    3 runs] : 233 (\u{b1} 172) ops/sec;    2.3 (\u{b1} 1.7) MB/sec\n\
             readrandom [MEDIAN 3 runs] : 200 ops/sec;    2.0 MB/sec"
        );
        // "±" is UTF-8 C2 B1, as db_bench's "\xC2\xB1".
        assert!(c
            .final_lines("x")
            .unwrap()
            .as_bytes()
            .windows(2)
            .any(|w| w == [0xC2, 0xB1]));
    }

    #[test]
    fn mb_part_only_when_every_pass_counted_bytes() {
        let mut c = Combined::default();
        c.add(1000, 1.0, Some(5.0));
        c.add(3000, 1.0, None);
        c.add(0, 0.5, None); // 0 ops count as 1, as in db_bench
        assert_eq!(
            c.final_lines("deleterandom").unwrap(),
            "deleterandom [AVG    3 runs] : 1334 (\u{b1} 1727) ops/sec\n\
             deleterandom [MEDIAN 3 runs] : 1000 ops/sec"
        );
        let mut even = Combined::default();
        for ops in [10, 40, 20, 30] {
            even.add(ops, 1.0, None);
        }
        assert!(even
            .final_lines("x")
            .unwrap()
            .ends_with("[MEDIAN 4 runs] : 25 ops/sec"));
    }
}
