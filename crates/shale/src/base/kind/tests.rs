use super::*;

#[test]
fn tags_are_frozen() {
    for k in [
        ValueKind::Deletion,
        ValueKind::Value,
        ValueKind::Merge,
        ValueKind::SingleDeletion,
        ValueKind::RangeDeletion,
        ValueKind::BlobIndex,
        ValueKind::ValueWithExpiry,
    ] {
        assert_eq!(ValueKind::from_u8(k as u8), Some(k));
    }
    assert_eq!(ValueKind::Value as u8, 1);
    assert_eq!(ValueKind::Deletion as u8, 0);
    assert_eq!(ValueKind::from_u8(0x42), None);
    assert!(ValueKind::Merge.is_supported());
    assert!(!ValueKind::BlobIndex.is_supported());
}
