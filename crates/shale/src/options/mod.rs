//! Typed options with documented defaults, validated once at open.
//!
//! Subsystems take narrow structs derived from [`Options`] (for example the
//! SST builder takes `sst::TableOptions`), never the whole thing. Per-family
//! options are [`CfOptions`] (`cf.rs`); the flat per-family fields of
//! `Options` configure the `default` family.

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
pub use cf::CfOptions;
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

/// Block cache implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheType {
    /// Sharded LRU with priority pools.
    Lru,
    /// Lock-free clock cache.
    Clock,
}

/// Options for opening a DB.
#[derive(Clone)]
pub struct Options {
    /// The `default` family's options. `Options` dereferences to them
    /// (`opts.write_buffer_size` is `opts.cf.write_buffer_size`): see the
    /// `Deref` impl.
    pub cf: CfOptions,
    /// Create the DB if it does not exist. Default false.
    pub create_if_missing: bool,
    /// Fail open if the DB exists. Default false.
    pub error_if_exists: bool,
    /// At open, open every live table (read and verify its footer, index
    /// and filter blocks), so a damaged table fails `Db::open` with
    /// `Corruption` instead of failing the first read that reaches it.
    /// Nothing else: block checksums are verified on every read whatever
    /// this says, a table missing from the directory always fails open, and
    /// WAL damage is `wal_recovery_mode`'s. Default true.
    pub paranoid_checks: bool,
    /// WAL recovery mode. Default `PointInTime`.
    pub wal_recovery_mode: WalRecoveryMode,
    /// Keep WAL writes in a process buffer until `flush_wal` (they may be
    /// lost on a process crash). Default false.
    pub manual_wal_flush: bool,
    /// Write WAL files through a shared memory mapping (Linux, where the
    /// file system can `fallocate`; elsewhere `write(2)`): an append is a
    /// copy into the page cache, no system call. The durability contract is
    /// unchanged: the bytes belong to the OS when the write returns (a
    /// process crash keeps them), `sync` is `fdatasync`. Space is reserved a
    /// megabyte ahead, so a full disk is an error, not a SIGBUS. Not
    /// RocksDB's `allow_mmap_writes` (which maps every file): tables are
    /// written with `write(2)` either way. Default true.
    pub wal_mmap_writes: bool,
    /// Tables written by flush and compaction: every time this many more
    /// bytes were written, ask the OS to start writing back the range
    /// written since the last request, except the last 1 MiB
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`, Linux; elsewhere nothing),
    /// so writeback is spread over the file instead of one burst at its
    /// `fdatasync` (RocksDB's option of that name, same rule; see
    /// `io::RangeSyncer`). Durability is unchanged. 0 turns it off.
    /// Default 0 (as RocksDB; db_bench's default is 0 too).
    pub bytes_per_sync: u64,
    /// The same for WAL files (RocksDB's `wal_bytes_per_sync`): it bounds
    /// the dirty WAL pages a sync write or a memtable switch later has to
    /// wait for. 0 turns it off. Default 0.
    pub wal_bytes_per_sync: u64,
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
    pub recycle_log_file_num: usize,
    /// Let the members of a commit group insert their own batches into the
    /// memtable in parallel after the group's WAL write (RocksDB's option of
    /// the same name). Default true.
    pub allow_concurrent_memtable_write: bool,
    /// Number of LSM levels. Default 7.
    pub num_levels: usize,
    /// Background flush + compaction threads. Default 2.
    pub max_background_jobs: usize,
    /// Threads one compaction may use (RocksDB's option of that name): a
    /// compaction is split by key into up to this many ranges of about
    /// equal input bytes (each at least half a target file), run at once,
    /// the extra threads beside `max_background_jobs`. Same output, more
    /// cores; 1 runs every compaction on one thread. Default 1.
    pub max_subcompactions: usize,
    /// Write rate in bytes per second while writes are delayed (L0 slowdown
    /// trigger or soft pending-bytes limit). Default 16 MiB/s. Lower values
    /// protect reads and compaction; higher values let writes run ahead.
    pub delayed_write_rate: u64,
    /// Automatic resumes after a soft or hard background error (a failed
    /// compaction, flush or MANIFEST write), counted since a flush or
    /// compaction last succeeded; 0 disables them (`Db::resume` still
    /// works). Fatal errors (WAL write or sync, corruption) are never
    /// resumed. Default `i32::MAX` (RocksDB's `max_bgerror_resume_count`).
    pub max_bgerror_resume_count: u64,
    /// Microseconds from a background error (or a failed resume) to the next
    /// automatic resume. Default 1 000 000 (RocksDB's
    /// `bgerror_resume_retry_interval`); must be > 0.
    pub bgerror_resume_retry_interval: u64,
    /// Block cache capacity in bytes; 0 disables the cache. Default 32 MiB.
    pub cache_size: usize,
    /// Block cache implementation. Default LRU.
    pub cache_type: CacheType,
    /// The block cache has `2^cache_numshardbits` shards; -1 (default)
    /// picks automatically (shards of at least 512 KiB, at most 64).
    pub cache_numshardbits: i32,
    /// LRU: share of the cache for the high-priority pool (index and filter
    /// blocks). Default 0.5.
    pub cache_high_pri_pool_ratio: f64,
    /// LRU: share of the cache for the low-priority pool (data blocks);
    /// the rest is the bottom pool. Default 0.0.
    pub cache_low_pri_pool_ratio: f64,
    /// Refuse to cache a block when the cache cannot make room (everything
    /// else pinned) instead of exceeding the capacity. Default false.
    pub cache_strict_capacity_limit: bool,
    /// Keep SST index blocks and bloom filters in the block cache (high
    /// priority, charged to its capacity, evictable) instead of in each open
    /// table. Bounds the memory of many open tables by the cache capacity at
    /// the price of a cache lookup per table probe. Needs `cache_size > 0`.
    /// Default false.
    pub cache_index_and_filter_blocks: bool,
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
    pub rate_limiter: Option<Arc<crate::io::RateLimiter>>,
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
    pub max_open_files: i32,
    /// Bytes read per IO from each compaction input table, from its first
    /// block on (one read then serves many blocks); 0 reads ahead
    /// automatically as iterators do (growing from 8 KiB to
    /// `max_auto_readahead_size`). Default 2 MiB (RocksDB 8.6+).
    pub compaction_readahead_size: usize,
    /// Cap of automatic iterator readahead. Default 256 KiB.
    pub max_auto_readahead_size: usize,
    /// Tell the OS that table files are read at random when they are
    /// opened (`posix_fadvise(RANDOM)`, RocksDB's option of this name): a
    /// point read then reads its block, not the kernel's readahead window
    /// around it. Scans and compactions read ahead by themselves
    /// (`max_auto_readahead_size`, `compaction_readahead_size`). Default
    /// true.
    pub advise_random_on_open: bool,
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
    pub use_direct_reads: bool,
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
    pub use_direct_io_for_flush_and_compaction: bool,
    /// One memtable budget for the whole DB (RocksDB's
    /// `db_write_buffer_size`, with its write buffer manager's rule): once
    /// the active memtables of all column families use more than 7/8 of
    /// this many bytes (or all memtables the whole of it and the active
    /// ones half), the largest active memtable is switched and flushed.
    /// Writers wait only when the memtables use twice the budget while
    /// flushes are running (they free memory: no wedge, unlike RocksDB's
    /// `allow_stall`, facebook/rocksdb#11780). 0 (the default): no DB-wide
    /// budget.
    pub db_write_buffer_size: usize,
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
    pub memory_budget: usize,
    /// Once the live WAL files exceed this many bytes, the column families
    /// still holding unflushed writes in the oldest WAL are flushed so that
    /// it can be deleted (an idle family never pins old WALs). 0 (the
    /// default): 4 × the sum of every family's `write_buffer_size`, as
    /// RocksDB.
    pub max_total_wal_size: u64,
    /// Create the families named in `column_families` that do not exist at
    /// open. Default false (such a name fails open with `InvalidArgument`).
    pub create_missing_column_families: bool,
    /// Options of column families at open, by name. A listed family opens
    /// with these options (and they are persisted for it); an existing
    /// family not listed opens with the options persisted in the MANIFEST
    /// at its create (or last open). The `default` family always takes the
    /// flat fields of `Options` and may not be listed. Default empty.
    pub column_families: Vec<(String, CfOptions)>,
    /// File system used for every file operation. Default POSIX.
    pub fs: Arc<dyn FileSystem>,
    /// Clock for expiring keys (`put_with_ttl`, `default_ttl_secs`).
    /// Default the system clock; tests inject their own.
    pub clock: Arc<dyn crate::base::expiry::Clock>,
    /// Callbacks told about flushes, compactions, table files, write
    /// stalls and background errors, called in this order for each event
    /// (see `shale::EventListener` for the ordering and threading
    /// guarantees). Default none (then no event thread runs). Not persisted
    /// in the OPTIONS file (code, not configuration).
    pub listeners: Vec<Arc<dyn crate::events::EventListener>>,
    /// Lines of the `LOG` file below this level are not written. Default
    /// `Info` (every line but debug ones).
    pub info_log_level: InfoLogLevel,
    /// `LOG` is renamed `LOG.old.<micros>` and a new one started before a
    /// line would take it past this many bytes (it is also rotated at
    /// open). 0 (the default, as RocksDB): rotated only at open.
    pub max_log_file_size: u64,
    /// Old LOG files kept (the newest); older ones are deleted at each
    /// rotation. Default 1000 (RocksDB's); at least 1.
    pub keep_log_file_num: usize,
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

impl Default for Options {
    fn default() -> Self {
        Options {
            cf: CfOptions::default(),
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: true,
            wal_recovery_mode: WalRecoveryMode::PointInTime,
            manual_wal_flush: false,
            wal_mmap_writes: true,
            bytes_per_sync: 0,
            wal_bytes_per_sync: 0,
            recycle_log_file_num: 0,
            allow_concurrent_memtable_write: true,
            num_levels: 7,
            max_background_jobs: 2,
            max_subcompactions: 1,
            delayed_write_rate: 16 << 20,
            max_bgerror_resume_count: i32::MAX as u64,
            bgerror_resume_retry_interval: 1_000_000,
            cache_size: 32 << 20,
            cache_type: CacheType::Lru,
            cache_numshardbits: -1,
            cache_high_pri_pool_ratio: 0.5,
            cache_low_pri_pool_ratio: 0.0,
            cache_strict_capacity_limit: false,
            cache_index_and_filter_blocks: false,
            rate_limiter: None,
            max_open_files: -1,
            compaction_readahead_size: 2 << 20,
            max_auto_readahead_size: 256 << 10,
            advise_random_on_open: true,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            db_write_buffer_size: 0,
            memory_budget: 0,
            max_total_wal_size: 0,
            create_missing_column_families: false,
            column_families: Vec::new(),
            fs: crate::fs::default_fs(),
            clock: Arc::new(crate::base::expiry::SystemClock),
            listeners: Vec::new(),
            info_log_level: InfoLogLevel::Info,
            max_log_file_size: 0,
            keep_log_file_num: 1000,
        }
    }
}

impl Options {
    /// A copy of the `default` family's options (`self.cf.clone()`).
    pub fn cf_options(&self) -> CfOptions {
        self.cf.clone()
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
        let default = &self.cf;
        default
            .validate()
            .and_then(|()| default.validate_levels(self.num_levels))
            .map_err(|e| in_family("default", e))?;
        let mut names = std::collections::HashSet::new();
        for (name, o) in &self.column_families {
            if name == "default" {
                return bad(
                    "column_families lists \"default\": its options are the flat fields of Options"
                        .into(),
                );
            }
            if !names.insert(name.as_str()) {
                return bad(format!("column_families lists \"{name}\" twice"));
            }
            o.validate()
                .and_then(|()| o.validate_levels(self.num_levels))
                .map_err(|e| in_family(name, e))?;
        }
        if self.memory_budget > 0 && self.db_write_buffer_size > self.memory_budget {
            return bad(format!(
                "db_write_buffer_size {} is larger than memory_budget {}",
                self.db_write_buffer_size, self.memory_budget
            ));
        }
        if self.memory_budget > 0 && self.memory_budget < MIN_MEMORY_BUDGET {
            return bad(format!(
                "memory_budget {} is below the smallest budget, {MIN_MEMORY_BUDGET} bytes",
                self.memory_budget
            ));
        }
        if self.cache_index_and_filter_blocks && self.cache_size == 0 {
            return bad(
                "cache_index_and_filter_blocks needs a block cache (cache_size > 0)".into(),
            );
        }
        if self.max_open_files != -1 && self.max_open_files < MIN_MAX_OPEN_FILES {
            return bad(format!(
                "max_open_files {} must be -1 (unlimited) or at least {}",
                self.max_open_files, MIN_MAX_OPEN_FILES
            ));
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
        if !(2..=20).contains(&self.num_levels) {
            return bad(format!("num_levels {} not in 2..=20", self.num_levels));
        }
        if self.max_background_jobs == 0 {
            return bad("max_background_jobs must be > 0".into());
        }
        if !(1..=64).contains(&self.max_subcompactions) {
            return bad(format!(
                "max_subcompactions {} not in 1..=64",
                self.max_subcompactions
            ));
        }
        if self.delayed_write_rate == 0 {
            return bad("delayed_write_rate must be > 0".into());
        }
        if self.bgerror_resume_retry_interval == 0 {
            return bad("bgerror_resume_retry_interval must be > 0".into());
        }
        if (self.use_direct_reads || self.use_direct_io_for_flush_and_compaction)
            && !crate::fs::DIRECT_IO_PLATFORM
        {
            return bad(
                "use_direct_reads / use_direct_io_for_flush_and_compaction: this platform has no O_DIRECT"
                    .into(),
            );
        }
        if self.keep_log_file_num == 0 {
            return bad("keep_log_file_num must be > 0".into());
        }
        if self.max_log_file_size != 0 && self.max_log_file_size < MIN_MAX_LOG_FILE_SIZE {
            return bad(format!(
                "max_log_file_size {} must be 0 (unlimited) or at least {MIN_MAX_LOG_FILE_SIZE}",
                self.max_log_file_size
            ));
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
mod tests {
    use super::*;

    #[test]
    fn validation() {
        assert!(Options::default().validate().is_ok());
        let o = Options {
            cf: crate::CfOptions {
                write_buffer_size: 0,
                ..Default::default()
            },
            ..Options::default()
        };
        assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
        let o = Options {
            cf: crate::CfOptions {
                max_bytes_for_level_multiplier: 1.5,
                ..Default::default()
            },
            ..Options::default()
        };
        assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
        let o = Options {
            cf: crate::CfOptions {
                soft_pending_compaction_bytes_limit: 10,
                hard_pending_compaction_bytes_limit: 5,
                ..Default::default()
            },
            ..Options::default()
        };
        assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
        let o = Options {
            delayed_write_rate: 0,
            ..Options::default()
        };
        assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
        for (n, ok) in [(-2, false), (-1, true), (0, false), (19, false), (20, true)] {
            let o = Options {
                max_open_files: n,
                ..Options::default()
            };
            assert_eq!(o.validate().is_ok(), ok, "max_open_files {n}");
        }
        assert!(Compression::parse("snappy").is_err());
        assert_eq!(Compression::parse("ZSTD").unwrap(), Compression::Zstd);
        let o = Options {
            column_families: vec![(
                "users".into(),
                CfOptions {
                    block_size: 0,
                    ..CfOptions::default()
                },
            )],
            ..Options::default()
        };
        match o.validate() {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("\"users\"") && m.contains("block_size"), "{m}")
            }
            other => panic!("{other:?}"),
        }
        let o = Options {
            column_families: vec![("default".into(), CfOptions::default())],
            ..Options::default()
        };
        assert!(matches!(o.validate(), Err(Error::InvalidArgument(_))));
    }
}
