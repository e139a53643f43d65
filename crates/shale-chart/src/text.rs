//! Text measurement without fonts: the advance widths of DejaVu Sans (the
//! widest of the usual sans-serif fonts, the one Linux viewers fall back
//! to) for printable ASCII, one em for anything else, plus a margin. An
//! estimate from above: Arial, Helvetica and Liberation Sans are narrower,
//! so text laid out with it fits in any of them.
//!
//! Also word wrapping to a width, for titles. Pure functions.

/// Advance widths of ASCII 32..=126 in DejaVu Sans, units of 1/2048 em.
const ADVANCE: [u16; 95] = [
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651,
    690, // ' '../
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, // 0..9
    690, 690, 1716, 1716, 1716, 1087, 2048, // :..@
    1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, // A..M
    1532, 1612, 1235, 1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, // N..Z
    799, 690, 799, 1716, 1024, 1024, // [..`
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, // a..m
    1298, 1253, 1300, 1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, // n..z
    1303, 690, 1303, 1716, // {..~
];

/// Bold faces are about this much wider.
const BOLD: f64 = 1.1;
/// Safety margin over the table (hinting, kerning, a slightly wider font).
const MARGIN: f64 = 1.05;

fn em(c: char) -> f64 {
    let i = c as usize;
    match i.checked_sub(32).and_then(|k| ADVANCE.get(k)) {
        Some(&w) => f64::from(w) / 2048.0,
        None => match c {
            'µ' | '·' => 0.64,
            _ => 1.0,
        },
    }
}

/// Estimated width in pixels of `s` at `font_size` pixels (regular face),
/// never less than the width a sans-serif viewer draws.
pub fn text_width(s: &str, font_size: f64) -> f64 {
    s.chars().map(em).sum::<f64>() * font_size * MARGIN
}

/// [`text_width`], for the bold face when `bold`.
pub(crate) fn width(s: &str, font_size: f64, bold: bool) -> f64 {
    text_width(s, font_size) * if bold { BOLD } else { 1.0 }
}

/// `s` broken into lines no wider than `max` (words kept whole where they
/// fit; a word wider than `max` alone is cut between characters). Always at
/// least one line.
pub(crate) fn wrap(s: &str, font_size: f64, bold: bool, max: f64) -> Vec<String> {
    let fits = |t: &str| width(t, font_size, bold) <= max;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split_whitespace() {
        let joined = if cur.is_empty() {
            word.to_string()
        } else {
            format!("{cur} {word}")
        };
        if fits(&joined) {
            cur = joined;
            continue;
        }
        if !cur.is_empty() {
            lines.push(std::mem::take(&mut cur));
        }
        // The word alone, cut where it must be.
        for c in word.chars() {
            let mut next = cur.clone();
            next.push(c);
            if !cur.is_empty() && !fits(&next) {
                lines.push(std::mem::take(&mut cur));
                next = c.to_string();
            }
            cur = next;
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_table() {
        // "0" is 1303/2048 em.
        let w = text_width("0", 10.0);
        assert!((w - 1303.0 / 2048.0 * 10.0 * MARGIN).abs() < 1e-9);
        assert!(text_width("WWW", 12.0) > text_width("iii", 12.0) * 3.0);
        assert!(width("abc", 12.0, true) > text_width("abc", 12.0));
        assert_eq!(text_width("", 12.0), 0.0);
        // Anything outside ASCII counts one em.
        assert!((text_width("日", 10.0) - 10.0 * MARGIN).abs() < 1e-9);
    }

    #[test]
    fn wrap_keeps_words_and_cuts_only_long_ones() {
        let lines = wrap("readrandom throughput over time", 12.0, false, 120.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.join(" "), "readrandom throughput over time");
        for l in &lines {
            assert!(text_width(l, 12.0) <= 120.0, "{l}");
        }
        let long = "x".repeat(100);
        let cut = wrap(&long, 12.0, true, 100.0);
        assert!(cut.len() > 1);
        assert_eq!(cut.concat(), long);
        assert!(cut.iter().all(|l| width(l, 12.0, true) <= 100.0));
        assert_eq!(wrap("", 12.0, false, 10.0), vec![String::new()]);
    }
}
