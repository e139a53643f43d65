//! Runs every decoder check without cargo-fuzz: over the seeds (valid
//! encodings), every file of the committed corpus `/fuzz/corpus/<target>/`
//! (crash inputs copied there become regression tests), and seeded random
//! mutations of them. Also holds the corpus writer.
//!
//! `SHALE_FUZZ_SEED=<n>` replays the mutation run printed by a failure.

mod seeds;

use std::path::PathBuf;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::testing::VersionEdit;
use shale_fuzz::{repair_blob, repair_sst, repair_wal, MANIFEST_FILE, TARGETS};

use seeds::{blob_seeds, seeds, table_seeds, version_edit_seeds, wal_seeds};

/// Random mutations per target.
const MUTATIONS: usize = 2000;

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../fuzz/corpus/{target}"))
}

/// 1-4 of: bit flip, byte set, truncation, insertion, zeroing, copying a
/// chunk elsewhere.
fn mutate(rng: &mut SmallRng, input: &mut Vec<u8>) {
    for _ in 0..rng.gen_range(1..=4) {
        let len = input.len();
        match rng.gen_range(0..6) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                input[i] ^= 1 << rng.gen_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                input[i] = rng.gen();
            }
            2 => input.truncate(rng.gen_range(0..=len)),
            3 => {
                let i = rng.gen_range(0..=len);
                let n = rng.gen_range(1..16);
                let junk: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                input.splice(i..i, junk);
            }
            4 if len > 0 => {
                let i = rng.gen_range(0..len);
                let n = rng.gen_range(1..=8).min(len - i);
                input[i..i + n].fill(0);
            }
            _ if len > 1 => {
                // Copy a chunk over another place (misplaced data).
                let n = rng.gen_range(1..=len.min(64));
                let (a, b) = (rng.gen_range(0..=len - n), rng.gen_range(0..=len - n));
                input.copy_within(a..a + n, b);
            }
            _ => input.push(rng.gen()),
        }
    }
}

#[test]
fn valid_seeds_decode_and_repair_is_identity() {
    for (name, f) in TARGETS {
        for (i, s) in seeds(name).iter().enumerate() {
            let r = f(s);
            assert!(r.is_ok(), "{name} seed {i}: {r:?}");
        }
    }
    // The repair functions implement the documented checksums: on valid
    // files they change nothing.
    for s in table_seeds() {
        let mut c = s.clone();
        repair_sst(&mut c);
        assert!(c == s, "repair_sst changed a valid table");
    }
    for s in wal_seeds() {
        let mut c = s.clone();
        repair_wal(&mut c);
        assert!(c == s, "repair_wal changed a valid log");
    }
    for s in blob_seeds() {
        let mut c = s.clone();
        repair_blob(&mut c);
        assert!(c == s, "repair_blob changed a valid blob file or index");
    }
    // The edit seeds follow docs/format/manifest.md byte for byte: the
    // engine's encoder writes exactly the same bytes.
    for (i, s) in version_edit_seeds().iter().enumerate() {
        let e = VersionEdit::decode(s, MANIFEST_FILE, 0).unwrap();
        assert_eq!(&e.encode(), s, "edit seed {i} re-encodes differently");
    }
}

/// The fixed seed every run mutates with (so a run is comparable with the
/// last), and one fresh seed per run (from the clock, printed: a failure
/// names the seed that reproduces it with `SHALE_FUZZ_SEED=<seed>`, which
/// then replaces the fresh one). A seed that fails becomes a fixed
/// regression seed in `REGRESSION_SEEDS`.
#[test]
fn seed_corpus_plus_random_mutations() {
    let fresh: u64 = match std::env::var("SHALE_FUZZ_SEED") {
        Ok(s) => s
            .parse()
            .unwrap_or_else(|_| panic!("SHALE_FUZZ_SEED={s:?} is not a number")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    };
    for seed in REGRESSION_SEEDS.iter().copied().chain([fresh]) {
        println!("SHALE_FUZZ_SEED={seed} (reproduce: SHALE_FUZZ_SEED={seed} cargo test -p shale-fuzz --test corpus seed_corpus_plus_random_mutations)");
        mutations_from(seed);
    }
}

/// Seeds run on every run: the original fixed one, then any that failed.
/// 22988856223325: a merge record decoded from a mutated batch was re-encoded
/// as a deletion by the write_batch check (the check, not the decoder, was
/// wrong).
const REGRESSION_SEEDS: &[u64] = &[0x5eed_f022, 22_988_856_223_325];

/// The seed corpus of every target plus `MUTATIONS` random mutations drawn
/// from `seed`; every decoder must return (an error or a value) for each.
fn mutations_from(seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    for (name, f) in TARGETS {
        let mut inputs = seeds(name);
        let corpus: Vec<_> = std::fs::read_dir(corpus_dir(name))
            .unwrap_or_else(|e| panic!("{}: {e}", corpus_dir(name).display()))
            .map(|e| std::fs::read(e.unwrap().path()).unwrap())
            .collect();
        assert!(!corpus.is_empty(), "no corpus files for {name}");
        inputs.extend(corpus);
        let mut ok = 0;
        for s in &inputs {
            ok += usize::from(f(s).is_ok());
        }
        for _ in 0..MUTATIONS {
            let mut m = inputs[rng.gen_range(0..inputs.len())].clone();
            mutate(&mut rng, &mut m);
            ok += usize::from(f(&m).is_ok());
        }
        println!(
            "{name}: {} inputs + {MUTATIONS} mutations, {ok} decoded",
            inputs.len()
        );
    }
}

/// Rewrites `/fuzz/corpus/<target>/seed-N` from the generators in `seeds`.
#[test]
#[ignore = "writes the seed corpus into the source tree; run by hand"]
fn write_seed_corpus() {
    for (name, _) in TARGETS {
        let dir = corpus_dir(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, s) in seeds(name).iter().enumerate() {
            std::fs::write(dir.join(format!("seed-{i}")), s).unwrap();
        }
    }
}
