use super::*;
use crate::db::Db;

fn opts() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

fn write_db(dir: &Path) {
    let db = Db::open(dir, opts()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
}

#[test]
fn removes_only_the_db_files_and_keeps_the_rest() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    write_db(&dir);
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    std::fs::create_dir(dir.join("sub")).unwrap();
    let r = destroy_db(&dir, &opts()).unwrap();
    assert_eq!(r.removed[0], "CURRENT");
    assert!(r.removed.iter().any(|n| n.ends_with(".sst")), "{r:?}");
    assert!(r.removed.iter().any(|n| n == "LOCK"), "{r:?}");
    assert_eq!(r.kept, vec!["notes.txt".to_string(), "sub".to_string()]);
    assert!(!r.removed_dir);
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    assert_eq!(left, r.kept);
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
}

#[test]
fn an_emptied_directory_is_removed_and_a_missing_one_is_fine() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    write_db(&dir);
    let r = destroy_db(&dir, &opts()).unwrap();
    assert!(r.removed_dir && r.kept.is_empty(), "{r:?}");
    assert!(!dir.exists());
    assert_eq!(destroy_db(&dir, &opts()).unwrap(), DestroyReport::default());
}

#[test]
fn an_open_db_is_refused_and_keeps_every_file() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    write_db(&dir);
    let db = Db::open(&dir, opts()).unwrap();
    let before = std::fs::read_dir(&dir).unwrap().count();
    let e = destroy_db(&dir, &opts()).unwrap_err();
    assert!(
        matches!(&e, Error::Locked(m) if m.contains("in use")),
        "{e:?}"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before);
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
}

#[test]
fn a_directory_that_is_not_a_db_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("photo.jpg"), b"x").unwrap();
    std::fs::write(d.path().join("LOG"), b"someone else's").unwrap();
    let e = destroy_db(d.path(), &opts()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("not a Shale DB")),
        "{e:?}"
    );
    assert!(d.path().join("photo.jpg").exists() && d.path().join("LOG").exists());
    // An empty directory is a DB with no files: removed.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert!(destroy_db(&empty, &opts()).unwrap().removed_dir);
}

#[test]
fn works_through_the_in_memory_file_system() {
    let fs = crate::fs::MemFileSystem::new();
    let o = Options {
        fs: std::sync::Arc::new(fs.clone()),
        ..opts()
    };
    let dir = Path::new("/db");
    let db = Db::open(dir, o.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();
    let r = destroy_db(dir, &o).unwrap();
    assert!(r.removed_dir, "{r:?}");
    assert!(!o.fs.exists(dir));
}
