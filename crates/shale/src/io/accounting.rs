//! IO accounting per purpose: bytes, requests and a request-size histogram
//! for every read and write the engine makes, by what it was for (user
//! reads, flush, compaction, the WAL, everything else). A regression that
//! shrinks compaction reads to 4 KiB (RocksDB bug 12038) shows here as an
//! average request size, without iostat.
//!
//! [`AccountingFs`] wraps the DB's file system and counts every call that
//! moves bytes. The purpose of a call comes from the file and the thread:
//! - WAL files (`*.log`) are written for [`Purpose::Wal`];
//! - table files (`*.sst`, `*.blob`) are read and written for the purpose
//!   the calling thread declared with [`scope`] (flush and compaction jobs
//!   declare theirs, table opens and DB open declare [`Purpose::Other`]);
//!   a thread that declared nothing is a user's: its reads are
//!   [`Purpose::User`], its table writes (ingestion, repair) `Other`;
//! - every other file (MANIFEST, OPTIONS, LOG, CURRENT) and every WAL read
//!   (recovery, tools) is `Other`.
//!
//! A read request is one `read_exact_at` (one `pread`) or one sequential
//! `read`. A write request is one hand-off to the OS: an append to a file
//! whose appends reach the OS (the memory-mapped WAL), else a `flush`,
//! `sync` or `finish_appends` with bytes pending, or a buffer's worth
//! (`posix::WRITE_BUFFER`) of appends, as the posix file writes them out.
//!
//! Invariants: every byte a wrapped file reads or appends is counted once,
//! under exactly one purpose; counters only grow. Counters are striped
//! (`base::striped`): readers on several threads do not share a line.

use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::base::Striped;
use crate::error::Result;
use crate::fs::{
    AccessPattern, FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile,
    WritableFile,
};

/// What an IO was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// Reads for `get`, `multi_get` and iterators.
    User,
    /// Flush writing a memtable's table.
    Flush,
    /// Compaction reading its inputs and writing its outputs.
    Compaction,
    /// WAL appends.
    Wal,
    /// MANIFEST, OPTIONS, LOG, table opens, recovery, ingestion.
    Other,
    /// Reads of blob values from blob files (for user reads, and for the
    /// compactions that relocate them); blob files are written by flushes
    /// and compactions, under their purposes.
    Blob,
}

impl Purpose {
    pub(crate) const ALL: [Purpose; 6] = [
        Purpose::User,
        Purpose::Flush,
        Purpose::Compaction,
        Purpose::Wal,
        Purpose::Other,
        Purpose::Blob,
    ];

    /// Lower-case name used in stats, properties and metrics.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Purpose::User => "user",
            Purpose::Flush => "flush",
            Purpose::Compaction => "compaction",
            Purpose::Wal => "wal",
            Purpose::Other => "other",
            Purpose::Blob => "blob",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

thread_local! {
    static CURRENT: Cell<Purpose> = const { Cell::new(Purpose::User) };
}

/// The calling thread's IOs on table files are for `purpose` until the
/// returned guard is dropped (then the previous purpose is back).
#[must_use = "the purpose holds only while the guard lives"]
pub(crate) fn scope(purpose: Purpose) -> Scope {
    Scope {
        prev: CURRENT.with(|c| c.replace(purpose)),
        _not_send: std::marker::PhantomData,
    }
}

/// Restores the thread's previous purpose on drop; see [`scope`].
pub(crate) struct Scope {
    prev: Purpose,
    _not_send: std::marker::PhantomData<*const ()>,
}

impl Drop for Scope {
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.prev));
    }
}

fn current() -> Purpose {
    CURRENT.with(Cell::get)
}

/// Request-size buckets: up to 512 B, then one per power of two up to 8
/// MiB, then larger.
pub(crate) const BUCKETS: usize = 16;

/// Upper bound (inclusive) of bucket `i`; the last is unbounded.
pub(crate) fn bucket_limit(i: usize) -> Option<u64> {
    (i + 1 < BUCKETS).then(|| 512u64 << i)
}

fn bucket(size: u64) -> usize {
    if size <= 512 {
        return 0;
    }
    let log2_ceil = 64 - (size - 1).leading_zeros() as usize;
    (log2_ceil - 9).min(BUCKETS - 1)
}

/// Reads or writes of one purpose: bytes, requests and sizes.
#[derive(Default)]
struct Direction {
    bytes: AtomicU64,
    requests: AtomicU64,
    sizes: [AtomicU64; BUCKETS],
}

impl Direction {
    fn record(&self, size: u64) {
        self.bytes.fetch_add(size, Ordering::Relaxed);
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.sizes[bucket(size)].fetch_add(1, Ordering::Relaxed);
    }
}

/// One stripe: reads and writes of every purpose.
#[derive(Default)]
struct Table {
    reads: [Direction; 6],
    writes: [Direction; 6],
}

/// The DB's IO counters; see the module comment.
#[derive(Default)]
pub(crate) struct IoCounters {
    stripes: Striped<Table>,
}

/// A copy of one direction's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Totals {
    pub(crate) bytes: u64,
    pub(crate) requests: u64,
    pub(crate) sizes: [u64; BUCKETS],
}

impl IoCounters {
    fn read(&self, purpose: Purpose, size: u64) {
        self.stripes.local().reads[purpose.index()].record(size);
    }

    fn write(&self, purpose: Purpose, size: u64) {
        self.stripes.local().writes[purpose.index()].record(size);
    }

    /// Sums of the stripes: `(reads, writes)` of `purpose`.
    pub(crate) fn totals(&self, purpose: Purpose) -> (Totals, Totals) {
        let mut r = Totals::default();
        let mut w = Totals::default();
        for t in self.stripes.all() {
            for (d, out) in [
                (&t.reads[purpose.index()], &mut r),
                (&t.writes[purpose.index()], &mut w),
            ] {
                out.bytes += d.bytes.load(Ordering::Relaxed);
                out.requests += d.requests.load(Ordering::Relaxed);
                for (o, s) in out.sizes.iter_mut().zip(&d.sizes) {
                    *o += s.load(Ordering::Relaxed);
                }
            }
        }
        (r, w)
    }
}

/// What a file is, for accounting: decided from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Wal,
    Table,
    Other,
}

fn kind(path: &Path) -> FileKind {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.ends_with(".log") {
        FileKind::Wal
    } else if name.ends_with(".sst") || name.ends_with(".blob") {
        FileKind::Table
    } else {
        FileKind::Other
    }
}

/// The purpose of a read of a file of `kind` by this thread.
fn read_purpose(kind: FileKind) -> Purpose {
    match kind {
        FileKind::Table => current(),
        FileKind::Wal | FileKind::Other => Purpose::Other,
    }
}

/// The purpose of writes to a file of `kind` created by this thread.
fn write_purpose(kind: FileKind) -> Purpose {
    match (kind, current()) {
        (FileKind::Wal, _) => Purpose::Wal,
        (FileKind::Table, p @ (Purpose::Flush | Purpose::Compaction)) => p,
        _ => Purpose::Other,
    }
}

/// A file system that counts the IO of another; see the module comment.
pub(crate) struct AccountingFs {
    inner: Arc<dyn FileSystem>,
    counters: Arc<IoCounters>,
}

impl AccountingFs {
    pub(crate) fn new(inner: Arc<dyn FileSystem>, counters: Arc<IoCounters>) -> AccountingFs {
        AccountingFs { inner, counters }
    }

    fn writable(&self, path: &Path, file: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        Box::new(CountedWritable {
            purpose: write_purpose(kind(path)),
            reaches_os: file.appends_reach_os(),
            inner: file,
            pending: 0,
            counters: Arc::clone(&self.counters),
        })
    }
}

/// Bytes a buffered file appends before it writes them out (the posix
/// file's buffer); a request is counted at each multiple.
const WRITE_OUT: u64 = 64 * 1024;

struct CountedWritable {
    inner: Box<dyn WritableFile>,
    purpose: Purpose,
    reaches_os: bool,
    /// Appended bytes not yet counted as a request.
    pending: u64,
    counters: Arc<IoCounters>,
}

impl CountedWritable {
    fn hand_off(&mut self) {
        if self.pending > 0 {
            self.counters.write(self.purpose, self.pending);
            self.pending = 0;
        }
    }
}

impl WritableFile for CountedWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)?;
        if self.reaches_os {
            self.counters.write(self.purpose, data.len() as u64);
            return Ok(());
        }
        self.pending += data.len() as u64;
        while self.pending >= WRITE_OUT {
            self.counters.write(self.purpose, WRITE_OUT);
            self.pending -= WRITE_OUT;
        }
        Ok(())
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.inner.append_parts(parts)?;
        let n: u64 = parts.iter().map(|p| p.len() as u64).sum();
        if self.reaches_os {
            self.counters.write(self.purpose, n);
            return Ok(());
        }
        self.pending += n;
        while self.pending >= WRITE_OUT {
            self.counters.write(self.purpose, WRITE_OUT);
            self.pending -= WRITE_OUT;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()?;
        self.hand_off();
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.inner.sync()?;
        self.hand_off();
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn finish_appends(&mut self) -> Result<()> {
        self.inner.finish_appends()?;
        self.hand_off();
        Ok(())
    }

    fn appends_reach_os(&self) -> bool {
        self.reaches_os
    }

    /// A writeback hint, not IO of its own: forwarded, not counted.
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.inner.range_sync(offset, len)
    }
}

impl Drop for CountedWritable {
    fn drop(&mut self) {
        // The inner file writes out what it buffered when it is dropped.
        self.hand_off();
    }
}

struct CountedRandom {
    inner: Arc<dyn RandomAccessFile>,
    kind: FileKind,
    counters: Arc<IoCounters>,
}

impl RandomAccessFile for CountedRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_exact_at(offset, buf)?;
        self.counters
            .read(read_purpose(self.kind), buf.len() as u64);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn advise(&self, pattern: AccessPattern) {
        self.inner.advise(pattern)
    }

    fn invalidate_cache(&self, offset: u64, len: u64) {
        self.inner.invalidate_cache(offset, len);
    }

    fn direct_alignment(&self) -> Option<usize> {
        self.inner.direct_alignment()
    }
}

struct CountedSequential {
    inner: Box<dyn SequentialFile>,
    kind: FileKind,
    counters: Arc<IoCounters>,
}

impl SequentialFile for CountedSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.counters.read(read_purpose(self.kind), n as u64);
        }
        Ok(n)
    }
}

impl FileSystem for AccountingFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let f = self.inner.create(path)?;
        Ok(self.writable(path, f))
    }

    fn create_mapped(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let f = self.inner.create_mapped(path)?;
        Ok(self.writable(path, f))
    }

    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        let f = self.inner.reuse_writable(old, new, mapped)?;
        Ok(self.writable(new, f))
    }

    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        let f = self.inner.create_with(path, opts)?;
        Ok(self.writable(path, f))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.open_random_with(path, FileOptions::default())
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(CountedRandom {
            inner: self.inner.open_random_with(path, opts)?,
            kind: kind(path),
            counters: Arc::clone(&self.counters),
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        Ok(Box::new(CountedSequential {
            inner: self.inner.open_sequential(path)?,
            kind: kind(path),
            counters: Arc::clone(&self.counters),
        }))
    }

    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        let bytes = self.inner.read_all(path)?;
        self.counters
            .read(read_purpose(kind(path)), bytes.len() as u64);
        Ok(bytes)
    }

    crate::fs::forward_namespace_calls!(inner);

    fn max_request_bytes(&self, dir: &Path) -> Option<usize> {
        self.inner.max_request_bytes(dir)
    }
}

#[cfg(test)]
mod tests;
