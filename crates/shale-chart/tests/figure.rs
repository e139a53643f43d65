//! Figures read back through `shale_chart::verify`: well-formed XML, axes
//! with tick labels and titles with units, one legend entry and exactly one
//! path per series, every text inside the viewBox (long titles and names
//! included), and the drawn points, bars and levels equal to the input.

use shale_chart::verify::{parse, Parsed, ParsedPanel};
use shale_chart::{Axis, BarChart, BarSeries, Figure, LevelChart, LevelRow, LineChart, Series};

fn throughput() -> LineChart {
    let mut c = LineChart::new(
        "fillrandom: throughput",
        Axis::new("time", "s"),
        Axis::new("throughput", "ops/s"),
    );
    c.push(Series::new(
        0,
        "shale: a.json",
        vec![
            (1.0, 120_000.0),
            (2.0, 181_500.0),
            (3.0, 90_000.0),
            (4.0, 150_000.0),
        ],
    ));
    c.push(Series::new(
        1,
        "rocksdb: b.json",
        vec![(1.0, 80_000.0), (2.0, 95_000.0), (3.0, 101_000.0)],
    ));
    c
}

fn write_amp() -> BarChart {
    let mut c = BarChart::new(
        "fillrandom: write-amp per level",
        "level",
        vec!["L0".into(), "L1".into(), "L2".into()],
        Axis::new("bytes written ÷ user bytes", ""),
    );
    c.push(BarSeries::new(
        0,
        "shale: a.json",
        vec![Some(1.0), Some(2.5), None],
    ));
    c.push(BarSeries::new(
        1,
        "rocksdb: b.json",
        vec![Some(1.1), Some(3.0), Some(0.4)],
    ));
    c
}

fn shape() -> LevelChart {
    let row = |l: &str, files, bytes, score| LevelRow {
        label: l.into(),
        files,
        compacting: 0,
        bytes,
        score,
    };
    LevelChart {
        title: "column family default".into(),
        note: "7 files, 130 MiB".into(),
        rows: vec![
            row("L0", 3, 10 << 20, 0.75),
            row("L1", 0, 0, 0.0),
            row("L2", 4, 120 << 20, 1.5),
        ],
    }
}

fn figure() -> Figure {
    let mut f = Figure::new("shale-bench compare");
    f.note("A = a.json, B = b.json");
    f.push(throughput());
    f.push(write_amp());
    f.push(shape());
    f
}

fn parsed(f: &Figure) -> Parsed {
    let svg = f.to_svg();
    let p = parse(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    let out: Vec<_> = p.texts_outside();
    assert!(out.is_empty(), "texts outside the viewBox: {out:?}");
    p
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn a_line_chart_has_axes_units_legend_and_one_path_per_series() {
    let p = parsed(&figure());
    assert_eq!(p.title, "shale-bench compare");
    assert_eq!(p.notes, vec!["A = a.json, B = b.json"]);
    let kinds: Vec<&str> = p.panels.iter().map(|p| p.kind.as_str()).collect();
    assert_eq!(kinds, ["line-chart", "bar-chart", "level-chart"]);
    let line: &ParsedPanel = &p.panels[0];
    assert_eq!(line.title, "fillrandom: throughput");
    let (x, y) = (line.x_axis.as_ref().unwrap(), line.y_axis.as_ref().unwrap());
    assert_eq!(x.title, "time (s)");
    assert_eq!(y.title, "throughput (ops/s)");
    let ylabels: Vec<&str> = y.ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(ylabels, ["0", "50k", "100k", "150k", "200k"]);
    assert!(x.ticks.len() >= 3 && x.ticks.iter().all(|t| !t.label.is_empty()));
    // One path per series, named in the legend with the same key.
    assert_eq!(line.lines.len(), 2);
    assert_eq!(
        line.legend,
        vec![
            (0, "shale: a.json".to_string()),
            (1, "rocksdb: b.json".to_string())
        ]
    );
    assert_eq!(line.lines[0].id, "panel-0-series-0");
    assert_eq!(line.lines[1].name, "rocksdb: b.json");
    // The drawn points are the input (to within a pixel's worth).
    let per_px_y = 200_000.0 / 220.0;
    let want = &throughput().series;
    for (got, want) in line.lines.iter().zip(want) {
        assert_eq!(got.points.len(), want.points.len());
        for (g, w) in got.points.iter().zip(&want.points) {
            assert!(close(g.0, w.0, 0.05), "{g:?} vs {w:?}");
            assert!(close(g.1, w.1, per_px_y), "{g:?} vs {w:?}");
        }
    }
    // The highest point lies in the top tick interval.
    let top = y.max_tick().unwrap();
    let step = y.step().unwrap();
    let highest = line
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    assert!(
        highest <= top + per_px_y && highest > top - step,
        "{highest} {top}"
    );
}

#[test]
fn bars_show_their_values_per_category_and_series() {
    let p = parsed(&figure());
    let bars = &p.panels[1];
    assert_eq!(
        bars.y_axis.as_ref().unwrap().title,
        "bytes written ÷ user bytes"
    );
    let x = bars.x_axis.as_ref().unwrap();
    let cats: Vec<&str> = x
        .ticks
        .iter()
        .filter_map(|t| t.category.as_deref())
        .collect();
    assert_eq!(cats, ["L0", "L1", "L2"]);
    assert_eq!(bars.legend.len(), 2);
    assert!(bars.lines.is_empty());
    // Five values given (one None): five bars, each as tall as its value.
    assert_eq!(bars.bars.len(), 5);
    for b in &bars.bars {
        assert!(close(b.drawn, b.value, 0.02), "{b:?}");
    }
    let l2: Vec<_> = bars.bars.iter().filter(|b| b.category == "L2").collect();
    assert_eq!(l2.len(), 1);
    assert_eq!((l2[0].key, l2[0].value), (1, 0.4));
}

#[test]
fn the_level_chart_puts_l0_on_top_and_draws_bytes_to_scale() {
    let p = parsed(&figure());
    let lv = &p.panels[2];
    assert_eq!(lv.note.as_deref(), Some("7 files, 130 MiB"));
    let labels: Vec<&str> = lv.levels.iter().map(|l| l.label.as_str()).collect();
    assert_eq!(labels, ["L0", "L1", "L2"]);
    assert!(lv.levels.windows(2).all(|w| w[0].y < w[1].y));
    assert_eq!(lv.levels[0].details, "3 files · 10.0 MiB · score 0.75");
    assert_eq!(lv.levels[1].bar_width, None);
    let (w0, w2) = (
        lv.levels[0].bar_width.unwrap(),
        lv.levels[2].bar_width.unwrap(),
    );
    assert!(close(w0 / w2, 10.0 / 120.0, 0.01), "{w0} {w2}");
    assert_eq!(lv.legend.len(), 2);
}

#[test]
fn long_titles_wrap_and_long_names_widen_the_figure() {
    let mut f = Figure::new(format!("{} end", "a very long title word ".repeat(12)));
    let mut c = throughput();
    c.title = "x".repeat(200);
    c.push(Series::new(
        2,
        format!("shale: /{}/run.json", "dir".repeat(60)),
        vec![(1.0, 1.0)],
    ));
    f.push(c);
    let p = parsed(&f);
    assert!(p.width > 760.0, "{}", p.width);
    assert!(p.title.ends_with(" end"));
    assert_eq!(p.panels[0].title.replace(' ', ""), "x".repeat(200));
    assert_eq!(p.panels[0].lines.len(), 3);
}

#[test]
fn text_is_escaped_and_empty_series_keep_their_path() {
    let mut c = LineChart::new("<&> \"q\"", Axis::new("t", "s"), Axis::new("p99", "µs"));
    c.push(Series::new(0, "a<b & c>", vec![]));
    c.push(Series::new(
        1,
        "nan",
        vec![(f64::NAN, 1.0), (1.0, f64::INFINITY)],
    ));
    let mut f = Figure::new("esc & <ape>");
    f.push(c);
    let svg = f.to_svg();
    assert!(svg.contains("esc &amp; &lt;ape&gt;"));
    let p = parsed(&f);
    assert_eq!(p.title, "esc & <ape>");
    let panel = &p.panels[0];
    assert_eq!(panel.title, "<&> \"q\"");
    assert_eq!(panel.lines.len(), 2);
    assert!(panel.lines.iter().all(|l| l.points.is_empty()));
    assert_eq!(panel.legend[0].1, "a<b & c>");
    assert_eq!(panel.y_axis.as_ref().unwrap().title, "p99 (µs)");
}

#[test]
fn rendering_is_deterministic_and_an_empty_figure_is_valid() {
    assert_eq!(figure().to_svg(), figure().to_svg());
    let p = parsed(&Figure::new("nothing"));
    assert!(p.panels.is_empty());
}
