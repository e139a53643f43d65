use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::base::ValueKind;

/// One decoded entry, owned.
type Owned = (ValueKind, u32, Vec<u8>, Vec<u8>);

fn collect(b: &WriteBatch) -> Result<Vec<Owned>> {
    b.iter()
        .map(|e| e.map(|e| (e.kind, e.cf, e.key.to_vec(), e.value.to_vec())))
        .collect()
}

#[test]
fn golden_bytes() {
    // Freezes the format: these bytes are what the WAL holds.
    let mut b = WriteBatch::new();
    b.set_sequence(0x0102);
    b.put(b"k", b"vv");
    b.delete(b"d");
    b.put_in(3, b"a", b"");
    b.delete_in(300, b"z");
    let expect: Vec<u8> = vec![
        0x02, 0x01, 0, 0, 0, 0, 0, 0, // sequence 0x0102
        4, 0, 0, 0, // count
        0x1, 1, b'k', 2, b'v', b'v', // put k vv
        0x0, 1, b'd', // delete d
        0x5, 3, 1, b'a', 0, // put cf 3 a ""
        0x4, 0xac, 0x02, 1, b'z', // delete cf 300 z
    ];
    assert_eq!(b.data(), &expect[..]);
    assert_eq!(b.size_in_bytes(), expect.len());
    assert_eq!(b.sequence(), 0x0102);
    assert_eq!(b.count(), 4);
}

#[test]
fn golden_bytes_merge_and_single_delete() {
    let mut b = WriteBatch::new();
    b.merge(b"m", b"+1");
    b.merge_cf(&7u32, b"n", b"x");
    b.single_delete(b"s");
    b.single_delete_cf(&300u32, b"t");
    b.delete_range(b"a", b"c");
    b.delete_range_cf(&2u32, b"x", b"y");
    let expect: Vec<u8> = vec![
        0, 0, 0, 0, 0, 0, 0, 0, // sequence
        6, 0, 0, 0, // count
        0x2, 1, b'm', 2, b'+', b'1', // merge m +1
        0x6, 7, 1, b'n', 1, b'x', // merge cf 7 n x
        0x7, 1, b's', // single delete s
        0x8, 0xac, 0x02, 1, b't', // single delete cf 300 t
        0xF, 1, b'a', 1, b'c', // delete range [a, c)
        0xE, 2, 1, b'x', 1, b'y', // delete range cf 2 [x, y)
    ];
    assert_eq!(b.data(), &expect[..]);
    assert!(b.has_merges());
    let got = collect(&b).unwrap();
    assert_eq!(
        got,
        vec![
            (ValueKind::Merge, 0, b"m".to_vec(), b"+1".to_vec()),
            (ValueKind::Merge, 7, b"n".to_vec(), b"x".to_vec()),
            (ValueKind::SingleDeletion, 0, b"s".to_vec(), vec![]),
            (ValueKind::SingleDeletion, 300, b"t".to_vec(), vec![]),
            (ValueKind::RangeDeletion, 0, b"a".to_vec(), b"c".to_vec()),
            (ValueKind::RangeDeletion, 2, b"x".to_vec(), b"y".to_vec()),
        ]
    );
    b.clear();
    assert!(!b.has_merges());
}

#[test]
fn roundtrip_through_bytes() {
    let mut b = WriteBatch::with_capacity(3);
    assert!(b.is_empty());
    assert_eq!(b.size_in_bytes(), BATCH_HEADER_LEN);
    b.put(b"alpha", b"1");
    b.delete(b"beta");
    b.put(b"", b"");
    b.put_in(7, b"gamma", &[0u8; 300]);
    b.delete_in(1 << 20, b"delta");
    b.set_sequence(MAX_SEQNO - 4);
    assert_eq!(b.len(), 5);
    assert!(!b.is_empty());

    let c = WriteBatch::from_data(b.data().to_vec()).unwrap();
    assert_eq!(c, b);
    c.validate("000001.log", 0).unwrap();
    assert_eq!(c.sequence(), MAX_SEQNO - 4);
    let got = collect(&c).unwrap();
    let want: Vec<Owned> = vec![
        (ValueKind::Value, 0, b"alpha".to_vec(), b"1".to_vec()),
        (ValueKind::Deletion, 0, b"beta".to_vec(), vec![]),
        (ValueKind::Value, 0, vec![], vec![]),
        (ValueKind::Value, 7, b"gamma".to_vec(), vec![0u8; 300]),
        (ValueKind::Deletion, 1 << 20, b"delta".to_vec(), vec![]),
    ];
    assert_eq!(got, want);
    assert!(format!("{c:?}").contains("count: 5"));
}

#[test]
fn clear_and_default() {
    let mut b = WriteBatch::default();
    b.put(b"a", b"b");
    b.set_sequence(9);
    b.clear();
    assert_eq!(b, WriteBatch::new());
    assert_eq!(b.len(), 0);
    assert_eq!(b.sequence(), 0);
    assert_eq!(collect(&b).unwrap(), vec![]);
}

#[test]
fn append_concatenates_and_adds_counts() {
    let mut a = WriteBatch::new();
    a.set_sequence(100);
    a.put(b"a", b"1");
    let mut b = WriteBatch::new();
    b.set_sequence(5);
    b.delete(b"b");
    b.put_in(2, b"c", b"3");
    let empty = WriteBatch::new();
    a.append(&b);
    a.append(&empty);
    assert_eq!(a.count(), 3);
    assert_eq!(a.sequence(), 100);
    a.validate("x", 0).unwrap();
    let got = collect(&a).unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0].2, b"a");
    assert_eq!(got[1], (ValueKind::Deletion, 0, b"b".to_vec(), vec![]));
    assert_eq!(got[2], (ValueKind::Value, 2, b"c".to_vec(), b"3".to_vec()));
    let mut e = WriteBatch::new();
    e.append(&a);
    assert_eq!(collect(&e).unwrap(), got);
}

#[test]
fn short_header_rejected() {
    for n in 0..BATCH_HEADER_LEN {
        let e = WriteBatch::from_data(vec![0; n]).unwrap_err();
        assert!(e.is_corruption(), "{e}");
    }
    let b = WriteBatch::from_data(vec![0; BATCH_HEADER_LEN]).unwrap();
    assert!(b.is_empty());
    b.validate("f", 0).unwrap();
}

#[test]
fn unknown_tags_rejected() {
    for t in 0..=255u8 {
        if matches!(
            t,
            tag::DELETION
                | tag::VALUE
                | tag::CF_DELETION
                | tag::CF_VALUE
                | tag::MERGE
                | tag::CF_MERGE
                | tag::SINGLE_DELETION
                | tag::CF_SINGLE_DELETION
                | tag::RANGE_DELETION
                | tag::CF_RANGE_DELETION
                | tag::VALUE_WITH_EXPIRY
                | tag::CF_VALUE_WITH_EXPIRY
        ) {
            continue;
        }
        let mut data = vec![0u8; 8];
        data.extend_from_slice(&1u32.to_le_bytes());
        data.extend_from_slice(&[t, 1, b'k', 1, b'v']);
        let b = WriteBatch::from_data(data).unwrap();
        let err = b.iter().next().unwrap().unwrap_err();
        match &err {
            Error::Corruption { file, offset, what } => {
                assert_eq!(file, BATCH_ERROR_FILE);
                assert_eq!(*offset, BATCH_HEADER_LEN as u64);
                assert!(what.contains("tag"), "{what}");
            }
            other => panic!("unexpected {other:?}"),
        }
        let err = b.validate("000007.log", 4242).unwrap_err();
        match err {
            Error::Corruption { file, offset, what } => {
                assert_eq!(file, "000007.log");
                assert_eq!(offset, 4242);
                assert!(what.contains("byte 12"), "{what}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[test]
fn count_mismatch_rejected() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.put(b"b", b"2");
    for wrong in [0u32, 1, 3, u32::MAX] {
        let mut c = b.clone();
        c.set_count(wrong);
        let err = c.validate("f", 1).unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(err.to_string().contains("count"), "{err}");
        // The iterator never yields more entries than the header claims.
        let ok = c.iter().take_while(|e| e.is_ok()).count();
        assert!(ok <= wrong as usize);
    }
}

/// A random batch, also applied to a BTreeMap model.
fn random_batch(rng: &mut SmallRng) -> (WriteBatch, BTreeMap<Vec<u8>, Option<Vec<u8>>>) {
    let mut b = WriteBatch::new();
    let mut model = BTreeMap::new();
    for _ in 0..rng.gen_range(0..30) {
        let key: Vec<u8> = (0..rng.gen_range(0..6))
            .map(|_| rng.gen_range(b'a'..b'e'))
            .collect();
        if rng.gen_bool(0.7) {
            let vlen = if rng.gen_bool(0.1) {
                rng.gen_range(100..400)
            } else {
                rng.gen_range(0..8)
            };
            let v: Vec<u8> = (0..vlen).map(|_| rng.gen()).collect();
            b.put(&key, &v);
            model.insert(key, Some(v));
        } else {
            b.delete(&key);
            model.insert(key, None);
        }
    }
    (b, model)
}

#[test]
fn randomized_model_roundtrip() {
    for seed in 0..200u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (b, model) = random_batch(&mut rng);
        let c = WriteBatch::from_data(b.data().to_vec()).unwrap();
        c.validate("f", 0)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let mut applied = BTreeMap::new();
        for e in c.iter() {
            let e = e.unwrap();
            assert_eq!(e.cf, 0);
            let v = match e.kind {
                ValueKind::Value => Some(e.value.to_vec()),
                ValueKind::Deletion => {
                    assert!(e.value.is_empty());
                    None
                }
                k => panic!("seed {seed}: unexpected kind {k:?}"),
            };
            applied.insert(e.key.to_vec(), v);
        }
        assert_eq!(applied, model, "seed {seed}");
    }
}

/// Decodes `data` completely; must never panic. Returns the entries when
/// the batch is valid.
fn decode_all(data: Vec<u8>) -> Option<Vec<Owned>> {
    let b = WriteBatch::from_data(data).ok()?;
    let via_iter = collect(&b);
    let valid = b.validate("f", 9);
    assert_eq!(via_iter.is_ok() && b.sequence_fits(), valid.is_ok());
    if let Err(e) = &valid {
        assert!(e.is_corruption(), "{e}");
    }
    let entries = via_iter.ok()?;
    assert_eq!(entries.len(), b.len());
    Some(entries)
}

#[test]
fn every_truncation_is_rejected() {
    for seed in 0..100u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (b, _) = random_batch(&mut rng);
        for cut in 0..b.data().len() {
            if b.is_empty() && cut == BATCH_HEADER_LEN {
                continue;
            }
            assert!(
                decode_all(b.data()[..cut].to_vec()).is_none(),
                "seed {seed}: truncation at {cut} accepted"
            );
        }
        assert!(decode_all(b.data().to_vec()).is_some(), "seed {seed}");
    }
}

#[test]
fn random_damage_never_panics() {
    for seed in 0..2000u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let (b, _) = random_batch(&mut rng);
        let mut data = b.data().to_vec();
        for _ in 0..rng.gen_range(1..4) {
            match rng.gen_range(0..4) {
                0 if !data.is_empty() => {
                    let i = rng.gen_range(0..data.len());
                    data[i] ^= 1 << rng.gen_range(0..8);
                }
                1 if !data.is_empty() => {
                    let i = rng.gen_range(0..data.len());
                    data[i] = rng.gen();
                }
                2 => {
                    let n = rng.gen_range(0..=data.len());
                    data.truncate(n);
                }
                _ => data.push(rng.gen()),
            }
        }
        // A damaged batch may still parse (e.g. a flipped value byte);
        // the WAL checksum is what catches that. Here: no panic, and a
        // batch that parses is self-consistent.
        if let Some(entries) = decode_all(data) {
            for (kind, _, _, value) in entries {
                assert!(kind == ValueKind::Value || value.is_empty(), "seed {seed}");
            }
        }
    }
}

#[test]
fn fully_random_bytes_never_panic() {
    for seed in 0..2000u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let len = rng.gen_range(0..64);
        let mut data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if data.len() >= BATCH_HEADER_LEN && rng.gen_bool(0.5) {
            data[8..12].copy_from_slice(&rng.gen_range(0u32..4).to_le_bytes());
        }
        let _ = decode_all(data);
    }
}

#[test]
fn rollback_to_a_mark_drops_what_came_after_it() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    let mark = b.mark();
    let (bytes, data) = (b.size_in_bytes(), b.data().to_vec());
    b.merge_cf(&3u32, b"b", b"2");
    b.delete_range(b"c", b"d");
    assert_eq!(b.len(), 3);
    b.rollback_to(&mark);
    assert_eq!((b.len(), b.size_in_bytes()), (1, bytes));
    assert_eq!(b.data(), data.as_slice());
    b.validate("test", 0).unwrap();
    // An entry refused after the mark is forgotten with it.
    let mut b = WriteBatch::new();
    let mark = b.mark();
    b.refused = Some("too big".into());
    b.rollback_to(&mark);
    assert!(b.refused().is_none());
}

#[test]
fn entry_at_decodes_the_record_at_an_offset() {
    let mut b = WriteBatch::new();
    let first = b.size_in_bytes();
    b.put(b"a", b"1");
    let second = b.size_in_bytes();
    b.single_delete_cf(&7u32, b"k");
    let e = b.entry_at(first).unwrap();
    assert_eq!(
        (e.kind, e.cf, e.key, e.value),
        (ValueKind::Value, 0, &b"a"[..], &b"1"[..])
    );
    let e = b.entry_at(second).unwrap();
    assert_eq!(
        (e.kind, e.cf, e.key),
        (ValueKind::SingleDeletion, 7, &b"k"[..])
    );
    assert!(b.entry_at(b.size_in_bytes()).is_err());
}
