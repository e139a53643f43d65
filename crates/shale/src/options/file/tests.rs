use super::*;
use crate::options::{
    CacheType, CompactionStyle, Compression, InfoLogLevel, PrepopulateBlobCache, SstPartitioner,
    UniversalStopStyle,
};

#[test]
fn renders_every_section_and_value() {
    let o = Options {
        cf: CfOptions {
            write_buffer_size: 12345,
            ..Default::default()
        },
        max_open_files: 300,
        use_direct_io_for_flush_and_compaction: true,
        max_log_file_size: 1 << 20,
        keep_log_file_num: 7,
        bytes_per_sync: 1 << 20,
        recycle_log_file_num: 2,
        info_log_level: crate::options::InfoLogLevel::Warn,
        ..Options::default()
    };
    let s = render(&o, &[]);
    assert!(s.contains("[Version]\nshale_version="), "{s}");
    assert!(s.contains("options_file_version=1\n"), "{s}");
    assert!(
        s.contains(
            "\nmax_open_files=300\nuse_direct_reads=false\nuse_direct_io_for_flush_and_compaction=true\n"
        ),
        "{s}"
    );
    assert!(
        s.contains("\nbytes_per_sync=1048576\nwal_bytes_per_sync=0\nrecycle_log_file_num=2\n"),
        "{s}"
    );
    assert!(
        s.contains("\ninfo_log_level=WARN_LEVEL\nmax_log_file_size=1048576\nkeep_log_file_num=7\n"),
        "{s}"
    );
    assert!(
        s.contains("[CFOptions \"default\"]\nwrite_buffer_size=12345\n"),
        "{s}"
    );
    assert!(s.contains("compression_per_level=NoCompression\n"), "{s}");
    assert!(
        s.contains("[TableOptions/BlockBasedTable \"default\"]\nblock_size=4096\n"),
        "{s}"
    );
}
/// Options with every kind of line set (render only: not validated),
/// by assignments (as the build that rendered `testdata/` could too).
#[allow(clippy::field_reassign_with_default)]
fn golden_configs() -> Vec<Options> {
    let mut v = vec![Options::default()];
    let mut o = Options::default();
    o.write_buffer_size = 12345;
    o.max_open_files = 300;
    o.bytes_per_sync = 1 << 20;
    o.recycle_log_file_num = 2;
    o.num_levels = 5;
    o.cache_size = 7;
    o.cache_type = CacheType::Clock;
    o.info_log_level = InfoLogLevel::Warn;
    o.compression_per_level = vec![Compression::None, Compression::Lz4];
    o.bottommost_compression = Some(Compression::Zstd);
    o.bloom_bits_per_key_per_level = vec![12.5, 9.0];
    o.prefix_extractor = Some(crate::base::PrefixExtractor::Capped(5));
    o.whole_key_filtering = false;
    o.memtable_whole_key_filtering = true;
    o.sst_partitioner_factory = Some(SstPartitioner::FixedPrefix(6));
    o.detect_insert_streams = Some(false);
    o.merge_operator = Some(Arc::new(crate::UInt64AddOperator));
    o.default_ttl_secs = 60;
    o.block_align = true;
    o.compaction_style = CompactionStyle::Universal;
    o.compaction_options_universal.size_ratio = 10;
    o.compaction_options_universal.stop_style = UniversalStopStyle::SimilarSize;
    o.compaction_options_fifo.ttl_secs = 5;
    o.blob.enable_blob_files = true;
    o.blob.min_blob_size = 100;
    o.blob.prepopulate_blob_cache = PrepopulateBlobCache::FlushOnly;
    o.memtable_bloom_size_ratio = 0.1;
    o.block_restart_bytes = 7;
    let mut fam = o.cf.clone();
    fam.write_buffer_size = 999;
    fam.compaction_style = CompactionStyle::Fifo;
    fam.blob.enable_blob_files = false;
    o.column_families = vec![("a".into(), CfOptions::default()), ("b".into(), fam)];
    v.push(o);
    v
}

/// The OPTIONS text and the MANIFEST's options text of options that set
/// every kind of line are byte for byte what the build before
/// `declare_options!` wrote (`testdata/`, rendered by that build).
#[test]
fn renders_as_before_the_declaration() {
    for (i, o) in golden_configs().iter().enumerate() {
        let r = render(o, &o.column_families);
        let r: String = r
            .lines()
            .filter(|l| !l.starts_with("shale_version"))
            .map(|l| format!("{l}\n"))
            .collect();
        let want = [
            include_str!("../testdata/render0.txt"),
            include_str!("../testdata/render1.txt"),
        ][i];
        assert_eq!(r, want, "config {i}");
    }
    let o = &golden_configs()[1];
    assert_eq!(
        o.cf.to_text(),
        include_str!("../testdata/text1_default.txt")
    );
    assert_eq!(
        o.column_families[0].1.to_text(),
        include_str!("../testdata/text1_a.txt")
    );
    assert_eq!(
        o.column_families[1].1.to_text(),
        include_str!("../testdata/text1_b.txt")
    );
}
