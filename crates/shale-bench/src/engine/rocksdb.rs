//! The RocksDB adapter (cargo feature `rocksdb`): maps every engine flag to
//! the RocksDB option of the same name, as db_bench does, and the `Engine`
//! trait onto `rocksdb::DB`. Flags the `rocksdb` crate cannot express are
//! rejected when set to a non-default value (`--max_auto_readahead_size`:
//! `BlockBasedOptions` has no setter). `--delayed_write_rate` has no setter
//! either; it is applied through an options string on a fresh `Options`
//! (nothing else set yet, so nothing kept alive by the old value is lost).
//! With `--num_column_families=N` > 1 the DB is opened with the descriptors
//! of families `default` and `column_family_name_000001..`
//! (`create_missing_column_families`), all with the options of the flags.
//! The `rocksdb` crate hands out family handles only as references into
//! the `DB`; the adapter resolves them once at open and keeps them as
//! pointers (see `CfHandle`), so the per-op path has no name lookup.
//! Family 0 uses the plain (default-family) calls.
//! `--merge_operator`: the crate offers no native RocksDB merge operator,
//! only Rust callbacks; every family gets one running
//! `merge_operator::MergeOp::merge` (RocksDB's semantics) under the RocksDB
//! class name.
//! Thread-safe (`rocksdb::DB` and `ColumnFamily` are `Send + Sync`).

use std::path::Path;
use std::time::Instant;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DBCompactionStyle,
    DBCompressionType, DBRecoveryMode, LruCacheOptions, Options, ReadOptions,
    WaitForCompactOptions, WriteBatch, WriteBufferManager, WriteOptions, DB,
};

use super::{Batch, BatchOp, CreateTiming, Engine, EngineIter, IterOpts, Report, WriteOpts};
use crate::error::{bail, Error, Result};
use crate::flags::{Category, Flags};

/// The RocksDB release bundled by `librocksdb-sys` 0.19.
const ROCKSDB_VERSION: &str = "11.8.1";

fn err(e: rocksdb::Error) -> Error {
    Error(format!("rocksdb: {e}"))
}

/// Removes the RocksDB DB at `path` with RocksDB's own `DestroyDB` (only
/// the files it names, refused while the DB's LOCK is held), after
/// refusing a non-empty directory that holds no RocksDB DB.
pub fn destroy(path: &Path) -> Result<()> {
    let Some(names) = super::destroy::entries(path)? else {
        return Ok(());
    };
    let is_rocks = |n: &String| n == "CURRENT" || n == "IDENTITY" || n.starts_with("MANIFEST-");
    if !names.is_empty() && !names.iter().any(is_rocks) {
        return Err(super::destroy::not_a_db(path, "RocksDB", &names));
    }
    // RocksDB locks with fcntl record locks, which flock does not see:
    // DestroyDB takes the lock itself and fails while another handle (in
    // this process or another) holds it.
    DB::destroy(&Options::default(), path).map_err(|e| {
        if e.to_string().to_ascii_lowercase().contains("lock") {
            super::destroy::in_use(path, "RocksDB")
        } else {
            err(e)
        }
    })
}

fn compression(t: &str) -> Result<DBCompressionType> {
    Ok(match t.to_ascii_lowercase().as_str() {
        "none" => DBCompressionType::None,
        "snappy" => DBCompressionType::Snappy,
        "zlib" => DBCompressionType::Zlib,
        "bzip2" => DBCompressionType::Bz2,
        "lz4" => DBCompressionType::Lz4,
        "lz4hc" => DBCompressionType::Lz4hc,
        "zstd" => DBCompressionType::Zstd,
        other => bail!("--compression_type={other} is not supported by --engine=rocksdb"),
    })
}

/// Checks the flags without opening anything.
pub fn check_flags(f: &Flags) -> Result<()> {
    build_options(f).map(|_| ())
}

fn int(name: &str, v: i64) -> Result<i32> {
    i32::try_from(v).map_err(|_| Error(format!("--{name}={v} is out of range")))
}

/// RocksDB's `WALRecoveryMode` numbering (as `--wal_recovery_mode`).
fn wal_recovery_mode(v: i64) -> Result<DBRecoveryMode> {
    Ok(match v {
        0 => DBRecoveryMode::TolerateCorruptedTailRecords,
        1 => DBRecoveryMode::AbsoluteConsistency,
        2 => DBRecoveryMode::PointInTime,
        3 => DBRecoveryMode::SkipAnyCorruptedRecord,
        v => bail!("--wal_recovery_mode={v} is not supported (0..=3)"),
    })
}

fn build_options(f: &Flags) -> Result<Options> {
    f.reject_category(Category::Shale, "rocksdb")?;
    if !f.has_default("max_auto_readahead_size") {
        bail!(
            "--max_auto_readahead_size is not supported by --engine=rocksdb (the rocksdb crate's \
             BlockBasedOptions does not expose it)"
        );
    }
    // db_bench always sets delayed_write_rate (default 8 MiB/s; RocksDB's own
    // default 0 means 16 MiB/s). No setter in the rocksdb crate: go through
    // RocksDB's option-string parser, before anything else is set.
    // The same for blob_file_starting_level and prepopulate_blob_cache
    // (`blob_option_string`).
    let mut o = Options::default()
        .get_options_from_string(format!(
            "delayed_write_rate={};{}",
            f.delayed_write_rate.max(1),
            blob_option_string(f)
        ))
        .map_err(|e| {
            Error(format!(
                "--delayed_write_rate, --blob_file_starting_level or --prepopulate_blob_cache: {e}"
            ))
        })?;
    o.create_if_missing(true);
    o.set_write_buffer_size(f.write_buffer_size.max(0) as usize);
    o.set_advise_random_on_open(f.advise_random_on_open);
    if f.memory_budget <= 0 && f.db_write_buffer_size > 0 {
        o.set_db_write_buffer_size(f.db_write_buffer_size as usize);
    }
    o.set_max_write_buffer_number(int("max_write_buffer_number", f.max_write_buffer_number)?);
    o.set_memtable_prefix_bloom_ratio(f.memtable_bloom_size_ratio);
    // db_bench: --prefix_size > 0 sets NewFixedPrefixTransform(prefix_size).
    if f.prefix_size > 0 {
        o.set_prefix_extractor(rocksdb::SliceTransform::create_fixed_prefix(
            f.prefix_size as usize,
        ));
    }
    o.set_memtable_whole_key_filtering(f.memtable_whole_key_filtering);
    o.set_min_write_buffer_number_to_merge(int(
        "min_write_buffer_number_to_merge",
        f.min_write_buffer_number_to_merge,
    )?);
    o.set_disable_auto_compactions(f.disable_auto_compactions);
    o.set_level_zero_file_num_compaction_trigger(int(
        "level0_file_num_compaction_trigger",
        f.level0_file_num_compaction_trigger,
    )?);
    o.set_level_zero_slowdown_writes_trigger(int(
        "level0_slowdown_writes_trigger",
        f.level0_slowdown_writes_trigger,
    )?);
    o.set_level_zero_stop_writes_trigger(int(
        "level0_stop_writes_trigger",
        f.level0_stop_writes_trigger,
    )?);
    o.set_max_bytes_for_level_base(f.max_bytes_for_level_base.max(0) as u64);
    o.set_max_bytes_for_level_multiplier(f.max_bytes_for_level_multiplier);
    o.set_level_compaction_dynamic_level_bytes(f.level_compaction_dynamic_level_bytes);
    o.set_target_file_size_base(f.target_file_size_base.max(0) as u64);
    o.set_target_file_size_multiplier(int(
        "target_file_size_multiplier",
        f.target_file_size_multiplier,
    )?);
    o.set_max_background_jobs(int("max_background_jobs", f.max_background_jobs)?);
    // db_bench still maps these two (deprecated in RocksDB in favour of
    // max_background_jobs); only an explicit value reaches RocksDB.
    #[allow(deprecated)]
    if f.max_background_compactions >= 0 {
        o.set_max_background_compactions(int(
            "max_background_compactions",
            f.max_background_compactions,
        )?);
    }
    #[allow(deprecated)]
    if f.max_background_flushes >= 0 {
        o.set_max_background_flushes(int("max_background_flushes", f.max_background_flushes)?);
    }
    o.set_max_subcompactions(f.subcompactions.max(1) as u32);
    o.set_num_levels(int("num_levels", f.num_levels)?);
    o.set_compaction_style(match f.compaction_style {
        0 => DBCompactionStyle::Level,
        1 => DBCompactionStyle::Universal,
        2 => DBCompactionStyle::Fifo,
        v => bail!("invalid value {v} for --compaction_style (0 level, 1 universal, 2 FIFO)"),
    });
    // --universal_allow_trivial_move and --universal_incremental: not in
    // the crate's UniversalCompactOptions; set after open
    // (`after_open_options`).
    if f.compaction_style == 1 {
        let mut u = rocksdb::UniversalCompactOptions::default();
        // 0 keeps RocksDB's default, as db_bench does.
        if f.universal_size_ratio != 0 {
            u.set_size_ratio(int("universal_size_ratio", f.universal_size_ratio)?);
        }
        if f.universal_min_merge_width != 0 {
            u.set_min_merge_width(int(
                "universal_min_merge_width",
                f.universal_min_merge_width,
            )?);
        }
        if f.universal_max_merge_width != 0 {
            u.set_max_merge_width(int(
                "universal_max_merge_width",
                f.universal_max_merge_width,
            )?);
        }
        if f.universal_max_size_amplification_percent != 0 {
            u.set_max_size_amplification_percent(int(
                "universal_max_size_amplification_percent",
                f.universal_max_size_amplification_percent,
            )?);
        }
        u.set_compression_size_percent(int(
            "universal_compression_size_percent",
            f.universal_compression_size_percent,
        )?);
        o.set_universal_compaction_options(&u);
    }
    // db_bench: CompactionOptionsFIFO(max_table_files_size_mb MiB,
    // allow_compaction), and Options::ttl from --fifo_compaction_ttl.
    if f.compaction_style == 2 {
        let mut fifo = rocksdb::FifoCompactOptions::default();
        fifo.set_max_table_files_size(
            (f.fifo_compaction_max_table_files_size_mb.max(0) as u64).saturating_mul(1 << 20),
        );
        // allow_compaction: not in the crate's FifoCompactOptions; set
        // after open (`after_open_options`).
        o.set_fifo_compaction_options(&fifo);
        if f.fifo_compaction_ttl > 0 {
            o.set_ttl(f.fifo_compaction_ttl as u64);
        }
    }
    o.set_compaction_pri(match f.compaction_pri {
        0 => rocksdb::CompactionPri::ByCompensatedSize,
        1 => rocksdb::CompactionPri::OldestLargestSeqFirst,
        2 => rocksdb::CompactionPri::OldestSmallestSeqFirst,
        3 => rocksdb::CompactionPri::MinOverlappingRatio,
        v => bail!("--compaction_pri={v} is not supported by --engine=rocksdb (0..=3)"),
    });
    o.set_max_compaction_bytes(f.max_compaction_bytes.max(0) as u64);
    let c = compression(&f.compression_type)?;
    o.set_compression_type(c);
    if f.min_level_to_compress >= 0 {
        let k = f.min_level_to_compress.min(f.num_levels).max(0) as usize;
        let mut per = vec![DBCompressionType::None; k];
        per.resize(f.num_levels.max(0) as usize, c);
        o.set_compression_per_level(&per);
    }
    if f.compression_level != 32767 {
        o.set_compression_options(-14, int("compression_level", f.compression_level)?, 0, 0);
    }
    set_blob_options(f, &mut o)?;
    o.set_bytes_per_sync(f.bytes_per_sync.max(0) as u64);
    o.set_wal_bytes_per_sync(f.wal_bytes_per_sync.max(0) as u64);
    o.set_recycle_log_file_num(f.recycle_log_file_num.max(0) as usize);
    o.set_wal_ttl_seconds(f.wal_ttl_seconds.max(0) as u64);
    o.set_wal_size_limit_mb(f.wal_size_limit_MB.max(0) as u64);
    o.set_use_direct_reads(f.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(f.use_direct_io_for_flush_and_compaction);
    o.set_max_open_files(int("open_files", f.open_files)?);
    o.set_soft_pending_compaction_bytes_limit(f.soft_pending_compaction_bytes_limit.max(0) as usize);
    o.set_hard_pending_compaction_bytes_limit(f.hard_pending_compaction_bytes_limit.max(0) as usize);
    o.set_compaction_readahead_size(f.compaction_readahead_size.max(0) as usize);
    o.set_paranoid_checks(f.paranoid_checks);
    o.set_wal_recovery_mode(wal_recovery_mode(f.wal_recovery_mode)?);
    o.set_manual_wal_flush(f.manual_wal_flush);
    o.set_allow_concurrent_memtable_write(f.allow_concurrent_memtable_write);
    o.set_enable_pipelined_write(f.enable_pipelined_write);
    // db_bench's NewGenericRateLimiter(rate, 100 ms, fairness 10).
    match super::rate_limiter(f)? {
        Some((rate, false)) => o.set_ratelimiter(rate as i64, 100_000, 10),
        Some((rate, true)) => o.set_auto_tuned_ratelimiter(rate as i64, 100_000, 10),
        None => {}
    }
    if f.statistics {
        o.enable_statistics();
    }
    if let Some(op) = f.merge_op()? {
        // No native operator in the rocksdb crate: a Rust callback with
        // RocksDB's semantics (merge_operator.rs), under RocksDB's name.
        o.set_merge_operator_associative(op.class_name(), move |_key, existing, operands| {
            Some(op.merge(existing, operands))
        });
    }

    let mut t = BlockBasedOptions::default();
    t.set_block_size(f.block_size.max(1) as usize);
    t.set_block_restart_interval(int("block_restart_interval", f.block_restart_interval)?);
    t.set_format_version(int("format_version", f.format_version)?);
    t.set_cache_index_and_filter_blocks(f.cache_index_and_filter_blocks);
    t.set_pin_l0_filter_and_index_blocks_in_cache(f.pin_l0_filter_and_index_blocks_in_cache);
    if f.bloom_bits > 0.0 {
        if f.use_ribbon_filter {
            t.set_ribbon_filter(f.bloom_bits);
        } else {
            t.set_bloom_filter(f.bloom_bits, false);
        }
    }
    let budget = super::memory_budget(f)?;
    if f.cache_size <= 0 {
        t.disable_cache();
    } else {
        // With a memory budget the cache is the budget (see below).
        let cap = if budget > 0 {
            budget
        } else {
            f.cache_size as usize
        };
        let cache = match f.cache_type.as_str() {
            "lru_cache" => {
                let mut lo = LruCacheOptions::default();
                lo.set_capacity(cap);
                lo.set_num_shard_bits(int("cache_numshardbits", f.cache_numshardbits)?);
                Cache::new_lru_cache_opts(&lo)
            }
            "hyper_clock_cache" | "auto_hyper_clock_cache" => Cache::new_hyper_clock_cache(cap, 0),
            "fixed_hyper_clock_cache" => Cache::new_hyper_clock_cache(cap, f.block_size.max(1) as usize),
            other => bail!(
                "--cache_type={other} is not supported by --engine=rocksdb (lru_cache, hyper_clock_cache, \
                 auto_hyper_clock_cache, fixed_hyper_clock_cache)"
            ),
        };
        t.set_block_cache(&cache);
        if f.use_blob_cache && f.use_shared_block_and_blob_cache {
            o.set_blob_cache(&cache);
        }
        if budget > 0 {
            // The block cache holds the whole budget; the memtables are
            // charged to it (dummy entries), so data blocks get the rest.
            let buffer = match f.db_write_buffer_size {
                n if n > 0 => n as usize,
                _ => budget / 2,
            };
            let wbm = WriteBufferManager::new_write_buffer_manager_with_cache(buffer, false, cache);
            o.set_write_buffer_manager(&wbm);
        }
    }
    // db_bench: a blob cache of its own, an LRU cache of --blob_cache_size
    // with --blob_cache_numshardbits.
    if f.use_blob_cache && !f.use_shared_block_and_blob_cache {
        let mut lo = LruCacheOptions::default();
        lo.set_capacity(f.blob_cache_size.max(1) as usize);
        lo.set_num_shard_bits(int("blob_cache_numshardbits", f.blob_cache_numshardbits)?);
        o.set_blob_cache(&Cache::new_lru_cache_opts(&lo));
    }
    o.set_block_based_table_factory(&t);
    Ok(o)
}

/// The blob options the rocksdb crate has setters for, as db_bench sets
/// them (always, whether blob files are on or not).
fn set_blob_options(f: &Flags, o: &mut Options) -> Result<()> {
    o.set_enable_blob_files(f.enable_blob_files);
    o.set_min_blob_size(f.min_blob_size.max(0) as u64);
    o.set_blob_file_size(f.blob_file_size.max(1) as u64);
    o.set_blob_compression_type(compression(&f.blob_compression_type).map_err(|_| {
        Error(format!(
            "--blob_compression_type={} is not supported by --engine=rocksdb",
            f.blob_compression_type
        ))
    })?);
    o.set_enable_blob_gc(f.enable_blob_garbage_collection);
    o.set_blob_gc_age_cutoff(f.blob_garbage_collection_age_cutoff);
    o.set_blob_gc_force_threshold(f.blob_garbage_collection_force_threshold);
    o.set_blob_compaction_readahead_size(f.blob_compaction_readahead_size.max(0) as u64);
    Ok(())
}

/// The blob options the rocksdb crate 0.25 has no setter for
/// (`blob_file_starting_level`, `prepopulate_blob_cache`; RocksDB's C API
/// has them, the crate does not wrap them), in RocksDB's option-string
/// syntax. db_bench sets `prepopulate_blob_cache` only with
/// `--use_blob_cache=1`; the flags refuse 1 without it.
fn blob_option_string(f: &Flags) -> String {
    format!(
        "blob_file_starting_level={};prepopulate_blob_cache={}",
        f.blob_file_starting_level.max(0),
        if f.prepopulate_blob_cache == 1 {
            "kFlushOnly"
        } else {
            "kDisable"
        }
    )
}

/// A column family handle resolved at open: a pointer to the
/// `ColumnFamily` inside the `DB`'s family map.
///
/// Invariant: the map is never changed after open (this adapter calls no
/// `create_cf` / `drop_cf` on an open `RocksEngine`; `create_families`
/// works on its own `DB`), so map entries do not move, and `RocksEngine`
/// owns the `DB`, so the pointee outlives every use through `&self`.
struct CfHandle(*const ColumnFamily);

// SAFETY: `ColumnFamily` is `Send + Sync` (the crate says so); the pointer
// is only dereferenced to a shared reference (see the invariant above).
unsafe impl Send for CfHandle {}
// SAFETY: as for `Send`.
unsafe impl Sync for CfHandle {}

/// An open RocksDB.
pub struct RocksEngine {
    /// Handles of families 1..N (index i-1); empty with one family.
    cfs: Vec<CfHandle>,
    db: DB,
    opts: Options,
    batched_multiget: bool,
}

/// db_bench's whole `CompactionOptionsFIFO` as RocksDB's option string,
/// under `--compaction_style=2`: the rocksdb crate's `FifoCompactOptions`
/// sets only `max_table_files_size`, so `allow_compaction` (a mutable
/// option) is set by `SetOptions` right after open.
/// Options the rocksdb crate has no setter for, set on every family right
/// after open through `SetOptions` (RocksDB parses a struct option's
/// `{field=value;...}` into the current struct, changing only the fields
/// named): FIFO's `max_table_files_size` and `allow_compaction`,
/// universal's `allow_trivial_move` and `incremental` when asked for, and
/// the table factory's `block_size_deviation` when not RocksDB's 10.
fn after_open_options(f: &Flags) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if f.compaction_style == 2 {
        out.push((
            "compaction_options_fifo",
            format!(
                "{{max_table_files_size={};allow_compaction={}}}",
                (f.fifo_compaction_max_table_files_size_mb.max(0) as u64).saturating_mul(1 << 20),
                f.fifo_compaction_allow_compaction
            ),
        ));
    }
    if f.block_size_deviation != 10 {
        // RocksDB's default is 10; its table factory's fields are mutable.
        out.push((
            "block_based_table_factory",
            format!("{{block_size_deviation={}}}", f.block_size_deviation),
        ));
    }
    if f.compaction_style == 1 && (f.universal_allow_trivial_move || f.universal_incremental) {
        out.push((
            "compaction_options_universal",
            format!(
                "{{allow_trivial_move={};incremental={}}}",
                f.universal_allow_trivial_move, f.universal_incremental
            ),
        ));
    }
    out
}

/// Applies `after_open_options` to the default family (`cf` None) or `cf`.
fn set_after_open(db: &DB, cf: Option<&ColumnFamily>, opts: &[(&str, String)]) -> Result<()> {
    if opts.is_empty() {
        return Ok(());
    }
    let pairs: Vec<(&str, &str)> = opts.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match cf {
        None => db.set_options(&pairs),
        Some(cf) => db.set_options_cf(cf, &pairs),
    }
    .map_err(err)
}

impl RocksEngine {
    /// Opens (creating if missing) the DB at `path` with
    /// `--num_column_families` families.
    pub fn open(f: &Flags, path: &Path) -> Result<RocksEngine> {
        let mut opts = build_options(f)?;
        let n = f.num_column_families.max(1) as usize;
        let later = after_open_options(f);
        if n == 1 {
            let db = DB::open(&opts, path).map_err(err)?;
            set_after_open(&db, None, &later)?;
            return Ok(RocksEngine {
                cfs: Vec::new(),
                db,
                opts,
                batched_multiget: f.multiread_batched,
            });
        }
        opts.create_missing_column_families(true);
        let names = super::cf_names(n);
        let descriptors = names
            .iter()
            .map(|name| ColumnFamilyDescriptor::new(name, opts.clone()));
        let db = DB::open_cf_descriptors(&opts, path, descriptors).map_err(err)?;
        let mut cfs = Vec::with_capacity(n - 1);
        set_after_open(&db, None, &later)?;
        for name in &names[1..] {
            match db.cf_handle(name) {
                Some(cf) => {
                    set_after_open(&db, Some(cf), &later)?;
                    cfs.push(CfHandle(cf as *const ColumnFamily))
                }
                None => bail!("rocksdb: column family {name} missing after open"),
            }
        }
        Ok(RocksEngine {
            cfs,
            db,
            opts,
            batched_multiget: f.multiread_batched,
        })
    }

    /// The handle of family `cf`, None for `default` (plain calls).
    #[inline]
    fn cf(&self, cf: usize) -> Option<&ColumnFamily> {
        if cf == 0 {
            return None;
        }
        // SAFETY: see `CfHandle`: the entry lives in `self.db`'s unchanged
        // family map for as long as `self`.
        Some(unsafe { &*self.cfs[cf - 1].0 })
    }
}

/// See [`super::create_families`]. The `rocksdb` crate has no
/// `CreateColumnFamilies` (the C++ batch call). One by one: `create_cf` per
/// family (each rewrites RocksDB's OPTIONS file). Batched: the closest the
/// crate offers, reopening the DB with every family's descriptor and
/// `create_missing_column_families` (RocksDB creates them inside the open
/// and writes the OPTIONS file once); the time then includes that open.
pub fn create_families(
    f: &Flags,
    path: &Path,
    names: &[String],
    batched: bool,
) -> Result<CreateTiming> {
    let mut opts = build_options(f)?;
    let mut db = DB::open(&opts, path).map_err(err)?;
    if batched {
        db.flush_wal(true).map_err(err)?;
        drop(db);
        opts.create_missing_column_families(true);
        let descriptors = std::iter::once("default")
            .chain(names.iter().map(String::as_str))
            .map(|name| ColumnFamilyDescriptor::new(name, opts.clone()));
        let t = Instant::now();
        let db = DB::open_cf_descriptors(&opts, path, descriptors).map_err(err)?;
        let secs = t.elapsed().as_secs_f64();
        db.flush_wal(true).map_err(err)?;
        drop(db);
        return Ok(CreateTiming {
            secs,
            how: "rocksdb crate has no CreateColumnFamilies: one open with \
                  create_missing_column_families (time includes the open)",
        });
    }
    let t = Instant::now();
    for name in names {
        db.create_cf(name, &opts).map_err(err)?;
    }
    let secs = t.elapsed().as_secs_f64();
    db.flush_wal(true).map_err(err)?;
    drop(db);
    Ok(CreateTiming {
        secs,
        how: "one DB::create_cf call each",
    })
}

fn wo(o: &WriteOpts) -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_sync(o.sync);
    w.disable_wal(o.disable_wal);
    w
}

/// Parses `Cumulative stall: HH:MM:SS.sss H:M:S` from `rocksdb.dbstats`.
pub fn parse_cumulative_stall(dbstats: &str) -> Option<u64> {
    let line = dbstats
        .lines()
        .find(|l| l.starts_with("Cumulative stall:"))?;
    let hms = line.split_whitespace().nth(2)?;
    let mut parts = hms.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    Some(((h * 3600.0 + m * 60.0 + s) * 1e6) as u64)
}

impl Engine for RocksEngine {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn version(&self) -> String {
        ROCKSDB_VERSION.to_string()
    }

    fn num_cfs(&self) -> usize {
        self.cfs.len() + 1
    }

    fn put(&self, cf: usize, key: &[u8], value: &[u8], o: &WriteOpts) -> Result<()> {
        match self.cf(cf) {
            None => self.db.put_opt(key, value, &wo(o)),
            Some(h) => self.db.put_cf_opt(h, key, value, &wo(o)),
        }
        .map_err(err)
    }

    fn write(&self, batch: &Batch, o: &WriteOpts) -> Result<()> {
        let mut b = WriteBatch::default();
        for op in batch.iter() {
            match op {
                BatchOp::Put(cf, k, v) => match self.cf(cf) {
                    None => b.put(k, v),
                    Some(h) => b.put_cf(h, k, v),
                },
                BatchOp::Delete(cf, k) => match self.cf(cf) {
                    None => b.delete(k),
                    Some(h) => b.delete_cf(h, k),
                },
                BatchOp::DeleteRange(cf, s, e) => match self.cf(cf) {
                    None => b.delete_range(s, e),
                    Some(h) => b.delete_range_cf(h, s, e),
                },
            }
        }
        self.db.write_opt(b, &wo(o)).map_err(err)
    }

    /// A one-entry `WriteBatch` (the crate has no default-family
    /// `delete_range_opt`; db_bench also goes through a batch).
    fn delete_range(&self, cf: usize, start: &[u8], end: &[u8], o: &WriteOpts) -> Result<()> {
        let mut b = WriteBatch::default();
        match self.cf(cf) {
            None => b.delete_range(start, end),
            Some(h) => b.delete_range_cf(h, start, end),
        }
        self.db.write_opt(b, &wo(o)).map_err(err)
    }

    fn delete(&self, cf: usize, key: &[u8], o: &WriteOpts) -> Result<()> {
        match self.cf(cf) {
            None => self.db.delete_opt(key, &wo(o)),
            Some(h) => self.db.delete_cf_opt(h, key, &wo(o)),
        }
        .map_err(err)
    }

    fn merge(&self, cf: usize, key: &[u8], operand: &[u8], o: &WriteOpts) -> Result<()> {
        match self.cf(cf) {
            None => self.db.merge_opt(key, operand, &wo(o)),
            Some(h) => self.db.merge_cf_opt(h, key, operand, &wo(o)),
        }
        .map_err(err)
    }

    fn get(
        &self,
        cf: usize,
        key: &[u8],
        out: &mut Vec<u8>,
        verify_checksums: bool,
    ) -> Result<bool> {
        let mut ro = ReadOptions::default();
        ro.set_verify_checksums(verify_checksums);
        let v = match self.cf(cf) {
            None => self.db.get_pinned_opt(key, &ro),
            Some(h) => self.db.get_pinned_cf_opt(h, key, &ro),
        };
        Ok(super::copy_found(v.map_err(err)?, out))
    }

    fn multi_get(
        &self,
        cf: usize,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<()> {
        let ro = ReadOptions::default();
        if let Some(h) = self.cf(cf) {
            let results = if self.batched_multiget {
                self.db
                    .batched_multi_get_cf_opt(h, keys.iter().copied(), false, &ro)
                    .into_iter()
                    .map(|r| r.map(|v| v.map(|p| p.to_vec())))
                    .collect::<Vec<_>>()
            } else {
                self.db.multi_get_cf_opt(keys.iter().map(|k| (h, k)), &ro)
            };
            for (i, r) in results.into_iter().enumerate() {
                if let Some(v) = r.map_err(err)? {
                    found(i, &v);
                }
            }
            return Ok(());
        }
        if self.batched_multiget {
            let Some(cf) = self.db.cf_handle("default") else {
                bail!("rocksdb: no default column family")
            };
            for (i, r) in self
                .db
                .batched_multi_get_cf_opt(cf, keys.iter().copied(), false, &ro)
                .into_iter()
                .enumerate()
            {
                if let Some(v) = r.map_err(err)? {
                    found(i, &v);
                }
            }
        } else {
            for (i, r) in self
                .db
                .multi_get_opt(keys.iter(), &ro)
                .into_iter()
                .enumerate()
            {
                if let Some(v) = r.map_err(err)? {
                    found(i, &v);
                }
            }
        }
        Ok(())
    }

    fn new_iterator(&self, cf: usize, opts: &IterOpts) -> Result<Box<dyn EngineIter + '_>> {
        let mut ro = ReadOptions::default();
        ro.set_verify_checksums(opts.verify_checksums);
        ro.set_readahead_size(opts.readahead_size);
        if let Some(l) = &opts.lower {
            ro.set_iterate_lower_bound(l.clone());
        }
        if let Some(u) = &opts.upper {
            ro.set_iterate_upper_bound(u.clone());
        }
        ro.set_prefix_same_as_start(opts.prefix_same_as_start);
        ro.set_total_order_seek(opts.total_order_seek);
        Ok(Box::new(RocksIter(match self.cf(cf) {
            None => self.db.raw_iterator_opt(ro),
            Some(h) => self.db.raw_iterator_cf_opt(h, ro),
        })))
    }

    fn flush(&self) -> Result<()> {
        self.db.flush().map_err(err)
    }

    fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.db.compact_range(start, end);
        Ok(())
    }

    fn wait_for_compaction(&self) -> Result<()> {
        self.db
            .wait_for_compact(&WaitForCompactOptions::default())
            .map_err(err)
    }

    fn property(&self, name: &str) -> Option<String> {
        self.db.property_value(name).ok().flatten()
    }

    fn report(&self, which: Report) -> Option<String> {
        self.property(match which {
            // RocksDB reports bloom counters as statistics tickers, not per
            // level.
            Report::Bloom => return None,
            Report::Stats => "rocksdb.stats",
            Report::LevelStats => "rocksdb.levelstats",
            Report::SsTables => "rocksdb.sstables",
        })
    }

    fn stall_micros(&self) -> Option<u64> {
        self.property("rocksdb.dbstats")
            .and_then(|s| parse_cumulative_stall(&s))
    }

    fn statistics(&self) -> Option<String> {
        self.opts.get_statistics()
    }

    fn close(&self) -> Result<()> {
        self.db.flush_wal(true).map_err(err)
    }
}

struct RocksIter<'a>(rocksdb::DBRawIteratorWithThreadMode<'a, DB>);

impl EngineIter for RocksIter<'_> {
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
        self.0.key().unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.0.value().unwrap_or(&[])
    }
    fn status(&self) -> Result<()> {
        self.0.status().map_err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `destroy` keeps the contract of every engine's (issue 36, defect 1).
    #[test]
    fn destroy_keeps_what_is_not_the_dbs_and_refuses_a_db_in_use() {
        crate::engine::destroy::check_destroy_contract(
            "RocksDB",
            |dir: &Path| {
                let f = Flags::parse(&["--engine=rocksdb", "--compression_type=none"]).unwrap();
                let e = RocksEngine::open(&f, dir).unwrap();
                e.put(0, b"k", b"v", &WriteOpts::default()).unwrap();
                e
            },
            destroy,
        );
    }

    #[test]
    fn parses_stall_line() {
        let s = "** DB Stats **\nCumulative stall: 00:01:2.500 H:M:S, 3.1 percent\n";
        assert_eq!(parse_cumulative_stall(s), Some(62_500_000));
        assert_eq!(parse_cumulative_stall("nothing"), None);
    }

    #[test]
    fn rejects_unknown_values() {
        assert!(check_flags(&Flags::parse(&["--compression_type=xpress"]).unwrap()).is_err());
        assert!(check_flags(&Flags::parse(&["--cache_type=clock_cache"]).unwrap()).is_err());
        assert!(check_flags(&Flags::parse(&["--delayed_write_rate=1"]).unwrap()).is_ok());
        assert!(check_flags(&Flags::parse(&["--max_auto_readahead_size=65536"]).unwrap()).is_err());
        assert!(check_flags(
            &Flags::parse(&[
                "--wal_recovery_mode=3",
                "--manual_wal_flush=1",
                "--paranoid_checks=0",
                "--max_compaction_bytes=100000000",
                "--readahead_size=2097152",
            ])
            .unwrap()
        )
        .is_ok());
        assert!(check_flags(
            &Flags::parse(&["--compression_type=snappy", "--bloom_bits=10"]).unwrap()
        )
        .is_ok());
    }

    #[test]
    fn round_trip_through_rocksdb() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&[
            "--engine=rocksdb",
            "--compression_type=lz4",
            "--bloom_bits=10",
        ])
        .unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        let w = WriteOpts::default();
        e.put(0, b"a", b"1", &w).unwrap();
        let mut b = Batch::default();
        b.put(0, b"b", b"2");
        b.delete(0, b"a");
        e.write(&b, &w).unwrap();
        let mut out = Vec::new();
        assert!(!e.get(0, b"a", &mut out, true).unwrap());
        assert!(e.get(0, b"b", &mut out, true).unwrap());
        assert_eq!(out, b"2");
        e.flush().unwrap();
        let mut it = e.new_iterator(0, &IterOpts::default()).unwrap();
        it.seek_to_first();
        assert_eq!(it.key(), b"b");
        drop(it);
        assert!(e
            .report(Report::Stats)
            .unwrap()
            .contains("Compaction Stats"));
        assert!(e.stall_micros().is_some());
    }

    /// `--universal_incremental` and `--universal_allow_trivial_move` (no
    /// setter in the crate) reach every family: the OPTIONS file RocksDB
    /// writes after `SetOptions` names them in each family's section, and
    /// the other universal options keep their flags' values.
    /// Opens a RocksDB engine with `flags`, closes it, and returns the
    /// lines of its newest OPTIONS file that set `name`, trimmed.
    fn option_lines(flags: &[&str], name: &str) -> Vec<String> {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(flags).unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        e.close().unwrap();
        drop(e);
        let newest = shale::tools::OptionsFile::latest_in(d.path()).unwrap();
        let text = std::fs::read_to_string(newest).unwrap();
        let prefix = format!("{name}=");
        text.lines()
            .map(str::trim)
            .filter(|l| l.starts_with(&prefix))
            .map(String::from)
            .collect()
    }

    #[test]
    fn universal_options_without_a_setter_are_set_after_open() {
        let universal = option_lines(
            &[
                "--engine=rocksdb",
                "--compression_type=none",
                "--compaction_style=1",
                "--universal_size_ratio=7",
                "--universal_incremental=1",
                "--universal_allow_trivial_move=1",
                "--num_column_families=2",
            ],
            "compaction_options_universal",
        );
        assert_eq!(universal.len(), 2, "{universal:?}");
        for l in universal {
            assert!(l.contains("incremental=true"), "{l}");
            assert!(l.contains("allow_trivial_move=true"), "{l}");
            assert!(l.contains("size_ratio=7"), "{l}");
        }
    }

    /// `--block_size_deviation` (no crate setter) reaches every family's
    /// table options through SetOptions.
    #[test]
    fn block_size_deviation_is_set_after_open() {
        let lines = option_lines(
            &[
                "--engine=rocksdb",
                "--compression_type=none",
                "--block_size_deviation=25",
                "--num_column_families=2",
            ],
            "block_size_deviation",
        );
        assert_eq!(lines, ["block_size_deviation=25"; 2]);
    }

    /// `--num_column_families=3`: every call reaches the family it names,
    /// and the families persist (a second open finds the data).
    #[test]
    fn column_families_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&[
            "--engine=rocksdb",
            "--compression_type=none",
            "--num_column_families=3",
        ])
        .unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        assert_eq!(e.num_cfs(), 3);
        let w = WriteOpts::default();
        e.put(2, b"k2", b"v2", &w).unwrap();
        let mut b = Batch::default();
        b.put(1, b"k1", b"v1");
        b.put(0, b"k0", b"v0");
        b.delete(2, b"gone");
        e.write(&b, &w).unwrap();
        let mut out = Vec::new();
        for (cf, key) in [(0, b"k0"), (1, b"k1"), (2, b"k2")] {
            for other in 0..3 {
                assert_eq!(e.get(other, key, &mut out, true).unwrap(), other == cf);
            }
        }
        let mut got = Vec::new();
        e.multi_get(2, &[b"k2", b"k1"], &mut |i, v| got.push((i, v.to_vec())))
            .unwrap();
        assert_eq!(got, vec![(0, b"v2".to_vec())]);
        let mut it = e.new_iterator(1, &IterOpts::default()).unwrap();
        it.seek_to_first();
        assert_eq!(it.key(), b"k1");
        it.next();
        assert!(!it.valid());
        drop(it);
        e.close().unwrap();
        drop(e);
        let t = create_families(&f, &d.path().join("other"), &cf_names_for_test(), true);
        assert!(t.is_ok());
        let e = RocksEngine::open(&f, d.path()).unwrap();
        assert!(e.get(2, b"k2", &mut out, true).unwrap());
        assert_eq!(out, b"v2");
    }

    /// The callbacks behave as RocksDB's native operators: uint64add
    /// counts, also across a flush and a compaction (partial merges), and
    /// counts an operand of another length as 0.
    #[test]
    fn merge_callbacks_follow_rocksdb_semantics() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&[
            "--engine=rocksdb",
            "--compression_type=none",
            "--merge_operator=uint64add",
            "--num_column_families=2",
        ])
        .unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        let w = WriteOpts::default();
        for cf in 0..2 {
            for i in 1..=10u64 {
                e.merge(cf, b"n", &i.to_le_bytes(), &w).unwrap();
                if i == 5 {
                    e.flush().unwrap();
                }
            }
        }
        e.merge(1, b"n", b"bad", &w).unwrap();
        e.compact_range(None, None).unwrap();
        let mut out = Vec::new();
        for cf in 0..2 {
            assert!(e.get(cf, b"n", &mut out, true).unwrap());
            assert_eq!(out, 55u64.to_le_bytes(), "cf {cf}");
        }
        e.close().unwrap();
        drop(e);
        let f = Flags::parse(&[
            "--engine=rocksdb",
            "--compression_type=none",
            "--merge_operator=stringappend",
        ])
        .unwrap();
        let e = RocksEngine::open(&f, &d.path().join("sa")).unwrap();
        e.put(0, b"k", b"a", &w).unwrap();
        e.merge(0, b"k", b"b", &w).unwrap();
        e.merge(0, b"k", b"c", &w).unwrap();
        assert!(e.get(0, b"k", &mut out, true).unwrap());
        assert_eq!(out, b"a,b,c");
    }

    fn cf_names_for_test() -> Vec<String> {
        crate::engine::cf_names(3).into_iter().skip(1).collect()
    }

    /// The OPTIONS files RocksDB wrote into `dir`, concatenated.
    fn options_files(dir: &Path) -> String {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|x| x.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("OPTIONS-"))
            })
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect()
    }

    /// Every blob flag reaches RocksDB (its OPTIONS file), those without a
    /// crate setter through the option string; the blob properties the
    /// summary reads answer with numbers.
    #[test]
    fn blob_flags_reach_rocksdb() {
        let d = tempfile::tempdir().unwrap();
        let base = [
            "--engine=rocksdb",
            "--compression_type=lz4",
            "--enable_blob_files=1",
            "--min_blob_size=100",
            "--use_blob_cache=1",
        ];
        let f = Flags::parse(&base).unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        let w = WriteOpts::default();
        for i in 0..100u32 {
            e.put(0, format!("k{i:04}").as_bytes(), &[b'v'; 1000], &w)
                .unwrap();
        }
        e.flush().unwrap();
        let mut out = Vec::new();
        assert!(e.get(0, b"k0042", &mut out, true).unwrap());
        assert_eq!(out, vec![b'v'; 1000]);
        for name in [
            "rocksdb.num-blob-files",
            "rocksdb.total-blob-file-size",
            "rocksdb.live-blob-file-size",
            "rocksdb.live-blob-file-garbage-size",
        ] {
            let v = e.property(name).unwrap();
            assert!(v.trim().parse::<u64>().is_ok(), "{name}: {v}");
        }
        assert_ne!(e.property("rocksdb.num-blob-files").unwrap().trim(), "0");
        e.close().unwrap();
        drop(e);
        let mut all = base.to_vec();
        all.extend([
            "--blob_file_size=1048576",
            "--blob_compression_type=zstd",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_garbage_collection_force_threshold=0.75",
            "--blob_compaction_readahead_size=65536",
            "--blob_file_starting_level=1",
            "--prepopulate_blob_cache=1",
        ]);
        let d2 = tempfile::tempdir().unwrap();
        let e = RocksEngine::open(&Flags::parse(&all).unwrap(), d2.path()).unwrap();
        e.close().unwrap();
        drop(e);
        let text = options_files(d2.path());
        for want in [
            "enable_blob_files=true",
            "min_blob_size=100",
            "blob_file_size=1048576",
            "blob_compression_type=kZSTD",
            "enable_blob_garbage_collection=true",
            "blob_garbage_collection_age_cutoff=0.500000",
            "blob_garbage_collection_force_threshold=0.750000",
            "blob_compaction_readahead_size=65536",
            "blob_file_starting_level=1",
            "prepopulate_blob_cache=kFlushOnly",
        ] {
            assert!(text.contains(want), "{want} not in OPTIONS file");
        }
        // A blob cache of its own (db_bench's --blob_cache_size) is
        // accepted; a codec RocksDB lacks is refused, naming the flag.
        let mut own = base.to_vec();
        own.extend([
            "--use_shared_block_and_blob_cache=0",
            "--blob_cache_size=1048576",
        ]);
        assert!(check_flags(&Flags::parse(&own).unwrap()).is_ok());
        let mut bad = base.to_vec();
        bad.push("--blob_compression_type=xpress");
        let e = check_flags(&Flags::parse(&bad).unwrap()).unwrap_err();
        assert!(e.0.contains("--blob_compression_type"), "{e}");
    }

    /// The options RocksDB really used, from the OPTIONS file it writes.
    #[test]
    fn write_control_and_wal_flags_reach_rocksdb() {
        let d = tempfile::tempdir().unwrap();
        let f = Flags::parse(&[
            "--engine=rocksdb",
            // The crate is built with lz4 and zstd only: db_bench's default
            // snappy is refused by RocksDB at open.
            "--compression_type=lz4",
            "--delayed_write_rate=1048576",
            "--max_compaction_bytes=100000000",
            "--soft_pending_compaction_bytes_limit=1000000",
            "--hard_pending_compaction_bytes_limit=2000000",
            "--compaction_readahead_size=65536",
            "--wal_recovery_mode=1",
            "--manual_wal_flush=1",
            "--paranoid_checks=0",
        ])
        .unwrap();
        let e = RocksEngine::open(&f, d.path()).unwrap();
        e.close().unwrap();
        let text = options_files(d.path());
        for want in [
            "delayed_write_rate=1048576",
            "max_compaction_bytes=100000000",
            "soft_pending_compaction_bytes_limit=1000000",
            "hard_pending_compaction_bytes_limit=2000000",
            "compaction_readahead_size=65536",
            "wal_recovery_mode=kAbsoluteConsistency",
            "manual_wal_flush=true",
            "paranoid_checks=false",
        ] {
            assert!(text.contains(want), "{want} not in OPTIONS file");
        }
    }
}
