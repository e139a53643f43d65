//! `shale advise`: the cost model's formulas against values computed by
//! hand, the directions the model must move in (monotonicity), FIFO
//! recommended only for data that expires, every row's costs in words, the
//! `--db` comparison on a small DB made by the engine, the JSON output, and
//! clear errors for inputs that cannot work.

mod common;

use common::*;
use shale::{Db, Options};
use shale_cli::advise::bloom;
use shale_cli::advise::estimate::estimate;
use shale_cli::advise::fifo::{self, FifoConfig};
use shale_cli::advise::leveled::{self, LeveledConfig};
use shale_cli::advise::shape::Style;
use shale_cli::advise::universal::{self, UniversalConfig};
use shale_cli::advise::workload::{
    Device, Memory, Workload, MEMTABLE_ENTRY_OVERHEAD, SST_ENTRY_OVERHEAD, WAL_ENTRY_OVERHEAD,
};

const MIB: f64 = 1024.0 * 1024.0;

fn workload(live_keys: f64) -> Workload {
    Workload {
        writes_per_sec: 10_000.0,
        key_size: 16.0,
        value_size: 100.0,
        point_reads_per_sec: 1_000.0,
        scans_per_sec: 10.0,
        scan_length: 100.0,
        live_keys,
        wal: true,
        data_expires: false,
    }
}

fn leveled_config(f: f64, l1: f64, dynamic: bool) -> LeveledConfig {
    LeveledConfig {
        multiplier: f,
        l1_bytes: l1,
        num_levels: 7,
        dynamic,
        write_buffer_size: 64.0 * MIB,
        max_write_buffer_number: 2.0,
        l0_trigger: 4.0,
        target_file_size: 64.0 * MIB,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Fanout 10 and 4 levels below L0 (static sizing): L1 = 10 MiB, L2 = 100,
/// L3 = 1000, L4 = 10000 MiB of live data, a full L0 of 10 MiB.
#[test]
fn leveled_fanout_10_four_levels_by_hand() {
    let mut w = workload(0.0);
    let sst_entry = 16.0 + 100.0 + SST_ENTRY_OVERHEAD;
    w.live_keys = 10_000.0 * MIB / sst_entry;
    let mut c = leveled_config(10.0, 10.0 * MIB, false);
    c.num_levels = 5;
    // One flushed memtable is 2.5 MiB of table.
    c.write_buffer_size = 2.5 * MIB * (116.0 + MEMTABLE_ENTRY_OVERHEAD) / sst_entry;
    let (sizes, base) = leveled::level_bytes(&c, w.live_sst_bytes());
    assert_eq!(base, 1);
    let want = [10.0, 100.0, 1000.0, 10_000.0];
    for (s, w) in sizes.iter().zip(want) {
        assert!(close(*s, w * MIB), "{sizes:?}");
    }
    let shape = leveled::model(&c, &w);
    let names: Vec<&str> = shape.write_terms.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["wal", "flush", "L0->L1", "L1->L2", "L2->L3", "L3->L4"]
    );
    let s = sst_entry / 116.0;
    // L0 -> L1: all of L0 (10 MiB) and all of L1 (10 MiB) rewritten, less
    // the share of L0's keys L1 already holds (it covers 10/10000 of the key
    // space). Below: (flow into the level above) * (r/2 + 1 - share of moved
    // keys already in the level below), r = 10; the levels below cover
    // 0.01, 0.1 and 1 of the key space.
    let amps = [
        (116.0 + WAL_ENTRY_OVERHEAD) / 116.0,
        s,
        s * (1.0 + 10.0 / 10.0 - 0.001),
        s * 0.999 * (5.0 + 1.0 - 0.01),
        s * 0.999 * 0.99 * (5.0 + 1.0 - 0.1),
        s * 0.999 * 0.99 * 0.9 * (5.0 + 1.0 - 1.0),
    ];
    for (t, a) in shape.write_terms.iter().zip(amps) {
        assert!(close(t.amp, a), "{}: {} != {a}", t.name, t.amp);
    }
    assert!(close(shape.write_amp(), amps.iter().sum()));
    // Steady space: L0 half full (5 MiB) + the four levels, over live.
    assert!(close(shape.space_amp_steady, (5.0 + 11_110.0) / 10_000.0));
    // Read side: 2 L0 files + 4 levels; with 10 bits per key a missing key
    // costs 6 false positives' worth of reads when nothing is cached.
    let e = estimate(
        shape,
        &w,
        &Device {
            read_bytes_per_sec: 1e9,
            write_bytes_per_sec: 5e8,
            read_iops: 1e5,
        },
        &Memory {
            budget_bytes: 0.0,
            block_size: 4096.0,
        },
        10.0,
    );
    assert!(close(e.sorted_runs, 6.0));
    assert!(close(
        e.point_miss_ios,
        6.0 * bloom::false_positive_rate(10.0)
    ));
    assert!(e.point_miss_ios_monkey < e.point_miss_ios);
    assert!(close(e.scan_ios, 6.0 + 100.0 * sst_entry / 4096.0));
    assert!(close(
        e.filter_bytes,
        (5.0 + 11_110.0) * MIB / sst_entry * 10.0 / 8.0
    ));
}

#[test]
fn the_seeds_lambert_w_levels() {
    // Total fanout 1024 with w + 1 per level: n = ln(1024) / 1.27846.
    assert!((leveled::optimal_levels(1024.0) - 5.4217).abs() < 1e-3);
}

#[test]
fn more_levels_cost_more_write_amp() {
    // The same data and multiplier, a smaller L1 (and L0 sized like it, as
    // RocksDB advises): one more level each time.
    let w = workload(1e9);
    let mut last = 0.0;
    let mut last_levels = 0;
    for l1 in [4096.0, 256.0, 16.0, 1.0] {
        let mut c = leveled_config(10.0, l1 * MIB, true);
        c.write_buffer_size = l1 * MIB / 4.0;
        let s = leveled::model(&c, &w);
        let levels = s.runs.len();
        assert!(levels > last_levels, "{l1} MiB: {levels} levels");
        assert!(s.write_amp() > last, "{l1} MiB: {}", s.write_amp());
        (last, last_levels) = (s.write_amp(), levels);
    }
}

#[test]
fn a_larger_multiplier_means_fewer_levels_less_space_more_write_amp() {
    let w = workload(1e9);
    let shapes: Vec<_> = [4.0, 6.0, 10.0, 16.0]
        .iter()
        .map(|&f| leveled::model(&leveled_config(f, 64.0 * MIB, true), &w))
        .collect();
    for p in shapes.windows(2) {
        assert!(p[1].runs.len() <= p[0].runs.len());
        assert!(p[1].space_amp_steady < p[0].space_amp_steady);
        assert!(p[1].write_amp() > p[0].write_amp());
    }
}

fn universal_config(size_ratio: f64, amp: f64) -> UniversalConfig {
    UniversalConfig {
        size_ratio,
        max_size_amp_percent: amp,
        write_buffer_size: 64.0 * MIB,
        max_write_buffer_number: 2.0,
        l0_trigger: 4.0,
    }
}

#[test]
fn universal_pick_follows_the_engines_rules() {
    use universal::pick;
    // Fewer runs than the trigger: nothing.
    assert_eq!(pick(&[1.0, 1.0, 100.0], 1.0, 200.0, 4), None);
    // Size ratio 1, TotalSize: 1 + 1 = 2; 2 <= 1.01 x 2: 4; 100 > 1.01 x 4.
    assert_eq!(
        pick(&[1.0, 1.0, 2.0, 100.0], 1.0, 200.0, 4),
        Some((0, 3, false))
    );
    // Space amp: the newer runs (10 + 30 + 70 = 110) reach 200% of 50.
    assert_eq!(
        pick(&[10.0, 30.0, 70.0, 50.0], 1.0, 200.0, 4),
        Some((0, 4, true))
    );
    // No window, 4 runs: nothing; 5 runs: the newest 5 - 4 + 1 = 2 merge.
    assert_eq!(pick(&[1.0, 3.0, 10.0, 1000.0], 1.0, 200.0, 4), None);
    assert_eq!(
        pick(&[1.0, 3.0, 10.0, 30.0, 1000.0], 1.0, 200.0, 4),
        Some((0, 2, false))
    );
    // size_ratio 10 lets a run 5% larger in, size_ratio 1 does not.
    assert_eq!(
        pick(&[1.0, 1.05, 3.0, 1000.0], 10.0, 200.0, 4),
        Some((0, 2, false))
    );
    assert_eq!(pick(&[1.0, 1.05, 3.0, 1000.0], 1.0, 200.0, 4), None);
}

#[test]
fn universal_directions() {
    let w = workload(1e9);
    let r1 = universal::model(&universal_config(1.0, 200.0), &w);
    // A smaller max_size_amplification_percent: the last run merges more
    // often, less space.
    let a100 = universal::model(&universal_config(1.0, 100.0), &w);
    let full = |s: &shale_cli::advise::shape::Shape| {
        s.write_terms
            .iter()
            .find(|t| t.name == "full merges")
            .map(|t| t.amp)
            .unwrap()
    };
    assert!(full(&a100) > full(&r1));
    assert!(a100.space_amp_steady < r1.space_amp_steady);
    assert!(a100.space_amp_peak < r1.space_amp_peak);
    for s in [&r1, &a100] {
        assert!(s.space_amp_steady > 1.0 && s.space_amp_steady < 3.0);
        assert!(s.space_amp_peak >= s.space_amp_steady && s.space_amp_peak <= 4.0);
        // The trigger (4) bounds the runs left after compaction.
        assert!(s.sorted_runs() <= 4.0);
    }
    // The run-count rule merges the newest runs whatever their sizes: the
    // run it feeds is rewritten on every flush, so write-amp grows with
    // live data / memtable, faster than leveled's logarithm.
    let small = universal::model(&universal_config(1.0, 200.0), &workload(1e7));
    assert!(r1.write_amp() > 2.0 * small.write_amp());
    // Tiered keeps more space than leveled.
    let lv = leveled::model(&leveled_config(10.0, 256.0 * MIB, true), &w);
    assert!(r1.space_amp_steady > lv.space_amp_steady);
}

#[test]
fn fifo_writes_once_and_says_when_it_drops_live_data() {
    let w = workload(1e8);
    let c = |max| FifoConfig {
        max_size: max,
        write_buffer_size: 64.0 * MIB,
        max_write_buffer_number: 2.0,
    };
    let big = fifo::model(&c(2.0 * w.live_sst_bytes()), &w);
    assert!(close(
        big.write_amp(),
        (232.0 + WAL_ENTRY_OVERHEAD + SST_ENTRY_OVERHEAD) / 116.0
    ));
    assert!(!fifo::drops_live_data(&c(2.0 * w.live_sst_bytes()), &w));
    let small = c(w.live_sst_bytes() / 2.0);
    assert!(fifo::drops_live_data(&small, &w));
    assert!(fifo::model(&small, &w).notes[0].starts_with("drops live data"));
}

/// The general workload: a 100 GiB DB with writes and point reads.
const GENERAL: &[&str] = &[
    "advise",
    "--db-size",
    "100GiB",
    "--write-rate",
    "20000",
    "--point-reads",
    "5000",
];

/// A log kept for a retention period: 100 GiB, writes only, memory enough
/// for every style's filters and index.
const EXPIRING_LOG: &[&str] = &[
    "advise",
    "--db-size",
    "100GiB",
    "--write-rate",
    "20000",
    "--memory",
    "8GiB",
    "--data-expires",
];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

/// The ranked rows of a text table: (rank line, the indented lines under
/// it).
fn table_rows(text: &str) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        if line.starts_with("rank ") {
            in_table = true;
        } else if in_table && line.starts_with(|c: char| c.is_ascii_digit()) {
            rows.push((line.to_string(), Vec::new()));
        } else if in_table && line.starts_with("       ") {
            rows.last_mut()
                .expect("an indented line follows a row")
                .1
                .push(line.trim().to_string());
        } else if in_table {
            break;
        }
    }
    rows
}

/// Issue 36, defect 4: FIFO deletes data by age or size whatever is live,
/// and was ranked first (cheapest write-amp and device time) for a 100 GiB
/// DB with writes and point reads. Without `--data-expires` it is ranked
/// last, marked not applicable, and never recommended.
#[test]
fn advise_general_workload_does_not_recommend_fifo() {
    // With the default 1 GiB budget (every style over it) and with 4 GiB
    // (none over it): FIFO was first with both.
    for memory in ["1GiB", "4GiB"] {
        let args = with(GENERAL, &["--memory", memory]);
        let text = ok(&args);
        let rows = table_rows(&text);
        assert_eq!(rows.len(), 8, "{text}");
        assert!(!rows[0].0.contains("fifo"), "{memory}: {text}");
        let last = &rows[7].0;
        assert!(last.contains("fifo"), "{memory}: {text}");
        assert!(
            last.contains("not applicable: drops live data"),
            "{memory}: {text}"
        );
        assert!(text.contains("options to set (leveled"), "{memory}: {text}");
        assert!(!text.contains("kCompactionStyleFIFO"), "{memory}: {text}");

        let v: serde_json::Value = serde_json::from_str(&ok(&with(&args, &["--json"]))).unwrap();
        assert_eq!(v["workload"]["data_expires"], false);
        let c = v["candidates"].as_array().unwrap();
        assert_ne!(c[0]["shape"]["style"], "fifo", "{memory}");
        assert_eq!(v["recommended"], c[0]["shape"]["label"], "{memory}");
        // Every FIFO candidate after every other one.
        let first_fifo = c
            .iter()
            .position(|e| e["shape"]["style"] == "fifo")
            .unwrap();
        for e in &c[first_fifo..] {
            assert_eq!(e["shape"]["style"], "fifo", "{memory}");
            assert_eq!(e["applicable"], false, "{memory}");
        }
    }
}

/// With `--data-expires` FIFO is ranked like any other style: first where
/// the model says it is cheapest (a log written and never read, kept for a
/// retention period), and its options are the ones to set.
#[test]
fn advise_may_recommend_fifo_when_data_expires() {
    let text = ok(EXPIRING_LOG);
    let rows = table_rows(&text);
    assert!(rows[0].0.contains("fifo"), "{text}");
    assert!(!rows[0].0.contains("not applicable"), "{text}");
    assert!(text.contains("options to set (fifo"), "{text}");
    assert!(
        text.contains("compaction_style=kCompactionStyleFIFO"),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&ok(&with(EXPIRING_LOG, &["--json"]))).unwrap();
    assert_eq!(v["workload"]["data_expires"], true);
    let c = v["candidates"].as_array().unwrap();
    // The first is the cheapest of those without demerits: the model decides.
    let util = |e: &serde_json::Value| e["device_utilisation"].as_f64().unwrap();
    let sound: Vec<_> = c
        .iter()
        .filter(|e| e["demerits"].as_array().unwrap().is_empty())
        .collect();
    assert!(sound.iter().all(|e| util(&c[0]) <= util(e)), "{v}");
    assert_eq!(c[0]["shape"]["style"], "fifo");
    assert_eq!(c[0]["applicable"], true);
    assert_eq!(v["recommended"], c[0]["shape"]["label"]);
    // A maximum below the live data still drops live keys: ranked after
    // the sound candidates even when the data expires.
    let v: serde_json::Value = serde_json::from_str(&ok(&with(
        EXPIRING_LOG,
        &["--fifo-max-size", "10GiB", "--json"],
    )))
    .unwrap();
    let c = v["candidates"].as_array().unwrap();
    let fifo = c.iter().find(|e| e["shape"]["style"] == "fifo").unwrap();
    assert_eq!(fifo["demerits"][0], "drops live data");
    assert_ne!(c[0]["shape"]["style"], "fifo");
}

/// FIFO alone and data that does not expire: nothing to recommend.
#[test]
fn advise_fifo_alone_without_expiry_recommends_nothing() {
    let text = ok(&with(GENERAL, &["--style", "fifo"]));
    assert!(!text.contains("options to set"), "{text}");
    assert!(text.contains("no recommendation"), "{text}");
    assert!(text.contains("--data-expires"), "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&with(GENERAL, &["--style", "fifo", "--json"]))).unwrap();
    assert!(v["recommended"].is_null(), "{v}");
    let help = ok(&["advise", "--help"]);
    assert!(help.contains("--data-expires"), "{help}");
}

/// Every row of the ranking says in words what it costs: write-amp, read
/// cost and space-amp, and for FIFO that it deletes the oldest tables
/// whatever is live in them.
#[test]
fn advise_every_row_says_what_it_costs_in_words() {
    for args in [GENERAL, EXPIRING_LOG] {
        let text = ok(args);
        let rows = table_rows(&text);
        assert_eq!(rows.len(), 8, "{text}");
        for (row, words) in &rows {
            let has = |start: &str| words.iter().any(|l| l.starts_with(start));
            assert!(has("write-amp "), "{row}: {words:?}");
            assert!(has("read cost: "), "{row}: {words:?}");
            assert!(has("space-amp "), "{row}: {words:?}");
            assert!(
                words.iter().any(|l| l.contains("bytes for each byte put")),
                "{row}: {words:?}"
            );
            assert!(
                words.iter().any(|l| l.contains("device reads")),
                "{row}: {words:?}"
            );
            assert!(
                words
                    .iter()
                    .any(|l| l.contains("more space than the live data")),
                "{row}: {words:?}"
            );
            let deletes = words
                .iter()
                .find(|l| l.starts_with("deletes data: "))
                .map(|l| l.as_str());
            if row.contains("fifo") {
                let d = deletes.unwrap_or_else(|| panic!("{row}: {words:?}"));
                assert!(d.contains("by size"), "{d}");
                assert!(d.contains("by age"), "{d}");
                assert!(d.contains("whatever is live"), "{d}");
                assert!(words.iter().any(|l| l.contains("no compaction")), "{row}");
            } else {
                assert!(deletes.is_none(), "{row}: {words:?}");
                assert!(words.iter().any(|l| l.contains("compaction ")), "{row}");
            }
        }
        let v: serde_json::Value = serde_json::from_str(&ok(&with(args, &["--json"]))).unwrap();
        for e in v["candidates"].as_array().unwrap() {
            let costs = &e["costs"];
            assert!(costs["write"].as_str().unwrap().starts_with("write-amp "));
            assert!(costs["read"].as_str().unwrap().starts_with("read cost: "));
            assert!(costs["space"].as_str().unwrap().starts_with("space-amp "));
            assert_eq!(
                costs["deletes"].is_string(),
                e["shape"]["style"] == "fifo",
                "{e}"
            );
        }
    }
}

/// The ranking itself: the cheapest FIFO is last for data that does not
/// expire and first when it does.
#[test]
fn advise_ranks_fifo_last_unless_data_expires() {
    use shale_cli::advise::rank::{applicable, rank, recommended, NOT_APPLICABLE};
    let mut w = workload(1e8);
    let device = Device {
        read_bytes_per_sec: 1e9,
        write_bytes_per_sec: 5e8,
        read_iops: 1e5,
    };
    let memory = Memory {
        budget_bytes: 64.0 * 1024.0 * MIB,
        block_size: 4096.0,
    };
    let fifo_config = FifoConfig {
        max_size: 2.0 * w.live_sst_bytes(),
        write_buffer_size: 64.0 * MIB,
        max_write_buffer_number: 2.0,
    };
    // No reads: FIFO (no compaction) is the cheapest by far.
    w.point_reads_per_sec = 0.0;
    w.scans_per_sec = 0.0;
    let candidates = |w: &Workload| {
        vec![
            estimate(fifo::model(&fifo_config, w), w, &device, &memory, 10.0),
            estimate(
                leveled::model(&leveled_config(10.0, 256.0 * MIB, true), w),
                w,
                &device,
                &memory,
                10.0,
            ),
        ]
    };
    let ranked = rank(candidates(&w), &w);
    assert!(ranked[0].device_utilisation > ranked[1].device_utilisation);
    assert_eq!(ranked[1].shape.style, Style::Fifo);
    assert!(!applicable(&ranked[1], &w));
    assert_eq!(
        shale_cli::advise::rank::demerits(&ranked[1], &w),
        [NOT_APPLICABLE]
    );
    assert_eq!(
        recommended(&ranked, &w).unwrap().shape.style,
        Style::Leveled
    );
    // FIFO alone: nothing to recommend.
    assert!(recommended(&ranked[1..], &w).is_none());

    w.data_expires = true;
    let ranked = rank(candidates(&w), &w);
    assert_eq!(ranked[0].shape.style, Style::Fifo);
    assert!(shale_cli::advise::rank::demerits(&ranked[0], &w).is_empty());
    assert_eq!(recommended(&ranked, &w).unwrap().shape.style, Style::Fifo);
}

#[test]
fn more_bloom_bits_fewer_wasted_reads() {
    let mut last = f64::INFINITY;
    for bits in [0.0, 2.0, 5.0, 10.0, 20.0] {
        let fp = bloom::false_positive_rate(bits);
        assert!(fp < last || bits == 0.0);
        last = fp;
    }
}

#[test]
fn json_output_ranks_every_candidate() {
    let out = ok(&[
        "advise",
        "--keys",
        "1e8",
        "--point-reads",
        "5000",
        "--level-multiplier",
        "4,10",
        "--fifo-max-size",
        "1GiB",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let c = v["candidates"].as_array().unwrap();
    // 2 leveled, 2 universal (size_ratio 1 and 10), 1 FIFO.
    assert_eq!(c.len(), 5);
    for (i, e) in c.iter().enumerate() {
        assert_eq!(e["rank"], i + 1);
        assert!(e["write_amp"].as_f64().unwrap() > 1.0);
        assert!(e["options"]["compaction_style"].is_string());
    }
    // FIFO without --data-expires (and with 1 GiB it keeps less than the
    // ~12 GiB live): ranked last.
    assert_eq!(c[4]["shape"]["style"], "fifo");
    assert_eq!(c[4]["applicable"], false);
    assert_eq!(c[4]["demerits"][0], "not applicable: drops live data");
    assert!(
        v["write_amp_minimising_levels"]["lwa2_w_plus_1"]
            .as_f64()
            .unwrap()
            > 1.0
    );
    let text = ok(&["advise", "--db-size", "10GiB", "--style", "leveled"]);
    assert!(text.contains("options to set (leveled"), "{text}");
    assert!(text.contains("max_bytes_for_level_multiplier="), "{text}");
}

#[test]
fn bad_input_says_what_is_wrong() {
    let cases: &[(&[&str], &str)] = &[
        (&["advise"], "give the DB size"),
        (
            &["advise", "--keys", "0"],
            "DB size (live keys) must be a positive number",
        ),
        (
            &["advise", "--keys", "1e6", "--level-multiplier", "1"],
            "must be more than 1",
        ),
        (&["advise", "--db-size", "12XB"], "unknown unit 'XB'"),
        (
            &["advise", "--keys", "1e6", "--style", "btree"],
            "unknown style 'btree'",
        ),
        (
            &["advise", "--keys", "1e6", "--device-iops", "0"],
            "device read IOPS must be",
        ),
        (
            &["advise", "--keys", "1e6", "--bloom-bits", "200"],
            "--bloom-bits",
        ),
    ];
    for (args, want) in cases {
        let r = shale(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
    let d = tempfile::tempdir().unwrap();
    let r = shale(&["advise", "--db", path_str(d.path())]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a Shale DB"), "{}", r.stderr);
    let bad = d.path().join("bench.json");
    std::fs::write(&bad, "{\"benchmark\": 1}\n").unwrap();
    let r = shale(&["advise", "--bench", path_str(&bad)]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("not a shale-bench --json record"),
        "{}",
        r.stderr
    );
}

/// A leveled DB with several levels: 64 KiB memtables, 256 KiB base level,
/// multiplier 4, ~3 MB of 100-byte values, compacted to its steady shape.
fn make_leveled_db(dir: &std::path::Path) {
    let o = Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 64 << 10,
            max_bytes_for_level_base: 256 << 10,
            max_bytes_for_level_multiplier: 4.0,
            level_compaction_dynamic_level_bytes: true,
            target_file_size_base: 64 << 10,
            ..Default::default()
        },
        ..Options::default()
    };
    let db = Db::open(dir, o).unwrap();
    let value = vec![b'v'; 100];
    let mut x: u64 = 1;
    for _ in 0..30_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let k = format!("{:016}", (x >> 33) % 20_000);
        db.put(k.as_bytes(), &value).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    db.close().unwrap();
}

#[test]
fn db_prediction_beside_its_actual_shape() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("db");
    make_leveled_db(&dir);
    let before = snapshot_dir(&dir);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["advise", "--db", path_str(&dir), "--json"])).unwrap();
    assert_eq!(snapshot_dir(&dir), before, "advise --db changed the DB");
    assert_eq!(v["config"]["multiplier"], 4.0);
    assert_eq!(v["config"]["l1_bytes"], 262144.0);
    let levels = v["levels"].as_array().unwrap();
    let nonempty = levels
        .iter()
        .filter(|l| l["level"].as_u64().unwrap() > 0 && l["bytes"].as_u64().unwrap() > 0)
        .count();
    assert!(nonempty >= 2, "{levels:?}");
    // The last level is predicted from itself; the others from the model.
    let last = levels
        .iter()
        .rev()
        .find(|l| l["bytes"].as_u64().unwrap() > 0)
        .unwrap();
    let ratio = last["predicted_bytes"].as_f64().unwrap() / last["bytes"].as_f64().unwrap();
    assert!((ratio - 1.0).abs() < 0.05, "{last}");
    let sa = v["measured"]["space_amp"].as_f64().unwrap();
    assert!((1.0..2.0).contains(&sa), "{sa}");
    assert!(v["predicted"]["write_amp"].as_f64().unwrap() > 2.0);
    let text = ok(&["advise", "--db", path_str(&dir)]);
    assert!(
        text.contains("space-amp (tables / last level): predicted"),
        "{text}"
    );
}

#[test]
fn bench_record_predicted_beside_measured() {
    let d = tempfile::tempdir().unwrap();
    let flags = serde_json::json!({
        "max_bytes_for_level_multiplier": "10", "max_bytes_for_level_base": "8388608",
        "num_levels": "7", "level_compaction_dynamic_level_bytes": "true",
        "write_buffer_size": "2097152", "max_write_buffer_number": "2",
        "level0_file_num_compaction_trigger": "4", "target_file_size_base": "2097152",
        "key_size": "16", "value_size": "100", "disable_wal": "false"
    });
    let rec = |bench: &str, wa: f64| {
        serde_json::json!({
            "benchmark": bench, "engine_write_amp": wa, "level_write_amp": [1.05, 0.0, 0.0, 0.0, 2.0, 2.0, 5.0],
            "space_amp": 1.3, "db_size_bytes": 300_000_000u64, "live_bytes_estimate": 232_000_000u64,
            "user_bytes_written": 58_000_000u64, "flags": flags, "extra": "ignored"
        })
        .to_string()
    };
    let file = d.path().join("run.json");
    // A warm-up pass, then the measured one: the last is compared.
    let text = format!("{}\n{}\n", rec("overwrite", 9.0), rec("overwrite", 11.0));
    std::fs::write(&file, text).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["advise", "--bench", path_str(&file), "--json"])).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r["measured"]["write_amp"], 11.0);
    let w = Workload {
        live_keys: 232e6 / 116.0,
        ..workload(0.0)
    };
    let mut c = leveled_config(10.0, 8.0 * MIB, true);
    c.write_buffer_size = 2.0 * MIB;
    c.target_file_size = 2.0 * MIB;
    let want = leveled::model(&c, &w).write_amp();
    let got = r["predicted"]["write_amp"].as_f64().unwrap();
    assert!(close(got, want), "{got} != {want}");
    let err = r["error_pct"]["write_amp"].as_f64().unwrap();
    assert!(close(err, (want - 11.0) / 11.0 * 100.0));
    let text = ok(&["advise", "--bench", path_str(&file)]);
    assert!(text.contains("leveled f=10 L1=8MiB v=100"), "{text}");
    assert!(text.contains("L6: predicted"), "{text}");
    let r = shale(&[
        "advise",
        "--bench",
        path_str(&file),
        "--benchmark",
        "readrandom",
    ]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("no 'readrandom' record (has: overwrite, overwrite)"),
        "{}",
        r.stderr
    );
}
