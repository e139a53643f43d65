//! The `shale-stress` tool end to end, in process: a short run with reopens
//! verifies clean, and a tampered expected state (a "lost write") is caught;
//! runs with merges, single deletes, range deletions, expiring puts and the
//! compaction filter (through the binary, to read its counts) verify clean
//! and write each kind of entry; a key recorded as expired that the DB
//! still holds, and a filtered DB verified as one without the filter, are
//! caught.

use std::process::Command;

use shale_stress::stress::main as stress_main;

mod common;
use common::{field, show, ExpectedFile, BIN};

fn args(list: &[String]) -> Vec<String> {
    list.to_vec()
}

#[test]
fn short_run_with_reopens_verifies_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let run = |extra: &[&str]| {
        let mut a = vec![
            format!("--db={db}"),
            "--max_key=300".into(),
            "--seed=11".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        stress_main(args(&a))
    };
    assert_eq!(
        run(&["--threads=3", "--ops_per_thread=1500", "--reopen=2"]),
        0
    );
    assert_eq!(run(&["--verify_only"]), 0);
    // A second run on the same DB (new seed, new options) continues.
    assert_eq!(
        run(&["--threads=2", "--ops_per_thread=500", "--seed=12"]),
        0
    );

    // Tamper: pretend key k was acknowledged with another value base (the
    // low half of its slot: the committed state). Pick a key that is live
    // so the lie is visible.
    let f = ExpectedFile::open(format!("{db}.expected"), 300, 1);
    let k = f.plain_live(0).expect("no live key to tamper with");
    let slot = f.slot(k) as u32;
    let lie = (slot % 1000) + 1 + slot;
    f.set_slot(k, u64::from(lie & 0x7fff_ffff));
    assert_eq!(
        run(&["--verify_only"]),
        1,
        "a lost write must fail verification"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(stress_main(args(&["--threads=2".into()])), 2);
    let help = Command::new(BIN).arg("--help").output().unwrap();
    assert!(help.status.success(), "{}", show(&help));
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in ["--ttl_percent", "--compaction_filter", "--delrangepercent"] {
        assert!(
            text.matches(flag).count() >= 2,
            "{flag} in usage and help: {text}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none").display().to_string();
    assert_eq!(
        stress_main(args(&[format!("--db={db}"), "--verify_only".into()])),
        2
    );
}

/// The same with keys over three column families: cross-family batches,
/// `get_cf`/`multi_get_cf`, `range_cf`, bounded `iter_cf` at snapshots,
/// `flush_cf`/`compact_range_cf`, reopens; a second run keeps the families.
#[test]
fn short_run_over_three_column_families_verifies_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let run = |extra: &[&str]| {
        let mut a = vec![
            format!("--db={db}"),
            "--max_key=200".into(),
            "--column_families=3".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        stress_main(args(&a))
    };
    assert_eq!(
        run(&[
            "--threads=3",
            "--ops_per_thread=1500",
            "--reopen=2",
            "--seed=21"
        ]),
        0
    );
    assert_eq!(run(&["--verify_only", "--seed=22"]), 0);
    assert_eq!(
        run(&["--threads=2", "--ops_per_thread=500", "--seed=23"]),
        0
    );
    let names = shale::Db::list_cfs(
        dir.path().join("db"),
        &shale::Options {
            create_if_missing: false,
            ..shale::Options::default()
        },
    )
    .unwrap();
    assert_eq!(names, ["default", "cf1", "cf2"]);
}

/// A batch cut by a kill that the DB holds in one family but not in another
/// (two pending keys with one batch tag, one resolving to its new state and
/// one to its old state) fails verification.
#[test]
fn half_applied_cross_family_batch_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let (max_key, cfs) = (100u64, 2u64);
    let base = |extra: &str| {
        vec![
            format!("--db={db}"),
            format!("--max_key={max_key}"),
            format!("--column_families={cfs}"),
            "--seed=31".into(),
            extra.to_string(),
        ]
    };
    assert_eq!(stress_main(base("--ops_per_thread=800")), 0);
    let f = ExpectedFile::open(format!("{db}.expected"), max_key, cfs);
    // A live key in each family.
    let live = |cf: u64| f.plain_live(cf).expect("a live key");
    let (a, b) = (live(0), live(1));
    let (sa, sb) = (f.slot(a) as u32, f.slot(b) as u32);
    let pending =
        |committed: u32, new: u32| (u64::from((1u32 << 31) | new) << 32) | u64::from(committed);
    let other = |s: u32| ((s % 1000) + 1 + s) & 0x7fff_ffff;
    // Key a: the DB holds its committed state (the batch not applied);
    // key b: the DB holds its pending state (the batch applied).
    f.set_slot(a, pending(sa, other(sa)));
    f.set_slot(b, pending(other(sb), sb));
    for i in [a, b] {
        f.set_tag(i, 0xabcd);
    }
    assert_eq!(
        stress_main(base("--verify_only")),
        1,
        "a batch applied in one family only must fail verification"
    );
}

/// Merges of both kinds and single deletes, over two families, with
/// reopens: every run and verification is clean, each kind of entry is
/// written, and a later run without merge flags (its own drawn settings)
/// reads the operands left behind. Then a tampered merge key is caught.
#[test]
fn merges_and_single_deletes_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let run = |extra: &[&str]| {
        let o = Command::new(BIN)
            .args([
                format!("--db={db}"),
                "--max_key=300".into(),
                "--column_families=2".into(),
            ])
            .args(extra)
            .output()
            .expect("run shale-stress");
        assert!(o.status.success(), "{extra:?}: {}", show(&o));
        o
    };
    let o = run(&[
        "--threads=3",
        "--ops_per_thread=3000",
        "--reopen=2",
        "--seed=41",
        "--merge_percent=40",
        "--nooverwritepercent=20",
    ]);
    assert_eq!(field(&o, "options:", "nooverwritepercent"), 20);
    // Entries written (`merge=`, `single_delete=`, `put_merge=` appear
    // only among them on the done line).
    for kind in ["merge", "single_delete"] {
        assert!(
            field(&o, "done:", kind) > 0,
            "no {kind} written: {}",
            show(&o)
        );
    }
    let o = run(&[
        "--threads=2",
        "--ops_per_thread=2000",
        "--seed=42",
        "--use_merge",
        "--merge_percent=20",
    ]);
    // Fixed when the DB was created.
    assert_eq!(field(&o, "options:", "nooverwritepercent"), 20);
    for kind in ["put_merge", "merge", "single_delete"] {
        assert!(
            field(&o, "done:", kind) > 0,
            "no {kind} written: {}",
            show(&o)
        );
    }
    run(&["--verify_only", "--seed=43"]);
    run(&[
        "--threads=2",
        "--ops_per_thread=500",
        "--seed=44",
        "--use_merge=false",
        "--merge_percent=0",
    ]);

    // Tamper: find a key whose value is an affine merge result (DB value
    // base matches the committed state) and lie about it: verification must
    // fail, as for a put.
    let f = ExpectedFile::open(format!("{db}.expected"), 300, 2);
    let k = f.plain_live(0).expect("a live key");
    let slot = f.slot(k) as u32;
    let lie = ((slot % 1000) + 1 + slot) & 0x7fff_ffff;
    f.set_slot(k, u64::from(lie));
    let o = Command::new(BIN)
        .args([format!("--db={db}"), "--verify_only".into()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
}

/// Range deletions (`--delrangepercent`) over two families with reopens,
/// beside merges, single deletes (cut around: never range-deleted) and
/// narrow and wide ranges: every run and verification is clean and range
/// tombstones are written. Then a key the expected state says a range
/// deletion removed, but the DB still holds, fails verification.
#[test]
fn range_deletions_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let run = |extra: &[&str]| {
        let o = Command::new(BIN)
            .args([
                format!("--db={db}"),
                "--max_key=400".into(),
                "--column_families=2".into(),
            ])
            .args(extra)
            .output()
            .expect("run shale-stress");
        assert!(o.status.success(), "{extra:?}: {}", show(&o));
        o
    };
    for (seed, extra) in [
        (51, ["--delrangepercent=15", "--range_deletion_width=10"]),
        (52, ["--delrangepercent=5", "--range_deletion_width=120"]),
        (53, ["--delrangepercent=30", "--range_deletion_width=1"]),
    ] {
        let o = run(&[
            "--threads=3",
            "--ops_per_thread=3000",
            "--reopen=1",
            &format!("--seed={seed}"),
            "--merge_percent=20",
            "--nooverwritepercent=10",
            extra[0],
            extra[1],
        ]);
        assert_eq!(
            field(&o, "options:", "delrangepercent"),
            extra[0]["--delrangepercent=".len()..]
                .parse::<u64>()
                .unwrap()
        );
        for kind in ["range_deletion", "single_delete"] {
            assert!(
                field(&o, "done:", kind) > 0,
                "seed {seed}: no {kind} written: {}",
                show(&o)
            );
        }
    }
    run(&["--verify_only", "--seed=54"]);

    // Tamper: a key the DB holds is recorded absent, as after a range
    // deletion that covered it in the expected state but not in the DB.
    let f = ExpectedFile::open(format!("{db}.expected"), 400, 2);
    let k = f.plain_live(0).expect("a live key");
    f.set_slot(k, 0);
    let o = Command::new(BIN)
        .args([format!("--db={db}"), "--verify_only".into()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
}

/// Runs the binary on `db` with `extra` flags; asserts it exits 0.
fn run_ok(db: &str, common: &[&str], extra: &[&str]) -> std::process::Output {
    let o = Command::new(BIN)
        .arg(format!("--db={db}"))
        .args(common)
        .args(extra)
        .output()
        .expect("run shale-stress");
    assert!(o.status.success(), "{extra:?}: {}", show(&o));
    o
}

/// Expiring puts of every kind (`--ttl_percent`) and the compaction filter,
/// beside merges, single deletes and range deletions, over two families
/// with a reopen: the run (about 3 s, so near expiries pass during it) and
/// a verification after it are clean, each kind of expiring put is written,
/// values expired by the clock are found gone and the filter's forms are
/// met. A later run without the flag keeps the filter (fixed at creation).
#[test]
fn expiring_puts_and_the_compaction_filter_verify_clean() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let common = ["--max_key=300", "--column_families=2"];
    let o = run_ok(
        &db,
        &common,
        &[
            "--threads=3",
            "--ops_per_thread=100000000",
            "--duration=3",
            "--reopen=1",
            "--seed=61",
            "--ttl_percent=40",
            "--compaction_filter",
            "--merge_percent=20",
            "--nooverwritepercent=10",
            "--delrangepercent=2",
        ],
    );
    assert_eq!(field(&o, "options:", "ttl_percent"), 40);
    assert_eq!(field(&o, "options:", "compaction_filter"), 1);
    for kind in ["put_ttl_expired", "put_ttl_near", "put_ttl_far", "merge"] {
        assert!(
            field(&o, "done:", kind) > 0,
            "no {kind} written: {}",
            show(&o)
        );
    }
    // Seed 61 draws a 16 KiB write buffer: flushes ran the filter.
    let v = run_ok(&db, &common, &["--verify_only", "--seed=62"]);
    for what in ["expired", "expiring", "filtered"] {
        assert!(
            field(&v, "verify", what) > 0,
            "no {what} key met: {}",
            show(&v)
        );
    }
    let o = run_ok(
        &db,
        &common,
        &[
            "--threads=2",
            "--ops_per_thread=1000",
            "--seed=63",
            "--ttl_percent=0",
        ],
    );
    assert_eq!(field(&o, "options:", "compaction_filter"), 1);
}

/// A key the expected state records as expired (its expiry second well past
/// the tolerance) but that the DB still holds fails verification, as does
/// one recorded to last that the DB no longer holds; the same key recorded
/// to expire in an hour verifies clean.
#[test]
fn expired_key_read_present_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let common = [
        "--max_key=200",
        "--ttl_percent=0",
        "--compaction_filter=false",
    ];
    run_ok(
        &db,
        &common,
        &["--threads=2", "--ops_per_thread=800", "--seed=71"],
    );
    let f = ExpectedFile::open(format!("{db}.expected"), 200, 1);
    let k = f.plain_live(0).expect("a live key");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let both = |e: u64| (e << 32) | e;
    let verify = || {
        Command::new(BIN)
            .args([format!("--db={db}"), "--verify_only".into()])
            .output()
            .unwrap()
    };
    f.set_expiry(k, both(now + 3600));
    let o = verify();
    assert!(o.status.success(), "{}", show(&o));
    assert_eq!(field(&o, "verify", "expiring"), 1);
    f.set_expiry(k, both(now - 10));
    let o = verify();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("expiring at {}", now - 10)), "{err}");
}

/// A DB the filter has acted on (changed values in the filtered form,
/// removed keys) fails verification once its expected state says it has no
/// filter: the filtered form is accepted only where the filter may have
/// left it.
#[test]
fn filter_forms_are_caught_where_no_filter_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let common = ["--max_key=400", "--ttl_percent=0"];
    run_ok(
        &db,
        &common,
        &[
            "--threads=2",
            "--ops_per_thread=3000",
            "--reopen=1",
            // A 16 KiB write buffer: flushes run during the run.
            "--seed=84",
            "--compaction_filter",
        ],
    );
    let v = run_ok(&db, &common, &["--verify_only", "--seed=85"]);
    assert!(field(&v, "verify", "filtered") > 0, "{}", show(&v));
    // The header's compaction-filter word (after magic, version, levels,
    // max_key, families and the no-overwrite percent).
    std::fs::OpenOptions::new()
        .write(true)
        .open(format!("{db}.expected"))
        .and_then(|f| std::os::unix::fs::FileExt::write_all_at(&f, &0u32.to_le_bytes(), 32))
        .unwrap();
    let o = Command::new(BIN)
        .args([format!("--db={db}"), "--verify_only".into()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("(filtered form)"),
        "{}",
        show(&o)
    );
}

/// History mode refuses expiring puts and the filter (usage error, 2).
#[test]
fn history_mode_refuses_ttl_and_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db").display().to_string();
    let h = dir.path().join("h").display().to_string();
    for flag in ["--ttl_percent=10", "--compaction_filter"] {
        assert_eq!(
            stress_main(args(&[
                format!("--db={db}"),
                format!("--history={h}"),
                flag.into()
            ])),
            2
        );
    }
}

/// Issue 37's reproduction: a two-family DB written by `shale-stress`,
/// MANIFEST and CURRENT deleted, repaired: every table goes back to the
/// family it records and the expected state verifies clean. Before tables
/// recorded their family, repair placed every table in `default` (family
/// 1's values served under default's keys, or verification stopping at an
/// unexpected family `recovered_cf_1`).
#[test]
fn repair_without_a_manifest_restores_every_column_family() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let db = path.display().to_string();
    let base = |extra: &[&str]| {
        let mut a = vec![
            format!("--db={db}"),
            "--column_families=2".into(),
            "--max_key=2000".into(),
            "--enable_blob_files=0".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    assert_eq!(
        stress_main(base(&["--threads=2", "--ops_per_thread=20000", "--seed=7"])),
        0
    );
    for e in std::fs::read_dir(&path).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n == "CURRENT" || n.starts_with("MANIFEST-") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let r = shale::tools::repair_db(&path).unwrap();
    assert!(
        !r.notes.iter().any(|n| n.contains("WARNING")),
        "{:?}",
        r.notes
    );
    let families: std::collections::BTreeSet<&str> =
        r.tables.iter().map(|(_, f, _)| f.as_str()).collect();
    assert_eq!(families.len(), 2, "tables in both families: {:?}", r.tables);
    assert_eq!(stress_main(base(&["--verify_only", "--seed=8"])), 0);
    // The family is restored by the name its tables record, with a note on
    // where its options came from (the OPTIONS file of the last open, or
    // the defaults for a family created since: see load_latest_options).
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("restored from its tables")),
        "{:?}",
        r.notes
    );
}
