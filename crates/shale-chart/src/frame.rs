//! The frame of a chart with axes (line and bar charts): the wrapped title,
//! the y-axis title (quantity and unit) above the plot, the plot area with
//! grid lines, the y ticks at its left, the x ticks or categories under
//! it, the x-axis title, and the legend flowing in rows at the bottom.
//!
//! Layout invariants: every text lies inside the panel's width (the title
//! wraps; [`Frame::min_width`] is wide enough for the tick labels, axis
//! titles and each legend entry), and nothing is drawn with a transform:
//! element coordinates are figure coordinates.

use crate::legend::{draw_legend, entry_width, legend_rows, rows_height, LegendEntry, Swatch};
use crate::style::{self, INK, LABEL, LEADING, PAD, PLOT_HEIGHT, SMALL, TICK};
use crate::svg::El;
use crate::text::{width, wrap};
use crate::ticks::Ticks;

/// What runs along the x axis.
pub(crate) enum XScale {
    /// Numbers, with their ticks.
    Numeric(Ticks),
    /// Named slots of equal width (bar groups).
    Categories(Vec<String>),
}

/// A chart's frame, before layout.
pub(crate) struct Frame {
    pub title: String,
    pub x_title: String,
    pub y_title: String,
    pub y: Ticks,
    pub x: XScale,
    pub legend: Vec<LegendEntry>,
    pub swatch: Swatch,
    /// The narrowest plot area the chart can use.
    pub min_plot_width: f64,
}

/// The plot area, in figure coordinates.
#[derive(Clone, Copy)]
pub(crate) struct Rect {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

/// A frame laid out at a place and width.
pub(crate) struct Layout {
    x0: f64,
    y0: f64,
    title_lines: Vec<String>,
    y_title_y: f64,
    /// The plot area.
    pub plot: Rect,
    x_labels_y: f64,
    x_title_y: f64,
    /// Per legend row: (entry index, x of its swatch).
    legend_rows: Vec<Vec<(usize, f64)>>,
    legend_top: f64,
    /// The panel's height.
    pub height: f64,
}

impl Frame {
    fn left_margin(&self) -> f64 {
        let widest = self
            .y
            .labels
            .iter()
            .map(|l| width(l, SMALL, false))
            .fold(0.0, f64::max);
        PAD + widest + TICK + 4.0
    }

    fn right_margin(&self) -> f64 {
        let last = match &self.x {
            XScale::Numeric(t) => t.labels.last().map_or(0.0, |l| width(l, SMALL, false)),
            XScale::Categories(_) => 0.0,
        };
        PAD.max(PAD / 2.0 + last / 2.0)
    }

    /// The narrowest panel that holds every text but the (wrapped) title.
    pub(crate) fn min_width(&self) -> f64 {
        let left = self.left_margin();
        let plot = self.min_plot_width.max(style::MIN_PLOT_WIDTH);
        let legend = self.legend.iter().map(entry_width).fold(0.0, f64::max);
        let mut w = left + plot.max(legend) + self.right_margin();
        w = w.max(width(&self.y_title, LABEL, false) + 2.0 * PAD);
        w = w.max(width(&self.x_title, LABEL, false) + 2.0 * PAD);
        w
    }

    /// Lays the frame out with its top-left corner at (x0, y0).
    pub(crate) fn layout(&self, x0: f64, y0: f64, w: f64) -> Layout {
        let mut y = y0 + PAD;
        let title_lines = wrap(&self.title, style::TITLE, true, w - 2.0 * PAD);
        y += title_lines.len() as f64 * style::TITLE * LEADING;
        let y_title_y = y + LABEL + 2.0;
        y = y_title_y + SMALL;
        let plot = Rect {
            left: x0 + self.left_margin(),
            top: y,
            right: x0 + w - self.right_margin(),
            bottom: y + PLOT_HEIGHT,
        };
        let x_labels_y = plot.bottom + TICK + SMALL + 2.0;
        let x_title_y = x_labels_y + LABEL * LEADING + 4.0;
        let legend_top = x_title_y + 10.0;
        let legend_rows = legend_rows(&self.legend, plot.left, x0 + w - PAD);
        let legend_h = rows_height(&legend_rows);
        let height = legend_top + legend_h + PAD - y0;
        Layout {
            x0,
            y0,
            title_lines,
            y_title_y,
            plot,
            x_labels_y,
            x_title_y,
            legend_rows,
            legend_top,
            height,
        }
    }

    /// The y pixel of value `v`.
    pub(crate) fn y_px(&self, l: &Layout, v: f64) -> f64 {
        let (lo, hi) = (self.y.lo(), self.y.hi());
        l.plot.bottom - (v - lo) / (hi - lo) * (l.plot.bottom - l.plot.top)
    }

    /// The x pixel of value `v` (numeric x axis; the left edge otherwise).
    pub(crate) fn x_px(&self, l: &Layout, v: f64) -> f64 {
        match &self.x {
            XScale::Numeric(t) => {
                let (lo, hi) = (t.lo(), t.hi());
                l.plot.left + (v - lo) / (hi - lo) * (l.plot.right - l.plot.left)
            }
            XScale::Categories(_) => l.plot.left,
        }
    }

    /// The slot `[left, right)` of category `i`.
    pub(crate) fn slot(&self, l: &Layout, i: usize) -> (f64, f64) {
        let n = match &self.x {
            XScale::Categories(c) => c.len().max(1),
            XScale::Numeric(_) => 1,
        };
        let w = (l.plot.right - l.plot.left) / n as f64;
        let left = l.plot.left + i as f64 * w;
        (left, left + w)
    }

    /// The title and the grid lines (drawn under the data).
    pub(crate) fn draw_under(&self, l: &Layout, out: &mut String) {
        for (i, line) in l.title_lines.iter().enumerate() {
            El::new(out, "text")
                .attr("class", "chart-title")
                .at("x", l.x0 + PAD)
                .at(
                    "y",
                    l.y0 + PAD + style::TITLE + i as f64 * style::TITLE * LEADING,
                )
                .at("font-size", style::TITLE)
                .attr("font-weight", "bold")
                .text("text", line);
        }
        out.push_str(r#"<g class="grid">"#);
        for &v in self.y.values.iter().skip(1) {
            let y = self.y_px(l, v);
            El::new(out, "line")
                .at("x1", l.plot.left)
                .at("y1", y)
                .at("x2", l.plot.right)
                .at("y2", y)
                .attr("stroke", style::GRID)
                .close();
        }
        out.push_str("</g>");
    }

    /// The axes, their titles and the legend (drawn over the data).
    pub(crate) fn draw_over(&self, l: &Layout, out: &mut String) {
        let p = l.plot;
        // y axis: line, ticks, title above the plot.
        out.push_str(r#"<g class="axis y-axis">"#);
        axis_line(out, p.left, p.top, p.left, p.bottom);
        for (v, label) in self.y.values.iter().zip(&self.y.labels) {
            let y = self.y_px(l, *v);
            tick(out, *v, (p.left - TICK, y, p.left, y));
            El::new(out, "text")
                .attr("class", "tick-label")
                .at("x", p.left - TICK - 3.0)
                .at("y", y + SMALL * 0.35)
                .at("font-size", SMALL)
                .attr("text-anchor", "end")
                .text("text", label);
            out.push_str("</g>");
        }
        El::new(out, "text")
            .attr("class", "axis-title")
            .at("x", l.x0 + PAD)
            .at("y", l.y_title_y)
            .at("font-size", LABEL)
            .text("text", &self.y_title);
        out.push_str("</g>");
        // x axis: line, ticks or categories, title centred under the plot.
        out.push_str(r#"<g class="axis x-axis">"#);
        axis_line(out, p.left, p.bottom, p.right, p.bottom);
        match &self.x {
            XScale::Numeric(t) => {
                for (v, label) in t.values.iter().zip(&t.labels) {
                    let x = self.x_px(l, *v);
                    tick(out, *v, (x, p.bottom, x, p.bottom + TICK));
                    x_label(out, x, l.x_labels_y, label);
                    out.push_str("</g>");
                }
            }
            XScale::Categories(c) => {
                for (i, name) in c.iter().enumerate() {
                    let (a, b) = self.slot(l, i);
                    El::new(out, "g")
                        .attr("class", "tick category")
                        .attr("data-category", name)
                        .open();
                    x_label(out, (a + b) / 2.0, l.x_labels_y, name);
                    out.push_str("</g>");
                }
            }
        }
        El::new(out, "text")
            .attr("class", "axis-title")
            .at("x", (p.left + p.right) / 2.0)
            .at("y", l.x_title_y)
            .at("font-size", LABEL)
            .attr("text-anchor", "middle")
            .text("text", &self.x_title);
        out.push_str("</g>");
        draw_legend(out, &self.legend, self.swatch, &l.legend_rows, l.legend_top);
    }
}

fn axis_line(out: &mut String, x1: f64, y1: f64, x2: f64, y2: f64) {
    El::new(out, "line")
        .attr("class", "axis-line")
        .at("x1", x1)
        .at("y1", y1)
        .at("x2", x2)
        .at("y2", y2)
        .attr("stroke", INK)
        .close();
}

/// Opens `<g class="tick">` with its mark; the caller adds the label and
/// closes the group.
fn tick(out: &mut String, v: f64, (x1, y1, x2, y2): (f64, f64, f64, f64)) {
    El::new(out, "g")
        .attr("class", "tick")
        .attr("data-value", v)
        .open();
    El::new(out, "line")
        .at("x1", x1)
        .at("y1", y1)
        .at("x2", x2)
        .at("y2", y2)
        .attr("stroke", INK)
        .close();
}

fn x_label(out: &mut String, x: f64, y: f64, label: &str) {
    El::new(out, "text")
        .attr("class", "tick-label")
        .at("x", x)
        .at("y", y)
        .at("font-size", SMALL)
        .attr("text-anchor", "middle")
        .text("text", label);
}
