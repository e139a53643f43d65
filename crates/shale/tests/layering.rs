//! The engine's modules form layers (ARCHITECTURE.md, "Layering"): each may
//! use only modules of its own layer or below, so the data flow reads top
//! down and no import circle spans layers. This test reads every source
//! file and fails on any `crate::` path (plain or grouped) that points up.
//!
//! `options` sits above the subsystems it configures: each subsystem owns
//! its option types (`sst::Compression`, `wal::WalRecoveryMode`,
//! `cache::CacheOptions`, `sst::TableOptions`) and `options` re-exports
//! them and builds the narrow structs from `Options`.

use std::path::Path;

/// Layer of each top-level module, lowest first.
const LAYERS: &[&[&str]] = &[
    &[
        "error",
        "base",
        "codec",
        "fs",
        "io",
        "stats",
        "sync_point",
        "events",
        "memory",
    ],
    &[
        "batch",
        "wal",
        "memtable",
        "sst",
        "cache",
        "iter",
        "merge",
        "range_del",
    ],
    &["version"],
    &["blob"],
    &["build"],
    &["options"],
    &["flush", "compaction"],
    &["cf"],
    &["table_cache"],
    &["db"],
    &["tools"],
    &["testing"],
    &["lib"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// First path segment of every `crate::` path in `text`, including each
/// item of a grouped `crate::{a::X, b::{Y, Z}}`.
fn crate_deps(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group.
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        rest = &group[j..];
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_alphanumeric() || c == '_') => {
                        let name: String = group[j..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        out.push(name);
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            out.push(
                rest.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_crate_import_points_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(files.len() > 50, "found only {} files", files.len());
    let mut up = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy();
        let module = first.trim_end_matches(".rs");
        let Some(mine) = layer(module) else {
            panic!("{}: module {module} has no layer in LAYERS", rel.display());
        };
        let text = std::fs::read_to_string(f).unwrap();
        for dep in crate_deps(&text) {
            if let Some(theirs) = layer(&dep) {
                if theirs > mine {
                    up.push(format!("{} uses crate::{dep}", rel.display()));
                }
            }
        }
    }
    up.sort();
    up.dedup();
    assert!(up.is_empty(), "imports pointing up the layers: {up:#?}");
}

#[test]
fn grouped_imports_are_parsed() {
    let deps = crate_deps("use crate::{db::X, sst::{A, B}, base};\nlet x = crate::iter::Y;");
    assert_eq!(deps, vec!["db", "sst", "base", "iter"]);
}
