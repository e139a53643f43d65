//! Shared by the CLI tests: running the built `shale` binary, and DBs made
//! by the engine with several families, merges, range deletes and expiring
//! values, partly in tables and partly only in the WAL, and DBs whose large
//! values are in blob files.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use std::collections::BTreeMap;

use shale::{
    BlobOptions, CfOptions, Db, Options, ReadOptions, UInt64AddOperator, WriteBatch, WriteOptions,
};

/// What a run of `shale` did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `shale args...`.
pub fn shale(args: &[&str]) -> Run {
    let o = Command::new(env!("CARGO_BIN_EXE_shale"))
        .args(args)
        .output()
        .expect("run shale");
    Run {
        code: o.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `shale args...`, which must succeed.
pub fn ok(args: &[&str]) -> String {
    let r = shale(args);
    assert_eq!(r.code, 0, "shale {args:?}: {}{}", r.stdout, r.stderr);
    r.stdout
}

/// The JSON lines of an output.
pub fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Names of the files of `dir` with extension `ext`, sorted.
pub fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    v.sort();
    v
}

/// Every file of `dir` with its bytes.
pub fn snapshot_dir(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

pub fn options() -> Options {
    Options {
        create_if_missing: true,
        ..Options::default()
    }
}

pub fn counters() -> CfOptions {
    CfOptions {
        merge_operator: Some(Arc::new(UInt64AddOperator)),
        ..CfOptions::default()
    }
}

/// A DB in `dir` with families `default`, `users` and `counters` (uint64add
/// merges): tables in every family (flushed), then a WAL holding a put, a
/// delete, merges, a range delete, a single delete and an expiring put.
///
/// Contents after it:
/// - default: `a` = "1", `b\xff` = "bin", `k000`..`k049` = "v<i>" except
///   `k010`..`k020` (range-deleted), `ttl` (expires in an hour) = "soon";
/// - users: `u1` = "alice", `u3` = "carol" (`u2` deleted);
/// - counters: `c` = 5 (3 + 2 as LE u64).
pub fn make_db(dir: &Path) {
    let db = Db::open(dir, options()).unwrap();
    let users = db.create_cf("users", CfOptions::default()).unwrap();
    let counters = db.create_cf("counters", counters()).unwrap();
    for i in 0..50 {
        db.put(format!("k{i:03}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    db.put(b"a", b"1").unwrap();
    db.put(b"b\xff", b"bin").unwrap();
    db.put_cf(&users, b"u1", b"alice").unwrap();
    db.put_cf(&users, b"u2", b"bob").unwrap();
    db.merge_cf(&counters, b"c", &3u64.to_le_bytes()).unwrap();
    db.flush().unwrap();
    db.flush_cf(&users).unwrap();
    db.flush_cf(&counters).unwrap();
    // Left in the WAL.
    let mut b = WriteBatch::new();
    b.put_cf(&users, b"u3", b"carol");
    b.delete_cf(&users, b"u2");
    b.merge_cf(&counters, b"c", &2u64.to_le_bytes());
    b.delete_range(b"k010", b"k021");
    b.single_delete(b"gone");
    db.write(b, &WriteOptions::default()).unwrap();
    db.put_with_ttl(b"ttl", b"soon", Duration::from_secs(3600))
        .unwrap();
    db.flush_wal(true).unwrap();
    drop(db);
}

/// A DB in `dir` holding `k000`..`k{n}` in several tables of the default
/// family (one flush per `per_table` keys) and nothing in its WAL.
pub fn make_tables_db(dir: &Path, n: usize, per_table: usize) {
    let db = Db::open(dir, options()).unwrap();
    for i in 0..n {
        db.put(
            format!("k{i:03}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
        if (i + 1) % per_table == 0 {
            db.flush().unwrap();
        }
    }
    db.flush().unwrap();
    db.close().unwrap();
}

/// Flips one byte of `path` at `offset`.
pub fn flip_byte(path: &Path, offset: u64) {
    let mut b = std::fs::read(path).unwrap();
    b[offset as usize] ^= 0x5a;
    std::fs::write(path, b).unwrap();
}

/// Options with key-value separation: values of 64 bytes or more go to
/// blob files (no garbage collection: garbage stays in the files).
pub fn blob_options() -> Options {
    {
        let base = options();
        Options {
            cf: CfOptions {
                blob: BlobOptions {
                    enable_blob_files: true,
                    min_blob_size: 64,
                    ..BlobOptions::default()
                },
                ..base.cf
            },
            ..base
        }
    }
}

/// The value of key `i` written in round `round`: 100..3000 bytes (every
/// seventh one 20 bytes, inline in its table).
pub fn blob_value(i: usize, round: usize) -> Vec<u8> {
    let len = if i % 7 == 3 {
        20
    } else {
        100 + (i * 397 + round * 131) % 2900
    };
    let mut v = format!("v{i}-r{round}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

/// A DB in `dir` whose values are mostly in blob files, and its contents:
/// `b00`..`b59` written, flushed and compacted to the last level; every
/// third overwritten and compacted again (the old blobs are garbage of the
/// first blob file); then every fifth overwritten and flushed to L0.
pub fn make_blob_db(dir: &Path) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let db = Db::open(dir, blob_options()).unwrap();
    let mut model = BTreeMap::new();
    let mut put = |i: usize, round: usize| {
        let (k, v) = (format!("b{i:02}").into_bytes(), blob_value(i, round));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    };
    (0..60).for_each(|i| put(i, 0));
    db.flush().unwrap();
    (0..60).step_by(3).for_each(|i| put(i, 1));
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    (0..60).step_by(5).for_each(|i| put(i, 2));
    db.flush().unwrap();
    db.close().unwrap();
    model
}

/// Reads every key of `model` from `db` by get, multi_get and a scan.
pub fn assert_reads(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]), "get {k:?}");
    }
    let keys: Vec<&[u8]> = model.keys().map(Vec::as_slice).collect();
    for (r, (k, v)) in db
        .multi_get(&keys, &ReadOptions::default())
        .into_iter()
        .zip(model)
    {
        assert_eq!(r.unwrap().as_deref(), Some(&v[..]), "multi_get {k:?}");
    }
    let scan: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(scan, want, "scan");
}

/// A numeric DB property.
pub fn num_property(db: &Db, name: &str) -> u64 {
    db.property(name)
        .unwrap_or_else(|| panic!("no property {name}"))
        .parse()
        .unwrap()
}
