//! The look shared by every chart: the series colours (Okabe–Ito, told
//! apart with colour-blindness), dash patterns once the colours run out,
//! font sizes and spacing. Constants only.

/// Series colours by key (key modulo the length).
const PALETTE: [&str; 7] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000",
];

/// Dash patterns by `key / PALETTE.len()` (solid first).
const DASHES: [&str; 4] = ["", "6 3", "2 2", "8 3 2 3"];

/// The colour of series `key`.
pub(crate) fn color(key: usize) -> &'static str {
    PALETTE[key % PALETTE.len()]
}

/// The dash pattern of series `key` (empty: solid).
pub(crate) fn dash(key: usize) -> &'static str {
    DASHES[(key / PALETTE.len()) % DASHES.len()]
}

/// The font stack named in the SVG; [`crate::text_width`] measures its
/// widest member, DejaVu Sans.
pub(crate) const FONT_FAMILY: &str = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";

/// Figure title (bold).
pub(crate) const FIGURE_TITLE: f64 = 16.0;
/// Panel titles (bold).
pub(crate) const TITLE: f64 = 14.0;
/// Axis titles, legend, level rows.
pub(crate) const LABEL: f64 = 12.0;
/// Tick labels and notes.
pub(crate) const SMALL: f64 = 11.0;
/// Line height over font size.
pub(crate) const LEADING: f64 = 1.35;

/// Space around a panel's content.
pub(crate) const PAD: f64 = 16.0;
/// Width of a figure unless its text needs more.
pub(crate) const DEFAULT_WIDTH: f64 = 760.0;
/// Height of a plot area.
pub(crate) const PLOT_HEIGHT: f64 = 220.0;
/// Narrowest plot area.
pub(crate) const MIN_PLOT_WIDTH: f64 = 320.0;
/// Length of a tick mark.
pub(crate) const TICK: f64 = 5.0;
/// Width of a legend swatch.
pub(crate) const SWATCH: f64 = 20.0;

/// Axis, tick and text colour.
pub(crate) const INK: &str = "#222222";
/// Grid lines.
pub(crate) const GRID: &str = "#e0e0e0";
/// Notes.
pub(crate) const MUTED: &str = "#555555";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_get_distinct_styles_for_a_long_while() {
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..PALETTE.len() * DASHES.len() {
            assert!(seen.insert((color(k), dash(k))), "key {k} repeats a style");
        }
    }
}
