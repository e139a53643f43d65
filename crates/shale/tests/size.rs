//! Size limits of the engine (crates/shale/src), in non-test lines: every
//! line of a source file, comments and blank lines included, except test
//! code. Test code is: files named `tests.rs`, `*_tests.rs` and
//! `test_util.rs`; `testing.rs`, the test-support module behind the
//! `fuzzing` feature; modules declared under `#[cfg(test)]` (e.g.
//! `#[cfg(test)] mod bench;`); and `#[cfg(test)]` (or `cfg(all(test, ..))`)
//! items inside files, with the `///` lines right above them. Items under
//! `cfg(any(test, feature = ".."))` are compiled outside tests and count.
//!
//! The limits:
//! - `db/` holds at most 12% of the engine's non-test lines: the engine's
//!   logic lives in the subsystems, `db/` wires them together;
//! - no file exceeds 800 non-test lines;
//! - the median file has at most 200 non-test lines.
//!
//! On failure it prints each top-level module's lines and share, the files
//! over the limit, and the median. The line counter is shared with
//! `layering.rs` (tests/common/arch.rs).

#[path = "common/arch.rs"]
mod arch;

use std::collections::BTreeMap;

const DB: &str = "db";
const DB_SHARE_MAX: f64 = 0.12;
const FILE_MAX: usize = 800;
const MEDIAN_MAX: f64 = 200.0;

/// `(file relative to src, non-test lines)` for every engine file.
fn file_sizes() -> Vec<(String, usize)> {
    let c = arch::Crate::load(&arch::src_dir());
    assert!(c.files.len() > 50, "found only {} files", c.files.len());
    c.files
        .iter()
        .map(|f| (f.rel.clone(), arch::non_test_lines(&f.text)))
        .collect()
}

fn median(sorted: &[usize]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0
    }
}

#[test]
fn the_engine_stays_small_where_it_should() {
    let files = file_sizes();
    let total: usize = files.iter().map(|(_, n)| n).sum();
    // Top-level module of each file: `db/` for db/write.rs, `error.rs`.
    let mut per_top: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (rel, n) in &files {
        let top = match rel.split_once('/') {
            Some((dir, _)) => format!("{dir}/"),
            None => rel.clone(),
        };
        let e = per_top.entry(top).or_default();
        e.0 += n;
        e.1 += 1;
    }
    let db_lines = per_top.get(&format!("{DB}/")).map_or(0, |e| e.0);
    let db_share = db_lines as f64 / total as f64;
    let mut big: Vec<&(String, usize)> = files.iter().filter(|(_, n)| *n > FILE_MAX).collect();
    big.sort_by_key(|f| std::cmp::Reverse(f.1));
    let mut sizes: Vec<usize> = files.iter().map(|(_, n)| *n).collect();
    sizes.sort();
    let med = median(&sizes);

    let mut table = format!(
        "engine: {total} non-test lines in {} files\n\n{:<16} {:>7} {:>6} {:>6}\n",
        files.len(),
        "module",
        "lines",
        "share",
        "files"
    );
    let mut rows: Vec<_> = per_top.iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    for (top, (n, count)) in rows {
        let share = 100.0 * *n as f64 / total as f64;
        table += &format!("{top:<16} {n:>7} {share:>5.1}% {count:>6}\n");
    }
    table += &format!("\nfiles over {FILE_MAX} lines: {}\n", big.len());
    for (rel, n) in &big {
        table += &format!("  {rel:<40} {n:>6}\n");
    }
    table += &format!("median file: {med} lines (limit {MEDIAN_MAX})\n");
    println!("{table}");

    let mut broken = Vec::new();
    if db_share > DB_SHARE_MAX {
        broken.push(format!(
            "{DB}/ is {:.1}% of the engine (limit {:.0}%)",
            100.0 * db_share,
            100.0 * DB_SHARE_MAX
        ));
    }
    if !big.is_empty() {
        broken.push(format!("{} files exceed {FILE_MAX} lines", big.len()));
    }
    if med > MEDIAN_MAX {
        broken.push(format!(
            "the median file has {med} lines (limit {MEDIAN_MAX})"
        ));
    }
    assert!(broken.is_empty(), "{}\n\n{table}", broken.join("; "));
}

#[test]
fn test_code_is_not_counted() {
    let text = "\
//! A module.
use std::fmt;

/// Kept: compiled outside tests too.
#[cfg(any(test, feature = \"fuzzing\"))]
pub fn for_fuzzing() {}

/// A test helper: this line goes with it.
#[cfg(test)]
pub(crate) fn helper() -> &'static str {
    \"}\"
}

#[cfg(all(test, target_os = \"linux\"))]
mod linux_tests {
    const C: char = '{';
}
fn kept() {}

#[cfg(test)]
mod tests;
";
    // 21 lines, of which 5 + 4 + 2 are test code.
    assert_eq!(text.lines().count(), 21);
    assert_eq!(arch::non_test_lines(text), 21 - 11);
    assert_eq!(arch::non_test_lines("#![cfg(test)]\nfn f() {}\n"), 0);
}
