use super::*;
use crate::version::version::tests::file;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};

fn numbers(v: &Version, level: usize) -> Vec<u64> {
    v.files(level).iter().map(|f| f.number).collect()
}

fn corruption(r: Result<Version>) -> String {
    match r {
        Err(Error::Corruption { file, offset, what }) => {
            assert_eq!((file.as_str(), offset), ("MANIFEST-000002", 40));
            what
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

fn apply_all(base: &Version, edits: &[VersionEdit]) -> Result<Version> {
    let mut b = VersionBuilder::new(base);
    for e in edits {
        b.apply(e, "MANIFEST-000002", 40)?;
    }
    b.build()
}

#[test]
fn add_delete_and_trivial_move() {
    let base = Version::new_empty(3);
    let mut e1 = VersionEdit::default();
    e1.add_file(0, file(10, b"a", b"f", 100));
    e1.add_file(0, file(11, b"c", b"k", 200));
    e1.add_file(1, file(5, b"m", b"p", 1));
    e1.add_file(1, file(6, b"b", b"d", 1));
    let v1 = apply_all(&base, &[e1]).unwrap();
    assert_eq!(numbers(&v1, 0), vec![11, 10]); // newest first
    assert_eq!(numbers(&v1, 1), vec![6, 5]); // by key

    let mut mv = VersionEdit::default();
    mv.delete_file(1, 5);
    mv.add_file(2, (**v1.file_by_number(1, 5).unwrap()).clone());
    let v2 = apply_all(&v1, &[mv]).unwrap();
    assert_eq!(numbers(&v2, 1), vec![6]);
    assert_eq!(numbers(&v2, 2), vec![5]);
    // Unchanged L0 shares its Arcs with the base.
    assert!(Arc::ptr_eq(&v1.files(0)[0], &v2.files(0)[0]));
    assert_eq!(numbers(&v1, 1), vec![6, 5], "base untouched");
}

#[test]
fn rejects_bad_edits() {
    let mut e = VersionEdit::default();
    e.add_file(1, file(5, b"a", b"c", 1));
    let v = apply_all(&Version::new_empty(3), &[e.clone()]).unwrap();

    let mut del_missing = VersionEdit::default();
    del_missing.delete_file(1, 99);
    assert!(corruption(apply_all(&v, &[del_missing])).contains("deletes file 99"));

    let mut del_wrong_level = VersionEdit::default();
    del_wrong_level.delete_file(2, 5);
    assert!(corruption(apply_all(&v, &[del_wrong_level])).contains("deletes file 5 from L2"));

    assert!(corruption(apply_all(&v, &[e.clone()])).contains("already on L1"));
    let mut twice = VersionEdit::default();
    twice.add_file(0, file(7, b"a", b"c", 1));
    twice.add_file(2, file(7, b"x", b"z", 1));
    assert!(corruption(apply_all(&v, &[twice])).contains("adds file 7"));

    let mut del_twice = VersionEdit::default();
    del_twice.delete_file(1, 5);
    del_twice.delete_file(1, 5);
    assert!(corruption(apply_all(&v, &[del_twice])).contains("deletes file 5"));

    let mut overlap = VersionEdit::default();
    overlap.add_file(1, file(8, b"b", b"d", 1));
    assert!(corruption(apply_all(&v, &[overlap])).contains("overlap"));

    let mut deep = VersionEdit::default();
    deep.add_file(3, file(9, b"a", b"b", 1));
    assert!(matches!(
        apply_all(&v, &[deep]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn blob_files_join_gather_garbage_and_leave_when_all_garbage() {
    use crate::version::edit::{BlobFileAddition, BlobFileGarbage};
    let add = |number, count, bytes| BlobFileAddition {
        number,
        count,
        bytes,
        file_size: bytes + 52,
    };
    let garbage = |number, count, bytes| BlobFileGarbage {
        number,
        count,
        bytes,
    };
    let mut e = VersionEdit {
        blob_file_additions: vec![add(6, 10, 1000), add(7, 2, 200)],
        ..VersionEdit::default()
    };
    e.add_file(0, file(5, b"a", b"c", 1));
    let v = apply_all(&Version::new_empty(3), &[e]).unwrap();
    assert_eq!(v.blob_files().keys().copied().collect::<Vec<_>>(), [6, 7]);
    let mut live = HashSet::new();
    v.live_file_numbers(&mut live);
    assert!(live.contains(&6) && live.contains(&7) && live.contains(&5));
    // Garbage adds up; a file entirely garbage leaves.
    let g = VersionEdit {
        blob_file_garbage: vec![garbage(6, 4, 400), garbage(7, 1, 100)],
        ..VersionEdit::default()
    };
    let v2 = apply_all(&v, &[g.clone(), g]).unwrap();
    assert_eq!(v2.blob_files().keys().copied().collect::<Vec<_>>(), [6]);
    let b = v2.blob_files()[&6];
    assert_eq!(
        (b.garbage_count, b.garbage_bytes, b.live_bytes()),
        (8, 800, 200)
    );
    assert_eq!(v.blob_files()[&6].garbage_count, 0, "base untouched");
    // Bad blob edits are corruption.
    let dup = VersionEdit {
        blob_file_additions: vec![add(6, 1, 1)],
        ..VersionEdit::default()
    };
    assert!(corruption(apply_all(&v2, &[dup])).contains("already present"));
    let clash = VersionEdit {
        blob_file_additions: vec![add(5, 1, 1)],
        ..VersionEdit::default()
    };
    assert!(corruption(apply_all(&v2, &[clash])).contains("already present"));
    let missing = VersionEdit {
        blob_file_garbage: vec![garbage(7, 1, 1)],
        ..VersionEdit::default()
    };
    assert!(corruption(apply_all(&v2, &[missing])).contains("not present"));
    let over = VersionEdit {
        blob_file_garbage: vec![garbage(6, 1, 201)],
        ..VersionEdit::default()
    };
    assert!(corruption(apply_all(&v2, &[over])).contains("exceeds"));
}

#[test]
fn randomized_against_model() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    // Model: file number -> level. Only L0 (any overlap) and L2 files with
    // a key range unique to their number keep L2 disjoint.
    let mut model: BTreeMap<u64, usize> = BTreeMap::new();
    let mut v = Version::new_empty(3);
    let mut next = 1u64;
    for round in 0..200 {
        let mut e = VersionEdit::default();
        let live: Vec<(u64, usize)> = model.iter().map(|(&n, &l)| (n, l)).collect();
        let mut dels = Vec::new();
        for &(n, l) in &live {
            if rng.gen_bool(0.2) {
                e.delete_file(l, n);
                dels.push(n);
            }
        }
        for _ in 0..rng.gen_range(0..4) {
            let n = next;
            next += 1;
            let level = if rng.gen_bool(0.5) { 0 } else { 2 };
            let k = format!("{n:06}");
            e.add_file(
                level,
                file(n, format!("{k}a").as_bytes(), format!("{k}z").as_bytes(), n),
            );
            model.insert(n, level);
        }
        for n in dels {
            model.remove(&n);
        }
        // Sometimes a bad edit, which must fail and leave v unchanged.
        if round % 7 == 3 {
            let mut bad = e.clone();
            bad.delete_file(1, next + 1000);
            assert!(apply_all(&v, &[bad]).is_err());
        }
        v = apply_all(&v, &[e]).unwrap();
        for level in 0..3 {
            let mut got = numbers(&v, level);
            got.sort_unstable();
            let want: Vec<u64> = model
                .iter()
                .filter(|(_, &l)| l == level)
                .map(|(&n, _)| n)
                .collect();
            assert_eq!(got, want, "round {round} level {level}");
        }
        assert_eq!(v.check_invariants(), Ok(()));
    }
}
