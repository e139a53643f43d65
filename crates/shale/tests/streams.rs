//! Output cutting at insert-stream ends and at partitions
//! (`build::cuts`), flush outputs installed below L0, and L0 files
//! moved into the base level one by one.
//!
//! The promise: N interleaved ascending insert streams are written once by
//! flushes and never rewritten by compactions; random inserts flush as
//! before; nothing is lost or reordered on the way.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use shale::{CfOptions, CompactionStyle, Db, Error, Options, SstPartitioner};

/// Key `seq` of stream `stream`: 8-byte stream id, then 8-byte position.
fn key(stream: u64, seq: u64) -> Vec<u8> {
    let mut k = stream.to_be_bytes().to_vec();
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

fn value(stream: u64, seq: u64) -> Vec<u8> {
    let mut v = format!("{stream}:{seq}:").into_bytes();
    v.resize(100, b'v');
    v
}

/// Writes keys `from..to` of `n` streams round-robin (the position of the
/// i-th write is `from + i / n`, its stream `i % n`).
fn write_streams(db: &Db, n: u64, from: u64, to: u64, model: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    for seq in from..to {
        for s in 0..n {
            db.put(&key(s, seq), &value(s, seq)).unwrap();
            model.insert(key(s, seq), value(s, seq));
        }
    }
}

/// (level, smallest user key, largest user key) of every table, from the
/// `shale.sstables` property.
fn tables(db: &Db) -> Vec<(usize, Vec<u8>, Vec<u8>)> {
    let text = db.property("shale.sstables").unwrap();
    let mut level = 0;
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(l) = line.strip_prefix("--- level ") {
            level = l.trim_end_matches(" ---").parse().unwrap();
            continue;
        }
        // " number:size[seq .. seq]['hex' .. 'hex']"
        let keys: Vec<&str> = line.split('\'').collect();
        out.push((level, unhex(keys[1]), unhex(keys[3])));
    }
    out
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            Some(v.as_slice()),
            "{k:02x?}"
        );
    }
    let scanned: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).map(|r| r.unwrap()).collect();
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(scanned.len(), expected.len());
    assert!(scanned == expected, "a scan differs from the model");
}

/// 1 MiB memtables: each of 8 streams' piece of one fills ~110 KB of
/// table, above the 64 KiB a run must fill to end an output.
fn options() -> Options {
    Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 1 << 20,
            target_file_size_base: 1 << 20,
            max_bytes_for_level_base: 1 << 20,
            ..Default::default()
        },
        ..Options::default()
    }
}

/// N = 8 streams through ~10 flushes: every table holds one stream's keys,
/// and compactions write nothing (every table reaches its level by being
/// installed there or moved).
#[test]
fn interleaved_streams_are_written_once_and_never_rewritten() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let mut model = BTreeMap::new();
    let db = Db::open(dir.path(), options()).unwrap();
    write_streams(&db, 8, 0, 10_000, &mut model);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let stats = db.stats().compaction;
    assert!(stats.flushes >= 10, "{} flushes", stats.flushes);
    assert_eq!(
        stats.compaction_bytes_written, 0,
        "streams were rewritten: {stats:?}"
    );
    let t = tables(&db);
    assert!(t.len() >= 8 * 10, "{} tables", t.len());
    for (level, lo, hi) in &t {
        assert_eq!(lo[..8], hi[..8], "a table on L{level} spans two streams");
    }
    check(&db, &model);
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    check(&db, &model);
}

/// The same writes with detection off: every flush spans all streams and
/// compactions rewrite them (the cost the detection removes).
#[test]
fn with_detection_off_streams_are_rewritten() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let mut model = BTreeMap::new();
    let opts = {
        let base = options();
        Options {
            cf: CfOptions {
                detect_insert_streams: Some(false),
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts).unwrap();
    write_streams(&db, 8, 0, 10_000, &mut model);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    assert!(db.stats().compaction.compaction_bytes_written > 0);
    assert!(tables(&db).iter().any(|(_, lo, hi)| lo[..8] != hi[..8]));
    check(&db, &model);
}

/// Random inserts never look like streams: each flush writes one table.
#[test]
fn random_inserts_flush_to_one_table_each() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::quiet_options()).unwrap();
    let mut model = BTreeMap::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for flush in 1..=5 {
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (k, v) = (key(x % 8, x >> 3), value(0, x));
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
        assert_eq!(tables(&db).len(), flush);
    }
    check(&db, &model);
}

/// A fixed-prefix partitioner: no flush or compaction output spans two
/// prefixes; keys shorter than the prefix are kept.
#[test]
fn the_partitioner_cuts_flush_and_compaction_outputs_at_prefixes() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                sst_partitioner_factory: Some(SstPartitioner::FixedPrefix(8)),
                detect_insert_streams: Some(false),
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = BTreeMap::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..3 {
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (k, v) = (key(x % 5, x >> 3), value(1, x));
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.put(b"short", b"s").unwrap();
        model.insert(b"short".to_vec(), b"s".to_vec());
        db.flush().unwrap();
        for (_, lo, hi) in tables(&db) {
            if lo.len() >= 8 && hi.len() >= 8 {
                assert_eq!(lo[..8], hi[..8], "a flush output spans two prefixes");
            }
        }
    }
    db.compact_range(None, None).unwrap();
    let t = tables(&db);
    assert!(t.iter().all(|(level, _, _)| *level > 0));
    for (_, lo, hi) in &t {
        if lo.len() >= 8 && hi.len() >= 8 {
            assert_eq!(lo[..8], hi[..8], "a compaction output spans two prefixes");
        }
    }
    check(&db, &model);
    db.close().unwrap();
    // The partitioner is persisted with the family's options.
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db, &model);
}

#[test]
fn unsupported_stream_and_partitioner_options_are_refused() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let universal = {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                compaction_style: CompactionStyle::Universal,
                detect_insert_streams: Some(true),
                ..base.cf
            },
            ..base
        }
    };
    match Db::open(dir.path(), universal) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("detect_insert_streams"), "{m}"),
        other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
    }
    // Universal with the default (None): no detection, accepted.
    let universal = {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                compaction_style: CompactionStyle::Universal,
                ..base.cf
            },
            ..base
        }
    };
    Db::open(dir.path(), universal).unwrap().close().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::quiet_options()).unwrap();
    let bad = CfOptions {
        sst_partitioner_factory: Some(SstPartitioner::FixedPrefix(0)),
        ..CfOptions::default()
    };
    match db.create_cf("p", bad) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("sst_partitioner_factory"), "{m}"),
        other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
    }
}

/// A flush installing its outputs in the last level reserves their ranges
/// until its MANIFEST edit is written, and a manual compaction that starts
/// meanwhile waits for it. Without the wait, the manual compaction picks
/// the last level's two stream tables without the flush's table between
/// them, writes one output spanning it, and its edit, applied after the
/// flush's, overlaps that table (Corruption, the DB stops). The manual
/// compaction is paused after its own flush (which would otherwise wait
/// for the in-flight one) and released once the flush is in its write.
#[test]
fn a_manual_compaction_waits_for_a_flush_installing_below_l0() {
    let _guard = shale::sync_point::exclusive();
    let dir = tempfile::tempdir().unwrap();
    // 4 MiB memtables: a run must fill 64 KiB to end an output; 700 keys
    // of 100 bytes per stream fill 80 KB.
    let opts = {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                write_buffer_size: 4 << 20,
                ..base.cf
            },
            ..base
        }
    };
    let db = Arc::new(Db::open(dir.path(), opts).unwrap());
    let mut model = BTreeMap::new();
    // The first flush goes straight to the last level, one table per
    // stream.
    write_streams(&db, 2, 0, 700, &mut model);
    db.flush().unwrap();
    let t = tables(&db);
    assert!(
        t.len() == 2 && t.iter().all(|(level, _, _)| *level == 6),
        "{t:?}"
    );
    let manual_paused = common::Pause::at("Db::CompactRange:AfterFlush");
    let compactor = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.compact_range(None, None))
    };
    manual_paused.reached();
    write_streams(&db, 2, 700, 1400, &mut model);
    let flush_paused = common::Pause::at("ManifestWriter::BeforeWrite");
    let flusher = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.flush())
    };
    flush_paused.reached();
    manual_paused.release();
    // Let the manual compaction take the DB mutex (released by the
    // flush's MANIFEST write) and decide while the edit is in flight.
    std::thread::sleep(Duration::from_millis(200));
    flush_paused.release();
    flusher.join().unwrap().unwrap();
    compactor.join().unwrap().unwrap();
    shale::sync_point::reset();
    assert_eq!(db.property("shale.background-errors").as_deref(), Some("0"));
    check(&db, &model);
}

/// The reservation is seen by automatic compactions too: writers of
/// streams and of random keys, concurrent flushes, compactions and bounded
/// manual compactions, then the model.
#[test]
fn streams_and_random_writers_with_concurrent_compactions_keep_every_write() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = options();
        Options {
            cf: CfOptions {
                level0_file_num_compaction_trigger: 2,
                ..base.cf
            },
            ..base
        }
    };
    let db = Arc::new(Db::open(dir.path(), opts.clone()).unwrap());
    let writers: Vec<_> = (0..3u64)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let mut model = BTreeMap::new();
                let mut x = 0x1234_5678_9abc_def1u64 ^ t;
                for i in 0..6000u64 {
                    // Thread 0 and 1: two streams each; thread 2: random
                    // keys in streams 100..108.
                    let (k, v) = if t < 2 {
                        let s = t * 2 + i % 2;
                        (key(s, i / 2), value(s, i))
                    } else {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (key(100 + x % 8, x >> 3), value(100, x))
                    };
                    db.put(&k, &v).unwrap();
                    model.insert(k, v);
                    if t == 2 && i % 1500 == 0 {
                        let lo = key(1, 0);
                        let hi = key(100 + x % 8, u64::MAX);
                        db.compact_range(Some(&lo), Some(&hi)).unwrap();
                    }
                }
                model
            })
        })
        .collect();
    let mut model = BTreeMap::new();
    for w in writers {
        model.extend(w.join().unwrap());
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    check(&db, &model);
    let db = Arc::try_unwrap(db).ok().unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    check(&db, &model);
}

/// Regression: a FIFO family with a partitioner. Its manual compaction
/// merges L0 files until one step removes none, each step assuming its
/// merge leaves fewer files; a partitioner cutting the merged output into
/// one file per prefix left as many files as it took, forever (found by
/// the model test: a seed ran for over 15 minutes). Intra-L0 outputs are
/// never cut now, and FIFO flushes are not cut either.
#[test]
fn a_fifo_family_with_a_partitioner_compacts_and_stops() {
    let _shared = shale::sync_point::shared();
    let dir = tempfile::tempdir().unwrap();
    let opts = {
        let base = common::quiet_options();
        Options {
            cf: CfOptions {
                compaction_style: CompactionStyle::Fifo,
                compaction_options_fifo: shale::FifoCompactionOptions {
                    max_table_files_size: 1 << 30,
                    allow_compaction: true,
                    ttl_secs: 0,
                },
                sst_partitioner_factory: Some(SstPartitioner::FixedPrefix(8)),
                // Merges of at least two small L0 tables (FIFO's intra-L0 rule).
                level0_file_num_compaction_trigger: 2,
                ..base.cf
            },
            ..base
        }
    };
    let db = Arc::new(Db::open(dir.path(), opts).unwrap());
    let mut model = BTreeMap::new();
    for round in 0..6u64 {
        for s in 0..5u64 {
            let (k, v) = (key(s, round), value(s, round));
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
        db.wait_for_compaction().unwrap();
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let compactor = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || {
            let r = db.compact_range(None, None);
            let _ = tx.send(());
            r
        })
    };
    assert!(
        rx.recv_timeout(Duration::from_secs(120)).is_ok(),
        "compact_range on a FIFO family with a partitioner did not return"
    );
    compactor.join().unwrap().unwrap();
    let t = tables(&db);
    assert_eq!(t.len(), 1, "the L0 tables merge into one: {t:?}");
    check(&db, &model);
}

/// Bug: a flush table installed below L0 was reported to
/// `on_table_file_created` with level 0 (the event was sent before its
/// level was chosen). The created event and the flush-completed event must
/// name the level the MANIFEST gives the table.
#[test]
fn created_events_name_the_level_a_flushed_table_was_installed_at() {
    let _shared = shale::sync_point::shared();
    use parking_lot::Mutex;
    use shale::{EventListener, FlushJobInfo, TableFileCreationInfo};
    #[derive(Default)]
    struct Levels {
        created: Mutex<BTreeMap<u64, usize>>,
        flushed: Mutex<BTreeMap<u64, usize>>,
    }
    impl EventListener for Levels {
        fn on_table_file_created(&self, i: &TableFileCreationInfo) {
            self.created.lock().insert(i.file.file_number, i.file.level);
        }
        fn on_flush_completed(&self, i: &FlushJobInfo) {
            for f in &i.output_files {
                self.flushed.lock().insert(f.file_number, f.level);
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let levels = Arc::new(Levels::default());
    let listener: Arc<dyn EventListener> = levels.clone();
    let db = Db::open(
        dir.path(),
        Options {
            listeners: vec![listener],
            ..options()
        },
    )
    .unwrap();
    let mut model = BTreeMap::new();
    write_streams(&db, 8, 0, 10_000, &mut model);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    // Nothing is rewritten by compactions here (see the first test), so
    // every table was created by a flush and either installed where it
    // lies now or moved there from where the flush installed it.
    let flushed = levels.flushed.lock().clone();
    let created = levels.created.lock().clone();
    assert!(
        flushed.values().any(|&l| l > 0),
        "no flush table installed below L0: {flushed:?}"
    );
    for (number, level) in &flushed {
        assert_eq!(
            created.get(number),
            Some(level),
            "table {number}: created event vs flush completed"
        );
    }
    check(&db, &model);
}

/// Compaction outputs end where streams end too (`detect_insert_streams`
/// covers compactions into L1 and below): 8 streams flushed with detection
/// off (every table spans all of them) and compacted with it on land in
/// tables of one stream each; compacted with it off, tables span streams.
/// The contents are the same either way.
#[test]
fn compactions_cut_outputs_where_streams_end() {
    let _shared = shale::sync_point::shared();
    let spanning = |detect_in_compaction: bool| -> (usize, usize) {
        let dir = tempfile::tempdir().unwrap();
        let mut model = BTreeMap::new();
        let flushed_off = {
            let base = options();
            Options {
                cf: CfOptions {
                    detect_insert_streams: Some(false),
                    level0_file_num_compaction_trigger: 100,
                    level0_slowdown_writes_trigger: 100,
                    level0_stop_writes_trigger: 100,
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open(dir.path(), flushed_off).unwrap();
        write_streams(&db, 8, 0, 6_000, &mut model);
        db.flush().unwrap();
        // Flushed without detection: tables span streams.
        assert!(tables(&db).iter().any(|(_, lo, hi)| lo[..8] != hi[..8]));
        db.close().unwrap();
        let o = {
            let base = options();
            Options {
                cf: CfOptions {
                    detect_insert_streams: Some(detect_in_compaction),
                    ..base.cf
                },
                ..base
            }
        };
        let db = Db::open(dir.path(), o).unwrap();
        db.compact_range(None, None).unwrap();
        check(&db, &model);
        let t = tables(&db);
        assert!(t.iter().all(|(level, _, _)| *level > 0));
        let spanning = t.iter().filter(|(_, lo, hi)| lo[..8] != hi[..8]).count();
        (spanning, t.len())
    };
    let (with, n) = spanning(true);
    assert_eq!(with, 0, "{with} of {n} tables span two streams");
    assert!(n >= 8, "{n} tables");
    let (without, n) = spanning(false);
    assert!(
        without > 0,
        "{without} of {n} tables span streams without detection"
    );
}
