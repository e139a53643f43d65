//! mergerandom and readrandommergerandom on the Shale engine.
//!
//! * mergerandom with uint64add: replaying the thread's key draws and value
//!   stream gives every key's expected sum; the DB (opened with the Shale
//!   API after a flush and a full compaction) holds exactly those sums;
//! * mergerandom with stringappend on two threads: every key's value is
//!   its operands joined by ',', so its length gives its merge count, and
//!   the counts add up to threads × num;
//! * readrandommergerandom after mergerandom: the reads, merges and hits
//!   of the result line are the replayed ones, and so are the final sums;
//! * a bad `--merge_operator`, a merge benchmark without one, an engine
//!   without merges and uint64add with `--value_size` != 8 on Shale are
//!   refused before anything runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use shale_bench::keys::KeyGen;
use shale_bench::mt19937::Mt19937_64;
use shale_bench::runner::{self, Out};
use shale_bench::seeds::Seeds;
use shale_bench::values::RandomGenerator;
use shale_bench::Flags;

const SEED: u64 = 4242;

fn run(args: &[String]) -> (shale_bench::Result<()>, String) {
    let flags = match Flags::parse(args) {
        Ok(f) => f,
        Err(e) => return (Err(e), String::new()),
    };
    let (mut o, mut e) = (Vec::new(), Vec::new());
    let r = runner::run(
        &flags,
        &mut Out {
            stdout: &mut o,
            stderr: &mut e,
        },
    );
    (r.map(|_| ()), String::from_utf8_lossy(&o).into_owned())
}

fn run_ok(args: &[String]) -> String {
    let (r, out) = run(args);
    if let Err(e) = r {
        panic!("run failed: {e}\nstdout:\n{out}");
    }
    out
}

fn args(db: &Path, extra: &[&str]) -> Vec<String> {
    let mut a = vec![
        "--engine=shale".to_string(),
        format!("--db={}", db.display()),
        "--compression_type=none".to_string(),
        "--write_buffer_size=65536".to_string(),
        format!("--seed={SEED}"),
        "--progress_reports=0".to_string(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

/// The result line of `name`.
fn line<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{name:<12} : ")))
        .unwrap_or_else(|| panic!("no {name} line in\n{out}"))
}

/// One bench thread's streams: its MT19937-64 and its value generator.
struct Replay {
    rng: Mt19937_64,
    values: RandomGenerator,
}

impl Replay {
    /// The streams of the thread with seed `SEED + counter`.
    fn thread(counter: u64, value_size: usize) -> Replay {
        let (seeds, _) = Seeds::new(SEED, 0, false);
        let seed = SEED + counter;
        Replay {
            rng: Mt19937_64::new(seed),
            values: RandomGenerator::new(seeds.value_seed(seed), 0.5, value_size),
        }
    }

    /// The key number of the next op (after the DB-choice draw).
    fn key(&mut self, merge_keys: u64) -> u64 {
        self.rng.next_u64();
        self.rng.next_u64() % merge_keys
    }

    fn operand(&mut self) -> u64 {
        let b: [u8; 8] = self.values.generate(8).try_into().unwrap();
        u64::from_le_bytes(b)
    }
}

/// Every key of the DB at `db` and its value, read through `op`.
fn contents(db: &Path, op: Arc<dyn shale::MergeOperator>) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let opts = shale::Options {
        cf: shale::CfOptions {
            merge_operator: Some(op),
            ..Default::default()
        },
        ..shale::Options::default()
    };
    let sdb = shale::Db::open(db, opts).unwrap();
    let mut it = sdb.iter(&shale::ReadOptions::new());
    it.seek_to_first();
    let mut all = BTreeMap::new();
    while it.valid() {
        all.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    drop(it);
    sdb.close().unwrap();
    all
}

fn sums(all: &BTreeMap<Vec<u8>, Vec<u8>>) -> BTreeMap<Vec<u8>, u64> {
    all.iter()
        .map(|(k, v)| {
            let b: [u8; 8] = v.as_slice().try_into().expect("8-byte counter");
            (k.clone(), u64::from_le_bytes(b))
        })
        .collect()
}

#[test]
fn mergerandom_uint64add_sums_every_operand_of_every_key() {
    const NUM: u64 = 3000;
    const KEYS: u64 = 50;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = run_ok(&args(
        &db,
        &[
            "--benchmarks=mergerandom,flush,compactall",
            "--merge_operator=uint64add",
            "--value_size=8",
            &format!("--num={NUM}"),
            &format!("--merge_keys={KEYS}"),
            "--histogram=1",
        ],
    ));
    let l = line(&out, "mergerandom");
    assert!(l.contains(&format!(" {NUM} operations;")), "{l}");
    assert!(l.contains(" MB/s ( updates:3000)"), "{l}");
    assert!(
        out.contains(&format!("Microseconds per merge:\nCount: {NUM} ")),
        "{out}"
    );

    let keys = KeyGen::new(16, 0, 0, KEYS).unwrap();
    let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut r = Replay::thread(1, 8);
    for _ in 0..NUM {
        let v = r.key(KEYS);
        let s = want.entry(keys.key(v)).or_default();
        *s = s.wrapping_add(r.operand());
    }
    assert_eq!(want.len() as u64, KEYS); // 3000 draws hit all 50 keys
    let got = sums(&contents(&db, Arc::new(shale::UInt64AddOperator)));
    assert_eq!(got, want);
}

#[test]
fn mergerandom_stringappend_counts_add_up_over_threads() {
    const NUM: u64 = 1000;
    const KEYS: u64 = 100;
    const VALUE: usize = 5;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = run_ok(&args(
        &db,
        &[
            "--benchmarks=mergerandom",
            "--merge_operator=stringappend",
            &format!("--value_size={VALUE}"),
            &format!("--num={NUM}"),
            &format!("--merge_keys={KEYS}"),
            "--threads=2",
        ],
    ));
    // Every thread does num merges.
    let l = line(&out, "mergerandom");
    assert!(l.contains(&format!(" {} operations;", 2 * NUM)), "{l}");
    let all = contents(&db, Arc::new(shale::StringAppendOperator::new(b",")));
    let mut merges = 0;
    for (k, v) in &all {
        // c operands of VALUE bytes and c - 1 commas.
        assert_eq!((v.len() + 1) % (VALUE + 1), 0, "{k:?}: {} bytes", v.len());
        merges += (v.len() + 1) / (VALUE + 1);
    }
    assert_eq!(merges as u64, 2 * NUM);
    assert!(all.len() as u64 <= KEYS);
}

#[test]
fn readrandommergerandom_reports_replayed_reads_merges_and_hits() {
    const NUM: u64 = 1500;
    const KEYS: u64 = 4000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let out = run_ok(&args(
        &db,
        &[
            "--benchmarks=mergerandom,readrandommergerandom",
            "--merge_operator=uint64add",
            "--value_size=8",
            &format!("--num={NUM}"),
            &format!("--merge_keys={KEYS}"),
        ],
    ));
    let keys = KeyGen::new(16, 0, 0, KEYS).unwrap();
    let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut r = Replay::thread(1, 8);
    for _ in 0..NUM {
        let v = r.key(KEYS);
        let s = want.entry(keys.key(v)).or_default();
        *s = s.wrapping_add(r.operand());
    }
    // readrandommergerandom: thread seed base + 2; a third draw picks a
    // merge (70 %) or a get.
    let mut r = Replay::thread(2, 8);
    let (mut reads, mut merges, mut hits) = (0, 0, 0);
    for _ in 0..NUM {
        let key = keys.key(r.key(KEYS));
        if r.rng.next_u64() % 100 < 70 {
            let s = want.entry(key).or_default();
            *s = s.wrapping_add(r.operand());
            merges += 1;
        } else {
            reads += 1;
            hits += u64::from(want.contains_key(&key));
        }
    }
    assert!(reads > 300 && merges > 900 && hits > 0 && hits < reads);
    let l = line(&out, "readrandommergerandom");
    let msg = format!("(reads:{reads} merges:{merges} total:{NUM} hits:{hits} maxlength:8)");
    assert!(l.ends_with(&msg), "{l}\nwant {msg}");
    assert!(l.contains(&format!(" {NUM} operations;")), "{l}");
    // No bytes counted (db_bench adds none): no MB/s.
    assert!(!l.contains("MB/s"), "{l}");
    let got = sums(&contents(&db, Arc::new(shale::UInt64AddOperator)));
    assert_eq!(got, want);
}

#[test]
fn refuses_bad_operators_missing_operators_and_engines_without_merges() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let (r, _) = run(&args(
        &db,
        &["--benchmarks=mergerandom", "--merge_operator=nope"],
    ));
    let e = r.unwrap_err();
    assert!(
        e.0.contains("'nope'") && e.0.contains("put, uint64add, max, stringappend"),
        "{e}"
    );
    for name in ["mergerandom", "readrandommergerandom"] {
        let list = format!("--benchmarks=fillseq,{name}");
        let (r, out) = run(&args(&db, &[&list]));
        let e = r.unwrap_err();
        assert!(
            e.0.contains(&format!("{name} needs --merge_operator")),
            "{e}"
        );
        assert!(
            !out.contains("DB path"),
            "{name} ran before failing:\n{out}"
        );
    }
    let (r, out) = run(&[
        "--engine=memory".to_string(),
        "--db=/memtest/merge".to_string(),
        "--benchmarks=mergerandom".to_string(),
    ]);
    let e = r.unwrap_err();
    assert!(e.0.contains("not supported by --engine=memory"), "{e}");
    assert!(!out.contains("DB path"));
    // Shale's uint64add fails reads of operands that are not 8 bytes: the
    // default --value_size=100 is refused up front.
    let (r, out) = run(&args(
        &db,
        &["--benchmarks=mergerandom", "--merge_operator=uint64add"],
    ));
    let e = r.unwrap_err();
    assert!(e.0.contains("--value_size=8"), "{e}");
    assert!(!out.contains("DB path"));
}
