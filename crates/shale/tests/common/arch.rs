//! A model of the engine's sources (crates/shale/src) for the architecture
//! tests `layering.rs` and `size.rs`, which include this file with
//! `#[path = "common/arch.rs"] mod arch;` (it is not part of `common/mod.rs`,
//! so the other integration tests do not compile it). Nothing here knows
//! today's file list: modules come from walking `src/`.
//!
//! - [`lex`]: a small Rust lexer (strings, raw strings, chars, lifetimes and
//!   nested comments never yield tokens, so brace matching is exact).
//! - [`test_spans`]: the items gated by a `cfg` that implies `test`
//!   (`#[cfg(test)]`, `#[cfg(all(test, ...))]`), and `#![cfg(test)]` files.
//! - [`Crate::load`]: every non-test file as a module tree with each module's
//!   `use` names, then every path reference (`crate::`, `super::`, `self::`,
//!   a child module's or a `use`d name's path; `use` trees with groups,
//!   `self` and `as`) resolved through re-exports ([`Crate::deps`]).
//!
//! Test code is skipped: files whose module path has a part named `tests`,
//! `*_tests`, `test_util` or `testing` (the test-support module behind the
//! `testing` feature), modules declared under a test `cfg`
//! (`#[cfg(test)] mod bench;`), and test-gated items inside files.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------- lexing

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Punct,
    Lit,
    Lifetime,
}

#[derive(Clone, Debug)]
pub struct Tok {
    pub kind: Kind,
    pub text: String,
    /// 1-based.
    pub line: usize,
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Tokens of `src`; comments are dropped, literals are one token each.
/// `::` is one token, `$crate` is an identifier, `r#type` is `type`.
pub fn lex(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let push = |out: &mut Vec<Tok>, kind, text: &str, line| {
        out.push(Tok {
            kind,
            text: text.to_string(),
            line,
        })
    };
    // Index just past a quoted literal opened at `i` (on the quote).
    let quoted = |i: usize, line: &mut usize| -> usize {
        let mut j = i + 1;
        while j < b.len() {
            match b[j] {
                b'\\' => {
                    j += 1;
                    if b.get(j) == Some(&b'\n') {
                        *line += 1;
                    }
                }
                b'"' => return j + 1,
                b'\n' => *line += 1,
                _ => {}
            }
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = src[i..].chars().next().unwrap();
        let start_line = line;
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += c.len_utf8(),
            '/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            '/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            line += 1;
                        }
                        i += 1;
                    }
                }
            }
            '"' => {
                let j = quoted(i, &mut line);
                push(&mut out, Kind::Lit, &src[i..j], start_line);
                i = j;
            }
            '\'' => {
                // A char literal ('x', '\n', '\u{..}', '\''), else a lifetime.
                let next = src[i + 1..].chars().next();
                let after = next.map(|n| i + 1 + n.len_utf8());
                if next == Some('\\') {
                    let mut j = i + 2;
                    while j < b.len() && b[j] != b'\'' {
                        j += 1;
                    }
                    // An escaped quote: '\''.
                    if j == i + 2 {
                        j += 1;
                        while j < b.len() && b[j] != b'\'' {
                            j += 1;
                        }
                    }
                    push(&mut out, Kind::Lit, &src[i..=j.min(b.len() - 1)], line);
                    i = j + 1;
                } else if after.is_some_and(|a| b.get(a) == Some(&b'\'')) {
                    let a = after.unwrap();
                    push(&mut out, Kind::Lit, &src[i..=a], line);
                    i = a + 1;
                } else {
                    let mut j = i + 1;
                    while j < b.len() && is_ident_char(src[j..].chars().next().unwrap()) {
                        j += src[j..].chars().next().unwrap().len_utf8();
                    }
                    push(&mut out, Kind::Lifetime, &src[i..j], line);
                    i = j;
                }
            }
            c if c.is_ascii_digit() => {
                let mut j = i;
                while j < b.len()
                    && (b[j].is_ascii_alphanumeric()
                        || b[j] == b'_'
                        || (b[j] == b'.' && b.get(j + 1).is_some_and(|d| d.is_ascii_digit())))
                {
                    j += 1;
                }
                push(&mut out, Kind::Lit, &src[i..j], line);
                i = j;
            }
            c if is_ident_char(c) => {
                // String prefixes: b"", c"", r"", r#""#, br"", cr"", b''.
                let rest = &b[i..];
                let raw_start = if rest.starts_with(b"br") || rest.starts_with(b"cr") {
                    Some(i + 2)
                } else if rest.starts_with(b"r") {
                    Some(i + 1)
                } else {
                    None
                };
                if let Some(mut j) = raw_start {
                    let mut hashes = 0;
                    while b.get(j) == Some(&b'#') {
                        hashes += 1;
                        j += 1;
                    }
                    if b.get(j) == Some(&b'"') {
                        let mut close = vec![b'"'];
                        close.extend(std::iter::repeat_n(b'#', hashes));
                        let mut k = j + 1;
                        while k < b.len() && !b[k..].starts_with(&close) {
                            if b[k] == b'\n' {
                                line += 1;
                            }
                            k += 1;
                        }
                        let end = (k + close.len()).min(b.len());
                        push(&mut out, Kind::Lit, &src[i..end], start_line);
                        i = end;
                        continue;
                    }
                    if hashes == 1 && raw_start == Some(i + 1) {
                        // A raw identifier: r#type.
                        let mut k = j;
                        while k < b.len() && is_ident_char(src[k..].chars().next().unwrap()) {
                            k += src[k..].chars().next().unwrap().len_utf8();
                        }
                        push(&mut out, Kind::Ident, &src[j..k], line);
                        i = k;
                        continue;
                    }
                }
                if (rest.starts_with(b"b\"") || rest.starts_with(b"c\"")) && rest.len() > 1 {
                    let j = quoted(i + 1, &mut line);
                    push(&mut out, Kind::Lit, &src[i..j], start_line);
                    i = j;
                    continue;
                }
                if rest.starts_with(b"b'") {
                    let mut j = i + 2;
                    if b.get(j) == Some(&b'\\') {
                        j += 2;
                    }
                    while j < b.len() && b[j] != b'\'' {
                        j += 1;
                    }
                    push(&mut out, Kind::Lit, &src[i..=j.min(b.len() - 1)], line);
                    i = j + 1;
                    continue;
                }
                let mut j = i;
                while j < b.len() && is_ident_char(src[j..].chars().next().unwrap()) {
                    j += src[j..].chars().next().unwrap().len_utf8();
                }
                push(&mut out, Kind::Ident, &src[i..j], line);
                i = j;
            }
            '$' if b[i + 1..].starts_with(b"crate") => {
                push(&mut out, Kind::Ident, "$crate", line);
                i += "$crate".len();
            }
            ':' if b.get(i + 1) == Some(&b':') => {
                push(&mut out, Kind::Punct, "::", line);
                i += 2;
            }
            c => {
                push(&mut out, Kind::Punct, &src[i..i + c.len_utf8()], line);
                i += c.len_utf8();
            }
        }
    }
    out
}

// ------------------------------------------------------------ test spans

/// Items gated by a `cfg` implying `test`, as token index ranges.
#[derive(Debug, Default)]
pub struct TestSpans {
    /// Per token: inside a test-gated item.
    pub test: Vec<bool>,
    /// Inclusive 1-based line ranges of the test-gated items, from their
    /// first attribute (or the `///` doc lines right above it) to their end.
    pub lines: Vec<(usize, usize)>,
    /// The file has `#![cfg(test)]`.
    pub whole_file: bool,
    /// Token indexes of `mod NAME;` declarations that are test-gated.
    pub gated_mods: Vec<usize>,
}

/// Whether cfg predicate tokens `p` (inside `cfg( ... )`) imply `test`.
fn implies_test(p: &[Tok]) -> bool {
    // Split a comma-separated list at depth 0.
    fn args(p: &[Tok]) -> Vec<&[Tok]> {
        let mut out = Vec::new();
        let (mut depth, mut start) = (0, 0);
        for (i, t) in p.iter().enumerate() {
            match t.text.as_str() {
                "(" => depth += 1,
                ")" => depth -= 1,
                "," if depth == 0 => {
                    out.push(&p[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < p.len() {
            out.push(&p[start..]);
        }
        out
    }
    match p {
        [t] => t.text == "test",
        [f, open, inner @ .., close] if open.text == "(" && close.text == ")" => {
            let list = args(inner);
            match f.text.as_str() {
                "all" => list.iter().any(|a| implies_test(a)),
                "any" => !list.is_empty() && list.iter().all(|a| implies_test(a)),
                _ => false,
            }
        }
        _ => false,
    }
}

/// Index of the `]` closing the attribute whose `[` is at `open`.
fn attr_end(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0;
    for (j, t) in toks.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "[" | "(" | "{" => depth += 1,
            "]" | ")" | "}" => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    toks.len() - 1
}

/// Whether attribute tokens `a` (between `[` and `]`) are a test `cfg`.
fn is_test_cfg(a: &[Tok]) -> bool {
    a.len() >= 3 && a[0].text == "cfg" && implies_test(&a[2..a.len() - 1])
}

fn skip_visibility(toks: &[Tok], mut i: usize) -> usize {
    if toks.get(i).is_some_and(|t| t.text == "pub") {
        i += 1;
        if toks.get(i).is_some_and(|t| t.text == "(") {
            while i < toks.len() && toks[i].text != ")" {
                i += 1;
            }
            i += 1;
        }
    }
    i
}

const ITEM_KEYWORDS: &[&str] = &[
    "fn",
    "impl",
    "struct",
    "enum",
    "union",
    "trait",
    "mod",
    "type",
    "const",
    "static",
    "use",
    "macro_rules",
    "extern",
    "unsafe",
    "async",
    "let",
];

/// Index of the last token of the item, field, arm or statement starting
/// at `s` (after its attributes).
fn item_end(toks: &[Tok], s: usize) -> usize {
    let k = skip_visibility(toks, s);
    let first = toks.get(k).map_or("", |t| t.text.as_str());
    let second = toks.get(k + 1).map_or("", |t| t.text.as_str());
    let keyword = ITEM_KEYWORDS.contains(&first);
    // Ended by `;` only: a block inside does not end them.
    let semi_only = matches!(first, "let" | "use" | "static" | "type")
        || (first == "const" && !matches!(second, "fn" | "unsafe" | "async" | "extern"));
    // A field `name: Type<A, B>,`: commas inside `<>` do not end it.
    let field = toks.get(k).is_some_and(|t| t.kind == Kind::Ident) && second == ":";
    let (mut depth, mut angle) = (0i32, 0i32);
    let mut j = s;
    while j < toks.len() {
        match toks[j].text.as_str() {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => {
                if depth == 0 {
                    return j.saturating_sub(1);
                }
                depth -= 1;
                if depth == 0 && toks[j].text == "}" && !semi_only {
                    return j;
                }
            }
            "<" if field => angle += 1,
            ">" if field && toks[j - 1].text != "-" => angle -= 1,
            ";" if depth == 0 => return j,
            "," if depth == 0 && angle <= 0 && !keyword => return j,
            _ => {}
        }
        j += 1;
    }
    toks.len() - 1
}

/// The test-gated parts of a file, given its text and tokens.
pub fn test_spans(text: &str, toks: &[Tok]) -> TestSpans {
    let lines: Vec<&str> = text.lines().collect();
    let mut spans = TestSpans {
        test: vec![false; toks.len()],
        ..TestSpans::default()
    };
    let mut i = 0;
    while i < toks.len() {
        if toks[i].text != "#" {
            i += 1;
            continue;
        }
        // Inner attribute: `#![cfg(test)]` gates the whole file.
        if toks.get(i + 1).is_some_and(|t| t.text == "!")
            && toks.get(i + 2).is_some_and(|t| t.text == "[")
        {
            let end = attr_end(toks, i + 2);
            if is_test_cfg(&toks[i + 3..end]) {
                spans.whole_file = true;
                spans.test.iter_mut().for_each(|t| *t = true);
                spans.lines.push((1, lines.len().max(1)));
                return spans;
            }
            i = end + 1;
            continue;
        }
        if toks.get(i + 1).is_none_or(|t| t.text != "[") {
            i += 1;
            continue;
        }
        // A run of outer attributes, then the item they apply to.
        let start = i;
        let mut gated = false;
        while toks.get(i).is_some_and(|t| t.text == "#")
            && toks.get(i + 1).is_some_and(|t| t.text == "[")
        {
            let end = attr_end(toks, i + 1);
            gated |= is_test_cfg(&toks[i + 2..end]);
            i = end + 1;
        }
        if !gated || i >= toks.len() {
            continue;
        }
        // Attributes right before a closing brace gate nothing more.
        let end = item_end(toks, i).max(i - 1);
        let k = skip_visibility(toks, i);
        if toks.get(k).is_some_and(|t| t.text == "mod")
            && toks.get(k + 2).is_some_and(|t| t.text == ";")
        {
            spans.gated_mods.push(k);
        }
        spans.test[start..=end].iter_mut().for_each(|t| *t = true);
        // Doc comments right above belong to the item.
        let mut first = toks[start].line;
        while first > 1 && lines[first - 2].trim_start().starts_with("///") {
            first -= 1;
        }
        spans.lines.push((first, toks[end].line));
        i = end + 1;
    }
    spans
}

/// Lines of `text` outside test-gated items (blank and comment lines count).
pub fn non_test_lines(text: &str) -> usize {
    let spans = test_spans(text, &lex(text));
    let mut excluded = BTreeSet::new();
    for &(a, b) in &spans.lines {
        excluded.extend(a..=b);
    }
    text.lines().count() - excluded.len()
}

// ---------------------------------------------------------------- files

/// Names of modules that hold only test code.
pub fn is_test_name(name: &str) -> bool {
    name == "tests" || name.ends_with("_tests") || name == "test_util" || name == "testing"
}

/// Every `.rs` file under `dir`, relative, with `/` separators, sorted.
pub fn rust_files(dir: &Path) -> Vec<String> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(base).unwrap();
                let parts: Vec<_> = rel.iter().map(|s| s.to_string_lossy()).collect();
                out.push(parts.join("/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Module path of file `rel`: `lib.rs` is `[]`, `db/mod.rs` is `[db]`,
/// `db/write.rs` is `[db, write]`.
pub fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let file = parts.pop().unwrap();
    let stem = file.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

/// The engine's source directory.
pub fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Top-level modules: each folder and `.rs` file directly under `src`
/// (`lib.rs` is `lib`), except test-only ones (`testing`, the feature-gated
/// test-support module, is a module and is kept).
pub fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if (p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
            && (name == "testing" || !is_test_name(&name))
        {
            out.insert(name);
        }
    }
    out
}

// --------------------------------------------------------------- modules

pub const ROOT: usize = 0;

#[derive(Debug, Default)]
pub struct Module {
    pub path: Vec<String>,
    pub parent: Option<usize>,
    /// File that holds it (for an inline module, its file's).
    pub file: Option<usize>,
    pub inline: bool,
    pub children: BTreeMap<String, usize>,
    /// Names brought in by `use`: bound name to the path as written.
    pub uses: BTreeMap<String, Vec<String>>,
    /// Glob `use` paths as written (without the `*`).
    pub globs: Vec<Vec<String>>,
    /// Names of items defined in it.
    pub defines: BTreeSet<String>,
}

#[derive(Debug)]
pub struct SrcFile {
    /// Relative to `src`, e.g. `db/write.rs`.
    pub rel: String,
    pub module: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct UseInfo {
    pub is_pub: bool,
    /// The bound name (None for a glob).
    pub bind: Option<String>,
    /// The bound name occurs in the file's own (non-test, non-`use`) code.
    pub bind_used: bool,
}

#[derive(Debug, Clone)]
pub struct Ref {
    pub file: usize,
    /// Module in scope (inline modules included).
    pub scope: usize,
    pub line: usize,
    /// As written, `*` last for a glob.
    pub segs: Vec<String>,
    /// Set for the paths of `use` declarations.
    pub use_info: Option<UseInfo>,
}

/// One dependency: a path in `file` at `line` that reaches module `to`
/// (a file module) from file module `from`.
#[derive(Debug, Clone)]
pub struct Dep {
    pub file: usize,
    pub line: usize,
    pub from: usize,
    pub to: usize,
    pub path: String,
}

#[derive(Debug, Default)]
pub struct Crate {
    pub files: Vec<SrcFile>,
    /// Files left out as test code, with the reason.
    pub skipped: Vec<(String, &'static str)>,
    pub modules: Vec<Module>,
    pub refs: Vec<Ref>,
}

impl Crate {
    /// Reads every `.rs` file under `src`.
    pub fn load(src: &Path) -> Crate {
        let files: Vec<(String, String)> = rust_files(src)
            .into_iter()
            .map(|rel| {
                let text = std::fs::read_to_string(src.join(&rel)).unwrap();
                (rel, text)
            })
            .collect();
        Crate::from_sources(&files)
    }

    /// Builds the model from `(path relative to src, text)` pairs.
    pub fn from_sources<S: AsRef<str>>(sources: &[(S, S)]) -> Crate {
        let mut c = Crate {
            modules: vec![Module::default()],
            ..Crate::default()
        };
        // Lex everything first: a parent's `#[cfg(test)] mod x;` drops x.
        let mut lexed = Vec::new();
        for (rel, text) in sources {
            let (rel, text) = (rel.as_ref(), text.as_ref());
            let path = module_path(rel);
            if path.iter().any(|p| is_test_name(p)) || is_test_name(file_stem(rel)) {
                c.skipped.push((rel.to_string(), "test file name"));
                continue;
            }
            let toks = lex(text);
            let spans = test_spans(text, &toks);
            lexed.push((rel.to_string(), text.to_string(), path, toks, spans));
        }
        let mut gated: BTreeSet<Vec<String>> = BTreeSet::new();
        for (_, _, path, toks, spans) in &lexed {
            for &k in &spans.gated_mods {
                let mut p = path.clone();
                p.push(toks[k + 1].text.clone());
                gated.insert(p);
            }
        }
        for (rel, text, path, toks, spans) in lexed {
            if (1..=path.len()).any(|n| gated.contains(&path[..n])) {
                c.skipped.push((rel, "declared under cfg(test)"));
                continue;
            }
            if spans.whole_file {
                c.skipped.push((rel, "#![cfg(test)]"));
                continue;
            }
            let m = c.module_at(&path);
            let f = c.files.len();
            c.modules[m].file = Some(f);
            c.files.push(SrcFile {
                rel,
                module: m,
                text,
            });
            c.parse(f, &toks, &spans.test);
        }
        c
    }

    /// The module at `path`, created (file-less) if missing.
    fn module_at(&mut self, path: &[String]) -> usize {
        let mut m = ROOT;
        for (i, s) in path.iter().enumerate() {
            m = match self.modules[m].children.get(s) {
                Some(&c) => c,
                None => {
                    let id = self.modules.len();
                    self.modules.push(Module {
                        path: path[..=i].to_vec(),
                        parent: Some(m),
                        ..Module::default()
                    });
                    self.modules[m].children.insert(s.clone(), id);
                    id
                }
            };
        }
        m
    }

    fn parse(&mut self, f: usize, toks: &[Tok], test: &[bool]) {
        let root = self.files[f].module;
        let mut stack: Vec<(usize, i32)> = Vec::new();
        let mut depth = 0i32;
        let mut in_use = vec![false; toks.len()];
        let mut uses: Vec<Ref> = Vec::new();
        let ident = |i: usize| toks.get(i).filter(|t| t.kind == Kind::Ident);
        let text = |i: usize| toks.get(i).map_or("", |t| t.text.as_str());
        let mut i = 0;
        while i < toks.len() {
            if test[i] {
                i += 1;
                continue;
            }
            let scope = stack.last().map_or(root, |s| s.0);
            match text(i) {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if stack.last().is_some_and(|s| s.1 == depth) {
                        stack.pop();
                    }
                }
                "mod" if ident(i + 1).is_some() && text(i + 2) == "{" => {
                    let mut path = self.modules[scope].path.clone();
                    path.push(toks[i + 1].text.clone());
                    let m = self.module_at(&path);
                    self.modules[m].inline = true;
                    self.modules[m].file = Some(f);
                    stack.push((m, depth));
                    depth += 1;
                    i += 3;
                    continue;
                }
                "use" => {
                    let is_pub = is_pub_before(toks, i);
                    let mut j = i + 1;
                    let mut items = Vec::new();
                    use_tree(toks, &mut j, Vec::new(), &mut items);
                    while j < toks.len() && toks[j].text != ";" {
                        j += 1;
                    }
                    in_use[i..=j.min(toks.len() - 1)]
                        .iter_mut()
                        .for_each(|u| *u = true);
                    for (segs, bind, line) in items {
                        let module = &mut self.modules[scope];
                        match &bind {
                            Some(b) if b != "_" => {
                                module.uses.insert(b.clone(), segs.clone());
                            }
                            Some(_) => {}
                            None => module.globs.push(segs.clone()),
                        }
                        let mut segs = segs;
                        if bind.is_none() {
                            segs.push("*".to_string());
                        }
                        uses.push(Ref {
                            file: f,
                            scope,
                            line,
                            segs,
                            use_info: Some(UseInfo {
                                is_pub,
                                bind,
                                bind_used: false,
                            }),
                        });
                    }
                    i = j + 1;
                    continue;
                }
                "fn" | "struct" | "enum" | "union" | "trait" | "type" | "const" | "static" => {
                    if let Some(t) = ident(i + 1) {
                        self.modules[scope].defines.insert(t.text.clone());
                    }
                }
                "macro_rules" if text(i + 1) == "!" => {
                    if let Some(t) = ident(i + 2) {
                        self.modules[scope].defines.insert(t.text.clone());
                    }
                }
                _ => {}
            }
            // A path: `a::b...` not preceded by `::`.
            if ident(i).is_some()
                && text(i + 1) == "::"
                && ident(i + 2).is_some()
                && (i == 0 || text(i - 1) != "::")
            {
                let mut segs = vec![toks[i].text.clone()];
                let mut j = i + 1;
                while text(j) == "::" && ident(j + 1).is_some() {
                    segs.push(toks[j + 1].text.clone());
                    j += 2;
                }
                self.refs.push(Ref {
                    file: f,
                    scope,
                    line: toks[i].line,
                    segs,
                    use_info: None,
                });
                i = j;
                continue;
            }
            i += 1;
        }
        // Which `use`d names the file's own code mentions.
        let code: BTreeSet<&str> = toks
            .iter()
            .enumerate()
            .filter(|&(k, t)| t.kind == Kind::Ident && !test[k] && !in_use[k])
            .map(|(_, t)| t.text.as_str())
            .collect();
        for mut r in uses {
            let info = r.use_info.as_mut().unwrap();
            info.bind_used = info.bind.as_deref().is_some_and(|b| code.contains(b));
            self.refs.push(r);
        }
    }

    /// The file module holding module `m` (itself unless inline).
    pub fn file_module(&self, mut m: usize) -> usize {
        while self.modules[m].inline {
            m = self.modules[m].parent.unwrap();
        }
        m
    }

    /// `segs` written in `scope`, as a path from the crate root; None for
    /// paths outside the crate (std, dependencies, local names).
    pub fn absolutize(&self, scope: usize, segs: &[String], depth: usize) -> Option<Vec<String>> {
        if depth > 16 || segs.is_empty() {
            return None;
        }
        let here = &self.modules[scope];
        match segs[0].as_str() {
            "crate" | "$crate" => Some(segs[1..].to_vec()),
            "super" => {
                let supers = segs.iter().take_while(|s| *s == "super").count();
                let mut base = here.path.clone();
                base.truncate(base.len().checked_sub(supers)?);
                base.extend(segs[supers..].iter().cloned());
                Some(base)
            }
            "self" => {
                let mut base = here.path.clone();
                base.extend(segs[1..].iter().cloned());
                Some(base)
            }
            name if here.children.contains_key(name) => {
                let mut base = here.path.clone();
                base.extend(segs.iter().cloned());
                Some(base)
            }
            name => {
                let target = here.uses.get(name)?;
                let mut base = self.absolutize(scope, target, depth + 1)?;
                base.extend(segs[1..].iter().cloned());
                Some(base)
            }
        }
    }

    /// For a path from the crate root: the module it names (the last one
    /// its own segments reach) and the module defining what it reaches,
    /// through `use` re-exports (`pub use x::Y`, `use x::*`).
    pub fn resolve(&self, abs: &[String]) -> (usize, usize) {
        self.resolve_at(abs, 0)
    }

    fn resolve_at(&self, abs: &[String], depth: usize) -> (usize, usize) {
        let mut m = ROOT;
        for (i, s) in abs.iter().enumerate() {
            if s == "*" {
                break;
            }
            if let Some(&c) = self.modules[m].children.get(s) {
                m = c;
                continue;
            }
            return (m, self.item(m, s, &abs[i + 1..], depth));
        }
        (m, m)
    }

    /// The module defining item `name` of module `m` (`rest` follows it).
    fn item(&self, m: usize, name: &str, rest: &[String], depth: usize) -> usize {
        let module = &self.modules[m];
        if depth > 16 || module.defines.contains(name) {
            return m;
        }
        if let Some(written) = module.uses.get(name) {
            let Some(mut abs) = self.absolutize(m, written, 0) else {
                return m; // from outside the crate
            };
            abs.extend(rest.iter().cloned());
            return self.resolve_at(&abs, depth + 1).1;
        }
        // A glob import of a module that has the name.
        for g in &module.globs {
            let Some(mut abs) = self.absolutize(m, g, 0) else {
                continue;
            };
            let (t, _) = self.resolve_at(&abs, depth + 1);
            let target = &self.modules[t];
            if t != m
                && (target.children.contains_key(name)
                    || target.defines.contains(name)
                    || target.uses.contains_key(name))
            {
                abs.push(name.to_string());
                abs.extend(rest.iter().cloned());
                return self.resolve_at(&abs, depth + 1).1;
            }
        }
        m
    }

    /// `a` is `b` or one of its ancestors.
    pub fn is_ancestor_or_self(&self, a: usize, b: usize) -> bool {
        self.modules[b].path.starts_with(&self.modules[a].path)
    }

    /// Every dependency between file modules. A path counts against the
    /// module defining what it reaches (after re-exports) and against the
    /// module it names, except:
    /// - naming an ancestor is free (`crate::Snapshot`, `super::Reason`
    ///   re-exported by the parent: only the defining module counts);
    /// - a facade re-export is free: a `pub use` naming a module inside the
    ///   re-exporting module's own subtree, of a name that file's own code
    ///   does not use (`pub use snapshot::Snapshot;` in `db/mod.rs`; if
    ///   `snapshot` re-exports it from elsewhere, that is its own use).
    ///
    /// `mod x;` declarations are not dependencies.
    pub fn deps(&self) -> Vec<Dep> {
        let mut out = Vec::new();
        for r in &self.refs {
            let Some(abs) = self.absolutize(r.scope, &r.segs, 0) else {
                continue;
            };
            let (named, resolved) = self.resolve(&abs);
            let from = self.files[r.file].module;
            let (named, resolved) = (self.file_module(named), self.file_module(resolved));
            if let Some(u) = &r.use_info {
                if u.is_pub && !u.bind_used && self.is_ancestor_or_self(from, named) {
                    continue;
                }
            }
            let mut to = vec![resolved];
            if !self.is_ancestor_or_self(named, from) && named != resolved {
                to.push(named);
            }
            for t in to {
                if t != from {
                    out.push(Dep {
                        file: r.file,
                        line: r.line,
                        from,
                        to: t,
                        path: r.segs.join("::"),
                    });
                }
            }
        }
        out.sort_by_key(|d| (d.file, d.line, d.to));
        out
    }

    /// `path/to/file.rs:LINE: source line` for a dependency.
    pub fn sample(&self, d: &Dep) -> String {
        let f = &self.files[d.file];
        let src = f.text.lines().nth(d.line - 1).unwrap_or("").trim();
        format!("{}:{}: {src}", f.rel, d.line)
    }

    /// Name of module `m`'s top-level module (`lib` for the root).
    pub fn top(&self, m: usize) -> String {
        self.modules[m]
            .path
            .first()
            .cloned()
            .unwrap_or_else(|| "lib".to_string())
    }

    /// A readable name for module `m`: its file (`db/write.rs`), or its
    /// folder (`db/`) when it has file children.
    pub fn label(&self, m: usize) -> String {
        let module = &self.modules[m];
        let has_file_children = module
            .children
            .values()
            .any(|&c| !self.modules[c].inline && self.modules[c].file.is_some());
        match module.file {
            Some(f) if !has_file_children => self.files[f].rel.clone(),
            _ => format!("{}/", module.path.join("/")),
        }
    }
}

fn file_stem(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap().trim_end_matches(".rs")
}

/// `use` at `i` is `pub` or `pub(...)`.
fn is_pub_before(toks: &[Tok], i: usize) -> bool {
    if i == 0 {
        return false;
    }
    if toks[i - 1].text == "pub" {
        return true;
    }
    if toks[i - 1].text == ")" {
        let mut j = i - 1;
        while j > 0 && toks[j].text != "(" {
            j -= 1;
        }
        return j > 0 && toks[j - 1].text == "pub";
    }
    false
}

/// Parses a use tree at `*i`: pushes `(path, bound name, line)` per leaf
/// (bound name None for a glob, whose path excludes the `*`).
fn use_tree(
    toks: &[Tok],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    let mut segs = prefix;
    while *i < toks.len() {
        let t = &toks[*i];
        match t.text.as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                while *i < toks.len() && toks[*i].text != "}" {
                    let before = *i;
                    use_tree(toks, i, segs.clone(), out);
                    if toks.get(*i).is_some_and(|t| t.text == ",") || *i == before {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            "*" => {
                out.push((segs, None, t.line));
                *i += 1;
                return;
            }
            _ if t.kind == Kind::Ident => {
                segs.push(t.text.clone());
                *i += 1;
                if toks.get(*i).is_some_and(|t| t.text == "::") {
                    continue;
                }
                let mut bind = segs.last().cloned();
                if toks.get(*i).is_some_and(|t| t.text == "as") {
                    bind = toks.get(*i + 1).map(|t| t.text.clone());
                    *i += 2;
                }
                if segs.last().is_some_and(|s| s == "self") {
                    segs.pop();
                    if bind.as_deref() == Some("self") {
                        bind = segs.last().cloned();
                    }
                }
                out.push((segs, bind, t.line));
                return;
            }
            _ => return,
        }
    }
}
