//! Writing SVG elements into a string: XML escaping of text and attribute
//! values, and coordinates with at most one decimal.
//!
//! Invariant: everything appended through [`El`] is well-formed XML (names
//! are the crate's own constants; every value and text is escaped, and
//! characters XML 1.0 forbids are replaced by U+FFFD).

use std::fmt::Write as _;

/// Escapes `s` for XML text and attribute values (both quotes included).
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// `v` with at most one decimal, without a trailing `.0` (and never `-0`).
pub(crate) fn num(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    let r = if r == 0.0 { 0.0 } else { r };
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// A start tag being written: `El::new(out, "rect").attr(..).close()`.
pub(crate) struct El<'a> {
    out: &'a mut String,
}

impl<'a> El<'a> {
    /// Starts `<name`.
    pub(crate) fn new(out: &'a mut String, name: &str) -> El<'a> {
        out.push('<');
        out.push_str(name);
        El { out }
    }

    /// Adds `name="value"` (escaped).
    pub(crate) fn attr(self, name: &str, value: impl std::fmt::Display) -> El<'a> {
        let v = escape(&value.to_string());
        let _ = write!(self.out, " {name}=\"{v}\"");
        self
    }

    /// Adds a coordinate or length attribute.
    pub(crate) fn at(self, name: &str, v: f64) -> El<'a> {
        let v = num(v);
        self.attr(name, v)
    }

    /// Ends the element empty: `/>`.
    pub(crate) fn close(self) {
        self.out.push_str("/>");
    }

    /// Ends the start tag, writes `text` (escaped) and the end tag.
    pub(crate) fn text(self, name: &str, text: &str) {
        let _ = write!(self.out, ">{}</{name}>", escape(text));
    }

    /// Ends the start tag: children follow; the caller writes `</name>`.
    pub(crate) fn open(self) {
        self.out.push('>');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_forbidden_characters() {
        assert_eq!(
            escape("a<b>&\"c'\u{1}\n"),
            "a&lt;b&gt;&amp;&quot;c&apos;\u{FFFD}\n"
        );
        let mut s = String::new();
        El::new(&mut s, "text")
            .attr("class", "x\"y")
            .at("x", 1.04)
            .text("text", "<t>");
        assert_eq!(s, r#"<text class="x&quot;y" x="1">&lt;t&gt;</text>"#);
    }

    #[test]
    fn numbers_have_one_decimal_at_most() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.34), "12.3");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(99.96), "100");
    }
}
