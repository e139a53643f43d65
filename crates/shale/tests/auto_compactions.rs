//! `disable_auto_compactions` (RocksDB's option, per family): no picked
//! compaction, delete-only drop or FIFO drop runs in a family that has it,
//! its writes do not stall on L0 files (which no compaction would lift),
//! `compact_range` still compacts it, `wait_for_compaction` does not wait
//! for it, a family without it beside it compacts as usual, and a reopen
//! without it compacts the backlog. The option is kept in the OPTIONS
//! file.

use shale::{
    CfOptions, CompactionStyle, Db, FifoCompactionOptions, Options, UniversalCompactionOptions,
};

fn num(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().parse().unwrap()
}

fn num_cf(db: &Db, cf: &shale::Cf, name: &str) -> u64 {
    db.property_cf(cf, name).unwrap().parse().unwrap()
}

fn files(db: &Db) -> u64 {
    (0..7)
        .map(|l| num(db, &format!("shale.num-files-at-level{l}")))
        .sum()
}

/// Small memtables and an L0 that would stall writes at 4 files.
fn options(disabled: bool, style: CompactionStyle) -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 256 << 10,
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 3,
            level0_stop_writes_trigger: 4,
            compaction_style: style,
            compaction_options_universal: UniversalCompactionOptions::default(),
            compaction_options_fifo: FifoCompactionOptions {
                max_table_files_size: 256 << 10,
                ..Default::default()
            },
            disable_auto_compactions: disabled,
            ..Default::default()
        },
        ..Options::default()
    }
}

/// `n` flushed tables of 100 keys of 1 KiB in `cf` (`None`: default),
/// keys `{prefix}{i}` of every table overlapping the others'.
fn flush_tables(db: &Db, cf: Option<&shale::Cf>, prefix: &str, n: usize) {
    for t in 0..n {
        for i in 0..100 {
            let k = format!("{prefix}{i:04}");
            let v = vec![b'a' + (t % 26) as u8; 1024];
            match cf {
                Some(cf) => db.put_cf(cf, k.as_bytes(), &v).unwrap(),
                None => db.put(k.as_bytes(), &v).unwrap(),
            }
        }
        match cf {
            Some(cf) => db.flush_cf(cf).unwrap(),
            None => db.flush().unwrap(),
        }
    }
}

/// Leveled and universal: ten flushes pile up in L0 past the stop trigger
/// without a stall and without a compaction; a delete_range's covered
/// tables stay; `compact_range` compacts; a reopen without the option
/// compacts what was left by itself.
#[test]
fn nothing_compacts_automatically_and_writes_do_not_stall() {
    for style in [CompactionStyle::Level, CompactionStyle::Universal] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(true, style)).unwrap();
        flush_tables(&db, None, "k", 10);
        db.wait_for_compaction().unwrap();
        assert_eq!(num(&db, "shale.num-files-at-level0"), 10, "{style:?}");
        assert_eq!(files(&db), 10, "{style:?}: no table below L0");
        assert_eq!(
            db.property("shale.cf-write-stall").as_deref(),
            Some("Normal"),
            "{style:?}"
        );
        assert_eq!(
            db.get(b"k0007").unwrap().as_deref(),
            Some(&[b'j'; 1024][..])
        );
        // Whole tables under a range tombstone: not dropped either.
        db.delete_range(b"k", b"l").unwrap();
        db.flush().unwrap();
        db.wait_for_compaction().unwrap();
        assert_eq!(num(&db, "shale.num-files-at-level0"), 11, "{style:?}");
        assert!(db.get(b"k0007").unwrap().is_none());
        // A manual compaction runs.
        flush_tables(&db, None, "m", 3);
        db.compact_range(None, None).unwrap();
        assert_eq!(num(&db, "shale.num-files-at-level0"), 0, "{style:?}");
        assert!(files(&db) > 0, "{style:?}: the live keys in a deeper level");
        flush_tables(&db, None, "n", 6);
        db.close().unwrap();
        let text = options_file(dir.path());
        assert!(text.contains("disable_auto_compactions=true"), "{text}");

        let db = Db::open(dir.path(), options(false, style)).unwrap();
        db.wait_for_compaction().unwrap();
        assert!(
            num(&db, "shale.num-files-at-level0") < 6,
            "{style:?}: L0 compacted after the reopen"
        );
        assert_eq!(
            db.get(b"n0042").unwrap().as_deref(),
            Some(&[b'f'; 1024][..])
        );
        assert_eq!(
            db.get(b"m0042").unwrap().as_deref(),
            Some(&[b'c'; 1024][..])
        );
        assert!(db.get(b"k0042").unwrap().is_none());
    }
}

/// FIFO: past `max_table_files_size` nothing is dropped while disabled;
/// a reopen without the option drops the oldest.
#[test]
fn fifo_drops_wait_for_automatic_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(true, CompactionStyle::Fifo)).unwrap();
    flush_tables(&db, None, "k", 8);
    db.wait_for_compaction().unwrap();
    assert_eq!(files(&db), 8);
    assert!(num(&db, "shale.total-sst-files-size") > 256 << 10);
    db.close().unwrap();
    let db = Db::open(dir.path(), options(false, CompactionStyle::Fifo)).unwrap();
    db.wait_for_compaction().unwrap();
    assert!(files(&db) < 8);
    assert!(num(&db, "shale.total-sst-files-size") <= 256 << 10);
}

/// Per family: a family without automatic compactions keeps its L0 while
/// the default family beside it compacts.
#[test]
fn the_option_is_per_family() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(false, CompactionStyle::Level)).unwrap();
    let off = db
        .create_cf(
            "off",
            CfOptions {
                disable_auto_compactions: true,
                ..options(false, CompactionStyle::Level).cf
            },
        )
        .unwrap();
    flush_tables(&db, Some(&off), "k", 6);
    flush_tables(&db, None, "k", 6);
    db.wait_for_compaction().unwrap();
    assert_eq!(num_cf(&db, &off, "shale.num-files-at-level0"), 6);
    assert!(num(&db, "shale.num-files-at-level0") < 6);
    db.compact_range_cf(&off, None, None).unwrap();
    assert_eq!(num_cf(&db, &off, "shale.num-files-at-level0"), 0);
}

fn options_file(dir: &std::path::Path) -> String {
    std::fs::read_to_string(shale::tools::OptionsFile::latest_in(dir).unwrap()).unwrap()
}
