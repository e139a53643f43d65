use super::*;

#[test]
fn validation() {
    assert!(Options::default().validate().is_ok());
    let o = Options {
        cf: crate::CfOptions {
            write_buffer_size: 0,
            ..Default::default()
        },
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    let o = Options {
        cf: crate::CfOptions {
            max_bytes_for_level_multiplier: 1.5,
            ..Default::default()
        },
        ..Options::default()
    };
    assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    let o = Options {
        cf: crate::CfOptions {
            soft_pending_compaction_bytes_limit: 10,
            hard_pending_compaction_bytes_limit: 5,
            ..Default::default()
        },
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
