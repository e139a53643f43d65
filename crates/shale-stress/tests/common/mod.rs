//! Helpers shared by the tests that run the `shale-stress` binary and kill
//! it: its path, the seed, and reading its result lines.

#![allow(dead_code)]

use std::process::Output;

use rand::Rng;

/// The `shale-stress` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_shale-stress");
/// The signal a killed child reports.
pub const SIGKILL: i32 = 9;

/// `SHALE_SEED` if set, else a random seed; printed so a failure can be
/// replayed.
pub fn seed() -> u64 {
    let seed = std::env::var("SHALE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    println!("SHALE_SEED={seed}");
    seed
}

/// A child's status, stdout and stderr, for failure messages.
pub fn show(o: &Output) -> String {
    format!(
        "{}\n--- stdout:\n{}\n--- stderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A number after `name=` on the last line starting with `prefix`.
pub fn field(o: &Output, prefix: &str, name: &str) -> u64 {
    let out = String::from_utf8_lossy(&o.stdout);
    out.lines()
        .rev()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix(&format!("{name}=")))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {name}= on a {prefix:?} line:\n{}", show(o)))
}
