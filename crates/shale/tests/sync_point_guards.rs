//! Sync point callbacks are process-global (`shale::sync_point`): a pause
//! set by one test is taken by whichever DB of the binary reaches the point
//! first. A test binary whose tests set points therefore runs each of its
//! tests under `sync_point::exclusive()` or `sync_point::shared()`. This
//! check reads every test file and fails on a test that holds neither in a
//! file where some test holds `exclusive()` (two tests of `power_loss.rs`
//! failed in CI that way: another test's flush took their pause).

use std::path::Path;

/// Names of the `#[test]` functions in `text` whose bodies take neither
/// guard. A body runs from its `fn` line to the first line that is `}`.
fn unguarded_tests(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in text.split("#[test]").skip(1) {
        let Some(start) = chunk.find("fn ") else {
            continue;
        };
        let body = &chunk[start..];
        let name: String = body["fn ".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let end = body.find("\n}\n").unwrap_or(body.len());
        let body = &body[..end];
        if !body.contains("sync_point::exclusive()") && !body.contains("sync_point::shared()") {
            out.push(name);
        }
    }
    out
}

#[test]
fn every_test_beside_a_sync_point_test_holds_a_guard() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut offenders = Vec::new();
    let mut files_checked = 0;
    for entry in std::fs::read_dir(&dir).expect("tests dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "rs") || path.ends_with("sync_point_guards.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        if !text.contains("sync_point::exclusive()") {
            continue;
        }
        files_checked += 1;
        for name in unguarded_tests(&text) {
            offenders.push(format!("{}: {name}", path.display()));
        }
    }
    assert!(
        files_checked >= 5,
        "the test files with sync points were not found"
    );
    assert!(
        offenders.is_empty(),
        "tests beside sync point tests without sync_point::shared() or exclusive(): {offenders:#?}"
    );
}

#[test]
fn the_check_sees_a_test_without_a_guard() {
    let text = "#[test]\nfn a() {\n    let _g = shale::sync_point::exclusive();\n}\n\
                #[test]\nfn b() {\n    let x = 1;\n}\n\
                #[test]\nfn c() {\n    let _g = shale::sync_point::shared();\n}\n";
    assert_eq!(unguarded_tests(text), vec!["b".to_string()]);
}
