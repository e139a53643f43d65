//! [`Figure`]: one SVG document holding a title, notes and panels stacked
//! top to bottom, each panel a `<g class="panel <kind>" id="panel-<i>">`
//! with its own title, separated by a rule.
//!
//! Invariants: the document's `viewBox` is `0 0 width height` and every
//! text of the figure lies inside it: the width is the default or the
//! widest panel's minimum, whichever is larger, and titles wrap to it.

use crate::bar::BarChart;
use crate::level::LevelChart;
use crate::line::LineChart;
use crate::style::{self, FIGURE_TITLE, LEADING, PAD, SMALL};
use crate::svg::{escape, num, El};
use crate::text::{width, wrap};

/// One panel of a figure.
#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    /// Lines over a numeric x axis.
    Line(LineChart),
    /// Grouped bars.
    Bar(BarChart),
    /// The shape of an LSM tree.
    Levels(LevelChart),
}

impl From<LineChart> for Panel {
    fn from(c: LineChart) -> Panel {
        Panel::Line(c)
    }
}

impl From<BarChart> for Panel {
    fn from(c: BarChart) -> Panel {
        Panel::Bar(c)
    }
}

impl From<LevelChart> for Panel {
    fn from(c: LevelChart) -> Panel {
        Panel::Levels(c)
    }
}

impl Panel {
    fn kind(&self) -> &'static str {
        match self {
            Panel::Line(_) => "line-chart",
            Panel::Bar(_) => "bar-chart",
            Panel::Levels(_) => "level-chart",
        }
    }

    fn title(&self) -> &str {
        match self {
            Panel::Line(c) => &c.title,
            Panel::Bar(c) => &c.title,
            Panel::Levels(c) => &c.title,
        }
    }

    fn min_width(&self) -> f64 {
        match self {
            Panel::Line(c) => c.frame().min_width(),
            Panel::Bar(c) => c.frame().min_width(),
            Panel::Levels(c) => c.min_width(),
        }
    }

    fn draw(&self, i: usize, y0: f64, w: f64, out: &mut String) -> f64 {
        match self {
            Panel::Line(c) => c.draw(i, 0.0, y0, w, out),
            Panel::Bar(c) => c.draw(i, 0.0, y0, w, out),
            Panel::Levels(c) => c.draw(i, 0.0, y0, w, out),
        }
    }
}

/// A figure: a title, notes and panels.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// The figure's title (also its SVG `<title>`).
    pub title: String,
    /// Lines of small print under the title.
    pub notes: Vec<String>,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

impl Figure {
    /// An empty figure.
    pub fn new(title: impl Into<String>) -> Figure {
        Figure {
            title: title.into(),
            notes: Vec::new(),
            panels: Vec::new(),
        }
    }

    /// Adds a line of small print under the title.
    pub fn note(&mut self, text: impl Into<String>) {
        self.notes.push(text.into());
    }

    /// Adds a panel at the bottom.
    pub fn push(&mut self, panel: impl Into<Panel>) {
        self.panels.push(panel.into());
    }

    /// The figure's width: the default, or more if a panel or a note needs it.
    fn width(&self) -> f64 {
        let notes = self
            .notes
            .iter()
            .map(|n| width(n, SMALL, false) + 2.0 * PAD)
            .fold(0.0, f64::max);
        self.panels
            .iter()
            .map(Panel::min_width)
            .fold(style::DEFAULT_WIDTH.max(notes), f64::max)
            .ceil()
    }

    /// The SVG document.
    pub fn to_svg(&self) -> String {
        let w = self.width();
        let mut body = String::new();
        let mut y = PAD;
        for line in wrap(&self.title, FIGURE_TITLE, true, w - 2.0 * PAD) {
            El::new(&mut body, "text")
                .attr("class", "figure-title")
                .at("x", PAD)
                .at("y", y + FIGURE_TITLE)
                .at("font-size", FIGURE_TITLE)
                .attr("font-weight", "bold")
                .text("text", &line);
            y += FIGURE_TITLE * LEADING;
        }
        for n in &self.notes {
            El::new(&mut body, "text")
                .attr("class", "note")
                .at("x", PAD)
                .at("y", y + SMALL + 2.0)
                .at("font-size", SMALL)
                .attr("fill", style::MUTED)
                .text("text", n);
            y += SMALL * LEADING + 2.0;
        }
        y += 4.0;
        for (i, p) in self.panels.iter().enumerate() {
            El::new(&mut body, "line")
                .attr("class", "separator")
                .at("x1", PAD)
                .at("y1", y)
                .at("x2", w - PAD)
                .at("y2", y)
                .attr("stroke", style::GRID)
                .close();
            El::new(&mut body, "g")
                .attr("class", format!("panel {}", p.kind()))
                .attr("id", format!("panel-{i}"))
                .attr("data-title", p.title())
                .open();
            y += p.draw(i, y, w, &mut body);
            body.push_str("</g>");
        }
        let h = y.ceil();
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
             font-family=\"{font}\" font-size=\"12\" fill=\"{ink}\">\n<title>{title}</title>\n\
             <rect class=\"background\" x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n{body}\n</svg>\n",
            w = num(w),
            h = num(h),
            font = style::FONT_FAMILY,
            ink = style::INK,
            title = escape(&self.title),
        )
    }
}
