//! Keyword arguments to engine options, and a family's options changed
//! while open.
//!
//! `shale.DB(path, **options)` and `db.create_column_family(name,
//! **options)` take RocksDB's option names. Every name is either applied or
//! refused with `InvalidArgumentError` naming it: nothing is accepted and
//! ignored. Per-family names apply to the `default` family at open (and are
//! persisted with it, as the engine does); DB-wide names only at open.
//!
//! `db.set_options({...})` hands the engine RocksDB's `SetOptions` text
//! (`set_changes`): names as in the OPTIONS file, or the keyword names above
//! where those differ; the engine decides what may change while open.
//! `db.get_options()` reads a few of them back (`current`).
//! `db.set_db_options({...})` hands it RocksDB's `SetDBOptions` text
//! (`set_db_changes`) the same way, names as given.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use shale::{CacheType, CfOptions, Compression, MergeOperator, Options, PrepopulateBlobCache};

use crate::errors::{invalid, to_py};

use crate::keywords::{CF_KEYWORDS, DB_KEYWORDS, WITHOUT_KEYWORD};

/// Per-family keywords (`CfOptions`), for the help text of errors.
fn cf_names() -> Vec<&'static str> {
    CF_KEYWORDS.iter().map(|(k, _)| *k).collect()
}

/// DB-wide keywords (`Options` only).
fn db_names() -> Vec<&'static str> {
    DB_KEYWORDS.iter().map(|(k, _)| *k).collect()
}

/// True when `name` is a DB-wide keyword.
fn is_db_keyword(name: &str) -> bool {
    DB_KEYWORDS.iter().any(|(k, _)| *k == name)
}

/// The options of `DB(path, create_if_missing=..., **kwargs)`.
pub fn db_options(
    create_if_missing: bool,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Options> {
    let mut o = Options {
        create_if_missing,
        ..Options::default()
    };
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let name: String = k.extract()?;
            if !apply_cf(&mut o.cf, &name, &v)? && !apply_db(&mut o, &name, &v)? {
                return Err(unknown(&name, true));
            }
        }
    }
    o.validate().map_err(to_py)?;
    Ok(o)
}

/// The options of `db.create_column_family(name, **kwargs)`.
pub fn cf_options(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<CfOptions> {
    let mut cf = CfOptions::default();
    if let Some(kw) = kwargs {
        for (k, v) in kw.iter() {
            let name: String = k.extract()?;
            if !apply_cf(&mut cf, &name, &v)? {
                return Err(unknown(&name, is_db_keyword(&name)));
            }
        }
    }
    cf.validate().map_err(to_py)?;
    Ok(cf)
}

fn unknown(name: &str, db_wide_known: bool) -> PyErr {
    if let Some((_, why)) = WITHOUT_KEYWORD.iter().find(|(f, _)| *f == name) {
        return invalid(format!(
            "option '{name}' is not available from Python: {why}"
        ));
    }
    if db_wide_known && is_db_keyword(name) {
        return invalid(format!(
            "option '{name}' is DB-wide: pass it to shale.DB(), not to a column family"
        ));
    }
    invalid(format!(
        "unknown option '{name}' (per family: {}; DB-wide: {})",
        cf_names().join(", "),
        db_names().join(", ")
    ))
}

/// Applies a per-family option; false if `name` is not one.
fn apply_cf(o: &mut CfOptions, name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    match name {
        "write_buffer_size" => o.write_buffer_size = v.extract()?,
        "max_write_buffer_number" => o.max_write_buffer_number = v.extract()?,
        "memtable_bloom_size_ratio" => o.memtable_bloom_size_ratio = v.extract()?,
        "block_size" => o.block_size = v.extract()?,
        "block_restart_interval" => o.block_restart_interval = v.extract()?,
        "block_restart_bytes" => o.block_restart_bytes = v.extract()?,
        "block_align" => o.block_align = v.extract()?,
        "block_size_deviation" => o.block_size_deviation = v.extract()?,
        "bloom_bits_per_key" => o.bloom_bits_per_key = v.extract()?,
        // A list of floats, by output level (the last applies deeper).
        "bloom_bits_per_key_per_level" => o.bloom_bits_per_key_per_level = v.extract()?,
        "memtable_whole_key_filtering" => o.memtable_whole_key_filtering = v.extract()?,
        "compression" => o.compression_per_level = vec![compression(v)?],
        "bottommost_compression" => {
            o.bottommost_compression = if v.is_none() {
                None
            } else {
                Some(compression(v)?)
            }
        }
        "disable_auto_compactions" => o.disable_auto_compactions = v.extract()?,
        "level0_file_num_compaction_trigger" => {
            o.level0_file_num_compaction_trigger = v.extract()?
        }
        "level0_slowdown_writes_trigger" => o.level0_slowdown_writes_trigger = v.extract()?,
        "level0_stop_writes_trigger" => o.level0_stop_writes_trigger = v.extract()?,
        "max_bytes_for_level_base" => o.max_bytes_for_level_base = v.extract()?,
        "max_bytes_for_level_multiplier" => o.max_bytes_for_level_multiplier = v.extract()?,
        "level_compaction_dynamic_level_bytes" => {
            o.level_compaction_dynamic_level_bytes = v.extract()?
        }
        "target_file_size_base" => o.target_file_size_base = v.extract()?,
        "target_file_size_multiplier" => o.target_file_size_multiplier = v.extract()?,
        "max_compaction_bytes" => o.max_compaction_bytes = v.extract()?,
        "level_compaction_dynamic_file_size" => {
            o.level_compaction_dynamic_file_size = v.extract()?
        }
        "soft_pending_compaction_bytes_limit" => {
            o.soft_pending_compaction_bytes_limit = v.extract()?
        }
        "hard_pending_compaction_bytes_limit" => {
            o.hard_pending_compaction_bytes_limit = v.extract()?
        }
        "merge_operator" => o.merge_operator = merge_operator(v)?,
        "default_ttl_secs" => o.default_ttl_secs = v.extract()?,
        // "level", "universal", "fifo" (or RocksDB's kCompactionStyle* names).
        "compaction_style" => {
            let s: String = v.extract()?;
            o.compaction_style = shale::CompactionStyle::parse(&s).map_err(to_py)?
        }
        "universal_size_ratio" => o.compaction_options_universal.size_ratio = v.extract()?,
        "universal_min_merge_width" => {
            o.compaction_options_universal.min_merge_width = v.extract()?
        }
        "universal_max_merge_width" => {
            o.compaction_options_universal.max_merge_width = v.extract()?
        }
        "universal_max_size_amplification_percent" => {
            o.compaction_options_universal
                .max_size_amplification_percent = v.extract()?
        }
        "universal_compression_size_percent" => {
            o.compaction_options_universal.compression_size_percent = v.extract()?
        }
        // "similar_size" or "total_size" (or RocksDB's names).
        "universal_stop_style" => {
            let s: String = v.extract()?;
            o.compaction_options_universal.stop_style = match s.as_str() {
                "similar_size" => shale::UniversalStopStyle::SimilarSize,
                "total_size" => shale::UniversalStopStyle::TotalSize,
                other => shale::UniversalStopStyle::parse(other).map_err(to_py)?,
            }
        }
        "universal_allow_trivial_move" => {
            o.compaction_options_universal.allow_trivial_move = v.extract()?
        }
        "universal_incremental" => o.compaction_options_universal.incremental = v.extract()?,
        "fifo_max_table_files_size" => {
            o.compaction_options_fifo.max_table_files_size = v.extract()?
        }
        "fifo_allow_compaction" => o.compaction_options_fifo.allow_compaction = v.extract()?,
        "fifo_ttl" => o.compaction_options_fifo.ttl_secs = v.extract()?,
        // Key-value separation (RocksDB's integrated BlobDB names).
        "enable_blob_files" => o.blob.enable_blob_files = v.extract()?,
        "min_blob_size" => o.blob.min_blob_size = v.extract()?,
        "blob_file_size" => o.blob.blob_file_size = v.extract()?,
        "blob_compression_type" => o.blob.blob_compression_type = compression(v)?,
        "enable_blob_garbage_collection" => o.blob.enable_blob_garbage_collection = v.extract()?,
        "blob_garbage_collection_age_cutoff" => {
            o.blob.blob_garbage_collection_age_cutoff = v.extract()?
        }
        "blob_garbage_collection_min_garbage_ratio" => {
            o.blob.blob_garbage_collection_min_garbage_ratio = v.extract()?
        }
        "blob_garbage_collection_force_threshold" => {
            o.blob.blob_garbage_collection_force_threshold = v.extract()?
        }
        "blob_compaction_readahead_size" => o.blob.blob_compaction_readahead_size = v.extract()?,
        "blob_file_starting_level" => o.blob.blob_file_starting_level = v.extract()?,
        // "disable" or "flush_only" (or RocksDB's kDisable / kFlushOnly).
        "prepopulate_blob_cache" => {
            let s: String = v.extract()?;
            o.blob.prepopulate_blob_cache = PrepopulateBlobCache::parse(&s).ok_or_else(|| {
                invalid(format!(
                    "prepopulate_blob_cache '{s}' (disable or flush_only, or kDisable / kFlushOnly)"
                ))
            })?
        }
        "whole_key_filtering" => o.whole_key_filtering = v.extract()?,
        // RocksDB's name ("rocksdb.FixedPrefix.8", "rocksdb.CappedPrefix.8"),
        // or None / "" / "nullptr" for none.
        "prefix_extractor" => {
            let s: Option<String> = v.extract()?;
            o.prefix_extractor = match s.as_deref() {
                None | Some("" | "nullptr") => None,
                Some(n) => Some(shale::PrefixExtractor::parse(n).ok_or_else(|| {
                    invalid(format!(
                        "prefix_extractor '{n}' (rocksdb.FixedPrefix.<n> or rocksdb.CappedPrefix.<n>)"
                    ))
                })?),
            }
        }
        // Output cuts (issue 15): insert-stream detection on or off (unset:
        // the style's default), and RocksDB's fixed-prefix SST partitioner
        // (0: none).
        "detect_insert_streams" => o.detect_insert_streams = Some(v.extract()?),
        "sst_partitioner_fixed_prefix_len" => {
            o.sst_partitioner_factory = match v.extract::<usize>()? {
                0 => None,
                n => Some(shale::SstPartitioner::FixedPrefix(n)),
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Applies a DB-wide option; false if `name` is not one.
fn apply_db(o: &mut Options, name: &str, v: &Bound<'_, PyAny>) -> PyResult<bool> {
    match name {
        "error_if_exists" => o.error_if_exists = v.extract()?,
        "paranoid_checks" => o.paranoid_checks = v.extract()?,
        "manual_wal_flush" => o.manual_wal_flush = v.extract()?,
        "wal_mmap_writes" => o.wal_mmap_writes = v.extract()?,
        "allow_concurrent_memtable_write" => o.allow_concurrent_memtable_write = v.extract()?,
        "delayed_write_rate" => o.delayed_write_rate = v.extract()?,
        "max_bgerror_resume_count" => o.max_bgerror_resume_count = v.extract()?,
        "bgerror_resume_retry_interval" => o.bgerror_resume_retry_interval = v.extract()?,
        "cache_numshardbits" => o.cache_numshardbits = v.extract()?,
        "cache_high_pri_pool_ratio" => o.cache_high_pri_pool_ratio = v.extract()?,
        "cache_low_pri_pool_ratio" => o.cache_low_pri_pool_ratio = v.extract()?,
        "cache_strict_capacity_limit" => o.cache_strict_capacity_limit = v.extract()?,
        "cache_index_and_filter_blocks" => o.cache_index_and_filter_blocks = v.extract()?,
        "max_auto_readahead_size" => o.max_auto_readahead_size = v.extract()?,
        "max_log_file_size" => o.max_log_file_size = v.extract()?,
        "keep_log_file_num" => o.keep_log_file_num = v.extract()?,
        "allow_ingest_behind" => o.allow_ingest_behind = v.extract()?,
        // The OPTIONS file's names: "PointInTime", "AbsoluteConsistency",
        // "TolerateCorruptedTailRecords", "SkipAnyCorruptedRecords".
        "wal_recovery_mode" => {
            let s: String = v.extract()?;
            o.set_db_option("wal_recovery_mode", &s).map_err(to_py)?
        }
        // RocksDB's names: "DEBUG_LEVEL", "INFO_LEVEL", "WARN_LEVEL", ...
        "info_log_level" => {
            let s: String = v.extract()?;
            o.set_db_option("info_log_level", &s).map_err(to_py)?
        }
        "num_levels" => o.num_levels = v.extract()?,
        "max_background_jobs" => o.max_background_jobs = v.extract()?,
        "max_subcompactions" => o.max_subcompactions = v.extract()?,
        "cache_size" => o.cache_size = v.extract()?,
        "cache_type" => {
            let s: String = v.extract()?;
            o.cache_type = match s.as_str() {
                "lru" => CacheType::Lru,
                "clock" => CacheType::Clock,
                _ => return Err(invalid(format!("cache_type '{s}' (lru or clock)"))),
            }
        }
        "max_open_files" => o.max_open_files = v.extract()?,
        "db_write_buffer_size" => o.db_write_buffer_size = v.extract()?,
        "memory_budget" => o.memory_budget = v.extract()?,
        "max_total_wal_size" => o.max_total_wal_size = v.extract()?,
        "create_missing_column_families" => o.create_missing_column_families = v.extract()?,
        "use_direct_reads" => o.use_direct_reads = v.extract()?,
        "use_direct_io_for_flush_and_compaction" => {
            o.use_direct_io_for_flush_and_compaction = v.extract()?
        }
        "advise_random_on_open" => o.advise_random_on_open = v.extract()?,
        "compaction_readahead_size" => o.compaction_readahead_size = v.extract()?,
        "bytes_per_sync" => o.bytes_per_sync = v.extract()?,
        "wal_bytes_per_sync" => o.wal_bytes_per_sync = v.extract()?,
        "recycle_log_file_num" => o.recycle_log_file_num = v.extract()?,
        "wal_ttl_seconds" => o.wal_ttl_seconds = v.extract()?,
        "wal_size_limit_mb" => o.wal_size_limit_mb = v.extract()?,
        // A limiter of its own for this DB (RocksDB's
        // NewGenericRateLimiter defaults: 100 ms refills, fairness 10);
        // 0 is none.
        "rate_limiter_bytes_per_sec" => {
            let rate: u64 = v.extract()?;
            o.rate_limiter = match rate {
                0 => None,
                r => Some(Arc::new(shale::RateLimiter::new(r).map_err(to_py)?)),
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

fn compression(v: &Bound<'_, PyAny>) -> PyResult<Compression> {
    let s: String = v.extract()?;
    Compression::parse(&s).map_err(to_py)
}

/// The shipped merge operators by name: `"uint64add"`, `"max"`,
/// `"stringappend"` (delimiter `,`, RocksDB's default) or
/// `"stringappend:<delimiter>"`; `None` for no operator.
fn merge_operator(v: &Bound<'_, PyAny>) -> PyResult<Option<Arc<dyn MergeOperator>>> {
    if v.is_none() {
        return Ok(None);
    }
    let s: String = v.extract()?;
    let op: Arc<dyn MergeOperator> = match s.as_str() {
        "uint64add" => Arc::new(shale::UInt64AddOperator),
        "max" => Arc::new(shale::MaxOperator),
        "stringappend" => Arc::new(shale::StringAppendOperator::new(b",")),
        _ => match s.strip_prefix("stringappend:") {
            Some(d) => Arc::new(shale::StringAppendOperator::new(d.as_bytes())),
            None => {
                return Err(invalid(format!(
                    "merge_operator '{s}' (uint64add, max, stringappend, stringappend:<delimiter>)"
                )))
            }
        },
    };
    Ok(Some(op))
}

/// The `(name, text)` changes of `db.set_options(options)`: names as the
/// engine's (the OPTIONS file's), the keyword names of `shale.DB()` where
/// they differ translated (`compression`, `universal_*`, `fifo_*`,
/// `sst_partitioner_fixed_prefix_len`); values as text (`bool` as
/// `true`/`false`, `int` and `float` as `str()` gives them, `str` as is).
/// A DB-wide name is `InvalidArgumentError`, another type `TypeError`;
/// the rest (unknown names, names fixed while open, bad values) is the
/// engine's to refuse.
pub fn set_changes(options: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(options.len());
    for (k, v) in options.iter() {
        let key = option_name(&k)?;
        if is_db_keyword(&key) {
            return Err(invalid(format!(
                "option '{key}' is DB-wide: it is set when opening shale.DB() \
                 (some change while open through set_db_options())"
            )));
        }
        let text = option_text(&key, &v)?;
        out.push(engine_name(key, text));
    }
    Ok(out)
}

/// The `(name, text)` changes of `db.set_db_options(options)`: names as
/// given (the OPTIONS file's `[DBOptions]` names), values as text as in
/// `set_changes`; another type is `TypeError`. Which names change while
/// open, and their values, is the engine's to decide.
pub fn set_db_changes(options: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(options.len());
    for (k, v) in options.iter() {
        let key = option_name(&k)?;
        let text = option_text(&key, &v)?;
        out.push((key, text));
    }
    Ok(out)
}

/// An option name; `TypeError` unless `str`.
fn option_name(k: &Bound<'_, PyAny>) -> PyResult<String> {
    k.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "option names are str, not {}",
            k.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// `v` as option text; `TypeError` unless `str`, `bool`, `int` or `float`.
fn option_text(key: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(b) = v.downcast::<PyBool>() {
        return Ok(if b.is_true() { "true" } else { "false" }.to_string());
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() {
        return Ok(v.str()?.to_cow()?.into_owned());
    }
    Err(PyTypeError::new_err(format!(
        "option '{key}': values are str, int, float or bool, not {}",
        v.get_type().name()?
    )))
}

/// The engine's name (and text) for a keyword name of `shale.DB()` that
/// differs from it (`keywords::CF_KEYWORDS`, the engine's names from its
/// option list); any other name as it is.
fn engine_name(key: String, text: String) -> (String, String) {
    let Some((_, field)) = CF_KEYWORDS.iter().find(|(k, _)| *k == key) else {
        return (key, text);
    };
    let name = CfOptions::option_infos()
        .into_iter()
        .find(|i| i.field == *field)
        .and_then(|i| i.name)
        // A keyword of an option that is not persisted: as given (the
        // engine refuses it by name).
        .unwrap_or(key);
    let text = match (name.as_str(), text.as_str()) {
        ("compaction_options_universal.stop_style", "similar_size") => {
            "kCompactionStopStyleSimilarSize".to_string()
        }
        ("compaction_options_universal.stop_style", "total_size") => {
            "kCompactionStopStyleTotalSize".to_string()
        }
        _ => text,
    };
    (name, text)
}

/// A few of a family's current options for `db.get_options()`, named as
/// `set_options` takes them (so `db.set_options(db.get_options())` changes
/// nothing): sizes and counts as `int`, ratios as `float`, switches as
/// `bool`, compressions as the OPTIONS file's text.
pub fn current<'py>(py: Python<'py>, o: &CfOptions) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("write_buffer_size", o.write_buffer_size)?;
    d.set_item("max_write_buffer_number", o.max_write_buffer_number)?;
    d.set_item("disable_auto_compactions", o.disable_auto_compactions)?;
    d.set_item(
        "level0_file_num_compaction_trigger",
        o.level0_file_num_compaction_trigger,
    )?;
    d.set_item(
        "level0_slowdown_writes_trigger",
        o.level0_slowdown_writes_trigger,
    )?;
    d.set_item("level0_stop_writes_trigger", o.level0_stop_writes_trigger)?;
    d.set_item("target_file_size_base", o.target_file_size_base)?;
    d.set_item("target_file_size_multiplier", o.target_file_size_multiplier)?;
    d.set_item("max_bytes_for_level_base", o.max_bytes_for_level_base)?;
    d.set_item(
        "max_bytes_for_level_multiplier",
        o.max_bytes_for_level_multiplier,
    )?;
    d.set_item("max_compaction_bytes", o.max_compaction_bytes)?;
    d.set_item(
        "soft_pending_compaction_bytes_limit",
        o.soft_pending_compaction_bytes_limit,
    )?;
    d.set_item(
        "hard_pending_compaction_bytes_limit",
        o.hard_pending_compaction_bytes_limit,
    )?;
    d.set_item("block_size", o.block_size)?;
    d.set_item("bloom_bits_per_key", o.bloom_bits_per_key)?;
    d.set_item("whole_key_filtering", o.whole_key_filtering)?;
    d.set_item(
        "prefix_extractor",
        o.prefix_extractor
            .map_or_else(|| "nullptr".to_string(), |e| e.name()),
    )?;
    let levels: Vec<&str> = o.compression_per_level.iter().map(|c| c.name()).collect();
    d.set_item("compression_per_level", levels.join(":"))?;
    d.set_item(
        "bottommost_compression",
        o.bottommost_compression.map_or("Disabled", |c| c.name()),
    )?;
    d.set_item("default_ttl_secs", o.default_ttl_secs)?;
    Ok(d)
}
