use super::*;

#[test]
fn names_parse_and_round_trip() {
    for e in [
        PrefixExtractor::Fixed(8),
        PrefixExtractor::Fixed(1),
        PrefixExtractor::Capped(3),
        PrefixExtractor::Capped(1000),
    ] {
        assert_eq!(PrefixExtractor::parse(&e.name()), Some(e));
    }
    assert_eq!(PrefixExtractor::Fixed(8).name(), "rocksdb.FixedPrefix.8");
    assert_eq!(PrefixExtractor::Capped(4).name(), "rocksdb.CappedPrefix.4");
    for bad in [
        "",
        "rocksdb.FixedPrefix.",
        "rocksdb.FixedPrefix.x",
        "rocksdb.FixedPrefix.-1",
        "rocksdb.FixedPrefix.08",
        "rocksdb.FixedPrefix.99999999999999999999",
        "rocksdb.Noop",
        "rocksdb.CappedPrefix.1 ",
        "FixedPrefix.8",
    ] {
        assert_eq!(PrefixExtractor::parse(bad), None, "{bad:?}");
    }
}

#[test]
fn domain_and_prefix() {
    let f = PrefixExtractor::Fixed(3);
    assert!(!f.in_domain(b"ab"));
    assert_eq!(f.prefix(b"ab"), None);
    assert!(f.in_domain(b"abc"));
    assert_eq!(f.prefix(b"abcd"), Some(&b"abc"[..]));
    let c = PrefixExtractor::Capped(3);
    assert!(c.in_domain(b""));
    assert_eq!(c.prefix(b"ab"), Some(&b"ab"[..]));
    assert_eq!(c.prefix(b"abcd"), Some(&b"abc"[..]));
}

#[test]
fn keys_sharing_a_prefix_are_contiguous() {
    // Every key between two keys of one prefix has that prefix.
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for a in 0u8..4 {
        keys.push(vec![a]);
        for b in 0u8..4 {
            keys.push(vec![a, b]);
            for c in 0u8..3 {
                keys.push(vec![a, b, c]);
            }
        }
    }
    keys.sort();
    for e in [
        PrefixExtractor::Fixed(1),
        PrefixExtractor::Fixed(2),
        PrefixExtractor::Capped(1),
        PrefixExtractor::Capped(2),
    ] {
        for (i, x) in keys.iter().enumerate() {
            for y in &keys[i..] {
                if e.prefix(x).is_some() && e.prefix(x) == e.prefix(y) {
                    for z in keys.iter().filter(|z| *z >= x && *z <= y) {
                        assert_eq!(e.prefix(z), e.prefix(x), "{e:?} {x:?} {z:?} {y:?}");
                    }
                }
            }
        }
    }
}
