//! `shale sst write` and `shale ingest` (issue 39): a table written from
//! sorted `key<TAB>value` lines (a file or standard input, text or hex) is
//! ingested into a family, copied or moved; bad input is refused.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::*;

#[test]
fn sst_write_then_ingest_into_a_family() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    let src = tempfile::tempdir().unwrap();
    let input = src.path().join("in.tsv");
    std::fs::write(&input, "z001\tone\nz002\ttwo\r\n\nz003\tthree\tstill\n").unwrap();
    let sst = src.path().join("a.sst");
    let out = ok(&["sst", "write", path_str(&sst), path_str(&input)]);
    assert!(out.contains("3 entries"), "{out}");
    let dump = ok(&["sst", "dump", "--json", "--verify", path_str(&sst)]);
    assert!(dump.contains("\"external_version\":1"), "{dump}");
    assert_eq!(
        ok(&["ingest", db, path_str(&sst), "--cf", "users"]),
        "OK: 1 files ingested\n"
    );
    assert!(sst.exists());
    assert_eq!(ok(&["get", db, "--cf", "users", "z002"]), "two\n");
    assert_eq!(
        ok(&["get", db, "--cf", "users", "z003"]),
        "three\\x09still\n"
    );
    assert_eq!(shale(&["get", db, "z001"]).code, 1, "not in default");

    // From standard input, hex, moved in.
    let sst2 = src.path().join("b.sst");
    let mut child = Command::new(env!("CARGO_BIN_EXE_shale"))
        .args(["sst", "write", "--hex", path_str(&sst2)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"7a0a00\tff00\n7a0a01\t01\n")
        .unwrap();
    assert!(child.wait().unwrap().success());
    ok(&["ingest", db, path_str(&sst2), "--move"]);
    assert!(!sst2.exists());
    assert_eq!(ok(&["get", db, "--hex", "7a0a00"]), "ff00\n");
}

#[test]
fn bad_input_is_refused() {
    let src = tempfile::tempdir().unwrap();
    let sst = src.path().join("a.sst");
    let input = src.path().join("in.tsv");
    std::fs::write(&input, "b\t1\na\t2\n").unwrap();
    let r = shale(&["sst", "write", path_str(&sst), path_str(&input)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("line 2") && r.stderr.contains("increasing"),
        "{}",
        r.stderr
    );
    std::fs::write(&input, "novalue\n").unwrap();
    let r = shale(&["sst", "write", path_str(&sst), path_str(&input)]);
    assert!(r.stderr.contains("no TAB"), "{}", r.stderr);
    // A damaged table is refused by ingest, naming it.
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    std::fs::write(&input, "k\tv\n").unwrap();
    ok(&["sst", "write", path_str(&sst), path_str(&input)]);
    let mut b = std::fs::read(&sst).unwrap();
    let n = b.len();
    b.truncate(n - 10);
    std::fs::write(&sst, b).unwrap();
    let r = shale(&["ingest", path_str(d.path()), path_str(&sst)]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("a.sst"), "{}", r.stderr);
}
