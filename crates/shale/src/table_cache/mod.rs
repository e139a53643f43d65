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
                let t = self.get(f.number)?;
                Ok(Cow::Borrowed(f.table.get_or_init(|| t)))
            }
            Store::Bounded(_) => Ok(Cow::Owned(self.get(f.number)?)),
        }
    }

    /// The reader of table `number`, opening it on a miss.
    pub(crate) fn get(&self, number: u64) -> Result<Arc<Table>> {
        match &self.store {
            Store::Unbounded(shards) => {
                if let Some(t) = shards[shard_of(number)].read().get(&number) {
                    return Ok(Arc::clone(t));
                }
                let table = self.open(number)?;
                let mut shard = shards[shard_of(number)].write();
                Ok(Arc::clone(shard.entry(number).or_insert(table)))
            }
            Store::Bounded(lru) => {
                match lru.lock().get(number) {
                    Some(Cached::Table(t)) => return Ok(t),
                    Some(Cached::Blob(_)) => return Err(kind_clash(number)),
                    None => {}
                }
                let table = self.open(number)?;
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

    fn open(&self, number: u64) -> Result<Arc<Table>> {
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
        let table = Table::open(
            file,
            name.clone(),
            number,
            self.block_cache.clone(),
            self.cache_index_and_filter_blocks,
        )?;
        // A table stored under another table's name verifies block by block;
        // its properties name the file it was written as.
        let recorded = table.properties().file_number;
        if recorded != number {
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
        self.cache
            .compaction_iter(self.files[i].number, self.readahead)
    }
}

impl TableCache {
    /// A compaction's iterator over table `number`: not filling the block
    /// cache, reading with `readahead`, through a direct handle of its own
    /// when `compaction_direct`.
    fn compaction_iter(
        &self,
        number: u64,
        readahead: ReadaheadPolicy,
    ) -> Result<Box<dyn InternalIterator>> {
        let t = self.get(number)?;
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
                    out.push(self.compaction_iter(f.number, readahead)?);
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
mod tests {
    use std::path::Path;
    use std::sync::Weak;

    use super::*;
    use crate::base::{make_internal_key, ValueKind};
    use crate::fs::MemFileSystem;
    use crate::iter::InternalIterator;
    use crate::sst::{TableBuilder, TableOptions};

    const DIR: &str = "/db";

    /// A file system holding tables 1..=n, each with 50 keys.
    fn tables(n: u64) -> Arc<dyn FileSystem> {
        let fs: Arc<dyn FileSystem> = Arc::new(MemFileSystem::new());
        fs.create_dir_all(Path::new(DIR)).unwrap();
        for number in 1..=n {
            let name = table_file_name(number);
            let file = fs.create(&Path::new(DIR).join(&name)).unwrap();
            let mut b = TableBuilder::new(file, name, number, TableOptions::default());
            for i in 0..50u64 {
                let mut k = Vec::new();
                make_internal_key(
                    &mut k,
                    format!("k{number}-{i:03}").as_bytes(),
                    1,
                    ValueKind::Value as u8,
                );
                b.add(&k, b"v").unwrap();
            }
            b.finish().unwrap();
        }
        fs
    }

    fn cache(fs: &Arc<dyn FileSystem>, max_open_files: i32) -> TableCache {
        TableCache::new(
            PathBuf::from(DIR),
            Arc::clone(fs),
            None,
            false,
            max_open_files,
        )
    }

    fn count(t: &Arc<Table>) -> usize {
        let mut it = t.iter(false);
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().unwrap();
        n
    }

    #[test]
    fn capacity_is_max_open_files_minus_ten() {
        let fs = tables(1);
        assert_eq!(cache(&fs, -1).capacity(), None);
        assert_eq!(cache(&fs, 20).capacity(), Some(10));
        assert_eq!(cache(&fs, 200).capacity(), Some(190));
        assert_eq!(effective_max_open_files(-1), -1);
        assert_eq!(effective_max_open_files(20), 20);
        let limit = fd_limit().unwrap_or(u64::MAX);
        let huge = effective_max_open_files(i32::MAX) as u64;
        assert!(huge <= limit.max(20), "{huge} > fd limit {limit}");
    }

    #[test]
    fn bounded_cache_keeps_the_most_recent_readers_and_closes_the_rest() {
        let fs = tables(4);
        let c = cache(&fs, 12); // capacity 2
        let weak = |n: u64| -> Weak<Table> { Arc::downgrade(&c.get(n).unwrap()) };
        let (w1, w2) = (weak(1), weak(2));
        assert_eq!(c.num_open(), 2);
        c.get(1).unwrap(); // 2 is now the least recently used
        let w3 = weak(3);
        assert_eq!(c.num_open(), 2);
        assert!(
            w2.upgrade().is_none(),
            "evicted, unused: dropped (file closed)"
        );
        assert!(w1.upgrade().is_some() && w3.upgrade().is_some());
        // Reopening an evicted table gives a working reader again.
        assert_eq!(count(&c.get(2).unwrap()), 50);
        assert!(w1.upgrade().is_none(), "1 was the least recently used");
        assert_eq!(c.num_open(), 2);
    }

    #[test]
    fn evicted_reader_in_use_stays_valid_until_dropped() {
        let fs = tables(4);
        let c = cache(&fs, 11); // capacity 1
        let held = c.get(1).unwrap();
        let mut it = held.iter(false);
        it.seek_to_first();
        for n in 2..=4 {
            c.get(n).unwrap();
        }
        assert_eq!(c.num_open(), 1);
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next();
        }
        it.status().unwrap();
        assert_eq!(n, 50);
        let w = Arc::downgrade(&held);
        drop(it);
        drop(held);
        assert!(w.upgrade().is_none(), "the last user closed it");
    }

    #[test]
    fn eviction_frees_reader_memory_and_keeps_counters() {
        let fs = tables(6);
        let c = cache(&fs, 13); // capacity 3
        let mut blocks_read = 0;
        let one = c.get(1).unwrap().memory_usage();
        assert!(one > 0);
        for n in 1..=6 {
            count(&c.get(n).unwrap());
            let now = c.sum_stats().blocks_read;
            assert!(
                now > blocks_read,
                "counters only grow: {now} after {blocks_read}"
            );
            blocks_read = now;
            let open = n.min(3) as usize;
            assert_eq!(c.num_open(), open);
            // Equal-shaped tables: the cached readers' memory, no more.
            assert_eq!(c.readers_memory(), open * one);
        }
        c.evict(6);
        assert_eq!(c.num_open(), 2);
        assert_eq!(c.sum_stats().blocks_read, blocks_read);
    }

    #[test]
    fn only_the_unbounded_cache_pins_readers_in_file_meta() {
        let fs = tables(1);
        let f = FileMeta {
            number: 1,
            ..FileMeta::default()
        };
        let bounded = cache(&fs, 20);
        assert!(matches!(bounded.table_of(&f).unwrap(), Cow::Owned(_)));
        assert!(f.table.get().is_none());
        let unbounded = cache(&fs, -1);
        assert!(matches!(unbounded.table_of(&f).unwrap(), Cow::Borrowed(_)));
        assert!(f.table.get().is_some());
    }

    #[test]
    fn compaction_inputs_open_a_sorted_level_one_table_at_a_time() {
        let fs = tables(5);
        // Unbounded, so `num_open` counts every table opened so far.
        let c = Arc::new(cache(&fs, -1));
        let meta = |n: u64| {
            let ik = |i: u64| {
                let mut k = Vec::new();
                let u = format!("k{n}-{i:03}");
                make_internal_key(&mut k, u.as_bytes(), 1, ValueKind::Value as u8);
                k
            };
            Arc::new(FileMeta {
                number: n,
                smallest: ik(0),
                largest: ik(49),
                ..FileMeta::default()
            })
        };
        // Level 1 given out of order, and one L0 file.
        let l1: Vec<Arc<FileMeta>> = [4, 2, 3, 5].into_iter().map(meta).collect();
        let l0 = vec![meta(1)];
        let mut inputs = c
            .compaction_inputs(&[(0, &l0), (1, &l1)], ReadaheadPolicy::Fixed(4096))
            .unwrap();
        assert_eq!(inputs.len(), 2, "one per L0 file, one for level 1");
        assert_eq!(c.num_open(), 1, "only the L0 table is opened up front");
        let mut level = inputs.pop().unwrap();
        level.seek_to_first();
        let mut keys = Vec::new();
        let mut opened = Vec::new();
        while level.valid() {
            let k = level.key();
            keys.push(String::from_utf8_lossy(&k[..k.len() - 8]).into_owned());
            opened.push(c.num_open());
            level.next();
        }
        level.status().unwrap();
        assert_eq!(keys.len(), 200);
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "level order");
        assert_eq!(keys[0], "k2-000");
        // One more table opened every 50 keys, when the run reaches it.
        let want: Vec<usize> = (0..200).map(|i| 2 + i / 50).collect();
        assert_eq!(opened, want);
    }
}
