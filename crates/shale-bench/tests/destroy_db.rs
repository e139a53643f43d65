//! `--db=DIR` at the start of a fresh run (issue 36, defect 1): only the
//! DB's own files are removed, a directory that is not the engine's DB and
//! a DB another handle has open are refused, and nothing else is lost.
//! Before, the bench removed the whole directory with `remove_dir_all`.

mod common;

use common::{run, run_ok, shale_args};

#[test]
fn a_directory_with_other_files_is_refused_and_kept() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("thesis.tex"), b"years of work").unwrap();
    std::fs::create_dir(d.path().join("photos")).unwrap();
    let (r, _) = run(&shale_args(
        d.path(),
        &["--benchmarks=fillseq", "--num=100"],
    ));
    let e = r.expect_err("a directory that is not a DB must be refused");
    assert!(e.0.contains("not a Shale DB"), "{e}");
    assert_eq!(
        std::fs::read(d.path().join("thesis.tex")).unwrap(),
        b"years of work"
    );
    assert!(d.path().join("photos").is_dir());
}

#[test]
fn a_db_in_use_is_refused_and_keeps_its_data() {
    let d = tempfile::tempdir().unwrap();
    let db = shale::Db::open(
        d.path(),
        shale::Options {
            create_if_missing: true,
            ..Default::default()
        },
    )
    .unwrap();
    db.put(b"precious", b"value").unwrap();
    db.flush().unwrap();
    let (r, _) = run(&shale_args(
        d.path(),
        &["--benchmarks=fillseq", "--num=100"],
    ));
    let e = r.expect_err("a DB in use must be refused");
    assert!(e.0.contains("in use"), "{e}");
    assert_eq!(db.get(b"precious").unwrap().as_deref(), Some(&b"value"[..]));
    db.close().unwrap();
}

#[test]
fn a_previous_runs_db_is_replaced_and_a_users_file_beside_it_kept() {
    let d = tempfile::tempdir().unwrap();
    let args = shale_args(d.path(), &["--benchmarks=fillseq", "--num=2000"]);
    run_ok(&args);
    std::fs::write(d.path().join("notes.txt"), b"mine").unwrap();
    run_ok(&args);
    assert_eq!(std::fs::read(d.path().join("notes.txt")).unwrap(), b"mine");
    // A fresh DB: one fill's keys, not two runs' tables.
    let o = shale::Options::default();
    let db = shale::Db::open(d.path(), o).unwrap();
    assert_eq!(db.range(..).count(), 2000);
    db.close().unwrap();
}

#[test]
fn the_memory_engine_touches_no_directory() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("keep"), b"x").unwrap();
    run_ok(&[
        "--engine=memory".to_string(),
        format!("--db={}", d.path().display()),
        "--benchmarks=fillseq".to_string(),
        "--num=100".to_string(),
    ]);
    assert!(d.path().join("keep").exists());
}
