//! The DB's handle, [`Db`], and its calls: open and recovery (`open`),
//! (recovery's WAL replay in `recover`), the write path (`write`: group
//! commit), reads (`read`), iterators (`iterate` builds them, `db_iter`,
//! `key_range`), column-family administration (`cf_admin`)
//! and option changes (`set_options`). The state the handle shares with
//! the background jobs is `shared::DbInner` (see `shared/` for the
//! concurrency model); the jobs themselves are in `flush/`, `compaction/`
//! and `bg/`, and what the DB reports about itself in `observe/`.
//!
//! - Writers queue in `write::WriteQueue` (owned by the handle); the leader
//!   of a group writes the WAL and the memtable for the whole group.
//! - Readers load their family's `SuperVersion` from an `ArcSwap` and the
//!   visible sequence number from an atomic: no mutex on the read path.

pub(crate) mod cf_admin;
mod db_iter;
mod iterate;
mod key_range;
mod open;
mod read;
mod recover;
mod set_options;
mod write;

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::batch::WriteBatch;
use crate::cf::{Cf, ColumnFamily};
use crate::error::{Error, Result};
use crate::options::{CfOption, CfOptions, DbOption, Options, ReadOptions, WriteOptions};
use crate::shared::DbInner;

pub use crate::base::snapshots::Snapshot;
pub use crate::compaction::runner::ReclaimProgress;
pub(crate) use db_iter::bounds_to_cursor;
pub use db_iter::{DbIterator, DbRange};
pub use key_range::KeyRange;
pub use read::PinnableValue;

/// Owns the background threads; dropping the last `Db` clone drops this,
/// which stops and joins them.
struct DbHandle {
    inner: Arc<DbInner>,
    /// The queue of writes (only writes use it).
    writes: write::WriteQueue,
    threads: Mutex<Vec<JoinHandle<()>>>,
    closed: AtomicBool,
}

impl DbHandle {
    /// Closes the DB. Waits for: the flush of memtables holding writes made
    /// without the WAL; the running background jobs to reach their next
    /// cancellation check (a compaction stops between output entries and
    /// its outputs are discarded; a flush stops likewise and its memtable is
    /// recovered from the WAL at the next open); manual compactions of other
    /// clones, likewise; the write group holding the WAL, if any. Then it
    /// hands the WAL's buffered bytes to the OS and releases `LOCK`. From
    /// the moment it starts, every other clone, iterator and range of this
    /// DB fails with `ShutdownInProgress`.
    fn shutdown(&self) -> Result<()> {
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        let inner = &self.inner;
        // No table write waits on the rate limiter from now on.
        inner.io_cancel.store(true, Ordering::Release);
        if let Some(l) = &inner.opts.rate_limiter {
            l.wake_all();
        }
        // Writes made with `disable_wal` live only in memtables: flush them.
        let mut flush_result = Ok(());
        if inner.unpersisted.load(Ordering::Acquire) {
            flush_result = crate::bg::scheduler::flush_all_and_wait(inner);
        }
        {
            // Under the DB mutex: a memtable switch (which opens a new WAL)
            // either finished before or sees the flag.
            // Counted as a wakeup: a background thread that had the mutex
            // released (regression test
            // `close_is_not_delayed_by_a_wakeup_lost_in_the_delete_only_check`)
            // looks again instead of sleeping.
            let mut st = inner.state.lock();
            inner.shutting_down.store(true, Ordering::Release);
            inner.wake_bg(&mut st);
        }
        let threads: Vec<JoinHandle<()>> = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
        {
            // Manual compactions run in callers' threads.
            let mut st = inner.state.lock();
            while st.compactions_running > 0 || st.manual_compactions > 0 || st.flushes_running > 0
            {
                inner
                    .bg_cv
                    .wait_for(&mut st, std::time::Duration::from_millis(10));
            }
        }
        // Every job has stopped: deliver what they recorded, then stop the
        // event thread.
        inner.events.shutdown();
        // Hand whatever the WAL buffered to the OS and close it: a write
        // group arriving later finds no WAL and fails.
        let wal_result = {
            let mut wal = inner.wals.current.lock();
            match wal.writer.take() {
                Some(mut w) => w.flush(),
                None => Ok(()),
            }
        };
        drop(inner.lock.lock().take());
        let st = inner.state.lock();
        if let Some(e) = &st.errors.current {
            return Err(e.error.clone());
        }
        flush_result?;
        wal_result
    }
}

impl Drop for DbHandle {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// A handle to an open DB. Cheap to clone; all clones share the DB. The DB
/// closes when the last clone is dropped (or on [`Db::close`]).
#[derive(Clone)]
pub struct Db {
    handle: Arc<DbHandle>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({})", self.handle.inner.dir.display())
    }
}

impl Db {
    /// Opens (or with `create_if_missing` creates) the DB at `path`, with
    /// every column family it has (see `Options::column_families`).
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Db::open_mode(path.as_ref(), opts, false)
    }

    /// Opens the DB; `read_only` (for `Db::open_read_only`, which has put
    /// an overlay under `opts.fs`) starts no background thread and deletes
    /// nothing.
    pub(crate) fn open_mode(path: &Path, opts: Options, read_only: bool) -> Result<Db> {
        let inner = Arc::new(open::open(path, opts, read_only)?);
        let threads = if read_only {
            Vec::new()
        } else {
            // Files a crash left behind (unfinished tables, replayed WALs).
            crate::shared::obsolete::delete_obsolete_files(&inner, &mut inner.state.lock());
            crate::bg::scheduler::start(&inner)
        };
        Ok(Db {
            handle: Arc::new(DbHandle {
                writes: write::WriteQueue::new(),
                inner,
                threads: Mutex::new(threads),
                closed: AtomicBool::new(false),
            }),
        })
    }

    /// The names of the column families of the DB at `path`, read from its
    /// MANIFEST without opening it (`opts.fs` is the file system used).
    pub fn list_cfs(path: impl AsRef<Path>, opts: &Options) -> Result<Vec<String>> {
        crate::version::VersionSet::list_column_families(opts.fs.as_ref(), path.as_ref())
    }

    pub(crate) fn inner(&self) -> &Arc<DbInner> {
        &self.handle.inner
    }

    /// The family of `cf`, checked to be live and of this DB.
    #[inline]
    pub(crate) fn family<'a>(&self, cf: &'a Cf) -> Result<&'a Arc<ColumnFamily>> {
        cf.0.check(self.inner().instance)?;
        Ok(&cf.0)
    }

    /// Creates column family `name` with `opts`; durable on return. An
    /// existing name or invalid options are `InvalidArgument` naming it.
    pub fn create_cf(&self, name: &str, opts: CfOptions) -> Result<Cf> {
        let mut v = cf_admin::create(self.inner(), std::slice::from_ref(&(name, opts)))?;
        v.pop()
            .ok_or_else(|| Error::InvalidArgument("create_cf: nothing created".into()))
    }

    /// Creates several column families with one MANIFEST write and one
    /// sync: all of them or, on error, none.
    pub fn create_cfs(&self, families: &[(&str, CfOptions)]) -> Result<Vec<Cf>> {
        let owned: Vec<(&str, CfOptions)> = families.iter().map(|(n, o)| (*n, o.clone())).collect();
        cf_admin::create(self.inner(), &owned)
    }

    /// Drops a column family (durable on return). Iterators and ranges over
    /// it keep reading it; its files are deleted once none holds them.
    /// `default` cannot be dropped.
    pub fn drop_cf(&self, cf: &Cf) -> Result<()> {
        let c = self.family(cf)?;
        cf_admin::drop(self.inner(), c)
    }

    /// Changes options of the `default` family while the DB is open
    /// (RocksDB's `SetOptions`): `db.set_options(&[CfOption::WriteBufferSize(8
    /// << 20), CfOption::Level0FileNumCompactionTrigger(8)])`. [`CfOption`]
    /// has a variant for each option that may change while open; the rest
    /// (the compaction style, block alignment, merge operator, ...) change
    /// only on reopen. All apply or none: an empty list or a combination
    /// `CfOptions::validate` refuses is `InvalidArgument`. Each takes effect
    /// at the next decision that reads it: memtable sizes at the next
    /// memtable, table options at the next table written, triggers and level
    /// targets at the next compaction pick and stall check (made at once),
    /// the prefix extractor at the next read or iterator created (prefix
    /// filters built with another extractor are then passed over, as
    /// RocksDB does). The default family's changes last until the DB is
    /// closed (it reopens with `Options`); another family's are persisted
    /// and reopen with it unless it is opened with options of its own.
    pub fn set_options(&self, changes: &[CfOption]) -> Result<()> {
        let cf = &self.inner().default_cf;
        set_options::set_options(self.inner(), cf, set_options::CfChanges::Typed(changes))
    }

    /// `set_options` with `(name, value)` pairs in the OPTIONS file's text
    /// (`("write_buffer_size", "8388608")`, `("compression_per_level",
    /// "None:LZ4")`, `("compaction_options_universal.size_ratio", "10")`), for
    /// tools and bindings that take options as text. An unknown name, a bad
    /// value or an option that changes only on reopen is also
    /// `InvalidArgument`.
    pub fn set_options_from_strings(&self, changes: &[(&str, &str)]) -> Result<()> {
        let cf = &self.inner().default_cf;
        set_options::set_options(self.inner(), cf, set_options::CfChanges::Text(changes))
    }

    /// Changes DB-wide options while the DB is open (RocksDB's
    /// `SetDBOptions`): a [`DbOption`] for each of `max_background_jobs`
    /// (more threads start at once; fewer lets the extra ones idle),
    /// `max_subcompactions`, `delayed_write_rate`, `max_total_wal_size`,
    /// `bytes_per_sync` and `wal_bytes_per_sync` (for files started after),
    /// and `compaction_readahead_size`. All apply or none: an empty list or
    /// values `Options::validate` refuses is `InvalidArgument`. The changes
    /// last until the DB is closed and show in a new OPTIONS file. The rate
    /// limiter changes through `RateLimiter::set_bytes_per_second`.
    pub fn set_db_options(&self, changes: &[DbOption]) -> Result<()> {
        let c = set_options::DbChanges::Typed(changes);
        set_options::set_db_options(self.inner(), &self.handle.threads, c)
    }

    /// `set_db_options` with `(name, value)` pairs in the OPTIONS file's
    /// text; any other name or a bad value is also `InvalidArgument`.
    pub fn set_db_options_from_strings(&self, changes: &[(&str, &str)]) -> Result<()> {
        let c = set_options::DbChanges::Text(changes);
        set_options::set_db_options(self.inner(), &self.handle.threads, c)
    }

    /// `set_options` for family `cf`.
    pub fn set_options_cf(&self, cf: &Cf, changes: &[CfOption]) -> Result<()> {
        let c = self.family(cf)?;
        set_options::set_options(self.inner(), c, set_options::CfChanges::Typed(changes))
    }

    /// `set_options_from_strings` for family `cf`.
    pub fn set_options_cf_from_strings(&self, cf: &Cf, changes: &[(&str, &str)]) -> Result<()> {
        let c = self.family(cf)?;
        set_options::set_options(self.inner(), c, set_options::CfChanges::Text(changes))
    }

    /// The current options of family `cf` (as changed by `set_options`).
    pub fn cf_options(&self, cf: &Cf) -> Result<CfOptions> {
        Ok((**self.family(cf)?.opts()).clone())
    }

    /// The live family named `name`.
    pub fn cf(&self, name: &str) -> Option<Cf> {
        self.inner().cfs.by_name(name).map(Cf)
    }

    /// The `default` family.
    pub fn default_cf(&self) -> Cf {
        Cf(Arc::clone(&self.inner().default_cf))
    }

    /// Every live family, by id.
    pub fn cfs(&self) -> Vec<Cf> {
        self.inner().cfs.all().into_iter().map(Cf).collect()
    }

    /// Inserts or replaces `key` with default write options.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 24);
        b.put(key, value);
        self.write(b, &WriteOptions::default())
    }

    /// Inserts or replaces `key` in family `cf`.
    pub fn put_cf(&self, cf: &Cf, key: &[u8], value: &[u8]) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 28);
        b.put_cf(cf, key, value);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes `key` with default write options.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 24);
        b.delete(key);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes `key` in family `cf`.
    pub fn delete_cf(&self, cf: &Cf, key: &[u8]) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(key.len() + 28);
        b.delete_cf(cf, key);
        self.write(b, &WriteOptions::default())
    }

    /// Inserts or replaces `key` with a value that lives at least `ttl`
    /// (by `Options::clock`, which counts whole seconds: it expires at the
    /// second boundary after `ttl` has passed, see [`Db::expiry_after`]):
    /// from then on `key` reads as deleted, in every read and at every
    /// snapshot, and compaction reclaims its space.
    pub fn put_with_ttl(&self, key: &[u8], value: &[u8], ttl: std::time::Duration) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 32);
        b.put_with_expiry(key, value, self.expiry_after(ttl));
        self.write(b, &WriteOptions::default())
    }

    /// [`Db::put_with_ttl`] in family `cf`.
    pub fn put_cf_with_ttl(
        &self,
        cf: &Cf,
        key: &[u8],
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 36);
        b.put_cf_with_expiry(cf, key, value, self.expiry_after(ttl));
        self.write(b, &WriteOptions::default())
    }

    /// The expiry (Unix second, by the DB's clock) that
    /// [`WriteBatch::put_with_expiry`] takes for a value that must live at
    /// least `ttl`, as [`Db::put_with_ttl`] computes it. The clock counts
    /// whole seconds and a write may come at the end of the current one,
    /// so the value lives from `ttl` (rounded up to a second) to one second
    /// more, as in RocksDB's TTL (gone once `now > write second + ttl`). A
    /// zero `ttl` expires at once.
    pub fn expiry_after(&self, ttl: std::time::Duration) -> u64 {
        crate::base::expiry::expiry_after(self.inner().opts.clock.now_secs(), ttl)
    }

    /// Adds merge `operand` to `key` (default family): reads see the
    /// family's merge operator applied to the key's value and operands.
    /// `InvalidArgument` when the family has no merge operator.
    pub fn merge(&self, key: &[u8], operand: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + operand.len() + 24);
        b.merge(key, operand);
        self.write(b, &WriteOptions::default())
    }

    /// Adds merge `operand` to `key` in family `cf` (see `merge`).
    pub fn merge_cf(&self, cf: &Cf, key: &[u8], operand: &[u8]) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(key.len() + operand.len() + 28);
        b.merge_cf(cf, key, operand);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes every key in `[start, end)` (RocksDB's `DeleteRange`):
    /// one tombstone, whatever the number of keys. `start > end` is
    /// `InvalidArgument`; `start == end` deletes nothing.
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(start.len() + end.len() + 24);
        b.delete_range(start, end);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes every key in `[start, end)` in family `cf`.
    pub fn delete_range_cf(&self, cf: &Cf, start: &[u8], end: &[u8]) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(start.len() + end.len() + 28);
        b.delete_range_cf(cf, start, end);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes a key written once (see [`WriteBatch::single_delete`]).
    pub fn single_delete(&self, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 24);
        b.single_delete(key);
        self.write(b, &WriteOptions::default())
    }

    /// Deletes a key written once in family `cf` (see `single_delete`).
    pub fn single_delete_cf(&self, cf: &Cf, key: &[u8]) -> Result<()> {
        self.family(cf)?;
        let mut b = WriteBatch::with_capacity(key.len() + 28);
        b.single_delete_cf(cf, key);
        self.write(b, &WriteOptions::default())
    }

    /// Applies a batch atomically (across every family it names).
    pub fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        write::write(self.inner(), &self.handle.writes, batch, opts)
    }

    /// Hands WAL bytes buffered in process (`manual_wal_flush`) to the OS,
    /// and with `sync` makes them durable.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.inner().check_open()?;
        write::flush_wal(self.inner(), sync)
    }

    /// Reads `key` at the latest state.
    pub fn get(&self, key: &[u8]) -> Result<Option<PinnableValue>> {
        read::get(
            self.inner(),
            &self.inner().default_cf,
            key,
            &ReadOptions::new(),
        )
    }

    /// Reads `key` with options (snapshot, fill_cache).
    pub fn get_opt(&self, key: &[u8], opts: &ReadOptions<'_>) -> Result<Option<PinnableValue>> {
        read::get(self.inner(), &self.inner().default_cf, key, opts)
    }

    /// Reads `key` in family `cf` at the latest state.
    pub fn get_cf(&self, cf: &Cf, key: &[u8]) -> Result<Option<PinnableValue>> {
        read::get(self.inner(), self.family(cf)?, key, &ReadOptions::new())
    }

    /// Reads `key` in family `cf` with options.
    pub fn get_cf_opt(
        &self,
        cf: &Cf,
        key: &[u8],
        opts: &ReadOptions<'_>,
    ) -> Result<Option<PinnableValue>> {
        read::get(self.inner(), self.family(cf)?, key, opts)
    }

    /// Reads `key` in family `cf` with merge `operands` (newest first)
    /// stacked above what the DB holds (see `read::get_under_operands`).
    pub(crate) fn get_cf_under_operands(
        &self,
        cf: &Cf,
        key: &[u8],
        opts: &ReadOptions<'_>,
        operands: Vec<Vec<u8>>,
    ) -> Result<Option<PinnableValue>> {
        read::get_under_operands(self.inner(), self.family(cf)?, key, opts, operands)
    }

    /// Reads many keys at one consistent sequence number.
    pub fn multi_get(
        &self,
        keys: &[&[u8]],
        opts: &ReadOptions<'_>,
    ) -> Vec<Result<Option<PinnableValue>>> {
        read::multi_get(self.inner(), &self.inner().default_cf, keys, opts)
    }

    /// Reads many keys of family `cf` at one consistent sequence number.
    pub fn multi_get_cf(
        &self,
        cf: &Cf,
        keys: &[&[u8]],
        opts: &ReadOptions<'_>,
    ) -> Vec<Result<Option<PinnableValue>>> {
        match self.family(cf) {
            Ok(c) => read::multi_get(self.inner(), c, keys, opts),
            Err(e) => keys.iter().map(|_| Err(e.clone())).collect(),
        }
    }

    /// Reads `(family, key)` pairs, of any families, at one consistent
    /// sequence number (RocksDB's `MultiGet` with a family per key); results
    /// in the order of `keys`. A dropped or foreign handle fails its keys
    /// only.
    pub fn multi_get_cfs(
        &self,
        keys: &[(&Cf, &[u8])],
        opts: &ReadOptions<'_>,
    ) -> Vec<Result<Option<PinnableValue>>> {
        let checked: Vec<(&ColumnFamily, Result<()>, &[u8])> = keys
            .iter()
            .map(|(cf, k)| (&*cf.0, cf.0.check(self.inner().instance), *k))
            .collect();
        read::multi_get_families(self.inner(), &checked, opts)
    }

    /// A snapshot of the current state of every family, released on drop.
    /// It waits while a flush or compaction whose compaction filter changed
    /// values installs its result (a MANIFEST write), so that it reads the
    /// same before and after that job.
    pub fn snapshot(&self) -> Snapshot {
        // The sequence number is read under the snapshot list's lock: a flush
        // or compaction reads the list under it when it starts, so it either
        // sees this snapshot or started before the sequence was taken (and
        // then holds nothing newer). Regression test
        // `snapshot_sequence_is_registered_atomically`.
        let inner = self.inner();
        inner.snapshots.acquire_with(|| inner.last_visible())
    }

    /// The sequence number of the last write visible to reads (RocksDB's
    /// `GetLatestSequenceNumber`): the point `BackupEngine::restore_to`
    /// takes to restore the DB as it is now.
    pub fn latest_sequence_number(&self) -> u64 {
        self.inner().last_visible()
    }

    /// A raw cursor (unpositioned: call a seek first). Values with a TTL
    /// are judged at the cursor's creation: every seek and move sees the
    /// same keys expired, however the clock moves meanwhile.
    pub fn iter(&self, opts: &ReadOptions<'_>) -> DbIterator {
        iterate::new_iterator(self.inner(), &self.inner().default_cf, opts)
    }

    /// A raw cursor over family `cf` (a dropped family's cursor reports
    /// `InvalidArgument` from `status`).
    pub fn iter_cf(&self, cf: &Cf, opts: &ReadOptions<'_>) -> DbIterator {
        match self.family(cf) {
            Ok(c) => iterate::new_iterator(self.inner(), c, opts),
            Err(e) => iterate::error_iterator(self.inner(), e),
        }
    }

    /// A double-ended iterator over the user keys in `range` (any Rust range
    /// of byte strings: `..`, `b"a"..b"c"`, `k1..=k2`, ...), at the state
    /// of its creation: both ends read the same pinned super version and
    /// sequence number, whatever is written, flushed or compacted later,
    /// and judge values with a TTL at the clock's reading at its creation.
    pub fn range<R: KeyRange>(&self, range: R) -> DbRange {
        let (start, end) = range.key_bounds();
        let (lower, upper) = db_iter::bounds_to_cursor(start, end);
        self.bounded_range(Ok(&self.inner().default_cf), lower, upper)
    }

    /// `range` over family `cf`.
    pub fn range_cf<R: KeyRange>(&self, cf: &Cf, range: R) -> DbRange {
        let (start, end) = range.key_bounds();
        let (lower, upper) = db_iter::bounds_to_cursor(start, end);
        self.bounded_range(self.family(cf), lower, upper)
    }

    /// A double-ended iterator over the keys that start with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> DbRange {
        self.bounded_range(
            Ok(&self.inner().default_cf),
            Some(prefix.to_vec()),
            db_iter::prefix_successor(prefix),
        )
    }

    /// `prefix` over family `cf`.
    pub fn prefix_cf(&self, cf: &Cf, prefix: &[u8]) -> DbRange {
        self.bounded_range(
            self.family(cf),
            Some(prefix.to_vec()),
            db_iter::prefix_successor(prefix),
        )
    }

    fn bounded_range(
        &self,
        cf: Result<&Arc<ColumnFamily>>,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> DbRange {
        let mut ro = ReadOptions::new();
        ro.iterate_lower_bound = lower;
        ro.iterate_upper_bound = upper;
        let cf = match cf {
            Ok(c) => c,
            Err(e) => {
                let e2 = e.clone();
                let inner = Arc::clone(self.inner());
                return DbRange::new(
                    iterate::error_iterator(self.inner(), e),
                    Box::new(move || iterate::error_iterator(&inner, e2)),
                );
            }
        };
        let front = iterate::new_iterator(self.inner(), cf, &ro);
        // The back cursor is made on the first `next_back()`, over the
        // super version and sequence number the front pinned, judging
        // expiry at the front's clock reading (regression tests
        // `range_back_half_reads_the_state_of_its_creation`,
        // `range_judges_expiry_at_creation_time`).
        let at = front.pinned();
        let inner = Arc::clone(self.inner());
        DbRange::new(
            front,
            Box::new(move || {
                let mut back = ReadOptions::new();
                back.iterate_lower_bound = ro.iterate_lower_bound;
                back.iterate_upper_bound = ro.iterate_upper_bound;
                iterate::new_iterator_in(&inner, at, &back, None)
            }),
        )
    }

    /// Flushes the `default` family's memtable to an SST and waits for it.
    pub fn flush(&self) -> Result<()> {
        crate::bg::scheduler::flush_and_wait(self.inner(), 0)
    }

    /// Flushes family `cf`'s memtable to an SST and waits for it.
    pub fn flush_cf(&self, cf: &Cf) -> Result<()> {
        let id = self.family(cf)?.id;
        crate::bg::scheduler::flush_and_wait(self.inner(), id)
    }

    /// Compacts the user keys in [`start`, `end`] (`None` = unbounded on
    /// that side) of the `default` family down the LSM, level by level, and
    /// waits. `start > end` is `InvalidArgument`.
    pub fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        crate::bg::scheduler::compact_range(self.inner(), 0, start, end)
    }

    /// `compact_range` in family `cf`.
    pub fn compact_range_cf(
        &self,
        cf: &Cf,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        let id = self.family(cf)?.id;
        crate::bg::scheduler::compact_range(self.inner(), id, start, end)
    }

    /// Removes from disk every byte in `[start, end]` (`None`: unbounded)
    /// that no read can return any more — overwritten or deleted versions,
    /// tombstones, range-deleted and expired values — by compacting the
    /// range down and rewriting the last level's files in it, and returns
    /// the bytes of table files that went (of the files overlapping the
    /// range, before and after). Versions a live snapshot can read stay.
    /// The `shale.estimate-reclaimable-bytes` property estimates the gain
    /// beforehand.
    pub fn reclaim(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<u64> {
        self.reclaim_cf(&self.default_cf(), start, end, |_| {})
    }

    /// [`Db::reclaim`] in family `cf`, calling `progress` after each
    /// compaction step.
    pub fn reclaim_cf(
        &self,
        cf: &Cf,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        mut progress: impl FnMut(&ReclaimProgress),
    ) -> Result<u64> {
        let id = self.family(cf)?.id;
        let before = {
            let st = self.inner().state.lock();
            crate::compaction::runner::bytes_in_range(&st.versions.current(id), start, end)
        };
        crate::bg::scheduler::compact_range_with(
            self.inner(),
            id,
            start,
            end,
            Some(&mut progress),
        )?;
        let after = {
            let st = self.inner().state.lock();
            crate::compaction::runner::bytes_in_range(&st.versions.current(id), start, end)
        };
        Ok(before.saturating_sub(after))
    }

    /// Recovers from a background error without reopening (RocksDB's
    /// `DB::Resume`): rolls to a new MANIFEST if a MANIFEST write failed,
    /// flushes the memtables a failed flush left, and lets writes and
    /// compactions continue. Ok when no error is outstanding. A fatal error
    /// (a failed WAL write or sync, a corruption) cannot be resumed and is
    /// returned as `Error::Poisoned`: reopen the DB. If the cause persists
    /// (the disk is still full) the new failure is returned and the error
    /// stays. The state is in the `shale.background-error*` and
    /// `shale.bg-error-*` properties; see `Options::max_bgerror_resume_count`
    /// for automatic resumes.
    pub fn resume(&self) -> Result<()> {
        crate::bg::resume::resume_now(self.inner())
    }

    /// Waits until no flush or compaction is pending or running.
    pub fn wait_for_compaction(&self) -> Result<()> {
        crate::bg::scheduler::wait_for_idle(self.inner())
    }

    /// A DB property (`shale.stats`, `shale.levelstats`,
    /// `shale.num-files-at-level<N>`, ...) of the `default` family and the
    /// DB; `None` for unknown names.
    pub fn property(&self, name: &str) -> Option<String> {
        crate::observe::properties::property(self.inner(), 0, name)
    }

    /// The DB's statistics now, typed: per family the LSM shape and
    /// memtables, the DB's flush and compaction work, operations, WAL,
    /// stalls by cause, block cache, memory by component, and
    /// `stalls_now`, which explains each write slowdown or stop in force.
    /// Counters are cumulative since open; reading them resets nothing.
    pub fn stats(&self) -> crate::Stats {
        crate::observe::stats_report::collect(self.inner())
    }

    /// A property of family `cf` (the per-family ones answered for it, the
    /// DB-wide ones as `property`); `None` for unknown names or a dropped
    /// family.
    pub fn property_cf(&self, cf: &Cf, name: &str) -> Option<String> {
        let id = self.family(cf).ok()?.id;
        crate::observe::properties::property(self.inner(), id, name)
    }

    /// The DB directory.
    pub fn path(&self) -> &Path {
        &self.inner().dir
    }

    /// Closes the DB: stops background work, hands the WAL to the OS,
    /// releases `LOCK` and reports the first background error, if any.
    /// Other clones of this handle, and every iterator and range of this DB,
    /// fail with `ShutdownInProgress` afterwards; the DB can be opened again
    /// at once, even while they exist. Dropping the last clone does the same
    /// (see `DbHandle::shutdown` for what it waits for).
    pub fn close(self) -> Result<()> {
        self.handle.shutdown()
    }
}
