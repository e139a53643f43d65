use super::*;

fn header(count: u32) -> Vec<u8> {
    let mut v = vec![0u8; 8];
    v.extend_from_slice(&count.to_le_bytes());
    v
}

fn first_error(data: &[u8]) -> (u64, String) {
    for e in BatchIter::new(data) {
        if let Err(Error::Corruption { offset, what, .. }) = e {
            return (offset, what);
        }
    }
    panic!("no error for {data:?}");
}

#[test]
fn truncations_name_the_record() {
    let mut d = header(2);
    d.extend_from_slice(&[tag::VALUE, 1, b'a', 1, b'b']);
    let second = d.len() as u64;
    d.extend_from_slice(&[tag::CF_VALUE, 0x80]); // cf varint cut short
    assert_eq!(first_error(&d), (second, "bad column family id".into()));

    let mut d = header(1);
    d.extend_from_slice(&[tag::DELETION, 5, b'a']);
    assert_eq!(first_error(&d), (12, "truncated or bad key".into()));

    let mut d = header(1);
    d.extend_from_slice(&[tag::VALUE, 1, b'a', 9, b'b']);
    assert_eq!(first_error(&d), (12, "truncated or bad value".into()));

    // A cf id that does not fit in 32 bits.
    let mut d = header(1);
    d.extend_from_slice(&[tag::CF_DELETION, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, b'k']);
    assert_eq!(first_error(&d), (12, "bad column family id".into()));
}

#[test]
fn short_header_and_fused() {
    let mut it = BatchIter::new(&[1, 2, 3]);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
    let mut d = header(0);
    d.push(0x42);
    let mut it = BatchIter::new(&d);
    assert!(it.next().unwrap().is_err());
    assert!(it.next().is_none());
    assert!(it.next().is_none());
}

#[test]
fn deletion_has_empty_value_and_cf() {
    let mut d = header(2);
    d.extend_from_slice(&[tag::CF_DELETION, 9, 1, b'x', tag::DELETION, 0]);
    let got: Vec<_> = BatchIter::new(&d).collect::<Result<_>>().unwrap();
    assert_eq!(
        got,
        vec![
            BatchEntry {
                kind: ValueKind::Deletion,
                cf: 9,
                key: b"x",
                value: b""
            },
            BatchEntry {
                kind: ValueKind::Deletion,
                cf: 0,
                key: b"",
                value: b""
            },
        ]
    );
}
