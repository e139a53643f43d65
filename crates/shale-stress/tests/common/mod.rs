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

/// Bytes before the slots of an expected-state file (format version 4; see
/// `src/stress/expected.rs`): slots, batch tags and expiries follow, one
/// u64 per (family, key) each.
pub const EXPECTED_HEADER: u64 = 40;

/// An expected-state file opened to tamper with, as a test of the
/// verifier: a lie it must catch.
pub struct ExpectedFile {
    file: std::fs::File,
    max_key: u64,
    n: u64,
}

impl ExpectedFile {
    /// Opens the file of a DB with `max_key` keys in `cfs` families.
    pub fn open(path: impl AsRef<std::path::Path>, max_key: u64, cfs: u64) -> ExpectedFile {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .expect("open expected state");
        ExpectedFile {
            file,
            max_key,
            n: max_key * cfs,
        }
    }

    fn word(&self, array: u64, i: u64) -> u64 {
        use std::os::unix::fs::FileExt;
        let mut b = [0u8; 8];
        self.file
            .read_exact_at(&mut b, EXPECTED_HEADER + 8 * (array * self.n + i))
            .expect("read expected state");
        u64::from_le_bytes(b)
    }

    fn set_word(&self, array: u64, i: u64, w: u64) {
        use std::os::unix::fs::FileExt;
        self.file
            .write_all_at(&w.to_le_bytes(), EXPECTED_HEADER + 8 * (array * self.n + i))
            .expect("write expected state");
    }

    /// The slot of index `i` (low half committed state, high half pending).
    pub fn slot(&self, i: u64) -> u64 {
        self.word(0, i)
    }

    /// Overwrites the slot of index `i`.
    pub fn set_slot(&self, i: u64, w: u64) {
        self.set_word(0, i, w)
    }

    /// Overwrites the batch tag of index `i`.
    pub fn set_tag(&self, i: u64, w: u64) {
        self.set_word(1, i, w)
    }

    /// The expiry word of index `i` (low half committed, high half pending).
    pub fn expiry(&self, i: u64) -> u64 {
        self.word(2, i)
    }

    /// Overwrites the expiry word of index `i`.
    pub fn set_expiry(&self, i: u64, w: u64) {
        self.set_word(2, i, w)
    }

    /// The first index of family `cf` whose committed value is present,
    /// with nothing pending, not expiring and not of a key the stress
    /// compaction filter may remove (key ≡ 6 mod 8): the DB must hold
    /// exactly that value, so a lie about it must be caught.
    pub fn plain_live(&self, cf: u64) -> Option<u64> {
        (0..self.max_key)
            .filter(|k| k % 8 != 6)
            .map(|k| cf * self.max_key + k)
            .find(|&i| {
                let s = self.slot(i);
                s as u32 != 0 && s >> 32 == 0 && self.expiry(i) == 0
            })
    }
}
