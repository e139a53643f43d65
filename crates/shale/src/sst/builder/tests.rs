use super::*;
use crate::base::make_internal_key;

fn ik(u: &[u8], seq: u64) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, u, seq, 1);
    k
}

/// Random user keys over a small alphabet with 0x00 and 0xff (so
/// prefixes, adjacent bytes and runs of 0xff are common): the separator
/// lies in [start, limit), and is never longer than start.
#[test]
fn separators_lie_between_their_keys() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let alphabet = [0x00u8, 0x01, 0x30, 0x31, 0x32, 0xfe, 0xff];
    let mut d = Vec::new();
    let mut shortened = 0;
    for _ in 0..100_000 {
        let key = |rng: &mut rand::rngs::SmallRng| -> Vec<u8> {
            let n = rng.gen_range(0..6);
            (0..n)
                .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                .collect()
        };
        let (mut a, mut b) = (key(&mut rng), key(&mut rng));
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        let (start, limit) = (ik(&a, 9), ik(&b, 4));
        shortest_separator(&start, &limit, &mut d);
        assert_ne!(
            compare_internal(&d, &start),
            Ordering::Less,
            "{a:?} {b:?} -> {d:?}"
        );
        if a != b {
            assert_eq!(
                compare_internal(&d, &limit),
                Ordering::Less,
                "{a:?} {b:?} -> {d:?}"
            );
        }
        assert!(
            extract_user_key(&d).len() <= a.len(),
            "{a:?} {b:?} -> {d:?}"
        );
        if d != start {
            shortened += 1;
        }
    }
    assert!(shortened > 10_000, "{shortened}");
}

#[test]
fn separators() {
    let mut d = Vec::new();
    shortest_separator(&ik(b"abcdef", 5), &ik(b"abzz", 9), &mut d);
    assert_eq!(extract_user_key(&d), b"abd");
    // Adjacent bytes: cannot shorten.
    shortest_separator(&ik(b"abc", 5), &ik(b"abd", 9), &mut d);
    assert_eq!(d, ik(b"abc", 5));
    // Same user key: the start key itself.
    shortest_separator(&ik(b"k", 5), &ik(b"k", 3), &mut d);
    assert_eq!(d, ik(b"k", 5));
    // Prefix: cannot shorten.
    shortest_separator(&ik(b"ab", 5), &ik(b"abc", 3), &mut d);
    assert_eq!(d, ik(b"ab", 5));
    shortest_separator(&ik(b"a\xff", 5), &ik(b"b", 3), &mut d);
    assert_eq!(d, ik(b"a\xff", 5));
    // Adjacent bytes, the limit longer: a proper prefix of the limit
    // (keys that differ by one in a counter: most block boundaries of
    // db_bench's keys).
    shortest_separator(&ik(b"\x00\x07j0000", 5), &ik(b"\x00\x07k0000", 3), &mut d);
    assert_eq!(extract_user_key(&d), b"\x00\x07k");
    // Adjacent bytes, the limit ends there: a later start byte that is
    // not 0xff is incremented.
    shortest_separator(&ik(b"abc\xff\x05\x09", 5), &ik(b"abd", 3), &mut d);
    assert_eq!(extract_user_key(&d), b"abc\xff\x06");
    // Limit below start at the first difference: start (not sorted
    // input, never given by the builder, but safe).
    shortest_separator(&ik(b"b", 5), &ik(b"a", 3), &mut d);
    assert_eq!(d, ik(b"b", 5));
    short_successor(&ik(b"\xff\xffab", 5), &mut d);
    assert_eq!(extract_user_key(&d), b"\xff\xffb");
    short_successor(&ik(b"\xff\xff", 5), &mut d);
    assert_eq!(d, ik(b"\xff\xff", 5));
}
