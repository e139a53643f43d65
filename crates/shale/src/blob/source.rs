//! `BlobSource`: where reads get blob values: open blob-file readers by
//! number, and the block cache, where blobs sit at the **bottom** priority
//! (RocksDB's `blob_cache` sharing the block cache with `kBottom`) so that
//! a scan over large values evicts other blobs before any data block and
//! never an index or filter block.
//!
//! One source serves every family (blob file numbers are unique in the
//! DB). Where open readers are kept is a [`BlobReaderCache`]:
//! - by default ([`BlobSource::new`], `max_open_files` -1) a map of its
//!   own, where a reader stays open until its file is deleted (`forget`);
//! - with a bounded `max_open_files`, the DB's table cache
//!   ([`BlobSource::sharing_readers`]): blob readers and table readers
//!   share its capacity (`max_open_files - 10`) and its LRU order, as
//!   RocksDB's `BlobFileCache` shares its table cache. An evicted reader
//!   is reopened on the next read of its file; one still in use by a read
//!   stays valid until that read drops it.
//!
//! A blob file is opened with a random-access hint (or directly, with
//! `use_direct_reads`) and its header and footer are checked at open.
//!
//! Thread-safety: every method takes `&self`; the reader store's lock is
//! taken only to find or insert a reader (the file is opened outside it),
//! counters are atomics.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::error::{Error, Result};
use crate::fs::{explain_direct_refusal, AccessPattern, FileOptions, FileSystem};
use crate::io::accounting::{self, Purpose};
use crate::version::filename::blob_file_name;

use super::{BlobFileReader, BlobIndex};

/// The block cache as the blob source sees it (implemented over the DB's
/// shared block cache; blobs go in at bottom priority).
pub(crate) trait BlobCacheHook: Send + Sync {
    fn lookup_blob(&self, file_number: u64, offset: u64) -> Option<Arc<[u8]>>;
    fn insert_blob(&self, file_number: u64, offset: u64, value: Arc<[u8]>);
}

/// Where a [`BlobSource`] keeps its open readers (see the module
/// comment). File numbers are unique in the DB, so a cache shared with
/// table readers keys both by number.
pub(crate) trait BlobReaderCache: Send + Sync {
    /// The cached reader of blob file `number` (now the most recently
    /// used).
    fn lookup_reader(&self, number: u64) -> Option<Arc<BlobFileReader>>;
    /// Caches `reader` of blob file `number`, evicting others to stay
    /// within the bound; returns the reader now cached (one already cached
    /// wins).
    fn insert_reader(&self, number: u64, reader: Arc<BlobFileReader>) -> Arc<BlobFileReader>;
    /// Drops the reader of blob file `number` (its file is deleted).
    fn remove_reader(&self, number: u64);
    /// Blob readers cached now.
    fn num_readers(&self) -> usize;
}

/// The unbounded store: every reader stays until its file is deleted.
#[derive(Default)]
struct OwnReaders(RwLock<HashMap<u64, Arc<BlobFileReader>>>);

impl BlobReaderCache for OwnReaders {
    fn lookup_reader(&self, number: u64) -> Option<Arc<BlobFileReader>> {
        self.0.read().get(&number).cloned()
    }
    fn insert_reader(&self, number: u64, reader: Arc<BlobFileReader>) -> Arc<BlobFileReader> {
        Arc::clone(self.0.write().entry(number).or_insert(reader))
    }
    fn remove_reader(&self, number: u64) {
        let r = self.0.write().remove(&number);
        drop(r);
    }
    fn num_readers(&self) -> usize {
        self.0.read().len()
    }
}

/// Blob read counters (monotonic).
#[derive(Debug, Default)]
pub(crate) struct BlobReadStats {
    pub cache_hits: AtomicU64,
    pub cache_misses: AtomicU64,
    /// Blobs read from files, and their records' bytes.
    pub reads: AtomicU64,
    pub bytes_read: AtomicU64,
}

/// See the module comment.
pub(crate) struct BlobSource {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    direct_reads: bool,
    cache: Option<Arc<dyn BlobCacheHook>>,
    readers: Arc<dyn BlobReaderCache>,
    pub stats: BlobReadStats,
}

/// Whether a read may fill the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// Insert what was read (user reads with `fill_cache`).
    Yes,
    /// Look up, but do not insert (compaction's garbage collection and
    /// reads with `fill_cache` off).
    No,
}

impl BlobSource {
    pub(crate) fn new(
        fs: Arc<dyn FileSystem>,
        dir: PathBuf,
        direct_reads: bool,
        cache: Option<Arc<dyn BlobCacheHook>>,
    ) -> BlobSource {
        BlobSource {
            fs,
            dir,
            direct_reads,
            cache,
            readers: Arc::new(OwnReaders::default()),
            stats: BlobReadStats::default(),
        }
    }

    /// Keeps open readers in `readers` (the DB's bounded table cache)
    /// instead of a map of its own.
    pub(crate) fn sharing_readers(mut self, readers: Arc<dyn BlobReaderCache>) -> Self {
        self.readers = readers;
        self
    }

    /// The open reader of blob file `number`.
    pub(crate) fn reader(&self, number: u64) -> Result<Arc<BlobFileReader>> {
        if let Some(r) = self.readers.lookup_reader(number) {
            return Ok(r);
        }
        let name = blob_file_name(number);
        let path = self.dir.join(&name);
        let opts = FileOptions {
            direct: self.direct_reads,
        };
        let file = self
            .fs
            .open_random_with(&path, opts)
            .map_err(|e| explain_direct_refusal("use_direct_reads", &path, e))
            .map_err(|e| match e {
                Error::Io {
                    kind: std::io::ErrorKind::NotFound,
                    ..
                } => Error::corruption(
                    name.clone(),
                    0,
                    "blob file named by the MANIFEST is missing",
                ),
                e => e,
            })?;
        if !self.direct_reads {
            file.advise(AccessPattern::Random);
        }
        let r = Arc::new(BlobFileReader::open(file, &name, number)?);
        Ok(self.readers.insert_reader(number, r))
    }

    /// The value `index` (a `BlobIndex` entry's stored bytes) points to for
    /// `user_key`. A malformed index is `Corruption` naming `table`.
    pub(crate) fn get(
        &self,
        index: &[u8],
        user_key: &[u8],
        fill: Fill,
        table: &str,
    ) -> Result<Arc<[u8]>> {
        let idx = BlobIndex::decode(index).ok_or_else(|| {
            Error::corruption(
                table.to_string(),
                0,
                format!("malformed blob index for key {user_key:?}"),
            )
        })?;
        self.get_index(&idx, user_key, fill)
    }

    /// The value `idx` points to for `user_key`.
    pub(crate) fn get_index(
        &self,
        idx: &BlobIndex,
        user_key: &[u8],
        fill: Fill,
    ) -> Result<Arc<[u8]>> {
        if let Some(c) = &self.cache {
            if let Some(v) = c.lookup_blob(idx.file_number, idx.offset) {
                self.stats.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok(v);
            }
            self.stats.cache_misses.fetch_add(1, Ordering::Relaxed);
        }
        let v: Arc<[u8]> = {
            let _io = accounting::scope(Purpose::Blob);
            self.reader(idx.file_number)?.read_shared(idx, user_key)?
        };
        self.stats.reads.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_read
            .fetch_add(idx.record_len(user_key.len()), Ordering::Relaxed);
        if let (Some(c), Fill::Yes) = (&self.cache, fill) {
            c.insert_blob(idx.file_number, idx.offset, Arc::clone(&v));
        }
        Ok(v)
    }

    /// Puts a blob just written into the cache (`prepopulate_blob_cache`).
    pub(crate) fn prepopulate(&self, idx: &BlobIndex, value: &[u8]) {
        if let Some(c) = &self.cache {
            c.insert_blob(
                idx.file_number,
                idx.offset,
                super::recycle::shared_copy(value),
            );
        }
    }

    /// Closes the reader of a deleted blob file.
    pub(crate) fn forget(&self, number: u64) {
        self.readers.remove_reader(number);
    }

    /// Blob-file readers cached (open) now.
    pub(crate) fn num_open(&self) -> usize {
        self.readers.num_readers()
    }
}
