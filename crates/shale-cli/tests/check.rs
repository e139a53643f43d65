//! `shale check`: exit 0 on a clean DB; 1 with the file and offset of each
//! damage (a flipped byte in a table, in a WAL, in the MANIFEST) or missing
//! table; 2 when it cannot run.

mod common;

use common::*;
use serde_json::Value;

fn check_json(dir: &std::path::Path) -> (i32, Value) {
    let r = shale(&["check", "--json", path_str(dir)]);
    (
        r.code,
        serde_json::from_str(&r.stdout).expect("one JSON object"),
    )
}

#[test]
fn a_clean_db_checks_clean() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let (code, v) = check_json(d.path());
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["clean"], true);
    let kinds: Vec<&str> = v["checked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    for k in ["CURRENT", "MANIFEST", "SST", "WAL", "OPTIONS"] {
        assert!(kinds.contains(&k), "{k} not checked: {kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| **k == "SST").count(), 3);
    let text = ok(&["check", path_str(d.path())]);
    assert!(text.ends_with("0 problem(s)\n"), "{text}");
}

#[test]
fn a_flipped_byte_in_a_table_is_named_with_file_and_offset() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 400, 200);
    let sst = files_with(d.path(), "sst").remove(0);
    flip_byte(&sst, 100); // inside the first data block, at offset 0
    let r = shale(&["check", path_str(d.path())]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let name = sst.file_name().unwrap().to_str().unwrap();
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("PROBLEM"))
        .expect("a problem line");
    assert!(
        line.contains(name) && line.contains("at offset 0"),
        "{line}"
    );
    let (code, v) = check_json(d.path());
    assert_eq!(code, 1);
    let p = &v["problems"][0];
    assert_eq!(p["kind"], "corruption");
    assert!(p["file"].as_str().unwrap().ends_with(name), "{p}");
    assert_eq!(p["offset"], 0);
    assert_eq!(
        v["problems"].as_array().unwrap().len(),
        1,
        "only that block: {v:#}"
    );
}

#[test]
fn a_missing_table_is_reported() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 300, 100);
    let sst = files_with(d.path(), "sst").remove(1);
    std::fs::remove_file(&sst).unwrap();
    let (code, v) = check_json(d.path());
    assert_eq!(code, 1, "{v:#}");
    let p = &v["problems"][0];
    assert!(p["file"]
        .as_str()
        .unwrap()
        .ends_with(sst.file_name().unwrap().to_str().unwrap()));
    assert!(p["what"].as_str().unwrap().starts_with("missing"), "{p}");
}

#[test]
fn damage_in_the_wal_and_manifest_is_reported() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let wal = files_with(d.path(), "log").pop().unwrap();
    flip_byte(&wal, 20);
    let (code, v) = check_json(d.path());
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["problems"][0]["file"].as_str().unwrap().ends_with(".log"),
        "{v:#}"
    );
    assert_eq!(shale(&["wal", "dump", path_str(&wal)]).code, 1);

    let e = tempfile::tempdir().unwrap();
    make_db(e.path());
    let manifest = shale::tools::current_manifest(e.path()).unwrap();
    flip_byte(&manifest, 10);
    let (code, v) = check_json(e.path());
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["problems"][0]["file"]
            .as_str()
            .unwrap()
            .contains("MANIFEST-"),
        "{v:#}"
    );
    assert_eq!(shale(&["manifest", "dump", path_str(e.path())]).code, 1);
}

#[test]
fn check_of_no_db_exits_2_and_a_missing_current_is_damage() {
    let r = shale(&["check", "/nonexistent/shale-db"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let empty = tempfile::tempdir().unwrap();
    let r = shale(&["check", path_str(empty.path())]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a Shale DB"), "{}", r.stderr);

    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 10, 10);
    std::fs::remove_file(d.path().join("CURRENT")).unwrap();
    let (code, v) = check_json(d.path());
    assert_eq!(code, 1, "{v:#}");
    assert!(
        v["problems"][0]["what"]
            .as_str()
            .unwrap()
            .starts_with("missing: no CURRENT"),
        "{v:#}"
    );
    // Repair writes one, and the DB is whole again.
    assert_eq!(shale(&["repair", path_str(d.path())]).code, 0);
    assert_eq!(check_json(d.path()).0, 0);
}
