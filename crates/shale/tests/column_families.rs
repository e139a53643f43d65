//! Column families: bad input and the promises around create, drop, reopen
//! and listing (issue 11). The randomized coverage of every call over
//! families is in model.rs and concurrent_model.rs.

mod common;

use std::path::Path;

use shale::{Cf, CfOptions, Db, Error, Options, ReadOptions, WriteBatch, WriteOptions};

fn opts() -> Options {
    {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                write_buffer_size: 64 << 10,
                ..base.cf
            },
            ..base
        }
    }
}

/// Asserts `r` is `InvalidArgument` whose message contains every word.
#[track_caller]
fn invalid_naming<T: std::fmt::Debug>(r: shale::Result<T>, words: &[&str]) {
    match &r {
        Err(Error::InvalidArgument(m)) if words.iter().all(|w| m.contains(w)) => {}
        _ => panic!("want InvalidArgument naming {words:?}, got {r:?}"),
    }
}

fn get(db: &Db, cf: &Cf, k: &[u8]) -> Option<Vec<u8>> {
    db.get_cf(cf, k).unwrap().map(|v| v.to_vec())
}

fn names(db: &Db) -> Vec<String> {
    db.cfs().iter().map(|c| c.name().to_string()).collect()
}

fn list(dir: &Path) -> Vec<String> {
    Db::list_cfs(dir, &opts()).unwrap()
}

fn files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    v.sort();
    v
}

fn count_files(dir: &Path, ext: &str) -> usize {
    files(dir, ext).len()
}

fn num_property(db: &Db, cf: &Cf, name: &str) -> u64 {
    db.property_cf(cf, name)
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

#[test]
fn creating_an_existing_name_is_invalid_and_loses_nothing() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    db.put_cf(&a, b"flushed", b"1").unwrap();
    db.flush_cf(&a).unwrap();
    db.put_cf(&a, b"in-memtable", b"2").unwrap();
    invalid_naming(db.create_cf("a", CfOptions::default()), &["\"a\""]);
    invalid_naming(
        db.create_cf("default", CfOptions::default()),
        &["\"default\""],
    );
    // The batch form creates all or none.
    invalid_naming(
        db.create_cfs(&[("b", CfOptions::default()), ("a", CfOptions::default())]),
        &["\"a\""],
    );
    invalid_naming(
        db.create_cfs(&[("b", CfOptions::default()), ("b", CfOptions::default())]),
        &["\"b\""],
    );
    assert!(db.cf("b").is_none());
    assert_eq!(names(&db), ["default", "a"]);
    let check = |db: &Db| {
        let a = db.cf("a").unwrap();
        assert_eq!(get(db, &a, b"flushed").unwrap(), b"1");
        assert_eq!(get(db, &a, b"in-memtable").unwrap(), b"2");
    };
    check(&db);
    db.close().unwrap();
    assert_eq!(list(d.path()), ["default", "a"]);
    let db = Db::open(d.path(), opts()).unwrap();
    check(&db);
    assert_eq!(names(&db), ["default", "a"]);
}

#[test]
fn a_dropped_handle_fails_every_call() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    let b = db.create_cf("b", CfOptions::default()).unwrap();
    db.put_cf(&a, b"k", b"a").unwrap();
    db.put_cf(&b, b"k", b"b").unwrap();
    db.drop_cf(&a).unwrap();
    let w: &[&str] = &["\"a\"", "dropped"];
    invalid_naming(db.put_cf(&a, b"k", b"v"), w);
    invalid_naming(db.delete_cf(&a, b"k"), w);
    invalid_naming(db.get_cf(&a, b"k"), w);
    let snap = db.snapshot();
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    invalid_naming(db.get_cf_opt(&a, b"k", &ro), w);
    for r in db.multi_get_cf(&a, &[b"k", b"x"], &ro) {
        invalid_naming(r, w);
    }
    let mut it = db.iter_cf(&a, &ro);
    it.seek_to_first();
    assert!(!it.valid());
    invalid_naming(it.status(), w);
    invalid_naming(db.range_cf(&a, ..).next().unwrap(), w);
    invalid_naming(db.range_cf(&a, ..).next_back().unwrap(), w);
    invalid_naming(db.prefix_cf(&a, b"k").next().unwrap(), w);
    invalid_naming(db.flush_cf(&a), w);
    invalid_naming(db.compact_range_cf(&a, None, None), w);
    invalid_naming(db.drop_cf(&a), w);
    assert!(db.property_cf(&a, "shale.estimate-num-keys").is_none());
    // A batch naming it fails whole.
    let mut batch = WriteBatch::new();
    batch.put_cf(&b, b"k", b"never");
    batch.put(b"k", b"never");
    batch.put_cf(&a, b"k", b"v");
    // (A batch holds family ids, so its error names the id.)
    invalid_naming(db.write(batch, &WriteOptions::default()), &["dropped"]);
    assert_eq!(get(&db, &b, b"k").unwrap(), b"b");
    assert!(db.get(b"k").unwrap().is_none());
    assert!(db.cf("a").is_none());
    assert_eq!(names(&db), ["default", "b"]);
}

#[test]
fn the_default_family_cannot_be_dropped() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    db.put(b"k", b"v").unwrap();
    invalid_naming(db.drop_cf(&db.default_cf()), &["default"]);
    invalid_naming(db.drop_cf(&db.cf("default").unwrap()), &["default"]);
    assert_eq!(db.default_cf().id(), 0);
    assert_eq!(db.default_cf().name(), "default");
    db.put_cf(&db.default_cf(), b"k2", b"v2").unwrap();
    assert_eq!(db.get(b"k").unwrap().unwrap().to_vec(), b"v");
    db.close().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(db.get(b"k2").unwrap().unwrap().to_vec(), b"v2");
    assert_eq!(names(&db), ["default"]);
}

/// One bad value for each `CfOptions` field `validate` checks.
fn bad_options() -> Vec<(&'static str, CfOptions)> {
    let d = CfOptions::default;
    vec![
        (
            "write_buffer_size",
            CfOptions {
                write_buffer_size: 10,
                ..d()
            },
        ),
        (
            "max_write_buffer_number",
            CfOptions {
                max_write_buffer_number: 1,
                ..d()
            },
        ),
        (
            "memtable_bloom_size_ratio",
            CfOptions {
                memtable_bloom_size_ratio: 0.5,
                ..d()
            },
        ),
        (
            "block_size",
            CfOptions {
                block_size: 0,
                ..d()
            },
        ),
        (
            "block_restart_interval",
            CfOptions {
                block_restart_interval: 0,
                ..d()
            },
        ),
        (
            "bloom_bits_per_key",
            CfOptions {
                bloom_bits_per_key: 1000,
                ..d()
            },
        ),
        (
            "compression_per_level",
            CfOptions {
                compression_per_level: vec![],
                ..d()
            },
        ),
        (
            "level0_file_num_compaction_trigger",
            CfOptions {
                level0_file_num_compaction_trigger: 0,
                ..d()
            },
        ),
        (
            "L0 triggers",
            CfOptions {
                level0_slowdown_writes_trigger: 50,
                level0_stop_writes_trigger: 40,
                ..d()
            },
        ),
        (
            "max_bytes_for_level_multiplier",
            CfOptions {
                max_bytes_for_level_multiplier: 1.0,
                ..d()
            },
        ),
        (
            "target_file_size_base",
            CfOptions {
                target_file_size_base: 0,
                ..d()
            },
        ),
        (
            "target_file_size_multiplier",
            CfOptions {
                target_file_size_multiplier: 0,
                ..d()
            },
        ),
        (
            "soft_pending_compaction_bytes_limit",
            CfOptions {
                soft_pending_compaction_bytes_limit: 10,
                hard_pending_compaction_bytes_limit: 5,
                ..d()
            },
        ),
    ]
}

#[test]
fn invalid_cf_options_are_refused_at_create_and_at_open_naming_family_and_option() {
    let d = tempfile::tempdir().unwrap();
    {
        let db = Db::open(d.path(), opts()).unwrap();
        let a = db.create_cf("a", CfOptions::default()).unwrap();
        db.put_cf(&a, b"k", b"v").unwrap();
        for (option, bad) in bad_options() {
            invalid_naming(bad.validate(), &[option]);
            invalid_naming(db.create_cf("bad", bad.clone()), &[option, "\"bad\""]);
            invalid_naming(
                db.create_cfs(&[("ok", CfOptions::default()), ("bad", bad)]),
                &[option, "\"bad\""],
            );
            assert!(db.cf("ok").is_none() && db.cf("bad").is_none());
        }
        db.close().unwrap();
    }
    assert_eq!(list(d.path()), ["default", "a"]);
    for (option, bad) in bad_options() {
        for create_missing in [false, true] {
            for name in ["a", "missing"] {
                let o = Options {
                    column_families: vec![(name.to_string(), bad.clone())],
                    create_missing_column_families: create_missing,
                    ..opts()
                };
                invalid_naming(Db::open(d.path(), o), &[option, &format!("\"{name}\"")]);
            }
        }
    }
    // `default` takes `Options::cf` and may not be listed.
    let o = Options {
        column_families: vec![("default".into(), CfOptions::default())],
        ..opts()
    };
    invalid_naming(Db::open(d.path(), o), &["default"]);
    // Nothing was changed by the refused opens.
    assert_eq!(list(d.path()), ["default", "a"]);
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(get(&db, &db.cf("a").unwrap(), b"k").unwrap(), b"v");
}

#[test]
fn a_handle_of_another_db_or_of_an_earlier_open_is_refused() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open(d2.path(), opts()).unwrap();
    let a1 = db1.create_cf("a", CfOptions::default()).unwrap();
    let a2 = db2.create_cf("a", CfOptions::default()).unwrap();
    assert_eq!(a1.id(), a2.id());
    db1.put_cf(&a1, b"k", b"1").unwrap();
    for h in [&a1, &db1.default_cf()] {
        let w: &[&str] = &[&format!("\"{}\"", h.name())];
        invalid_naming(db2.put_cf(h, b"k", b"x"), w);
        invalid_naming(db2.delete_cf(h, b"k"), w);
        invalid_naming(db2.get_cf(h, b"k"), w);
        invalid_naming(db2.get_cf_opt(h, b"k", &ReadOptions::new()), w);
        invalid_naming(
            db2.multi_get_cf(h, &[b"k"], &ReadOptions::new()).remove(0),
            w,
        );
        invalid_naming(db2.range_cf(h, ..).next().unwrap(), w);
        invalid_naming(db2.prefix_cf(h, b"k").next().unwrap(), w);
        invalid_naming(db2.flush_cf(h), w);
        invalid_naming(db2.compact_range_cf(h, None, None), w);
        invalid_naming(db2.drop_cf(h), w);
        assert!(db2.property_cf(h, "shale.estimate-num-keys").is_none());
    }
    // A batch naming a handle of another DB is refused whole.
    let mut batch = WriteBatch::new();
    batch.put_cf(&a2, b"k2", b"x");
    batch.put_cf(&a1, b"k", b"x");
    invalid_naming(db2.write(batch, &WriteOptions::default()), &[]);
    assert_eq!(get(&db2, &a2, b"k2"), None);
    assert_eq!(get(&db2, &a2, b"k"), None);
    assert_eq!(get(&db1, &a1, b"k").unwrap(), b"1");
    // After a reopen the old handles are refused, the new ones work.
    db1.close().unwrap();
    let db1 = Db::open(d1.path(), opts()).unwrap();
    invalid_naming(db1.get_cf(&a1, b"k"), &["\"a\""]);
    let mut batch = WriteBatch::new();
    batch.put_cf(&a1, b"k", b"stale");
    invalid_naming(db1.write(batch, &WriteOptions::default()), &[]);
    let a1 = db1.cf("a").unwrap();
    assert_eq!(get(&db1, &a1, b"k").unwrap(), b"1");
}

#[test]
fn list_cfs_follows_creates_drops_and_reopens() {
    let d = tempfile::tempdir().unwrap();
    assert!(Db::list_cfs(d.path().join("nothing"), &opts()).is_err());
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(list(d.path()), ["default"]);
    db.create_cf("a", CfOptions::default()).unwrap();
    db.create_cfs(&[("b", CfOptions::default()), ("c", CfOptions::default())])
        .unwrap();
    assert_eq!(list(d.path()), ["default", "a", "b", "c"]);
    assert_eq!(
        db.property("shale.num-column-families").as_deref(),
        Some("4")
    );
    let b = db.cf("b").unwrap();
    let old_id = b.id();
    db.drop_cf(&b).unwrap();
    assert_eq!(list(d.path()), ["default", "a", "c"]);
    let b = db.create_cf("b", CfOptions::default()).unwrap();
    assert!(b.id() > db.cf("c").unwrap().id() && b.id() != old_id);
    assert_eq!(list(d.path()), ["default", "a", "c", "b"]);
    assert_eq!(names(&db), ["default", "a", "c", "b"]);
    db.close().unwrap();
    assert_eq!(list(d.path()), ["default", "a", "c", "b"]);
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(names(&db), ["default", "a", "c", "b"]);
    assert_eq!(db.cf("b").unwrap().id(), b.id());
    // Ids are not reused after a reopen either.
    let e = db.create_cf("e", CfOptions::default()).unwrap();
    assert!(e.id() > b.id());
}

#[test]
fn open_with_a_missing_family_listed_needs_create_missing_column_families() {
    let d = tempfile::tempdir().unwrap();
    Db::open(d.path(), opts()).unwrap().close().unwrap();
    let listing = |create| Options {
        column_families: vec![("x".into(), CfOptions::default())],
        create_missing_column_families: create,
        ..opts()
    };
    invalid_naming(Db::open(d.path(), listing(false)), &["\"x\""]);
    assert_eq!(list(d.path()), ["default"]);
    let db = Db::open(d.path(), listing(true)).unwrap();
    let x = db.cf("x").expect("created at open");
    db.put_cf(&x, b"k", b"v").unwrap();
    db.close().unwrap();
    assert_eq!(list(d.path()), ["default", "x"]);
    // Not listed: opens with its persisted options, data intact.
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(get(&db, &db.cf("x").unwrap(), b"k").unwrap(), b"v");
}

/// Writes `n` keys `{tag}{i}` of 100-byte values into `cf`.
fn fill(db: &Db, cf: &Cf, tag: &str, n: usize) {
    for i in 0..n {
        db.put_cf(cf, format!("{tag}{i:06}").as_bytes(), &[b'v'; 100])
            .unwrap();
    }
}

fn l0(db: &Db, cf: &Cf) -> u64 {
    num_property(db, cf, "shale.num-files-at-level0")
}

#[test]
fn families_reopen_with_their_persisted_options() {
    let d = tempfile::tempdir().unwrap();
    let quiet = CfOptions {
        level0_file_num_compaction_trigger: 100,
        level0_slowdown_writes_trigger: 100,
        level0_stop_writes_trigger: 100,
        ..CfOptions::default()
    };
    let small = CfOptions {
        write_buffer_size: 32 << 10,
        ..quiet.clone()
    };
    let big = CfOptions {
        write_buffer_size: 16 << 20,
        bloom_bits_per_key: 0,
        ..quiet.clone()
    };
    let bloom = CfOptions {
        bloom_bits_per_key: 40,
        ..big.clone()
    };
    {
        let db = Db::open(d.path(), opts()).unwrap();
        db.create_cfs(&[
            ("small", small.clone()),
            ("big", big.clone()),
            ("bloom", bloom.clone()),
        ])
        .unwrap();
        db.close().unwrap();
    }
    // Two opens without listing them: the persisted write buffer sizes and
    // bloom bits act.
    for round in 0..2u64 {
        let db = Db::open(d.path(), opts()).unwrap();
        let cf = |n: &str| db.cf(n).unwrap();
        let (s, b, f) = (cf("small"), cf("big"), cf("bloom"));
        let (s0, b0) = (l0(&db, &s), l0(&db, &b));
        for c in [&s, &b, &f] {
            fill(&db, c, &format!("r{round}-"), 3000);
        }
        db.wait_for_compaction().unwrap();
        // 300 KB through a 32 KiB memtable flushes several times; a 16 MiB
        // memtable does not flush.
        assert!(
            l0(&db, &s) >= s0 + 5,
            "round {round}: small flushed too little"
        );
        assert_eq!(l0(&db, &b), b0, "round {round}: big flushed");
        // The same keys with 40 bloom bits per key make a bigger table than
        // with none (40 bits = 5 bytes a key, 15 KB for 3000 keys).
        db.flush_cf(&b).unwrap();
        db.flush_cf(&f).unwrap();
        let size = |cf: &Cf| num_property(&db, cf, "shale.total-sst-files-size");
        let (bs, fs) = (size(&b), size(&f));
        assert!(
            fs > bs + 12_000 * (round + 1),
            "round {round}: sizes {bs} (no bloom) and {fs} (40 bits)"
        );
        db.close().unwrap();
    }
    // Listed with other options: they act and are persisted.
    let o = Options {
        column_families: vec![("small".into(), big.clone())],
        ..opts()
    };
    Db::open(d.path(), o).unwrap().close().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let s = db.cf("small").unwrap();
    let before = l0(&db, &s);
    fill(&db, &s, "late-", 3000);
    db.wait_for_compaction().unwrap();
    assert_eq!(l0(&db, &s), before, "small still flushes at 32 KiB");
}

#[test]
fn files_of_a_dropped_family_stay_while_read_and_go_after_that() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    for t in 0..3 {
        fill(&db, &a, &format!("t{t}-"), 100);
        db.flush_cf(&a).unwrap();
    }
    db.put_cf(&a, b"unflushed", b"1").unwrap();
    let tables = files(d.path(), ".sst");
    assert_eq!(tables.len(), 3);
    let mut it = db.iter_cf(&a, &ReadOptions::new());
    let range = db.range_cf(&a, ..);
    db.drop_cf(&a).unwrap();
    db.put(b"other", b"1").unwrap();
    db.flush().unwrap();
    assert_eq!(count_files(d.path(), ".sst"), 4, "deleted while read");
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 301);
    drop(it);
    assert_eq!(
        count_files(d.path(), ".sst"),
        4,
        "deleted while a range reads"
    );
    assert_eq!(range.rev().count(), 301);
    // Gone after the next background job at the latest.
    db.put(b"nudge", b"1").unwrap();
    db.flush().unwrap();
    let now = files(d.path(), ".sst");
    let left: Vec<&String> = tables.iter().filter(|f| now.contains(f)).collect();
    assert!(left.is_empty(), "dropped family's tables left: {left:?}");
    db.close().unwrap();
    // Its unflushed write is not replayed into a new family of that name.
    let db = Db::open(d.path(), opts()).unwrap();
    assert!(db.cf("a").is_none());
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    assert_eq!(get(&db, &a, b"unflushed"), None);
    assert_eq!(db.range_cf(&a, ..).count(), 0);
}

/// Engine defect (reported to the lead, fails on this branch): the
/// spec says a dropped family's files are deleted once nothing holds them,
/// and RocksDB purges them when the last iterator is cleaned up; Shale
/// deletes them only at the next flush or compaction, so an idle DB keeps
/// them until then (or until reopen).
#[test]
fn files_of_a_dropped_family_are_deleted_when_its_last_reader_goes() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    fill(&db, &a, "k", 100);
    db.flush_cf(&a).unwrap();
    let it = db.iter_cf(&a, &ReadOptions::new());
    db.drop_cf(&a).unwrap();
    assert_eq!(count_files(d.path(), ".sst"), 1, "deleted while read");
    drop(it);
    let t = std::time::Instant::now();
    while count_files(d.path(), ".sst") > 0 && t.elapsed().as_secs() < 2 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        files(d.path(), ".sst"),
        Vec::<String>::new(),
        "2 s after its last reader went, with no flush or compaction"
    );
}

#[test]
fn dropping_a_family_nobody_reads_deletes_its_files_at_once() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    fill(&db, &a, "k", 100);
    db.flush_cf(&a).unwrap();
    assert_eq!(count_files(d.path(), ".sst"), 1);
    db.drop_cf(&a).unwrap();
    assert_eq!(count_files(d.path(), ".sst"), 0);
}

#[test]
fn a_db_with_only_the_default_family_reopens() {
    let d = tempfile::tempdir().unwrap();
    {
        let db = Db::open(d.path(), opts()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
        db.put(b"k2", b"v2").unwrap();
        db.close().unwrap();
    }
    assert_eq!(list(d.path()), ["default"]);
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(names(&db), ["default"]);
    assert_eq!(db.get(b"k").unwrap().unwrap().to_vec(), b"v");
    assert_eq!(db.get(b"k2").unwrap().unwrap().to_vec(), b"v2");
}

/// CRC-32C (Castagnoli), bit by bit: enough for a few small records.
fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x82f6_3b78
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The record checksum of docs/format/wal.md: masked CRC-32C of the log
/// number, the record type and the payload.
fn record_crc(log: u64, kind: u8, payload: &[u8]) -> u32 {
    let mut d = log.to_le_bytes().to_vec();
    d.push(kind);
    d.extend_from_slice(payload);
    let c = crc32c(&d);
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

const BLOCK: usize = 32768;

/// The logical records of a log file (docs/format/wal.md), checked.
fn read_records(data: &[u8], log: u64) -> Vec<Vec<u8>> {
    let (mut out, mut cur, mut pos) = (Vec::new(), Vec::new(), 0);
    while pos + 7 <= data.len() {
        let left_in_block = BLOCK - pos % BLOCK;
        if left_in_block < 7 {
            pos += left_in_block;
            continue;
        }
        let h = &data[pos..pos + 7];
        let len = u16::from_le_bytes([h[4], h[5]]) as usize;
        let kind = h[6];
        if kind == 0 && len == 0 {
            break;
        }
        let payload = &data[pos + 7..pos + 7 + len];
        let crc = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        assert_eq!(crc, record_crc(log, kind, payload), "record at {pos}");
        cur.extend_from_slice(payload);
        if kind == 1 || kind == 4 {
            out.push(std::mem::take(&mut cur));
        }
        pos += 7 + len;
    }
    out
}

/// `records` framed as a log file numbered `log`.
fn write_records(records: &[Vec<u8>], log: u64) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for r in records {
        let mut rest: &[u8] = r;
        let mut first = true;
        loop {
            let left_in_block = BLOCK - out.len() % BLOCK;
            if left_in_block < 7 {
                out.resize(out.len() + left_in_block, 0);
                continue;
            }
            let n = rest.len().min(left_in_block - 7);
            let last = n == rest.len();
            let kind = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            out.extend_from_slice(&record_crc(log, kind, &rest[..n]).to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

fn varint(d: &[u8], pos: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = d[*pos];
        *pos += 1;
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// A format-2 edit of the `default` family rewritten as format 1: the
/// family fields (tags 7, 10, 11, 12, 14 and 0x2002 options), which this
/// build writes right after the format version, are left out.
fn edit_as_format_1(e: &[u8]) -> Vec<u8> {
    assert_eq!(&e[..2], [1, 2], "not a format-2 edit: {e:?}");
    let mut pos = 2;
    loop {
        let start = pos;
        if pos == e.len() {
            break;
        }
        match varint(e, &mut pos) {
            7 => assert_eq!(varint(e, &mut pos), 0, "an edit of another family"),
            12 | 14 => {
                varint(e, &mut pos);
            }
            11 => panic!("a family drop"),
            10 | 0x2002 => {
                let n = varint(e, &mut pos) as usize;
                pos += n;
            }
            _ => {
                pos = start;
                break;
            }
        }
    }
    let mut out = vec![1, 1];
    out.extend_from_slice(&e[pos..]);
    out
}

/// A DB whose MANIFEST is in edit format 1 (written before column
/// families: no family records) opens with its data in `default`, lists
/// only `default`, and takes new families.
#[test]
fn a_manifest_of_edit_format_1_opens() {
    // The checksum matches docs/format/wal.md's example.
    assert_eq!(
        crc32c(&[0x2a, 0, 0, 0, 0, 0, 0, 0, 1, b'h', b'e', b'l', b'l', b'o']),
        0xe1e5_8e65
    );
    let d = tempfile::tempdir().unwrap();
    {
        let db = Db::open(d.path(), opts()).unwrap();
        db.put(b"flushed", b"1").unwrap();
        db.flush().unwrap();
        db.put(b"in-wal", b"2").unwrap();
        db.close().unwrap();
    }
    let current = std::fs::read_to_string(d.path().join("CURRENT")).unwrap();
    let name = current.trim_end();
    let number: u64 = name.strip_prefix("MANIFEST-").unwrap().parse().unwrap();
    let path = d.path().join(name);
    let data = std::fs::read(&path).unwrap();
    let edits = read_records(&data, number);
    assert!(!edits.is_empty());
    assert_eq!(write_records(&edits, number), data, "re-framing is exact");
    let v1: Vec<Vec<u8>> = edits.iter().map(|e| edit_as_format_1(e)).collect();
    // The snapshot edit carried family fields (at least the max family id).
    assert!(v1[0].len() < edits[0].len(), "{:?}", edits[0]);
    std::fs::write(&path, write_records(&v1, number)).unwrap();
    assert_eq!(list(d.path()), ["default"]);
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(names(&db), ["default"]);
    assert_eq!(db.get(b"flushed").unwrap().unwrap().to_vec(), b"1");
    assert_eq!(db.get(b"in-wal").unwrap().unwrap().to_vec(), b"2");
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    db.put_cf(&a, b"k", b"a").unwrap();
    db.close().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    assert_eq!(names(&db), ["default", "a"]);
    assert_eq!(get(&db, &db.cf("a").unwrap(), b"k").unwrap(), b"a");
    assert_eq!(db.get(b"flushed").unwrap().unwrap().to_vec(), b"1");
}
