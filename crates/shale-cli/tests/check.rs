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

/// The problems of a check that must have found some, each checked to be
/// corruption of `file`; returns them.
fn problems_naming(dir: &std::path::Path, file: &str, ctx: &str) -> Vec<Value> {
    let (code, v) = check_json(dir);
    assert_eq!(code, 1, "{ctx}: {v:#}");
    let problems = v["problems"].as_array().unwrap().clone();
    assert!(!problems.is_empty(), "{ctx}: {v:#}");
    for p in &problems {
        assert_eq!(p["kind"], "corruption", "{ctx}: {p}");
        assert!(
            p["file"].as_str().unwrap().ends_with(file),
            "{ctx}: {p} does not name {file}"
        );
    }
    problems
}

#[test]
fn blob_files_are_checked_and_an_orphan_is_a_note() {
    let d = tempfile::tempdir().unwrap();
    make_blob_db(d.path());
    let blobs = files_with(d.path(), "blob");
    assert_eq!(blobs.len(), 3, "{blobs:?}");
    std::fs::write(d.path().join("000999.blob"), b"not a blob file").unwrap();
    let (code, v) = check_json(d.path());
    assert_eq!(code, 0, "{v:#}");
    let checked: Vec<(&str, &str, u64)> = v["checked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "BLOB")
        .map(|f| {
            (
                f["kind"].as_str().unwrap(),
                f["name"].as_str().unwrap(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(&str, &str, u64)> = blobs
        .iter()
        .map(|p| {
            (
                "BLOB",
                p.file_name().unwrap().to_str().unwrap(),
                std::fs::metadata(p).unwrap().len(),
            )
        })
        .collect();
    assert_eq!(checked, want);
    assert!(
        v["notes"]
            .to_string()
            .contains("000999.blob: not listed by the MANIFEST (orphan)"),
        "{v:#}"
    );
    let text = ok(&["check", path_str(d.path())]);
    assert!(text.contains("checked BLOB "), "{text}");
}

#[test]
fn a_missing_truncated_or_damaged_blob_file_is_named_with_its_offset() {
    let d = tempfile::tempdir().unwrap();
    make_blob_db(d.path());
    // The first blob file: 60 blobs, a third of them garbage.
    let path = files_with(d.path(), "blob").remove(0);
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    let good = std::fs::read(&path).unwrap();
    let len = good.len() as u64;

    std::fs::remove_file(&path).unwrap();
    let p = problems_naming(d.path(), &name, "missing");
    assert_eq!(p.len(), 1, "{p:?}");
    let what = p[0]["what"].as_str().unwrap();
    assert!(
        what.starts_with("missing: MANIFEST-") && what.contains("edit at offset"),
        "{what}"
    );

    std::fs::write(&path, &good[..good.len() - 10]).unwrap();
    let p = problems_naming(d.path(), &name, "truncated");
    assert!(
        p[0]["what"].as_str().unwrap().contains(&format!(
            "file has {} bytes, the MANIFEST says {len}",
            len - 10
        )),
        "{p:?}"
    );

    // A byte in the header, in the first record (its key, at offset 24 +
    // 13 + 1), and in the footer: each at the offset of its part.
    for (at, offset) in [(5, 0), (38, 24), (len - 3, len - 28)] {
        let mut bytes = good.clone();
        bytes[at as usize] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let ctx = format!("byte {at} flipped");
        let p = problems_naming(d.path(), &name, &ctx);
        assert_eq!(p.len(), 1, "{ctx}: {p:?}");
        assert_eq!(p[0]["offset"], offset, "{ctx}: {p:?}");
    }
    std::fs::write(&path, &good).unwrap();
    assert_eq!(check_json(d.path()).0, 0);
}

/// Blob references are followed: after `shale repair` lost a blob file
/// (deleted before the repair), the repaired MANIFEST lists the tables
/// that reference it but not the file, and `check` reports those
/// references on the table that holds them. Before, that DB checked clean
/// and only reads of those keys failed.
#[test]
fn references_into_a_blob_file_the_manifest_does_not_list_are_problems() {
    let d = tempfile::tempdir().unwrap();
    make_blob_db(d.path());
    assert_eq!(check_json(d.path()).0, 0);
    // The newest blob file: the last round's values (every fifth key, 10 of
    // them in blob files; 10 and 45 are inline).
    let blob = files_with(d.path(), "blob").pop().unwrap();
    let name = blob.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::remove_file(&blob).unwrap();
    let r = shale(&["repair", "--json", path_str(d.path())]);
    assert_eq!(r.code, 1, "blobs were lost: {}", r.stdout);
    let p = problems_naming(d.path(), ".sst", "refs into a lost blob file");
    assert_eq!(p.len(), 1, "{p:?}");
    let what = p[0]["what"].as_str().unwrap();
    assert!(
        what.starts_with(&format!(
            "10 blob reference(s) point into {name}, which MANIFEST-"
        )) && what.ends_with("does not list (first: key b00)"),
        "{what}"
    );
    let text = shale(&["check", path_str(d.path())]);
    assert_eq!(text.code, 1);
    assert!(text.stdout.contains(&name), "{}", text.stdout);
}
