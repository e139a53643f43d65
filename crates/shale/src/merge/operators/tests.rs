use super::*;

fn le(n: u64) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

#[test]
fn uint64add_sums_and_rejects_bad_lengths() {
    let op = UInt64AddOperator;
    let v = op
        .full_merge(b"k", Some(&le(5)), &[&le(2), &le(u64::MAX)])
        .unwrap();
    assert_eq!(v, le(6)); // wraps
    assert_eq!(op.full_merge(b"k", None, &[&le(3)]).unwrap(), le(3));
    assert!(op.full_merge(b"k", Some(b"abc"), &[&le(1)]).is_err());
    assert!(op.full_merge(b"k", None, &[b"x"]).is_err());
    assert_eq!(op.partial_merge(b"k", &[&le(1), &le(2)]), Some(le(3)));
    assert_eq!(op.partial_merge(b"k", &[&le(1), b"bad"]), None);
}

#[test]
fn string_append_and_max() {
    let op = StringAppendOperator::new(b"--");
    assert_eq!(op.full_merge(b"k", None, &[b"a", b"b"]).unwrap(), b"a--b");
    assert_eq!(op.full_merge(b"k", Some(b""), &[b"a"]).unwrap(), b"--a");
    assert_eq!(op.partial_merge(b"k", &[b"x", b"y"]).unwrap(), b"x--y");
    let m = MaxOperator;
    assert_eq!(m.full_merge(b"k", Some(b"b"), &[b"a", b"c"]).unwrap(), b"c");
    assert_eq!(m.full_merge(b"k", None, &[]).unwrap(), b"");
    assert_eq!(m.partial_merge(b"k", &[b"q", b"z"]).unwrap(), b"z");
}

#[test]
fn rebuilt_from_their_names() {
    for op in [
        Arc::new(UInt64AddOperator) as Arc<dyn MergeOperator>,
        Arc::new(MaxOperator),
        Arc::new(StringAppendOperator::new(b",\n")),
        Arc::new(StringAppendOperator::new(b"")),
    ] {
        let back = from_name(op.name()).unwrap_or_else(|| panic!("{}", op.name()));
        assert_eq!(back.name(), op.name());
    }
    assert!(from_name("stringappend:zz").is_none());
    assert!(from_name("stringappend:a").is_none());
    assert!(from_name("custom").is_none());
}
