//! `--num_column_families` and `cfscale` on the Shale engine.
//!
//! * fillrandom + readrandom with three families: afterwards the DB (opened
//!   with the Shale API) has exactly db_bench's families, every key the
//!   replayed draw sequence wrote is in family `v % 3` and in no other, no
//!   other key exists, and readrandom found keys;
//! * readseq walks every family (it reads all keys, not only `default`'s);
//! * `cfscale` at N = 50 prints every measurement line.

use std::collections::BTreeSet;

mod common;

use shale_bench::engine::cf_names;
use shale_bench::keys::KeyGen;
use shale_bench::mt19937::Mt19937_64;

fn run(args: &[String]) -> String {
    common::run_ok(args).1
}

fn args(db: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec!["--seed=777"];
    a.extend_from_slice(extra);
    common::shale_args(db, &a)
}

#[test]
fn fillrandom_spreads_keys_over_families_and_readrandom_finds_them() {
    const NUM: u64 = 600;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = run(&args(
        &db,
        &[
            "--benchmarks=fillrandom,readrandom,readseq",
            "--num_column_families=3",
            &format!("--num={NUM}"),
        ],
    ));
    // readrandom: a hit in the key's family for every existing key.
    let line = out
        .lines()
        .find(|l| l.starts_with("readrandom"))
        .expect("readrandom line");
    let found: u64 = line
        .split('(')
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no found count in {line}"));
    assert!(found > NUM / 3, "{line}");

    // The keys fillrandom wrote: thread seed 778 (base + 1), one DB-choice
    // draw and one key draw per put (DB_BENCH.md §2.3).
    let keys = KeyGen::new(16, 0, 0, NUM).unwrap();
    let mut rng = Mt19937_64::new(778);
    let mut written = BTreeSet::new();
    for _ in 0..NUM {
        rng.next_u64();
        written.insert(rng.next_u64() % NUM);
    }

    let opts = shale::Options::default();
    let mut names = shale::Db::list_cfs(&db, &opts).unwrap();
    names.sort();
    let mut want = cf_names(3);
    want.sort();
    assert_eq!(names, want);

    let mut opts = shale::Options::default();
    opts.column_families = cf_names(3)
        .into_iter()
        .skip(1)
        .map(|n| (n, opts.cf.clone()))
        .collect();
    let sdb = shale::Db::open(&db, opts).unwrap();
    let cfs: Vec<shale::Cf> = cf_names(3).iter().map(|n| sdb.cf(n).unwrap()).collect();
    let mut per_family = [0u64; 3];
    for v in 0..NUM {
        let key = keys.key(v);
        for (i, cf) in cfs.iter().enumerate() {
            let hit = sdb.get_cf(cf, &key).unwrap().is_some();
            let expect = written.contains(&v) && v % 3 == i as u64;
            assert_eq!(hit, expect, "key {v} in family {i}");
            per_family[i] += u64::from(hit);
        }
    }
    assert!(per_family.iter().all(|&n| n > 0), "{per_family:?}");
    assert_eq!(per_family.iter().sum::<u64>(), written.len() as u64);
    // readrandom (thread seed 779) found exactly the keys of its draws that
    // exist: each Get looked in the key's family.
    let mut rng = Mt19937_64::new(779);
    let mut expect_found = 0;
    for _ in 0..NUM {
        rng.next_u64();
        expect_found += u64::from(written.contains(&(rng.next_u64() % NUM)));
    }
    assert_eq!(found, expect_found, "{line}");
    // readseq walked every family: it read all the keys.
    let readseq = out.lines().find(|l| l.starts_with("readseq")).unwrap();
    assert!(
        readseq.contains(&format!(" {} operations;", written.len())),
        "{readseq}"
    );
    sdb.close().unwrap();
}

#[test]
fn cfscale_prints_every_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = run(&args(
        &db,
        &[
            "--benchmarks=cfscale",
            "--num_column_families=50",
            "--num=2000",
        ],
    ));
    for name in [
        "cfscale.create_batch",
        "cfscale.create_one",
        "cfscale.close",
        "cfscale.reopen",
        "cfscale.fill_idle",
        "cfscale.fill_alone",
    ] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} line in\n{out}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[3], "micros/op", "{line}");
        assert!(f[2].parse::<f64>().unwrap() > 0.0, "{line}");
        assert!(line.contains(" raw "), "{line}");
    }
    assert!(
        out.contains("49 families, one Db::create_cfs call"),
        "{out}"
    );
    assert!(
        out.contains("49 families, one Db::create_cf call each"),
        "{out}"
    );
    let rss = out.lines().find(|l| l.starts_with("cfscale.rss ")).unwrap();
    assert!(rss.contains("bytes/family"), "{rss}");
    let ratio = out
        .lines()
        .find(|l| l.starts_with("cfscale.fill_ratio "))
        .unwrap();
    let r: f64 = ratio.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(r > 0.0, "{ratio}");
    // cfscale leaves the no-other-family DB behind.
    let names = shale::Db::list_cfs(&db, &shale::Options::default()).unwrap();
    assert_eq!(names, vec!["default".to_string()]);

    // --cfscale_one_by_one limits the one-by-one step only; a benchmark
    // after cfscale gets a fresh DB with its N families.
    let out = run(&args(
        &db,
        &[
            "--benchmarks=cfscale,fillseq,readrandom",
            "--num_column_families=20",
            "--cfscale_one_by_one=7",
            "--num=500",
        ],
    ));
    assert!(
        out.contains("7 families, one Db::create_cf call each"),
        "{out}"
    );
    assert!(
        out.contains("19 families, one Db::create_cfs call"),
        "{out}"
    );
    assert!(out.contains("(500 of 500 found)"), "{out}");
    let names = shale::Db::list_cfs(&db, &shale::Options::default()).unwrap();
    assert_eq!(names.len(), 20);
}

#[test]
fn engines_without_families_and_multiread_refuse_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let err = common::run(&[
        "--engine=memory".to_string(),
        "--num_column_families=2".to_string(),
    ])
    .0
    .unwrap_err();
    assert!(err.0.contains("--num_column_families"), "{err}");
    let db = dir.path().join("db");
    let err = common::run(&args(
        &db,
        &[
            "--benchmarks=fillseq,multireadrandom",
            "--num_column_families=2",
            "--num=100",
        ],
    ))
    .0
    .unwrap_err();
    assert!(err.0.contains("multireadrandom"), "{err}");
}
