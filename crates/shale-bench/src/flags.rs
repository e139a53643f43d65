//! gflags-style flags: the table (names, types, db_bench defaults, help),
//! parsing, validation and the per-engine rejection helper.
//!
//! Accepted forms: `--name=value`, `-name=value`, `--name value`; booleans
//! also `--name` (true) and `--noname` (false), values `1/0/true/false/
//! yes/no/t/f/y/n`. An unknown flag or a malformed value is an error, never
//! ignored. Engine options carry a category: `Eng` flags are mapped by every
//! on-disk engine, `Rocks` flags only by RocksDB (other engines reject them
//! unless they keep db_bench's default value). Plain data; not shared.

use std::collections::BTreeSet;

use crate::error::{bail, Error, Result};
use crate::merge_operator::MergeOp;

/// Who honours a flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// The driver itself (workload, output).
    Gen,
    /// An engine option every on-disk engine maps.
    Eng,
    /// A RocksDB option other engines do not have.
    Rocks,
    /// A Shale option other engines do not have.
    Shale,
}

/// One flag's description.
#[derive(Debug, Clone, Copy)]
pub struct FlagDef {
    /// Name without dashes.
    pub name: &'static str,
    /// Who honours it.
    pub category: Category,
    /// Help text.
    pub help: &'static str,
    /// Takes no value (`--name` alone means true).
    pub is_bool: bool,
}

/// A flag value type.
pub trait FlagValue: Sized {
    /// True for `bool`.
    const IS_BOOL: bool = false;
    /// Parses the text of `--name=<text>`.
    fn parse_flag(name: &str, text: &str) -> Result<Self>;
    /// The value as text (for JSON and comparison with defaults).
    fn show(&self) -> String;
}

impl FlagValue for bool {
    const IS_BOOL: bool = true;
    fn parse_flag(name: &str, text: &str) -> Result<bool> {
        match text.to_ascii_lowercase().as_str() {
            "1" | "true" | "t" | "yes" | "y" => Ok(true),
            "0" | "false" | "f" | "no" | "n" => Ok(false),
            _ => Err(Error(format!(
                "invalid value '{text}' for --{name}: expected a boolean (1/0/true/false)"
            ))),
        }
    }
    fn show(&self) -> String {
        if *self { "true" } else { "false" }.to_string()
    }
}

impl FlagValue for i64 {
    fn parse_flag(name: &str, text: &str) -> Result<i64> {
        text.trim().parse::<i64>().map_err(|_| {
            Error(format!(
                "invalid value '{text}' for --{name}: expected an integer"
            ))
        })
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

impl FlagValue for f64 {
    fn parse_flag(name: &str, text: &str) -> Result<f64> {
        match text.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(Error(format!(
                "invalid value '{text}' for --{name}: expected a number"
            ))),
        }
    }
    fn show(&self) -> String {
        format!("{self}")
    }
}

impl FlagValue for String {
    fn parse_flag(_name: &str, text: &str) -> Result<String> {
        Ok(text.to_string())
    }
    fn show(&self) -> String {
        self.clone()
    }
}

macro_rules! define_flags {
    ($( $name:ident : $ty:ty = $default:expr , $cat:ident , $help:expr ;)*) => {
        /// Every flag of a run, with db_bench's defaults.
        // Field names are db_bench's flag names (`wal_size_limit_MB`).
        #[allow(non_snake_case)]
        #[derive(Debug, Clone)]
        pub struct Flags {
            $( #[doc = $help] pub $name: $ty, )*
            explicit: BTreeSet<&'static str>,
        }

        impl Default for Flags {
            fn default() -> Self {
                Flags { $( $name: $default, )* explicit: BTreeSet::new() }
            }
        }

        /// The flag table, in declaration order.
        pub const FLAG_DEFS: &[FlagDef] = &[
            $( FlagDef { name: stringify!($name), category: Category::$cat, help: $help,
                         is_bool: <$ty as FlagValue>::IS_BOOL }, )*
        ];

        impl Flags {
            fn set_raw(&mut self, name: &str, text: &str) -> Result<()> {
                match name {
                    $( stringify!($name) => {
                        self.$name = <$ty as FlagValue>::parse_flag(name, text)?;
                        self.explicit.insert(stringify!($name));
                    } )*
                    _ => return Err(unknown_flag(name)),
                }
                Ok(())
            }

            /// Every flag and its value as text, in table order.
            pub fn values(&self) -> Vec<(&'static str, String)> {
                vec![ $( (stringify!($name), self.$name.show()), )* ]
            }
        }
    };
}

const MIB: i64 = 1 << 20;

define_flags! {
    // ---- driver ----
    benchmarks: String = "fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,seekrandom,readwhilewriting,stats".to_string(), Gen,
        "Comma-separated benchmark list, run in order on one DB handle; name[X<n>-W<m>] runs m warm-up and n measured passes.";
    db: String = "/tmp/shale-bench-db".to_string(), Gen, "DB directory (destroyed at start unless --use_existing_db).";
    engine: String = "shale".to_string(), Gen, "Engine: shale, rocksdb, fjall or memory (in-process BTreeMap, for tests).";
    num: i64 = 1_000_000, Gen, "Number of keys; the key space is [0, num).";
    reads: i64 = -1, Gen, "Reads per thread (-1 = num).";
    writes: i64 = -1, Gen, "Writes per thread (-1 = num).";
    deletes: i64 = -1, Gen, "Deletes per thread (-1 = num).";
    duration: i64 = 0, Gen, "Seconds to run the time-bounded benchmarks (0 = op counts).";
    ops_between_duration_checks: i64 = 1000, Gen, "Ops between clock checks with --duration.";
    threads: i64 = 1, Gen, "Concurrent threads per benchmark.";
    key_size: i64 = 16, Gen, "Key size in bytes.";
    value_size: i64 = 100, Gen, "Value size in bytes.";
    value_size_distribution_type: String = "fixed".to_string(), Gen, "Only 'fixed' (db_bench's others are not reproducible).";
    compression_ratio: f64 = 0.5, Gen, "Fraction of random bytes in each value (0..1].";
    seed: i64 = 0, Gen, "Base seed (0 = current time in microseconds, printed).";
    db_bench_compat_values: bool = false, Gen, "Seed the value generator with db_bench's fixed 301 (byte-identical values).";
    use_existing_db: bool = false, Gen, "Do not destroy the DB; skip the fill benchmarks.";
    keys_per_prefix: i64 = 0, Gen, "Keys per prefix (0 = no prefix).";
    prefix_size: i64 = 0, Gen, "Prefix length in bytes; > 0 also sets the prefix extractor to a fixed prefix of this length (as db_bench: NewFixedPrefixTransform).";
    prefix_same_as_start: bool = false, Gen, "Iterators return only keys with the seek key's prefix (ReadOptions::prefix_same_as_start; needs --prefix_size > 0).";
    total_order_seek: bool = false, Gen, "Iterators ignore prefix filters (ReadOptions::total_order_seek).";
    seek_nexts: i64 = 0, Gen, "Next()/Prev() calls after each seek.";
    reverse_iterator: bool = false, Gen, "seekrandom steps with Prev() instead of Next().";
    max_scan_distance: i64 = 0, Gen, "seekrandom iterator bound distance in keys (0 = none).";
    seek_key_range_start: i64 = 0, Gen, "[shale-bench only; db_bench has no such flag] seekrandom (and the readers of seekrandomwhilewriting) seek to key numbers start + rand % (end - start) instead of rand % num (same single draw per seek).";
    seek_key_range_end: i64 = -1, Gen, "[shale-bench only] End (exclusive) of the seekrandom key-number range (-1 = --num).";
    batch_size: i64 = 1, Gen, "Entries per WriteBatch (fills, deleteseq, deleterandom) or keys per MultiGet.";
    writes_before_delete_range: i64 = 0, Gen, "Fills (db_bench's DoWrite): puts of a thread before range tombstones start.";
    writes_per_range_tombstone: i64 = 0, Gen, "Fills: after the num_written-th put of a thread, when n = num_written - writes_before_delete_range > 0 is a multiple of this and n / this <= max_num_range_tombstones, add a range tombstone to the same batch (0 = none). Its begin is the fill's next key number (fillseq: the next sequence number, which no put then gets; fillrandom/overwrite: one more draw % (num + max_num_range_tombstones); filluniquerandom: the next permutation entry); it deletes [begin, begin + range_tombstone_width). Neither counted in the result line's ops nor in its MB/s (as db_bench); the summary line and --json give range_tombstones. Needs an engine with DeleteRange (shale, rocksdb) unless --expand_range_tombstones. With --num_column_families > 1 a DeleteRange goes to every family (an expanded Delete to its key's family).";
    range_tombstone_width: i64 = 100, Gen, "Fills: key numbers each range tombstone covers.";
    max_num_range_tombstones: i64 = 0, Gen, "Fills: most range tombstones per thread (0 = none). As in db_bench it also widens the random and unique key generators of every fill to [0, num + max_num_range_tombstones).";
    expand_range_tombstones: bool = false, Gen, "Fills: write each range tombstone as range_tombstone_width point Deletes (in the same batch) instead of one DeleteRange.";
    delete_range_start: i64 = 0, Gen, "[shale-bench only] First key number of the deleterange benchmark; deleteseq also starts there (db_bench's deleteseq: 0).";
    delete_range_end: i64 = -1, Gen, "[shale-bench only] End (exclusive) key number of the deleterange benchmark (-1 = --num).";
    readwritepercent: i64 = 90, Gen, "readrandomwriterandom: reads among each 100 ops.";
    merge_keys: i64 = -1, Gen, "Distinct keys of mergerandom and readrandommergerandom: key space [0, merge_keys) (-1 = num).";
    mergereadpercent: i64 = 70, Gen, "readrandommergerandom: chance in percent that an op is a Merge (else a Get).";
    multiread_batched: bool = false, Gen, "multireadrandom uses the batched MultiGet API (RocksDB).";
    finish_after_writes: bool = false, Gen, "*whilewriting writer stops after --writes puts.";
    benchmark_write_rate_limit: i64 = 0, Gen, "Bytes/s cap on writes (0 = none).";
    benchmark_read_rate_limit: i64 = 0, Gen, "Ops/s cap on reads (0 = none).";
    sync: bool = false, Gen, "fsync the WAL on every write.";
    disable_wal: bool = false, Gen, "Write without the WAL.";
    verify_checksum: bool = true, Gen, "ReadOptions::verify_checksums.";
    histogram: bool = false, Gen, "Print latency histograms.";
    slow_usecs: i64 = 1_000_000, Gen, "With --histogram, report ops slower than this on stderr.";
    progress_reports: bool = true, Gen, "Print progress / interval lines on stderr.";
    stats_interval: i64 = 0, Gen, "Print an interval line every N ops per thread (0 = off).";
    stats_interval_seconds: i64 = 0, Gen, "Print an interval line every S seconds per thread (overrides --stats_interval).";
    report_interval_seconds: i64 = 0, Gen, "Write --report_file every S seconds (0 = off).";
    space_sample_ms: i64 = 0, Gen, "Sample the DB directory's size every N ms (any engine) and print its peak per benchmark (Summary peak_db_size, peak_space_amp) and over the run (0 = off).";
    report_file: String = "report.csv".to_string(), Gen, "CSV of secs_elapsed,interval_qps.";
    statistics: bool = false, Gen, "Engine statistics dump after all benchmarks (RocksDB tickers; Shale counters).";
    arrival_rate: f64 = 0.0, Gen, "Open loop: total ops/s at fixed intended times; latency measured from the intended start (0 = closed loop).";
    latency_sla_us: i64 = 0, Gen, "Open loop: count goodput = ops within this latency.";
    json: String = String::new(), Gen, "Append one JSON object per benchmark to this file.";
    chart: String = String::new(), Gen, "Write throughput and p99 latency over time, per benchmark, as an SVG chart with axes, units and a legend (and the numbers as FILE.csv).";
    summary: bool = true, Gen, "Print the one-line resource summary after each benchmark.";
    num_column_families: i64 = 1, Gen, "Column families of the DB: 'default' plus column_family_name_000001..; key v lives in family v % N (as db_bench). Also N for the cfscale benchmark. shale, rocksdb and fjall (keyspaces) only.";
    cfscale_one_by_one: i64 = 0, Gen, "cfscale: how many families its create_one step creates one by one (0 = all N-1; RocksDB's create_cf rewrites its OPTIONS file each time, ~0.1 s per family at N = 1000).";
    // ---- engine options mapped by every engine ----
    write_buffer_size: i64 = 64 * MIB, Eng, "Memtable size in bytes.";
    max_write_buffer_number: i64 = 2, Eng, "Memtables kept before writes stall.";
    memtable_bloom_size_ratio: f64 = 0.0, Eng, "Memtable bloom filter size as a share of write_buffer_size (0 = none).";
    memtable_whole_key_filtering: bool = false, Eng, "Memtable bloom also over whole keys (with a prefix extractor; without one it is whole-key).";
    level0_file_num_compaction_trigger: i64 = 4, Eng, "L0 files that trigger compaction.";
    disable_auto_compactions: bool = false, Eng, "No automatic compactions (RocksDB's disable_auto_compactions: no L0 or pending-bytes stalls either); compact and compactall still compact.";
    level0_slowdown_writes_trigger: i64 = 20, Eng, "L0 files that slow writes.";
    level0_stop_writes_trigger: i64 = 36, Eng, "L0 files that stop writes.";
    max_bytes_for_level_base: i64 = 256 * MIB, Eng, "Target size of L1.";
    max_bytes_for_level_multiplier: f64 = 10.0, Eng, "Level size growth factor.";
    level_compaction_dynamic_level_bytes: bool = false, Eng, "Size levels from the last one.";
    target_file_size_base: i64 = 64 * MIB, Eng, "Target SST size at L1.";
    target_file_size_multiplier: i64 = 1, Eng, "Target SST size growth per level.";
    max_background_jobs: i64 = 2, Eng, "Background flush + compaction threads.";
    subcompactions: i64 = 1, Eng, "Threads one compaction may use (max_subcompactions).";
    num_levels: i64 = 7, Eng, "Number of levels.";
    cache_size: i64 = 8 * MIB, Eng, "Block cache bytes (<= 0: none).";
    cache_type: String = "lru_cache".to_string(), Eng, "lru_cache or hyper_clock_cache.";
    cache_numshardbits: i64 = -1, Eng, "Block cache shard bits (-1 = automatic).";
    cache_index_and_filter_blocks: bool = false, Eng, "Index/filter blocks in the block cache (high priority).";
    advise_random_on_open: bool = true, Eng, "Open table files with a random-access hint (posix_fadvise RANDOM): point reads do not pull in the kernel's readahead.";
    db_write_buffer_size: i64 = 0, Eng, "One memtable budget for all column families (0 = none).";
    rate_limiter_bytes_per_sec: i64 = 0, Eng, "Bytes/s limit on flush and compaction writes (0 = none). shale: Options::rate_limiter (RateLimiter::generic, 100 ms refills, fairness 10); rocksdb: Options::set_ratelimiter.";
    rate_limiter_auto_tuned: bool = false, Eng, "Auto-tune the rate limiter within [rate/20, rate] (RocksDB's auto_tuned; needs --rate_limiter_bytes_per_sec > 0). rocksdb: Options::set_auto_tuned_ratelimiter.";
    memory_budget: i64 = 0, Eng, "One memory budget (0 = none). shale: Options::memory_budget (memtables, table readers, IO buffers and the block cache share it; the cache gets what the others leave, at most --cache_size). rocksdb: the block cache of this capacity with a WriteBufferManager charging the memtables to it (buffer --db_write_buffer_size, or half the budget). Needs --cache_size >= it.";
    bloom_bits: f64 = -1.0, Eng, "Bloom filter bits per key (-1 or 0: no filter).";
    block_size: i64 = 4096, Eng, "Data block size.";
    block_restart_interval: i64 = 16, Eng, "Keys between restart points.";
    block_size_deviation: i64 = 10, Eng, "Cut a data block before an entry that would take it past --block_size once it is more than 100 - this percent full (BlockBasedTableOptions::block_size_deviation; 0 = off). shale: Options::block_size_deviation; rocksdb: set after open through SetOptions (the crate has no setter).";
    compression_type: String = "snappy".to_string(), Eng, "Block compression (none, lz4, zstd; RocksDB also snappy, zlib, bzip2, lz4hc). Not given: snappy, as db_bench, which Shale lacks, so --engine=shale uses lz4.";
    min_level_to_compress: i64 = -1, Eng, "Levels below this are uncompressed (-1 = all compressed).";
    compaction_style: i64 = 0, Eng, "0 level, 1 universal, 2 FIFO (fjall: 0 only).";
    fifo_compaction_max_table_files_size_mb: i64 = 0, Eng, "FIFO (--compaction_style=2): total table MiB past which the oldest tables are dropped (CompactionOptionsFIFO::max_table_files_size). db_bench's default 0 drops every table at once in RocksDB; shale refuses 0 (set it).";
    fifo_compaction_allow_compaction: bool = true, Eng, "FIFO: merge small newest L0 tables (CompactionOptionsFIFO::allow_compaction; db_bench's default true).";
    fifo_compaction_ttl: i64 = 0, Eng, "FIFO: drop tables whose newest entry is older than this many seconds (0 = never; RocksDB's Options::ttl).";
    max_compaction_bytes: i64 = 0, Eng, "Max bytes per compaction (0 = 25 x target_file_size_base).";
    soft_pending_compaction_bytes_limit: i64 = 64 << 30, Eng, "Writes slow down at this many pending compaction bytes (0 = off).";
    hard_pending_compaction_bytes_limit: i64 = 128 << 30, Eng, "Writes stop at this many pending compaction bytes (0 = off).";
    delayed_write_rate: i64 = 8 * MIB, Eng, "Write rate in bytes/s while writes are slowed down.";
    compaction_readahead_size: i64 = 0, Eng, "Compaction input readahead bytes (db_bench 7.8.3 default 0; 9.x uses 2 MiB).";
    readahead_size: i64 = 0, Eng, "Iterator readahead bytes (ReadOptions::readahead_size; 0 = automatic).";
    max_auto_readahead_size: i64 = 256 << 10, Eng, "Cap of automatic iterator readahead.";
    paranoid_checks: bool = true, Eng, "Extra checks at open and on reads.";
    wal_recovery_mode: i64 = 2, Eng, "WAL recovery: 0 tolerate corrupted tail, 1 absolute consistency, 2 point in time, 3 skip corrupted records.";
    manual_wal_flush: bool = false, Eng, "Buffer WAL writes in the process until flushed.";
    bytes_per_sync: i64 = 0, Eng, "Start writeback of flush/compaction output every this many bytes, all but the last 1 MiB (sync_file_range; 0 = off).";
    wal_bytes_per_sync: i64 = 0, Eng, "The same for WAL files (0 = off).";
    recycle_log_file_num: i64 = 0, Eng, "Keep up to this many obsolete WAL files and reuse them as new WALs (0 = off; needs --wal_recovery_mode=2 or 3).";
    wal_ttl_seconds: i64 = 0, Eng, "WAL archiving: keep obsolete WALs in archive/ this many seconds (0 = no age limit; with --wal_size_limit_MB=0 archiving is off).";
    wal_size_limit_MB: i64 = 0, Eng, "WAL archiving: keep at most this many MiB of obsolete WALs in archive/ (0 = no size limit).";
    allow_concurrent_memtable_write: bool = true, Eng, "Members of a write group insert into the memtable in parallel.";
    open_files: i64 = -1, Eng, "max_open_files: -1 keeps every table open; n >= 20 caches at most n - 10 table readers.";
    universal_size_ratio: i64 = 0, Eng, "Universal: percentage flexibility comparing run sizes (0 = engine default, 1).";
    universal_min_merge_width: i64 = 0, Eng, "Universal: fewest runs merged by size ratio (0 = engine default, 2).";
    universal_max_merge_width: i64 = 0, Eng, "Universal: most runs merged by size ratio (0 = engine default, unbounded).";
    universal_max_size_amplification_percent: i64 = 0, Eng, "Universal: space amplification (%) that triggers a full merge (0 = engine default, 200).";
    universal_compression_size_percent: i64 = -1, Eng, "Universal: share (%) of the data, newest first, left uncompressed (-1 = compress all).";
    universal_allow_trivial_move: bool = false, Eng, "Universal: move disjoint runs without rewriting them (shale; rocksdb: set after open through SetOptions, the crate has no setter).";
    universal_incremental: bool = false, Eng, "Universal: space-amplification merges as key-range slices of the level above the last (shale; needs --num_levels >= 3; rocksdb: set after open through SetOptions, the crate has no setter).";
    merge_operator: String = String::new(), Eng, "Merge operator of every family (\"\" = none; needed by mergerandom and readrandommergerandom): put, uint64add, max or stringappend (delimiter ','), or their RocksDB class names. shale and rocksdb only. Merge operands are --value_size bytes from the value generator, as db_bench's gen.Generate(); uint64add therefore needs --value_size=8 on shale, whose operator fails reads on other lengths (rejected up front), while rocksdb counts them as 0 as RocksDB's uint64add does. RocksDB: the rocksdb crate offers no native operator, so these are Rust callbacks (set_merge_operator_associative) with RocksDB's semantics; each merge call also pays the C API's overhead (operand pointer arrays, the result copied out of a Rust allocation), which db_bench's native operators do not.";
    // ---- Integrated BlobDB (key-value separation; db_bench's names and defaults) ----
    enable_blob_files: bool = false, Eng, "Values of at least --min_blob_size bytes go to blob files, written by flushes and compactions (shale: CfOptions::blob; rocksdb: set_enable_blob_files; fjall: KeyspaceCreateOptions::with_kv_separation). The other blob flags need it (unless --use_existing_db: the DB may hold blob files).";
    min_blob_size: i64 = 0, Eng, "Blob files: smallest value (bytes) moved to a blob file (fjall: separation_threshold).";
    blob_file_size: i64 = 256 * MIB, Eng, "Blob files: a blob file is closed past this many bytes (fjall: file_target_size).";
    blob_compression_type: String = "none".to_string(), Eng, "Blob files: compression of each blob (shale: none, lz4, zstd; rocksdb also snappy, zlib, bzip2, lz4hc; fjall: none, lz4).";
    enable_blob_garbage_collection: bool = false, Eng, "Blob files: compactions relocate the live blobs of the oldest blob files, so those empty and are deleted (fjall: refused, its collection follows another rule).";
    blob_garbage_collection_age_cutoff: f64 = 0.25, Eng, "Blob files: share (0..=1) of the blob files, oldest first, garbage collection relocates (needs --enable_blob_garbage_collection=1).";
    blob_garbage_collection_force_threshold: f64 = 1.0, Eng, "Blob files: garbage share (0..=1) of the oldest blob files that forces compactions of the tables referencing them (needs --enable_blob_garbage_collection=1).";
    blob_compaction_readahead_size: i64 = 0, Eng, "Blob files: bytes compactions read ahead in a blob file they relocate blobs from (0 = none).";
    blob_file_starting_level: i64 = 0, Eng, "Blob files: first level whose compactions write blob files (0 = flushes too).";
    use_blob_cache: bool = false, Eng, "Blob files: cache blobs (db_bench: in the block cache with --use_shared_block_and_blob_cache=1, else a cache of its own of --blob_cache_size). shale and fjall always cache blobs in the block cache (shale at bottom priority): --use_blob_cache=1 --use_shared_block_and_blob_cache=1 is what they run, and the header warns when --enable_blob_files=1 comes without --use_blob_cache=1.";
    use_shared_block_and_blob_cache: bool = true, Eng, "Blob files: with --use_blob_cache=1, blobs share the block cache (0 = a blob cache of its own: rocksdb only).";
    prepopulate_blob_cache: i64 = 0, Eng, "Blob files: 1 = flushes insert the blobs they write into the blob cache (kFlushOnly; needs --use_blob_cache=1, as db_bench reads it only then), 0 = no.";
    blob_cache_size: i64 = 8 * MIB, Rocks, "Blob files: bytes of the blob cache of its own (--use_blob_cache=1 --use_shared_block_and_blob_cache=0).";
    blob_cache_numshardbits: i64 = 6, Rocks, "Blob files: shard bits of the blob cache of its own.";
    // ---- Shale-only options ----
    wal_mmap_writes: bool = true, Shale, "Write WAL files through a shared memory mapping (appends need no system call).";
    level_compaction_dynamic_file_size: bool = true, Shale, "Cut compaction outputs at the next level's file boundaries (RocksDB's option, default true there too; db_bench has no flag for it).";
    bloom_bits_per_level: String = String::new(), Shale, "Bloom bits per key by output level, comma-separated (Options::bloom_bits_per_key_per_level; the last applies deeper; empty = --bloom_bits everywhere).";
    detect_insert_streams: i64 = -1, Shale, "End flush outputs where an ascending insert stream of the memtable ends (CfOptions::detect_insert_streams): -1 = engine default (on for leveled compaction), 0 = off, 1 = on.";
    sst_partitioner_fixed_prefix_len: i64 = 0, Shale, "Flush and compaction outputs never span two key prefixes of this length (RocksDB's sst_partitioner_factory = NewSstPartitionerFixedPrefixFactory; db_bench has no flag; 0 = none).";
    block_align: bool = false, Shale, "Align data blocks on the page size (db_bench's --block_align; needs --compression_type=none and a power-of-two --block_size; the rocksdb crate has no setter, so Shale only).";
    blob_garbage_collection_min_garbage_ratio: f64 = 0.0, Shale, "Blob files: a blob file below the age cutoff is relocated only once this share (0..=1) of its bytes is garbage (BlobOptions::blob_garbage_collection_min_garbage_ratio; 0 = every file below the cutoff, RocksDB's rule; needs --enable_blob_garbage_collection=1).";
    block_restart_bytes: i64 = 1024, Shale, "Also restart data blocks once entries since the last restart span this many bytes (0 = by count only, as RocksDB).";
    // ---- RocksDB-only options ----
    min_write_buffer_number_to_merge: i64 = 1, Rocks, "Memtables merged per flush.";
    max_background_compactions: i64 = -1, Rocks, "Compaction threads (-1 = derived).";
    max_background_flushes: i64 = -1, Rocks, "Flush threads (-1 = derived).";
    compaction_pri: i64 = 3, Rocks, "Compaction priority (3 = kMinOverlappingRatio).";
    pin_l0_filter_and_index_blocks_in_cache: bool = false, Rocks, "Pin L0 index/filter blocks.";
    use_ribbon_filter: bool = false, Rocks, "Ribbon instead of Bloom.";
    compression_level: i64 = 32767, Rocks, "Codec level (32767 = codec default).";
    format_version: i64 = 5, Rocks, "Block-based table format version.";
    use_direct_reads: bool = false, Eng, "Read table files for user reads with O_DIRECT (around the page cache: the block cache is the only cache).";
    use_direct_io_for_flush_and_compaction: bool = false, Eng, "Write flush and compaction outputs and read compaction inputs with O_DIRECT.";
    enable_pipelined_write: bool = true, Rocks, "Pipelined write path.";
}

fn unknown_flag(name: &str) -> Error {
    let near: Vec<&str> = FLAG_DEFS
        .iter()
        .map(|d| d.name)
        .filter(|n| n.contains(name) || name.contains(n))
        .take(3)
        .collect();
    if near.is_empty() {
        Error(format!("unknown flag --{name} (see --help)"))
    } else {
        Error(format!(
            "unknown flag --{name} (did you mean --{}?)",
            near.join(", --")
        ))
    }
}

fn def(name: &str) -> Option<&'static FlagDef> {
    FLAG_DEFS.iter().find(|d| d.name == name)
}

/// db_bench's blob flags (`enable_blob_files` first): every engine maps
/// them or refuses them by name.
pub const BLOB_FLAGS: &[&str] = &[
    "enable_blob_files",
    "min_blob_size",
    "blob_file_size",
    "blob_compression_type",
    "enable_blob_garbage_collection",
    "blob_garbage_collection_age_cutoff",
    "blob_garbage_collection_force_threshold",
    "blob_compaction_readahead_size",
    "blob_file_starting_level",
    "use_blob_cache",
    "use_shared_block_and_blob_cache",
    "prepopulate_blob_cache",
    "blob_cache_size",
    "blob_cache_numshardbits",
];

/// The engines this build knows about.
pub const ENGINES: &[&str] = &["shale", "rocksdb", "fjall", "memory"];

impl Flags {
    /// Parses command-line arguments (without the program name) and
    /// validates the result.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Flags> {
        let mut f = Flags::default();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            let body = arg
                .strip_prefix("--")
                .or_else(|| arg.strip_prefix('-'))
                .ok_or_else(|| {
                    Error(format!(
                        "unexpected argument '{arg}' (flags look like --name=value)"
                    ))
                })?;
            if let Some((name, value)) = body.split_once('=') {
                f.set_raw(name, value)?;
                continue;
            }
            match def(body) {
                Some(d) if d.is_bool => f.set_raw(body, "true")?,
                Some(_) => {
                    let Some(value) = args.get(i) else {
                        bail!("flag --{body} requires a value");
                    };
                    i += 1;
                    f.set_raw(body, value.as_ref())?;
                }
                None => match body.strip_prefix("no").and_then(def) {
                    Some(d) if d.is_bool => f.set_raw(d.name, "false")?,
                    _ => return Err(unknown_flag(body)),
                },
            }
        }
        f.validate()?;
        Ok(f)
    }

    /// True if the flag was given on the command line.
    pub fn is_explicit(&self, name: &str) -> bool {
        self.explicit.contains(name)
    }

    /// True if the flag has db_bench's default value.
    pub fn has_default(&self, name: &str) -> bool {
        let d = Flags::default();
        let mine = self.values().into_iter().find(|(n, _)| *n == name);
        let theirs = d.values().into_iter().find(|(n, _)| *n == name);
        mine == theirs
    }

    /// Checks ranges and cross-flag rules.
    pub fn validate(&self) -> Result<()> {
        if !ENGINES.contains(&self.engine.as_str()) {
            bail!(
                "invalid value '{}' for --engine: expected one of {}",
                self.engine,
                ENGINES.join(", ")
            );
        }
        let positive = [
            ("num", self.num),
            ("threads", self.threads),
            ("key_size", self.key_size),
            ("batch_size", self.batch_size),
            ("num_column_families", self.num_column_families),
            (
                "ops_between_duration_checks",
                self.ops_between_duration_checks,
            ),
        ];
        for (n, v) in positive {
            if v <= 0 {
                bail!("--{n} must be > 0 (got {v})");
            }
        }
        let non_negative = [
            ("value_size", self.value_size),
            ("cfscale_one_by_one", self.cfscale_one_by_one),
            ("duration", self.duration),
            ("seed", self.seed),
            ("keys_per_prefix", self.keys_per_prefix),
            ("prefix_size", self.prefix_size),
            ("seek_nexts", self.seek_nexts),
            ("max_scan_distance", self.max_scan_distance),
            ("seek_key_range_start", self.seek_key_range_start),
            (
                "writes_before_delete_range",
                self.writes_before_delete_range,
            ),
            (
                "writes_per_range_tombstone",
                self.writes_per_range_tombstone,
            ),
            ("range_tombstone_width", self.range_tombstone_width),
            ("max_num_range_tombstones", self.max_num_range_tombstones),
            ("delete_range_start", self.delete_range_start),
            (
                "benchmark_write_rate_limit",
                self.benchmark_write_rate_limit,
            ),
            ("benchmark_read_rate_limit", self.benchmark_read_rate_limit),
            ("stats_interval", self.stats_interval),
            ("stats_interval_seconds", self.stats_interval_seconds),
            ("report_interval_seconds", self.report_interval_seconds),
            ("space_sample_ms", self.space_sample_ms),
            ("latency_sla_us", self.latency_sla_us),
            ("slow_usecs", self.slow_usecs),
            ("max_compaction_bytes", self.max_compaction_bytes),
            (
                "soft_pending_compaction_bytes_limit",
                self.soft_pending_compaction_bytes_limit,
            ),
            (
                "hard_pending_compaction_bytes_limit",
                self.hard_pending_compaction_bytes_limit,
            ),
            ("compaction_readahead_size", self.compaction_readahead_size),
            ("bytes_per_sync", self.bytes_per_sync),
            ("wal_bytes_per_sync", self.wal_bytes_per_sync),
            ("recycle_log_file_num", self.recycle_log_file_num),
            ("wal_ttl_seconds", self.wal_ttl_seconds),
            ("wal_size_limit_MB", self.wal_size_limit_MB),
            ("readahead_size", self.readahead_size),
            ("max_auto_readahead_size", self.max_auto_readahead_size),
        ];
        for (n, v) in non_negative {
            if v < 0 {
                bail!("--{n} must be >= 0 (got {v})");
            }
        }
        if !(self.compression_ratio > 0.0 && self.compression_ratio <= 1.0) {
            bail!(
                "compression_ratio should be between 0 and 1 (got {})",
                self.compression_ratio
            );
        }
        if !(0..=100).contains(&self.readwritepercent) {
            bail!(
                "--readwritepercent must be in 0..=100 (got {})",
                self.readwritepercent
            );
        }
        if !(0..=100).contains(&self.mergereadpercent) {
            bail!(
                "--mergereadpercent must be in 0..=100 (got {})",
                self.mergereadpercent
            );
        }
        if self.merge_keys == 0 {
            bail!("--merge_keys must be > 0, or negative for --num (got 0)");
        }
        self.merge_op()?;
        if self.prefix_size > self.key_size {
            bail!(
                "--prefix_size ({}) must be <= --key_size ({})",
                self.prefix_size,
                self.key_size
            );
        }
        if self.value_size_distribution_type != "fixed" {
            bail!(
                "--value_size_distribution_type={} is not supported (db_bench seeds it from std::random_device, \
                 so it is not reproducible); only 'fixed'",
                self.value_size_distribution_type
            );
        }
        if self.arrival_rate < 0.0 {
            bail!("--arrival_rate must be >= 0 (got {})", self.arrival_rate);
        }
        if self.latency_sla_us > 0 && self.arrival_rate == 0.0 {
            bail!("--latency_sla_us needs open-loop mode (--arrival_rate > 0)");
        }
        if self.delayed_write_rate <= 0 {
            bail!(
                "--delayed_write_rate must be > 0 (got {})",
                self.delayed_write_rate
            );
        }
        if !(0..=3).contains(&self.wal_recovery_mode) {
            bail!(
                "--wal_recovery_mode must be 0..=3 (0 kTolerateCorruptedTailRecords, 1 kAbsoluteConsistency, \
                 2 kPointInTimeRecovery, 3 kSkipAnyCorruptedRecords; got {})",
                self.wal_recovery_mode
            );
        }
        if self.sync && self.disable_wal {
            bail!("--sync=1 and --disable_wal=1 contradict each other");
        }
        if self.benchmarks.split(',').all(|b| b.trim().is_empty()) {
            bail!("--benchmarks is empty");
        }
        for (n, v) in [
            ("delete_range_end", self.delete_range_end),
            ("seek_key_range_end", self.seek_key_range_end),
        ] {
            if v < -1 {
                bail!("--{n} must be >= 0, or -1 for --num (got {v})");
            }
        }
        let (a, b) = self.delete_range_bounds();
        if a > b {
            bail!("--delete_range_start ({a}) must be <= --delete_range_end ({b})");
        }
        let (a, b) = self.seek_key_range();
        if a >= b {
            bail!("--seek_key_range_start ({a}) must be < --seek_key_range_end ({b}; -1 = --num)");
        }
        self.validate_blob()
    }

    /// The blob flags' ranges and the rules between them, the same for
    /// every engine: a flag that would have no effect is refused, naming
    /// the flag it needs (db_bench would ignore it).
    fn validate_blob(&self) -> Result<()> {
        for (n, v) in [
            ("min_blob_size", self.min_blob_size),
            (
                "blob_compaction_readahead_size",
                self.blob_compaction_readahead_size,
            ),
            ("blob_file_starting_level", self.blob_file_starting_level),
        ] {
            if v < 0 {
                bail!("--{n} must be >= 0 (got {v})");
            }
        }
        for (n, v) in [
            ("blob_file_size", self.blob_file_size),
            ("blob_cache_size", self.blob_cache_size),
        ] {
            if v <= 0 {
                bail!("--{n} must be > 0 (got {v})");
            }
        }
        for (n, v) in [
            (
                "blob_garbage_collection_age_cutoff",
                self.blob_garbage_collection_age_cutoff,
            ),
            (
                "blob_garbage_collection_force_threshold",
                self.blob_garbage_collection_force_threshold,
            ),
            (
                "blob_garbage_collection_min_garbage_ratio",
                self.blob_garbage_collection_min_garbage_ratio,
            ),
        ] {
            if !(0.0..=1.0).contains(&v) {
                bail!("--{n} must be in [0, 1] (got {v})");
            }
        }
        if !(0..=1).contains(&self.prepopulate_blob_cache) {
            bail!(
                "--prepopulate_blob_cache must be 0 (kDisable) or 1 (kFlushOnly) (got {})",
                self.prepopulate_blob_cache
            );
        }
        // Which flag each one needs: (flags, the flag, its wanted value).
        let needs: [(&[&str], &str, bool); 4] = [
            (
                &BLOB_FLAGS[1..],
                "enable_blob_files",
                self.enable_blob_files || self.use_existing_db,
            ),
            (
                &[
                    "blob_garbage_collection_age_cutoff",
                    "blob_garbage_collection_force_threshold",
                    "blob_garbage_collection_min_garbage_ratio",
                ],
                "enable_blob_garbage_collection",
                self.enable_blob_garbage_collection,
            ),
            (
                &["use_shared_block_and_blob_cache", "prepopulate_blob_cache"],
                "use_blob_cache",
                self.use_blob_cache,
            ),
            (
                &["blob_cache_size", "blob_cache_numshardbits"],
                "use_shared_block_and_blob_cache",
                !self.use_shared_block_and_blob_cache,
            ),
        ];
        for (flags, needed, ok) in needs {
            if let Some(n) = flags.iter().find(|n| !self.has_default(n)).filter(|_| !ok) {
                let want = if needed == "use_shared_block_and_blob_cache" {
                    "0"
                } else {
                    "1"
                };
                let why = if needed == "enable_blob_files" {
                    " (or --use_existing_db=1): a fresh DB without blob files would ignore it"
                } else {
                    ": without it the option has no effect"
                };
                bail!("--{n} needs --{needed}={want}{why}");
            }
        }
        if self.use_blob_cache && self.use_shared_block_and_blob_cache && self.cache_size <= 0 {
            bail!(
                "--use_blob_cache=1 with --use_shared_block_and_blob_cache=1 puts blobs in the block cache: \
                 it needs --cache_size > 0"
            );
        }
        Ok(())
    }

    /// Key numbers `[start, end)` of the deleterange benchmark
    /// (`--delete_range_end` -1 = `--num`).
    pub fn delete_range_bounds(&self) -> (u64, u64) {
        let end = if self.delete_range_end < 0 {
            self.num
        } else {
            self.delete_range_end
        };
        (self.delete_range_start.max(0) as u64, end.max(0) as u64)
    }

    /// Key numbers `[start, end)` seekrandom draws from
    /// (`--seek_key_range_end` -1 = `--num`).
    pub fn seek_key_range(&self) -> (u64, u64) {
        let end = if self.seek_key_range_end < 0 {
            self.num
        } else {
            self.seek_key_range_end
        };
        (self.seek_key_range_start.max(0) as u64, end.max(0) as u64)
    }

    /// Rejects flags of category `cat` set to a non-default value: the
    /// engine named `engine` cannot honour them.
    pub fn reject_category(&self, cat: Category, engine: &str) -> Result<()> {
        for d in FLAG_DEFS.iter().filter(|d| d.category == cat) {
            if self.is_explicit(d.name) && !self.has_default(d.name) {
                bail!(
                    "--{} is not supported by --engine={engine} (it has no such option); remove it or use \
                     --engine=rocksdb",
                    d.name
                );
            }
        }
        Ok(())
    }

    /// Reads per thread.
    pub fn reads(&self) -> u64 {
        if self.reads < 0 { self.num } else { self.reads }.max(0) as u64
    }

    /// Writes per thread.
    pub fn writes(&self) -> u64 {
        if self.writes < 0 {
            self.num
        } else {
            self.writes
        }
        .max(0) as u64
    }

    /// Deletes per thread.
    pub fn deletes(&self) -> u64 {
        if self.deletes < 0 {
            self.num
        } else {
            self.deletes
        }
        .max(0) as u64
    }

    /// Ops per thread of readrandomwriterandom / updaterandom.
    pub fn readwrites(&self) -> u64 {
        if self.writes < 0 && self.reads < 0 {
            self.num as u64
        } else {
            self.writes.max(self.reads).max(0) as u64
        }
    }

    /// Key space of the merge benchmarks: `--merge_keys`, or `--num` when
    /// negative.
    pub fn merge_keys(&self) -> u64 {
        if self.merge_keys < 0 {
            self.num
        } else {
            self.merge_keys
        }
        .max(1) as u64
    }

    /// `--merge_operator`, parsed (None when empty).
    pub fn merge_op(&self) -> Result<Option<MergeOp>> {
        MergeOp::parse(&self.merge_operator)
    }

    /// The help text.
    pub fn help() -> String {
        let mut s = String::from(
            "shale-bench: db_bench-compatible benchmark driver.\n\
             Usage: shale-bench [--flag=value ...]\n       shale-bench compare A.json[,A2.json...] B.json[,B2.json...] [C.json ...] [--plot FILE.svg]\n\nFlags:\n",
        );
        let d = Flags::default().values();
        for (def, (_, v)) in FLAG_DEFS.iter().zip(d) {
            let cat = match def.category {
                Category::Gen => "",
                Category::Eng => " [engine]",
                Category::Rocks => " [rocksdb only]",
                Category::Shale => " [shale only]",
            };
            s.push_str(&format!(
                "  --{} (default {v}){cat}\n      {}\n",
                def.name, def.help
            ));
        }
        s.push_str(
            "\nBenchmarks beyond db_bench's:\n  \
             cfscale\n      What --num_column_families=N families cost (shale, rocksdb, fjall). On fresh DBs at \
             --db, one result line each (name : X micros/op Y ops/sec S seconds K operations; raw S s; note):\n      \
             cfscale.create_one (families created one create call each; --cfscale_one_by_one limits how many), \
             cfscale.create_batch (N-1 families in one batch call), cfscale.close and cfscale.reopen (with N \
             families), cfscale.rss (VmRSS with only default open, then with N idle families, and bytes per \
             family), cfscale.fill_idle and cfscale.fill_alone (--writes random puts into default with N-1 \
             idle families, then with none) and cfscale.fill_ratio (idle / alone ops/sec).\n  \
             deleterange\n      One DeleteRange over the key numbers [--delete_range_start, --delete_range_end) \
             (default [0, --num)), in every column family, from one thread (forced); the result line shows 1 \
             operation, counted as a delete, and the range. Engines with DeleteRange only (shale, rocksdb); \
             refused with --keys_per_prefix > 0 (key order is then not key-number order).\n\
             \nFlags marked [shale-bench only] are not in db_bench; at their defaults every benchmark behaves \
             as db_bench's.\n",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_db_bench_defaults() {
        let f = Flags::parse::<&str>(&[]).unwrap();
        assert_eq!(f.num, 1_000_000);
        assert_eq!(f.key_size, 16);
        assert_eq!(f.value_size, 100);
        assert_eq!(f.write_buffer_size, 64 << 20);
        assert_eq!(f.cache_size, 8 << 20);
        assert_eq!(f.compression_type, "snappy");
        assert!(!f.level_compaction_dynamic_level_bytes);
        assert_eq!(f.reads(), 1_000_000);
        assert_eq!(f.readwrites(), 1_000_000);
        assert_eq!(f.db, "/tmp/shale-bench-db");
    }

    #[test]
    fn all_value_forms() {
        let f = Flags::parse(&[
            "--num=10",
            "-reads=5",
            "--writes",
            "7",
            "--histogram",
            "--nosync",
            "--disable_wal=1",
            "--use_existing_db=true",
            "--verify_checksum=0",
            "--compression_ratio=0.25",
            "--benchmarks=fillseq,readrandom",
        ])
        .unwrap();
        assert_eq!((f.num, f.reads, f.writes), (10, 5, 7));
        assert!(f.histogram && !f.sync && f.disable_wal && f.use_existing_db && !f.verify_checksum);
        assert_eq!(f.compression_ratio, 0.25);
        assert_eq!(f.readwrites(), 7);
        assert!(f.is_explicit("num") && !f.is_explicit("seed"));
        for v in ["yes", "no", "t", "f", "TRUE", "False"] {
            assert!(Flags::parse(&[format!("--histogram={v}")]).is_ok(), "{v}");
        }
    }

    #[test]
    fn rejects_unknown_and_malformed() {
        let e = Flags::parse(&["--no_such_flag=1"]).unwrap_err();
        assert!(e.0.contains("unknown flag --no_such_flag"), "{e}");
        let e = Flags::parse(&["--num=ten"]).unwrap_err();
        assert!(e.0.contains("invalid value 'ten' for --num"), "{e}");
        let e = Flags::parse(&["--histogram=maybe"]).unwrap_err();
        assert!(e.0.contains("--histogram"), "{e}");
        let e = Flags::parse(&["--bloom_bits=x"]).unwrap_err();
        assert!(e.0.contains("expected a number"), "{e}");
        assert!(Flags::parse(&["num=3"]).is_err());
        assert!(Flags::parse(&["--num"])
            .unwrap_err()
            .0
            .contains("requires a value"));
        assert!(Flags::parse(&["--nonum"]).is_err());
        let e = Flags::parse(&["--engine=leveldb"]).unwrap_err();
        assert!(e.0.contains("--engine"), "{e}");
    }

    #[test]
    fn rejects_bad_ranges() {
        for bad in [
            "--compression_ratio=1.5",
            "--compression_ratio=0",
            "--num=0",
            "--threads=0",
            "--readwritepercent=101",
            "--batch_size=0",
            "--value_size_distribution_type=uniform",
            "--latency_sla_us=100",
            "--seed=-1",
        ] {
            assert!(Flags::parse(&[bad]).is_err(), "{bad} accepted");
        }
        let e = Flags::parse(&["--key_size=4", "--prefix_size=5"]).unwrap_err();
        assert!(e.0.contains("prefix_size"), "{e}");
        assert!(Flags::parse(&["--sync=1", "--disable_wal=1"]).is_err());
        assert!(Flags::parse(&["--compression_ratio=1.0"]).is_ok());
    }

    #[test]
    fn rocks_only_flags_rejected_for_other_engines_unless_default() {
        let f = Flags::parse(&["--compaction_pri=1"]).unwrap();
        let e = f.reject_category(Category::Rocks, "shale").unwrap_err();
        assert!(
            e.0.contains("--compaction_pri") && e.0.contains("shale"),
            "{e}"
        );
        // Explicitly passing db_bench's default is harmless.
        let f = Flags::parse(&["--compaction_pri=3"]).unwrap();
        assert!(f.reject_category(Category::Rocks, "shale").is_ok());
        let f = Flags::parse(&["--write_buffer_size=1000000"]).unwrap();
        assert!(f.reject_category(Category::Eng, "memory").is_err());
    }

    #[test]
    fn write_control_and_wal_flags_parse_with_db_bench_defaults() {
        let d = Flags::parse::<&str>(&[]).unwrap();
        assert_eq!(d.max_compaction_bytes, 0);
        assert_eq!(d.soft_pending_compaction_bytes_limit, 64 << 30);
        assert_eq!(d.hard_pending_compaction_bytes_limit, 128 << 30);
        assert_eq!(d.delayed_write_rate, 8 << 20);
        assert_eq!(d.compaction_readahead_size, 0);
        assert_eq!(d.readahead_size, 0);
        assert_eq!(d.max_auto_readahead_size, 256 << 10);
        assert!(d.paranoid_checks && !d.manual_wal_flush);
        assert_eq!(d.wal_recovery_mode, 2);
        let f = Flags::parse(&[
            "--max_compaction_bytes=1000",
            "--soft_pending_compaction_bytes_limit",
            "2000",
            "--hard_pending_compaction_bytes_limit=3000",
            "--delayed_write_rate=4000",
            "--compaction_readahead_size=5000",
            "--readahead_size=6000",
            "--max_auto_readahead_size=7000",
            "--noparanoid_checks",
            "--wal_recovery_mode=0",
            "--manual_wal_flush",
        ])
        .unwrap();
        assert_eq!(
            (
                f.max_compaction_bytes,
                f.soft_pending_compaction_bytes_limit,
                f.hard_pending_compaction_bytes_limit,
                f.delayed_write_rate,
            ),
            (1000, 2000, 3000, 4000)
        );
        assert_eq!(
            (
                f.compaction_readahead_size,
                f.readahead_size,
                f.max_auto_readahead_size
            ),
            (5000, 6000, 7000)
        );
        assert!(!f.paranoid_checks && f.manual_wal_flush);
        assert_eq!(f.wal_recovery_mode, 0);
        for name in [
            "delayed_write_rate",
            "wal_recovery_mode",
            "manual_wal_flush",
            "bytes_per_sync",
            "wal_bytes_per_sync",
            "recycle_log_file_num",
        ] {
            let d = FLAG_DEFS.iter().find(|d| d.name == name).unwrap();
            assert_eq!(d.category, Category::Eng, "{name}");
        }
        for bad in [
            "--wal_recovery_mode=4",
            "--wal_recovery_mode=-1",
            "--delayed_write_rate=0",
            "--max_compaction_bytes=-1",
            "--readahead_size=-4096",
            "--hard_pending_compaction_bytes_limit=-1",
            "--recycle_log_file_num=-1",
            "--bytes_per_sync=-1",
        ] {
            assert!(Flags::parse(&[bad]).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn merge_flags_have_db_bench_defaults_and_are_validated() {
        let d = Flags::parse::<&str>(&[]).unwrap();
        assert_eq!(d.merge_operator, "");
        assert_eq!(d.merge_op().unwrap(), None);
        assert_eq!((d.merge_keys, d.mergereadpercent), (-1, 70));
        assert_eq!(d.merge_keys(), 1_000_000);
        let f = Flags::parse(&["--merge_operator=uint64add", "--merge_keys=10", "--num=100"]);
        let f = f.unwrap();
        assert_eq!(f.merge_op().unwrap(), Some(MergeOp::UInt64Add));
        assert_eq!(f.merge_keys(), 10);
        let e = Flags::parse(&["--merge_operator=nope"]).unwrap_err();
        assert!(
            e.0.contains("--merge_operator") && e.0.contains("uint64add"),
            "{e}"
        );
        for bad in [
            "--mergereadpercent=101",
            "--mergereadpercent=-1",
            "--merge_keys=0",
        ] {
            assert!(Flags::parse(&[bad]).is_err(), "{bad} accepted");
        }
        assert!(Flags::help().contains("set_merge_operator_associative"));
        let def = FLAG_DEFS.iter().find(|d| d.name == "merge_operator");
        assert_eq!(def.unwrap().category, Category::Eng);
    }

    #[test]
    fn blob_flags_have_db_bench_defaults_and_are_validated() {
        let d = Flags::parse::<&str>(&[]).unwrap();
        assert!(!d.enable_blob_files && !d.enable_blob_garbage_collection);
        assert_eq!((d.min_blob_size, d.blob_file_size), (0, 256 << 20));
        assert_eq!(d.blob_compression_type, "none");
        assert_eq!(
            (
                d.blob_garbage_collection_age_cutoff,
                d.blob_garbage_collection_force_threshold
            ),
            (0.25, 1.0)
        );
        assert_eq!(
            (
                d.blob_compaction_readahead_size,
                d.blob_file_starting_level,
                d.prepopulate_blob_cache
            ),
            (0, 0, 0)
        );
        assert!(!d.use_blob_cache && d.use_shared_block_and_blob_cache);
        assert_eq!((d.blob_cache_size, d.blob_cache_numshardbits), (8 << 20, 6));
        let f = Flags::parse(&[
            "--enable_blob_files",
            "--min_blob_size=100",
            "--blob_file_size=1048576",
            "--blob_compression_type=zstd",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=0.5",
            "--blob_garbage_collection_force_threshold=0.75",
            "--blob_compaction_readahead_size=65536",
            "--blob_file_starting_level=2",
            "--use_blob_cache=1",
            "--prepopulate_blob_cache=1",
        ])
        .unwrap();
        assert!(f.enable_blob_files && f.enable_blob_garbage_collection && f.use_blob_cache);
        assert_eq!((f.min_blob_size, f.blob_file_size), (100, 1 << 20));
        assert_eq!(f.blob_garbage_collection_age_cutoff, 0.5);
        assert_eq!(f.blob_garbage_collection_force_threshold, 0.75);
        assert_eq!(
            (
                f.blob_compaction_readahead_size,
                f.blob_file_starting_level,
                f.prepopulate_blob_cache
            ),
            (65536, 2, 1)
        );
        // Every blob flag is in the table and in BLOB_FLAGS.
        for n in BLOB_FLAGS {
            assert!(def(n).is_some(), "{n}");
        }
        for bad in [
            "--min_blob_size=-1",
            "--blob_file_size=0",
            "--blob_garbage_collection_age_cutoff=1.5",
            "--blob_garbage_collection_force_threshold=-0.1",
            "--blob_compaction_readahead_size=-1",
            "--blob_file_starting_level=-1",
            "--prepopulate_blob_cache=2",
        ] {
            let e = Flags::parse(&[
                "--enable_blob_files=1",
                "--enable_blob_garbage_collection=1",
                bad,
            ])
            .unwrap_err();
            let name = bad.trim_start_matches("--").split('=').next().unwrap();
            assert!(e.0.contains(name), "{bad}: {e}");
        }
        // A flag that would have no effect is refused, naming what it needs.
        for (args, needs) in [
            (&["--min_blob_size=100"][..], "--enable_blob_files=1"),
            (
                &["--blob_compression_type=lz4"][..],
                "--enable_blob_files=1",
            ),
            (&["--use_blob_cache=1"][..], "--enable_blob_files=1"),
            (
                &[
                    "--enable_blob_files=1",
                    "--blob_garbage_collection_age_cutoff=0.5",
                ][..],
                "--enable_blob_garbage_collection=1",
            ),
            (
                &["--enable_blob_files=1", "--prepopulate_blob_cache=1"][..],
                "--use_blob_cache=1",
            ),
            (
                &[
                    "--enable_blob_files=1",
                    "--use_shared_block_and_blob_cache=0",
                ][..],
                "--use_blob_cache=1",
            ),
            (
                &[
                    "--enable_blob_files=1",
                    "--use_blob_cache=1",
                    "--blob_cache_size=1048576",
                ][..],
                "--use_shared_block_and_blob_cache=0",
            ),
            (
                &[
                    "--enable_blob_files=1",
                    "--use_blob_cache=1",
                    "--cache_size=0",
                ][..],
                "--cache_size > 0",
            ),
        ] {
            let e = Flags::parse(args).unwrap_err();
            assert!(e.0.contains(needs), "{args:?}: {e}");
        }
        // An existing DB may hold blob files: its options apply to them.
        assert!(Flags::parse(&[
            "--use_existing_db=1",
            "--enable_blob_garbage_collection=1",
            "--blob_garbage_collection_age_cutoff=1.0"
        ])
        .is_ok());
        // Explicit defaults are harmless.
        assert!(
            Flags::parse(&["--min_blob_size=0", "--use_shared_block_and_blob_cache=1"]).is_ok()
        );
        let def = |n: &str| FLAG_DEFS.iter().find(|d| d.name == n).unwrap().category;
        assert_eq!(def("enable_blob_files"), Category::Eng);
        assert_eq!(def("blob_cache_size"), Category::Rocks);
    }

    #[test]
    fn table_is_consistent() {
        let names: BTreeSet<&str> = FLAG_DEFS.iter().map(|d| d.name).collect();
        assert_eq!(names.len(), FLAG_DEFS.len());
        assert_eq!(Flags::default().values().len(), FLAG_DEFS.len());
        assert!(Flags::help().contains("--benchmark_write_rate_limit"));
        assert!(Flags::help().contains("cfscale.fill_ratio"));
        assert!(Flags::help().contains("--num_column_families"));
        assert!(Flags::help().contains("\n  deleterange\n"));
        assert!(Flags::help().contains("--seek_key_range_start"));
    }

    #[test]
    fn range_deletion_flags_have_db_bench_defaults_and_are_validated() {
        let d = Flags::parse::<&str>(&["--num=1000"]).unwrap();
        assert_eq!(
            (
                d.writes_before_delete_range,
                d.writes_per_range_tombstone,
                d.range_tombstone_width,
                d.max_num_range_tombstones,
                d.expand_range_tombstones,
            ),
            (0, 0, 100, 0, false)
        );
        assert_eq!(d.delete_range_bounds(), (0, 1000));
        assert_eq!(d.seek_key_range(), (0, 1000));
        let f = Flags::parse(&[
            "--num=1000",
            "--delete_range_start=10",
            "--delete_range_end=20",
            "--seek_key_range_start=5",
            "--seek_key_range_end=1500",
        ])
        .unwrap();
        assert_eq!(f.delete_range_bounds(), (10, 20));
        assert_eq!(f.seek_key_range(), (5, 1500));
        // An empty deleterange is allowed; an empty seek range is not.
        assert!(Flags::parse(&["--delete_range_start=7", "--delete_range_end=7"]).is_ok());
        for bad in [
            "--writes_per_range_tombstone=-1",
            "--writes_before_delete_range=-1",
            "--range_tombstone_width=-1",
            "--max_num_range_tombstones=-1",
            "--delete_range_start=-1",
            "--delete_range_end=-2",
            "--seek_key_range_end=-2",
        ] {
            assert!(Flags::parse(&[bad]).is_err(), "{bad} accepted");
        }
        let e = Flags::parse(&["--delete_range_start=9", "--delete_range_end=3"]).unwrap_err();
        assert!(e.0.contains("--delete_range_start"), "{e}");
        let e = Flags::parse(&["--num=10", "--seek_key_range_start=10"]).unwrap_err();
        assert!(e.0.contains("--seek_key_range_start"), "{e}");
    }
}
