//! Byte-for-byte checks of shale-bench's keys and values against RocksDB's
//! own db_bench (7.8.3, Debian rocksdb-tools).
//!
//! Each fixture in `tests/fixtures/db_bench/` is the `ldb scan --key_hex
//! --value_hex` dump of the DB one db_bench command left behind; the command
//! is the fixture's first line and `generate.sh` beside them reproduces them.
//! Two checks per fixture:
//! * `model_*`: the library pieces (KeyGen, Seeds, Mt19937_64,
//!   RandomGenerator with seed 301) replay the documented draw order
//!   (DB_BENCH.md §2.3) and must rebuild the dump exactly;
//! * `run_*`: the same command line run through shale-bench itself
//!   (`--engine=memory --db_bench_compat_values=1`) must leave exactly the
//!   dumped key/value pairs in the DB (keys only with `--threads=2`, whose
//!   final values depend on thread timing in both tools).

use std::collections::BTreeMap;
use std::path::Path;

use shale_bench::engine::memory::MemoryEngine;
use shale_bench::engine::Engine;
use shale_bench::keys::KeyGen;
use shale_bench::mt19937::Mt19937_64;
use shale_bench::runner::{self, Out};
use shale_bench::seeds::Seeds;
use shale_bench::values::{RandomGenerator, DB_BENCH_VALUE_SEED};
use shale_bench::Flags;

type Db = BTreeMap<Vec<u8>, Vec<u8>>;

struct Fixture {
    /// db_bench's arguments, from the header line.
    args: Vec<String>,
    /// The dumped DB.
    db: Db,
}

fn unhex(s: &str) -> Vec<u8> {
    let s = s.trim().strip_prefix("0x").expect("ldb hex starts with 0x");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn load(name: &str) -> Fixture {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/db_bench")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture readable");
    let mut lines = text.lines();
    let header = lines.next().expect("header line");
    let cmd = header
        .strip_prefix("# db_bench ")
        .expect("header names the command");
    let args = cmd.split_whitespace().map(str::to_string).collect();
    let db = lines
        .map(|l| {
            let (k, v) = l.split_once(" : ").expect("ldb 'key : value' line");
            (unhex(k), unhex(v))
        })
        .collect();
    Fixture { args, db }
}

fn flag(f: &Fixture, name: &str) -> u64 {
    let prefix = format!("--{name}=");
    f.args
        .iter()
        .find_map(|a| a.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("fixture lacks --{name}"))
        .parse()
        .expect("numeric flag")
}

fn keygen(f: &Fixture, prefix_size: u64, keys_per_prefix: u64) -> KeyGen {
    KeyGen::new(
        flag(f, "key_size") as usize,
        prefix_size as usize,
        keys_per_prefix,
        flag(f, "num"),
    )
    .unwrap()
}

/// How one single-threaded pass picks its keys.
enum Pass {
    /// fillseq: v = 0, 1, …, num−1.
    Seq,
    /// fillrandom / overwrite: one DB-choice draw, then v = draw % num.
    Random,
}

/// Replays `passes` in order, each a new thread taking the next seed, and
/// returns the DB they leave (later puts overwrite earlier ones).
fn model(f: &Fixture, keys: KeyGen, passes: &[Pass]) -> Db {
    let num = flag(f, "num");
    let value_size = flag(f, "value_size") as usize;
    let (seeds, _) = Seeds::new(flag(f, "seed"), 0, true);
    let mut db = Db::new();
    for pass in passes {
        let thread_seed = seeds.next_thread_seed();
        let mut rng = Mt19937_64::new(thread_seed);
        let mut values = RandomGenerator::new(seeds.value_seed(thread_seed), 0.5, value_size);
        assert_eq!(seeds.value_seed(thread_seed), DB_BENCH_VALUE_SEED);
        for i in 0..num {
            let v = match pass {
                Pass::Seq => i,
                Pass::Random => {
                    rng.next_u64(); // DB choice
                    rng.next_u64() % num
                }
            };
            db.insert(keys.key(v), values.generate(value_size).to_vec());
        }
    }
    db
}

fn hexdump(db: &Db) -> String {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02X}")).collect::<String>();
    db.iter()
        .map(|(k, v)| format!("0x{} : 0x{}\n", hex(k), hex(v)))
        .collect()
}

fn assert_same(got: &Db, want: &Db, what: &str) {
    assert_eq!(hexdump(got), hexdump(want), "{what}");
}

/// Runs the fixture's db_bench command line through shale-bench on the
/// memory engine and returns the DB it leaves.
fn run_shale_bench(f: &Fixture, tag: &str) -> Db {
    let db_path = format!("/memtest/db_bench_keys/{tag}");
    // The memory engine rejects engine options it has no use for; the codec
    // does not change what is stored.
    let mut args: Vec<String> = f
        .args
        .iter()
        .filter(|a| !a.starts_with("--compression_type="))
        .cloned()
        .collect();
    args.extend([
        "--engine=memory".to_string(),
        format!("--db={db_path}"),
        "--db_bench_compat_values=1".to_string(),
        "--summary=0".to_string(),
    ]);
    let flags = Flags::parse(&args).unwrap();
    let (mut o, mut e) = (Vec::new(), Vec::new());
    runner::run(
        &flags,
        &mut Out {
            stdout: &mut o,
            stderr: &mut e,
        },
    )
    .unwrap();
    let m = MemoryEngine::open(Path::new(&db_path));
    let mut it = m.new_iterator(0, &Default::default()).unwrap();
    it.seek_to_first();
    let mut db = Db::new();
    while it.valid() {
        db.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    db
}

fn check_run(name: &str) {
    let f = load(name);
    assert_same(&run_shale_bench(&f, name), &f.db, name);
}

#[test]
fn model_fillseq_with_4_byte_prefix() {
    let f = load("fillseq_prefix4.txt");
    let keys = keygen(&f, 4, 5);
    assert_same(&model(&f, keys, &[Pass::Seq]), &f.db, "fillseq prefix 4");
    // With a prefix, fillseq is not in key order: key 4 shares prefix 0 with key 0.
    assert_eq!(f.db.keys().nth(1), Some(&keys.key(4)));
}

#[test]
fn model_fillseq_one_byte_keys_wrap() {
    let f = load("fillseq_k1_wrap.txt");
    assert_eq!(f.db.len(), 256);
    let keys = keygen(&f, 0, 0);
    assert_same(&model(&f, keys, &[Pass::Seq]), &f.db, "key_size 1");
}

#[test]
fn model_fillseq_100_byte_values() {
    let f = load("fillseq_v100.txt");
    let keys = keygen(&f, 0, 0);
    assert_same(&model(&f, keys, &[Pass::Seq]), &f.db, "value_size 100");
    // Compression ratio 0.5: every value is 50 random printable bytes twice.
    for v in f.db.values() {
        assert_eq!(v.len(), 100);
        assert!(v.iter().all(|b| (0x20..=0x7E).contains(b)));
    }
}

#[test]
fn model_fillrandom_16_byte_keys() {
    let f = load("fillrandom_k16.txt");
    let keys = keygen(&f, 0, 0);
    assert_same(&model(&f, keys, &[Pass::Random]), &f.db, "fillrandom");
}

#[test]
fn model_fillrandom_10_byte_prefix() {
    let f = load("fillrandom_prefix10.txt");
    let keys = keygen(&f, 10, 4);
    assert_same(&model(&f, keys, &[Pass::Random]), &f.db, "prefix 10");
}

#[test]
fn model_seed_counter_runs_across_benchmarks() {
    // fillseq takes base+1, overwrite base+2.
    let f = load("fillseq_overwrite.txt");
    let keys = keygen(&f, 0, 0);
    let db = model(&f, keys, &[Pass::Seq, Pass::Random]);
    assert_same(&db, &f.db, "fillseq,overwrite");
}

#[test]
fn model_seed_counter_runs_across_repeat_passes() {
    // fillrandom[X2-W1]: one DB destroy, then warm-up (base+1) and two
    // measured passes (base+2, base+3) all writing into it.
    let f = load("fillrandom_x2_w1.txt");
    let keys = keygen(&f, 0, 0);
    let db = model(&f, keys, &[Pass::Random, Pass::Random, Pass::Random]);
    assert_same(&db, &f.db, "fillrandom[X2-W1]");
    // The warm-up pass consumed a seed: without it the DB differs.
    assert_ne!(model(&f, keys, &[Pass::Random, Pass::Random]), f.db);
}

#[test]
fn model_two_threads_write_the_union_of_their_streams() {
    let f = load("fillrandom_threads2.txt");
    let keys = keygen(&f, 0, 0);
    // Thread 0 and thread 1 (seeds base+1, base+2) each write num keys;
    // the values race, the key set does not.
    let db = model(&f, keys, &[Pass::Random, Pass::Random]);
    let got: Vec<_> = db.keys().collect();
    let want: Vec<_> = f.db.keys().collect();
    assert_eq!(got, want);
}

#[test]
fn run_matches_db_bench_fillseq_and_fillrandom() {
    for name in [
        "fillseq_prefix4.txt",
        "fillseq_k1_wrap.txt",
        "fillseq_v100.txt",
        "fillrandom_k16.txt",
        "fillrandom_prefix10.txt",
    ] {
        check_run(name);
    }
}

#[test]
fn run_matches_db_bench_across_benchmarks_and_repeats() {
    check_run("fillseq_overwrite.txt");
    check_run("fillrandom_x2_w1.txt");
}

#[test]
fn run_matches_db_bench_keys_with_two_threads() {
    let f = load("fillrandom_threads2.txt");
    let got = run_shale_bench(&f, "threads2");
    let got: Vec<_> = got.keys().collect();
    let want: Vec<_> = f.db.keys().collect();
    assert_eq!(got, want);
}
