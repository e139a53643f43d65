use super::*;

#[test]
fn set_cf_options_is_the_inverse_of_cf_options() {
    let cf = CfOptions {
        write_buffer_size: 3 << 20,
        max_write_buffer_number: 5,
        block_size: 16 << 10,
        block_size_deviation: 0,
        bloom_bits_per_key: 7,
        compression_per_level: vec![Compression::Zstd],
        bottommost_compression: Some(Compression::Lz4),
        level0_file_num_compaction_trigger: 9,
        disable_auto_compactions: true,
        max_bytes_for_level_base: 7 << 20,
        target_file_size_base: 1 << 20,
        default_ttl_secs: 60,
        merge_operator: Some(Arc::new(crate::UInt64AddOperator)),
        compaction_style: CompactionStyle::Universal,
        compaction_options_universal: UniversalCompactionOptions {
            size_ratio: 10,
            ..Default::default()
        },
        compaction_options_fifo: FifoCompactionOptions {
            ttl_secs: 5,
            ..Default::default()
        },
        ..CfOptions::default()
    };
    let mut o = Options::default();
    o.set_cf_options(cf.clone());
    assert_eq!(o.cf_options(), cf);
}

#[test]
fn validation() {
    assert!(Options::default().validate().is_ok());
    let o = Options {
        write_buffer_size: 0,
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    let o = Options {
        max_bytes_for_level_multiplier: 1.5,
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    let o = Options {
        soft_pending_compaction_bytes_limit: 10,
        hard_pending_compaction_bytes_limit: 5,
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    let o = Options {
        delayed_write_rate: 0,
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    for (n, ok) in [(-2, false), (-1, true), (0, false), (19, false), (20, true)] {
        let o = Options {
            max_open_files: n,
            ..Options::default()
        };
        assert_eq!(o.validate().is_ok(), ok, "max_open_files {n}");
    }
    assert!(Compression::parse("snappy").is_err());
    assert_eq!(Compression::parse("ZSTD").unwrap(), Compression::Zstd);
    let o = Options {
        column_families: vec![(
            "users".into(),
            CfOptions {
                block_size: 0,
                ..CfOptions::default()
            },
        )],
        ..Options::default()
    };
    match o.validate() {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("\"users\"") && m.contains("block_size"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let o = Options {
        column_families: vec![("default".into(), CfOptions::default())],
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
}
