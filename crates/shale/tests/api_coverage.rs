//! The randomized tests must reach every public call and every option that
//! changes behaviour (issue 10: a bounded `compact_range` was broken for as
//! long as the model test called it only unbounded). This test reads the
//! engine's public surface from its source and fails when a method is
//! called by none of the randomized tests (`.name(`, `::name(`, outside
//! comments) or an option field is set or read by none, and it is not on
//! the exemption list below, each exemption with the test that covers it.

use std::collections::BTreeSet;
use std::path::Path;

/// Randomized tests whose text must mention each public name.
const RANDOMIZED: &[&str] = &[
    "tests/model.rs",
    "tests/concurrent_model.rs",
    "../shale-stress/src/stress/worker.rs",
    "../shale-stress/src/stress/mod.rs",
    "tests/write_batch_with_index.rs",
];

/// Public names not reached by the randomized tests, and where they are
/// tested instead.
const EXEMPT: &[(&str, &str)] = &[
    ("open", "every test; options varied in model.rs"),
    (
        "stats",
        "a read-only report; tests/stats.rs (known workloads, each stall explained), crates/shale-metrics/tests",
    ),
    (
        "max_bgerror_resume_count",
        "acts only after an injected IO error; tests/bg_error_recovery.rs (on and off)",
    ),
    (
        "bgerror_resume_retry_interval",
        "acts only after an injected IO error; tests/bg_error_recovery.rs",
    ),
    ("path", "accessor; tests/api.rs"),
    (
        "option_infos",
        "the declared option list, read by tests: tests/set_options.rs, shale-py and shale-bench mapping tests",
    ),
    (
        "db_option_infos",
        "the declared option list, read by tests: options unit tests, shale-py and shale-bench mapping tests",
    ),
    (
        "property",
        "read-only; tests/compaction.rs and properties unit tests",
    ),
    ("error_if_exists", "open semantics; tests/api.rs"),
    (
        "fs",
        "MemFileSystem in tests/power_loss.rs, FaultInjectionFs in tests/fault_injection.rs",
    ),
    (
        "with_capacity",
        "allocation hint only; WriteBatch unit tests",
    ),
    ("clear", "WriteBatch unit tests"),
    ("len", "WriteBatch unit tests"),
    ("size_in_bytes", "WriteBatch unit tests"),
    ("as_slice", "PinnableValue accessor used by to_vec"),
    ("is_empty", "WriteBatch unit tests"),
    (
        "refused",
        "needs a key or value over 4 GiB: tests/regressions.rs::oversize_keys_and_values_are_invalid_argument",
    ),
    (
        "verify_checksums",
        "only true is accepted; false is rejected: tests/regressions.rs",
    ),
];

/// `pub fn NAME` in an `impl` block (4-space indent) of `file`.
fn pub_methods(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("    pub fn "))
        .map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// `pub NAME:` fields of the struct `name` in `file`, or, for a struct
/// declared with `declare_options!` (`pub struct NAME;`), the fields of
/// its declaration (`NAME / Variant: Type = default, ...`).
fn pub_fields(file: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    if let Some(start) = text.find(&format!("pub struct {name};")) {
        let body = &text[start..];
        let end = body.find("\n}\n").unwrap();
        return body[..end]
            .lines()
            .filter_map(|l| l.strip_prefix("        "))
            .filter(|l| !l.starts_with(' ') && l.contains(" / "))
            .filter_map(|l| l.split(" / ").next())
            .map(|s| s.trim().to_string())
            .collect();
    }
    let start = text
        .find(&format!("pub struct {name}"))
        .unwrap_or_else(|| panic!("{name} not in {file}"));
    let body = &text[start..];
    let end = body.find("\n}").unwrap();
    body[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("    pub "))
        .filter_map(|rest| rest.split(':').next())
        .map(|s| s.trim().to_string())
        .collect()
}

#[test]
fn every_public_call_and_option_is_randomized() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = |f: &str| here.join("src").join(f).display().to_string();
    let mut methods: BTreeSet<String> = BTreeSet::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for f in [
        "db/mod.rs",
        "db/db_iter.rs",
        "batch/write_batch.rs",
        "base/snapshots.rs",
        "db/read.rs",
        "cf/mod.rs",
        "options/mod.rs",
        "options/cf.rs",
        "merge/operators.rs",
        "ops/checkpoint.rs",
        "ops/live_files.rs",
        "ops/read_only.rs",
        "ops/secondary.rs",
        "ops/backup.rs",
        "ops/ingest.rs",
        "ops/export.rs",
        "ops/import.rs",
        "ops/sst_file_writer.rs",
        "txn/wbwi.rs",
        "txn/base_delta.rs",
    ] {
        methods.extend(pub_methods(&src(f)));
    }
    for s in ["Options", "ReadOptions", "WriteOptions"] {
        names.extend(pub_fields(&src("options/mod.rs"), s));
    }
    names.extend(pub_fields(&src("options/cf.rs"), "CfOptions"));
    let options = pub_fields(&src("options/mod.rs"), "Options");
    let cf = pub_fields(&src("options/cf.rs"), "CfOptions");
    assert!(
        options.len() > 40 && options.contains(&"memory_budget".to_string()),
        "parsed too little of Options: {options:?}"
    );
    assert!(
        cf.len() > 35 && cf.contains(&"write_buffer_size".to_string()),
        "parsed too little of CfOptions: {cf:?}"
    );
    assert!(methods.len() > 60, "parsed too little: {methods:?}");
    // Code only: a name in a comment reaches nothing.
    let corpus: String = RANDOMIZED
        .iter()
        .filter_map(|f| std::fs::read_to_string(here.join(f)).ok())
        .flat_map(|t| {
            t.lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect::<Vec<_>>()
        })
        .collect();
    // A method must be called (`.name(`, `::name(`, or passed as
    // `Type::name`); an option field set or read.
    let called = |n: &String| {
        [
            format!(".{n}("),
            format!("::{n}("),
            format!("::{n})"),
            format!("::{n},"),
        ]
        .iter()
        .any(|p| corpus.contains(p.as_str()))
    };
    let used = |n: &String| {
        [format!(".{n} ="), format!("{n}:"), format!(".{n}")]
            .iter()
            .any(|p| corpus.contains(p.as_str()))
    };
    let missing: Vec<&String> = methods
        .iter()
        .filter(|n| !called(n))
        .chain(names.iter().filter(|n| !methods.contains(*n) && !used(n)))
        .filter(|n| !EXEMPT.iter().any(|(e, _)| e == *n))
        .collect();
    assert!(
        missing.is_empty(),
        "public calls or options no randomized test reaches (add them to the model test, \
         or to EXEMPT with the test that covers them): {missing:?}"
    );
}
