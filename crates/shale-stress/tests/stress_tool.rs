//! The `shale-stress` tool end to end, in process: a short run with reopens
//! verifies clean, and a tampered expected state (a "lost write") is caught;
//! runs with merges, single deletes and range deletions (through the
//! binary, to read its counts) verify clean and write each kind of entry.

use std::os::unix::fs::FileExt;
use std::process::Command;

use shale_stress::stress::main as stress_main;

mod common;
use common::{field, show, BIN};

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

    // Tamper: pretend key k was acknowledged with another value base. The
    // slot layout is a 32-byte header then one u64 per key (low half:
    // committed state). Pick a key that is live so the lie is visible.
    let expected = format!("{db}.expected");
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&expected)
        .unwrap();
    let mut tampered = false;
    for k in 0..300u64 {
        let mut b = [0u8; 8];
        f.read_exact_at(&mut b, 32 + 8 * k).unwrap();
        let slot = u64::from_le_bytes(b);
        if slot != 0 && slot >> 32 == 0 {
            let lie = (slot as u32 % 1000) + 1 + (slot as u32);
            f.write_all_at(&u64::from(lie & 0x7fff_ffff).to_le_bytes(), 32 + 8 * k)
                .unwrap();
            tampered = true;
            break;
        }
    }
    assert!(tampered, "no live key to tamper with");
    assert_eq!(
        run(&["--verify_only"]),
        1,
        "a lost write must fail verification"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(stress_main(args(&["--threads=2".into()])), 2);
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
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("{db}.expected"))
        .unwrap();
    let n = max_key * cfs;
    let read = |at: u64| {
        let mut b = [0u8; 8];
        f.read_exact_at(&mut b, at).unwrap();
        u64::from_le_bytes(b)
    };
    let slot_at = |i: u64| 32 + 8 * i;
    let tag_at = |i: u64| 32 + 8 * (n + i);
    // A live key in each family.
    let live = |cf: u64| {
        (0..max_key)
            .map(|k| cf * max_key + k)
            .find(|&i| read(slot_at(i)) as u32 != 0 && read(slot_at(i)) >> 32 == 0)
            .expect("a live key")
    };
    let (a, b) = (live(0), live(1));
    let (sa, sb) = (read(slot_at(a)) as u32, read(slot_at(b)) as u32);
    let pending =
        |committed: u32, new: u32| (u64::from((1u32 << 31) | new) << 32) | u64::from(committed);
    let other = |s: u32| ((s % 1000) + 1 + s) & 0x7fff_ffff;
    // Key a: the DB holds its committed state (the batch not applied);
    // key b: the DB holds its pending state (the batch applied).
    f.write_all_at(&pending(sa, other(sa)).to_le_bytes(), slot_at(a))
        .unwrap();
    f.write_all_at(&pending(other(sb), sb).to_le_bytes(), slot_at(b))
        .unwrap();
    for i in [a, b] {
        f.write_all_at(&0xabcdu64.to_le_bytes(), tag_at(i)).unwrap();
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
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("{db}.expected"))
        .unwrap();
    let mut b = [0u8; 8];
    let k = (0..300u64)
        .find(|k| {
            f.read_exact_at(&mut b, 32 + 8 * k).unwrap();
            let slot = u64::from_le_bytes(b);
            slot != 0 && slot >> 32 == 0
        })
        .expect("a live key");
    let slot = u64::from_le_bytes(b) as u32;
    let lie = ((slot % 1000) + 1 + slot) & 0x7fff_ffff;
    f.write_all_at(&u64::from(lie).to_le_bytes(), 32 + 8 * k)
        .unwrap();
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
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(format!("{db}.expected"))
        .unwrap();
    let mut b = [0u8; 8];
    let k = (0..400u64)
        .find(|k| {
            f.read_exact_at(&mut b, 32 + 8 * k).unwrap();
            let slot = u64::from_le_bytes(b);
            slot != 0 && slot >> 32 == 0
        })
        .expect("a live key");
    f.write_all_at(&0u64.to_le_bytes(), 32 + 8 * k).unwrap();
    let o = Command::new(BIN)
        .args([format!("--db={db}"), "--verify_only".into()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
}
