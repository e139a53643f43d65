//! The engine's architecture, checked from its sources. The layers are the
//! table of docs/ARCHITECTURE.md, section "Layers" (`| layer | modules |
//! what |`, lowest layer first; the modules cell lists backticked top-level
//! modules), read at run time. Three rules:
//!
//! 1. Imports point down: no module uses a module of a higher layer. Every
//!    top-level module (folder or file under src/) has a row, and every
//!    module the table names exists.
//! 2. Within a layer, the imports between top-level modules form no cycle.
//! 3. Within every folder, recursively, the imports between its parts form
//!    no cycle. The parts of folder F are F's root file (`mod.rs`) and F's
//!    direct children (files and subfolders); u → v when a file inside u
//!    uses something defined anywhere inside v. So a `mod.rs` that both
//!    defines items its children use and calls into its children is a cycle:
//!    a root file is either a base its children build on or a root that uses
//!    them, not both.
//!
//! What counts as a use (tests/common/arch.rs): every path in non-test code
//! (`crate::`, `super::`, `self::`, a child module's or a `use`d name's
//! path; grouped `use` trees), resolved through re-exports: `crate::Snapshot`
//! reaches `db/snapshot.rs` through lib.rs's and db/mod.rs's `pub use`. It
//! counts against the module defining the item and the module the path
//! names, except that naming an ancestor is free (`super::Reason`
//! re-exported by the parent counts only against the sibling defining it),
//! and so is a `pub use` of one's own subtree that the file's own code does
//! not use (a facade). `mod x;` declarations are not uses. Test code is left
//! out: files named `tests.rs`, `*_tests.rs`, `test_util.rs`, the
//! feature-gated `testing` module, modules declared under `#[cfg(test)]`,
//! and `#[cfg(test)]` items inside files.
//!
//! `options` sits above the subsystems it configures: each subsystem owns
//! its option types (`sst::Compression`, `wal::WalRecoveryMode`,
//! `cache::CacheOptions`, `sst::TableOptions`) and `options` re-exports
//! them and builds the narrow structs from `Options`.

#[path = "common/arch.rs"]
mod arch;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::OnceLock;

use arch::{Crate, Dep, ROOT};

const ARCHITECTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ARCHITECTURE.md");

/// A row of the layer table.
struct Layer {
    name: String,
    modules: Vec<String>,
}

/// The rows of the `| layer | modules | what |` table under `## Layers`.
fn parse_layers(doc: &str) -> Result<Vec<Layer>, String> {
    let mut lines = doc.lines().skip_while(|l| l.trim() != "## Layers");
    lines.next().ok_or("no `## Layers` section")?;
    let table: Vec<&str> = lines
        .take_while(|l| !l.starts_with("## "))
        .map(str::trim)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .collect();
    let cells = |l: &str| -> Vec<String> {
        l.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect()
    };
    let header = cells(table.first().ok_or("no table under `## Layers`")?);
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h.eq_ignore_ascii_case(name))
            .ok_or(format!(
                "the table under `## Layers` has no `{name}` column"
            ))
    };
    let (name_col, modules_col) = (col("layer")?, col("modules")?);
    let mut layers = Vec::new();
    for row in &table[1..] {
        let row = cells(row);
        if row
            .iter()
            .all(|c| c.chars().all(|c| matches!(c, '-' | ':')))
        {
            continue; // the separator row
        }
        let cell = row.get(modules_col).map_or("", String::as_str);
        let modules: Vec<String> = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .map(|m| m.trim().to_string())
            .collect();
        let name = row.get(name_col).cloned().unwrap_or_default();
        if modules.is_empty() {
            return Err(format!("layer `{name}` lists no `module`"));
        }
        layers.push(Layer { name, modules });
    }
    if layers.is_empty() {
        return Err("the table under `## Layers` has no rows".into());
    }
    Ok(layers)
}

fn layers() -> &'static [Layer] {
    static LAYERS: OnceLock<Vec<Layer>> = OnceLock::new();
    LAYERS.get_or_init(|| {
        let doc = std::fs::read_to_string(ARCHITECTURE)
            .unwrap_or_else(|e| panic!("docs/ARCHITECTURE.md: {e}"));
        parse_layers(&doc).unwrap_or_else(|e| panic!("docs/ARCHITECTURE.md: {e}"))
    })
}

fn layer(module: &str) -> Option<usize> {
    layers()
        .iter()
        .position(|l| l.modules.iter().any(|m| m == module))
}

fn engine() -> &'static (Crate, Vec<Dep>) {
    static ENGINE: OnceLock<(Crate, Vec<Dep>)> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let c = Crate::load(&arch::src_dir());
        assert!(c.files.len() > 50, "found only {} files", c.files.len());
        let deps = c.deps();
        (c, deps)
    })
}

// ---------------------------------------------------------------- cycles

/// A directed graph over labelled nodes; each edge keeps its first sample.
struct Graph {
    labels: Vec<String>,
    edges: BTreeMap<(usize, usize), String>,
}

impl Graph {
    fn successors(&self, u: usize) -> impl Iterator<Item = usize> + '_ {
        self.edges.range((u, 0)..(u + 1, 0)).map(|(&(_, v), _)| v)
    }

    /// Strongly connected components with more than one node.
    fn tangles(&self) -> Vec<Vec<usize>> {
        struct Tarjan<'a> {
            g: &'a Graph,
            index: Vec<Option<usize>>,
            low: Vec<usize>,
            on_stack: Vec<bool>,
            stack: Vec<usize>,
            next: usize,
            out: Vec<Vec<usize>>,
        }
        impl Tarjan<'_> {
            fn visit(&mut self, u: usize) {
                self.index[u] = Some(self.next);
                self.low[u] = self.next;
                self.next += 1;
                self.stack.push(u);
                self.on_stack[u] = true;
                for v in self.g.successors(u).collect::<Vec<_>>() {
                    match self.index[v] {
                        None => {
                            self.visit(v);
                            self.low[u] = self.low[u].min(self.low[v]);
                        }
                        Some(iv) if self.on_stack[v] => self.low[u] = self.low[u].min(iv),
                        Some(_) => {}
                    }
                }
                if Some(self.low[u]) == self.index[u] {
                    let mut scc = Vec::new();
                    loop {
                        let v = self.stack.pop().unwrap();
                        self.on_stack[v] = false;
                        scc.push(v);
                        if v == u {
                            break;
                        }
                    }
                    if scc.len() > 1 {
                        scc.sort();
                        self.out.push(scc);
                    }
                }
            }
        }
        let n = self.labels.len();
        let mut t = Tarjan {
            g: self,
            index: vec![None; n],
            low: vec![0; n],
            on_stack: vec![false; n],
            stack: Vec::new(),
            next: 0,
            out: Vec::new(),
        };
        for u in 0..n {
            if t.index[u].is_none() {
                t.visit(u);
            }
        }
        t.out.sort();
        t.out
    }

    /// Cycles covering every edge that lies on a cycle: for each such edge
    /// u → v not yet shown, u → v and a shortest way back from v to u.
    fn cycles(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        for scc in self.tangles() {
            let inside: BTreeSet<usize> = scc.iter().copied().collect();
            let mut covered = BTreeSet::new();
            for &(u, v) in self.edges.keys() {
                if !inside.contains(&u) || !inside.contains(&v) || covered.contains(&(u, v)) {
                    continue;
                }
                // Breadth-first from v back to u.
                let mut prev = BTreeMap::new();
                let mut queue = VecDeque::from([v]);
                while let Some(x) = queue.pop_front() {
                    if x == u {
                        break;
                    }
                    for y in self.successors(x) {
                        if inside.contains(&y) && y != v && !prev.contains_key(&y) {
                            prev.insert(y, x);
                            queue.push_back(y);
                        }
                    }
                }
                let mut back = vec![u];
                while *back.last().unwrap() != v {
                    back.push(prev[back.last().unwrap()]);
                }
                back.reverse(); // v ... u
                let mut cycle = vec![u];
                cycle.extend(back);
                for w in cycle.windows(2) {
                    covered.insert((w[0], w[1]));
                }
                out.push(cycle);
            }
        }
        out
    }

    /// Each cycle as `a → b → a`, then each edge's sample.
    fn report(&self, title: &str) -> Vec<String> {
        self.cycles()
            .iter()
            .map(|cycle| {
                let names: Vec<&str> = cycle.iter().map(|&n| self.labels[n].as_str()).collect();
                let mut s = format!("{title}: {}", names.join(" → "));
                for w in cycle.windows(2) {
                    s += &format!(
                        "\n    {} → {}: {}",
                        self.labels[w[0]],
                        self.labels[w[1]],
                        self.edges[&(w[0], w[1])]
                    );
                }
                s
            })
            .collect()
    }
}

/// Rule 3's graph for folder module `folder`: its root file is node 0,
/// its file-module children the others.
fn folder_graph(c: &Crate, deps: &[Dep], folder: usize) -> Graph {
    let f = &c.modules[folder];
    let children: Vec<usize> = f
        .children
        .values()
        .copied()
        .filter(|&m| !c.modules[m].inline)
        .collect();
    let root_label = match f.file {
        Some(file) => c.files[file].rel.clone(),
        None => format!("{}/ (no root file)", f.path.join("/")),
    };
    let mut labels = vec![root_label];
    labels.extend(children.iter().map(|&m| c.label(m)));
    let node = |m: usize| -> Option<usize> {
        let p = &c.modules[m].path;
        if !p.starts_with(&f.path) {
            return None;
        }
        if p.len() == f.path.len() {
            return Some(0);
        }
        let child = f.children.get(&p[f.path.len()])?;
        children.iter().position(|x| x == child).map(|i| i + 1)
    };
    let mut edges = BTreeMap::new();
    for d in deps {
        if let (Some(u), Some(v)) = (node(d.from), node(d.to)) {
            if u != v {
                edges.entry((u, v)).or_insert_with(|| c.sample(d));
            }
        }
    }
    Graph { labels, edges }
}

// ----------------------------------------------------------------- rules

#[test]
fn the_layer_table_names_every_top_level_module() {
    let existing = arch::top_level_modules(&arch::src_dir());
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for l in layers() {
        for m in &l.modules {
            if !seen.insert(m) {
                problems.push(format!("`{m}` is in more than one layer"));
            }
            if !existing.contains(m) {
                problems.push(format!(
                    "layer `{}` names `{m}`, which is not a module under src/",
                    l.name
                ));
            }
        }
    }
    for m in &existing {
        if layer(m).is_none() {
            problems.push(format!(
                "module `{m}` has no layer in docs/ARCHITECTURE.md \"Layers\""
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Rule 1.
#[test]
fn imports_point_down_the_layers() {
    let (c, deps) = engine();
    let mut up = BTreeSet::new();
    for d in deps {
        let (from, to) = (c.top(d.from), c.top(d.to));
        if let (Some(mine), Some(theirs)) = (layer(&from), layer(&to)) {
            if theirs > mine {
                let (lf, lt) = (&layers()[mine].name, &layers()[theirs].name);
                up.insert(format!(
                    "{from} (layer {lf}) uses {to} (layer {lt}) via `{}`: {}",
                    d.path,
                    c.sample(d)
                ));
            }
        }
    }
    let up: Vec<_> = up.into_iter().collect();
    assert!(
        up.is_empty(),
        "{} imports point up the layers:\n{}",
        up.len(),
        up.join("\n")
    );
}

/// Rule 2.
#[test]
fn no_cycle_between_the_modules_of_a_layer() {
    let (c, deps) = engine();
    let mut found = Vec::new();
    for l in layers() {
        let labels = l.modules.clone();
        let mut edges = BTreeMap::new();
        for d in deps {
            let (from, to) = (c.top(d.from), c.top(d.to));
            let u = labels.iter().position(|m| *m == from);
            let v = labels.iter().position(|m| *m == to);
            if let (Some(u), Some(v)) = (u, v) {
                if u != v {
                    edges.entry((u, v)).or_insert_with(|| c.sample(d));
                }
            }
        }
        found.extend(Graph { labels, edges }.report(&format!("layer {}", l.name)));
    }
    assert!(
        found.is_empty(),
        "{} cycles within a layer:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// Rule 3.
#[test]
fn no_cycle_inside_a_folder() {
    let (c, deps) = engine();
    let mut found = Vec::new();
    let (mut tangled, mut among_children) = (Vec::new(), Vec::new());
    for (m, module) in c.modules.iter().enumerate() {
        let folder = module
            .children
            .values()
            .any(|&ch| !c.modules[ch].inline && c.modules[ch].file.is_some());
        if m == ROOT || module.inline || !folder {
            continue;
        }
        let mut g = folder_graph(c, deps, m);
        let title = format!("{}/", module.path.join("/"));
        for scc in g.tangles() {
            let names: Vec<&str> = scc.iter().map(|&n| g.labels[n].as_str()).collect();
            tangled.push(format!("{title} ({}): {}", names.len(), names.join(", ")));
        }
        found.extend(g.report(&title));
        // What stays tangled once the root file is neither base nor root.
        g.edges.retain(|&(u, v), _| u != 0 && v != 0);
        for scc in g.tangles() {
            let names: Vec<&str> = scc.iter().map(|&n| g.labels[n].as_str()).collect();
            among_children.push(format!("{title} ({}): {}", names.len(), names.join(", ")));
        }
    }
    assert!(
        found.is_empty(),
        "import cycles inside folders.\n\
         Tangles (parts on a common cycle):\n{}\n\
         Tangles left among the children alone (edges to and from the root file dropped):\n{}\n\n\
         {} cycles (every edge on a cycle is shown at least once):\n{}",
        tangled.join("\n"),
        if among_children.is_empty() {
            "none".to_string()
        } else {
            among_children.join("\n")
        },
        found.len(),
        found.join("\n")
    );
}

// ---------------------------------------------------------------- parser

/// Dependencies of a small crate as `from -> to` module paths.
fn edges_of(sources: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    let c = Crate::from_sources(sources);
    let name = |m: usize| {
        let p = &c.modules[m].path;
        if p.is_empty() {
            "crate".to_string()
        } else {
            p.join("::")
        }
    };
    c.deps()
        .iter()
        .map(|d| (name(d.from), name(d.to)))
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn grouped_imports_are_parsed() {
    let edges = edges_of(&[
        ("lib.rs", "mod base; mod db; mod iter; mod sst; mod x;"),
        ("base.rs", "pub struct B;"),
        ("db.rs", "pub struct X;"),
        ("iter.rs", "pub struct Y;"),
        ("sst/mod.rs", "pub struct A; pub struct B;"),
        (
            "x.rs",
            "use crate::{db::X, sst::{A, B}, base};\nfn f() { let x = crate::iter::Y; }",
        ),
    ]);
    let want = [("x", "base"), ("x", "db"), ("x", "iter"), ("x", "sst")];
    assert_eq!(edges, pairs(&want));
}

#[test]
fn paths_resolve_through_re_exports_and_skip_test_code() {
    let sources = [
        (
            "lib.rs",
            "mod a; mod b; mod c; mod d; mod e;\n\
             pub use a::{Alpha, inner::Deep};\npub use d::*;",
        ),
        (
            "a/mod.rs",
            "mod inner; mod sib;\npub(crate) use inner::Deep;\npub use sib::*;\n\
             pub struct Alpha;\npub(crate) fn helper() {}\npub fn run() { sib::h(); }",
        ),
        (
            "a/inner.rs",
            "pub struct Deep;\npub fn f() { super::super::b::g(); super::helper(); }",
        ),
        (
            "a/sib.rs",
            "pub struct Sib;\npub fn h() { let _ = super::Deep; }",
        ),
        (
            "b.rs",
            "use crate::{a::{Alpha, Sib as S}, Deep};\n\
             pub fn g() { let _ = crate::c::X; }\n\
             #[cfg(test)]\nmod tests {\n    use crate::e::E;\n    const S: &str = \"}\";\n\
                 fn t() { let _ = '}'; /* } /* } */ */ let _ = r#\"}\"#; }\n}\n\
             pub fn after() { let _ = crate::d::Z; }",
        ),
        (
            "c.rs",
            "pub struct X;\n#[cfg(test)]\nmod helpers;\n\
             #[cfg(all(test, unix))]\nfn only_test() { crate::e::E; }\n\
             #[cfg(any(test, feature = \"f\"))]\nfn not_only_test() {}",
        ),
        ("c/helpers.rs", "fn x() { crate::e::E; }"),
        (
            "d.rs",
            "pub struct Y; pub struct Z;\n\
             fn k<'a>(x: &'a u8) -> char { let _ = crate::c::X; '{' }",
        ),
        ("e.rs", "pub struct E;"),
        ("e/tests.rs", "use crate::a::Alpha;"),
    ];
    let want = [
        ("a", "a::sib"),        // mod.rs calls its child
        ("a::inner", "a"),      // super::helper is defined in a/mod.rs
        ("a::inner", "b"),      // super::super
        ("a::sib", "a::inner"), // super::Deep, re-exported by a/mod.rs
        ("b", "a"),             // Alpha is defined in a/mod.rs
        ("b", "a::sib"),        // Sib, through a's `pub use sib::*`
        ("b", "a::inner"),      // crate::Deep, through lib.rs and a/mod.rs
        ("b", "c"),
        ("b", "d"), // after the test module
        ("d", "c"), // after a lifetime and a char literal
    ];
    assert_eq!(edges_of(&sources), pairs(&want));

    let c = Crate::from_sources(&sources);
    let skipped: Vec<&str> = c.skipped.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(skipped, ["e/tests.rs", "c/helpers.rs"]);

    // a/mod.rs → a/sib.rs → a/inner.rs → a/mod.rs is a cycle in folder a.
    let deps = c.deps();
    let a = c.modules[ROOT].children["a"];
    let g = folder_graph(&c, &deps, a);
    let cycles: Vec<Vec<&str>> = g
        .cycles()
        .iter()
        .map(|cy| cy.iter().map(|&n| g.labels[n].as_str()).collect())
        .collect();
    assert_eq!(
        cycles,
        [["a/mod.rs", "a/sib.rs", "a/inner.rs", "a/mod.rs"]],
        "{}",
        g.report("a/").join("\n")
    );
}

#[test]
fn the_layer_table_is_parsed() {
    let doc = "# X\n\n## Layers\n\nLowest first.\n\n\
               | layer | modules | what |\n|---|---|---|\n\
               | base | `error`, `base` | basics |\n| top | `db` | the engine |\n\n\
               ## Next\n| layer | modules | what |\n| x | `x` | no |\n";
    let layers = parse_layers(doc).unwrap();
    let rows: Vec<(&str, Vec<&str>)> = layers
        .iter()
        .map(|l| {
            let modules = l.modules.iter().map(String::as_str).collect();
            (l.name.as_str(), modules)
        })
        .collect();
    assert_eq!(rows, [("base", vec!["error", "base"]), ("top", vec!["db"])]);
}

/// Every identifier the lexer reports is on the line it reports, across
/// the whole engine (strings, chars, lifetimes and comments are lexed
/// right, or lines drift).
#[test]
fn the_lexer_keeps_line_numbers() {
    let src = arch::src_dir();
    let mut wrong = Vec::new();
    for rel in arch::rust_files(&src) {
        let text = std::fs::read_to_string(src.join(&rel)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for t in arch::lex(&text) {
            let on_line = lines.get(t.line - 1).is_some_and(|l| l.contains(&t.text));
            if t.kind == arch::Kind::Ident && t.text != "$crate" && !on_line {
                wrong.push(format!("{rel}:{}: `{}`", t.line, t.text));
                break;
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "tokens off their lines:\n{}",
        wrong.join("\n")
    );
}
