//! The `shale-stress` tool end to end, in process: a short run with reopens
//! verifies clean, and a tampered expected state (a "lost write") is caught.

use std::os::unix::fs::FileExt;

use shale_stress::stress::main as stress_main;

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
