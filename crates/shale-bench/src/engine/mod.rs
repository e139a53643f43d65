//! The engine seam: the small trait every benchmark talks to, the reusable
//! write batch, and `open` / `destroy` / `check_flags` dispatch by
//! `--engine`.
//!
//! Implementations must be `Send + Sync` (one handle is shared by all bench
//! threads). Reads copy into caller-owned buffers so that the hot loops do
//! not allocate on the bench side.

use std::path::Path;
use std::sync::Arc;

use crate::error::{bail, Result};
use crate::flags::{Category, Flags};

pub mod destroy;
#[cfg(feature = "fjall")]
pub mod fjall;
pub mod memory;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
#[cfg(feature = "shale-engine")]
pub mod shale;

/// The engines whose adapter implements [`Engine::merge`] and maps
/// `--merge_operator`.
pub const MERGE_ENGINES: &[&str] = &["shale", "rocksdb"];

/// The engines whose adapter implements [`Engine::delete_range`] and
/// [`BatchOp::DeleteRange`] (RocksDB's `DeleteRange`). fjall 3.1 has no
/// range deletion (its `drop_range` only drops whole tables).
pub const RANGE_DEL_ENGINES: &[&str] = &["shale", "rocksdb", "memory"];

/// Write options of one write.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOpts {
    /// fsync the WAL before acknowledging.
    pub sync: bool,
    /// Skip the WAL.
    pub disable_wal: bool,
}

/// Iterator bounds and read options.
#[derive(Debug, Clone, Default)]
pub struct IterOpts {
    /// Smallest key returned (inclusive).
    pub lower: Option<Vec<u8>>,
    /// First key not returned (exclusive).
    pub upper: Option<Vec<u8>>,
    /// Verify block checksums.
    pub verify_checksums: bool,
    /// Readahead bytes per table read (`--readahead_size`; 0 = automatic).
    pub readahead_size: usize,
    /// `--prefix_same_as_start`.
    pub prefix_same_as_start: bool,
    /// `--total_order_seek`.
    pub total_order_seek: bool,
}

/// One operation of a [`Batch`]; the first field is the column family
/// index (0 = `default`, i = [`cf_name`]`(i)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Put(cf, key, value).
    Put(usize, &'a [u8], &'a [u8]),
    /// Delete(cf, key).
    Delete(usize, &'a [u8]),
    /// DeleteRange(cf, start, end): every key in `[start, end)`, as one
    /// range tombstone (only engines in [`RANGE_DEL_ENGINES`]).
    DeleteRange(usize, &'a [u8], &'a [u8]),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpKind {
    Put,
    Delete,
    DeleteRange,
}

/// A reusable batch of puts, deletes and range deletes (one buffer, no
/// per-entry allocation once warm).
#[derive(Debug, Default, Clone)]
pub struct Batch {
    buf: Vec<u8>,
    // (cf, kind, end of the first slice, end of the second slice), offsets
    // into buf; a delete has no second slice (both ends equal).
    ends: Vec<(usize, OpKind, usize, usize)>,
}

impl Batch {
    /// Empties the batch, keeping its capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.ends.clear();
    }

    /// Adds a put into family `cf`.
    pub fn put(&mut self, cf: usize, key: &[u8], value: &[u8]) {
        self.buf.extend_from_slice(key);
        let k = self.buf.len();
        self.buf.extend_from_slice(value);
        self.ends.push((cf, OpKind::Put, k, self.buf.len()));
    }

    /// Adds a delete in family `cf`.
    pub fn delete(&mut self, cf: usize, key: &[u8]) {
        self.buf.extend_from_slice(key);
        let k = self.buf.len();
        self.ends.push((cf, OpKind::Delete, k, k));
    }

    /// Adds a deletion of every key in `[start, end)` of family `cf`.
    pub fn delete_range(&mut self, cf: usize, start: &[u8], end: &[u8]) {
        self.buf.extend_from_slice(start);
        let s = self.buf.len();
        self.buf.extend_from_slice(end);
        self.ends.push((cf, OpKind::DeleteRange, s, self.buf.len()));
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The operations in order.
    pub fn iter(&self) -> impl Iterator<Item = BatchOp<'_>> {
        let mut start = 0;
        self.ends.iter().map(move |&(cf, kind, a, b)| {
            let first = &self.buf[start..a];
            let second = &self.buf[a..b];
            start = b;
            match kind {
                OpKind::Put => BatchOp::Put(cf, first, second),
                OpKind::Delete => BatchOp::Delete(cf, first),
                OpKind::DeleteRange => BatchOp::DeleteRange(cf, first, second),
            }
        })
    }
}

/// `--memory_budget` in bytes (0: none), checked the same way for every
/// engine that maps it: not negative, and the block cache (which takes
/// what the rest of the budget leaves) at least as large.
pub(crate) fn memory_budget(f: &Flags) -> Result<usize> {
    if f.memory_budget < 0 {
        bail!("--memory_budget={} must be >= 0", f.memory_budget);
    }
    if f.memory_budget > 0 && f.cache_size < f.memory_budget {
        bail!(
            "--memory_budget={} needs --cache_size >= it (now {}): the block cache takes what the rest of the budget leaves",
            f.memory_budget,
            f.cache_size
        );
    }
    Ok(f.memory_budget as usize)
}

/// `--rate_limiter_bytes_per_sec` and `--rate_limiter_auto_tuned`, checked
/// the same way for every engine that maps them: the rate (0: no limiter)
/// is not negative, and auto-tuning needs a rate.
pub(crate) fn rate_limiter(f: &Flags) -> Result<Option<(u64, bool)>> {
    match f.rate_limiter_bytes_per_sec {
        r if r < 0 => bail!("--rate_limiter_bytes_per_sec={r} must be >= 0"),
        0 if f.rate_limiter_auto_tuned => {
            bail!("--rate_limiter_auto_tuned needs --rate_limiter_bytes_per_sec > 0")
        }
        0 => Ok(None),
        r => Ok(Some((r as u64, f.rate_limiter_auto_tuned))),
    }
}

/// db_bench's name of column family `i` (`ColumnFamilyName`): `default`
/// for 0, else `column_family_name_` and `i` in six digits.
pub fn cf_name(i: usize) -> String {
    if i == 0 {
        "default".to_string()
    } else {
        format!("column_family_name_{i:06}")
    }
}

/// The names of families `0..n` (`default` first).
pub fn cf_names(n: usize) -> Vec<String> {
    (0..n).map(cf_name).collect()
}

/// What creating column families cost (the `cfscale` benchmark).
#[derive(Debug, Clone, Copy)]
pub struct CreateTiming {
    /// Seconds spent in the engine's create call(s) (open and close are
    /// outside unless `how` says otherwise).
    pub secs: f64,
    /// How the families were created, for the result line.
    pub how: &'static str,
}

/// Which text report a meta benchmark prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `stats`: compaction and DB stats.
    Stats,
    /// `levelstats`: files and bytes per level.
    LevelStats,
    /// `sstables`: every SST.
    SsTables,
    /// `bloomstats`: filter checks, useful and false positives per level.
    Bloom,
}

/// Copies a found value into `out` (reusing its buffer); true when there
/// was one. Every engine's `get` ends this way.
pub(crate) fn copy_found<V: AsRef<[u8]>>(v: Option<V>, out: &mut Vec<u8>) -> bool {
    match v {
        Some(v) => {
            out.clear();
            out.extend_from_slice(v.as_ref());
            true
        }
        None => false,
    }
}

/// A raw cursor over the DB.
pub trait EngineIter {
    /// First key ≥ `key`.
    fn seek(&mut self, key: &[u8]);
    /// Last key ≤ `key`.
    fn seek_for_prev(&mut self, key: &[u8]);
    /// First key.
    fn seek_to_first(&mut self);
    /// Last key.
    fn seek_to_last(&mut self);
    /// Steps forward (requires `valid`).
    fn next(&mut self);
    /// Steps backward (requires `valid`).
    fn prev(&mut self);
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Current key (requires `valid`).
    fn key(&self) -> &[u8];
    /// Current value (requires `valid`).
    fn value(&self) -> &[u8];
    /// Error that made the iterator invalid, if any.
    fn status(&self) -> Result<()>;
}

/// An open key-value engine.
pub trait Engine: Send + Sync {
    /// Engine name as in `--engine`.
    fn name(&self) -> &'static str;
    /// Engine version for reports.
    fn version(&self) -> String;
    /// Number of column families the handle was opened with
    /// (`--num_column_families`); every `cf` argument is below it. Handles
    /// are resolved at open: a `cf` index costs no name lookup.
    fn num_cfs(&self) -> usize;
    /// Put one entry into family `cf`.
    fn put(&self, cf: usize, key: &[u8], value: &[u8], wo: &WriteOpts) -> Result<()>;
    /// Apply a batch atomically (across the families it names).
    fn write(&self, batch: &Batch, wo: &WriteOpts) -> Result<()>;
    /// Delete one key of family `cf`.
    fn delete(&self, cf: usize, key: &[u8], wo: &WriteOpts) -> Result<()>;
    /// Delete every key in `[start, end)` of family `cf` with one range
    /// tombstone (RocksDB's `DeleteRange`; `start == end` deletes nothing).
    /// Engines without range deletions (not in [`RANGE_DEL_ENGINES`]) keep
    /// this default, which fails; the runner refuses what would need it up
    /// front (`benchmarks::range_del::check`).
    fn delete_range(&self, cf: usize, start: &[u8], end: &[u8], wo: &WriteOpts) -> Result<()> {
        let _ = (cf, start, end, wo);
        bail!("--engine={} has no DeleteRange", self.name())
    }
    /// Merge `operand` into `key` of family `cf` through the family's
    /// merge operator (`--merge_operator`). Engines without merge
    /// operators (not in [`MERGE_ENGINES`]) keep this default, which
    /// fails; the runner refuses merge benchmarks for them up front.
    fn merge(&self, cf: usize, key: &[u8], operand: &[u8], wo: &WriteOpts) -> Result<()> {
        let _ = (cf, key, operand, wo);
        bail!("--engine={} has no merge operator", self.name())
    }
    /// Point lookup in family `cf`; copies the value into `out` and returns
    /// true if found.
    fn get(&self, cf: usize, key: &[u8], out: &mut Vec<u8>, verify_checksums: bool)
        -> Result<bool>;
    /// Batched lookup in family `cf`; calls `found(i, value)` for every key
    /// found.
    fn multi_get(
        &self,
        cf: usize,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<()>;
    /// A new iterator over family `cf` (unpositioned).
    fn new_iterator(&self, cf: usize, opts: &IterOpts) -> Result<Box<dyn EngineIter + '_>>;
    /// Flush memtables and wait.
    fn flush(&self) -> Result<()>;
    /// Compact the key range (None = unbounded).
    fn compact_range(&self, start: Option<&[u8]>, end: Option<&[u8]>) -> Result<()>;
    /// Wait until no flush or compaction is pending or running.
    fn wait_for_compaction(&self) -> Result<()>;
    /// A named engine property.
    fn property(&self, name: &str) -> Option<String>;
    /// The text of a meta benchmark report.
    fn report(&self, which: Report) -> Option<String>;
    /// Cumulative write-stall time in µs, if the engine tracks it.
    fn stall_micros(&self) -> Option<u64>;
    /// The `--statistics` dump, if the engine has statistics.
    fn statistics(&self) -> Option<String> {
        None
    }
    /// Close the engine (further calls fail).
    fn close(&self) -> Result<()>;
}

/// Rejects flags the selected engine cannot honour (before anything runs).
pub fn check_flags(flags: &Flags) -> Result<()> {
    match flags.engine.as_str() {
        "memory" => {
            flags.reject_category(Category::Eng, "memory")?;
            flags.reject_category(Category::Rocks, "memory")?;
            flags.reject_category(Category::Shale, "memory")?;
            if flags.statistics {
                bail!("--statistics is not supported by --engine=memory");
            }
            if flags.num_column_families != 1 {
                bail!("--num_column_families is not supported by --engine=memory (one key space only)");
            }
            Ok(())
        }
        "shale" => shale_check(flags),
        "rocksdb" => rocks_check(flags),
        "fjall" => fjall_check(flags),
        other => bail!("unknown engine '{other}'"),
    }
}

#[cfg(feature = "shale-engine")]
fn shale_check(flags: &Flags) -> Result<()> {
    shale::options_from_flags(flags).map(|_| ())
}

#[cfg(not(feature = "shale-engine"))]
fn shale_check(_flags: &Flags) -> Result<()> {
    bail!("--engine=shale needs the 'shale-engine' cargo feature (built without it)")
}

#[cfg(feature = "rocksdb")]
fn rocks_check(flags: &Flags) -> Result<()> {
    rocksdb::check_flags(flags)
}

#[cfg(not(feature = "rocksdb"))]
fn rocks_check(_flags: &Flags) -> Result<()> {
    bail!("--engine=rocksdb needs the 'rocksdb' cargo feature (cargo build --release --features rocksdb)")
}

#[cfg(feature = "fjall")]
fn fjall_check(flags: &Flags) -> Result<()> {
    fjall::check_flags(flags)
}

#[cfg(not(feature = "fjall"))]
fn fjall_check(_flags: &Flags) -> Result<()> {
    bail!("--engine=fjall needs the 'fjall' cargo feature (cargo build --release --features fjall)")
}

/// The compression the selected engine will really use (`--compression_type`
/// unless the engine had to replace db_bench's default).
pub fn effective_compression(flags: &Flags) -> String {
    if flags.engine == "shale"
        && !flags.is_explicit("compression_type")
        && flags.compression_type == "snappy"
    {
        return "lz4".to_string();
    }
    if flags.engine == "memory" {
        return "none".to_string();
    }
    flags.compression_type.clone()
}

/// The engines whose blobs always share the block cache: db_bench's
/// `--use_blob_cache=0` (no blob cache) cannot be had there.
pub const SHARED_BLOB_CACHE_ENGINES: &[&str] = &["shale", "fjall"];

/// Header warnings: `--use_blob_cache=0` where blobs are cached anyway.
/// (A default an engine replaces, such as db_bench's snappy for Shale, is
/// shown by the header's `Compression:` line, not warned about.)
pub fn warnings(flags: &Flags) -> Vec<String> {
    let mut w = Vec::new();
    if flags.enable_blob_files
        && !flags.use_blob_cache
        && SHARED_BLOB_CACHE_ENGINES.contains(&flags.engine.as_str())
    {
        w.push(format!(
            "--use_blob_cache=0: --engine={} always caches blobs in the block cache{}, as db_bench's \
             --use_blob_cache=1 --use_shared_block_and_blob_cache=1 does",
            flags.engine,
            if flags.engine == "shale" {
                " (at bottom priority)"
            } else {
                ""
            }
        ));
    }
    w
}

/// Opens (creating if missing) the engine selected by `--engine` at `path`.
pub fn open(flags: &Flags, path: &Path) -> Result<Arc<dyn Engine>> {
    match flags.engine.as_str() {
        "memory" => Ok(Arc::new(memory::MemoryEngine::open(path))),
        #[cfg(feature = "shale-engine")]
        "shale" => Ok(Arc::new(shale::ShaleEngine::open(flags, path)?)),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => Ok(Arc::new(rocksdb::RocksEngine::open(flags, path)?)),
        #[cfg(feature = "fjall")]
        "fjall" => Ok(Arc::new(fjall::FjallEngine::open(flags, path)?)),
        other => bail!("engine '{other}' is not available in this build"),
    }
}

/// Opens the DB at `path` with only the `default` family open (creating
/// the DB if missing), creates the families `names` (none may exist) in one
/// call when `batched` and the engine has one, else one by one, and closes
/// it. Only the create call(s) are timed.
pub fn create_families(
    flags: &Flags,
    path: &Path,
    names: &[String],
    batched: bool,
) -> Result<CreateTiming> {
    match flags.engine.as_str() {
        #[cfg(feature = "shale-engine")]
        "shale" => shale::create_families(flags, path, names, batched),
        #[cfg(feature = "rocksdb")]
        "rocksdb" => rocksdb::create_families(flags, path, names, batched),
        #[cfg(feature = "fjall")]
        "fjall" => fjall::create_families(flags, path, names, batched),
        other => bail!("engine '{other}' has no column families"),
    }
}

pub use destroy::destroy;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_round_trips_ops() {
        let mut b = Batch::default();
        b.put(0, b"k1", b"v1");
        b.delete(2, b"k2");
        b.put(0, b"", b"");
        b.put(1, b"k3", b"value3");
        b.delete_range(1, b"a", b"zz");
        b.delete(0, b"k4");
        let ops: Vec<BatchOp<'_>> = b.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put(0, b"k1", b"v1"),
                BatchOp::Delete(2, b"k2"),
                BatchOp::Put(0, b"", b""),
                BatchOp::Put(1, b"k3", b"value3"),
                BatchOp::DeleteRange(1, b"a", b"zz"),
                BatchOp::Delete(0, b"k4"),
            ]
        );
        assert_eq!(b.len(), 6);
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.iter().count(), 0);
    }

    #[test]
    fn column_family_names_follow_db_bench() {
        assert_eq!(cf_name(0), "default");
        assert_eq!(cf_name(1), "column_family_name_000001");
        assert_eq!(cf_name(10000), "column_family_name_010000");
        assert_eq!(cf_names(3).len(), 3);
    }

    #[test]
    fn memory_engine_rejects_engine_options() {
        let f = Flags::parse(&["--engine=memory", "--bloom_bits=10"]).unwrap();
        let e = check_flags(&f).unwrap_err();
        assert!(e.0.contains("--bloom_bits"), "{e}");
        let f = Flags::parse(&["--engine=memory", "--statistics=1"]).unwrap();
        assert!(check_flags(&f).is_err());
        let f = Flags::parse(&["--engine=memory", "--num_column_families=2"]).unwrap();
        let e = check_flags(&f).unwrap_err();
        assert!(e.0.contains("--num_column_families"), "{e}");
        let f = Flags::parse(&["--engine=memory", "--merge_operator=uint64add"]).unwrap();
        let e = check_flags(&f).unwrap_err();
        assert!(e.0.contains("--merge_operator"), "{e}");
        let f = Flags::parse(&["--engine=memory"]).unwrap();
        assert!(check_flags(&f).is_ok());
        let m = memory::MemoryEngine::open(Path::new("/memtest/no-merge"));
        let e = m.merge(0, b"k", b"v", &WriteOpts::default()).unwrap_err();
        assert!(e.0.contains("--engine=memory has no merge operator"), "{e}");
        let f = Flags::parse(&["--engine=fjall"]).unwrap();
        assert!(check_flags(&f).is_err());
    }
}
