//! `shale export-cf` and `shale import-cf` (issue 39): a family exported
//! from one DB (users: plain puts; counters: uint64add merges, whose
//! operator the import takes from the export) is imported into another;
//! bad input is refused with a clear message.

mod common;

use common::*;

#[test]
fn export_then_import_into_another_db() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let exp = tempfile::tempdir().unwrap();
    make_db(a.path());
    make_db(b.path());
    let users_dir = exp.path().join("users");
    let out = ok(&[
        "export-cf",
        path_str(a.path()),
        "users",
        path_str(&users_dir),
    ]);
    assert!(out.starts_with("exported column family 'users'"), "{out}");
    assert!(users_dir.join("EXPORT-METADATA.json").exists());
    let counters_dir = exp.path().join("counters");
    ok(&[
        "export-cf",
        path_str(a.path()),
        "counters",
        path_str(&counters_dir),
    ]);
    let db = path_str(b.path());
    let out = ok(&["import-cf", db, "people", path_str(&users_dir)]);
    assert!(out.contains("as column family 'people'"), "{out}");
    assert_eq!(ok(&["get", db, "--cf", "people", "u1"]), "alice\n");
    assert_eq!(ok(&["get", db, "--cf", "people", "u3"]), "carol\n");
    assert_eq!(shale(&["get", db, "--cf", "people", "u2"]).code, 1);
    ok(&["import-cf", db, "sums", path_str(&counters_dir), "--move"]);
    assert!(files_with(&counters_dir, "sst").is_empty());
    assert_eq!(
        ok(&["get", db, "--cf", "sums", "--hex", "63"]),
        "0500000000000000\n"
    );
    // The source is untouched and both DBs check clean.
    assert_eq!(
        ok(&["get", path_str(a.path()), "--cf", "users", "u1"]),
        "alice\n"
    );
    ok(&["check", db]);

    // Refusals: an existing family, an existing export directory, a
    // missing family, a directory that is no export.
    let r = shale(&["import-cf", db, "people", path_str(&users_dir)]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    let r = shale(&[
        "export-cf",
        path_str(a.path()),
        "users",
        path_str(&users_dir),
    ]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("already exists"), "{}", r.stderr);
    let r = shale(&[
        "export-cf",
        path_str(a.path()),
        "nope",
        path_str(&exp.path().join("x")),
    ]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no column family 'nope'"), "{}", r.stderr);
    let r = shale(&["import-cf", db, "x", path_str(exp.path())]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("EXPORT-METADATA.json"), "{}", r.stderr);
}
