use super::*;

#[test]
fn resolve_applies_operands_oldest_first_and_names_failures() {
    let op: Arc<dyn MergeOperator> = Arc::new(StringAppendOperator::new(b","));
    let ops: [&[u8]; 2] = [b"b", b"c"];
    let v = resolve(Some(&op), b"k", Some(b"a"), &ops).unwrap();
    assert_eq!(v, b"a,b,c");
    let e = resolve(None, b"k", None, &ops).unwrap_err();
    assert!(matches!(e, Error::MergeFailed(_)), "{e:?}");
    let add: Arc<dyn MergeOperator> = Arc::new(UInt64AddOperator);
    let e = resolve(Some(&add), b"k", None, &[b"bad"]).unwrap_err();
    assert!(e.to_string().contains("uint64add"), "{e}");
}
