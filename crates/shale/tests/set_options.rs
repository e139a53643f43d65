//! `Db::set_options` (RocksDB's `SetOptions`): every changeable option
//! takes a value and reads back; refused changes (empty, unknown, fixed
//! while open, bad values, invalid combinations, a dropped family) change
//! nothing; each change takes effect at the next decision that reads it
//! (a memtable switch, a compaction pick, a stall check, a table, a blob
//! file, a put's expiry); a family's changes are persisted and reopen with
//! it, the default family's are shown in the OPTIONS file; options change
//! while writers and readers run. Likewise `Db::set_db_options` for the
//! DB-wide options that change while open.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

mod common;

use shale::tools::OptionsFile;
use shale::{CfOption, CfOptions, Clock, Db, DbOption, Error, Options};

fn num(db: &Db, cf: &shale::Cf, name: &str) -> u64 {
    db.property_cf(cf, name).unwrap().parse().unwrap()
}

fn l0(db: &Db, cf: &shale::Cf) -> u64 {
    num(db, cf, "shale.num-files-at-level0")
}

fn tables(db: &Db, cf: &shale::Cf) -> u64 {
    (0..7)
        .map(|l| num(db, cf, &format!("shale.num-files-at-level{l}")))
        .sum()
}

/// `n` flushed tables of 50 overlapping keys of 1 KiB each in `cf`.
fn flush_tables(db: &Db, cf: &shale::Cf, n: usize) {
    for t in 0..n {
        for i in 0..50 {
            let v = vec![b'a' + (t % 26) as u8; 1024];
            db.put_cf(cf, format!("k{i:04}").as_bytes(), &v).unwrap();
        }
        db.flush_cf(cf).unwrap();
    }
}

fn options() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            ..Default::default()
        },
        ..Options::default()
    }
}

fn is_invalid(r: &shale::Result<()>) -> bool {
    matches!(r, Err(Error::InvalidArgument(_)))
}

/// Each changeable option, with a value other than its default: accepted,
/// and the family's options read back with exactly that change.
#[test]
fn every_changeable_option_takes_a_value_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.create_cf("a", CfOptions::default()).unwrap();
    // The same changes typed, each parsed from its text (`CfOption::parse`).
    let typed = db.create_cf("typed", CfOptions::default()).unwrap();
    let changes = [
        ("write_buffer_size", "1048576"),
        ("max_write_buffer_number", "3"),
        ("memtable_bloom_size_ratio", "0.1"),
        ("memtable_whole_key_filtering", "true"),
        ("block_size", "16384"),
        ("block_restart_interval", "8"),
        ("block_restart_bytes", "0"),
        ("block_size_deviation", "0"),
        ("bloom_bits_per_key", "5"),
        ("bloom_bits_per_key_per_level", "10:4"),
        ("whole_key_filtering", "false"),
        ("prefix_extractor", "rocksdb.CappedPrefix.3"),
        ("compression_per_level", "NoCompression:LZ4"),
        ("bottommost_compression", "ZSTD"),
        ("disable_auto_compactions", "true"),
        ("level0_file_num_compaction_trigger", "8"),
        ("level0_slowdown_writes_trigger", "30"),
        ("level0_stop_writes_trigger", "50"),
        ("max_bytes_for_level_base", "1048576"),
        ("max_bytes_for_level_multiplier", "4"),
        ("target_file_size_base", "1048576"),
        ("target_file_size_multiplier", "2"),
        ("max_compaction_bytes", "1000000"),
        ("level_compaction_dynamic_file_size", "false"),
        ("soft_pending_compaction_bytes_limit", "1000"),
        ("hard_pending_compaction_bytes_limit", "2000"),
        ("default_ttl_secs", "3600"),
        ("compaction_options_universal.size_ratio", "10"),
        ("compaction_options_universal.incremental", "true"),
        ("compaction_options_fifo.allow_compaction", "true"),
        ("enable_blob_files", "true"),
        ("min_blob_size", "100"),
        ("blob_file_size", "1048576"),
        ("enable_blob_garbage_collection", "true"),
        ("blob_garbage_collection_age_cutoff", "0.5"),
        ("blob_garbage_collection_min_garbage_ratio", "0.2"),
        ("blob_file_starting_level", "1"),
    ];
    for (k, v) in changes {
        let before = db.cf_options(&cf).unwrap();
        let mut want = before.clone();
        want.set_option(k, v).unwrap();
        assert_ne!(want, before, "{k}={v} is the current value");
        db.set_options_cf_from_strings(&cf, &[(k, v)])
            .unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        assert_eq!(db.cf_options(&cf).unwrap(), want, "{k}={v}");
        let change = CfOption::parse(k, v, &db.cf_options(&typed).unwrap()).unwrap();
        db.set_options_cf(&typed, &[change])
            .unwrap_or_else(|e| panic!("typed {k}={v}: {e}"));
        assert_eq!(db.cf_options(&typed).unwrap(), want, "typed {k}={v}");
    }
    // Every option that changes while open was changed above.
    let changed: Vec<&str> = changes.iter().map(|(k, _)| *k).collect();
    for info in CfOptions::option_infos().iter().filter(|i| i.mutable) {
        let name = info.name.as_deref().unwrap();
        let group = info.field.contains('.');
        assert!(
            changed.contains(&name) || group,
            "{name} changes while open but is not in this test"
        );
    }
    let o = db.cf_options(&cf).unwrap();
    assert_eq!(o.write_buffer_size, 1 << 20);
    assert_eq!(o.level0_stop_writes_trigger, 50);
    assert_eq!(o.compression_per_level.len(), 2);
    assert!(o.blob.enable_blob_files && o.disable_auto_compactions);
    assert_eq!(o.default_ttl_secs, 3600);
}

/// Typed changes: applied all or none like text ones; a combination
/// `validate` refuses, or an empty list, is `InvalidArgument`; the string
/// form names exactly the options that have a variant.
#[test]
fn typed_changes_apply_all_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.set_options(&[
        CfOption::WriteBufferSize(8 << 20),
        CfOption::Level0FileNumCompactionTrigger(8),
    ])
    .unwrap();
    let o = db.cf_options(&db.default_cf()).unwrap();
    assert_eq!(o.write_buffer_size, 8 << 20);
    assert_eq!(o.level0_file_num_compaction_trigger, 8);
    // Above the slowdown trigger (20): refused whole.
    let r = db.set_options(&[
        CfOption::WriteBufferSize(1 << 20),
        CfOption::Level0FileNumCompactionTrigger(100),
    ]);
    assert!(is_invalid(&r), "{r:?}");
    assert_eq!(db.cf_options(&db.default_cf()).unwrap(), o);
    assert!(is_invalid(&db.set_options(&[])));
    let mut u = o.compaction_options_universal.clone();
    u.size_ratio = 7;
    db.set_options(&[CfOption::CompactionOptionsUniversal(u)])
        .unwrap();
    let o = db.cf_options(&db.default_cf()).unwrap();
    assert_eq!(o.compaction_options_universal.size_ratio, 7);
    db.set_db_options(&[
        DbOption::MaxBackgroundJobs(3),
        DbOption::BytesPerSync(1 << 20),
    ])
    .unwrap();
    assert!(is_invalid(
        &db.set_db_options(&[DbOption::MaxBackgroundJobs(0)])
    ));
    assert!(is_invalid(&db.set_db_options(&[])));
    let text = std::fs::read_to_string(OptionsFile::latest_in(dir.path()).unwrap()).unwrap();
    assert!(text.contains("\nmax_background_jobs=3\n"), "{text}");
    assert!(text.contains("\nbytes_per_sync=1048576\n"), "{text}");
    // A fixed or unknown name has no variant: parsing it is refused.
    for (k, v) in [
        ("block_align", "true"),
        ("merge_operator", "max"),
        ("nope", "1"),
    ] {
        let r = CfOption::parse(k, v, &o);
        assert!(matches!(r, Err(Error::InvalidArgument(_))), "{k}: {r:?}");
    }
    assert!(DbOption::parse("max_open_files", "100").is_err());
    assert_eq!(
        DbOption::parse("delayed_write_rate", "1000").unwrap(),
        DbOption::DelayedWriteRate(1000)
    );
    db.close().unwrap();
}

/// An empty list, an unknown name, an option that changes only on reopen,
/// a bad value, an invalid combination and a dropped family are
/// `InvalidArgument`; a list with one bad change applies none of it.
#[test]
fn refused_changes_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.create_cf("a", CfOptions::default()).unwrap();
    let before = db.cf_options(&cf).unwrap();
    let refused: [&[(&str, &str)]; 13] = [
        &[],
        &[("no_such_option", "1")],
        &[("compaction_style", "kCompactionStyleUniversal")],
        &[("sst_partitioner_factory", "rocksdb.FixedPrefix.4")],
        &[("prefix_extractor", "rocksdb.FixedPrefix.x")],
        &[("block_align", "true")],
        &[("merge_operator", "StringAppendOperator")],
        &[("level_compaction_dynamic_level_bytes", "false")],
        &[("write_buffer_size", "lots")],
        &[("compression_per_level", "Snappy")],
        // slowdown below the compaction trigger
        &[("level0_slowdown_writes_trigger", "1")],
        // a good change beside a bad one: neither applies
        &[
            ("write_buffer_size", "1048576"),
            ("max_bytes_for_level_multiplier", "1"),
        ],
        &[
            ("level0_stop_writes_trigger", "100"),
            ("detect_insert_streams", "true"),
        ],
    ];
    for changes in refused {
        let r = db.set_options_cf_from_strings(&cf, changes);
        assert!(is_invalid(&r), "{changes:?}: {r:?}");
        assert_eq!(
            db.cf_options(&cf).unwrap(),
            before,
            "{changes:?} changed options"
        );
    }
    // The message says why.
    let e = db
        .set_options_from_strings(&[("compaction_style", "x")])
        .unwrap_err();
    assert!(
        e.to_string().contains("cannot change while the DB is open"),
        "{e}"
    );
    let e = db
        .set_options_from_strings(&[("no_such_option", "1")])
        .unwrap_err();
    assert!(e.to_string().contains("unknown option"), "{e}");
    // Universal `incremental` needs three levels: refused on a DB of two.
    let dir2 = tempfile::tempdir().unwrap();
    let db2 = Db::open(dir2.path(), {
        let base = options();
        Options {
            num_levels: 2,
            cf: CfOptions {
                compaction_style: shale::CompactionStyle::Universal,
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    let r = db2.set_options_from_strings(&[("compaction_options_universal.incremental", "true")]);
    assert!(is_invalid(&r), "{r:?}");
    db.drop_cf(&cf).unwrap();
    let r = db.set_options_cf_from_strings(&cf, &[("write_buffer_size", "1048576")]);
    assert!(is_invalid(&r), "dropped family: {r:?}");
}

/// A smaller write buffer switches the memtable at the next writes (no
/// flush asked), and a larger one stops doing so.
#[test]
fn a_smaller_write_buffer_switches_memtables_at_the_next_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    db.set_options_from_strings(&[("disable_auto_compactions", "true")])
        .unwrap();
    let put = |from: usize| {
        for i in from..from + 200 {
            db.put(format!("k{i:06}").as_bytes(), &[7u8; 1024]).unwrap();
        }
    };
    put(0);
    assert_eq!(l0(&db, &cf), 0, "64 MiB memtable flushed early");
    db.set_options_from_strings(&[("write_buffer_size", "65536")])
        .unwrap();
    put(200);
    db.wait_for_compaction().unwrap();
    let flushed = l0(&db, &cf);
    assert!(
        flushed >= 2,
        "only {flushed} L0 files under a 64 KiB buffer"
    );
    db.set_options_from_strings(&[("write_buffer_size", "67108864")])
        .unwrap();
    put(400);
    db.wait_for_compaction().unwrap();
    assert!(l0(&db, &cf) <= flushed + 1, "still switching at 64 KiB");
    for i in 0..600 {
        assert!(db.get(format!("k{i:06}").as_bytes()).unwrap().is_some());
    }
}

/// Tables left in L0 while auto compactions were off are compacted once
/// they are turned back on, and a lower L0 trigger compacts at once.
#[test]
fn turning_auto_compactions_on_or_lowering_the_trigger_compacts_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    db.set_options_from_strings(&[("disable_auto_compactions", "true")])
        .unwrap();
    flush_tables(&db, &cf, 5);
    db.wait_for_compaction().unwrap();
    assert_eq!(l0(&db, &cf), 5);
    db.set_options_from_strings(&[("disable_auto_compactions", "false")])
        .unwrap();
    db.wait_for_compaction().unwrap();
    assert!(l0(&db, &cf) < 2, "backlog left: {} L0 files", l0(&db, &cf));

    let b = db
        .create_cf(
            "b",
            CfOptions {
                level0_file_num_compaction_trigger: 10,
                level0_slowdown_writes_trigger: 20,
                ..CfOptions::default()
            },
        )
        .unwrap();
    flush_tables(&db, &b, 4);
    db.wait_for_compaction().unwrap();
    assert_eq!(l0(&db, &b), 4, "compacted below its trigger");
    db.set_options_cf_from_strings(&b, &[("level0_file_num_compaction_trigger", "3")])
        .unwrap();
    db.wait_for_compaction().unwrap();
    assert_eq!(l0(&db, &b), 0, "a lower trigger left L0 alone");
    assert!(tables(&db, &b) >= 1);
}

/// Tables and blob files written after a change use it: compression, and
/// blob files turned on at run time (values read back through them).
#[test]
fn tables_written_after_a_change_use_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    db.set_options_from_strings(&[("disable_auto_compactions", "true")])
        .unwrap();
    let size = |db: &Db| num(db, &cf, "shale.total-sst-files-size");
    let fill = |t: u8| {
        for i in 0..200 {
            db.put(format!("k{t}{i:04}").as_bytes(), &[t; 2048])
                .unwrap();
        }
        db.flush().unwrap();
    };
    fill(1);
    let plain = size(&db);
    db.set_options_from_strings(&[("compression_per_level", "LZ4")])
        .unwrap();
    fill(2);
    let lz4 = size(&db) - plain;
    assert!(
        lz4 * 4 < plain,
        "LZ4 table {lz4} bytes vs {plain} uncompressed"
    );

    assert_eq!(common::files_ending(dir.path(), ".blob"), 0);
    db.set_options_from_strings(&[("enable_blob_files", "true"), ("min_blob_size", "1024")])
        .unwrap();
    fill(3);
    assert!(
        common::files_ending(dir.path(), ".blob") > 0,
        "no blob file after enable_blob_files"
    );
    for t in 1..=3u8 {
        for i in 0..200 {
            let v = db.get(format!("k{t}{i:04}").as_bytes()).unwrap().unwrap();
            assert_eq!(&v[..], &[t; 2048][..]);
        }
    }
}

struct ManualClock(AtomicU64);

impl Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// `default_ttl_secs` set at run time: puts after it expire, puts before
/// it do not (also in a family other than `default`, which the write path
/// tracks apart).
#[test]
fn a_default_ttl_set_at_run_time_expires_later_puts_only() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock(AtomicU64::new(1_000_000)));
    let db = Db::open(
        dir.path(),
        Options {
            clock: Arc::clone(&clock) as Arc<dyn Clock>,
            ..options()
        },
    )
    .unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    for cf in [db.default_cf(), a.clone()] {
        db.put_cf(&cf, b"before", b"v").unwrap();
        db.set_options_cf_from_strings(&cf, &[("default_ttl_secs", "10")])
            .unwrap();
        db.put_cf(&cf, b"after", b"v").unwrap();
    }
    clock.0.fetch_add(11, Ordering::SeqCst);
    for cf in [db.default_cf(), a] {
        assert!(db.get_cf(&cf, b"before").unwrap().is_some(), "{cf:?}");
        assert!(db.get_cf(&cf, b"after").unwrap().is_none(), "{cf:?}");
    }
}

/// A family's changes are persisted: reopened without options of its own
/// it has them; opened with options, those win. The default family's show
/// in the OPTIONS file and end with the DB (it reopens with `Options`).
#[test]
fn changes_are_persisted_for_families_and_shown_for_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    db.set_options_cf_from_strings(
        &a,
        &[
            ("write_buffer_size", "1048576"),
            ("bloom_bits_per_key", "4"),
        ],
    )
    .unwrap();
    db.set_options_from_strings(&[("level0_stop_writes_trigger", "77")])
        .unwrap();
    let file = OptionsFile::read(&OptionsFile::latest_in(dir.path()).unwrap()).unwrap();
    assert_eq!(
        file.get("CFOptions \"default\"", "level0_stop_writes_trigger"),
        Some("77")
    );
    let options_files = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                let n = n.to_string_lossy();
                n.starts_with("OPTIONS-") || n.ends_with(".dbtmp")
            })
            .count()
    };
    assert_eq!(
        options_files(),
        1,
        "older OPTIONS files or temporaries left"
    );
    drop(a);
    db.close().unwrap();

    let db = Db::open(dir.path(), options()).unwrap();
    let a = db.cf("a").unwrap();
    let o = db.cf_options(&a).unwrap();
    assert_eq!((o.write_buffer_size, o.bloom_bits_per_key), (1 << 20, 4));
    assert_eq!(
        db.cf_options(&db.default_cf())
            .unwrap()
            .level0_stop_writes_trigger,
        36
    );
    drop(a);
    db.close().unwrap();
    let mut given = options();
    given
        .column_families
        .push(("a".to_string(), CfOptions::default()));
    let db = Db::open(dir.path(), given).unwrap();
    let o = db.cf_options(&db.cf("a").unwrap()).unwrap();
    assert_eq!(o.write_buffer_size, CfOptions::default().write_buffer_size);
}

/// Writers, readers and an option changer at once: every read sees the
/// value its writer last wrote (each writer owns its keys), whatever the
/// options were when it was written, flushed or compacted; writes never
/// block for good when a change lowers the memtable size or raises a
/// trigger.
#[test]
fn options_change_while_writers_and_readers_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), {
        let base = options();
        Options {
            cf: CfOptions {
                write_buffer_size: 64 << 10,
                target_file_size_base: 64 << 10,
                max_bytes_for_level_base: 256 << 10,
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..2u8)
        .map(|w| {
            let (db, stop) = (db.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut round = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    for i in 0..100 {
                        let k = format!("w{w}-{i:03}");
                        let v = format!("{round:08}").repeat(32);
                        db.put(k.as_bytes(), v.as_bytes()).unwrap();
                        let got = db.get(k.as_bytes()).unwrap().unwrap();
                        assert_eq!(&got[..], v.as_bytes(), "{k} round {round}");
                    }
                    round += 1;
                }
                round
            })
        })
        .collect();
    let changes: [&[(&str, &str)]; 8] = [
        &[("write_buffer_size", "16384")],
        &[
            ("write_buffer_size", "262144"),
            ("max_write_buffer_number", "3"),
        ],
        &[("disable_auto_compactions", "true")],
        &[
            ("disable_auto_compactions", "false"),
            ("level0_file_num_compaction_trigger", "4"),
        ],
        &[("compression_per_level", "LZ4"), ("block_size", "512")],
        &[("enable_blob_files", "true"), ("min_blob_size", "64")],
        &[
            ("target_file_size_base", "16384"),
            ("max_bytes_for_level_base", "65536"),
        ],
        &[
            ("enable_blob_files", "false"),
            ("level0_file_num_compaction_trigger", "2"),
        ],
    ];
    let db_changes: [&[(&str, &str)]; 4] = [
        &[
            ("max_background_jobs", "1"),
            ("max_total_wal_size", "65536"),
        ],
        &[("max_background_jobs", "4"), ("bytes_per_sync", "8192")],
        &[
            ("delayed_write_rate", "1048576"),
            ("wal_bytes_per_sync", "4096"),
        ],
        &[("max_total_wal_size", "0"), ("max_subcompactions", "2")],
    ];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(4);
    let mut n = 0;
    while std::time::Instant::now() < deadline {
        db.set_options_from_strings(changes[n % changes.len()])
            .unwrap();
        db.set_db_options_from_strings(db_changes[n % db_changes.len()])
            .unwrap();
        n += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        assert!(w.join().unwrap() > 0, "a writer made no progress");
    }
    db.set_options_from_strings(&[("disable_auto_compactions", "false")])
        .unwrap();
    db.wait_for_compaction().unwrap();
    assert!(n >= changes.len(), "only {n} changes");
}

/// The DB-wide options change, show in a new OPTIONS file and last until
/// the DB closes; refused changes (empty, an option fixed while open, a
/// bad value, an invalid value) change nothing.
#[test]
fn db_options_change_show_in_the_options_file_and_refusals_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let shown = |name: &str| {
        let f = OptionsFile::read(&OptionsFile::latest_in(dir.path()).unwrap()).unwrap();
        f.get("DBOptions", name).map(str::to_string)
    };
    let changes = [
        ("max_background_jobs", "3"),
        ("max_subcompactions", "2"),
        ("delayed_write_rate", "1048576"),
        ("max_total_wal_size", "33554432"),
        ("bytes_per_sync", "1048576"),
        ("wal_bytes_per_sync", "524288"),
        ("compaction_readahead_size", "4194304"),
    ];
    db.set_db_options_from_strings(&changes).unwrap();
    for (k, v) in changes {
        // max_total_wal_size is not in the OPTIONS file's DBOptions.
        if let Some(got) = shown(k) {
            assert_eq!(got, v, "{k}");
        }
    }
    assert_eq!(shown("delayed_write_rate").as_deref(), Some("1048576"));
    let refused: [&[(&str, &str)]; 6] = [
        &[],
        &[("max_open_files", "10")],
        &[("write_buffer_size", "1048576")],
        &[("delayed_write_rate", "fast")],
        &[("delayed_write_rate", "0")],
        &[("bytes_per_sync", "1"), ("max_subcompactions", "0")],
    ];
    for c in refused {
        let r = db.set_db_options_from_strings(c);
        assert!(is_invalid(&r), "{c:?}: {r:?}");
        assert_eq!(shown("bytes_per_sync").as_deref(), Some("1048576"), "{c:?}");
        assert_eq!(shown("max_subcompactions").as_deref(), Some("2"), "{c:?}");
    }
    for i in 0..2000 {
        db.put(format!("k{i:05}").as_bytes(), &[1u8; 512]).unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert!(db.get(b"k01999").unwrap().is_some());
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    drop(db);
    assert_eq!(shown("delayed_write_rate").as_deref(), Some("16777216"));
}

/// A higher `max_background_jobs` starts its threads at once (thread
/// `shale-bg-9` exists only after it is raised to 10; no other test of
/// this file runs more than 4).
#[test]
fn raising_max_background_jobs_starts_threads() {
    let named = |name: &str| {
        std::fs::read_dir("/proc/self/task")
            .map(|d| {
                d.filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                    .any(|c| c.trim() == name)
            })
            .unwrap_or(false)
    };
    if !std::path::Path::new("/proc/self/task").exists() {
        eprintln!("no /proc/self/task: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert!(!named("shale-bg-9"));
    db.set_db_options_from_strings(&[("max_background_jobs", "10")])
        .unwrap();
    // A new thread sets its own name once it runs: under load that can
    // come a while after the spawn returned (this once failed in a loop of
    // the test binaries beside other load). No job is queued meanwhile.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !named("shale-bg-9") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(named("shale-bg-9"), "no tenth background thread");
    db.set_db_options_from_strings(&[("max_background_jobs", "1")])
        .unwrap();
    flush_tables(&db, &db.default_cf(), 4);
    db.wait_for_compaction().unwrap();
    assert!(l0(&db, &db.default_cf()) < 2);
    db.close().unwrap();
    assert!(
        !named("shale-bg-9"),
        "a background thread outlived the close"
    );
}

/// The prefix extractor changes while open (RocksDB allows it): tables and
/// memtables whose prefix-only filters hold another extractor's prefixes are
/// passed over, never probed with the new extractor's prefixes (which would
/// lose keys), so every get, prefix seek and prefix scan is right before and
/// after each change, in the default family and another, and a family's
/// extractor reopens with it.
#[test]
fn the_prefix_extractor_changes_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let filtered = |e: &str| {
        let mut o = CfOptions {
            bloom_bits_per_key: 10,
            whole_key_filtering: false,
            memtable_whole_key_filtering: false,
            memtable_bloom_size_ratio: 0.1,
            ..CfOptions::default()
        };
        o.set_option("prefix_extractor", e).unwrap();
        o
    };
    let mut opts = options();
    opts.cf = filtered("rocksdb.FixedPrefix.2");
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let other = db
        .create_cf("other", filtered("rocksdb.FixedPrefix.2"))
        .unwrap();
    let key = |i: u32| {
        format!(
            "{}{}{:03}",
            (b'a' + (i % 7) as u8) as char,
            (b'a' + (i / 7 % 5) as u8) as char,
            i
        )
        .into_bytes()
    };
    // Keys written in three eras, each flushed but the last (so tables and
    // memtables of every extractor are read together).
    let eras = ["rocksdb.CappedPrefix.3", "nullptr", "rocksdb.FixedPrefix.1"];
    let mut written: Vec<Vec<u8>> = Vec::new();
    let check = |db: &Db, cf: &shale::Cf, written: &[Vec<u8>], era: &str| {
        for k in written {
            assert_eq!(
                db.get_cf(cf, k).unwrap().as_deref(),
                Some(&k[..]),
                "{era}: get {k:?}"
            );
        }
        // Absent keys with present prefixes.
        for i in 0..35u32 {
            let mut k = key(i);
            k.push(b'x');
            assert!(db.get_cf(cf, &k).unwrap().is_none(), "{era}");
        }
        let extractor = db.cf_options(cf).unwrap().prefix_extractor;
        for k in written {
            let mut ro = shale::ReadOptions::new();
            ro.prefix_same_as_start = true;
            let mut it = db.iter_cf(cf, &ro);
            it.seek(k);
            let Some(e) = extractor else {
                assert!(
                    matches!(it.status(), Err(Error::InvalidArgument(_))),
                    "{era}: prefix_same_as_start without an extractor"
                );
                continue;
            };
            let p = e.prefix(k).unwrap().to_vec();
            let mut got = Vec::new();
            while it.valid() {
                got.push(it.key().to_vec());
                it.next();
            }
            it.status().unwrap();
            let mut want: Vec<Vec<u8>> = written
                .iter()
                .filter(|w| w.as_slice() >= k.as_slice() && w.starts_with(&p))
                .cloned()
                .collect();
            want.sort();
            want.dedup();
            assert_eq!(got, want, "{era}: prefix seek {k:?}");
            let scanned: Vec<Vec<u8>> = db.prefix_cf(cf, &p).map(|r| r.unwrap().0).collect();
            let mut all: Vec<Vec<u8>> = written
                .iter()
                .filter(|w| w.starts_with(&p))
                .cloned()
                .collect();
            all.sort();
            all.dedup();
            assert_eq!(scanned, all, "{era}: prefix scan {p:?}");
        }
    };
    let cfs = [db.default_cf(), other.clone()];
    for (n, era) in std::iter::once("rocksdb.FixedPrefix.2")
        .chain(eras)
        .enumerate()
    {
        if n > 0 {
            for cf in &cfs {
                db.set_options_cf_from_strings(cf, &[("prefix_extractor", era)])
                    .unwrap();
            }
        }
        for i in (n as u32 * 9)..(n as u32 * 9 + 35) {
            let k = key(i);
            for cf in &cfs {
                db.put_cf(cf, &k, &k).unwrap();
            }
            written.push(k);
        }
        if n < 3 {
            for cf in &cfs {
                db.flush_cf(cf).unwrap();
            }
        }
        for cf in &cfs {
            check(&db, cf, &written, era);
        }
    }
    // Merged into one table under the last extractor: still right.
    for cf in &cfs {
        db.compact_range_cf(cf, None, None).unwrap();
        check(&db, cf, &written, "compacted");
    }
    drop(cfs);
    db.close().unwrap();
    // The other family reopens with the extractor set last; default with
    // `Options`' (its own changes end with the DB).
    let db = Db::open(dir.path(), opts).unwrap();
    let other = db.cf("other").unwrap();
    assert_eq!(
        db.cf_options(&other).unwrap().prefix_extractor,
        Some(shale::PrefixExtractor::Fixed(1))
    );
    assert_eq!(
        db.cf_options(&db.default_cf()).unwrap().prefix_extractor,
        Some(shale::PrefixExtractor::Fixed(2))
    );
    check(&db, &other, &written, "reopened");
    check(&db, &db.default_cf(), &written, "reopened default");
}
