//! [`BarChart`]: grouped bars, one group per category (a level) and in each
//! group one bar per series (a run), in series order; each bar is a
//! `<rect class="bar series-<key>">` carrying its category and value, with
//! the value printed above it when it fits.
//!
//! Invariants: the y axis starts at 0 or below and ends at or above every
//! value; a missing value (`None`, or not finite) draws no bar but keeps
//! its place in the group, so bars of one series line up across groups.

use crate::frame::{Frame, XScale};
use crate::legend::{LegendEntry, Swatch};
use crate::style::{self, SMALL};
use crate::svg::El;
use crate::text::width;
use crate::ticks::{ticks, Axis};

/// One series of bars: a value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    /// Colour and class `series-<key>`.
    pub key: usize,
    /// Legend text.
    pub name: String,
    /// One value per category (`None`: no bar).
    pub values: Vec<Option<f64>>,
}

impl BarSeries {
    /// A series.
    pub fn new(key: usize, name: impl Into<String>, values: Vec<Option<f64>>) -> BarSeries {
        BarSeries {
            key,
            name: name.into(),
            values,
        }
    }
}

/// A grouped bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Panel title.
    pub title: String,
    /// Title of the category axis.
    pub x_title: String,
    /// Category names, left to right.
    pub categories: Vec<String>,
    /// The value axis.
    pub y: Axis,
    /// The series.
    pub series: Vec<BarSeries>,
}

/// Share of a category slot its group of bars fills.
const GROUP_SHARE: f64 = 0.8;
/// Value labels use this font size.
const VALUE_FONT: f64 = 9.0;

fn value_label(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

impl BarChart {
    /// A chart with no series yet.
    pub fn new(
        title: impl Into<String>,
        x_title: impl Into<String>,
        categories: Vec<String>,
        y: Axis,
    ) -> BarChart {
        BarChart {
            title: title.into(),
            x_title: x_title.into(),
            categories,
            y,
            series: Vec::new(),
        }
    }

    /// Adds a series.
    pub fn push(&mut self, s: BarSeries) {
        self.series.push(s);
    }

    fn value(&self, s: &BarSeries, c: usize) -> Option<f64> {
        s.values.get(c).copied().flatten().filter(|v| v.is_finite())
    }

    pub(crate) fn frame(&self) -> Frame {
        let vals = self
            .series
            .iter()
            .flat_map(|s| (0..self.categories.len()).filter_map(move |c| self.value(s, c)));
        let (lo, hi) = vals.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        let widest = self
            .categories
            .iter()
            .map(|c| width(c, SMALL, false))
            .fold(0.0, f64::max);
        let per_slot = (widest + 8.0).max(self.series.len() as f64 * 8.0 / GROUP_SHARE);
        Frame {
            title: self.title.clone(),
            x_title: self.x_title.clone(),
            y_title: self.y.title(),
            y: ticks(lo, hi, self.y.format),
            x: XScale::Categories(self.categories.clone()),
            legend: self
                .series
                .iter()
                .map(|s| LegendEntry {
                    key: s.key,
                    name: s.name.clone(),
                })
                .collect(),
            swatch: Swatch::Box,
            min_plot_width: per_slot * self.categories.len() as f64,
        }
    }

    /// Draws the chart as panel `panel` at (x0, y0), `w` wide; returns its
    /// height.
    pub(crate) fn draw(&self, _panel: usize, x0: f64, y0: f64, w: f64, out: &mut String) -> f64 {
        let f = self.frame();
        let l = f.layout(x0, y0, w);
        f.draw_under(&l, out);
        out.push_str(r#"<g class="bars">"#);
        let n = self.series.len().max(1) as f64;
        let base = f.y_px(&l, 0.0);
        for (c, name) in self.categories.iter().enumerate() {
            let (a, b) = f.slot(&l, c);
            let group = (b - a) * GROUP_SHARE;
            let bw = group / n;
            let start = a + (b - a - group) / 2.0;
            for (i, s) in self.series.iter().enumerate() {
                let Some(v) = self.value(s, c) else {
                    continue;
                };
                let x = start + i as f64 * bw;
                let y = f.y_px(&l, v);
                El::new(out, "rect")
                    .attr("class", format!("bar series-{}", s.key))
                    .attr("data-category", name)
                    .attr("data-name", &s.name)
                    .attr("data-value", v)
                    .at("x", x + 0.5)
                    .at("y", y.min(base))
                    .at("width", (bw - 1.0).max(1.0))
                    .at("height", (y - base).abs())
                    .attr("fill", style::color(s.key))
                    .close();
                let label = value_label(v);
                if width(&label, VALUE_FONT, false) <= bw {
                    El::new(out, "text")
                        .attr("class", "bar-label")
                        .at("x", x + bw / 2.0)
                        .at("y", y.min(base) - 3.0)
                        .at("font-size", VALUE_FONT)
                        .attr("text-anchor", "middle")
                        .text("text", &label);
                }
            }
        }
        out.push_str("</g>");
        f.draw_over(&l, out);
        l.height
    }
}
