//! The Shale adapter: maps db_bench's option flags onto `shale::Options`
//! (rejecting what Shale cannot honour, naming the flag) and the `Engine`
//! trait onto `shale::Db`. With `--num_column_families=N` the DB is opened
//! with families `default` and `column_family_name_000001..` (created if
//! missing), all with the options of the flags; their `shale::Cf` handles
//! are resolved once at open and indexed by the `cf` argument.
//! `--merge_operator` sets every family's merge operator (Shale's shipped
//! ones, plus db_bench's `put` as [`PutOperator`]).
//! Thread-safe: `shale::Db` and `shale::Cf` are `Send + Sync`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::{Batch, BatchOp, CreateTiming, Engine, EngineIter, IterOpts, Report, WriteOpts};
use crate::error::{bail, Error, Result};
use crate::flags::{Category, Flags};
use crate::merge_operator::MergeOp;

fn non_negative(name: &str, v: i64) -> Result<usize> {
    if v < 0 {
        bail!("--{name}={v} is not supported by --engine=shale (must be >= 0)");
    }
    Ok(v as usize)
}

/// The compression Shale uses for `--compression_type`: LZ4 when the flag
/// is not given (db_bench's default, snappy, is not in Shale; the header's
/// `Compression:` line shows what runs, and `--help` says so), else the
/// flag's, which must be one Shale has.
fn compression(f: &Flags) -> Result<shale::Compression> {
    let t = f.compression_type.to_ascii_lowercase();
    if t == "snappy" && !f.is_explicit("compression_type") {
        return Ok(shale::Compression::Lz4);
    }
    shale::Compression::parse(&t).map_err(|_| {
        Error(format!(
            "--compression_type={t} is not supported by --engine=shale (supported: none, lz4, zstd)"
        ))
    })
}

/// RocksDB's `WALRecoveryMode` numbering (as `--wal_recovery_mode`).
pub fn wal_recovery_mode(v: i64) -> Result<shale::WalRecoveryMode> {
    Ok(match v {
        0 => shale::WalRecoveryMode::TolerateCorruptedTailRecords,
        1 => shale::WalRecoveryMode::AbsoluteConsistency,
        2 => shale::WalRecoveryMode::PointInTime,
        3 => shale::WalRecoveryMode::SkipAnyCorruptedRecords,
        v => bail!("--wal_recovery_mode={v} is not supported (0..=3)"),
    })
}

/// The engine properties `--statistics` prints, all monotonic counters.
pub const STATISTICS_COUNTERS: &[&str] = &[
    "shale.block-cache-hits",
    "shale.block-cache-misses",
    "shale.block-cache-data-hits",
    "shale.block-cache-data-misses",
    "shale.block-cache-index-hits",
    "shale.block-cache-index-misses",
    "shale.block-cache-filter-hits",
    "shale.block-cache-filter-misses",
    "shale.block-cache-bytes-inserted",
    "shale.block-cache-bytes-evicted",
    "shale.block-reads",
    "shale.block-read-bytes",
    "shale.bloom-checks",
    "shale.bloom-useful",
    "shale.bloom-false-positives",
    "shale.prefix-checks",
    "shale.prefix-useful",
    "shale.stall-micros",
    "shale.wal-bytes-written",
    "shale.compaction-bytes-written",
];

/// `--statistics` text: one `<name> COUNT : <n>` line per counter (as
/// RocksDB prints tickers); a property the engine does not answer is
/// skipped.
pub fn statistics_text(property: impl Fn(&str) -> Option<String>) -> String {
    let mut s = String::new();
    for name in STATISTICS_COUNTERS {
        if let Some(v) = property(name) {
            s.push_str(&format!("{name} COUNT : {}\n", v.trim()));
        }
    }
    s
}

/// db_bench's blob flags as Shale's `BlobOptions` (same names and
/// meanings). Blobs always share the block cache at bottom priority, so a
/// blob cache of its own (`--use_shared_block_and_blob_cache=0`) is
/// refused; `--use_blob_cache=0` is warned about (`super::warnings`).
fn blob_options(f: &Flags) -> Result<shale::BlobOptions> {
    if f.use_blob_cache && !f.use_shared_block_and_blob_cache {
        bail!(
            "--use_blob_cache=1 --use_shared_block_and_blob_cache=0 is not supported by --engine=shale: \
             blobs always share the block cache (at bottom priority); use \
             --use_shared_block_and_blob_cache=1 and size --cache_size for both"
        );
    }
    let t = f.blob_compression_type.to_ascii_lowercase();
    let blob_compression_type = shale::Compression::parse(&t).map_err(|_| {
        Error(format!(
            "--blob_compression_type={t} is not supported by --engine=shale (supported: none, lz4, zstd)"
        ))
    })?;
    Ok(shale::BlobOptions {
        enable_blob_files: f.enable_blob_files,
        min_blob_size: non_negative("min_blob_size", f.min_blob_size)? as u64,
        blob_file_size: non_negative("blob_file_size", f.blob_file_size)? as u64,
        blob_compression_type,
        enable_blob_garbage_collection: f.enable_blob_garbage_collection,
        blob_garbage_collection_age_cutoff: f.blob_garbage_collection_age_cutoff,
        blob_garbage_collection_min_garbage_ratio: f.blob_garbage_collection_min_garbage_ratio,
        blob_garbage_collection_force_threshold: f.blob_garbage_collection_force_threshold,
        blob_compaction_readahead_size: non_negative(
            "blob_compaction_readahead_size",
            f.blob_compaction_readahead_size,
        )? as u64,
        blob_file_starting_level: non_negative(
            "blob_file_starting_level",
            f.blob_file_starting_level,
        )?,
        prepopulate_blob_cache: if f.prepopulate_blob_cache == 1 {
            shale::PrepopulateBlobCache::FlushOnly
        } else {
            shale::PrepopulateBlobCache::Disable
        },
    })
}

/// db_bench's `put` merge operator (RocksDB's `PutOperatorV2`): a key
/// reads as its newest operand, whatever lies below. Shale does not ship
/// it; its name is not one Shale rebuilds at open, so every open passes it
/// again (`options_from_flags` does).
#[derive(Debug, Clone, Copy, Default)]
pub struct PutOperator;

impl shale::MergeOperator for PutOperator {
    fn name(&self) -> &str {
        "put"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> shale::Result<Vec<u8>> {
        Ok(MergeOp::Put.merge(existing, operands.iter().copied()))
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.last().map(|o| o.to_vec())
    }
}

/// The Shale operator for `--merge_operator` (Shale's own uint64add, max
/// and stringappend with db_bench's `,`; [`PutOperator`] for put). Shale's
/// uint64add fails reads of operands that are not 8 bytes (RocksDB's counts
/// them as 0), and the merge benchmarks write `--value_size`-byte operands
/// as db_bench does: uint64add with another `--value_size` is refused.
fn merge_operator(f: &Flags) -> Result<Option<Arc<dyn shale::MergeOperator>>> {
    let Some(op) = f.merge_op()? else {
        return Ok(None);
    };
    Ok(Some(match op {
        MergeOp::Put => Arc::new(PutOperator),
        MergeOp::UInt64Add => {
            if f.value_size != 8 {
                bail!(
                    "--merge_operator=uint64add needs --value_size=8 with --engine=shale (got {}): merge \
                     operands are --value_size bytes, as in db_bench, and Shale's uint64add fails reads of \
                     operands that are not 8-byte integers (RocksDB's logs them and counts 0)",
                    f.value_size
                );
            }
            Arc::new(shale::UInt64AddOperator)
        }
        MergeOp::Max => Arc::new(shale::MaxOperator),
        MergeOp::StringAppend => Arc::new(shale::StringAppendOperator::new(&[
            crate::merge_operator::STRING_APPEND_DELIMITER,
        ])),
    }))
}

/// db_bench's `--compaction_style`, `--universal_*` and `--fifo_compaction_*`
/// flags as Shale's style and its options (0 = the engine's default, as
/// db_bench passes them). A style's flags without that style are refused:
/// they would be ignored.
fn compaction_style(
    f: &Flags,
) -> Result<(
    shale::CompactionStyle,
    shale::UniversalCompactionOptions,
    shale::FifoCompactionOptions,
)> {
    let universal_flags = [
        "universal_size_ratio",
        "universal_min_merge_width",
        "universal_max_merge_width",
        "universal_max_size_amplification_percent",
        "universal_compression_size_percent",
        "universal_allow_trivial_move",
        "universal_incremental",
    ];
    let fifo_flags = [
        "fifo_compaction_max_table_files_size_mb",
        "fifo_compaction_allow_compaction",
        "fifo_compaction_ttl",
    ];
    let (style, needs) = match f.compaction_style {
        0 => (shale::CompactionStyle::Level, None),
        1 => (shale::CompactionStyle::Universal, Some(1)),
        2 => (shale::CompactionStyle::Fifo, Some(2)),
        v => bail!("invalid value {v} for --compaction_style (0 level, 1 universal, 2 FIFO)"),
    };
    for (flags, wanted) in [(&universal_flags[..], 1), (&fifo_flags[..], 2)] {
        if needs != Some(wanted) {
            if let Some(n) = flags.iter().find(|n| !f.has_default(n)) {
                bail!("--{n} needs --compaction_style={wanted} with --engine=shale");
            }
        }
    }
    let mut u = shale::UniversalCompactionOptions::default();
    let set = |name: &str, v: i64, field: &mut u32| -> Result<()> {
        if v != 0 {
            *field = u32::try_from(v)
                .map_err(|_| Error(format!("--{name}={v} is out of range for --engine=shale")))?;
        }
        Ok(())
    };
    set(
        "universal_size_ratio",
        f.universal_size_ratio,
        &mut u.size_ratio,
    )?;
    set(
        "universal_min_merge_width",
        f.universal_min_merge_width,
        &mut u.min_merge_width,
    )?;
    set(
        "universal_max_merge_width",
        f.universal_max_merge_width,
        &mut u.max_merge_width,
    )?;
    set(
        "universal_max_size_amplification_percent",
        f.universal_max_size_amplification_percent,
        &mut u.max_size_amplification_percent,
    )?;
    u.compression_size_percent = i32::try_from(f.universal_compression_size_percent)
        .map_err(|_| Error("--universal_compression_size_percent is out of range".into()))?;
    u.allow_trivial_move = f.universal_allow_trivial_move;
    u.incremental = f.universal_incremental;
    let mut fifo = shale::FifoCompactionOptions::default();
    if style == shale::CompactionStyle::Fifo {
        let mb = f.fifo_compaction_max_table_files_size_mb;
        if mb <= 0 {
            bail!(
                "--compaction_style=2 needs --fifo_compaction_max_table_files_size_mb > 0 \
                 with --engine=shale (db_bench's 0 would drop every table)"
            );
        }
        fifo = shale::FifoCompactionOptions {
            max_table_files_size: (mb as u64).saturating_mul(1 << 20),
            allow_compaction: f.fifo_compaction_allow_compaction,
            ttl_secs: non_negative("fifo_compaction_ttl", f.fifo_compaction_ttl)? as u64,
        };
    }
    Ok((style, u, fifo))
}

/// The engine option each db_bench flag sets in [`options_from_flags`]:
/// `(shale::OptionInfo::field, flag)`, one row per option (the flag that
/// decides it; a few also read others, named in `options_from_flags`).
/// A test checks this table against the engine's option declaration
/// (`CfOptions::option_infos`, `Options::db_option_infos`) both ways, with
/// [`OPTIONS_WITHOUT_FLAG`]: keep the three in step with the mapping.
pub const OPTION_FLAGS: &[(&str, &str)] = &[
    ("write_buffer_size", "write_buffer_size"),
    ("max_write_buffer_number", "max_write_buffer_number"),
    ("memtable_bloom_size_ratio", "memtable_bloom_size_ratio"),
    ("block_size", "block_size"),
    ("block_restart_interval", "block_restart_interval"),
    ("block_restart_bytes", "block_restart_bytes"),
    ("block_align", "block_align"),
    ("block_size_deviation", "block_size_deviation"),
    ("bloom_bits_per_key", "bloom_bits"),
    ("bloom_bits_per_key_per_level", "bloom_bits_per_level"),
    ("prefix_extractor", "prefix_size"),
    (
        "memtable_whole_key_filtering",
        "memtable_whole_key_filtering",
    ),
    ("compression_per_level", "compression_type"),
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
    ("compaction_style", "compaction_style"),
    (
        "compaction_options_universal.size_ratio",
        "universal_size_ratio",
    ),
    (
        "compaction_options_universal.min_merge_width",
        "universal_min_merge_width",
    ),
    (
        "compaction_options_universal.max_merge_width",
        "universal_max_merge_width",
    ),
    (
        "compaction_options_universal.max_size_amplification_percent",
        "universal_max_size_amplification_percent",
    ),
    (
        "compaction_options_universal.compression_size_percent",
        "universal_compression_size_percent",
    ),
    (
        "compaction_options_universal.allow_trivial_move",
        "universal_allow_trivial_move",
    ),
    (
        "compaction_options_universal.incremental",
        "universal_incremental",
    ),
    (
        "compaction_options_fifo.max_table_files_size",
        "fifo_compaction_max_table_files_size_mb",
    ),
    (
        "compaction_options_fifo.allow_compaction",
        "fifo_compaction_allow_compaction",
    ),
    ("compaction_options_fifo.ttl_secs", "fifo_compaction_ttl"),
    ("blob.enable_blob_files", "enable_blob_files"),
    ("blob.min_blob_size", "min_blob_size"),
    ("blob.blob_file_size", "blob_file_size"),
    ("blob.blob_compression_type", "blob_compression_type"),
    (
        "blob.enable_blob_garbage_collection",
        "enable_blob_garbage_collection",
    ),
    (
        "blob.blob_garbage_collection_age_cutoff",
        "blob_garbage_collection_age_cutoff",
    ),
    (
        "blob.blob_garbage_collection_min_garbage_ratio",
        "blob_garbage_collection_min_garbage_ratio",
    ),
    (
        "blob.blob_garbage_collection_force_threshold",
        "blob_garbage_collection_force_threshold",
    ),
    (
        "blob.blob_compaction_readahead_size",
        "blob_compaction_readahead_size",
    ),
    ("blob.blob_file_starting_level", "blob_file_starting_level"),
    ("blob.prepopulate_blob_cache", "prepopulate_blob_cache"),
    ("detect_insert_streams", "detect_insert_streams"),
    (
        "sst_partitioner_factory",
        "sst_partitioner_fixed_prefix_len",
    ),
    ("paranoid_checks", "paranoid_checks"),
    ("wal_recovery_mode", "wal_recovery_mode"),
    ("manual_wal_flush", "manual_wal_flush"),
    ("wal_mmap_writes", "wal_mmap_writes"),
    ("bytes_per_sync", "bytes_per_sync"),
    ("wal_bytes_per_sync", "wal_bytes_per_sync"),
    ("recycle_log_file_num", "recycle_log_file_num"),
    ("wal_ttl_seconds", "wal_ttl_seconds"),
    ("wal_size_limit_mb", "wal_size_limit_MB"),
    (
        "allow_concurrent_memtable_write",
        "allow_concurrent_memtable_write",
    ),
    ("num_levels", "num_levels"),
    ("max_background_jobs", "max_background_jobs"),
    ("max_subcompactions", "subcompactions"),
    ("delayed_write_rate", "delayed_write_rate"),
    ("cache_size", "cache_size"),
    ("cache_type", "cache_type"),
    ("cache_numshardbits", "cache_numshardbits"),
    (
        "cache_index_and_filter_blocks",
        "cache_index_and_filter_blocks",
    ),
    ("rate_limiter", "rate_limiter_bytes_per_sec"),
    ("max_open_files", "open_files"),
    ("compaction_readahead_size", "compaction_readahead_size"),
    ("max_auto_readahead_size", "max_auto_readahead_size"),
    ("advise_random_on_open", "advise_random_on_open"),
    ("use_direct_reads", "use_direct_reads"),
    (
        "use_direct_io_for_flush_and_compaction",
        "use_direct_io_for_flush_and_compaction",
    ),
    ("db_write_buffer_size", "db_write_buffer_size"),
    ("memory_budget", "memory_budget"),
    ("create_missing_column_families", "num_column_families"),
    ("column_families", "num_column_families"),
];

/// Engine options no flag sets (they keep the engine's default), each with
/// the reason.
pub const OPTIONS_WITHOUT_FLAG: &[(&str, &str)] = &[
    (
        "create_if_missing",
        "always true: a run creates its DB unless --use_existing_db finds one",
    ),
    (
        "error_if_exists",
        "a run reuses or destroys its DB (--use_existing_db, --db)",
    ),
    (
        "bottommost_compression",
        "db_bench's --bottommost_compression is not in this tool",
    ),
    ("whole_key_filtering", "db_bench has no flag for it"),
    (
        "default_ttl_secs",
        "db_bench has no TTL flag (RocksDB's TTL is DBWithTTL's)",
    ),
    (
        "compaction_filter",
        "code; db_bench's filter flags are not in this tool",
    ),
    (
        "compaction_options_universal.stop_style",
        "db_bench has no flag for it",
    ),
    (
        "max_bgerror_resume_count",
        "background errors are failures in a benchmark",
    ),
    (
        "bgerror_resume_retry_interval",
        "background errors are failures in a benchmark",
    ),
    (
        "cache_high_pri_pool_ratio",
        "db_bench's --cache_high_pri_pool_ratio is not in this tool",
    ),
    (
        "cache_low_pri_pool_ratio",
        "db_bench's --cache_low_pri_pool_ratio is not in this tool",
    ),
    (
        "cache_strict_capacity_limit",
        "db_bench has no flag for it in this tool",
    ),
    (
        "max_total_wal_size",
        "db_bench's --max_total_wal_size is not in this tool",
    ),
    ("fs", "benchmarks run on the POSIX file system"),
    ("clock", "benchmarks run on the system clock"),
    (
        "listeners",
        "the tool reads properties and stats instead of events",
    ),
    ("info_log_level", "the LOG keeps the engine's defaults"),
    ("max_log_file_size", "the LOG keeps the engine's defaults"),
    ("keep_log_file_num", "the LOG keeps the engine's defaults"),
    (
        "allow_ingest_behind",
        "db_bench has no ingest-behind benchmark; reserving the last level only changes the shape",
    ),
];

/// Builds `shale::Options` from the flags, or says which flag Shale cannot
/// honour.
pub fn options_from_flags(f: &Flags) -> Result<shale::Options> {
    f.reject_category(Category::Rocks, "shale")?;
    let comp = compression(f)?;
    let compression_per_level = if f.min_level_to_compress >= 0 {
        let k = f.min_level_to_compress as usize;
        let mut v = vec![shale::Compression::None; k];
        v.push(comp);
        v
    } else {
        vec![comp]
    };
    if !f.verify_checksum {
        bail!(
            "--verify_checksum=0 is not supported by --engine=shale (every block read is verified)"
        );
    }
    if f.sync && f.disable_wal {
        bail!("--sync=1 with --disable_wal=1 is rejected by --engine=shale, as by RocksDB (nothing to sync)");
    }
    let cache_type = match f.cache_type.as_str() {
        "lru_cache" => shale::CacheType::Lru,
        "hyper_clock_cache" | "auto_hyper_clock_cache" | "fixed_hyper_clock_cache" => {
            shale::CacheType::Clock
        }
        other => {
            bail!("--cache_type={other} is not supported by --engine=shale (supported: lru_cache, hyper_clock_cache)")
        }
    };
    // db_bench: --prefix_size > 0 sets NewFixedPrefixTransform(prefix_size).
    let prefix_extractor =
        (f.prefix_size > 0).then_some(shale::PrefixExtractor::Fixed(f.prefix_size as usize));
    if f.memtable_bloom_size_ratio > 0.0
        && !f.memtable_whole_key_filtering
        && prefix_extractor.is_none()
    {
        bail!(
            "--memtable_bloom_size_ratio={} without --memtable_whole_key_filtering=1 or --prefix_size > 0 \
             is not supported by --engine=shale (without a prefix extractor its memtable bloom is whole-key)",
            f.memtable_bloom_size_ratio
        );
    }
    if f.prefix_same_as_start && prefix_extractor.is_none() {
        bail!("--prefix_same_as_start=1 needs --prefix_size > 0 (a prefix extractor)");
    }
    // Fractional bits per key: the same density on every level.
    let (bloom_bits_per_key, bloom_bits_per_key_per_level) = if f.bloom_bits <= 0.0 {
        (0, Vec::new())
    } else if f.bloom_bits.fract() != 0.0 {
        if f.bloom_bits > 100.0 {
            bail!(
                "--bloom_bits={} > 100 is not supported by --engine=shale",
                f.bloom_bits
            );
        }
        (f.bloom_bits.ceil() as u32, vec![f.bloom_bits])
    } else {
        (f.bloom_bits as u32, Vec::new())
    };
    let bloom_bits_per_key_per_level = if f.bloom_bits_per_level.is_empty() {
        bloom_bits_per_key_per_level
    } else {
        f.bloom_bits_per_level
            .split(',')
            .map(|x| {
                x.trim()
                    .parse::<f64>()
                    .map_err(|_| Error(format!("--bloom_bits_per_level: bad number {x:?}")))
            })
            .collect::<Result<Vec<f64>>>()?
    };
    let opts = shale::Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: non_negative("write_buffer_size", f.write_buffer_size)?,
            max_write_buffer_number: non_negative(
                "max_write_buffer_number",
                f.max_write_buffer_number,
            )?,
            memtable_bloom_size_ratio: f.memtable_bloom_size_ratio,
            block_size: non_negative("block_size", f.block_size)?,
            block_restart_interval: non_negative(
                "block_restart_interval",
                f.block_restart_interval,
            )?,
            block_restart_bytes: non_negative("block_restart_bytes", f.block_restart_bytes)?,
            block_align: f.block_align,
            block_size_deviation: u32::try_from(f.block_size_deviation).map_err(|_| {
                Error(format!(
                    "--block_size_deviation={} is not supported by --engine=shale (0..=100)",
                    f.block_size_deviation
                ))
            })?,
            bloom_bits_per_key,
            bloom_bits_per_key_per_level,
            prefix_extractor,
            memtable_whole_key_filtering: f.memtable_whole_key_filtering,
            compression_per_level,
            disable_auto_compactions: f.disable_auto_compactions,
            level0_file_num_compaction_trigger: non_negative(
                "level0_file_num_compaction_trigger",
                f.level0_file_num_compaction_trigger,
            )?,
            level0_slowdown_writes_trigger: non_negative(
                "level0_slowdown_writes_trigger",
                f.level0_slowdown_writes_trigger,
            )?,
            level0_stop_writes_trigger: non_negative(
                "level0_stop_writes_trigger",
                f.level0_stop_writes_trigger,
            )?,
            max_bytes_for_level_base: non_negative(
                "max_bytes_for_level_base",
                f.max_bytes_for_level_base,
            )? as u64,
            max_bytes_for_level_multiplier: f.max_bytes_for_level_multiplier,
            level_compaction_dynamic_level_bytes: f.level_compaction_dynamic_level_bytes,
            level_compaction_dynamic_file_size: f.level_compaction_dynamic_file_size,
            target_file_size_base: non_negative("target_file_size_base", f.target_file_size_base)?
                as u64,
            target_file_size_multiplier: non_negative(
                "target_file_size_multiplier",
                f.target_file_size_multiplier,
            )? as u64,
            max_compaction_bytes: non_negative("max_compaction_bytes", f.max_compaction_bytes)?
                as u64,
            soft_pending_compaction_bytes_limit: non_negative(
                "soft_pending_compaction_bytes_limit",
                f.soft_pending_compaction_bytes_limit,
            )? as u64,
            hard_pending_compaction_bytes_limit: non_negative(
                "hard_pending_compaction_bytes_limit",
                f.hard_pending_compaction_bytes_limit,
            )? as u64,
            merge_operator: merge_operator(f)?,
            blob: blob_options(f)?,
            detect_insert_streams: match f.detect_insert_streams {
                -1 => None,
                0 => Some(false),
                1 => Some(true),
                v => {
                    bail!("invalid value {v} for --detect_insert_streams (-1 default, 0 off, 1 on)")
                }
            },
            sst_partitioner_factory: match non_negative(
                "sst_partitioner_fixed_prefix_len",
                f.sst_partitioner_fixed_prefix_len,
            )? {
                0 => None,
                n => Some(shale::SstPartitioner::FixedPrefix(n)),
            },
            ..Default::default()
        },
        num_levels: non_negative("num_levels", f.num_levels)?,
        max_background_jobs: non_negative("max_background_jobs", f.max_background_jobs)?,
        // 0 means 1, as the rocksdb engine maps it.
        max_subcompactions: non_negative("subcompactions", f.subcompactions)?.max(1),
        cache_size: f.cache_size.max(0) as usize,
        cache_type,
        cache_numshardbits: i32::try_from(f.cache_numshardbits).map_err(|_| {
            Error(format!(
                "--cache_numshardbits={} is out of range",
                f.cache_numshardbits
            ))
        })?,
        cache_index_and_filter_blocks: f.cache_index_and_filter_blocks,
        db_write_buffer_size: non_negative("db_write_buffer_size", f.db_write_buffer_size)?,
        memory_budget: super::memory_budget(f)?,
        advise_random_on_open: f.advise_random_on_open,
        use_direct_reads: f.use_direct_reads,
        use_direct_io_for_flush_and_compaction: f.use_direct_io_for_flush_and_compaction,
        rate_limiter: match super::rate_limiter(f)? {
            // db_bench's NewGenericRateLimiter(rate, 100 ms, fairness 10).
            Some((rate, auto_tuned)) => Some(Arc::new(
                shale::RateLimiter::generic(rate, 100_000, 10, auto_tuned)
                    .map_err(|e| Error(format!("--rate_limiter_bytes_per_sec: {e}")))?,
            )),
            None => None,
        },
        delayed_write_rate: non_negative("delayed_write_rate", f.delayed_write_rate)? as u64,
        compaction_readahead_size: non_negative(
            "compaction_readahead_size",
            f.compaction_readahead_size,
        )?,
        max_auto_readahead_size: non_negative(
            "max_auto_readahead_size",
            f.max_auto_readahead_size,
        )?,
        paranoid_checks: f.paranoid_checks,
        wal_recovery_mode: wal_recovery_mode(f.wal_recovery_mode)?,
        manual_wal_flush: f.manual_wal_flush,
        wal_mmap_writes: f.wal_mmap_writes,
        bytes_per_sync: non_negative("bytes_per_sync", f.bytes_per_sync)? as u64,
        wal_bytes_per_sync: non_negative("wal_bytes_per_sync", f.wal_bytes_per_sync)? as u64,
        recycle_log_file_num: non_negative("recycle_log_file_num", f.recycle_log_file_num)?,
        wal_ttl_seconds: non_negative("wal_ttl_seconds", f.wal_ttl_seconds)? as u64,
        wal_size_limit_mb: non_negative("wal_size_limit_MB", f.wal_size_limit_MB)? as u64,
        allow_concurrent_memtable_write: f.allow_concurrent_memtable_write,
        max_open_files: i32::try_from(f.open_files)
            .map_err(|_| Error(format!("--open_files={} is out of range", f.open_files)))?,
        ..shale::Options::default()
    };
    let mut opts = opts;
    (
        opts.compaction_style,
        opts.compaction_options_universal,
        opts.compaction_options_fifo,
    ) = compaction_style(f)?;
    let families = non_negative("num_column_families", f.num_column_families)?;
    if families > 1 {
        let cf_opts = opts.cf.clone();
        opts.create_missing_column_families = true;
        opts.column_families = super::cf_names(families)
            .into_iter()
            .skip(1)
            .map(|n| (n, cf_opts.clone()))
            .collect();
    }
    opts.validate()
        .map_err(|e| Error(format!("engine options rejected by Shale: {e}")))?;
    Ok(opts)
}

/// See [`super::create_families`]. Batched: one `Db::create_cfs` call.
pub fn create_families(
    f: &Flags,
    path: &Path,
    names: &[String],
    batched: bool,
) -> Result<CreateTiming> {
    let mut opts = options_from_flags(f)?;
    opts.column_families.clear();
    let cf_opts = opts.cf.clone();
    let db = shale::Db::open(path, opts)?;
    let secs = if batched {
        let list: Vec<(&str, shale::CfOptions)> = names
            .iter()
            .map(|n| (n.as_str(), cf_opts.clone()))
            .collect();
        let t = Instant::now();
        db.create_cfs(&list)?;
        t.elapsed().as_secs_f64()
    } else {
        let mut list: Vec<shale::CfOptions> = vec![cf_opts; names.len()];
        let t = Instant::now();
        for (n, o) in names.iter().zip(list.drain(..)) {
            db.create_cf(n, o)?;
        }
        t.elapsed().as_secs_f64()
    };
    db.close()?;
    let how = if batched {
        "one Db::create_cfs call"
    } else {
        "one Db::create_cf call each"
    };
    Ok(CreateTiming { secs, how })
}

/// An open Shale DB and its families' handles (index 0 = `default`).
pub struct ShaleEngine {
    db: shale::Db,
    cfs: Vec<shale::Cf>,
}

impl ShaleEngine {
    /// Opens (creating if missing) the DB at `path` with
    /// `--num_column_families` families.
    pub fn open(f: &Flags, path: &Path) -> Result<ShaleEngine> {
        let opts = options_from_flags(f)?;
        let db = shale::Db::open(path, opts)?;
        let mut cfs = vec![db.default_cf()];
        for name in super::cf_names(f.num_column_families as usize)
            .iter()
            .skip(1)
        {
            match db.cf(name) {
                Some(cf) => cfs.push(cf),
                None => bail!("shale: column family {name} missing after open"),
            }
        }
        Ok(ShaleEngine { db, cfs })
    }
}

/// Removes the Shale DB at `path` with the engine's `destroy_db`: only its
/// own files, refused while another process has it open or when the
/// directory holds no Shale DB (see `super::destroy`).
pub fn destroy(path: &Path) -> Result<()> {
    match shale::destroy_db(path, &shale::Options::default()) {
        Ok(_) => Ok(()),
        Err(shale::Error::Locked(_)) => Err(super::destroy::in_use(path, "Shale")),
        Err(shale::Error::InvalidArgument(_)) => {
            let names = super::destroy::entries(path)?.unwrap_or_default();
            Err(super::destroy::not_a_db(path, "Shale", &names))
        }
        Err(e) => bail!("cannot destroy the Shale DB at {}: {e}", path.display()),
    }
}

fn wo(o: &WriteOpts) -> shale::WriteOptions {
    shale::WriteOptions {
        sync: o.sync,
        disable_wal: o.disable_wal,
    }
}

impl Engine for ShaleEngine {
    fn name(&self) -> &'static str {
        "shale"
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }

    fn num_cfs(&self) -> usize {
        self.cfs.len()
    }

    fn put(&self, cf: usize, key: &[u8], value: &[u8], o: &WriteOpts) -> Result<()> {
        let mut b = shale::WriteBatch::with_capacity(key.len() + value.len() + 28);
        b.put_cf(&self.cfs[cf], key, value);
        Ok(self.db.write(b, &wo(o))?)
    }

    fn write(&self, batch: &Batch, o: &WriteOpts) -> Result<()> {
        let mut b = shale::WriteBatch::new();
        for op in batch.iter() {
            match op {
                BatchOp::Put(cf, k, v) => b.put_cf(&self.cfs[cf], k, v),
                BatchOp::Delete(cf, k) => b.delete_cf(&self.cfs[cf], k),
                BatchOp::DeleteRange(cf, s, e) => b.delete_range_cf(&self.cfs[cf], s, e),
            }
        }
        Ok(self.db.write(b, &wo(o))?)
    }

    fn delete(&self, cf: usize, key: &[u8], o: &WriteOpts) -> Result<()> {
        let mut b = shale::WriteBatch::with_capacity(key.len() + 28);
        b.delete_cf(&self.cfs[cf], key);
        Ok(self.db.write(b, &wo(o))?)
    }

    fn delete_range(&self, cf: usize, start: &[u8], end: &[u8], o: &WriteOpts) -> Result<()> {
        let mut b = shale::WriteBatch::with_capacity(start.len() + end.len() + 28);
        b.delete_range_cf(&self.cfs[cf], start, end);
        Ok(self.db.write(b, &wo(o))?)
    }

    fn merge(&self, cf: usize, key: &[u8], operand: &[u8], o: &WriteOpts) -> Result<()> {
        let mut b = shale::WriteBatch::with_capacity(key.len() + operand.len() + 28);
        b.merge_cf(&self.cfs[cf], key, operand);
        Ok(self.db.write(b, &wo(o))?)
    }

    fn get(
        &self,
        cf: usize,
        key: &[u8],
        out: &mut Vec<u8>,
        verify_checksums: bool,
    ) -> Result<bool> {
        let mut ro = shale::ReadOptions::new();
        ro.verify_checksums = verify_checksums;
        Ok(super::copy_found(
            self.db.get_cf_opt(&self.cfs[cf], key, &ro)?,
            out,
        ))
    }

    fn multi_get(
        &self,
        cf: usize,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<()> {
        for (i, r) in self
            .db
            .multi_get_cf(&self.cfs[cf], keys, &shale::ReadOptions::new())
            .into_iter()
            .enumerate()
        {
            if let Some(v) = r? {
                found(i, &v);
            }
        }
        Ok(())
    }

    fn new_iterator(&self, cf: usize, opts: &IterOpts) -> Result<Box<dyn EngineIter + '_>> {
        let mut ro = shale::ReadOptions::new();
        ro.verify_checksums = opts.verify_checksums;
        ro.readahead_size = opts.readahead_size;
        ro.iterate_lower_bound = opts.lower.clone();
        ro.iterate_upper_bound = opts.upper.clone();
        ro.prefix_same_as_start = opts.prefix_same_as_start;
        ro.total_order_seek = opts.total_order_seek;
        Ok(Box::new(ShaleIter(self.db.iter_cf(&self.cfs[cf], &ro))))
    }

    fn flush(&self) -> Result<()> {
        Ok(self.db.flush()?)
    }

    fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        Ok(self.db.compact_range(start, end)?)
    }

    fn wait_for_compaction(&self) -> Result<()> {
        Ok(self.db.wait_for_compaction()?)
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property(name)
    }

    fn report(&self, which: Report) -> Option<String> {
        self.db.property(match which {
            Report::Stats => "shale.stats",
            Report::LevelStats => "shale.levelstats",
            Report::SsTables => "shale.sstables",
            Report::Bloom => "shale.bloom-per-level",
        })
    }

    fn stall_micros(&self) -> Option<u64> {
        self.db
            .property("shale.stall-micros")
            .and_then(|s| s.trim().parse().ok())
    }

    fn statistics(&self) -> Option<String> {
        Some(statistics_text(|n| self.db.property(n)))
    }

    fn close(&self) -> Result<()> {
        Ok(self.db.clone().close()?)
    }
}

struct ShaleIter(shale::DbIterator);

impl EngineIter for ShaleIter {
    fn seek(&mut self, key: &[u8]) {
        self.0.seek(key)
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        self.0.seek_for_prev(key)
    }
    fn seek_to_first(&mut self) {
        self.0.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.0.seek_to_last()
    }
    fn next(&mut self) {
        self.0.next()
    }
    fn prev(&mut self) {
        self.0.prev()
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key()
    }
    fn value(&self) -> &[u8] {
        self.0.value()
    }
    fn status(&self) -> Result<()> {
        Ok(self.0.status()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_flags_and_rejects_what_shale_lacks() {
        let f = Flags::parse(&[
            "--write_buffer_size=1048576",
            "--bloom_bits=10",
            "--compression_type=zstd",
            "--min_level_to_compress=2",
            "--cache_type=hyper_clock_cache",
            "--cache_size=0",
        ])
        .unwrap();
        let o = options_from_flags(&f).unwrap();
        assert_eq!(o.write_buffer_size, 1 << 20);
        assert_eq!(o.bloom_bits_per_key, 10);
        assert_eq!(
            o.compression_per_level,
            vec![
                shale::Compression::None,
                shale::Compression::None,
                shale::Compression::Zstd
            ]
        );
        assert_eq!(o.cache_type, shale::CacheType::Clock);
        assert_eq!(o.cache_size, 0);
        assert!(!o.level_compaction_dynamic_level_bytes); // db_bench's default
        let d = options_from_flags(&Flags::parse::<&str>(&[]).unwrap()).unwrap();
        assert_eq!(d.bloom_bits_per_key, 0); // -1 = no filter, as db_bench
        assert_eq!(d.compression_per_level, vec![shale::Compression::Lz4]);
        // Defaults run without a warning (the header shows LZ4).
        assert!(super::super::warnings(&Flags::parse::<&str>(&[]).unwrap()).is_empty());
        for (bad, name) in [
            ("--compression_type=snappy", "compression_type"),
            ("--cache_type=fast_lru_cache", "cache_type"),
            ("--bloom_bits=100.5", "bloom_bits"),
            ("--bloom_bits_per_level=10,x", "bloom_bits_per_level"),
            ("--prefix_same_as_start=1", "prefix_size"),
            ("--subcompactions=-1", "subcompactions"),
            ("--use_ribbon_filter=1", "use_ribbon_filter"),
            ("--write_buffer_size=-5", "write_buffer_size"),
        ] {
            let e = options_from_flags(&Flags::parse(&[bad]).unwrap()).unwrap_err();
            assert!(e.0.contains(&format!("--{name}")), "{bad}: {e}");
        }
        assert!(
            options_from_flags(&Flags::parse(&["--max_write_buffer_number=1"]).unwrap()).is_err()
        );
        // Fractional bits: the same density on every level.
        let o = options_from_flags(&Flags::parse(&["--bloom_bits=9.5"]).unwrap()).unwrap();
        assert_eq!(o.bloom_bits_per_key_per_level, vec![9.5]);
        // --prefix_size sets a fixed prefix extractor, as db_bench.
        let p = Flags::parse(&[
            "--key_size=16",
            "--prefix_size=8",
            "--memtable_bloom_size_ratio=0.02",
            "--bloom_bits_per_level=14,12,10",
        ])
        .unwrap();
        let o = options_from_flags(&p).unwrap();
        assert_eq!(o.prefix_extractor, Some(shale::PrefixExtractor::Fixed(8)));
        assert!(!o.memtable_whole_key_filtering);
        assert_eq!(o.bloom_bits_per_key_per_level, vec![14.0, 12.0, 10.0]);
        let c = Flags::parse(&[
            "--cache_index_and_filter_blocks=1",
            "--cache_numshardbits=3",
            "--cache_size=1048576",
        ])
        .unwrap();
        let o = options_from_flags(&c).unwrap();
        assert!(o.cache_index_and_filter_blocks);
        assert_eq!(o.cache_numshardbits, 3);
        assert_eq!(o.block_restart_bytes, 1024); // Shale's default
        assert_eq!(o.block_size_deviation, 10); // RocksDB's default
        let dev = Flags::parse(&["--block_size_deviation=0"]).unwrap();
        assert_eq!(options_from_flags(&dev).unwrap().block_size_deviation, 0);
        for bad in ["--block_size_deviation=-1", "--block_size_deviation=101"] {
            let e = options_from_flags(&Flags::parse(&[bad]).unwrap()).unwrap_err();
            assert!(e.0.contains("block_size_deviation"), "{bad}: {e}");
        }
        assert_eq!(o.memtable_bloom_size_ratio, 0.0); // db_bench's default: off
        let m = [
            "--memtable_bloom_size_ratio=0.02",
            "--memtable_whole_key_filtering=1",
        ];
        let o = options_from_flags(&Flags::parse(&m).unwrap()).unwrap();
        assert_eq!(o.memtable_bloom_size_ratio, 0.02);
        let prefix_only = Flags::parse(&["--memtable_bloom_size_ratio=0.02"]).unwrap();
        let e = options_from_flags(&prefix_only).unwrap_err();
        assert!(e.0.contains("--memtable_whole_key_filtering"), "{e}");
        let r = Flags::parse(&["--block_restart_bytes=0"]).unwrap();
        assert_eq!(options_from_flags(&r).unwrap().block_restart_bytes, 0);
        // A Shale-only flag: other engines refuse it.
        assert!(r.reject_category(Category::Shale, "rocksdb").is_err());
        // Cached index/filter blocks need a cache: rejected, naming the option.
        let no_cache = Flags::parse(&["--cache_index_and_filter_blocks=1", "--cache_size=0"]);
        let e = options_from_flags(&no_cache.unwrap()).unwrap_err();
        assert!(e.0.contains("cache_index_and_filter_blocks"), "{e}");
        let e = options_from_flags(&Flags::parse(&["--cache_numshardbits=21"]).unwrap());
        assert!(e.is_err());
        // db_bench's --open_files is max_open_files: -1 by default, a bound of
        // at least 20 otherwise (smaller ones are refused, naming the option).
        assert_eq!(d.max_open_files, -1);
        let o = options_from_flags(&Flags::parse(&["--open_files=500"]).unwrap()).unwrap();
        assert_eq!(o.max_open_files, 500);
        let e = options_from_flags(&Flags::parse(&["--open_files=5"]).unwrap()).unwrap_err();
        assert!(e.0.contains("max_open_files"), "{e}");
    }

    #[test]
    fn maps_write_control_readahead_and_wal_flags() {
        // db_bench's defaults, not the engine's (hard limit 128 GiB, not
        // 256 GiB; delayed write rate 8 MiB/s, not 16 MiB/s; no compaction
        // readahead size, i.e. Shale's automatic readahead).
        let d = options_from_flags(&Flags::parse::<&str>(&[]).unwrap()).unwrap();
        assert_eq!(d.max_compaction_bytes, 0);
        assert_eq!(d.soft_pending_compaction_bytes_limit, 64 << 30);
        assert_eq!(d.hard_pending_compaction_bytes_limit, 128 << 30);
        assert_eq!(d.delayed_write_rate, 8 << 20);
        assert_eq!(d.compaction_readahead_size, 0);
        assert_eq!(d.max_auto_readahead_size, 256 << 10);
        assert!(d.paranoid_checks && !d.manual_wal_flush);
        assert_eq!(d.wal_recovery_mode, shale::WalRecoveryMode::PointInTime);
        let f = Flags::parse(&[
            "--max_compaction_bytes=100000000",
            "--soft_pending_compaction_bytes_limit=1000000",
            "--hard_pending_compaction_bytes_limit=2000000",
            "--delayed_write_rate=1048576",
            "--compaction_readahead_size=2097152",
            "--max_auto_readahead_size=65536",
            "--paranoid_checks=0",
            "--manual_wal_flush=1",
            "--wal_recovery_mode=1",
        ])
        .unwrap();
        let o = options_from_flags(&f).unwrap();
        assert_eq!(o.max_compaction_bytes, 100_000_000);
        assert_eq!(o.soft_pending_compaction_bytes_limit, 1_000_000);
        assert_eq!(o.hard_pending_compaction_bytes_limit, 2_000_000);
        assert_eq!(o.delayed_write_rate, 1 << 20);
        assert_eq!(o.compaction_readahead_size, 2 << 20);
        assert_eq!(o.max_auto_readahead_size, 64 << 10);
        assert!(!o.paranoid_checks && o.manual_wal_flush);
        assert_eq!(
            o.wal_recovery_mode,
            shale::WalRecoveryMode::AbsoluteConsistency
        );
        let modes: Vec<_> = (0..4).map(|m| wal_recovery_mode(m).unwrap()).collect();
        assert_eq!(
            modes,
            vec![
                shale::WalRecoveryMode::TolerateCorruptedTailRecords,
                shale::WalRecoveryMode::AbsoluteConsistency,
                shale::WalRecoveryMode::PointInTime,
                shale::WalRecoveryMode::SkipAnyCorruptedRecords
            ]
        );
        assert!(wal_recovery_mode(4).is_err());
        // 0 disables either limit, as in RocksDB.
        let f = Flags::parse(&["--hard_pending_compaction_bytes_limit=0"]).unwrap();
        assert_eq!(
            options_from_flags(&f)
                .unwrap()
                .hard_pending_compaction_bytes_limit,
            0
        );
        // Shale refuses soft > hard; the error names the engine check.
        let f = Flags::parse(&[
            "--soft_pending_compaction_bytes_limit=20",
            "--hard_pending_compaction_bytes_limit=10",
        ])
        .unwrap();
        let e = options_from_flags(&f).unwrap_err();
        assert!(e.0.contains("soft_pending_compaction_bytes_limit"), "{e}");
        // Write shaping (issue 16): off by default, as db_bench.
        assert_eq!(
            (
                d.bytes_per_sync,
                d.wal_bytes_per_sync,
                d.recycle_log_file_num
            ),
            (0, 0, 0)
        );
        let f = Flags::parse(&[
            "--bytes_per_sync=1048576",
            "--wal_bytes_per_sync=524288",
            "--recycle_log_file_num=4",
        ])
        .unwrap();
        let o = options_from_flags(&f).unwrap();
        assert_eq!(
            (
                o.bytes_per_sync,
                o.wal_bytes_per_sync,
                o.recycle_log_file_num
            ),
            (1 << 20, 512 << 10, 4)
        );
        // The rate limiter: none by default, else one of that rate,
        // auto-tuned on request (which needs a rate).
        assert!(options_from_flags(&Flags::parse::<&str>(&[]).unwrap())
            .unwrap()
            .rate_limiter
            .is_none());
        for (auto, start) in [("0", 1_000_000), ("1", 500_000)] {
            let f = Flags::parse(&[
                "--rate_limiter_bytes_per_sec=1000000",
                format!("--rate_limiter_auto_tuned={auto}").as_str(),
            ])
            .unwrap();
            let l = options_from_flags(&f).unwrap().rate_limiter.unwrap();
            assert_eq!(l.get_max_bytes_per_second(), 1_000_000);
            assert_eq!(l.get_bytes_per_second(), start);
        }
        let f = Flags::parse(&["--rate_limiter_auto_tuned"]).unwrap();
        assert!(options_from_flags(&f).is_err());
        let f = Flags::parse(&["--rate_limiter_bytes_per_sec=-1"]).unwrap();
        assert!(options_from_flags(&f).is_err());
    }

    #[test]
    fn maps_compaction_style_and_universal_flags() {
        let base = ["--compression_type=none"];
        let o = options_from_flags(&Flags::parse(&base).unwrap()).unwrap();
        assert_eq!(o.compaction_style, shale::CompactionStyle::Level);
        assert_eq!(
            o.compaction_options_universal,
            shale::UniversalCompactionOptions::default(),
            "0 keeps the engine's defaults"
        );
        let f = Flags::parse(&[
            "--compression_type=none",
            "--compaction_style=1",
            "--universal_size_ratio=10",
            "--universal_min_merge_width=3",
            "--universal_max_merge_width=8",
            "--universal_max_size_amplification_percent=150",
            "--universal_compression_size_percent=40",
            "--universal_allow_trivial_move=1",
        ])
        .unwrap();
        let o = options_from_flags(&f).unwrap();
        assert_eq!(o.compaction_style, shale::CompactionStyle::Universal);
        let u = &o.compaction_options_universal;
        assert_eq!(
            (u.size_ratio, u.min_merge_width, u.max_merge_width),
            (10, 3, 8)
        );
        assert_eq!(u.max_size_amplification_percent, 150);
        assert_eq!(u.compression_size_percent, 40);
        assert!(u.allow_trivial_move && !u.incremental);
        for bad in ["--compaction_style=3", "--universal_size_ratio=-1"] {
            let f = Flags::parse(&["--compression_type=none", bad]).unwrap();
            assert!(options_from_flags(&f).is_err(), "{bad}");
        }
        // Incremental merges map through; with two levels the engine's
        // validation refuses them.
        let f = Flags::parse(&[
            "--compression_type=none",
            "--compaction_style=1",
            "--universal_incremental=1",
        ])
        .unwrap();
        assert!(
            options_from_flags(&f)
                .unwrap()
                .compaction_options_universal
                .incremental
        );
        let f = Flags::parse(&[
            "--compression_type=none",
            "--compaction_style=1",
            "--universal_incremental=1",
            "--num_levels=2",
        ])
        .unwrap();
        let e = options_from_flags(&f).unwrap_err();
        assert!(e.0.contains("incremental"), "{e}");
    }

    #[test]
    fn maps_blob_flags_and_refuses_a_blob_cache_of_its_own() {
        let d = options_from_flags(&Flags::parse::<&str>(&[]).unwrap()).unwrap();
        assert_eq!(
            d.blob,
            shale::BlobOptions::default(),
            "db_bench's defaults are Shale's"
        );
        let f = Flags::parse(&[
            "--enable_blob_files=1",
            "--min_blob_size=100",
            "--blob_file_size=1048576",
            "--blob_compression_type=zstd",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_garbage_collection_force_threshold=0.75",
            "--blob_garbage_collection_min_garbage_ratio=0.2",
            "--blob_compaction_readahead_size=65536",
            "--blob_file_starting_level=2",
            "--use_blob_cache=1",
            "--prepopulate_blob_cache=1",
            "--num_column_families=2",
            "--compression_type=lz4",
        ])
        .unwrap();
        let o = options_from_flags(&f).unwrap();
        let want = shale::BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            blob_file_size: 1 << 20,
            blob_compression_type: shale::Compression::Zstd,
            enable_blob_garbage_collection: true,
            blob_garbage_collection_age_cutoff: 0.5,
            blob_garbage_collection_min_garbage_ratio: 0.2,
            blob_garbage_collection_force_threshold: 0.75,
            blob_compaction_readahead_size: 65536,
            blob_file_starting_level: 2,
            prepopulate_blob_cache: shale::PrepopulateBlobCache::FlushOnly,
        };
        assert_eq!(o.blob, want);
        // Every family gets them, not only `default`.
        assert_eq!(o.column_families[0].1.blob, want);
        assert!(super::super::warnings(&f).is_empty());
        for (bad, name) in [
            (
                &["--use_blob_cache=1", "--use_shared_block_and_blob_cache=0"][..],
                "use_shared_block_and_blob_cache",
            ),
            (
                &["--blob_compression_type=snappy"][..],
                "blob_compression_type",
            ),
            (
                &[
                    "--use_blob_cache=1",
                    "--use_shared_block_and_blob_cache=0",
                    "--blob_cache_size=1",
                ][..],
                "blob_cache_size",
            ),
            (
                &[
                    "--compaction_style=2",
                    "--fifo_compaction_max_table_files_size_mb=64",
                ][..],
                "FIFO",
            ),
        ] {
            let mut a = vec!["--enable_blob_files=1"];
            a.extend_from_slice(bad);
            let e = options_from_flags(&Flags::parse(&a).unwrap()).unwrap_err();
            assert!(e.0.contains(name), "{bad:?}: {e}");
        }
        // Blobs are cached whatever --use_blob_cache says: the header says so.
        let w = super::super::warnings(&Flags::parse(&["--enable_blob_files=1"]).unwrap());
        assert!(w.iter().any(|w| w.contains("--use_blob_cache=0")), "{w:?}");
    }

    #[test]
    fn maps_merge_operators_and_refuses_uint64add_on_other_value_sizes() {
        let o = options_from_flags(&Flags::parse::<&str>(&[]).unwrap()).unwrap();
        assert!(o.merge_operator.is_none()); // db_bench's default: none
        for (name, extra, want) in [
            ("put", "--value_size=100", "put"),
            ("uint64add", "--value_size=8", "uint64add"),
            ("UInt64AddOperator", "--value_size=8", "uint64add"),
            ("max", "--value_size=100", "max"),
            ("stringappend", "--value_size=100", "stringappend:2c"),
        ] {
            let f = Flags::parse(&[
                format!("--merge_operator={name}").as_str(),
                extra,
                "--num_column_families=2",
            ])
            .unwrap();
            let o = options_from_flags(&f).unwrap();
            assert_eq!(o.merge_operator.as_ref().unwrap().name(), want, "{name}");
            // Every family gets it, not only `default`.
            let cf = &o.column_families[0].1;
            assert_eq!(cf.merge_operator.as_ref().unwrap().name(), want, "{name}");
        }
        let f = Flags::parse(&["--merge_operator=uint64add"]).unwrap();
        let e = options_from_flags(&f).unwrap_err();
        assert!(
            e.0.contains("--value_size=8") && e.0.contains("got 100"),
            "{e}"
        );
    }

    /// db_bench's `put`: a key reads as its newest operand, over a value,
    /// across a flush, and after a compaction merged the operands.
    #[test]
    fn put_operator_keeps_the_newest_operand() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&["--merge_operator=put", "--compression_type=none"]).unwrap();
        let e = ShaleEngine::open(&f, d.path()).unwrap();
        let w = WriteOpts::default();
        let mut out = Vec::new();
        e.put(0, b"k", b"base", &w).unwrap();
        e.merge(0, b"k", b"one", &w).unwrap();
        e.merge(0, b"n", b"first", &w).unwrap();
        e.flush().unwrap();
        e.merge(0, b"k", b"two", &w).unwrap();
        assert!(e.get(0, b"k", &mut out, true).unwrap());
        assert_eq!(out, b"two");
        e.flush().unwrap();
        e.compact_range(None, None).unwrap();
        assert!(e.get(0, b"k", &mut out, true).unwrap());
        assert_eq!(out, b"two");
        assert!(e.get(0, b"n", &mut out, true).unwrap());
        assert_eq!(out, b"first");
        e.close().unwrap();
        // Without an operator Shale refuses the merge.
        let d2 = tempfile::tempdir().unwrap();
        let plain = ShaleEngine::open(&Flags::parse::<&str>(&[]).unwrap(), d2.path()).unwrap();
        let err = plain.merge(0, b"k", b"v", &w).unwrap_err();
        assert!(err.0.contains("merge_operator"), "{err}");
        plain.close().unwrap();
    }

    #[test]
    fn statistics_dump_lists_every_counter() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&["--statistics=1", "--bloom_bits=10"]).unwrap();
        assert!(options_from_flags(&f).is_ok());
        let e = ShaleEngine::open(&f, d.path()).unwrap();
        let w = WriteOpts::default();
        for i in 0..100u32 {
            e.put(0, format!("key{i:04}").as_bytes(), b"value", &w)
                .unwrap();
        }
        e.flush().unwrap();
        let mut out = Vec::new();
        assert!(e.get(0, b"key0007", &mut out, true).unwrap());
        assert!(!e.get(0, b"nokey", &mut out, true).unwrap());
        let s = e.statistics().unwrap();
        assert_eq!(s.lines().count(), STATISTICS_COUNTERS.len(), "{s}");
        for (line, name) in s.lines().zip(STATISTICS_COUNTERS) {
            let rest = line.strip_prefix(&format!("{name} COUNT : ")).unwrap();
            assert!(rest.parse::<u64>().is_ok(), "{line}");
        }
        let count = |n: &str| -> u64 {
            let p = format!("{n} COUNT : ");
            s.lines()
                .find_map(|l| l.strip_prefix(p.as_str()))
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(count("shale.wal-bytes-written") > 0, "{s}");
        assert!(count("shale.compaction-bytes-written") > 0, "{s}");
        assert!(count("shale.block-reads") > 0, "{s}");
        e.close().unwrap();
    }
}

#[cfg(test)]
mod option_table_tests {
    use super::{OPTIONS_WITHOUT_FLAG, OPTION_FLAGS};
    use crate::flags::FLAG_DEFS;
    use std::collections::BTreeSet;

    /// Every engine option is set by a flag or listed with the reason it
    /// is not; every row names an engine option and a flag of this tool.
    #[test]
    fn every_engine_option_has_a_flag_or_a_reason() {
        let options: BTreeSet<String> = shale::CfOptions::option_infos()
            .into_iter()
            .chain(shale::Options::db_option_infos())
            .map(|i| i.field)
            .collect();
        assert!(options.contains("blob.min_blob_size") && options.contains("memory_budget"));
        let mapped: BTreeSet<&str> = OPTION_FLAGS.iter().map(|(o, _)| *o).collect();
        let exempt: BTreeSet<&str> = OPTIONS_WITHOUT_FLAG.iter().map(|(o, _)| *o).collect();
        let mut problems = Vec::new();
        for o in &options {
            match (mapped.contains(o.as_str()), exempt.contains(o.as_str())) {
                (false, false) => problems.push(format!(
                    "engine option {o} has no flag (map it in options_from_flags and \
                     OPTION_FLAGS, or list it in OPTIONS_WITHOUT_FLAG with the reason)"
                )),
                (true, true) => problems.push(format!("{o} is mapped and listed as unmapped")),
                _ => {}
            }
        }
        for (o, flag) in OPTION_FLAGS {
            if !options.contains(*o) {
                problems.push(format!("OPTION_FLAGS names {o}, which is no engine option"));
            }
            if !FLAG_DEFS.iter().any(|d| d.name == *flag) {
                problems.push(format!("OPTION_FLAGS names --{flag}, which is no flag"));
            }
        }
        for (o, _) in OPTIONS_WITHOUT_FLAG {
            if !options.contains(*o) {
                problems.push(format!(
                    "OPTIONS_WITHOUT_FLAG names {o}, which is no engine option"
                ));
            }
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }
}
