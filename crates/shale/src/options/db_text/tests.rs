use super::*;
use crate::events::log_options::InfoLogLevel;
use crate::options::CacheType;
use crate::wal::WalRecoveryMode;

#[test]
fn every_field_is_written_and_read_back() {
    let mut o = Options {
        paranoid_checks: false,
        max_background_jobs: 7,
        max_subcompactions: 3,
        wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
        manual_wal_flush: true,
        wal_mmap_writes: false,
        bytes_per_sync: 11,
        wal_bytes_per_sync: 12,
        recycle_log_file_num: 2,
        wal_ttl_seconds: 20,
        wal_size_limit_mb: 21,
        delayed_write_rate: 13,
        max_total_wal_size: 14,
        max_open_files: 300,
        use_direct_reads: true,
        use_direct_io_for_flush_and_compaction: true,
        max_bgerror_resume_count: 4,
        bgerror_resume_retry_interval: 15,
        compaction_readahead_size: 16,
        info_log_level: InfoLogLevel::Warn,
        max_log_file_size: 17,
        keep_log_file_num: 5,
        allow_ingest_behind: true,
        cache_size: 18,
        cache_type: CacheType::Clock,
        max_auto_readahead_size: 19,
        ..Options::default()
    };
    let lines: Vec<(String, String)> = db_lines(&o).into_iter().chain(table_lines(&o)).collect();
    let mut back = Options::default();
    for (k, v) in &lines {
        set_db_option(&mut back, k, v).unwrap();
    }
    let again: Vec<(String, String)> = db_lines(&back)
        .into_iter()
        .chain(table_lines(&back))
        .collect();
    assert_eq!(lines, again);
    // Every value differs from its default, so each field was really set.
    let defaults: Vec<(String, String)> = db_lines(&Options::default())
        .into_iter()
        .chain(table_lines(&Options::default()))
        .collect();
    for (l, d) in lines.iter().zip(&defaults) {
        assert_ne!(l, d, "{} equals its default in the test", l.0);
    }
    assert!(set_db_option(&mut o, "wal_recovery_mode", "Sometimes").is_err());
    assert!(set_db_option(&mut o, "block_size", "4096").is_err());
    assert!(is_db_option_of_default_family("cache_type"));
    assert!(is_db_option_of_default_family("num_levels"));
    assert!(!is_db_option_of_default_family("block_size"));
    set_db_option(&mut o, "num_levels", "5").unwrap();
    assert_eq!(o.num_levels, 5);
}
