// The keyword options of `shale.DB(path, **options)` and
// `db.create_column_family(name, **options)`, each with the engine option
// it sets (`shale::OptionInfo::field`: the Rust field, a group member as
// `group.field`), and the engine options with no keyword, each with the
// reason.
//
// Plain data, no pyo3: `options.rs` applies the keywords (one match arm
// each), and the engine's workspace test `crates/shale/tests/bindings.rs`
// includes this file and fails when an engine option has neither a
// keyword nor an exemption here, or an entry names no engine option; the
// Python test `test_options.py::test_every_keyword_is_applied` fails when
// a keyword listed here has no match arm.

/// Per-family keywords (`CfOptions`): `(keyword, engine field)`.
pub const CF_KEYWORDS: &[(&str, &str)] = &[
    ("write_buffer_size", "write_buffer_size"),
    ("max_write_buffer_number", "max_write_buffer_number"),
    ("memtable_bloom_size_ratio", "memtable_bloom_size_ratio"),
    ("block_size", "block_size"),
    ("block_restart_interval", "block_restart_interval"),
    ("block_restart_bytes", "block_restart_bytes"),
    ("block_align", "block_align"),
    ("block_size_deviation", "block_size_deviation"),
    ("bloom_bits_per_key", "bloom_bits_per_key"),
    (
        "bloom_bits_per_key_per_level",
        "bloom_bits_per_key_per_level",
    ),
    ("whole_key_filtering", "whole_key_filtering"),
    (
        "memtable_whole_key_filtering",
        "memtable_whole_key_filtering",
    ),
    ("prefix_extractor", "prefix_extractor"),
    ("compression", "compression_per_level"),
    ("bottommost_compression", "bottommost_compression"),
    ("disable_auto_compactions", "disable_auto_compactions"),
    (
        "level0_file_num_compaction_trigger",
        "level0_file_num_compaction_trigger",
    ),
    (
        "level0_slowdown_writes_trigger",
        "level0_slowdown_writes_trigger",
    ),
    ("level0_stop_writes_trigger", "level0_stop_writes_trigger"),
    ("max_bytes_for_level_base", "max_bytes_for_level_base"),
    (
        "max_bytes_for_level_multiplier",
        "max_bytes_for_level_multiplier",
    ),
    (
        "level_compaction_dynamic_level_bytes",
        "level_compaction_dynamic_level_bytes",
    ),
    ("target_file_size_base", "target_file_size_base"),
    ("target_file_size_multiplier", "target_file_size_multiplier"),
    ("max_compaction_bytes", "max_compaction_bytes"),
    (
        "level_compaction_dynamic_file_size",
        "level_compaction_dynamic_file_size",
    ),
    (
        "soft_pending_compaction_bytes_limit",
        "soft_pending_compaction_bytes_limit",
    ),
    (
        "hard_pending_compaction_bytes_limit",
        "hard_pending_compaction_bytes_limit",
    ),
    ("merge_operator", "merge_operator"),
    ("default_ttl_secs", "default_ttl_secs"),
    ("compaction_style", "compaction_style"),
    (
        "universal_size_ratio",
        "compaction_options_universal.size_ratio",
    ),
    (
        "universal_min_merge_width",
        "compaction_options_universal.min_merge_width",
    ),
    (
        "universal_max_merge_width",
        "compaction_options_universal.max_merge_width",
    ),
    (
        "universal_max_size_amplification_percent",
        "compaction_options_universal.max_size_amplification_percent",
    ),
    (
        "universal_compression_size_percent",
        "compaction_options_universal.compression_size_percent",
    ),
    (
        "universal_stop_style",
        "compaction_options_universal.stop_style",
    ),
    (
        "universal_allow_trivial_move",
        "compaction_options_universal.allow_trivial_move",
    ),
    (
        "universal_incremental",
        "compaction_options_universal.incremental",
    ),
    (
        "fifo_max_table_files_size",
        "compaction_options_fifo.max_table_files_size",
    ),
    (
        "fifo_allow_compaction",
        "compaction_options_fifo.allow_compaction",
    ),
    ("fifo_ttl", "compaction_options_fifo.ttl_secs"),
    ("enable_blob_files", "blob.enable_blob_files"),
    ("min_blob_size", "blob.min_blob_size"),
    ("blob_file_size", "blob.blob_file_size"),
    ("blob_compression_type", "blob.blob_compression_type"),
    (
        "enable_blob_garbage_collection",
        "blob.enable_blob_garbage_collection",
    ),
    (
        "blob_garbage_collection_age_cutoff",
        "blob.blob_garbage_collection_age_cutoff",
    ),
    (
        "blob_garbage_collection_min_garbage_ratio",
        "blob.blob_garbage_collection_min_garbage_ratio",
    ),
    (
        "blob_garbage_collection_force_threshold",
        "blob.blob_garbage_collection_force_threshold",
    ),
    (
        "blob_compaction_readahead_size",
        "blob.blob_compaction_readahead_size",
    ),
    ("blob_file_starting_level", "blob.blob_file_starting_level"),
    ("prepopulate_blob_cache", "blob.prepopulate_blob_cache"),
    ("detect_insert_streams", "detect_insert_streams"),
    (
        "sst_partitioner_fixed_prefix_len",
        "sst_partitioner_factory",
    ),
];

/// DB-wide keywords (`Options` without `cf`): `(keyword, engine field)`.
pub const DB_KEYWORDS: &[(&str, &str)] = &[
    // The second parameter of `shale.DB()`.
    ("create_if_missing", "create_if_missing"),
    ("error_if_exists", "error_if_exists"),
    ("paranoid_checks", "paranoid_checks"),
    ("wal_recovery_mode", "wal_recovery_mode"),
    ("manual_wal_flush", "manual_wal_flush"),
    ("wal_mmap_writes", "wal_mmap_writes"),
    ("num_levels", "num_levels"),
    ("max_background_jobs", "max_background_jobs"),
    ("max_subcompactions", "max_subcompactions"),
    ("delayed_write_rate", "delayed_write_rate"),
    ("max_bgerror_resume_count", "max_bgerror_resume_count"),
    (
        "bgerror_resume_retry_interval",
        "bgerror_resume_retry_interval",
    ),
    (
        "allow_concurrent_memtable_write",
        "allow_concurrent_memtable_write",
    ),
    ("cache_size", "cache_size"),
    ("cache_type", "cache_type"),
    ("cache_numshardbits", "cache_numshardbits"),
    ("cache_high_pri_pool_ratio", "cache_high_pri_pool_ratio"),
    ("cache_low_pri_pool_ratio", "cache_low_pri_pool_ratio"),
    ("cache_strict_capacity_limit", "cache_strict_capacity_limit"),
    (
        "cache_index_and_filter_blocks",
        "cache_index_and_filter_blocks",
    ),
    ("max_open_files", "max_open_files"),
    ("db_write_buffer_size", "db_write_buffer_size"),
    ("memory_budget", "memory_budget"),
    ("max_total_wal_size", "max_total_wal_size"),
    (
        "create_missing_column_families",
        "create_missing_column_families",
    ),
    ("use_direct_reads", "use_direct_reads"),
    (
        "use_direct_io_for_flush_and_compaction",
        "use_direct_io_for_flush_and_compaction",
    ),
    ("advise_random_on_open", "advise_random_on_open"),
    ("compaction_readahead_size", "compaction_readahead_size"),
    ("max_auto_readahead_size", "max_auto_readahead_size"),
    ("bytes_per_sync", "bytes_per_sync"),
    ("wal_bytes_per_sync", "wal_bytes_per_sync"),
    ("recycle_log_file_num", "recycle_log_file_num"),
    ("wal_ttl_seconds", "wal_ttl_seconds"),
    ("wal_size_limit_mb", "wal_size_limit_mb"),
    // A limiter of the DB's own at this rate.
    ("rate_limiter_bytes_per_sec", "rate_limiter"),
    ("info_log_level", "info_log_level"),
    ("max_log_file_size", "max_log_file_size"),
    ("keep_log_file_num", "keep_log_file_num"),
    ("allow_ingest_behind", "allow_ingest_behind"),
];

/// Engine options without a keyword: `(engine field, reason)`.
pub const WITHOUT_KEYWORD: &[(&str, &str)] = &[
    (
        "compaction_filter",
        "code: the binding has no Python compaction filter (a callback per key would hold the GIL in compactions)",
    ),
    (
        "column_families",
        "families are opened with create_column_family() / column_family(), which take their own keywords",
    ),
    ("fs", "the binding always uses the POSIX file system"),
    ("clock", "the binding always uses the system clock"),
    (
        "listeners",
        "the binding has no Python event listeners (db.stats() and properties report instead)",
    ),
];
