//! First checks of column families (the randomized model, crash and
//! power-loss tests over families live in model.rs, power_loss.rs,
//! column_families.rs and shale-stress).

mod common;

use shale::{CfOptions, Db, Error, Options, ReadOptions, WriteBatch, WriteOptions};

fn opts() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 64 << 10,
            ..Default::default()
        },
        ..Options::default()
    }
}

fn get(db: &Db, cf: &shale::Cf, k: &[u8]) -> Option<Vec<u8>> {
    db.get_cf(cf, k).unwrap().map(|v| v.to_vec())
}

#[test]
fn families_are_separate_keyspaces_and_survive_reopen() {
    let d = tempfile::tempdir().unwrap();
    {
        let db = Db::open(d.path(), opts()).unwrap();
        let a = db.create_cf("a", CfOptions::default()).unwrap();
        let bs = db
            .create_cfs(&[
                ("b", CfOptions::default()),
                (
                    "c",
                    CfOptions {
                        write_buffer_size: 1 << 20,
                        ..CfOptions::default()
                    },
                ),
            ])
            .unwrap();
        let (b, c) = (&bs[0], &bs[1]);
        assert_eq!(a.name(), "a");
        assert!(a.id() != 0 && b.id() != a.id() && c.id() != b.id());
        db.put(b"k", b"default").unwrap();
        db.put_cf(&a, b"k", b"a").unwrap();
        let mut batch = WriteBatch::new();
        batch.put_cf(b, b"k", b"b");
        batch.put_cf(c, b"k", b"c");
        batch.delete_cf(&a, b"k");
        db.write(batch, &WriteOptions::default()).unwrap();
        assert_eq!(get(&db, &db.default_cf(), b"k").unwrap(), b"default");
        assert_eq!(get(&db, &a, b"k"), None);
        assert_eq!(get(&db, b, b"k").unwrap(), b"b");
        assert_eq!(get(&db, c, b"k").unwrap(), b"c");
        db.flush_cf(b).unwrap();
        assert_eq!(db.property_cf(b, "shale.num-files-at-level0").unwrap(), "1");
        assert_eq!(db.property("shale.num-files-at-level0").unwrap(), "0");
        assert!(matches!(
            db.create_cf("a", CfOptions::default()),
            Err(Error::InvalidArgument(m)) if m.contains("\"a\"")
        ));
        db.close().unwrap();
    }
    let names = Db::list_cfs(d.path(), &opts()).unwrap();
    assert_eq!(names, ["default", "a", "b", "c"]);
    let db = Db::open(d.path(), opts()).unwrap();
    let (a, b, c) = (
        db.cf("a").unwrap(),
        db.cf("b").unwrap(),
        db.cf("c").unwrap(),
    );
    assert_eq!(get(&db, &a, b"k"), None);
    assert_eq!(get(&db, &b, b"k").unwrap(), b"b");
    assert_eq!(get(&db, &c, b"k").unwrap(), b"c");
    assert_eq!(db.get(b"k").unwrap().unwrap().to_vec(), b"default");
    // Dropping: the handle fails, an iterator made before keeps reading.
    let mut it = db.iter_cf(&b, &ReadOptions::new());
    db.drop_cf(&b).unwrap();
    assert!(matches!(
        db.get_cf(&b, b"k"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        db.put_cf(&b, b"k", b"x"),
        Err(Error::InvalidArgument(_))
    ));
    it.seek_to_first();
    assert!(it.valid());
    assert_eq!(it.value(), b"b");
    drop(it);
    assert!(matches!(
        db.drop_cf(&db.default_cf()),
        Err(Error::InvalidArgument(_))
    ));
    db.close().unwrap();
    assert_eq!(
        Db::list_cfs(d.path(), &opts()).unwrap(),
        ["default", "a", "c"]
    );
    let db = Db::open(d.path(), opts()).unwrap();
    assert!(db.cf("b").is_none());
    let b2 = db.create_cf("b", CfOptions::default()).unwrap();
    assert_eq!(get(&db, &b2, b"k"), None);
}

#[test]
fn an_idle_family_does_not_pin_old_wals() {
    let d = tempfile::tempdir().unwrap();
    let opts = || Options {
        max_total_wal_size: 512 << 10,
        ..opts()
    };
    let db = Db::open(d.path(), opts()).unwrap();
    let idle = db.create_cf("idle", CfOptions::default()).unwrap();
    db.put_cf(&idle, b"once", b"1").unwrap();
    let busy = db
        .create_cf(
            "busy",
            CfOptions {
                write_buffer_size: 64 << 10,
                ..CfOptions::default()
            },
        )
        .unwrap();
    let value = vec![7u8; 1000];
    let mut max_wals = 0;
    for i in 0..5000u32 {
        db.put_cf(&busy, &i.to_be_bytes(), &value).unwrap();
        let wals = common::files_ending(d.path(), ".log");
        max_wals = max_wals.max(wals);
    }
    // 5 MB through 64 KiB memtables: without the limit every WAL since the
    // idle family's write would stay (about 80).
    assert!(max_wals < 20, "{max_wals} WAL files alive");
    db.close().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let idle = db.cf("idle").unwrap();
    assert_eq!(get(&db, &idle, b"once").unwrap(), b"1");
}

/// Scale check (issue 11's goals; the measured figures are in
/// docs/PERFORMANCE.md, taken with `shale-bench --benchmarks=cfscale`):
/// `cargo test --release -p shale --test cf_smoke -- --ignored --nocapture`.
#[test]
#[ignore]
fn ten_thousand_families() {
    let n = 10_000;
    let d = tempfile::tempdir().unwrap();
    let rss = || {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let names: Vec<String> = (0..n).map(|i| format!("cf{i:05}")).collect();
    let t = std::time::Instant::now();
    {
        let db = Db::open(d.path(), opts()).unwrap();
        let list: Vec<(&str, CfOptions)> = names
            .iter()
            .map(|s| (s.as_str(), CfOptions::default()))
            .collect();
        db.create_cfs(&list).unwrap();
        println!("create_cfs {n}: {:?}", t.elapsed());
        db.close().unwrap();
    }
    let rss0 = rss();
    let t = std::time::Instant::now();
    let db = Db::open(d.path(), opts()).unwrap();
    println!("reopen: {:?}", t.elapsed());
    println!("RSS after reopen: {} KiB (before {} KiB)", rss(), rss0);
    let cf = db.cf("cf00042").unwrap();
    let t = std::time::Instant::now();
    for i in 0..100_000u32 {
        db.put_cf(&cf, &i.to_be_bytes(), b"v").unwrap();
    }
    println!("100k puts into one family: {:?}", t.elapsed());
    drop(db);
    let d2 = tempfile::tempdir().unwrap();
    let db = Db::open(d2.path(), opts()).unwrap();
    let t = std::time::Instant::now();
    for name in names.iter().take(2000) {
        db.create_cf(name, CfOptions::default()).unwrap();
    }
    println!("create_cf one by one, 2000: {:?}", t.elapsed());
}

/// `db_write_buffer_size` bounds the memtables of all families together by
/// flushing the largest, without stopping writers (RocksDB's write buffer
/// manager can wedge every writer: facebook/rocksdb#11780).
#[test]
fn the_db_wide_memtable_budget_flushes_the_largest_without_a_wedge() {
    let d = tempfile::tempdir().unwrap();
    let budget = 4 << 20;
    let db = Db::open(
        d.path(),
        Options {
            db_write_buffer_size: budget,
            ..opts()
        },
    )
    .unwrap();
    // Each family alone would hold 64 MiB before it flushes. (No memtable
    // filter: a 64 MiB memtable's 1.3 MB filter, allocated by its first
    // write, would dominate a 4 MiB budget.)
    let big = CfOptions {
        memtable_bloom_size_ratio: 0.0,
        ..CfOptions::default()
    };
    let list: Vec<(String, CfOptions)> = (0..4).map(|i| (format!("f{i}"), big.clone())).collect();
    let refs: Vec<(&str, CfOptions)> = list.iter().map(|(n, o)| (n.as_str(), o.clone())).collect();
    let cfs = db.create_cfs(&refs).unwrap();
    let value = vec![3u8; 200];
    let mut peak = 0u64;
    let t = std::time::Instant::now();
    for i in 0..100_000u32 {
        let cf = &cfs[(i % 4) as usize];
        db.put_cf(cf, &i.to_be_bytes(), &value).unwrap();
        if i % 500 == 0 {
            let used: u64 = db
                .property("shale.size-all-mem-tables-db")
                .unwrap()
                .parse()
                .unwrap();
            peak = peak.max(used);
        }
    }
    // 20 MB written: without the budget nothing would have flushed.
    // Tables on any level (a compaction may have moved them out of L0).
    let files: u64 = cfs
        .iter()
        .flat_map(|cf| (0..7).map(move |l| (cf, l)))
        .map(|(cf, l)| {
            db.property_cf(cf, &format!("shale.num-files-at-level{l}"))
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert!(files > 0, "the budget flushed nothing");
    // Active memtables are switched at 7/8 of the budget (RocksDB's write
    // buffer manager rule) and writers wait once all memtables use twice
    // the budget while flushes run, so the peak stays near two budgets
    // (7.3 MB measured); the bound allows one more budget and the arena
    // chunks. Without the budget the peak would be the whole 21 MB written,
    // and it was, in 4 of 10 runs, while one budget flush at a time was the
    // only rule (regression of this test).
    assert!(peak < 3 * budget as u64 + (4 << 20), "peak {peak}");
    println!("peak {peak} with a budget of {budget}");
    assert!(t.elapsed() < std::time::Duration::from_secs(60));
    for (i, cf) in cfs.iter().enumerate() {
        assert_eq!(
            get(&db, cf, &(i as u32).to_be_bytes()).unwrap(),
            value,
            "family {i}"
        );
    }
}

/// A batch built with a family handle of another DB (or of an earlier open)
/// is refused as a whole; before, it wrote by id into this DB's family of
/// the same id.
#[test]
fn a_batch_with_a_handle_of_another_db_is_refused() {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let db2 = Db::open(d2.path(), opts()).unwrap();
    let a1 = db1.create_cf("a", CfOptions::default()).unwrap();
    let a2 = db2.create_cf("a", CfOptions::default()).unwrap();
    assert_eq!(a1.id(), a2.id());
    for batch in [
        {
            let mut b = WriteBatch::new();
            b.put_cf(&a2, b"k", b"v");
            b
        },
        {
            let mut b = WriteBatch::new();
            b.put_cf(&a1, b"k", b"v");
            b.delete_cf(&db2.default_cf(), b"k");
            b
        },
    ] {
        assert!(matches!(
            db1.write(batch, &WriteOptions::default()),
            Err(Error::InvalidArgument(_))
        ));
    }
    assert_eq!(get(&db1, &a1, b"k"), None);
    assert_eq!(get(&db1, &db1.default_cf(), b"k"), None);
    // A handle of an earlier open of the same DB names the same family but
    // is stale: refused too.
    db1.close().unwrap();
    let db1 = Db::open(d1.path(), opts()).unwrap();
    let mut b = WriteBatch::new();
    b.put_cf(&a1, b"k", b"v");
    assert!(matches!(
        db1.write(b, &WriteOptions::default()),
        Err(Error::InvalidArgument(_))
    ));
    let mut b = WriteBatch::new();
    b.put_cf(&db1.cf("a").unwrap(), b"k", b"v");
    db1.write(b, &WriteOptions::default()).unwrap();
}

/// `multi_get_cfs` reads keys of several families at one sequence number;
/// a dropped handle fails its own keys only.
#[test]
fn multi_get_across_families() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), opts()).unwrap();
    let a = db.create_cf("a", CfOptions::default()).unwrap();
    let b = db.create_cf("b", CfOptions::default()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put_cf(&a, b"k", b"a1");
    batch.put_cf(&b, b"k", b"b1");
    batch.put(b"k", b"d1");
    db.write(batch, &WriteOptions::default()).unwrap();
    db.flush_cf(&a).unwrap();
    let snap = db.snapshot();
    db.put_cf(&a, b"k", b"a2").unwrap();
    db.put_cf(&b, b"k", b"b2").unwrap();
    let dflt = db.default_cf();
    let keys: Vec<(&shale::Cf, &[u8])> =
        vec![(&b, b"k"), (&a, b"k"), (&dflt, b"k"), (&a, b"missing")];
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    let at_snap: Vec<Option<Vec<u8>>> = db
        .multi_get_cfs(&keys, &ro)
        .into_iter()
        .map(|r| r.unwrap().map(|v| v.to_vec()))
        .collect();
    assert_eq!(
        at_snap,
        [
            Some(b"b1".to_vec()),
            Some(b"a1".to_vec()),
            Some(b"d1".to_vec()),
            None
        ]
    );
    let now: Vec<Option<Vec<u8>>> = db
        .multi_get_cfs(&keys, &ReadOptions::new())
        .into_iter()
        .map(|r| r.unwrap().map(|v| v.to_vec()))
        .collect();
    assert_eq!(
        now,
        [
            Some(b"b2".to_vec()),
            Some(b"a2".to_vec()),
            Some(b"d1".to_vec()),
            None
        ]
    );
    db.drop_cf(&b).unwrap();
    let r = db.multi_get_cfs(&keys, &ReadOptions::new());
    assert!(matches!(r[0], Err(Error::InvalidArgument(_))));
    assert_eq!(r[1].as_ref().unwrap().as_ref().unwrap().to_vec(), b"a2");
}
