//! `--chart=FILE`: per-interval throughput and p99 latency of every
//! benchmark as a hand-written SVG (one row per benchmark: ops/sec on the
//! left, p99 µs on the right) and the same numbers as `FILE.csv`.
//! Pure function of the data; no state.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::Result;
use crate::reporter::Interval;

const W: f64 = 420.0;
const H: f64 = 160.0;
const PAD: f64 = 40.0;

fn panel(svg: &mut String, x0: f64, y0: f64, title: &str, pts: &[(f64, f64)], color: &str) {
    let _ = write!(
        svg,
        r##"<g transform="translate({x0},{y0})"><rect x="{PAD}" y="10" width="{}" height="{}" fill="none" stroke="#999"/>"##,
        W - PAD - 10.0,
        H - PAD - 10.0
    );
    let _ = write!(
        svg,
        r#"<text x="{PAD}" y="8" font-size="11">{}</text>"#,
        escape(title)
    );
    let xmax = pts.iter().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9);
    let ymax = pts.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9);
    let sx = |x: f64| PAD + x / xmax * (W - PAD - 10.0);
    let sy = |y: f64| H - PAD - y / ymax * (H - PAD - 20.0);
    let _ = write!(svg, r#"<text x="2" y="20" font-size="9">{ymax:.0}</text>"#);
    let _ = write!(svg, r#"<text x="2" y="{}" font-size="9">0</text>"#, H - PAD);
    let _ = write!(
        svg,
        r#"<text x="{}" y="{}" font-size="9">{xmax:.0}s</text>"#,
        W - 40.0,
        H - PAD + 12.0
    );
    let points: Vec<String> = pts
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
        .collect();
    let _ = write!(
        svg,
        r#"<polyline fill="none" stroke="{color}" stroke-width="1.5" points="{}"/></g>"#,
        points.join(" ")
    );
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG for `(benchmark, intervals)` rows.
pub fn svg(series: &[(String, Vec<Interval>)]) -> String {
    let rows = series.len().max(1) as f64;
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif">"#,
        2.0 * W,
        rows * H
    );
    for (i, (name, iv)) in series.iter().enumerate() {
        let y0 = i as f64 * H;
        let ops: Vec<(f64, f64)> = iv.iter().map(|p| (p.secs, p.ops_per_sec)).collect();
        let p99: Vec<(f64, f64)> = iv.iter().map(|p| (p.secs, p.p99_us)).collect();
        panel(
            &mut s,
            0.0,
            y0,
            &format!("{name}: ops/sec per interval"),
            &ops,
            "#1f77b4",
        );
        panel(
            &mut s,
            W,
            y0,
            &format!("{name}: p99 latency (us)"),
            &p99,
            "#d62728",
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The CSV: `benchmark,secs,ops,ops_per_sec,p99_us`.
pub fn csv(series: &[(String, Vec<Interval>)]) -> String {
    let mut s = String::from("benchmark,secs,ops,ops_per_sec,p99_us\n");
    for (name, iv) in series {
        for p in iv {
            let _ = writeln!(
                s,
                "{name},{:.3},{},{:.1},{:.1}",
                p.secs, p.ops, p.ops_per_sec, p.p99_us
            );
        }
    }
    s
}

/// Writes `path` (SVG) and `path` with extension `.csv`.
pub fn write(path: &Path, series: &[(String, Vec<Interval>)]) -> Result<()> {
    std::fs::write(path, svg(series))?;
    std::fs::write(path.with_extension("csv"), csv(series))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_and_csv_contain_every_point() {
        let iv = vec![
            Interval {
                secs: 1.0,
                ops: 100,
                ops_per_sec: 100.0,
                p99_us: 5.0,
            },
            Interval {
                secs: 2.0,
                ops: 300,
                ops_per_sec: 300.0,
                p99_us: 9.0,
            },
        ];
        let series = vec![("fill<x>".to_string(), iv)];
        let s = svg(&series);
        assert!(s.starts_with("<svg"));
        assert!(s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("fill&lt;x&gt;"));
        let c = csv(&series);
        assert_eq!(c.lines().count(), 3);
        assert!(c.contains("fill<x>,2.000,300,300.0,9.0"));
        let d = tempfile::tempdir().unwrap();
        write(&d.path().join("c.svg"), &series).unwrap();
        assert!(d.path().join("c.csv").exists());
    }
}
