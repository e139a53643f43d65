//! The Python binding's keyword table (`crates/shale-py/src/keywords.rs`,
//! plain data) against the engine's option declaration
//! (`CfOptions::option_infos`, `Options::db_option_infos`): every option
//! has a keyword or a listed reason not to, and every entry names an
//! option. (The binding is a crate outside the workspace; its own Python
//! test checks that each keyword is applied.)

mod keywords {
    #![allow(dead_code)]
    include!("../../shale-py/src/keywords.rs");
}

use std::collections::BTreeSet;

use keywords::{CF_KEYWORDS, DB_KEYWORDS, WITHOUT_KEYWORD};
use shale::{CfOptions, Options};

/// Every option field, groups flattened, as `OptionInfo::field` names it.
fn fields(infos: Vec<shale::OptionInfo>) -> BTreeSet<String> {
    infos.into_iter().map(|i| i.field).collect()
}

fn check(what: &str, options: &BTreeSet<String>, keywords: &[(&str, &str)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mapped: BTreeSet<&str> = keywords.iter().map(|(_, f)| *f).collect();
    let exempt: BTreeSet<&str> = WITHOUT_KEYWORD.iter().map(|(f, _)| *f).collect();
    for f in options {
        if !mapped.contains(f.as_str()) && !exempt.contains(f.as_str()) {
            problems.push(format!(
                "{what} option {f} has no Python keyword (add one to keywords.rs, \
                 or list it in WITHOUT_KEYWORD with the reason)"
            ));
        }
        if mapped.contains(f.as_str()) && exempt.contains(f.as_str()) {
            problems.push(format!("{f} has a keyword and is listed as without one"));
        }
    }
    for (k, f) in keywords {
        if !options.contains(*f) {
            problems.push(format!("{what} keyword {k} names no {what} option ({f})"));
        }
    }
    problems
}

#[test]
fn every_option_has_a_python_keyword_or_a_reason() {
    let cf = fields(CfOptions::option_infos());
    let db = fields(Options::db_option_infos());
    assert!(cf.contains("blob.min_blob_size") && db.contains("memory_budget"));
    let mut problems = check("per-family", &cf, CF_KEYWORDS);
    problems.extend(check("DB-wide", &db, DB_KEYWORDS));
    for (f, _) in WITHOUT_KEYWORD {
        if !cf.contains(*f) && !db.contains(*f) {
            problems.push(format!("WITHOUT_KEYWORD lists {f}, which is no option"));
        }
    }
    let mut seen = BTreeSet::new();
    for (k, _) in CF_KEYWORDS.iter().chain(DB_KEYWORDS) {
        if !seen.insert(*k) {
            problems.push(format!("keyword {k} listed twice"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
