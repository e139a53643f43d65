use super::*;
use crate::base::{make_internal_key, ValueKind};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

fn ikey(k: &[u8], seq: u64) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, k, seq, ValueKind::Value as u8);
    v
}

fn sample() -> VersionEdit {
    let mut e = VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(7),
        prev_log_number: Some(0),
        next_file_number: Some(12),
        last_sequence: Some(1000),
        db_id: Some("db-1".into()),
        ..Default::default()
    };
    e.delete_file(1, 4);
    e.add_file(
        2,
        FileMeta {
            number: 9,
            file_size: 4096,
            smallest: ikey(b"a", 5),
            largest: ikey(b"m", 900),
            smallest_seq: 5,
            largest_seq: 900,
            num_entries: 10,
            num_deletions: 2,
            num_range_deletions: 1,
            compression: 4,
            range_del_span: OnceLock::from((b"c".to_vec(), b"f".to_vec())),
            ..Default::default()
        },
    );
    e
}

fn random_edit(rng: &mut SmallRng) -> VersionEdit {
    let mut e = VersionEdit::default();
    let opt = |rng: &mut SmallRng| -> Option<u64> {
        let shift = rng.gen_range(0..64);
        rng.gen_bool(0.5)
            .then(|| rng.gen_range(0..=u64::MAX >> shift))
    };
    e.log_number = opt(rng);
    e.prev_log_number = opt(rng);
    e.next_file_number = opt(rng);
    e.last_sequence = opt(rng).map(|v| v & MAX_SEQNO);
    if rng.gen_bool(0.3) {
        e.comparator = Some("cmp".repeat(rng.gen_range(0..5)));
    }
    if rng.gen_bool(0.3) {
        e.db_id = Some(format!("id-{}", rng.gen::<u32>()));
    }
    if rng.gen_bool(0.2) {
        e.column_family = rng.gen_range(1..1000);
    }
    if rng.gen_bool(0.1) {
        e.cf_add = Some(format!("cf{}", rng.gen::<u16>()));
        e.cf_options = Some("write_buffer_size=4096".into());
    }
    e.cf_drop = rng.gen_bool(0.05);
    if rng.gen_bool(0.1) {
        e.max_column_family = Some(rng.gen());
    }
    if rng.gen_bool(0.1) {
        e.atomic_group = Some(rng.gen_range(0..10));
    }
    if rng.gen_bool(0.2) {
        e.min_log_number_to_keep = Some(rng.gen_range(0..1 << 40));
    }
    for _ in 0..rng.gen_range(0..4) {
        e.delete_file(rng.gen_range(0..7), rng.gen());
    }
    for _ in 0..rng.gen_range(0..4) {
        let a: u8 = rng.gen();
        let b: u8 = rng.gen_range(a..=255);
        let s1 = rng.gen_range(0..1000);
        let s2 = rng.gen_range(s1..2000);
        e.add_file(
            rng.gen_range(0..7),
            FileMeta {
                number: rng.gen(),
                file_size: rng.gen(),
                smallest: ikey(&[a, 1], s1),
                largest: ikey(&[b, 2], s2),
                smallest_seq: s1,
                largest_seq: s2,
                num_entries: rng.gen_range(0..1 << 40),
                num_deletions: rng.gen_range(0..100),
                num_range_deletions: rng.gen_range(0..3),
                expiry_max: rng.gen_range(0..2) * 1_800_000_000,
                expiry_entries: rng.gen_range(0..3),
                newest_key_time: rng.gen_range(0..2) * 1_700_000_000,
                oldest_blob_file: rng.gen_range(0..2) * rng.gen_range(1..1000),
                compression: rng.gen(),
                global_seqno: rng.gen_bool(0.2).then(|| rng.gen_range(1..1 << 50)),
                ..Default::default()
            },
        );
        if rng.gen_bool(0.3) {
            let f = &e.new_files.last().expect("added").1;
            let start = vec![a; rng.gen_range(0..4)];
            let _ = f
                .range_del_span
                .set((start, vec![b; rng.gen_range(0..300)]));
        }
    }
    for _ in 0..rng.gen_range(0..3) {
        let bytes = rng.gen_range(1..1 << 40);
        e.blob_file_additions.push(BlobFileAddition {
            number: rng.gen(),
            count: rng.gen_range(1..1 << 30),
            bytes,
            file_size: bytes + rng.gen_range(0..1000),
        });
    }
    for _ in 0..rng.gen_range(0..3) {
        e.blob_file_garbage.push(BlobFileGarbage {
            number: rng.gen(),
            count: rng.gen_range(0..1 << 30),
            bytes: rng.gen_range(0..1 << 40),
        });
    }
    e
}

fn enc(e: &VersionEdit) -> Vec<u8> {
    let mut v = Vec::new();
    e.encode(&mut v);
    v
}

#[test]
fn roundtrip_sample_and_empty() {
    assert_eq!(sample().new_file_numbers(), vec![9]);
    for e in [sample(), VersionEdit::default()] {
        let b = enc(&e);
        assert_eq!(VersionEdit::decode(&b, "M", 0).unwrap(), e);
    }
}

#[test]
fn encoding_is_frozen() {
    // Golden bytes: if this changes, the on-disk format changed.
    let mut e = VersionEdit {
        log_number: Some(7),
        next_file_number: Some(300),
        ..Default::default()
    };
    e.delete_file(1, 4);
    e.add_file(
        0,
        FileMeta {
            number: 9,
            file_size: 5,
            smallest: ikey(b"a", 1),
            largest: ikey(b"b", 2),
            smallest_seq: 1,
            largest_seq: 2,
            num_entries: 2,
            num_deletions: 0,
            compression: 1,
            ..Default::default()
        },
    );
    let want: Vec<u8> = vec![
        1, 1, // format version 1
        3, 7, // log number 7
        5, 0xac, 0x02, // next file number 300
        8, 1, 4, // deleted file L1 #4
        9, 0, 9, 5, // new file L0 #9 size 5
        9, b'a', 1, 1, 0, 0, 0, 0, 0, 0, // smallest a@1
        9, b'b', 1, 2, 0, 0, 0, 0, 0, 0, // largest b@2
        1, 2, 2, 0, 1, 0, // seqs 1..2, 2 entries, 0 deletions, compression 1, end
    ];
    // Version 1 bytes (written by earlier builds) still decode; this
    // build writes the same fields under format version 2.
    assert_eq!(VersionEdit::decode(&want, "M", 0).unwrap(), e);
    let mut v2 = want.clone();
    v2[1] = 2;
    assert_eq!(enc(&e), v2);
    let mut id = VersionEdit {
        db_id: Some("x".into()),
        ..Default::default()
    };
    id.column_family = 3;
    let id_bytes = [1, 2, 7, 3, 0x81, 0x40, 1, b'x'];
    assert_eq!(enc(&id), id_bytes);
    assert_eq!(VersionEdit::decode(&id_bytes, "M", 0).unwrap(), id);
    let cf = VersionEdit {
        column_family: 5,
        cf_add: Some("ab".into()),
        max_column_family: Some(5),
        atomic_group: Some(1),
        cf_options: Some("k=v".into()),
        ..Default::default()
    };
    let cf_bytes = [
        1, 2, // format version 2
        7, 5, // column family 5
        10, 2, b'a', b'b', // add "ab"
        12, 5, // max column family 5
        14, 1, // one more edit in the atomic group
        0x82, 0x40, 3, b'k', b'=', b'v', // options (safe to ignore)
    ];
    assert_eq!(enc(&cf), cf_bytes);
    assert_eq!(VersionEdit::decode(&cf_bytes, "M", 0).unwrap(), cf);
    let drop = VersionEdit {
        column_family: 5,
        cf_drop: true,
        ..Default::default()
    };
    assert_eq!(enc(&drop), [1, 2, 7, 5, 11]);
    // The DB-wide min log number to keep: format 3, only in edits that
    // carry it.
    let keep = VersionEdit {
        log_number: Some(7),
        min_log_number_to_keep: Some(300),
        ..Default::default()
    };
    let keep_bytes = [1, 3, 3, 7, 13, 0xac, 0x02];
    assert_eq!(enc(&keep), keep_bytes);
    assert_eq!(VersionEdit::decode(&keep_bytes, "M", 0).unwrap(), keep);
    // Tag 13 was reserved before format 3.
    assert!(corruption_what(&[1, 2, 13, 1]).contains("unknown tag 13"));
    // Blob files: format 4, only in edits that carry them; a table's
    // oldest blob file is sub-field 67.
    let blobs = VersionEdit {
        blob_file_additions: vec![BlobFileAddition {
            number: 12,
            count: 3,
            bytes: 300,
            file_size: 400,
        }],
        blob_file_garbage: vec![BlobFileGarbage {
            number: 7,
            count: 1,
            bytes: 100,
        }],
        ..Default::default()
    };
    let blob_bytes = [1, 4, 15, 12, 3, 0xac, 0x02, 0x90, 0x03, 16, 7, 1, 100];
    assert_eq!(enc(&blobs), blob_bytes);
    assert_eq!(VersionEdit::decode(&blob_bytes, "M", 0).unwrap(), blobs);
    // Blob tags were reserved before format 4.
    assert!(corruption_what(&[1, 3, 15, 1, 1, 1, 1]).contains("unknown tag 15"));
    // An addition with no blob, or more blob bytes than the file, is
    // corrupt.
    assert!(corruption_what(&[1, 4, 15, 12, 0, 1, 1]).contains("bad counts"));
    assert!(corruption_what(&[1, 4, 15, 12, 1, 9, 8]).contains("bad counts"));
    let mut t = sample();
    let mut f = t.new_files.pop().unwrap().1;
    // The sample's tombstone (sub-fields 69 and 73).
    let mut with_span = t.clone();
    with_span.new_files.push((2, f.clone()));
    let span = enc(&with_span);
    // ... compression 4, 69 = one tombstone, 73 = ("c", "f"), END.
    assert_eq!(
        &span[span.len() - 11..],
        [4, 69, 1, 1, 73, 4, 1, b'c', 1, b'f', 0]
    );
    assert_eq!(VersionEdit::decode(&span, "M", 0).unwrap(), with_span);
    f.num_range_deletions = 0;
    f.range_del_span = OnceLock::new();
    f.oldest_blob_file = 5;
    t.new_files.push((2, f));
    let with_blob = enc(&t);
    // ... compression 4, then sub-field 67 = varint 5, then END.
    assert_eq!(&with_blob[with_blob.len() - 5..], [4, 67, 1, 5, 0]);
    assert_eq!(VersionEdit::decode(&with_blob, "M", 0).unwrap(), t);
    // Family tags did not exist in format 1.
    assert!(matches!(
        VersionEdit::decode(&[1, 1, 7, 5, 11], "M", 0),
        Err(Error::Corruption { .. })
    ));
}

#[test]
fn randomized_roundtrip() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..2000 {
        let e = random_edit(&mut rng);
        let b = enc(&e);
        assert_eq!(VersionEdit::decode(&b, "M", 0).unwrap(), e);
    }
}

#[test]
fn truncation_is_detected_or_a_field_boundary() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    for _ in 0..300 {
        let b = enc(&random_edit(&mut rng));
        for n in 0..b.len() {
            // A prefix decodes only when it ends at a field boundary, and
            // then it is exactly the edit of those fields (written as
            // the oldest format that holds the fields left).
            if let Ok(e) = VersionEdit::decode(&b[..n], "M", 0) {
                let mut want = b[..n].to_vec();
                want[1] = if e.new_files.iter().any(|(_, f)| f.written_as != 0) {
                    EDIT_FORMAT_VERSION as u8
                } else if e.new_files.iter().any(|(_, f)| f.global_seqno.is_some()) {
                    EDIT_FORMAT_VERSION_INGEST as u8
                } else if !e.blob_file_additions.is_empty() || !e.blob_file_garbage.is_empty() {
                    EDIT_FORMAT_VERSION_BLOB as u8
                } else if e.min_log_number_to_keep.is_some() {
                    EDIT_FORMAT_VERSION_MIN_LOG as u8
                } else {
                    EDIT_FORMAT_VERSION_CF as u8
                };
                assert_eq!(enc(&e), want);
            }
        }
    }
}

#[test]
fn garbage_and_flipped_bytes_never_panic() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut errors = 0;
    for i in 0..20_000 {
        let mut b = if i % 2 == 0 {
            enc(&random_edit(&mut rng))
        } else {
            let n = rng.gen_range(0..64);
            let mut v: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            if rng.gen_bool(0.5) {
                v.splice(0..0, [1, 1]);
            }
            v
        };
        if !b.is_empty() {
            for _ in 0..rng.gen_range(1..4) {
                let p = rng.gen_range(0..b.len());
                b[p] ^= 1 << rng.gen_range(0..8);
            }
        }
        match VersionEdit::decode(&b, "MANIFEST-000003", 77) {
            Ok(_) => {}
            Err(Error::Corruption { file, offset, .. }) => {
                assert_eq!(file, "MANIFEST-000003");
                assert_eq!(offset, 77);
                errors += 1;
            }
            Err(Error::NotSupported(_)) => errors += 1,
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    assert!(errors > 1000, "only {errors} errors");
}

fn corruption_what(b: &[u8]) -> String {
    match VersionEdit::decode(b, "M", 5) {
        Err(Error::Corruption { what, .. }) => what,
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn rejects_bad_fields() {
    assert!(corruption_what(&[]).contains("tag"));
    assert!(corruption_what(&[3, 7]).contains("not the format version"));
    assert!(corruption_what(&[1, 1, 3, 7, 3, 8]).contains("duplicate log number"));
    assert!(corruption_what(&[1, 1, 1, 1]).contains("second format version"));
    assert!(corruption_what(&[1, 1, 42, 0]).contains("unknown tag 42"));
    assert!(corruption_what(&[1, 1, 8, 64, 1]).contains("level 64"));
    assert!(corruption_what(&[1, 1, 2, 2, 0xff, 0xfe]).contains("not UTF-8"));
    assert!(
        corruption_what(&[1, 1, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
            .contains("56 bits")
    );
    // New file with a 3-byte smallest key.
    assert!(
        corruption_what(&[1, 1, 9, 0, 1, 1, 3, 1, 2, 3]).contains("shorter than an internal key")
    );
    // smallest > largest.
    let mut f = FileMeta {
        number: 1,
        smallest: ikey(b"z", 1),
        largest: ikey(b"a", 1),
        ..Default::default()
    };
    let mut e = VersionEdit::default();
    e.add_file(0, f.clone());
    assert!(corruption_what(&enc(&e)).contains("smallest key > largest key"));
    f.smallest = ikey(b"a", 2);
    f.smallest_seq = 5;
    f.largest_seq = 4;
    let mut e = VersionEdit::default();
    e.add_file(0, f);
    assert!(corruption_what(&enc(&e)).contains("bad seqno range"));
    match VersionEdit::decode(&[1, 7], "M", 0) {
        Err(Error::NotSupported(m)) => assert!(m.contains("format version 7"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        VersionEdit::decode(&[1, 0], "M", 0),
        Err(Error::NotSupported(_))
    ));
}

#[test]
fn safe_to_ignore_fields_are_skipped() {
    let mut b = enc(&sample());
    // An unknown top-level field with the safe-ignore bit.
    put_varint32(&mut b, tag::SAFE_IGNORE_MASK | 77);
    put_length_prefixed(&mut b, b"future");
    assert_eq!(VersionEdit::decode(&b, "M", 0).unwrap(), sample());

    // An unknown file sub-field with the safe-ignore bit, then one without.
    let mut e = VersionEdit::default();
    e.add_file(1, sample().new_files[0].1.clone());
    let mut b = enc(&e);
    assert_eq!(b.pop(), Some(file_tag::END as u8));
    let mut ok = b.clone();
    put_varint32(&mut ok, file_tag::SAFE_IGNORE_MASK | 1);
    put_length_prefixed(&mut ok, b"checksum");
    put_varint32(&mut ok, file_tag::END);
    assert_eq!(VersionEdit::decode(&ok, "M", 0).unwrap(), e);
    let mut bad = b;
    put_varint32(&mut bad, 3);
    put_length_prefixed(&mut bad, b"x");
    put_varint32(&mut bad, file_tag::END);
    assert!(corruption_what(&bad).contains("unknown file sub-field tag 3"));
}

/// Edit format 5: an ingested table's global sequence number, sub-field 1
/// (not safe to ignore), and the edit written as version 5 only then.
#[test]
fn global_seqno_sub_field_bytes_and_version() {
    let mut e = VersionEdit::default();
    let mut f = FileMeta::new(7, 100, ikey(b"a", 300), ikey(b"b", 300), 300, 300, 2, 0);
    f.global_seqno = Some(300);
    e.add_file(1, f);
    let b = enc(&e);
    assert_eq!(&b[..2], &[tag::FORMAT_VERSION as u8, 5]);
    let end = b.len();
    // ... compression byte, then sub-field 1 = len 2, varint 300, then END.
    assert_eq!(&b[end - 5..], &[1, 2, 0xac, 0x02, 0]);
    assert_eq!(VersionEdit::decode(&b, "M", 0).unwrap(), e);
    // Without it: version 2.
    e.new_files[0].1.global_seqno = None;
    assert_eq!(enc(&e)[1], 2);
    // A zero global seqno is corruption.
    let mut z = b.clone();
    z[end - 3] = 0;
    z[end - 2] = 0;
    z.remove(end - 2);
    z[end - 4] = 1;
    assert!(VersionEdit::decode(&z, "M", 0).is_err());
}

/// Edit format 6: an imported table's WRITTEN_AS (sub-field 74), and the
/// edit written as version 6 only then; a version-5 reader would refuse it
/// (a reader refuses versions above its own).
#[test]
fn written_as_sub_field_writes_version_6() {
    let mut e = VersionEdit::default();
    let mut f = FileMeta::new(9, 100, ikey(b"a", 3), ikey(b"b", 3), 3, 3, 2, 0);
    f.written_as = 41;
    e.add_file(2, f);
    let b = enc(&e);
    assert_eq!(&b[..2], &[tag::FORMAT_VERSION as u8, 6]);
    assert_eq!(VersionEdit::decode(&b, "M", 0).unwrap(), e);
    e.new_files[0].1.global_seqno = Some(3);
    assert_eq!(enc(&e)[1], 6);
    e.new_files[0].1.written_as = 0;
    assert_eq!(enc(&e)[1], 5);
    // A version this build does not know is refused, not misread.
    let mut future = b.clone();
    future[1] = 7;
    assert!(matches!(
        VersionEdit::decode(&future, "M", 0),
        Err(crate::error::Error::NotSupported(_))
    ));
}
