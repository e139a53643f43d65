use super::*;

#[test]
fn text_round_trips_and_rejects_bad_input() {
    let o = CfOptions {
        write_buffer_size: 12345,
        compression_per_level: vec![Compression::None, Compression::Lz4],
        bottommost_compression: Some(Compression::Zstd),
        max_bytes_for_level_multiplier: 8.5,
        level_compaction_dynamic_level_bytes: false,
        bloom_bits_per_key_per_level: vec![12.5, 9.0, 4.25],
        prefix_extractor: Some(PrefixExtractor::Capped(5)),
        whole_key_filtering: false,
        memtable_whole_key_filtering: true,
        sst_partitioner_factory: Some(SstPartitioner::FixedPrefix(6)),
        detect_insert_streams: Some(false),
        block_size_deviation: 37,
        ..CfOptions::default()
    };
    assert_eq!(CfOptions::from_text(&o.to_text()).unwrap(), o);
    assert!(o
        .to_text()
        .contains("sst_partitioner_factory={id=SstPartitionerFixedPrefixFactory;length=6;}\n"));
    // Unset: no line, and the default (None) comes back.
    let d = CfOptions::default();
    assert!(!d.to_text().contains("sst_partitioner") && !d.to_text().contains("detect_insert"));
    assert_eq!(CfOptions::from_text(&d.to_text()).unwrap(), d);
    let fixed = CfOptions {
        prefix_extractor: Some(PrefixExtractor::Fixed(8)),
        ..CfOptions::default()
    };
    assert!(fixed
        .to_text()
        .contains("prefix_extractor=rocksdb.FixedPrefix.8\n"));
    assert_eq!(CfOptions::from_text(&fixed.to_text()).unwrap(), fixed);
    assert_eq!(CfOptions::from_text("").unwrap(), CfOptions::default());
    for bad in [
        "nope=1",
        "write_buffer_size=x",
        "write_buffer_size",
        "write_buffer_size=10",
        "compression_per_level=Snappy",
        "prefix_extractor=rocksdb.FixedPrefix.0",
        "prefix_extractor=rocksdb.Whatever.3",
        "whole_key_filtering=yes",
        "bloom_bits_per_key_per_level=10:x",
        "bloom_bits_per_key_per_level=101",
        "bloom_bits_per_key_per_level=-1",
        "block_size_deviation=101",
        "block_size_deviation=-1",
    ] {
        assert!(
            matches!(CfOptions::from_text(bad), Err(Error::InvalidArgument(_))),
            "{bad}"
        );
    }
}

#[test]
fn compaction_style_text_round_trips_and_is_validated() {
    let text_lines = |style, u: &UniversalCompactionOptions, f: &FifoCompactionOptions| {
        CfOptions {
            compaction_style: style,
            compaction_options_universal: u.clone(),
            compaction_options_fifo: f.clone(),
            ..CfOptions::default()
        }
        .style_lines()
    };
    use super::super::{FifoCompactionOptions, UniversalCompactionOptions, UniversalStopStyle};
    // A leveled family with default style options writes no style line.
    assert!(!CfOptions::default().to_text().contains("compaction_style"));
    assert!(!CfOptions::default()
        .to_text()
        .contains("compaction_options"));
    let u = UniversalCompactionOptions {
        size_ratio: 10,
        min_merge_width: 3,
        max_merge_width: 9,
        max_size_amplification_percent: 150,
        compression_size_percent: 40,
        stop_style: UniversalStopStyle::SimilarSize,
        allow_trivial_move: true,
        incremental: true,
    };
    let f = FifoCompactionOptions {
        max_table_files_size: 12345,
        allow_compaction: true,
        ttl_secs: 60,
    };
    let lines = text_lines(CompactionStyle::Universal, &u, &f);
    assert_eq!(lines.len(), 1 + 8 + 3, "{lines:?}");
    let text: String = lines.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    // Every universal option (incremental too) round-trips.
    let universal = CfOptions::from_text(&text).unwrap();
    assert_eq!(universal.compaction_style, CompactionStyle::Universal);
    assert_eq!(universal.compaction_options_universal, u);
    assert_eq!(
        CfOptions::from_text(&universal.to_text()).unwrap(),
        universal
    );
    // Incremental needs a level between L0 and the last one.
    universal.validate_levels(3, false).unwrap();
    match universal.validate_levels(2, false) {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains("incremental") && m.contains("num_levels"), "{m}")
        }
        other => panic!("{other:?}"),
    }
    let whole = CfOptions {
        compaction_options_universal: UniversalCompactionOptions {
            incremental: false,
            ..u.clone()
        },
        ..universal.clone()
    };
    whole.validate_levels(2, false).unwrap();
    let leveled: String = lines
        .iter()
        .filter(|(k, _)| k != "compaction_style")
        .map(|(k, v)| format!("{k}={v}\n"))
        .collect();
    let o = CfOptions::from_text(&leveled).unwrap();
    assert_eq!(o.compaction_options_universal, u);
    assert_eq!(o.compaction_options_fifo, f);
    assert_eq!(CfOptions::from_text(&o.to_text()).unwrap(), o);
    for bad in [
        "compaction_style=kCompactionStyleNone",
        "compaction_options_universal.min_merge_width=1",
        "compaction_options_universal.max_merge_width=1",
        "compaction_options_universal.compression_size_percent=101",
        "compaction_options_universal.stop_style=kWhatever",
        "compaction_options_fifo.max_table_files_size=0",
        "compaction_options_fifo.ttl=-1",
    ] {
        assert!(
            matches!(CfOptions::from_text(bad), Err(Error::InvalidArgument(_))),
            "{bad}"
        );
    }
    for style in [
        CompactionStyle::Level,
        CompactionStyle::Universal,
        CompactionStyle::Fifo,
    ] {
        let o = CfOptions {
            compaction_style: style,
            ..CfOptions::default()
        };
        assert!(o.validate().is_ok(), "{style:?}");
        assert_eq!(CompactionStyle::parse(style.name()).unwrap(), style);
    }
    // FIFO runs.
    let fifo = CfOptions {
        compaction_style: CompactionStyle::Fifo,
        compaction_options_fifo: f.clone(),
        ..CfOptions::default()
    };
    fifo.validate().unwrap();
    assert_eq!(CfOptions::from_text(&fifo.to_text()).unwrap(), fifo);
}

#[test]
fn per_level_helpers() {
    let o = CfOptions {
        compression_per_level: vec![Compression::None, Compression::Lz4],
        bottommost_compression: Some(Compression::Zstd),
        target_file_size_multiplier: 2,
        ..CfOptions::default()
    };
    assert_eq!(o.compression_for_level(0, false), Compression::None);
    assert_eq!(o.compression_for_level(5, false), Compression::Lz4);
    assert_eq!(o.compression_for_level(5, true), Compression::Zstd);
    assert_eq!(o.target_file_size(1), 64 << 20);
    assert_eq!(o.target_file_size(3), 256 << 20);
    assert_eq!(o.max_compaction_bytes(), 25 * (64 << 20));
    assert_eq!(o.bloom_bits_for_level(3), 10.0);
    let monkey = CfOptions {
        bloom_bits_per_key_per_level: vec![14.0, 12.0, 8.0],
        ..CfOptions::default()
    };
    assert_eq!(monkey.bloom_bits_for_level(0), 14.0);
    assert_eq!(monkey.bloom_bits_for_level(1), 12.0);
    assert_eq!(monkey.bloom_bits_for_level(6), 8.0);
}
