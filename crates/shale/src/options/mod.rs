//! Typed options with documented defaults, validated once at open.
//!
//! Subsystems take narrow structs derived from [`Options`] (for example the
//! SST builder takes `sst::TableOptions`), never the whole thing. Per-family
//! options are [`CfOptions`] (`cf.rs`); `Options` holds the DB-wide ones
//! and, in its field `cf`, the `default` family's (RocksDB's shape).
//!
//! Every option is declared once (`declare_options!`, `declare.rs`): its
//! doc, type, default, text name and section in the OPTIONS file, whether
//! it changes while open, and its own check; the structs, `Default`, the
//! persisted text (`text_value.rs` writes each type), the typed changes
//! [`CfOption`] and [`DbOption`] and the lists of names derive from it.

mod blob;
mod cf;
mod compaction_style;
mod compaction_types;
pub(crate) mod db_text;
pub(crate) mod file;
pub(crate) mod mutable_db;
mod text_value;

use std::sync::Arc;

use crate::cache::CacheOptions;
use crate::error::{Error, Result};
use crate::fs::FileSystem;

pub use crate::build::cuts::SstPartitioner;
pub use crate::events::log_options::InfoLogLevel;
pub(crate) use crate::events::log_options::InfoLogOptions;
pub use crate::sst::Compression;
pub use blob::{BlobOptions, PrepopulateBlobCache};
pub use cf::{CfOption, CfOptions};
pub use compaction_style::{
    CompactionStyle, FifoCompactionOptions, UniversalCompactionOptions, UniversalStopStyle,
};
/// The smallest bounded `max_open_files` (RocksDB raises smaller values).
pub(crate) const MIN_MAX_OPEN_FILES: i32 = 20;
/// The smallest `memory_budget`: one small memtable and a few blocks.
pub(crate) const MIN_MEMORY_BUDGET: usize = 1 << 20;
/// The smallest bounded `max_log_file_size`: a LOG smaller than a few
/// lines would rotate at every line.
pub(crate) const MIN_MAX_LOG_FILE_SIZE: u64 = 1024;
pub use crate::wal::WalRecoveryMode;

use crate::base::declare::declare_options;
pub use crate::base::declare::OptionInfo;

/// Block cache implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    /// Sharded LRU with priority pools.
    Lru,
    /// Lock-free clock cache.
    Clock,
}

declare_options! {
    /// Options for opening a DB: the DB-wide ones (RocksDB's `DBOptions`)
    /// and, in [`cf`](Options::cf), the `default` family's
    /// ([`CfOptions`], RocksDB's `ColumnFamilyOptions`). `Options`
    /// dereferences to `cf` (see the `Deref` impl), so
    /// `opts.write_buffer_size` is the `default` family's.
    #[derive(Clone)]
    pub struct Options;
    /// A change of one DB-wide option while the DB is open
    /// (`Db::set_db_options`, RocksDB's `SetDBOptions`): a variant for each
    /// option that may change then, documented as the field it sets.
    #[derive(Clone, Debug, PartialEq)]
    pub enum DbOption;
    {
        /// The `default` family's options. `Options` dereferences to them
        /// (`opts.write_buffer_size` is `opts.cf.write_buffer_size`): see the
        /// `Deref` impl.
        cf / Cf: CfOptions = CfOptions::default(),
            fixed none;
        /// At open, open every live table (read and verify its footer, index
        /// and filter blocks), so a damaged table fails `Db::open` with
        /// `Corruption` instead of failing the first read that reaches it.
        /// Nothing else: block checksums are verified on every read whatever
        /// this says, a table missing from the directory always fails open, and
        /// WAL damage is `wal_recovery_mode`'s. Default true.
        paranoid_checks / ParanoidChecks: bool = true,
            fixed always Db "paranoid_checks";
        /// Background flush + compaction threads. Default 2.
        max_background_jobs / MaxBackgroundJobs: usize = 2,
            mutable always Db "max_background_jobs",
            check(v) *v == 0 => "max_background_jobs must be > 0".into();
        /// Threads one compaction may use (RocksDB's option of that name): a
        /// compaction is split by key into up to this many ranges of about
        /// equal input bytes (each at least half a target file), run at once,
        /// the extra threads beside `max_background_jobs`. Same output, more
        /// cores; 1 runs every compaction on one thread. Default 1.
        max_subcompactions / MaxSubcompactions: usize = 1,
            mutable always Db "max_subcompactions",
            check(v) !(1..=64).contains(v) => format!("max_subcompactions {v} not in 1..=64");
        /// WAL recovery mode. Default `PointInTime`.
        wal_recovery_mode / WalRecoveryMode: WalRecoveryMode = WalRecoveryMode::PointInTime,
            fixed always Db "wal_recovery_mode";
        /// Keep WAL writes in a process buffer until `flush_wal` (they may be
        /// lost on a process crash). Default false.
        manual_wal_flush / ManualWalFlush: bool = false,
            fixed always Db "manual_wal_flush";
        /// Write WAL files through a shared memory mapping (Linux, where the
        /// file system can `fallocate`; elsewhere `write(2)`): an append is a
        /// copy into the page cache, no system call. The durability contract is
        /// unchanged: the bytes belong to the OS when the write returns (a
        /// process crash keeps them), `sync` is `fdatasync`. Space is reserved a
        /// megabyte ahead, so a full disk is an error, not a SIGBUS. Not
        /// RocksDB's `allow_mmap_writes` (which maps every file): tables are
        /// written with `write(2)` either way. Default true.
        wal_mmap_writes / WalMmapWrites: bool = true,
            fixed always Db "wal_mmap_writes";
        /// Tables written by flush and compaction: every time this many more
        /// bytes were written, ask the OS to start writing back the range
        /// written since the last request, except the last 1 MiB
        /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, Linux; elsewhere nothing),
        /// so writeback is spread over the file instead of one burst at its
        /// `fdatasync` (RocksDB's option of that name, same rule; see
        /// `io::RangeSyncer`). Durability is unchanged. 0 turns it off.
        /// Default 0 (as RocksDB; db_bench's default is 0 too).
        bytes_per_sync / BytesPerSync: u64 = 0,
            mutable always Db "bytes_per_sync";
        /// The same for WAL files (RocksDB's `wal_bytes_per_sync`): it bounds
        /// the dirty WAL pages a sync write or a memtable switch later has to
        /// wait for. 0 turns it off. Default 0.
        wal_bytes_per_sync / WalBytesPerSync: u64 = 0,
            mutable always Db "wal_bytes_per_sync";
        /// Keep up to this many obsolete WAL files and reuse them as new WALs
        /// (renamed, overwritten from offset 0: RocksDB's
        /// `recycle_log_file_num`). A reused file's blocks are already
        /// allocated and written, so a sync appending into it changes no file
        /// metadata (no extent conversion or size update for the journal to
        /// commit). The old records left after the new ones fail the checksum,
        /// which is seeded with the log number, and end the log
        /// (docs/format/wal.md, "Recycled logs"). Only WALs this DB instance
        /// created and synced are reused. Allowed only with the
        /// `PointInTime` and `SkipAnyCorruptedRecords` recovery modes: the
        /// strict modes must fail on a damaged record, and after a power loss a
        /// record torn over old bytes cannot be told from damage (RocksDB
        /// refuses the same combinations). 0 turns it off. Default 0.
        recycle_log_file_num / RecycleLogFileNum: usize = 0,
            fixed always Db "recycle_log_file_num";
        /// WAL archiving (RocksDB's `WAL_ttl_seconds`): with this or
        /// `wal_size_limit_mb` nonzero, an obsolete WAL moves to `archive/`
        /// in the DB directory instead of being deleted, and is deleted from
        /// there once it has been archived this many seconds (0: no age
        /// limit). The log then also carries time and unlogged-writes
        /// records (docs/format/wal.md), which `BackupEngine::restore_to`
        /// and `restore_to_time` use for point-in-time restore. Refused with
        /// `recycle_log_file_num` > 0, as RocksDB does. Default 0 (off).
        wal_ttl_seconds / WalTtlSeconds: u64 = 0,
            fixed always Db "WAL_ttl_seconds";
        /// WAL archiving (RocksDB's `WAL_size_limit_MB`): the archive's
        /// oldest WALs are deleted while it holds more than this many MiB
        /// (0: no size limit). See `wal_ttl_seconds`. Default 0 (off).
        wal_size_limit_mb / WalSizeLimitMb: u64 = 0,
            fixed always Db "WAL_size_limit_MB";
        /// Write rate in bytes per second while writes are delayed (L0 slowdown
        /// trigger or soft pending-bytes limit). Default 16 MiB/s. Lower values
        /// protect reads and compaction; higher values let writes run ahead.
        delayed_write_rate / DelayedWriteRate: u64 = 16 << 20,
            mutable always Db "delayed_write_rate",
            check(v) *v == 0 => "delayed_write_rate must be > 0".into();
        /// Once the live WAL files exceed this many bytes, the column families
        /// still holding unflushed writes in the oldest WAL are flushed so that
        /// it can be deleted (an idle family never pins old WALs). 0 (the
        /// default): 4 × the sum of every family's `write_buffer_size`, as
        /// RocksDB.
        max_total_wal_size / MaxTotalWalSize: u64 = 0,
            mutable always Db "max_total_wal_size";
        /// Most files the DB keeps open (RocksDB's option of the same name).
        /// -1 (the default): unlimited; every table, once opened, stays open
        /// with its index and filter in memory until its file is deleted, and
        /// point reads reach it without any lock (blob file readers too).
        /// `n >= 20`: the table cache keeps at most `n - 10` readers, table and
        /// blob file readers together (ten descriptors are left for the WAL,
        /// MANIFEST and other files; RocksDB's blob file cache shares its table
        /// cache likewise), evicting the least recently used and reopening on
        /// demand; an evicted reader still in use stays open until its user is
        /// done. A bound above the process's open-file limit (`ulimit -n`) is
        /// lowered to that limit at open, as RocksDB does. Values from 0 to 19
        /// and below -1 are rejected (RocksDB silently raises them to 20).
        max_open_files / MaxOpenFiles: i32 = -1,
            fixed always Db "max_open_files",
            check(v) *v != -1 && *v < MIN_MAX_OPEN_FILES => format!(
                "max_open_files {v} must be -1 (unlimited) or at least {MIN_MAX_OPEN_FILES}"
            );
        /// Read table files for user reads (point reads, iterators) with
        /// direct IO (`O_DIRECT`), around the OS page cache (RocksDB's option
        /// of this name): the block cache is then the only cache of table
        /// data, so size it (`cache_size`) for the working set. Iterator
        /// readahead reads aligned ranges into the iterator's own aligned
        /// buffer; `advise_random_on_open` has nothing to advise and is
        /// skipped. Compaction inputs are read through the same direct handles
        /// (as RocksDB, whose compactions use the cached table readers). WAL,
        /// MANIFEST, OPTIONS and LOG files stay buffered. At open the DB checks
        /// that its directory's file system takes direct IO and fails with
        /// `InvalidArgument` naming the option and the file if it does not
        /// (EINVAL). Rejected where the platform has no `O_DIRECT` (non-Linux).
        /// Default false.
        use_direct_reads / UseDirectReads: bool = false,
            fixed always Db "use_direct_reads";
        /// Write the tables of flushes and compactions with direct IO
        /// (`O_DIRECT`: aligned buffers, the padded last block cut off by
        /// `ftruncate`), and read compaction inputs with it
        /// (`compaction_readahead_size` per read into aligned buffers, capped
        /// at the device's request size as without it) through a handle of the
        /// compaction's own (RocksDB's option of this name). A background job
        /// then leaves the page cache to the reads that use it. WAL, MANIFEST,
        /// OPTIONS and LOG stay buffered, and `wal_mmap_writes` is unaffected
        /// (so, unlike RocksDB's `allow_mmap_writes`, it combines with this).
        /// Refusal and platforms as for `use_direct_reads`. Default false.
        use_direct_io_for_flush_and_compaction / UseDirectIoForFlushAndCompaction: bool = false,
            fixed always Db "use_direct_io_for_flush_and_compaction";
        /// Automatic resumes after a soft or hard background error (a failed
        /// compaction, flush or MANIFEST write), counted since a flush or
        /// compaction last succeeded; 0 disables them (`Db::resume` still
        /// works). Fatal errors (WAL write or sync, corruption) are never
        /// resumed. Default `i32::MAX` (RocksDB's `max_bgerror_resume_count`).
        max_bgerror_resume_count / MaxBgerrorResumeCount: u64 = i32::MAX as u64,
            fixed always Db "max_bgerror_resume_count";
        /// Microseconds from a background error (or a failed resume) to the next
        /// automatic resume. Default 1 000 000 (RocksDB's
        /// `bgerror_resume_retry_interval`); must be > 0.
        bgerror_resume_retry_interval / BgerrorResumeRetryInterval: u64 = 1_000_000,
            fixed always Db "bgerror_resume_retry_interval",
            check(v) *v == 0 => "bgerror_resume_retry_interval must be > 0".into();
        /// Bytes read per IO from each compaction input table, from its first
        /// block on (one read then serves many blocks); 0 reads ahead
        /// automatically as iterators do (growing from 8 KiB to
        /// `max_auto_readahead_size`). Default 2 MiB (RocksDB 8.6+).
        compaction_readahead_size / CompactionReadaheadSize: usize = 2 << 20,
            mutable always Db "compaction_readahead_size";
        /// Lines of the `LOG` file below this level are not written. Default
        /// `Info` (every line but debug ones).
        info_log_level / InfoLogLevel: InfoLogLevel = InfoLogLevel::Info,
            fixed always Db "info_log_level";
        /// `LOG` is renamed `LOG.old.<micros>` and a new one started before a
        /// line would take it past this many bytes (it is also rotated at
        /// open). 0 (the default, as RocksDB): rotated only at open.
        max_log_file_size / MaxLogFileSize: u64 = 0,
            fixed always Db "max_log_file_size",
            check(v) *v != 0 && *v < MIN_MAX_LOG_FILE_SIZE => format!(
                "max_log_file_size {v} must be 0 (unlimited) or at least {MIN_MAX_LOG_FILE_SIZE}"
            );
        /// Old LOG files kept (the newest); older ones are deleted at each
        /// rotation. Default 1000 (RocksDB's); at least 1.
        keep_log_file_num / KeepLogFileNum: usize = 1000,
            fixed always Db "keep_log_file_num",
            check(v) *v == 0 => "keep_log_file_num must be > 0".into();
        /// Reserve the last level for files ingested behind
        /// (`IngestOptions::ingest_behind`, RocksDB's `allow_ingest_behind`):
        /// flushes and compactions, leveled and universal, never write it nor
        /// read it, so a sorted run of files can later go beneath every
        /// existing key (at sequence number 0). Compactions then keep
        /// tombstones, merge operands and sequence numbers (nothing they write
        /// is bottommost: older data may arrive beneath), as RocksDB does since
        /// its 10.x line. Needs `num_levels >= 3`; refused with FIFO
        /// compaction, which keeps every file in L0. Files already in the last
        /// level when a DB is first opened with it stay there, untouched by
        /// compactions. Fixed at open. Default false.
        allow_ingest_behind / AllowIngestBehind: bool = false,
            fixed always Db "allow_ingest_behind";
        /// Block cache capacity in bytes; 0 disables the cache. Default 32 MiB.
        cache_size / CacheSize: usize = 32 << 20,
            fixed always DefaultTable "cache_size";
        /// Block cache implementation. Default LRU.
        cache_type / CacheType: CacheType = CacheType::Lru,
            fixed always DefaultTable "cache_type";
        /// Cap of automatic iterator readahead. Default 256 KiB.
        max_auto_readahead_size / MaxAutoReadaheadSize: usize = 256 << 10,
            fixed always DefaultTable "max_auto_readahead_size";
        /// Number of LSM levels. Default 7.
        num_levels / NumLevels: usize = 7,
            fixed always DefaultCf "num_levels",
            check(v) !(2..=20).contains(v) => format!("num_levels {v} not in 2..=20");
        /// Create the DB if it does not exist. Default false.
        create_if_missing / CreateIfMissing: bool = false,
            fixed none;
        /// Fail open if the DB exists. Default false.
        error_if_exists / ErrorIfExists: bool = false,
            fixed none;
        /// Let the members of a commit group insert their own batches into the
        /// memtable in parallel after the group's WAL write (RocksDB's option of
        /// the same name). Default true.
        allow_concurrent_memtable_write / AllowConcurrentMemtableWrite: bool = true,
            fixed none;
        /// The block cache has `2^cache_numshardbits` shards; -1 (default)
        /// picks automatically (shards of at least 512 KiB, at most 64).
        cache_numshardbits / CacheNumshardbits: i32 = -1,
            fixed none;
        /// LRU: share of the cache for the high-priority pool (index and filter
        /// blocks). Default 0.5.
        cache_high_pri_pool_ratio / CacheHighPriPoolRatio: f64 = 0.5,
            fixed none;
        /// LRU: share of the cache for the low-priority pool (data blocks);
        /// the rest is the bottom pool. Default 0.0.
        cache_low_pri_pool_ratio / CacheLowPriPoolRatio: f64 = 0.0,
            fixed none;
        /// Refuse to cache a block when the cache cannot make room (everything
        /// else pinned) instead of exceeding the capacity. Default false.
        cache_strict_capacity_limit / CacheStrictCapacityLimit: bool = false,
            fixed none;
        /// Keep SST index blocks and bloom filters in the block cache (high
        /// priority, charged to its capacity, evictable) instead of in each open
        /// table. Bounds the memory of many open tables by the cache capacity at
        /// the price of a cache lookup per table probe. Needs `cache_size > 0`.
        /// Default false.
        cache_index_and_filter_blocks / CacheIndexAndFilterBlocks: bool = false,
            fixed none;
        /// Limits the bytes per second that flushes and compactions write to
        /// table files (RocksDB's `rate_limiter`; build one with
        /// [`RateLimiter::new`](crate::RateLimiter::new) or
        /// [`RateLimiter::generic`](crate::RateLimiter::generic), share it
        /// between DBs to give them one budget). Flush writes go first
        /// (`IoPriority::High`), compaction writes after (`Low`) but never
        /// starved. Only table writes are limited: reads, WAL and MANIFEST
        /// writes and the flush of recovered WALs at open are not. A closing DB
        /// stops waiting on it. Not persisted in the OPTIONS file (a shared
        /// object, like `listeners`). Default `None`: no limit, nothing waits.
        rate_limiter / RateLimiter: Option<Arc<crate::io::RateLimiter>> = None,
            fixed none;
        /// Tell the OS that table files are read at random when they are
        /// opened (`posix_fadvise(RANDOM)`, RocksDB's option of this name): a
        /// point read then reads its block, not the kernel's readahead window
        /// around it. Scans and compactions read ahead by themselves
        /// (`max_auto_readahead_size`, `compaction_readahead_size`). Default
        /// true.
        advise_random_on_open / AdviseRandomOnOpen: bool = true,
            fixed none;
        /// One memtable budget for the whole DB (RocksDB's
        /// `db_write_buffer_size`, with its write buffer manager's rule): once
        /// the active memtables of all column families use more than 7/8 of
        /// this many bytes (or all memtables the whole of it and the active
        /// ones half), the largest active memtable is switched and flushed.
        /// Writers wait only when the memtables use twice the budget while
        /// flushes are running (they free memory: no wedge, unlike RocksDB's
        /// `allow_stall`, facebook/rocksdb#11780). 0 (the default): no DB-wide
        /// budget.
        db_write_buffer_size / DbWriteBufferSize: usize = 0,
            fixed none;
        /// One memory budget for the DB, in bytes (RocksDB's write buffer
        /// manager charged to the block cache, generalised): memtables, open
        /// table readers' indexes and filters, background IO buffers
        /// (compaction readahead, the index and filter of tables being built)
        /// and the block cache share it. The block cache's capacity floats: it
        /// gets what the others leave (at most `cache_size`, so set `cache_size`
        /// to the budget to let it take all the room), evicting as they grow;
        /// the memtables' share (below; or, if less, what the families open
        /// at open can hold: `write_buffer_size` × `max_write_buffer_number`
        /// each) is held for them even while they use less, so the cache stays
        /// steady (a cache that follows every flush leaves freed heap
        /// resident).
        /// The memtables flush their largest at 7/8 of `db_write_buffer_size`,
        /// or of half the budget when that is 0, lowered while table readers and
        /// buffers leave less (never below 1/8 of the budget); writers wait
        /// only when the memtables reach what the others leave while flushes
        /// run. The sum passes the budget only by blocks that readers pin; the
        /// accounting is `Db::stats().memory` and `shale.memory-*` properties.
        /// Compaction readahead is capped at 1/128 of the budget per input and
        /// compaction outputs are cut once their builder holds 1/32 of it. On
        /// glibc, opening a DB with a budget fixes the process's
        /// `M_MMAP_THRESHOLD` at 128 KiB (said in the LOG), so freed large
        /// buffers go back to the kernel instead of staying in the heap; with
        /// another allocator, RSS also includes what it retains.
        /// 0 (the default): no budget (each part bounded by its own option).
        memory_budget / MemoryBudget: usize = 0,
            fixed none,
            check(v) *v > 0 && *v < MIN_MEMORY_BUDGET => format!(
                "memory_budget {v} is below the smallest budget, {MIN_MEMORY_BUDGET} bytes"
            );
        /// Create the families named in `column_families` that do not exist at
        /// open. Default false (such a name fails open with `InvalidArgument`).
        create_missing_column_families / CreateMissingColumnFamilies: bool = false,
            fixed none;
        /// Options of column families at open, by name. A listed family opens
        /// with these options (and they are persisted for it); an existing
        /// family not listed opens with the options persisted in the MANIFEST
        /// at its create (or last open). The `default` family always takes
        /// [`Options::cf`] and may not be listed. Default empty.
        column_families / ColumnFamilies: Vec<(String, CfOptions)> = Vec::new(),
            fixed none;
        /// File system used for every file operation. Default POSIX.
        fs / Fs: Arc<dyn FileSystem> = crate::fs::default_fs(),
            fixed none;
        /// Clock for expiring keys (`put_with_ttl`, `default_ttl_secs`).
        /// Default the system clock; tests inject their own.
        clock / Clock: Arc<dyn crate::base::expiry::Clock> = Arc::new(crate::base::expiry::SystemClock),
            fixed none;
        /// Callbacks told about flushes, compactions, table files, write
        /// stalls and background errors, called in this order for each event
        /// (see `shale::EventListener` for the ordering and threading
        /// guarantees). Default none (then no event thread runs). Not persisted
        /// in the OPTIONS file (code, not configuration).
        listeners / Listeners: Vec<Arc<dyn crate::events::EventListener>> = Vec::new(),
            fixed none;
    }
}

/// RocksDB's `Options` inherits from `DBOptions` and
/// `ColumnFamilyOptions`; in Rust, `Deref` to the `default` family's
/// [`CfOptions`] stands in for that inheritance, so `opts.block_size` reads
/// and `opts.block_size = n` writes `opts.cf.block_size`.
impl std::ops::Deref for Options {
    type Target = CfOptions;
    fn deref(&self) -> &CfOptions {
        &self.cf
    }
}

impl std::ops::DerefMut for Options {
    fn deref_mut(&mut self) -> &mut CfOptions {
        &mut self.cf
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("create_if_missing", &self.create_if_missing)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("max_write_buffer_number", &self.max_write_buffer_number)
            .field("block_size", &self.block_size)
            .field("bloom_bits_per_key", &self.bloom_bits_per_key)
            .field("prefix_extractor", &self.prefix_extractor)
            .field("compression_per_level", &self.compression_per_level)
            .field("wal_recovery_mode", &self.wal_recovery_mode)
            .field("listeners", &self.listeners.len())
            .finish_non_exhaustive()
    }
}

impl Options {
    /// Every DB-wide option (not those of `cf`: see
    /// [`CfOptions::option_infos`]), in declaration order.
    pub fn db_option_infos() -> Vec<OptionInfo> {
        OptionInfo::of(Self::DECLARED)
            .into_iter()
            .filter(|o| o.field != "cf")
            .collect()
    }

    /// A copy of the `default` family's options (`self.cf.clone()`).
    pub fn cf_options(&self) -> CfOptions {
        self.cf.clone()
    }

    /// True when obsolete WALs are archived (`wal_ttl_seconds` or
    /// `wal_size_limit_mb` nonzero).
    pub fn archives_wals(&self) -> bool {
        self.wal_ttl_seconds > 0 || self.wal_size_limit_mb > 0
    }

    /// What the memtables of all families may use before the largest is
    /// flushed (0: no DB-wide limit): `db_write_buffer_size`, or half of
    /// `memory_budget` when only that is set.
    pub(crate) fn write_buffer_budget(&self) -> usize {
        match self.db_write_buffer_size {
            0 => self.memory_budget / 2,
            n => n,
        }
    }

    /// The LOG file's options.
    pub(crate) fn info_log_options(&self) -> InfoLogOptions {
        InfoLogOptions {
            level: self.info_log_level,
            max_file_size: self.max_log_file_size,
            keep_file_num: self.keep_log_file_num,
        }
    }

    /// The block cache's options.
    pub(crate) fn cache_options(&self) -> CacheOptions {
        CacheOptions {
            estimated_entry_charge: self.block_size.max(256),
            num_shard_bits: self.cache_numshardbits,
            strict_capacity_limit: self.cache_strict_capacity_limit,
            high_pri_pool_ratio: self.cache_high_pri_pool_ratio,
            low_pri_pool_ratio: self.cache_low_pri_pool_ratio,
            ..CacheOptions::with_capacity(self.cache_size)
        }
    }

    /// How flush and compaction outputs are created
    /// (`use_direct_io_for_flush_and_compaction`).
    pub(crate) fn flush_file_options(&self) -> crate::fs::FileOptions {
        crate::fs::FileOptions {
            direct: self.use_direct_io_for_flush_and_compaction,
        }
    }

    /// Checks every option; called by `Db::open`.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::InvalidArgument(m));
        self.cache_options().validate()?;
        self.cf
            .validate()
            .and_then(|()| {
                self.cf
                    .validate_levels(self.num_levels, self.allow_ingest_behind)
            })
            .map_err(|e| in_family("default", e))?;
        let mut names = std::collections::HashSet::new();
        for (name, o) in &self.column_families {
            if name == "default" {
                return bad(
                    "column_families lists \"default\": its options are Options::cf".into(),
                );
            }
            if !names.insert(name.as_str()) {
                return bad(format!("column_families lists \"{name}\" twice"));
            }
            o.validate()
                .and_then(|()| o.validate_levels(self.num_levels, self.allow_ingest_behind))
                .map_err(|e| in_family(name, e))?;
        }
        self.check_fields()?;
        if self.memory_budget > 0 && self.db_write_buffer_size > self.memory_budget {
            return bad(format!(
                "db_write_buffer_size {} is larger than memory_budget {}",
                self.db_write_buffer_size, self.memory_budget
            ));
        }
        if self.cache_index_and_filter_blocks && self.cache_size == 0 {
            return bad(
                "cache_index_and_filter_blocks needs a block cache (cache_size > 0)".into(),
            );
        }
        if self.recycle_log_file_num > 0
            && matches!(
                self.wal_recovery_mode,
                WalRecoveryMode::TolerateCorruptedTailRecords
                    | WalRecoveryMode::AbsoluteConsistency
            )
        {
            return bad(format!(
                "recycle_log_file_num {} needs wal_recovery_mode PointInTime or \
                 SkipAnyCorruptedRecords, not {:?}: after a power loss a record torn over \
                 the old bytes of a recycled WAL cannot be told from corruption",
                self.recycle_log_file_num, self.wal_recovery_mode
            ));
        }
        if self.archives_wals() && self.recycle_log_file_num > 0 {
            return bad(format!(
                "WAL archiving (WAL_ttl_seconds {}, WAL_size_limit_MB {}) with \
                 recycle_log_file_num {}: an archived WAL cannot also be reused",
                self.wal_ttl_seconds, self.wal_size_limit_mb, self.recycle_log_file_num
            ));
        }
        if (self.use_direct_reads || self.use_direct_io_for_flush_and_compaction)
            && !crate::fs::DIRECT_IO_PLATFORM
        {
            return bad(
                "use_direct_reads / use_direct_io_for_flush_and_compaction: this platform has no O_DIRECT"
                    .into(),
            );
        }
        Ok(())
    }
}

/// Prefixes an option error with the family it belongs to.
pub(crate) fn in_family(name: &str, e: Error) -> Error {
    match e {
        Error::InvalidArgument(m) => {
            Error::InvalidArgument(format!("column family \"{name}\": {m}"))
        }
        e => e,
    }
}

/// Options for one read.
#[derive(Clone)]
pub struct ReadOptions<'a> {
    /// Read as of this snapshot; default: the latest state.
    pub snapshot: Option<&'a crate::Snapshot>,
    /// Verify block checksums. Shale verifies every block it reads from a
    /// file and has no unverified read path, so only `true` (the default)
    /// is accepted: `false` fails the read with `InvalidArgument` rather
    /// than being ignored.
    pub verify_checksums: bool,
    /// Insert blocks read by this operation into the block cache. Default true.
    pub fill_cache: bool,
    /// Iterators: smallest user key returned (inclusive).
    pub iterate_lower_bound: Option<Vec<u8>>,
    /// Iterators: first user key not returned (exclusive).
    pub iterate_upper_bound: Option<Vec<u8>>,
    /// Iterators: read this many bytes ahead on every table read; 0 (the
    /// default) reads ahead automatically once a scan is sequential.
    pub readahead_size: usize,
    /// Iterators (RocksDB's option): after a seek, return only keys whose
    /// prefix (by the family's `prefix_extractor`) equals the seek key's
    /// (for `seek_to_first` / `seek_to_last`: the first key found), and
    /// skip memtables and tables whose prefix filter rules that prefix
    /// out. A seek key outside the extractor's domain reads in total
    /// order. A family without an extractor fails the iterator with
    /// `InvalidArgument`; so do point reads (it is an iterator option).
    /// Default false: iterators always read in total order (where RocksDB
    /// leaves prefix seeks past the prefix undefined).
    pub prefix_same_as_start: bool,
    /// Never consult prefix filters of SSTs or memtables in iterators, nor
    /// prefix-only SST filters in point reads (the memtable bloom still
    /// serves point reads). Results are the same; only the work differs.
    /// Default false.
    pub total_order_seek: bool,
}

impl Default for ReadOptions<'_> {
    fn default() -> Self {
        ReadOptions::new()
    }
}

impl ReadOptions<'_> {
    /// Rejects what Shale cannot honour (see the fields).
    pub(crate) fn validate(&self) -> Result<()> {
        if !self.verify_checksums {
            return Err(Error::InvalidArgument(
                "ReadOptions::verify_checksums = false: Shale always verifies blocks read from files"
                    .into(),
            ));
        }
        Ok(())
    }

    /// `validate` for point reads (`get`, `multi_get`): iterator-only
    /// options are rejected.
    pub(crate) fn validate_point(&self) -> Result<()> {
        self.validate()?;
        if self.prefix_same_as_start {
            return Err(Error::InvalidArgument(
                "ReadOptions::prefix_same_as_start applies to iterators, not point reads".into(),
            ));
        }
        Ok(())
    }

    /// Defaults: latest state, checksums verified, cache filled.
    pub fn new() -> Self {
        ReadOptions {
            snapshot: None,
            verify_checksums: true,
            fill_cache: true,
            iterate_lower_bound: None,
            iterate_upper_bound: None,
            readahead_size: 0,
            prefix_same_as_start: false,
            total_order_seek: false,
        }
    }
}

/// Options for one write.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// fsync the WAL before acknowledging. Default false (the write is handed
    /// to the OS before it is acknowledged).
    pub sync: bool,
    /// Do not write the WAL (the write is lost on any crash until flushed).
    /// Together with `sync` it is rejected with `InvalidArgument`, as in
    /// RocksDB (there is nothing to sync).
    pub disable_wal: bool,
}

#[cfg(test)]
mod tests;
