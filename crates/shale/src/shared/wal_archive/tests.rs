use std::path::Path;

use super::*;
use crate::fs::MemFileSystem;
use crate::version::filename::log_file_name;

fn write_wal(fs: &MemFileSystem, dir: &Path, n: u64, bytes: usize) {
    let mut f = fs.create(&dir.join(log_file_name(n))).unwrap();
    f.append(&vec![7u8; bytes]).unwrap();
    f.sync().unwrap();
}

fn opts(ttl: u64, mb: u64) -> Options {
    Options {
        wal_ttl_seconds: ttl,
        wal_size_limit_mb: mb,
        ..Options::default()
    }
}

#[test]
fn ttl_removes_what_was_archived_that_long_ago() {
    let fs = MemFileSystem::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let o = opts(10, 0);
    let a = WalArchive::open(&fs, dir, &o).unwrap();
    for n in 1..=3 {
        write_wal(&fs, dir, n, 100);
    }
    a.archive(&fs, dir, &log_file_name(1), 1, 100).unwrap();
    a.archive(&fs, dir, &log_file_name(2), 2, 105).unwrap();
    a.archive(&fs, dir, &log_file_name(3), 3, 109).unwrap();
    assert!(!fs.exists(&dir.join(log_file_name(1))));
    assert!(fs.exists(&archive_dir(dir).join(log_file_name(1))));
    assert!(a.trim(&fs, dir, &o, 109).is_empty());
    assert_eq!(a.numbers(), vec![1, 2, 3]);
    assert!(a.trim(&fs, dir, &o, 110).is_empty());
    assert_eq!(a.numbers(), vec![2, 3]);
    assert!(!fs.exists(&archive_dir(dir).join(log_file_name(1))));
    a.trim(&fs, dir, &o, 200);
    assert!(a.numbers().is_empty());
    assert!(fs.list(&archive_dir(dir)).unwrap().is_empty());
}

#[test]
fn size_limit_removes_the_oldest_first() {
    let fs = MemFileSystem::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let o = opts(0, 1);
    let a = WalArchive::open(&fs, dir, &o).unwrap();
    for n in [4, 9, 12] {
        write_wal(&fs, dir, n, 400 << 10);
        a.archive(&fs, dir, &log_file_name(n), n, 0).unwrap();
    }
    // 1.2 MiB > 1 MiB: WAL 4 goes.
    a.trim(&fs, dir, &o, 1 << 40);
    assert_eq!(a.numbers(), vec![9, 12]);
    // A reopen finds the survivors.
    let b = WalArchive::open(&fs, dir, &o).unwrap();
    assert_eq!(b.numbers(), vec![9, 12]);
}

#[test]
fn no_archive_without_the_options() {
    let fs = MemFileSystem::new();
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    WalArchive::open(&fs, dir, &Options::default()).unwrap();
    assert!(!fs.exists(&archive_dir(dir)));
}
