//! `--space_sample_ms`: every measured benchmark's Summary carries the DB
//! directory's peak size (never below its size at the end of the step), and
//! the run ends with the peak over all steps (never below any step's peak);
//! off by default.

mod common;

fn args(db: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--num=20000",
        "--benchmarks=fillrandom,overwrite,compact,waitforcompaction",
    ];
    a.extend_from_slice(extra);
    common::shale_args(db, &a)
}

#[test]
fn peaks_are_reported_per_step_and_over_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (recs, out) = common::run_ok(&args(&db, &["--space_sample_ms=1"]));
    assert_eq!(recs.len(), 3, "{out}");
    let mut largest = 0;
    for r in &recs {
        let peak = r.peak_db_size_bytes.expect("a peak per step");
        assert!(peak >= r.db_size_bytes, "{r:?}");
        assert!(
            r.summary_line().contains(" peak_db_size="),
            "{}",
            r.summary_line()
        );
        assert!(
            r.summary_line().contains(" peak_space_amp="),
            "{}",
            r.summary_line()
        );
        largest = largest.max(peak);
    }
    let line = out
        .lines()
        .find(|l| l.starts_with("Peak db_size over the run: "))
        .unwrap_or_else(|| panic!("no run peak line in\n{out}"));
    let run_peak: u64 = line["Peak db_size over the run: ".len()..]
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(run_peak >= largest, "{line} below a step's peak {largest}");
    // 20K puts of 116 bytes were in the DB at once (fillrandom's distinct
    // keys, ~12.6K, at the least).
    assert!(run_peak > 12_000 * 116, "{line}");
}

#[test]
fn no_sampling_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (recs, out) = common::run_ok(&args(&db, &[]));
    assert!(recs.iter().all(|r| r.peak_db_size_bytes.is_none()));
    assert!(
        !out.contains("peak_db_size") && !out.contains("Peak db_size"),
        "{out}"
    );
}
