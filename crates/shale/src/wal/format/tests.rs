use super::*;

#[test]
fn crc_is_bound_to_the_log_number() {
    let a = CrcSeeds::new(7);
    let b = CrcSeeds::new(8);
    let p = b"payload";
    assert_ne!(a.record_crc(1, p), b.record_crc(1, p));
    assert_ne!(a.record_crc(1, p), a.record_crc(2, p));
    // Definition from docs/format/wal.md, computed the long way.
    let mut all = 7u64.to_le_bytes().to_vec();
    all.push(1);
    all.extend_from_slice(p);
    assert_eq!(a.record_crc(1, p), mask_crc(crc32c(&all)));
    // Unknown type bytes use the same definition.
    let mut all = 7u64.to_le_bytes().to_vec();
    all.push(0x99);
    assert_eq!(a.record_crc(0x99, b""), mask_crc(crc32c(&all)));
}

#[test]
fn types_are_frozen() {
    assert_eq!(RecordType::Full as u8, 1);
    assert_eq!(RecordType::First as u8, 2);
    assert_eq!(RecordType::Middle as u8, 3);
    assert_eq!(RecordType::Last as u8, 4);
    for t in 1..=4u8 {
        assert_eq!(RecordType::from_u8(t).map(|r| r as u8), Some(t));
    }
    assert_eq!(RecordType::from_u8(0), None);
    assert_eq!(RecordType::from_u8(5), None);
    assert_eq!(RecordType::from_u8(PREDECESSOR_WAL_TYPE), None);
    assert_eq!(METADATA_BIT, 0x80);
    assert_eq!(PREDECESSOR_WAL_TYPE, 130);
    assert_eq!(RECYCLED_WAL_TYPE, 131);
}

#[test]
fn predecessor_record_bytes() {
    let p = PredecessorWal {
        log_number: 7,
        size: 0x0102,
        last_sequence: 9,
    };
    let b = p.encode();
    assert_eq!(&b[..8], &[7, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[8..16], &[2, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[16..], &[9, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(PredecessorWal::decode(&b), Some(p));
    assert_eq!(PredecessorWal::decode(&b[..23]), None);
    assert_eq!(PredecessorWal::decode(&[0; 25]), None);
    assert_eq!(BLOCK_SIZE, 32768);
    assert_eq!(HEADER_LEN, 7);
}
