//! [`LineChart`]: series of (x, y) points over a numeric x axis, each drawn
//! as exactly one `<path class="series series-<key>">` (points joined in
//! the order given), with a marker per point when there are few, and named
//! in the legend.
//!
//! Invariants: both axes start at 0 or below and end at or above every
//! finite value; a series with no finite point still has its (empty) path
//! and legend entry, so the count of paths is the count of series.

use std::fmt::Write as _;

use crate::frame::{Frame, XScale};
use crate::legend::{LegendEntry, Swatch};
use crate::style;
use crate::svg::{num, El};
use crate::ticks::{ticks, Axis};

/// Series with at most this many points get a marker per point.
const MARKERS_UP_TO: usize = 60;

/// One line: a name for the legend, a key choosing its colour and class
/// (use the same key for the same run in every panel), and its points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Colour, dash and class `series-<key>`.
    pub key: usize,
    /// Legend text.
    pub name: String,
    /// (x, y) points, drawn in this order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series.
    pub fn new(key: usize, name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            key,
            name: name.into(),
            points,
        }
    }

    fn finite(&self) -> impl Iterator<Item = (f64, f64)> + '_ {
        self.points
            .iter()
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    }
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    /// Panel title.
    pub title: String,
    /// The x axis.
    pub x: Axis,
    /// The y axis.
    pub y: Axis,
    /// The lines.
    pub series: Vec<Series>,
}

impl LineChart {
    /// A chart with no series yet.
    pub fn new(title: impl Into<String>, x: Axis, y: Axis) -> LineChart {
        LineChart {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
        }
    }

    /// Adds a series.
    pub fn push(&mut self, s: Series) {
        self.series.push(s);
    }

    pub(crate) fn frame(&self) -> Frame {
        let all = || self.series.iter().flat_map(Series::finite);
        let (xlo, xhi) = all().fold((0.0f64, 0.0f64), |(a, b), (x, _)| (a.min(x), b.max(x)));
        let (ylo, yhi) = all().fold((0.0f64, 0.0f64), |(a, b), (_, y)| (a.min(y), b.max(y)));
        Frame {
            title: self.title.clone(),
            x_title: self.x.title(),
            y_title: self.y.title(),
            y: ticks(ylo, yhi, self.y.format),
            x: XScale::Numeric(ticks(xlo, xhi, self.x.format)),
            legend: self
                .series
                .iter()
                .map(|s| LegendEntry {
                    key: s.key,
                    name: s.name.clone(),
                })
                .collect(),
            swatch: Swatch::Line,
            min_plot_width: 0.0,
        }
    }

    /// Draws the chart as panel `panel` at (x0, y0), `w` wide; returns its
    /// height.
    pub(crate) fn draw(&self, panel: usize, x0: f64, y0: f64, w: f64, out: &mut String) -> f64 {
        let f = self.frame();
        let l = f.layout(x0, y0, w);
        f.draw_under(&l, out);
        out.push_str(r#"<g class="series-lines">"#);
        for s in &self.series {
            let mut d = String::new();
            for (i, (x, y)) in s.finite().enumerate() {
                let cmd = if i == 0 { 'M' } else { 'L' };
                if i > 0 {
                    d.push(' ');
                }
                let _ = write!(d, "{cmd}{},{}", num(f.x_px(&l, x)), num(f.y_px(&l, y)));
            }
            let mut el = El::new(out, "path")
                .attr("class", format!("series series-{}", s.key))
                .attr("id", format!("panel-{panel}-series-{}", s.key))
                .attr("data-name", &s.name)
                .attr("d", d)
                .attr("fill", "none")
                .attr("stroke", style::color(s.key))
                .attr("stroke-width", 2)
                .attr("stroke-linejoin", "round");
            if !style::dash(s.key).is_empty() {
                el = el.attr("stroke-dasharray", style::dash(s.key));
            }
            el.close();
            if s.finite().count() <= MARKERS_UP_TO {
                El::new(out, "g")
                    .attr("class", format!("markers series-{}", s.key))
                    .attr("fill", style::color(s.key))
                    .open();
                for (x, y) in s.finite() {
                    El::new(out, "circle")
                        .at("cx", f.x_px(&l, x))
                        .at("cy", f.y_px(&l, y))
                        .attr("r", 2.5)
                        .close();
                }
                out.push_str("</g>");
            }
        }
        out.push_str("</g>");
        f.draw_over(&l, out);
        l.height
    }
}
