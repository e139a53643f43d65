//! Reading a figure back, for tests (feature `verify`): parses the SVG as
//! XML (so a malformed document fails here), then collects per panel its
//! title, axes (title, ticks with value, label and pixel position), legend
//! entries, line series with their points mapped back to data coordinates
//! through the tick positions, bars, and level rows; and every text with
//! its estimated box, to check that none leaves the `viewBox`.
//!
//! Mapping the paths through the ticks, not through `data-` attributes,
//! checks the drawing itself: a point drawn at the wrong height reads back
//! as the wrong value.

use roxmltree::{Document, Node};

use crate::text::text_width;

/// A parsed figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// From the `viewBox`.
    pub width: f64,
    /// From the `viewBox`.
    pub height: f64,
    /// The figure title (its lines joined by spaces).
    pub title: String,
    /// The notes under the title.
    pub notes: Vec<String>,
    /// The panels, top to bottom.
    pub panels: Vec<ParsedPanel>,
    /// Every text of the document.
    pub texts: Vec<TextBox>,
}

/// A text and its estimated box.
#[derive(Debug, Clone, PartialEq)]
pub struct TextBox {
    /// The text.
    pub text: String,
    /// Its `class`.
    pub class: String,
    /// Left edge.
    pub left: f64,
    /// Right edge.
    pub right: f64,
    /// Top of the ascenders.
    pub top: f64,
    /// Bottom of the descenders.
    pub bottom: f64,
}

/// One panel.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedPanel {
    /// `panel-<i>`.
    pub id: String,
    /// `line-chart`, `bar-chart` or `level-chart`.
    pub kind: String,
    /// Its title (lines joined by spaces).
    pub title: String,
    /// Its note, if any.
    pub note: Option<String>,
    /// The x axis (line and bar charts).
    pub x_axis: Option<ParsedAxis>,
    /// The y axis (line and bar charts).
    pub y_axis: Option<ParsedAxis>,
    /// Legend entries: (key, label).
    pub legend: Vec<(usize, String)>,
    /// Line series, one per `<path class="series ...">`.
    pub lines: Vec<ParsedLine>,
    /// Bars.
    pub bars: Vec<ParsedBar>,
    /// Level rows, top to bottom.
    pub levels: Vec<ParsedLevel>,
}

/// One axis.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedAxis {
    /// Its title.
    pub title: String,
    /// Its ticks, in document order.
    pub ticks: Vec<ParsedTick>,
}

/// One tick.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTick {
    /// `data-value` (numeric axes).
    pub value: Option<f64>,
    /// `data-category` (category axes).
    pub category: Option<String>,
    /// The label as printed.
    pub label: String,
    /// Pixel position along the axis (x for the x axis, y for the y axis).
    pub pos: f64,
}

/// One line series.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLine {
    /// The key from its class `series-<key>`.
    pub key: usize,
    /// Its `id`.
    pub id: String,
    /// Its `data-name`.
    pub name: String,
    /// Its points in data coordinates (through the axes' ticks).
    pub points: Vec<(f64, f64)>,
}

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedBar {
    /// The series key.
    pub key: usize,
    /// The series name.
    pub name: String,
    /// Its category.
    pub category: String,
    /// `data-value`.
    pub value: f64,
    /// The value its height shows, through the y ticks.
    pub drawn: f64,
}

/// One level row.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLevel {
    /// `L0`...
    pub label: String,
    /// Files.
    pub files: u64,
    /// Bytes.
    pub bytes: u64,
    /// Score.
    pub score: f64,
    /// The printed details.
    pub details: String,
    /// Width of its bar (None: no bar).
    pub bar_width: Option<f64>,
    /// y of its label's baseline.
    pub y: f64,
}

fn class_has(n: Node<'_, '_>, c: &str) -> bool {
    n.attribute("class")
        .is_some_and(|v| v.split_whitespace().any(|x| x == c))
}

fn f(n: Node<'_, '_>, a: &str) -> Result<f64, String> {
    n.attribute(a)
        .ok_or_else(|| format!("<{}> without {a}", n.tag_name().name()))?
        .parse()
        .map_err(|e| format!("<{}> {a}: {e}", n.tag_name().name()))
}

fn text_of(n: Node<'_, '_>) -> String {
    n.descendants()
        .filter(|d| d.is_text())
        .filter_map(|d| d.text())
        .collect()
}

fn texts_with(n: Node<'_, '_>, class: &str) -> Vec<String> {
    n.descendants()
        .filter(|d| d.has_tag_name("text") && class_has(*d, class))
        .map(text_of)
        .collect()
}

/// The linear map from pixel to value given by the first and last ticks.
fn mapping(ticks: &[ParsedTick]) -> Result<impl Fn(f64) -> f64, String> {
    let with: Vec<(f64, f64)> = ticks
        .iter()
        .filter_map(|t| t.value.map(|v| (t.pos, v)))
        .collect();
    let (Some(&(p0, v0)), Some(&(p1, v1))) = (with.first(), with.last()) else {
        return Err("an axis without two numeric ticks".into());
    };
    if p0 == p1 {
        return Err("an axis whose ticks share one position".into());
    }
    Ok(move |p: f64| v0 + (p - p0) / (p1 - p0) * (v1 - v0))
}

fn axis(n: Node<'_, '_>, horizontal: bool) -> Result<ParsedAxis, String> {
    let mut a = ParsedAxis {
        title: texts_with(n, "axis-title").join(" "),
        ticks: Vec::new(),
    };
    for t in n.children().filter(|c| class_has(*c, "tick")) {
        let label_node = t
            .children()
            .find(|c| c.has_tag_name("text"))
            .ok_or("a tick without a label")?;
        let pos = match t.children().find(|c| c.has_tag_name("line")) {
            Some(l) if horizontal => f(l, "x1")?,
            Some(l) => f(l, "y1")?,
            None => f(label_node, "x")?,
        };
        let value = match t.attribute("data-value") {
            Some(v) => Some(v.parse::<f64>().map_err(|e| format!("data-value: {e}"))?),
            None => None,
        };
        a.ticks.push(ParsedTick {
            value,
            category: t.attribute("data-category").map(String::from),
            label: text_of(label_node),
            pos,
        });
    }
    Ok(a)
}

fn series_key(n: Node<'_, '_>) -> Result<usize, String> {
    n.attribute("class")
        .unwrap_or_default()
        .split_whitespace()
        .find_map(|c| c.strip_prefix("series-"))
        .ok_or("a series without a series-<key> class")?
        .parse()
        .map_err(|e| format!("series key: {e}"))
}

fn path_points(d: &str) -> Result<Vec<(f64, f64)>, String> {
    d.split_whitespace()
        .map(|tok| {
            let xy = tok
                .strip_prefix('M')
                .or_else(|| tok.strip_prefix('L'))
                .ok_or_else(|| format!("path token {tok}"))?;
            let (x, y) = xy
                .split_once(',')
                .ok_or_else(|| format!("path token {tok}"))?;
            let p = |s: &str| s.parse::<f64>().map_err(|e| format!("path {tok}: {e}"));
            Ok((p(x)?, p(y)?))
        })
        .collect()
}

fn panel(n: Node<'_, '_>) -> Result<ParsedPanel, String> {
    let kind = n
        .attribute("class")
        .unwrap_or_default()
        .split_whitespace()
        .find(|c| *c != "panel")
        .unwrap_or_default()
        .to_string();
    let mut p = ParsedPanel {
        id: n.attribute("id").unwrap_or_default().to_string(),
        kind,
        title: texts_with(n, "chart-title").join(" "),
        note: texts_with(n, "note").into_iter().next(),
        ..ParsedPanel::default()
    };
    for g in n.descendants().filter(|d| d.has_tag_name("g")) {
        if class_has(g, "x-axis") {
            p.x_axis = Some(axis(g, true)?);
        } else if class_has(g, "y-axis") {
            p.y_axis = Some(axis(g, false)?);
        } else if class_has(g, "legend-entry") {
            let key = g
                .attribute("data-key")
                .ok_or("a legend entry without data-key")?
                .parse()
                .map_err(|e| format!("legend key: {e}"))?;
            p.legend
                .push((key, texts_with(g, "legend-label").join(" ")));
        }
    }
    let (xmap, ymap) = match (&p.x_axis, &p.y_axis) {
        (Some(x), Some(y)) => (
            mapping(&x.ticks)
                .ok()
                .map(|m| Box::new(m) as Box<dyn Fn(f64) -> f64>),
            Some(mapping(&y.ticks)?),
        ),
        _ => (None, None),
    };
    for path in n
        .descendants()
        .filter(|d| d.has_tag_name("path") && class_has(*d, "series"))
    {
        let (Some(xm), Some(ym)) = (&xmap, &ymap) else {
            return Err("a series outside a chart with axes".into());
        };
        let points = path_points(path.attribute("d").unwrap_or_default())?
            .into_iter()
            .map(|(x, y)| (xm(x), ym(y)))
            .collect();
        p.lines.push(ParsedLine {
            key: series_key(path)?,
            id: path.attribute("id").unwrap_or_default().to_string(),
            name: path.attribute("data-name").unwrap_or_default().to_string(),
            points,
        });
    }
    for r in n
        .descendants()
        .filter(|d| d.has_tag_name("rect") && class_has(*d, "bar"))
    {
        let Some(ym) = &ymap else {
            return Err("a bar outside a chart with axes".into());
        };
        let (top, bottom) = (ym(f(r, "y")?), ym(f(r, "y")? + f(r, "height")?));
        p.bars.push(ParsedBar {
            key: series_key(r)?,
            name: r.attribute("data-name").unwrap_or_default().to_string(),
            category: r.attribute("data-category").unwrap_or_default().to_string(),
            value: f(r, "data-value")?,
            drawn: if top.abs() >= bottom.abs() {
                top
            } else {
                bottom
            },
        });
    }
    for g in n
        .descendants()
        .filter(|d| d.has_tag_name("g") && class_has(*d, "level"))
    {
        let label = g
            .children()
            .find(|c| class_has(*c, "level-label"))
            .ok_or("a level without a label")?;
        p.levels.push(ParsedLevel {
            label: g.attribute("data-label").unwrap_or_default().to_string(),
            files: f(g, "data-files")? as u64,
            bytes: f(g, "data-bytes")? as u64,
            score: f(g, "data-score")?,
            details: texts_with(g, "level-details").join(" "),
            bar_width: match g.children().find(|c| class_has(*c, "level-bar")) {
                Some(b) => Some(f(b, "width")?),
                None => None,
            },
            y: f(label, "y")?,
        });
    }
    Ok(p)
}

fn text_box(n: Node<'_, '_>) -> Result<TextBox, String> {
    let text = text_of(n);
    let size = match n.attribute("font-size") {
        Some(_) => f(n, "font-size")?,
        None => 12.0,
    };
    let bold = n.attribute("font-weight") == Some("bold");
    let w = text_width(&text, size) * if bold { 1.1 } else { 1.0 };
    let (x, y) = (f(n, "x")?, f(n, "y")?);
    let left = match n.attribute("text-anchor") {
        Some("middle") => x - w / 2.0,
        Some("end") => x - w,
        _ => x,
    };
    Ok(TextBox {
        text,
        class: n.attribute("class").unwrap_or_default().to_string(),
        left,
        right: left + w,
        top: y - size * 0.93,
        bottom: y + size * 0.24,
    })
}

/// Parses a figure made by [`crate::Figure::to_svg`].
pub fn parse(svg: &str) -> Result<Parsed, String> {
    let doc = Document::parse(svg).map_err(|e| format!("not well-formed XML: {e}"))?;
    let root = doc.root_element();
    if !root.has_tag_name("svg") {
        return Err(format!("root element <{}>", root.tag_name().name()));
    }
    if n_transformed(root) > 0 {
        return Err("an element with a transform".into());
    }
    let vb: Vec<f64> = root
        .attribute("viewBox")
        .ok_or("no viewBox")?
        .split_whitespace()
        .map(|v| v.parse::<f64>().map_err(|e| format!("viewBox: {e}")))
        .collect::<Result<_, _>>()?;
    let [0.0, 0.0, width, height] = vb[..] else {
        return Err(format!("viewBox {vb:?}"));
    };
    let top: Vec<Node<'_, '_>> = root.children().filter(|c| c.is_element()).collect();
    Ok(Parsed {
        width,
        height,
        title: top
            .iter()
            .filter(|c| class_has(**c, "figure-title"))
            .map(|c| text_of(*c))
            .collect::<Vec<_>>()
            .join(" "),
        notes: top
            .iter()
            .filter(|c| class_has(**c, "note"))
            .map(|c| text_of(*c))
            .collect(),
        panels: top
            .iter()
            .filter(|c| class_has(**c, "panel"))
            .map(|c| panel(*c))
            .collect::<Result<_, _>>()?,
        texts: root
            .descendants()
            .filter(|d| d.has_tag_name("text"))
            .map(text_box)
            .collect::<Result<_, _>>()?,
    })
}

fn n_transformed(root: Node<'_, '_>) -> usize {
    root.descendants()
        .filter(|d| d.attribute("transform").is_some())
        .count()
}

impl Parsed {
    /// The texts whose box leaves the `viewBox`.
    pub fn texts_outside(&self) -> Vec<&TextBox> {
        self.texts
            .iter()
            .filter(|t| {
                t.left < 0.0 || t.top < 0.0 || t.right > self.width || t.bottom > self.height
            })
            .collect()
    }

    /// The panel whose title contains `s`.
    pub fn panel(&self, s: &str) -> Option<&ParsedPanel> {
        self.panels.iter().find(|p| p.title.contains(s))
    }
}

impl ParsedAxis {
    /// The value of the highest tick.
    pub fn max_tick(&self) -> Option<f64> {
        self.ticks
            .iter()
            .filter_map(|t| t.value)
            .fold(None, |m, v| Some(m.map_or(v, |m: f64| m.max(v))))
    }

    /// The distance between two neighbouring ticks (the first two).
    pub fn step(&self) -> Option<f64> {
        let v: Vec<f64> = self.ticks.iter().filter_map(|t| t.value).collect();
        Some(v.get(1)? - v.first()?)
    }
}
