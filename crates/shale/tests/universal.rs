//! Universal (tiered) compaction through the DB (issue 15): the run count
//! stays near the trigger under a steady load, reads stay exact, a manual
//! compaction leaves one run in the last level, trivial moves of disjoint
//! runs, write stalls count sorted runs, the style switches on reopen in
//! both directions, and the options it cannot honour are refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use shale::fs::MemFileSystem;
use shale::{
    CfOptions, CompactionStyle, Db, Options, UniversalCompactionOptions, UniversalStopStyle,
};

fn universal(u: UniversalCompactionOptions) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(MemFileSystem::new()),
        write_buffer_size: 16 << 10,
        target_file_size_base: 16 << 10,
        level0_file_num_compaction_trigger: 4,
        level0_slowdown_writes_trigger: 20,
        level0_stop_writes_trigger: 36,
        compaction_style: CompactionStyle::Universal,
        compaction_options_universal: u,
        ..Options::default()
    }
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().trim().parse().unwrap()
}

fn files_per_level(db: &Db) -> Vec<u64> {
    (0..7)
        .map(|l| prop(db, &format!("shale.num-files-at-level{l}")))
        .collect()
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Random overwrites and deletes of 2,000 keys in rounds, each flushed,
/// applied to `model` too; then waits for compactions.
fn load_into(db: &Db, rounds: u32, seed: u64, model: &mut Model) {
    let mut x = seed;
    for round in 0..rounds {
        for i in 0..300u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = format!("k{:05}", (x >> 33) % 2000).into_bytes();
            if (x >> 20).is_multiple_of(7) {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("v{round}-{i}-{}", "x".repeat(((x >> 40) % 50) as usize));
                db.put(&k, v.as_bytes()).unwrap();
                model.insert(k, v.into_bytes());
            }
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
}

fn load(db: &Db, rounds: u32, seed: u64) -> Model {
    let mut model = Model::new();
    load_into(db, rounds, seed, &mut model);
    model
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db
        .range(..)
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect();
    assert_eq!(got.len(), model.len());
    assert!(got == *model, "scan differs from the model");
    for (k, v) in model.iter().step_by(37) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
}

#[test]
fn runs_stay_near_the_trigger_and_reads_stay_exact() {
    for (stop_style, size_ratio) in [
        (UniversalStopStyle::TotalSize, 1),
        (UniversalStopStyle::SimilarSize, 10),
    ] {
        let db = Db::open(
            "/db",
            universal(UniversalCompactionOptions {
                size_ratio,
                stop_style,
                ..Default::default()
            }),
        )
        .unwrap();
        let model = load(&db, 30, 7);
        // At the trigger a merge is due only by space amplification or size
        // ratio; past it the newest runs merge whatever their sizes.
        let runs = prop(&db, "shale.num-sorted-runs");
        assert!(
            runs <= 4,
            "{runs} sorted runs after compactions ({stop_style:?})"
        );
        assert!(
            db.stats().compaction.compaction_bytes_written > 0,
            "universal compactions ran"
        );
        check(&db, &model);
        // Universal has no pending-bytes estimate (as RocksDB).
        assert_eq!(prop(&db, "shale.estimate-pending-compaction-bytes"), 0);
        db.close().unwrap();
    }
}

#[test]
fn compact_range_merges_every_run_into_the_last_level() {
    let mut o = universal(UniversalCompactionOptions::default());
    o.level0_file_num_compaction_trigger = 100; // no automatic compaction
    o.level0_slowdown_writes_trigger = 100;
    o.level0_stop_writes_trigger = 100;
    let fs = MemFileSystem::new();
    o.fs = Arc::new(fs.clone());
    let db = Db::open("/db", o.clone()).unwrap();
    let model = load(&db, 6, 11);
    assert!(prop(&db, "shale.num-sorted-runs") >= 6);
    // A bounded range still compacts everything (RocksDB's universal
    // CompactRange), so deletes outside it go too.
    db.compact_range(Some(b"k00100"), Some(b"k00200")).unwrap();
    let shape = files_per_level(&db);
    assert_eq!(&shape[..6], &[0, 0, 0, 0, 0, 0], "{shape:?}");
    assert!(shape[6] > 0);
    assert_eq!(prop(&db, "shale.num-sorted-runs"), 1);
    check(&db, &model);
    // Nothing to do the second time: one run in the last level.
    let written = db.stats().compaction.compaction_bytes_written;
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().compaction.compaction_bytes_written, written);
    drop(db);
    let db = Db::open("/db", o).unwrap();
    check(&db, &model);
}

#[test]
fn disjoint_runs_move_without_rewrite_when_allowed() {
    let db = Db::open(
        "/db",
        universal(UniversalCompactionOptions {
            allow_trivial_move: true,
            ..Default::default()
        }),
    )
    .unwrap();
    // Ascending keys: every flush is a run disjoint from the others.
    let mut model = BTreeMap::new();
    for round in 0..12u32 {
        for i in 0..200u32 {
            let k = format!("k{round:03}-{i:04}").into_bytes();
            db.put(&k, b"value").unwrap();
            model.insert(k, b"value".to_vec());
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
    let moved = db.stats().compaction.compaction_bytes_moved;
    assert!(moved > 0, "no trivial move");
    check(&db, &model);
}

#[test]
fn write_stalls_count_sorted_runs() {
    let mut o = universal(UniversalCompactionOptions::default());
    // No merge is ever wide or amplified enough; slowdown at 3 runs, stop
    // at 5.
    o.level0_file_num_compaction_trigger = 3;
    o.level0_slowdown_writes_trigger = 3;
    o.level0_stop_writes_trigger = 5;
    o.compaction_options_universal.min_merge_width = 50;
    o.compaction_options_universal
        .max_size_amplification_percent = u32::MAX;
    let db = Db::open("/db", o).unwrap();
    for round in 0..3u32 {
        db.put(format!("k{round}").as_bytes(), b"v").unwrap();
        db.flush().unwrap();
    }
    // Three runs in L0 (no compaction can merge them): writes are delayed.
    assert_eq!(prop(&db, "shale.num-sorted-runs"), 3);
    let stalls = db.stats().stalls_now;
    assert_eq!(stalls.len(), 1, "{stalls:?}");
    assert_eq!(stalls[0].reason, shale::StallReason::L0Slowdown);
    assert_eq!(stalls[0].value, Some(3));
    assert!(
        stalls[0].message.contains("3 sorted runs"),
        "{}",
        stalls[0].message
    );
}

#[test]
fn the_style_switches_on_reopen_both_ways() {
    let fs = MemFileSystem::new();
    let leveled = Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        write_buffer_size: 16 << 10,
        target_file_size_base: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level0_file_num_compaction_trigger: 2,
        ..Options::default()
    };
    let db = Db::open("/db", leveled.clone()).unwrap();
    let mut model = load(&db, 10, 3);
    db.close().unwrap();
    // Leveled levels are sorted runs as they are: universal takes over.
    let mut uni = universal(UniversalCompactionOptions::default());
    uni.fs = Arc::new(fs.clone());
    let db = Db::open("/db", uni).unwrap();
    check(&db, &model);
    load_into(&db, 10, 5, &mut model);
    check(&db, &model);
    db.close().unwrap();
    // And back: universal's levels are a valid leveled shape.
    let db = Db::open("/db", leveled).unwrap();
    check(&db, &model);
    db.compact_range(None, None).unwrap();
    check(&db, &model);
}

#[test]
fn a_family_compacts_in_its_own_style() {
    let o = Options {
        create_if_missing: true,
        fs: Arc::new(MemFileSystem::new()),
        write_buffer_size: 16 << 10,
        ..Options::default()
    };
    let db = Db::open("/db", o).unwrap();
    let cf = db
        .create_cf(
            "tiered",
            CfOptions {
                write_buffer_size: 16 << 10,
                target_file_size_base: 16 << 10,
                compaction_style: CompactionStyle::Universal,
                ..CfOptions::default()
            },
        )
        .unwrap();
    for round in 0..8u32 {
        for i in 0..100u32 {
            db.put_cf(
                &cf,
                format!("k{i:04}").as_bytes(),
                format!("{round}").as_bytes(),
            )
            .unwrap();
        }
        db.flush_cf(&cf).unwrap();
    }
    db.wait_for_compaction().unwrap();
    let runs: u64 = db
        .property_cf(&cf, "shale.num-sorted-runs")
        .unwrap()
        .parse()
        .unwrap();
    assert!(runs <= 4, "{runs}");
    assert_eq!(
        db.get_cf(&cf, b"k0042").unwrap().as_deref(),
        Some(&b"7"[..])
    );
    db.close().unwrap();
}

#[test]
fn options_it_cannot_honour_are_refused() {
    let incremental = universal(UniversalCompactionOptions {
        incremental: true,
        ..Default::default()
    });
    assert!(matches!(
        Db::open("/db", incremental),
        Err(shale::Error::InvalidArgument(m)) if m.contains("incremental")
    ));
    for (min, max) in [(1, 5), (4, 3)] {
        let o = universal(UniversalCompactionOptions {
            min_merge_width: min,
            max_merge_width: max,
            ..Default::default()
        });
        assert!(matches!(
            Db::open("/db", o),
            Err(shale::Error::InvalidArgument(_))
        ));
    }
}
