//! shale-chart: the SVG pictures of Shale's tools. A [`Figure`] is a title
//! and panels stacked top to bottom in one SVG; a panel is a [`LineChart`]
//! (series over a numeric x axis), a [`BarChart`] (grouped bars per
//! category) or a [`LevelChart`] (one row per LSM level, L0 on top).
//!
//! Every chart has axes with ticks at round numbers and labelled values, axis
//! titles naming the quantity and its unit, a legend naming each series, and
//! a title that is wrapped, never clipped: the figure grows to fit its
//! widest text. Text is measured with built-in advance widths
//! ([`text_width`], DejaVu Sans, the widest of the usual sans-serif fonts),
//! so layout needs no font on the machine; the SVG names the font and the
//! viewer draws it.
//!
//! Why hand-written SVG and not `plotters`: the output is a format other
//! tools and tests read. Each line series is exactly one `<path>` with the
//! stable class `series series-<key>` and id `panel-<p>-series-<key>`
//! (the same key, hence colour, for the same run in every panel), each tick
//! carries its value (`data-value`), no element is transformed, and all
//! text is XML-escaped. The `verify` module (feature `verify`, for tests)
//! parses a figure back and maps the paths to data coordinates through the
//! tick positions.
//!
//! Rendering is a pure function of the data: the same input gives the same
//! bytes. Non-finite values are skipped.

#![warn(missing_docs)]

mod bar;
mod figure;
mod frame;
mod legend;
mod level;
mod line;
mod style;
mod svg;
mod text;
mod ticks;
#[cfg(feature = "verify")]
pub mod verify;

pub use bar::{BarChart, BarSeries};
pub use figure::{Figure, Panel};
pub use level::{LevelChart, LevelRow};
pub use line::{LineChart, Series};
pub use text::text_width;
pub use ticks::{format_bytes, Axis, NumberFormat};
