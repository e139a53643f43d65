use super::*;

fn sample() -> TableProperties {
    TableProperties {
        num_entries: 100_000,
        num_deletions: 17,
        num_range_deletions: 4,
        expiry_entries: 3,
        expiry_max: 1_800_000_000,
        raw_key_size: 1 << 40,
        raw_value_size: 3,
        num_data_blocks: 55,
        data_size: 4_000_000,
        index_size: 900,
        filter_size: 0,
        smallest_seqno: 1,
        largest_seqno: (1 << 56) - 1,
        compression_name: "ZSTD".into(),
        creation_time: 1_700_000_000,
        file_number: 42,
        format_version: 1,
        unique_id: "0123456789abcdef0123456789abcdef".into(),
        db_id: "db-1".into(),
        prefix_extractor: "rocksdb.FixedPrefix.8".into(),
        column_family: Some((7, "users".into())),
        external_version: 1,
        external_global_seqno: 5,
    }
}

fn block(bytes: &[u8]) -> Arc<Block> {
    Arc::new(Block::new(bytes.to_vec(), Arc::from("p.sst"), 10).unwrap())
}

#[test]
fn roundtrip_and_names_sorted() {
    let mut b = BlockBuilder::new(1);
    let bytes = sample().encode(&mut b).to_vec();
    assert_eq!(TableProperties::decode(block(&bytes)).unwrap(), sample());
    // Names are in bytewise order (checked by walking the block).
    let mut it = BlockIterator::new(block(&bytes));
    it.seek_to_first();
    let mut prev: Vec<u8> = Vec::new();
    let mut n = 0;
    while it.valid() {
        assert!(it.key() > prev.as_slice());
        prev = it.key().to_vec();
        it.next();
        n += 1;
    }
    assert_eq!(n, 24);
}

#[test]
fn unknown_names_ignored_bad_numbers_rejected() {
    let mut b = BlockBuilder::new(1);
    b.add(b"shale.num.entries", &[5]);
    b.add(b"zzz.future", b"whatever");
    let p = TableProperties::decode(block(b.finish())).unwrap();
    assert_eq!(p.num_entries, 5);
    b.reset();
    b.add(b"shale.num.entries", &[0x80]);
    assert!(TableProperties::decode(block(b.finish()))
        .unwrap_err()
        .is_corruption());
    b.reset();
    b.add(b"shale.num.entries", &[5, 5]);
    assert!(TableProperties::decode(block(b.finish()))
        .unwrap_err()
        .is_corruption());
}
