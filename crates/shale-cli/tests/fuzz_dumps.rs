//! Random bytes, and real files with random damage, given to the dump
//! commands as a MANIFEST, a WAL and an SST: always a clear error or a
//! dump with its damage reported, never a panic (exit code 101) or a hang.

mod common;

use common::*;

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// The dump command for a file named like `name`.
fn command(name: &str) -> Vec<&'static str> {
    if name.starts_with("MANIFEST-") {
        vec!["manifest", "dump"]
    } else if name.ends_with(".log") {
        vec!["wal", "dump"]
    } else {
        vec!["sst", "dump", "--verify"]
    }
}

/// Writes `bytes` as `dir/name` and dumps it, in text and in JSON.
fn dump(dir: &std::path::Path, name: &str, bytes: &[u8], seed: u64) {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    for json in [false, true] {
        let mut args = command(name);
        args.push(path_str(&p));
        if json {
            args.push("--json");
        }
        let r = shale(&args);
        assert!(
            r.code == 0 || r.code == 1 || r.code == 2,
            "seed {seed}: shale {args:?} exited {}: {}",
            r.code,
            r.stderr
        );
        assert!(!r.stderr.contains("panicked"), "seed {seed}: {}", r.stderr);
        if r.code != 0 {
            assert!(r.stderr.starts_with("shale: "), "seed {seed}: {}", r.stderr);
        }
    }
}

#[test]
fn random_bytes_give_errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_1234);
    for seed in 0..12 {
        let len = [0, 1, 7, 40, 100, 4096, 40_000][rng.below(7) as usize];
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        for name in ["MANIFEST-000007", "000007.log", "000007.sst"] {
            dump(d.path(), name, &bytes, seed);
        }
    }
}

#[test]
fn damaged_real_files_give_errors_not_panics() {
    let src = tempfile::tempdir().unwrap();
    make_db(src.path());
    // Under their own names: the numbers seed the log checksums.
    let files = [
        shale::tools::current_manifest(src.path()).unwrap(),
        files_with(src.path(), "log").pop().unwrap(),
        files_with(src.path(), "sst").remove(0),
    ];
    let d = tempfile::tempdir().unwrap();
    let mut rng = Rng(0xdead_beef);
    for seed in 0..8 {
        for f in &files {
            let mut b = std::fs::read(f).unwrap();
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(b.len() as u64) as usize;
                b[i] = rng.next() as u8;
            }
            if rng.below(3) == 0 {
                b.truncate(rng.below(b.len() as u64) as usize);
            }
            dump(d.path(), f.file_name().unwrap().to_str().unwrap(), &b, seed);
        }
    }
}
