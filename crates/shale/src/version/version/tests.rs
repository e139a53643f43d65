use super::*;
use crate::base::{make_internal_key, ValueKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub(crate) fn ikey(k: &[u8], seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, k, seq, ValueKind::Value as u8);
    v
}

/// A file over user keys `[lo, hi]` with seqnos `[seq, seq + 10]`.
pub(crate) fn file(number: u64, lo: &[u8], hi: &[u8], seq: u64) -> FileMeta {
    FileMeta {
        number,
        file_size: 1000 + number,
        smallest: ikey(lo, seq + 10),
        largest: ikey(hi, seq),
        smallest_seq: seq,
        largest_seq: seq + 10,
        num_entries: 10,
        ..Default::default()
    }
}

fn key(n: u32) -> Vec<u8> {
    format!("k{n:05}").into_bytes()
}

/// A random version: `l0` overlapping L0 files, and disjoint files on L1/L2.
fn random_version(rng: &mut SmallRng) -> Version {
    let mut next = 1;
    let mut l0: Vec<Arc<FileMeta>> = Vec::new();
    for _ in 0..rng.gen_range(0..8) {
        let a = rng.gen_range(0..1000);
        let b = rng.gen_range(a..=(a + 300).min(999));
        l0.push(Arc::new(file(
            next,
            &key(a),
            &key(b),
            rng.gen_range(0..5) * 100,
        )));
        next += 1;
    }
    l0.sort_by(|a, b| l0_order(a, b));
    let mut levels = vec![l0];
    for _ in 1..3 {
        let mut bounds: Vec<u32> = (0..rng.gen_range(0..20) * 2)
            .map(|_| rng.gen_range(0..1000))
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        let mut files = Vec::new();
        for pair in bounds.chunks_exact(2) {
            files.push(Arc::new(file(next, &key(pair[0]), &key(pair[1]), 1)));
            next += 1;
        }
        levels.push(files);
    }
    Version::from_levels(levels)
}

fn model_overlapping(v: &Version, level: usize, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Vec<u64> {
    let (mut lo, mut hi) = (lo.map(<[u8]>::to_vec), hi.map(<[u8]>::to_vec));
    loop {
        let hits: Vec<&Arc<FileMeta>> = v
            .files(level)
            .iter()
            .filter(|f| f.overlaps_user_range(lo.as_deref(), hi.as_deref()))
            .collect();
        if level > 0 {
            return hits.iter().map(|f| f.number).collect();
        }
        let mut changed = false;
        for f in &hits {
            if lo.as_deref().is_some_and(|l| f.smallest_user_key() < l) {
                lo = Some(f.smallest_user_key().to_vec());
                changed = true;
            }
            if hi.as_deref().is_some_and(|h| f.largest_user_key() > h) {
                hi = Some(f.largest_user_key().to_vec());
                changed = true;
            }
        }
        if !changed {
            return hits.iter().map(|f| f.number).collect();
        }
    }
}

#[test]
fn queries_match_brute_force() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..300 {
        let v = random_version(&mut rng);
        assert_eq!(v.check_invariants(), Ok(()));
        for _ in 0..30 {
            let a = rng.gen_range(0..1010);
            let b = rng.gen_range(a..1010);
            let (ka, kb) = (key(a), key(b));
            let lo = rng.gen_bool(0.9).then_some(&ka[..]);
            let hi = rng.gen_bool(0.9).then_some(&kb[..]);
            for level in 0..3 {
                let got: Vec<u64> = v
                    .overlapping_files_in_range(level, lo, hi)
                    .iter()
                    .map(|f| f.number)
                    .collect();
                assert_eq!(
                    got,
                    model_overlapping(&v, level, lo, hi),
                    "level {level} {a}..{b}"
                );
            }
            for level in 1..3 {
                let want = v
                    .files(level)
                    .iter()
                    .find(|f| f.overlaps_user_range(Some(&ka), Some(&ka)));
                assert_eq!(
                    v.find_file(level, &ka).map(|f| f.number),
                    want.map(|f| f.number)
                );
                let probe = ikey(&ka, 5);
                let idx = v.find_file_index(level, &probe);
                let want_idx = v
                    .files(level)
                    .iter()
                    .take_while(|f| compare_internal(&f.largest, &probe).is_lt())
                    .count();
                assert_eq!(idx, want_idx);
            }
        }
    }
}

#[test]
fn l0_expansion_example() {
    // L0: a..c (newest), b..f, e..h, x..z. Asking for [a, b] pulls in the
    // chain a..c → b..f → e..h but not x..z.
    let mut l0 = vec![
        Arc::new(file(4, b"a", b"c", 400)),
        Arc::new(file(3, b"b", b"f", 300)),
        Arc::new(file(2, b"e", b"h", 200)),
        Arc::new(file(1, b"x", b"z", 100)),
    ];
    l0.sort_by(|a, b| l0_order(a, b));
    let v = Version::from_levels(vec![l0, vec![], vec![]]);
    let got: Vec<u64> = v
        .overlapping_files(0, b"a", b"b")
        .iter()
        .map(|f| f.number)
        .collect();
    assert_eq!(got, vec![4, 3, 2]);
    let got: Vec<u64> = v
        .overlapping_files(0, b"i", b"w")
        .iter()
        .map(|f| f.number)
        .collect();
    assert!(got.is_empty());
    assert_eq!(v.find_file(0, b"a"), None);
}

#[test]
fn counters_and_invariants() {
    let v = Version::from_levels(vec![
        vec![
            Arc::new(file(5, b"a", b"z", 50)),
            Arc::new(file(4, b"a", b"z", 40)),
        ],
        vec![
            Arc::new(file(1, b"a", b"c", 1)),
            Arc::new(file(2, b"d", b"f", 1)),
        ],
        vec![],
    ]);
    assert_eq!(v.num_levels(), 3);
    assert_eq!(v.num_files(0), 2);
    assert_eq!(v.num_files(7), 0);
    assert_eq!(v.total_files(), 4);
    assert_eq!(v.level_bytes(1), 1001 + 1002);
    assert_eq!(v.total_bytes(), 1005 + 1004 + 1001 + 1002);
    let mut live = HashSet::new();
    v.live_file_numbers(&mut live);
    assert_eq!(live, HashSet::from([1, 2, 4, 5]));
    assert_eq!(v.file_by_number(1, 2).map(|f| f.number), Some(2));
    assert!(v.file_by_number(0, 2).is_none());
    assert_eq!(v.level_summary(), "files[2 2 0] bytes[2009 2003 0]");
    assert_eq!(v.files_per_level(), vec![2, 2, 0]);

    let overlapping = Version {
        blob_files: Default::default(),
        levels: vec![
            vec![],
            vec![
                Arc::new(file(1, b"a", b"e", 1)),
                Arc::new(file(2, b"d", b"f", 1)),
            ],
        ],
        level_range_dels: RangeDelCache::new(2),
    };
    assert!(overlapping
        .check_invariants()
        .unwrap_err()
        .contains("overlap"));
    let l0_bad = Version {
        blob_files: Default::default(),
        levels: vec![vec![
            Arc::new(file(1, b"a", b"e", 1)),
            Arc::new(file(2, b"d", b"f", 50)),
        ]],
        level_range_dels: RangeDelCache::new(1),
    };
    assert!(l0_bad
        .check_invariants()
        .unwrap_err()
        .contains("newest first"));
    let dup = Version {
        blob_files: Default::default(),
        levels: vec![
            vec![Arc::new(file(1, b"a", b"e", 1))],
            vec![Arc::new(file(1, b"a", b"e", 1))],
        ],
        level_range_dels: RangeDelCache::new(2),
    };
    assert!(dup.check_invariants().unwrap_err().contains("twice"));
}
