//! Legends: entries (a swatch in the series' colour and its name) flowing
//! left to right in rows that wrap at the panel's right edge, one
//! `<g class="legend-entry" data-key="<key>">` each.
//!
//! Invariant: an entry starts a new row only when it does not fit after
//! the previous one; a row always holds at least one entry (an entry wider
//! than the panel is the caller's to prevent, through its minimum width).

use crate::style::{self, LABEL, LEADING, SWATCH};
use crate::svg::El;
use crate::text::width;

/// How a legend entry shows its series.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    /// A short line in the series' colour and dash.
    Line,
    /// A filled box in the series' colour.
    Box,
}

/// One legend entry.
pub(crate) struct LegendEntry {
    /// The series key (colour, class).
    pub key: usize,
    /// The series name.
    pub name: String,
}

/// Space between two entries of a row.
const GAP: f64 = 18.0;

/// The width of entry `e`.
pub(crate) fn entry_width(e: &LegendEntry) -> f64 {
    SWATCH + 6.0 + width(&e.name, LABEL, false)
}

/// The rows of `entries` between x `left` and `limit`: per row, (entry
/// index, x of its swatch).
pub(crate) fn legend_rows(
    entries: &[LegendEntry],
    left: f64,
    limit: f64,
) -> Vec<Vec<(usize, f64)>> {
    let mut rows: Vec<Vec<(usize, f64)>> = Vec::new();
    let mut x = left;
    for (i, e) in entries.iter().enumerate() {
        let w = entry_width(e);
        match rows.last_mut() {
            Some(row) if x + w <= limit => row.push((i, x)),
            _ => {
                x = left;
                rows.push(vec![(i, x)]);
            }
        }
        x += w + GAP;
    }
    rows
}

/// The height of `rows`.
pub(crate) fn rows_height(rows: &[Vec<(usize, f64)>]) -> f64 {
    rows.len() as f64 * LABEL * LEADING
}

/// Draws `rows` of `entries` from y `top` down.
pub(crate) fn draw_legend(
    out: &mut String,
    entries: &[LegendEntry],
    swatch: Swatch,
    rows: &[Vec<(usize, f64)>],
    top: f64,
) {
    out.push_str(r#"<g class="legend">"#);
    for (r, row) in rows.iter().enumerate() {
        let y = top + r as f64 * LABEL * LEADING;
        for &(i, x) in row {
            let Some(e) = entries.get(i) else {
                continue;
            };
            El::new(out, "g")
                .attr("class", "legend-entry")
                .attr("data-key", e.key)
                .open();
            match swatch {
                Swatch::Line => {
                    let mut el = El::new(out, "line")
                        .attr("class", "swatch")
                        .at("x1", x)
                        .at("y1", y + LABEL * 0.5)
                        .at("x2", x + SWATCH)
                        .at("y2", y + LABEL * 0.5)
                        .attr("stroke", style::color(e.key))
                        .attr("stroke-width", 2);
                    if !style::dash(e.key).is_empty() {
                        el = el.attr("stroke-dasharray", style::dash(e.key));
                    }
                    el.close();
                }
                Swatch::Box => El::new(out, "rect")
                    .attr("class", "swatch")
                    .at("x", x)
                    .at("y", y + 1.0)
                    .at("width", SWATCH)
                    .at("height", LABEL - 2.0)
                    .attr("fill", style::color(e.key))
                    .close(),
            }
            El::new(out, "text")
                .attr("class", "legend-label")
                .at("x", x + SWATCH + 6.0)
                .at("y", y + LABEL * 0.9)
                .at("font-size", LABEL)
                .text("text", &e.name);
            out.push_str("</g>");
        }
    }
    out.push_str("</g>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_wrap_only_when_they_do_not_fit() {
        let e = |k: usize, n: &str| LegendEntry {
            key: k,
            name: n.to_string(),
        };
        let entries = vec![e(0, "shale: a.json"), e(1, "rocksdb: b.json"), e(2, "x")];
        let one = legend_rows(&entries, 10.0, 10_000.0);
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].len(), 3);
        let narrow = legend_rows(&entries, 10.0, 10.0 + entry_width(&entries[0]) + 1.0);
        assert_eq!(narrow.len(), 3);
        assert!(narrow.iter().all(|r| r.len() == 1 && r[0].1 == 10.0));
        assert!(rows_height(&narrow) > rows_height(&one));
    }
}
