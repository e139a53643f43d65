use super::*;

#[test]
fn renders_every_section_and_value() {
    let o = Options {
        write_buffer_size: 12345,
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
