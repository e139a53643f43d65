//! Key-value separation (blob files, issue 14): values of `min_blob_size`
//! bytes or more go to blob files at flush and compaction; point reads,
//! `multi_get` and iterators (both directions, at snapshots) read them
//! back; keys-only scans read no blob; overwrites become garbage counted in
//! the MANIFEST and garbage collection relocates the oldest files' blobs
//! until they are deleted; options change on reopen (blob files off: values
//! come back inline as collection relocates them); merges over blob values;
//! a missing blob file fails open (paranoid) or only the reads needing it.

mod common;

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

use shale::fs::MemFileSystem;
use shale::{
    BlobOptions, Db, Error, Options, ReadOptions, StringAppendOperator, WriteBatch, WriteOptions,
};

fn blob_opts(min: u64, gc: bool) -> BlobOptions {
    BlobOptions {
        enable_blob_files: true,
        min_blob_size: min,
        blob_file_size: 256 << 10,
        enable_blob_garbage_collection: gc,
        blob_garbage_collection_age_cutoff: 0.5,
        ..BlobOptions::default()
    }
}

fn options(blob: BlobOptions) -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 256 << 10,
            target_file_size_base: 256 << 10,
            max_bytes_for_level_base: 1 << 20,
            blob,
            ..Default::default()
        },
        ..Options::default()
    }
}

fn num(db: &Db, name: &str) -> u64 {
    db.property(name)
        .unwrap_or_else(|| panic!("no property {name}"))
        .parse()
        .unwrap()
}

fn value(i: u32, round: u32, len: usize) -> Vec<u8> {
    let mut v = format!("v{i}-{round}-").into_bytes();
    v.resize(len, b'a' + (i % 26) as u8);
    v
}

fn check_all(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model {
        let got = db.get(k).unwrap();
        assert_eq!(got.as_deref(), Some(v.as_slice()), "key {k:?}");
    }
    let keys: Vec<&[u8]> = model.keys().map(Vec::as_slice).collect();
    for (r, (_, v)) in db
        .multi_get(&keys, &ReadOptions::default())
        .into_iter()
        .zip(model)
    {
        assert_eq!(r.unwrap().as_deref(), Some(v.as_slice()));
    }
    let fwd: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).map(|r| r.unwrap()).collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(fwd, want);
    let back: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).rev().map(|r| r.unwrap()).collect();
    assert_eq!(back.into_iter().rev().collect::<Vec<_>>(), want);
}

#[test]
fn large_values_go_to_blob_files_and_read_back_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(blob_opts(100, false))).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..400u32 {
        // Half the values are below min_blob_size and stay inline.
        let len = if i % 2 == 0 {
            50
        } else {
            100 + (i as usize * 37) % 3000
        };
        let k = format!("k{i:05}").into_bytes();
        let v = value(i, 0, len);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    assert!(num(&db, "shale.num-blob-files") >= 1);
    assert!(common::files_ending(dir.path(), ".blob") >= 1);
    check_all(&db, &model);
    // Through compaction too, and at a snapshot taken before overwrites.
    let snap = db.snapshot();
    let old = model.clone();
    for i in (0..400u32).step_by(3) {
        let k = format!("k{i:05}").into_bytes();
        let v = value(i, 1, 200 + i as usize);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    check_all(&db, &model);
    for (k, v) in &old {
        let got = db
            .get_opt(
                k,
                &ReadOptions {
                    snapshot: Some(&snap),
                    ..ReadOptions::default()
                },
            )
            .unwrap();
        assert_eq!(got.as_deref(), Some(v.as_slice()));
    }
    drop(snap);
    // Reopen reads the same.
    drop(db);
    let db = Db::open(dir.path(), options(blob_opts(100, false))).unwrap();
    check_all(&db, &model);
}

#[test]
fn a_keys_only_scan_reads_no_blob() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            cache_size: 0,
            ..options(blob_opts(10, false))
        },
    )
    .unwrap();
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), &value(i, 0, 1000))
            .unwrap();
    }
    db.flush().unwrap();
    let before = num(&db, "shale.blob-reads");
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.seek_to_last();
    while it.valid() {
        it.prev();
    }
    it.status().unwrap();
    assert_eq!(n, 100);
    assert_eq!(
        num(&db, "shale.blob-reads"),
        before,
        "keys only: no blob read"
    );
    // Reading a value reads one blob.
    it.seek(b"k050");
    assert_eq!(it.value(), value(50, 0, 1000).as_slice());
    assert_eq!(num(&db, "shale.blob-reads"), before + 1);
}

#[test]
fn overwrites_become_garbage_and_collection_deletes_old_blob_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(blob_opts(64, true))).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..6u32 {
        for i in 0..300u32 {
            let k = format!("k{i:05}").into_bytes();
            let v = value(i, round, 1024);
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.compact_range(None, None).unwrap();
    check_all(&db, &model);
    // Only one live version of each key is left: files are deleted, the
    // rest are nearly free of garbage.
    let live = num(&db, "shale.live-blob-file-size");
    let total = num(&db, "shale.total-blob-file-size");
    assert!(
        live > 300 * 1024 && total < 3 * live,
        "live {live} total {total}"
    );
    assert_eq!(
        common::files_ending(dir.path(), ".blob") as u64,
        num(&db, "shale.num-blob-files")
    );
}

#[test]
fn blob_files_turned_off_on_reopen_bring_values_back_inline() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(blob_opts(10, false))).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..200u32 {
        let k = format!("k{i:05}").into_bytes();
        let v = value(i, 0, 500);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
    assert!(num(&db, "shale.num-blob-files") > 0);
    drop(db);
    // Off, with collection of every file: a full compaction relocates all
    // blobs into the tables and the blob files go.
    let off = BlobOptions {
        enable_blob_files: false,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: 1.0,
        ..BlobOptions::default()
    };
    let db = Db::open(dir.path(), options(off)).unwrap();
    check_all(&db, &model);
    db.compact_range(None, None).unwrap();
    check_all(&db, &model);
    assert_eq!(num(&db, "shale.num-blob-files"), 0);
    assert_eq!(common::files_ending(dir.path(), ".blob"), 0);
}

#[test]
fn merges_over_blob_values_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = options(blob_opts(10, true));
        Options {
            cf: shale::CfOptions {
                merge_operator: Some(std::sync::Arc::new(StringAppendOperator::new(b","))),
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let base = value(1, 0, 300);
    db.put(b"m", &base).unwrap();
    db.flush().unwrap();
    db.merge(b"m", b"x").unwrap();
    let mut want = base.clone();
    want.extend_from_slice(b",x");
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(want.as_slice()));
    let it: Vec<_> = db.range(..).map(|r| r.unwrap()).collect();
    assert_eq!(it, vec![(b"m".to_vec(), want.clone())]);
    let back: Vec<_> = db.range(..).rev().map(|r| r.unwrap()).collect();
    assert_eq!(back, vec![(b"m".to_vec(), want.clone())]);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(want.as_slice()));
}

#[test]
fn a_missing_blob_file_fails_open_or_only_its_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(blob_opts(100, false))).unwrap();
    db.put(b"big", &value(1, 0, 1000)).unwrap();
    db.put(b"small", b"s").unwrap();
    db.flush().unwrap();
    drop(db);
    let blob = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "blob"))
        .unwrap();
    std::fs::remove_file(&blob).unwrap();
    let name = blob.file_name().unwrap().to_string_lossy().to_string();
    match Db::open(dir.path(), options(blob_opts(100, false))) {
        Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains(&name), "{e}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("opened without {name}"),
    }
    let db = Db::open(
        dir.path(),
        Options {
            paranoid_checks: false,
            ..options(blob_opts(100, false))
        },
    )
    .unwrap();
    assert_eq!(db.get(b"small").unwrap().as_deref(), Some(&b"s"[..]));
    match db.get(b"big") {
        Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains(&name), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn randomized_against_a_model_with_gc_snapshots_and_reopens() {
    let seed: u64 = std::env::var("SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random);
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut blob = blob_opts(rng.gen_range(0..2000), rng.gen_bool(0.7));
    let mut db = Db::open(dir.path(), options(blob.clone())).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for step in 0..3000u32 {
        let i = rng.gen_range(0..500u32);
        let k = format!("k{i:05}").into_bytes();
        match rng.gen_range(0..10) {
            0 => {
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            _ => {
                let len = if rng.gen_bool(0.1) {
                    rng.gen_range(0..65536)
                } else {
                    rng.gen_range(0..3000)
                };
                let v = value(i, step, len);
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        match rng.gen_range(0..400) {
            0 => db.flush().unwrap(),
            1 => db.compact_range(None, None).unwrap(),
            2 => {
                let a = format!("k{:05}", rng.gen_range(0..500)).into_bytes();
                let b = format!("k{:05}", rng.gen_range(0..500)).into_bytes();
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                db.compact_range(Some(&lo), Some(&hi)).unwrap();
            }
            3 => {
                // Options change on reopen.
                blob = blob_opts(rng.gen_range(0..2000), rng.gen_bool(0.7));
                blob.enable_blob_files = rng.gen_bool(0.8);
                drop(db);
                db = Db::open(dir.path(), options(blob.clone())).unwrap();
            }
            4 => check_all(&db, &model),
            _ => {}
        }
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    check_all(&db, &model);
    assert_eq!(
        common::files_ending(dir.path(), ".blob") as u64,
        num(&db, "shale.num-blob-files"),
        "every blob file on disk is live"
    );
}

/// Regression (bench helper's report): with blob files, write-amp counted
/// blob bytes written but not blob bytes flushed (42x for a flush-only
/// run in `shale.compaction-stats-json`), and no counter gave the blob
/// bytes written.
#[test]
fn write_amp_counts_blob_bytes_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(blob_opts(100, false))).unwrap();
    for i in 0..200u32 {
        db.put(format!("k{i:05}").as_bytes(), &value(i, 0, 1024))
            .unwrap();
    }
    db.flush().unwrap();
    let s = db.stats().compaction;
    let blob_bytes = num(&db, "shale.blob-bytes-written");
    assert!(blob_bytes >= 200 * 1024, "{blob_bytes}");
    assert_eq!(s.blob_bytes_written, blob_bytes);
    // One flush, nothing rewritten: write-amp 1.
    assert!((s.write_amp - 1.0).abs() < 1e-9, "{}", s.write_amp);
    let json = db.property("shale.compaction-stats-json").unwrap();
    assert!(json.contains("\"w_amp\": 1.0000"), "{json}");
    assert!(
        json.contains(&format!("\"blob_bytes_written\": {blob_bytes}")),
        "{json}"
    );
    let text = db.property("shale.stats").unwrap();
    assert!(text.contains("Blob file count: 1,"), "{text}");
}

/// Blob file reads have their own IO purpose (`blob`, issue 16's list):
/// a point read of a separated value reads the blob file under it, not
/// under `user`.
#[test]
fn blob_reads_are_accounted_as_their_own_purpose() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            cache_size: 0,
            ..options(blob_opts(100, false))
        },
    )
    .unwrap();
    db.put(b"k", &value(1, 0, 8000)).unwrap();
    db.flush().unwrap();
    let before = num(&db, "shale.io-read-bytes-blob");
    assert_eq!(db.get(b"k").unwrap().unwrap().len(), 8000);
    let after = num(&db, "shale.io-read-bytes-blob");
    assert!(
        after >= before + 8000,
        "{before} -> {after}: {}",
        db.property("shale.io-stats").unwrap()
    );
    assert!(db.property("shale.io-stats").unwrap().contains("blob"));
}

/// With a bounded `max_open_files`, blob readers share the table cache's
/// bound (`max_open_files - 10` readers, tables and blob files together):
/// a DB of many more blob files than that reads every value back, by
/// `get`, `multi_get`, an iterator and a relocating compaction, while
/// `shale.num-open-blob-files` never passes the bound. Before, every live
/// blob file kept a reader open until it was deleted.
#[test]
fn blob_readers_stay_within_max_open_files() {
    const BOUND: u64 = 10; // max_open_files 20, less the 10 reserved
    let dir = tempfile::tempdir().unwrap();
    let o = {
        let base = options(BlobOptions::default());
        Options {
            max_open_files: 20,
            // No blob in the block cache: every read reaches a blob file.
            cache_size: 0,
            cf: shale::CfOptions {
                blob: BlobOptions {
                    blob_file_size: 8 << 10,
                    ..blob_opts(100, true)
                },
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..4u32 {
        for i in 0..100u32 {
            let k = format!("k{:04}", i * 4 + round).into_bytes();
            let v = value(i, round, 1500);
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
    }
    let open_within_bound = |db: &Db, what: &str| {
        let blobs = num(db, "shale.num-open-blob-files");
        let tables = num(db, "shale.num-open-tables");
        assert!(
            blobs + tables <= BOUND,
            "{what}: {blobs} blob and {tables} table readers open"
        );
    };
    let files = num(&db, "shale.num-blob-files");
    assert!(files >= 4 * BOUND, "only {files} blob files");
    open_within_bound(&db, "after the flushes");
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
        open_within_bound(&db, "get");
    }
    // Point reads, multi_get and both iteration directions.
    check_all(&db, &model);
    open_within_bound(&db, "check_all");
    // Garbage collection (age cutoff 0.5) reads and relocates half the
    // blob files through the same bounded readers.
    db.compact_range(None, None).unwrap();
    open_within_bound(&db, "compaction");
    check_all(&db, &model);
    db.close().unwrap();
    // Open checks every blob file (paranoid_checks), one at a time.
    let db = Db::open(dir.path(), o).unwrap();
    open_within_bound(&db, "reopen");
    check_all(&db, &model);
    open_within_bound(&db, "reads after reopen");
    assert!(num(&db, "shale.num-open-blob-files") > 0);
}

/// The recovery flush at open separates values as a flush does (RocksDB's
/// `WriteLevel0TableForRecovery`), with `blob_file_starting_level` 0:
/// after a process crash that left the writes only in the WAL, the tables
/// written at open hold references and the values are in new blob files
/// the MANIFEST lists (they read back, and again after a clean reopen).
/// With `blob_file_starting_level` 1 the recovered values stay inline, as
/// a flush's would. Before, recovered values always stayed inline.
#[test]
fn recovery_at_open_writes_large_values_to_blob_files() {
    for starting_level in [0, 1] {
        let mem = Arc::new(MemFileSystem::new());
        let o = |fs: Arc<MemFileSystem>| {
            let base = options(BlobOptions::default());
            Options {
                fs,
                cf: shale::CfOptions {
                    blob: BlobOptions {
                        blob_file_starting_level: starting_level,
                        ..blob_opts(100, false)
                    },
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open("/db", o(Arc::clone(&mem))).unwrap();
        let mut model = BTreeMap::new();
        let sync = WriteOptions {
            sync: true,
            disable_wal: false,
        };
        for i in 0..60u32 {
            let len = if i % 6 == 0 { 20 } else { 2000 };
            let (k, v) = (format!("k{i:03}").into_bytes(), value(i, 0, len));
            let mut b = WriteBatch::new();
            b.put(&k, &v);
            db.write(b, &sync).unwrap();
            model.insert(k, v);
        }
        assert_eq!(num(&db, "shale.num-files-at-level0"), 0, "nothing flushed");
        let image = Arc::new(mem.crash_process());
        let db2 = Db::open("/db", o(Arc::clone(&image))).unwrap();
        let ctx = format!("blob_file_starting_level {starting_level}");
        check_all(&db2, &model);
        let tables = num(&db2, "shale.total-sst-files-size");
        if starting_level == 0 {
            assert!(num(&db2, "shale.num-blob-files") >= 1, "{ctx}");
            // 50 values of 2000 bytes are in blob files, not the tables.
            assert!(num(&db2, "shale.live-blob-file-size") >= 50 * 2000, "{ctx}");
            assert!(tables < 20_000, "{ctx}: {tables} bytes of tables");
        } else {
            assert_eq!(num(&db2, "shale.num-blob-files"), 0, "{ctx}");
            assert!(tables >= 50 * 2000, "{ctx}: {tables} bytes of tables");
        }
        db2.close().unwrap();
        let db3 = Db::open("/db", o(image)).unwrap();
        check_all(&db3, &model);
        drop(db);
    }
}

/// The numbers of the files named `NNNNNN<suffix>` in `dir`, ascending.
fn file_numbers(dir: &std::path::Path, suffix: &str) -> Vec<u64> {
    let fs = shale::fs::PosixFileSystem::default();
    common::sorted_names(&fs, dir.to_str().unwrap(), |n| n.ends_with(suffix))
        .iter()
        .map(|n| n.trim_end_matches(suffix).parse().unwrap())
        .collect()
}

/// The numbers of the blob files in `dir`, ascending.
fn blob_numbers(dir: &std::path::Path) -> Vec<u64> {
    file_numbers(dir, ".blob")
}

/// The numbers of the tables in `dir`, ascending.
fn table_numbers(dir: &std::path::Path) -> Vec<u64> {
    file_numbers(dir, ".sst")
}

/// Writes keys `keys` at `round` (1 KiB values) and flushes: one blob
/// file per call (the values fit in one).
fn put_flush(
    db: &Db,
    keys: std::ops::Range<u32>,
    round: u32,
    model: &mut BTreeMap<Vec<u8>, Vec<u8>>,
) {
    for i in keys {
        let k = format!("k{i:05}").into_bytes();
        let v = value(i, round, 1024);
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    db.flush().unwrap();
}

/// `blob_garbage_collection_min_garbage_ratio`: a file below the age
/// cutoff is relocated only once its garbage share reaches the ratio; at
/// 0 (RocksDB's rule) every file below the cutoff is, garbage or not.
#[test]
fn min_garbage_ratio_relocates_only_files_with_that_much_garbage() {
    for ratio in [0.0, 0.5] {
        let dir = tempfile::tempdir().unwrap();
        let blob = BlobOptions {
            blob_garbage_collection_age_cutoff: 1.0,
            blob_garbage_collection_min_garbage_ratio: ratio,
            ..blob_opts(64, true)
        };
        let opts = {
            let base = options(blob);
            Options {
                cf: shale::CfOptions {
                    disable_auto_compactions: true,
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open(dir.path(), opts).unwrap();
        let mut model = BTreeMap::new();
        put_flush(&db, 0..100, 0, &mut model);
        put_flush(&db, 100..200, 0, &mut model);
        let first = blob_numbers(dir.path());
        assert_eq!(first.len(), 2, "{first:?}");
        let tables = table_numbers(dir.path());
        // No garbage yet: with a ratio, nothing moves, and the tables
        // (disjoint, referencing only files the ratio keeps) go down by
        // trivial moves instead of being rewritten.
        db.compact_range(None, None).unwrap();
        check_all(&db, &model);
        let after = blob_numbers(dir.path());
        if ratio > 0.0 {
            assert_eq!(after, first);
            assert_eq!(table_numbers(dir.path()), tables, "moved, not rewritten");
        } else {
            assert!(after.iter().all(|n| !first.contains(n)), "{after:?}");
            continue;
        }
        // 60% of the first file and 10% of the second become garbage
        // (counted by the compaction that drops the old versions), then
        // the next compaction relocates the first file only.
        put_flush(&db, 0..60, 1, &mut model);
        put_flush(&db, 100..110, 1, &mut model);
        db.compact_range(None, None).unwrap();
        check_all(&db, &model);
        assert!(blob_numbers(dir.path()).starts_with(&first));
        db.compact_range(None, None).unwrap();
        check_all(&db, &model);
        let now = blob_numbers(dir.path());
        assert!(!now.contains(&first[0]), "{now:?}");
        assert!(now.contains(&first[1]), "{now:?}");
        drop(db);
        let db = Db::open(dir.path(), options(blob_opts(64, true))).unwrap();
        check_all(&db, &model);
    }
}

/// A forced collection relocates the oldest batch even when its files'
/// garbage shares are under `min_garbage_ratio`: skipping them would
/// leave the tables it compacts referencing the batch, and the picker
/// would pick them again for ever.
#[test]
fn forced_collection_relocates_its_batch_whatever_the_min_garbage_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let blob = BlobOptions {
        blob_garbage_collection_age_cutoff: 1.0,
        blob_garbage_collection_min_garbage_ratio: 0.9,
        blob_garbage_collection_force_threshold: 0.15,
        ..blob_opts(64, true)
    };
    let db = Db::open(dir.path(), options(blob.clone())).unwrap();
    let mut model = BTreeMap::new();
    put_flush(&db, 0..100, 0, &mut model);
    put_flush(&db, 100..200, 0, &mut model);
    db.compact_range(None, None).unwrap();
    let first = blob_numbers(dir.path());
    put_flush(&db, 0..50, 1, &mut model);
    db.compact_range(None, None).unwrap();
    // The oldest batch (all three files: one table names the oldest) is
    // 20% garbage, past the force threshold, and each of its files is
    // under the ratio. Forced compactions run on their own and must end
    // (before the exemption they never did).
    let (tx, rx) = std::sync::mpsc::channel();
    let db = Arc::new(db);
    let waiter = Arc::clone(&db);
    std::thread::spawn(move || tx.send(waiter.wait_for_compaction()).unwrap());
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("forced collection still compacting after 60 s")
        .unwrap();
    check_all(&db, &model);
    let now = blob_numbers(dir.path());
    assert!(!now.contains(&first[0]), "first {first:?} now {now:?}");
}
