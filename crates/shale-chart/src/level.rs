//! [`LevelChart`]: the shape of one LSM tree. One row per level in the
//! order given (callers pass L0 first, so L0 is on top): the level's name,
//! a bar centred on a common axis whose width is the level's bytes (to
//! scale: the largest level fills the width, so the rows make the
//! pyramid), and its figures in words: files, bytes in binary units,
//! compaction score, and files being compacted. A bar whose level scores 1
//! or more (it asks for a compaction) is drawn in the alert colour; the
//! legend says so.
//!
//! Each row is a `<g class="level">` carrying its figures as `data-`
//! attributes. Invariant: a level with bytes has a bar at least 2 px wide;
//! an empty level has none.

use crate::legend::{draw_legend, entry_width, legend_rows, rows_height, LegendEntry, Swatch};
use crate::style::{self, LABEL, LEADING, PAD, SMALL};
use crate::svg::El;
use crate::text::{width, wrap};
use crate::ticks::format_bytes;

/// One level of an LSM tree.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelRow {
    /// Its name (`L0`).
    pub label: String,
    /// Table files.
    pub files: u64,
    /// Files an ongoing compaction reads.
    pub compacting: u64,
    /// Bytes of the files.
    pub bytes: u64,
    /// Compaction score (≥ 1 asks for a compaction).
    pub score: f64,
}

/// One LSM tree (one column family).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelChart {
    /// Panel title.
    pub title: String,
    /// A line under the title (totals, say); may be empty.
    pub note: String,
    /// Levels, top row first.
    pub rows: Vec<LevelRow>,
}

/// Height of a row.
const ROW: f64 = 26.0;
/// Width of the bar area.
const BARS: f64 = 320.0;
/// Legend keys: the colours of calm and alert bars.
const CALM: usize = 0;
const ALERT: usize = 1;

impl LevelRow {
    /// The figures in words: `3 files · 1.5 MiB · score 0.75`.
    pub fn details(&self) -> String {
        let files = if self.files == 1 { "file" } else { "files" };
        let mut s = format!(
            "{} {files} · {} · score {:.2}",
            self.files,
            format_bytes(self.bytes),
            self.score
        );
        if self.compacting > 0 {
            s.push_str(&format!(" · {} compacting", self.compacting));
        }
        s
    }
}

impl LevelChart {
    fn legend(&self) -> Vec<LegendEntry> {
        vec![
            LegendEntry {
                key: CALM,
                name: "score < 1".into(),
            },
            LegendEntry {
                key: ALERT,
                name: "score ≥ 1: the level asks for a compaction".into(),
            },
        ]
    }

    fn label_width(&self) -> f64 {
        self.rows
            .iter()
            .map(|r| width(&r.label, LABEL, true))
            .fold(0.0, f64::max)
            + 12.0
    }

    /// The narrowest panel that holds every text but the (wrapped) title.
    pub(crate) fn min_width(&self) -> f64 {
        let details = self
            .rows
            .iter()
            .map(|r| width(&r.details(), LABEL, false))
            .fold(0.0, f64::max);
        let legend = self.legend().iter().map(entry_width).fold(0.0, f64::max);
        let rows = PAD + self.label_width() + BARS + 12.0 + details + PAD;
        rows.max(2.0 * PAD + legend)
            .max(2.0 * PAD + width(&self.note, SMALL, false))
    }

    /// Draws the chart as panel `panel` at (x0, y0), `w` wide; returns its
    /// height.
    pub(crate) fn draw(&self, _panel: usize, x0: f64, y0: f64, w: f64, out: &mut String) -> f64 {
        let mut y = y0 + PAD;
        for line in wrap(&self.title, style::TITLE, true, w - 2.0 * PAD) {
            El::new(out, "text")
                .attr("class", "chart-title")
                .at("x", x0 + PAD)
                .at("y", y + style::TITLE)
                .at("font-size", style::TITLE)
                .attr("font-weight", "bold")
                .text("text", &line);
            y += style::TITLE * LEADING;
        }
        if !self.note.is_empty() {
            El::new(out, "text")
                .attr("class", "note")
                .at("x", x0 + PAD)
                .at("y", y + SMALL + 2.0)
                .at("font-size", SMALL)
                .attr("fill", style::MUTED)
                .text("text", &self.note);
            y += SMALL * LEADING + 2.0;
        }
        y += 8.0;
        let largest = self.rows.iter().map(|r| r.bytes).max().unwrap_or(0).max(1);
        let bars_left = x0 + PAD + self.label_width();
        let centre = bars_left + BARS / 2.0;
        // The common axis the bars are centred on.
        El::new(out, "line")
            .attr("class", "level-axis")
            .at("x1", centre)
            .at("y1", y)
            .at("x2", centre)
            .at("y2", y + ROW * self.rows.len() as f64)
            .attr("stroke", style::GRID)
            .close();
        for r in &self.rows {
            El::new(out, "g")
                .attr("class", "level")
                .attr("data-label", &r.label)
                .attr("data-files", r.files)
                .attr("data-bytes", r.bytes)
                .attr("data-score", r.score)
                .attr("data-compacting", r.compacting)
                .open();
            let baseline = y + ROW / 2.0 + LABEL * 0.35;
            El::new(out, "text")
                .attr("class", "level-label")
                .at("x", x0 + PAD)
                .at("y", baseline)
                .at("font-size", LABEL)
                .attr("font-weight", "bold")
                .text("text", &r.label);
            if r.bytes > 0 {
                let bw = (r.bytes as f64 / largest as f64 * BARS).max(2.0);
                let key = if r.score >= 1.0 { ALERT } else { CALM };
                El::new(out, "rect")
                    .attr("class", "level-bar")
                    .at("x", centre - bw / 2.0)
                    .at("y", y + 3.0)
                    .at("width", bw)
                    .at("height", ROW - 6.0)
                    .attr("fill", style::color(key))
                    .close();
            }
            El::new(out, "text")
                .attr("class", "level-details")
                .at("x", bars_left + BARS + 12.0)
                .at("y", baseline)
                .at("font-size", LABEL)
                .text("text", &r.details());
            out.push_str("</g>");
            y += ROW;
        }
        y += 10.0;
        let entries = self.legend();
        let rows = legend_rows(&entries, x0 + PAD, x0 + w - PAD);
        draw_legend(out, &entries, Swatch::Box, &rows, y);
        y += rows_height(&rows);
        y + PAD - y0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_name_files_bytes_score_and_compactions() {
        let mut r = LevelRow {
            label: "L1".into(),
            files: 1,
            compacting: 0,
            bytes: 3 << 20,
            score: 1.234,
        };
        assert_eq!(r.details(), "1 file · 3.0 MiB · score 1.23");
        r.files = 4;
        r.compacting = 2;
        assert_eq!(r.details(), "4 files · 3.0 MiB · score 1.23 · 2 compacting");
    }
}
