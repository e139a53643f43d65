use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::sst::compression::{TYPE_LZ4, TYPE_NONE, TYPE_ZSTD};

fn enc(i: &BlobIndex) -> Vec<u8> {
    let mut v = Vec::new();
    i.encode(&mut v);
    v
}

#[test]
fn encoding_is_frozen() {
    // Golden bytes: if this changes, the on-disk format changed.
    let i = BlobIndex {
        file_number: 12,
        offset: 300,
        size: 5,
        compression: TYPE_LZ4,
    };
    let want = [
        1,  // tag: plain blob
        12, // file number
        0xac, 0x02, // offset 300
        5,    // size
        1,    // compression LZ4
    ];
    assert_eq!(enc(&i), want);
    assert_eq!(BlobIndex::decode(&want), Some(i));
    assert_eq!(TAG_PLAIN_BLOB, 1);
    let max = BlobIndex {
        file_number: u64::MAX,
        offset: u64::MAX,
        size: u64::MAX,
        compression: TYPE_ZSTD,
    };
    assert_eq!(enc(&max).len(), MAX_ENCODED_LEN);
}

#[test]
fn malformed_encodings_are_rejected() {
    let good = enc(&BlobIndex {
        file_number: 1,
        offset: 24,
        size: 0,
        compression: TYPE_NONE,
    });
    assert!(BlobIndex::decode(&good).is_some());
    // Every proper prefix is truncated.
    for n in 0..good.len() {
        assert_eq!(BlobIndex::decode(&good[..n]), None, "prefix {n}");
    }
    // Trailing bytes.
    let mut b = good.clone();
    b.push(0);
    assert_eq!(BlobIndex::decode(&b), None);
    // Other tags (RocksDB's inlined TTL 0 and blob TTL 2 included).
    for tag in [0, 2, 0xff] {
        let mut b = good.clone();
        b[0] = tag;
        assert_eq!(BlobIndex::decode(&b), None, "tag {tag}");
    }
    // Unknown compression byte.
    let mut b = good.clone();
    *b.last_mut().unwrap() = 3;
    assert_eq!(BlobIndex::decode(&b), None);
    // A varint64 longer than 10 bytes or overflowing 64 bits.
    let mut b = vec![1];
    b.extend_from_slice(&[0xff; 10]);
    b.extend_from_slice(&[1, 1, 0]);
    assert_eq!(BlobIndex::decode(&b), None);
    let mut b = vec![1];
    b.extend_from_slice(&[0xff; 9]);
    b.extend_from_slice(&[2, 1, 1, 0]);
    assert_eq!(BlobIndex::decode(&b), None);
}

#[test]
fn random_indexes_roundtrip_and_random_bytes_never_panic() {
    let mut rng = SmallRng::seed_from_u64(0xb10b);
    let compressions = [TYPE_NONE, TYPE_LZ4, TYPE_ZSTD];
    for _ in 0..10_000 {
        // Values of every varint length.
        let num = |rng: &mut SmallRng| rng.gen::<u64>() >> rng.gen_range(0..64);
        let i = BlobIndex {
            file_number: num(&mut rng),
            offset: num(&mut rng),
            size: num(&mut rng),
            compression: compressions[rng.gen_range(0..3)],
        };
        let b = enc(&i);
        assert!(b.len() <= MAX_ENCODED_LEN);
        assert_eq!(BlobIndex::decode(&b), Some(i));
    }
    for _ in 0..100_000 {
        let n = rng.gen_range(0..40);
        let mut b: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
        if rng.gen_bool(0.5) && !b.is_empty() {
            b[0] = TAG_PLAIN_BLOB;
        }
        if let Some(i) = BlobIndex::decode(&b) {
            // What decodes re-encodes to an equivalent index (varints
            // may have been overlong).
            assert_eq!(BlobIndex::decode(&enc(&i)), Some(i));
            let _ = i.record_len(rng.gen());
        }
    }
}

#[test]
fn record_len_counts_header_key_and_value_and_saturates() {
    let i = BlobIndex {
        file_number: 1,
        offset: 24,
        size: 10,
        compression: TYPE_NONE,
    };
    assert_eq!(i.record_len(3), 13 + 3 + 10);
    let huge = BlobIndex {
        size: u64::MAX - 5,
        ..i
    };
    assert_eq!(huge.record_len(usize::MAX), u64::MAX);
}
