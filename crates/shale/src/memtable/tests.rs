//! Tests of `MemTable`: a randomized model test (gets at many snapshots,
//! iteration both ways, seeks) and a concurrent reader/writer test.

use super::*;
use crate::base::{compare_internal, make_internal_key};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use std::cmp::{Ordering as CmpOrdering, Reverse};
use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;

type Model = BTreeMap<(Vec<u8>, Reverse<SeqNo>), (ValueKind, Vec<u8>)>;

fn model_get<'a>(m: &'a Model, uk: &[u8], seq: SeqNo) -> Option<MemGet<'a>> {
    let ((k, _), (kind, v)) = m.range((uk.to_vec(), Reverse(seq))..).next()?;
    if k != uk {
        return None;
    }
    Some(match kind {
        ValueKind::Deletion => MemGet::Deleted,
        _ => MemGet::Value(v),
    })
}

fn random_user_key(rng: &mut SmallRng) -> Vec<u8> {
    if rng.gen_ratio(1, 50) {
        // Longer than the stack lookup buffer.
        let mut k = vec![b'z'; STACK_LOOKUP_KEY + rng.gen_range(0..3)];
        k.push(rng.gen_range(b'a'..b'c'));
        return k;
    }
    (0..rng.gen_range(0..4))
        .map(|_| rng.gen_range(b'a'..b'e'))
        .collect()
}

#[test]
fn empty_memtable() {
    let m = Arc::new(MemTable::new(7));
    assert_eq!(m.id(), 7);
    assert_eq!(m.num_entries(), 0);
    assert_eq!(m.first_seq(), None);
    assert_eq!(m.largest_seq(), None);
    assert_eq!(m.get(b"a", MAX_SEQNO), None);
    let mut it = m.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

#[test]
fn get_respects_sequence_numbers() {
    let m = MemTable::new(1);
    m.add(10, ValueKind::Value, b"k", b"v10");
    m.add(20, ValueKind::Deletion, b"k", b"");
    m.add(30, ValueKind::Value, b"k", b"v30");
    m.add(15, ValueKind::Value, b"j", b"j15");
    assert_eq!(m.get(b"k", 9), None);
    assert_eq!(m.get(b"k", 10), Some(MemGet::Value(b"v10")));
    assert_eq!(m.get(b"k", 19), Some(MemGet::Value(b"v10")));
    assert_eq!(m.get(b"k", 20), Some(MemGet::Deleted));
    assert_eq!(m.get(b"k", 29), Some(MemGet::Deleted));
    assert_eq!(m.get(b"k", 30), Some(MemGet::Value(b"v30")));
    assert_eq!(m.get(b"k", u64::MAX), Some(MemGet::Value(b"v30")));
    assert_eq!(m.get(b"j", MAX_SEQNO), Some(MemGet::Value(b"j15")));
    assert_eq!(m.get(b"", MAX_SEQNO), None);
    assert_eq!(m.get(b"kk", MAX_SEQNO), None);
    assert_eq!(m.num_entries(), 4);
    assert_eq!(m.num_deletes(), 1);
    assert_eq!(m.first_seq(), Some(10));
    assert_eq!(m.largest_seq(), Some(30));
    assert!(m.approximate_memory_usage() > 4 * 10);
}

#[test]
fn randomized_against_model() {
    let seed: u64 = rand::random();
    println!("seed = {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let n: u64 = if cfg!(miri) { 80 } else { 3000 };
    let mut seqs: Vec<SeqNo> = (1..=n).collect();
    seqs.shuffle(&mut rng);
    let m = Arc::new(MemTable::new(3));
    let mut model = Model::new();
    let mut deletes = 0;
    let mut usage = 0;
    for &seq in &seqs {
        let uk = random_user_key(&mut rng);
        let (kind, value) = if rng.gen_ratio(1, 5) {
            deletes += 1;
            (ValueKind::Deletion, Vec::new())
        } else {
            let len = rng.gen_range(0..40);
            (ValueKind::Value, (0..len).map(|_| rng.gen()).collect())
        };
        m.add(seq, kind, &uk, &value);
        model.insert((uk, Reverse(seq)), (kind, value));
        // Grows in steps of at most a thread block (or a chunk).
        assert!(m.approximate_memory_usage() >= usage);
        usage = m.approximate_memory_usage();
    }
    assert_eq!(m.num_entries(), n as usize);
    assert_eq!(m.num_deletes(), deletes);
    assert_eq!(m.first_seq(), Some(1));
    assert_eq!(m.largest_seq(), Some(n));

    // Point lookups at many snapshots.
    for _ in 0..n {
        let uk = random_user_key(&mut rng);
        let seq = match rng.gen_range(0..10) {
            0 => 0,
            1 => MAX_SEQNO,
            _ => rng.gen_range(0..=n + 1),
        };
        assert_eq!(
            m.get(&uk, seq),
            model_get(&model, &uk, seq),
            "get {uk:?} @ {seq}"
        );
    }
    // Every stored version is found at its own seqno.
    for ((uk, Reverse(seq)), _) in model.iter().take(500) {
        assert_eq!(m.get(uk, *seq), model_get(&model, uk, *seq));
    }

    // The expected internal keys, in order.
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model
        .iter()
        .map(|((uk, Reverse(seq)), (kind, v))| {
            let mut ik = Vec::new();
            make_internal_key(&mut ik, uk, *seq, *kind as u8);
            (ik, v.clone())
        })
        .collect();
    for w in expected.windows(2) {
        assert_eq!(compare_internal(&w[0].0, &w[1].0), CmpOrdering::Less);
    }

    let mut it = m.iter();
    it.seek_to_first();
    for (k, v) in &expected {
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for (k, _) in expected.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    assert!(!it.valid());

    // Random seeks followed by random next/prev walks.
    for _ in 0..n / 4 {
        let mut target = Vec::new();
        let kind = *[0u8, 1, KIND_FOR_SEEK].choose(&mut rng).unwrap_or(&0);
        make_internal_key(
            &mut target,
            &random_user_key(&mut rng),
            rng.gen_range(0..=n + 1),
            kind,
        );
        let ge =
            expected.partition_point(|(k, _)| compare_internal(k, &target) == CmpOrdering::Less);
        let le =
            expected.partition_point(|(k, _)| compare_internal(k, &target) != CmpOrdering::Greater);
        // Position as an index into `expected`; `None` = invalid.
        let mut pos: Option<usize> = if rng.gen_bool(0.5) {
            it.seek(&target);
            (ge < expected.len()).then_some(ge)
        } else {
            it.seek_for_prev(&target);
            le.checked_sub(1)
        };
        for _ in 0..8 {
            match pos {
                None => {
                    assert!(!it.valid());
                    break;
                }
                Some(p) => {
                    assert!(it.valid());
                    assert_eq!(it.key(), &expected[p].0[..]);
                    assert_eq!(it.value(), &expected[p].1[..]);
                    if rng.gen_bool(0.5) {
                        it.next();
                        pos = (p + 1 < expected.len()).then_some(p + 1);
                    } else {
                        it.prev();
                        pos = p.checked_sub(1);
                    }
                }
            }
        }
    }

    // The iterator keeps the memtable alive after the caller drops it.
    drop(it);
    let mut it = m.iter();
    drop(m);
    it.seek_to_first();
    assert_eq!(it.key(), &expected[0].0[..]);
    assert_eq!(Arc::strong_count(it.memtable()), 1);
}

/// One writer adds seqnos 1..=N (key = seq % 64, every 7th a tombstone) and
/// publishes the last seqno it finished; readers at the published seqno must
/// see exactly the model's answer, and iterators must always be sorted.
#[test]
fn concurrent_readers_and_writer() {
    const KEYS: u64 = 64;
    fn key(i: u64) -> Vec<u8> {
        format!("key{:03}", i % KEYS).into_bytes()
    }
    fn value(i: u64) -> Vec<u8> {
        format!("value-{i:08}-{}", "x".repeat((i % 30) as usize)).into_bytes()
    }
    /// Expected state of key `j` at snapshot `s`: the last write i <= s with
    /// i % KEYS == j (none when there is none), a tombstone when i % 7 == 0.
    fn expect(j: u64, s: u64) -> Option<Option<Vec<u8>>> {
        if s < j {
            return None;
        }
        let i = s - (s - j) % KEYS;
        if i == 0 {
            return None;
        }
        Some((!i.is_multiple_of(7)).then(|| value(i)))
    }
    let n: u64 = if cfg!(miri) { 100 } else { 50_000 };
    let m = Arc::new(MemTable::new(9));
    let published = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3u64)
        .map(|r| {
            let m = Arc::clone(&m);
            let published = Arc::clone(&published);
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(r);
                let mut checks = 0u64;
                while !done.load(Ordering::Acquire) || checks < 10 {
                    checks += 1;
                    let s = published.load(Ordering::Acquire);
                    let j = rng.gen_range(0..KEYS);
                    let got = m.get(&key(j), s).map(|g| match g {
                        MemGet::Value(v) => Some(v.to_vec()),
                        MemGet::Deleted => None,
                        MemGet::Merge(_) | MemGet::Expiring(..) => {
                            panic!("only puts and deletes added")
                        }
                    });
                    assert_eq!(got, expect(j, s), "key {j} at {s}");
                    if checks.is_multiple_of(64) {
                        let mut it = m.iter();
                        it.seek_to_last();
                        let mut prev: Option<Vec<u8>> = None;
                        let mut steps = 0;
                        while it.valid() && steps < 500 {
                            if let Some(p) = &prev {
                                assert_eq!(compare_internal(it.key(), p), CmpOrdering::Less);
                            }
                            prev = Some(it.key().to_vec());
                            it.prev();
                            steps += 1;
                        }
                    }
                }
            })
        })
        .collect();
    for i in 1..=n {
        let kind = if i % 7 == 0 {
            ValueKind::Deletion
        } else {
            ValueKind::Value
        };
        let v = if kind == ValueKind::Value {
            value(i)
        } else {
            Vec::new()
        };
        m.add(i, kind, &key(i), &v);
        published.store(i, Ordering::Release);
    }
    done.store(true, Ordering::Release);
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(m.num_entries(), n as usize);
    assert_eq!(m.num_deletes(), (n / 7) as usize);
}

/// Rough speed check (release mode):
/// `cargo test --release -- --ignored --nocapture insert_and_get_speed`.
#[test]
#[ignore]
fn insert_and_get_speed() {
    let n_env = std::env::var("SHALE_MEMTABLE_N").ok();
    let n: u64 = n_env.and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let mut rng = SmallRng::seed_from_u64(1);
    let keys: Vec<[u8; 16]> = (0..n).map(|_| rng.gen()).collect();
    let value = [b'v'; 100];
    let m = MemTable::new(1);
    let t = std::time::Instant::now();
    for (i, k) in keys.iter().enumerate() {
        m.add(i as u64 + 1, ValueKind::Value, k, &value);
    }
    let insert = t.elapsed();
    let t = std::time::Instant::now();
    let mut found = 0;
    for k in &keys {
        if let Some(MemGet::Value(v)) = m.get(k, MAX_SEQNO) {
            found += v.len();
        }
    }
    let get = t.elapsed();
    assert_eq!(found, n as usize * 100);
    let t = std::time::Instant::now();
    let m = Arc::new(m);
    let mut it = m.iter();
    it.seek_to_first();
    let mut count = 0;
    while it.valid() {
        count += 1;
        it.next();
    }
    assert_eq!(count, n);
    println!(
        "{n} inserts: {insert:?} ({:.0} ns/op); gets: {get:?} ({:.0} ns/op); scan: {:?}; memory {} MiB",
        insert.as_nanos() as f64 / n as f64,
        get.as_nanos() as f64 / n as f64,
        t.elapsed(),
        m.approximate_memory_usage() >> 20
    );
}
