//! Open table readers, keyed by file number (RocksDB's table cache).
//!
//! Two regimes, chosen by `Options::max_open_files`:
//! - `-1`, unbounded (the default): a table opened once stays open until
//!   its file is deleted. Readers live in sharded `RwLock<HashMap>`s (a hit
//!   takes one shard's read lock) and are also pinned in their `FileMeta`
//!   (`FileMeta::table`), so point reads reach them with no lock and no
//!   reference-count update ([`TableCache::table_of`]).
//! - `n >= 20`, bounded: at most `n - 10` readers are cached (RocksDB
//!   reserves ten descriptors for the WAL, MANIFEST, LOG and the like), in
//!   one mutex-guarded [`Lru`]; nothing is pinned in `FileMeta`, every read
//!   goes through the cache and holds its reader by `Arc` while it uses it.
//!   Blob file readers live in the same LRU ([`SharedBlobReaders`], handed
//!   to the DB's `BlobSource`): tables and blob files together hold at
//!   most `n - 10` cached readers, as RocksDB's `BlobFileCache` shares its
//!   table cache. File numbers are unique across tables and blob files, so
//!   both are keyed by number.
//!
//! A miss opens the file outside any lock, then inserts; two threads racing
//! to open the same file both succeed and one reader is kept. Eviction only
//! drops the cache's handle: a reader in use (a read in progress, an
//! iterator, a compaction) stays valid and keeps its file open until its
//! last user drops it, which also frees the index and filter it owns. So
//! the table files open at any time are the cached readers (at most the
//! capacity), evicted readers still in use, and opens in flight.
//!
//! Compactions read their inputs through [`TableCache::compaction_inputs`]:
//! one iterator per L0 file, and per deeper level one iterator that opens
//! its files one at a time (as RocksDB's compaction input iterator), so a
//! compaction holds a few tables open however many files it reads.
//!
//! Direct IO: with `use_direct_reads` every table is opened with
//! `FileOptions::direct` (and no access-pattern hint: there is no page
//! cache to advise). With `use_direct_io_for_flush_and_compaction` alone,
//! each compaction input is also opened once more, directly, for the
//! compaction's reads (`Table::iter_reading`), while the cached reader
//! stays buffered for user reads.
//!
//! Read counters are per table; those of a reader leaving the cache
//! (evicted, or its file deleted) are added to `retired`, so the sums only
//! grow (reads an evicted reader serves after leaving are not counted).
//!
//! Thread-safety: every method takes `&self`. Lock order: an LRU or shard
//! lock before `retired`. Readers are dropped (files closed) after the
//! locks are released.

pub(crate) mod block_cache;
mod lru;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use crate::base::compare_internal;
use crate::blob::source::BlobReaderCache;
use crate::blob::BlobFileReader;
use crate::error::{Error, Result};
use crate::fs::{explain_direct_refusal, AccessPattern, FileOptions, FileSystem};
use crate::io::accounting::{self, Purpose};
use crate::iter::level::{LevelFiles, LevelIterator};
use crate::iter::InternalIterator;
use crate::memory::Ledger;
use crate::sst::ReadaheadPolicy;
use crate::sst::{BlockCacheHook, Table};
use crate::version::filename::table_file_name;
use crate::version::FileMeta;

use self::lru::Lru;

const SHARDS: usize = 16;

/// Descriptors RocksDB keeps out of the table cache's share of
/// `max_open_files` (WAL, MANIFEST, LOG, ...).
const NON_TABLE_FILES: i32 = 10;

use crate::options::MIN_MAX_OPEN_FILES;

/// Read counters summed over tables.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TableStatsSum {
    pub blocks_read: u64,
    pub bytes_read: u64,
    pub filter_checks: u64,
    pub filter_useful: u64,
    pub filter_false_positives: u64,
    pub prefix_checks: u64,
    pub prefix_useful: u64,
    pub index_cache_hits: u64,
    pub index_cache_misses: u64,
    pub filter_cache_hits: u64,
    pub filter_cache_misses: u64,
}

impl TableStatsSum {
    fn add(&mut self, t: &Table) {
        let s = t.stats();
        self.blocks_read += s.sum(|c| &c.blocks_read);
        self.bytes_read += s.sum(|c| &c.bytes_read);
        self.filter_checks += s.sum(|c| &c.filter_checks);
        self.filter_useful += s.sum(|c| &c.filter_useful);
        self.filter_false_positives += s.sum(|c| &c.filter_false_positives);
        self.prefix_checks += s.sum(|c| &c.prefix_checks);
        self.prefix_useful += s.sum(|c| &c.prefix_useful);
        self.index_cache_hits += s.sum(|c| &c.index_cache_hits);
        self.index_cache_misses += s.sum(|c| &c.index_cache_misses);
        self.filter_cache_hits += s.sum(|c| &c.filter_cache_hits);
        self.filter_cache_misses += s.sum(|c| &c.filter_cache_misses);
    }

    fn merge(&mut self, o: &TableStatsSum) {
        self.blocks_read += o.blocks_read;
        self.bytes_read += o.bytes_read;
        self.filter_checks += o.filter_checks;
        self.filter_useful += o.filter_useful;
        self.filter_false_positives += o.filter_false_positives;
        self.prefix_checks += o.prefix_checks;
        self.prefix_useful += o.prefix_useful;
        self.index_cache_hits += o.index_cache_hits;
        self.index_cache_misses += o.index_cache_misses;
        self.filter_cache_hits += o.filter_cache_hits;
        self.filter_cache_misses += o.filter_cache_misses;
    }
}

/// A reader in the bounded cache: a table's, or a blob file's.
#[derive(Clone)]
enum Cached {
    Table(Arc<Table>),
    Blob(Arc<BlobFileReader>),
}

/// Where the readers are kept; see the module comment.
enum Store {
    Unbounded(Vec<RwLock<HashMap<u64, Arc<Table>>>>),
    Bounded(Mutex<Lru<Cached>>),
}

/// The error for a file number cached as the other kind of file (numbers
/// are unique across tables and blob files, so only a damaged MANIFEST
/// naming one number twice gets here).
fn kind_clash(number: u64) -> Error {
    Error::corruption(
        table_file_name(number),
        0,
        format!("file number {number} names both a table and a blob file"),
    )
}

pub(crate) struct TableCache {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    block_cache: Option<Arc<dyn BlockCacheHook>>,
    /// Tables keep their index and filter in the block cache.
    cache_index_and_filter_blocks: bool,
    store: Store,
    /// Counters of readers that left the cache.
    retired: Mutex<TableStatsSum>,
    /// The DB's memory ledger, charged by every reader opened here.
    ledger: Option<Arc<Ledger>>,
    /// Tables are opened with an `AccessPattern::Random` hint
    /// (`advise_random_on_open`).
    advise_random: bool,
    /// Tables are opened for direct reads (`use_direct_reads`).
    direct_reads: bool,
    /// Compactions read their inputs through direct handles of their own
    /// (`use_direct_io_for_flush_and_compaction` without
    /// `use_direct_reads`).
    compaction_direct: bool,
}

/// The file-descriptor limit of the process (`RLIMIT_NOFILE`, soft), if
/// known and finite.
fn fd_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `getrlimit` only writes the `rlimit` we pass by pointer.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every target
    (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur as u64)
}

/// `max_open_files` as RocksDB applies it: -1 stays unbounded; a bound
/// above the process's descriptor limit is lowered to that limit (but not
/// below [`MIN_MAX_OPEN_FILES`]). `Options::validate` has rejected values
/// below 20 other than -1.
pub(crate) fn effective_max_open_files(requested: i32) -> i32 {
    if requested < 0 {
        return -1;
    }
    let limit = fd_limit().map_or(i32::MAX, |l| l.min(i32::MAX as u64) as i32);
    requested.min(limit).max(MIN_MAX_OPEN_FILES)
}

impl TableCache {
    /// A cache for the tables in `dir`: unbounded for `max_open_files`
    /// -1, else holding at most `max_open_files - 10` readers (pass
    /// [`effective_max_open_files`]).
    pub(crate) fn new(
        dir: PathBuf,
        fs: Arc<dyn FileSystem>,
        block_cache: Option<Arc<dyn BlockCacheHook>>,
        cache_index_and_filter_blocks: bool,
        max_open_files: i32,
    ) -> Self {
        let store = if max_open_files < 0 {
            Store::Unbounded((0..SHARDS).map(|_| RwLock::new(HashMap::new())).collect())
        } else {
            let cap = max_open_files.saturating_sub(NON_TABLE_FILES).max(1) as usize;
            Store::Bounded(Mutex::new(Lru::new(cap)))
        };
        TableCache {
            dir,
            fs,
            block_cache,
            cache_index_and_filter_blocks,
            store,
            retired: Mutex::new(TableStatsSum::default()),
            ledger: None,
            advise_random: false,
            direct_reads: false,
            compaction_direct: false,
        }
    }

    /// Opens every table with an `AccessPattern::Random` hint.
    pub(crate) fn advising_random(mut self, advise: bool) -> Self {
        self.advise_random = advise;
        self
    }

    /// Opens tables for direct reads (`use_direct_reads`) and compaction
    /// inputs for direct reads (`use_direct_io_for_flush_and_compaction`).
    pub(crate) fn direct_io(mut self, reads: bool, flush_and_compaction: bool) -> Self {
        self.direct_reads = reads;
        self.compaction_direct = flush_and_compaction && !reads;
        self
    }

    /// Charges every reader this cache opens to `ledger` (table readers'
    /// memory and their iterators' readahead buffers).
    pub(crate) fn charging(mut self, ledger: Arc<Ledger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// The most readers kept open; `None` when unbounded.
    pub(crate) fn capacity(&self) -> Option<usize> {
        match &self.store {
            Store::Unbounded(_) => None,
            Store::Bounded(lru) => Some(lru.lock().capacity()),
        }
    }

    /// The reader of `f`. Unbounded: pinned in `f` after the first use, so
    /// later reads take no lock and no reference. Bounded: a handle from
    /// the LRU (the caller holds it while it reads).
    #[inline]
    pub(crate) fn table_of<'a>(&self, f: &'a FileMeta) -> Result<Cow<'a, Arc<Table>>> {
        match &self.store {
            Store::Unbounded(_) => {
                if let Some(t) = f.table.get() {
                    return Ok(Cow::Borrowed(t));
                }
                let t = self.get(f)?;
                Ok(Cow::Borrowed(f.table.get_or_init(|| t)))
            }
            Store::Bounded(_) => Ok(Cow::Owned(self.get(f)?)),
        }
    }

    /// The reader of table `f`, opening it on a miss (presenting its
    /// entries at `f.global_seqno`, the MANIFEST's for an ingested table).
    pub(crate) fn get(&self, f: &FileMeta) -> Result<Arc<Table>> {
        let number = f.number;
        match &self.store {
            Store::Unbounded(shards) => {
                if let Some(t) = shards[shard_of(number)].read().get(&number) {
                    return Ok(Arc::clone(t));
                }
                let table = self.open(f)?;
                let mut shard = shards[shard_of(number)].write();
                Ok(Arc::clone(shard.entry(number).or_insert(table)))
            }
            Store::Bounded(lru) => {
                match lru.lock().get(number) {
                    Some(Cached::Table(t)) => return Ok(t),
                    Some(Cached::Blob(_)) => return Err(kind_clash(number)),
                    None => {}
                }
                let table = self.open(f)?;
                match self.insert_bounded(lru, number, Cached::Table(table)) {
                    Cached::Table(t) => Ok(t),
                    Cached::Blob(_) => Err(kind_clash(number)),
                }
            }
        }
    }

    /// Inserts `value` into the bounded LRU and returns the value cached
    /// under `number` now; the counters of evicted tables are retired, and
    /// the evicted readers no one else is reading are closed unlocked.
    fn insert_bounded(&self, lru: &Mutex<Lru<Cached>>, number: u64, value: Cached) -> Cached {
        let (kept, evicted) = {
            let mut lru = lru.lock();
            let (kept, evicted) = lru.insert(number, value);
            debug_assert!(lru.len() <= lru.capacity());
            if !evicted.is_empty() {
                let mut retired = self.retired.lock();
                for c in &evicted {
                    if let Cached::Table(t) = c {
                        retired.add(t);
                    }
                }
            }
            (kept, evicted)
        };
        drop(evicted);
        kept
    }

    /// The blob-reader store sharing this cache's bound, for the DB's
    /// `BlobSource`; `None` when the cache is unbounded (blob readers then
    /// stay open until their files are deleted, as tables do).
    pub(crate) fn blob_readers(self: &Arc<Self>) -> Option<Arc<dyn BlobReaderCache>> {
        match self.store {
            Store::Unbounded(_) => None,
            Store::Bounded(_) => Some(Arc::new(SharedBlobReaders(Arc::clone(self)))),
        }
    }

    /// Opens table `number` (a miss). Never called with the DB mutex held,
    /// so sync point `TableCache::Open` may pause here (a background
    /// thread in the delete-only check's unlocked window, say).
    fn open(&self, f: &FileMeta) -> Result<Arc<Table>> {
        let (number, global_seqno) = (f.number, f.global_seqno);
        crate::sync_point!("TableCache::Open");
        let name = table_file_name(number);
        let path = self.dir.join(&name);
        // Reading the footer, index and filter is the open's, whoever asks.
        let _io = accounting::scope(Purpose::Other);
        let file = self
            .fs
            .open_random_with(
                &path,
                FileOptions {
                    direct: self.direct_reads,
                },
            )
            .map_err(|e| explain_direct_refusal("use_direct_reads", &path, e))?;
        if self.advise_random && !self.direct_reads {
            file.advise(AccessPattern::Random);
        }
        let table = Table::open_at(
            file,
            name.clone(),
            number,
            self.block_cache.clone(),
            self.cache_index_and_filter_blocks,
            global_seqno,
        )?;
        // A table stored under another table's name verifies block by block;
        // its properties name the file it was written as (an external
        // table, written outside the DB, names none: 0; an imported one the
        // number it had in the exported family, `written_as`).
        let recorded = table.properties().file_number;
        let external = table.properties().external_version > 0 && recorded == 0;
        let imported = f.written_as != 0 && recorded == f.written_as;
        if recorded != number && !external && !imported {
            return Err(Error::corruption(
                name,
                0,
                format!("table properties say this is file {recorded}, not {number}"),
            ));
        }
        if let Some(l) = &self.ledger {
            table.charge_to(l);
        }
        Ok(table)
    }

    /// Calls `each` on every cached reader, under the cache's locks.
    fn for_each(&self, mut each: impl FnMut(&Table)) {
        match &self.store {
            Store::Unbounded(shards) => {
                for shard in shards {
                    shard.read().values().for_each(|t| each(t));
                }
            }
            Store::Bounded(lru) => lru.lock().values().for_each(|c| {
                if let Cached::Table(t) = c {
                    each(t);
                }
            }),
        }
    }

    /// Filter counters of each open table, by file number: checks, useful,
    /// false positives, prefix checks, prefix useful.
    pub(crate) fn filter_counters(&self) -> HashMap<u64, [u64; 5]> {
        let mut out = HashMap::new();
        self.for_each(|t| {
            let s = t.stats();
            out.insert(
                t.properties().file_number,
                [
                    s.sum(|c| &c.filter_checks),
                    s.sum(|c| &c.filter_useful),
                    s.sum(|c| &c.filter_false_positives),
                    s.sum(|c| &c.prefix_checks),
                    s.sum(|c| &c.prefix_useful),
                ],
            );
        });
        out
    }

    /// The read counters of every table read through this cache.
    pub(crate) fn sum_stats(&self) -> TableStatsSum {
        let mut out = TableStatsSum::default();
        self.for_each(|t| out.add(t));
        out.merge(&self.retired.lock());
        out
    }

    /// Number of cached (open) table readers (blob readers sharing a
    /// bounded cache are not counted: see `shale.num-open-blob-files`).
    pub(crate) fn num_open(&self) -> usize {
        match &self.store {
            Store::Unbounded(shards) => shards.iter().map(|s| s.read().len()).sum(),
            Store::Bounded(lru) => {
                let lru = lru.lock();
                lru.values()
                    .filter(|c| matches!(c, Cached::Table(_)))
                    .count()
            }
        }
    }

    /// Memory the cached readers hold themselves (indexes and filters not
    /// in the block cache).
    pub(crate) fn readers_memory(&self) -> usize {
        let mut n = 0;
        self.for_each(|t| n += t.memory_usage());
        n
    }

    /// Forgets table `number` (its file is being deleted).
    pub(crate) fn evict(&self, number: u64) {
        let gone = match &self.store {
            Store::Unbounded(shards) => {
                let mut shard = shards[shard_of(number)].write();
                let gone = shard.remove(&number);
                if let Some(t) = &gone {
                    self.retired.lock().add(t);
                }
                gone
            }
            Store::Bounded(lru) => {
                let mut lru = lru.lock();
                match lru.remove(number) {
                    Some(Cached::Table(t)) => {
                        self.retired.lock().add(&t);
                        Some(t)
                    }
                    // A blob reader under a table's number: put it back.
                    Some(blob @ Cached::Blob(_)) => {
                        lru.insert(number, blob);
                        None
                    }
                    None => None,
                }
            }
        };
        drop(gone);
    }
}

/// The blob readers of a bounded [`TableCache`] (see the module comment).
struct SharedBlobReaders(Arc<TableCache>);

impl SharedBlobReaders {
    fn lru(&self) -> Option<&Mutex<Lru<Cached>>> {
        match &self.0.store {
            Store::Bounded(lru) => Some(lru),
            Store::Unbounded(_) => None,
        }
    }
}

impl BlobReaderCache for SharedBlobReaders {
    fn lookup_reader(&self, number: u64) -> Option<Arc<BlobFileReader>> {
        match self.lru()?.lock().get(number)? {
            Cached::Blob(r) => Some(r),
            Cached::Table(_) => None,
        }
    }

    fn insert_reader(&self, number: u64, reader: Arc<BlobFileReader>) -> Arc<BlobFileReader> {
        let Some(lru) = self.lru() else {
            return reader;
        };
        match self
            .0
            .insert_bounded(lru, number, Cached::Blob(Arc::clone(&reader)))
        {
            Cached::Blob(r) => r,
            // A table under this number (a damaged MANIFEST): the blob
            // reader serves this read uncached.
            Cached::Table(_) => reader,
        }
    }

    fn remove_reader(&self, number: u64) {
        let Some(lru) = self.lru() else { return };
        let gone = {
            let mut lru = lru.lock();
            match lru.remove(number) {
                Some(table @ Cached::Table(_)) => {
                    lru.insert(number, table);
                    None
                }
                gone => gone,
            }
        };
        drop(gone);
    }

    fn num_readers(&self) -> usize {
        let Some(lru) = self.lru() else { return 0 };
        let lru = lru.lock();
        lru.values()
            .filter(|c| matches!(c, Cached::Blob(_)))
            .count()
    }
}

/// The files of one sorted level (L1+) of a compaction's inputs, opened
/// one at a time through the cache.
struct SortedRun {
    cache: Arc<TableCache>,
    files: Vec<Arc<FileMeta>>,
    readahead: ReadaheadPolicy,
}

impl LevelFiles for SortedRun {
    fn len(&self) -> usize {
        self.files.len()
    }

    fn largest(&self, i: usize) -> &[u8] {
        &self.files[i].largest
    }

    fn open(&self, i: usize) -> Result<Box<dyn InternalIterator>> {
        self.cache.compaction_iter(&self.files[i], self.readahead)
    }
}

impl TableCache {
    /// A compaction's iterator over table `number`: not filling the block
    /// cache, reading with `readahead`, through a direct handle of its own
    /// when `compaction_direct`.
    fn compaction_iter(
        &self,
        f: &FileMeta,
        readahead: ReadaheadPolicy,
    ) -> Result<Box<dyn InternalIterator>> {
        let number = f.number;
        let t = self.get(f)?;
        if !self.compaction_direct {
            return Ok(Box::new(t.iter_with(false, readahead)));
        }
        let path = self.dir.join(table_file_name(number));
        let file = self
            .fs
            .open_random_with(&path, FileOptions::DIRECT)
            .map_err(|e| {
                explain_direct_refusal("use_direct_io_for_flush_and_compaction", &path, e)
            })?;
        Ok(Box::new(t.iter_reading(false, readahead, file)))
    }

    /// Iterators over a compaction's input files, `(level, files)` per
    /// input level, not filling the block cache: one per L0 file (they
    /// overlap), one lazily opening iterator per deeper level (its files
    /// are disjoint). L0 tables are opened here, so a missing or damaged
    /// one fails the call; deeper ones report through the iterator status.
    /// Every table is read with `readahead`.
    pub(crate) fn compaction_inputs(
        self: &Arc<Self>,
        levels: &[(usize, &[Arc<FileMeta>])],
        readahead: ReadaheadPolicy,
    ) -> Result<Vec<Box<dyn InternalIterator>>> {
        let mut out: Vec<Box<dyn InternalIterator>> = Vec::new();
        for &(level, files) in levels {
            if files.is_empty() {
                continue;
            }
            if level == 0 {
                for f in files {
                    out.push(self.compaction_iter(f, readahead)?);
                }
                continue;
            }
            let mut files = files.to_vec();
            files.sort_by(|a, b| compare_internal(&a.smallest, &b.smallest));
            out.push(Box::new(LevelIterator::new(SortedRun {
                cache: Arc::clone(self),
                files,
                readahead,
            })));
        }
        Ok(out)
    }
}

fn shard_of(number: u64) -> usize {
    (number as usize) % SHARDS
}

#[cfg(test)]
mod tests;
