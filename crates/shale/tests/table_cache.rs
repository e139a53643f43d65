//! The table cache under `max_open_files`: a DB of a few hundred SSTs read
//! back in full (point reads, multi-gets, scans) with a bound of 20 open
//! files, checking every value, the `shale.num-open-tables` property and —
//! through a file system that counts live SST handles — that the table
//! files open at once never exceed the bound (and, while compactions run,
//! stay near it: a compaction opens a deeper level's inputs one at a
//! time). Also: the default (-1) keeps
//! every table open; read counters survive tables leaving the cache;
//! invalid bounds are rejected.
//!
//! The 10,000-SST run under `ulimit -n 256` is `bench/many_files.sh`
//! (figures in docs/RELIABILITY.md).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::fs::{
    FileLock, FileSystem, MemFileSystem, RandomAccessFile, SequentialFile, WritableFile,
};
use shale::{Db, Error, Options, ReadOptions, Result};

/// Live and peak numbers of open SST handles.
#[derive(Default)]
struct Handles {
    live: AtomicUsize,
    peak: AtomicUsize,
    opened: AtomicUsize,
}

/// Forwards everything to `inner`, counting open random-access SST files.
struct CountingFs {
    inner: Arc<dyn FileSystem>,
    handles: Arc<Handles>,
}

struct CountedFile {
    inner: Arc<dyn RandomAccessFile>,
    handles: Arc<Handles>,
}

impl Drop for CountedFile {
    fn drop(&mut self) {
        self.handles.live.fetch_sub(1, Ordering::SeqCst);
    }
}

impl RandomAccessFile for CountedFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.inner.read_exact_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let inner = self.inner.open_random(path)?;
        if path.extension().is_none_or(|e| e != "sst") {
            return Ok(inner);
        }
        let h = &self.handles;
        h.opened.fetch_add(1, Ordering::SeqCst);
        let live = h.live.fetch_add(1, Ordering::SeqCst) + 1;
        h.peak.fetch_max(live, Ordering::SeqCst);
        Ok(Arc::new(CountedFile {
            inner,
            handles: Arc::clone(h),
        }))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    fn link(&self, from: &Path, to: &Path) -> Result<shale::fs::LinkKind> {
        self.inner.link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> Result<()> {
        self.inner.remove(path)
    }
    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

const KEYS: u64 = 24_000;
const BOUND: i32 = 20;
/// `BOUND` less the ten descriptors RocksDB leaves for other files.
const CAPACITY: u64 = 10;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    let mut v = format!("value-{i}-").into_bytes();
    v.resize(100, b'0' + (i % 10) as u8);
    v
}

/// Small memtables and files: a few hundred SSTs over several levels.
fn opts(fs: Arc<dyn FileSystem>, max_open_files: i32) -> Options {
    Options {
        create_if_missing: true,
        fs,
        max_open_files,
        cf: shale::CfOptions {
            write_buffer_size: 32 << 10,
            target_file_size_base: 8 << 10,
            max_bytes_for_level_base: 64 << 10,
            // At most 12 L0 files, all inputs of an L0 compaction at once.
            level0_slowdown_writes_trigger: 8,
            level0_stop_writes_trigger: 12,
            ..Default::default()
        },
        cache_size: 256 << 10,
        ..Options::default()
    }
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("property {name}"))
}

fn num_ssts(db: &Db) -> u64 {
    (0..7)
        .map(|l| prop(db, &format!("shale.num-files-at-level{l}")))
        .sum()
}

/// Writes every key (in a scattered order, so files overlap and compact)
/// and waits for compaction; returns the directory, the file system and
/// the SST handles opened meanwhile.
fn build(max_open_files: i32) -> (PathBuf, Arc<MemFileSystem>, Arc<Handles>) {
    let mem = Arc::new(MemFileSystem::new());
    let handles = Arc::new(Handles::default());
    let fs = Arc::new(CountingFs {
        inner: mem.clone(),
        handles: Arc::clone(&handles),
    });
    let dir = PathBuf::from("/db");
    let db = Db::open(&dir, opts(fs, max_open_files)).unwrap();
    for j in 0..KEYS {
        let i = (j * 7919) % KEYS; // 7919 is prime to KEYS: a permutation
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    db.close().unwrap();
    (dir, mem, handles)
}

/// Reads every key through `get`, `multi_get` and a forward scan.
fn read_all(db: &Db, check_open: impl Fn(&Db)) {
    for i in 0..KEYS {
        let got = db.get(&key(i)).unwrap();
        assert_eq!(got.as_deref(), Some(&value(i)[..]), "key {i}");
        if i % 1000 == 0 {
            check_open(db);
        }
    }
    assert!(db.get(b"key-absent").unwrap().is_none());
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(500) {
        let keys: Vec<Vec<u8>> = chunk.iter().rev().map(|&i| key(i)).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        for (r, &i) in db
            .multi_get(&refs, &ReadOptions::new())
            .into_iter()
            .zip(chunk.iter().rev())
        {
            assert_eq!(r.unwrap().as_deref(), Some(&value(i)[..]), "key {i}");
        }
        check_open(db);
    }
    let mut it = db.iter(&ReadOptions::new());
    it.seek_to_first();
    let mut i = 0;
    while it.valid() {
        assert_eq!(it.key(), &key(i)[..]);
        assert_eq!(it.value(), &value(i)[..]);
        i += 1;
        if i % 1000 == 0 {
            check_open(db);
        }
        it.next();
    }
    it.status().unwrap();
    assert_eq!(i, KEYS);
}

#[test]
fn bounded_table_cache_reads_every_key_within_the_open_file_bound() {
    let (dir, mem, built) = build(BOUND);
    // While writing, compactions also hold their inputs open: every L0 file
    // (at most 12 here) and one file per deeper level, on top of the cached
    // readers. (Opening every input file at once, as compactions did, took
    // this above 140.)
    let peak = built.peak.load(Ordering::SeqCst);
    assert!(peak <= 2 * BOUND as usize, "{peak} SST files open at once");
    let handles = Arc::new(Handles::default());
    let fs = Arc::new(CountingFs {
        inner: mem,
        handles: Arc::clone(&handles),
    });
    let db = Db::open(&dir, opts(fs, BOUND)).unwrap();
    let ssts = num_ssts(&db);
    assert!(ssts > 10 * CAPACITY, "only {ssts} SSTs");
    assert_eq!(prop(&db, "shale.table-cache-capacity"), CAPACITY);
    let check_open = |db: &Db| {
        let open = prop(db, "shale.num-open-tables");
        assert!(open <= CAPACITY, "{open} tables open");
    };
    read_all(&db, check_open);
    check_open(&db);
    let peak = handles.peak.load(Ordering::SeqCst);
    assert!(peak <= BOUND as usize, "{peak} SST files open at once");
    // Far more opens than files: readers were closed and reopened.
    assert!(handles.opened.load(Ordering::SeqCst) as u64 > ssts);
    // Only the cached readers' indexes and filters stay in memory.
    let mem_bounded = prop(&db, "shale.estimate-table-readers-mem");
    assert!(mem_bounded > 0);
    drop(db);
    assert_eq!(
        handles.live.load(Ordering::SeqCst),
        0,
        "close closes every table"
    );
}

#[test]
fn default_keeps_every_table_open() {
    let (dir, mem, _) = build(-1);
    let db = Db::open(&dir, opts(mem.clone(), -1)).unwrap();
    assert_eq!(db.property("shale.table-cache-capacity").unwrap(), "-1");
    read_all(&db, |_| {});
    let ssts = num_ssts(&db);
    assert_eq!(prop(&db, "shale.num-open-tables"), ssts);
    let mem_all = prop(&db, "shale.estimate-table-readers-mem");
    drop(db);
    // The same DB under a bound holds a fraction of the readers' memory.
    let db = Db::open(&dir, opts(mem, BOUND)).unwrap();
    read_all(&db, |_| {});
    let mem_bounded = prop(&db, "shale.estimate-table-readers-mem");
    assert!(
        mem_bounded * 4 < mem_all,
        "bounded {mem_bounded} vs unbounded {mem_all}"
    );
}

/// Regression: the read counters were sums over the open tables only, so
/// they fell when compaction deleted tables (and would fall on every
/// eviction). They must only grow.
#[test]
fn block_reads_never_decrease_when_tables_leave_the_cache() {
    for max_open_files in [-1, BOUND] {
        let (dir, mem, _) = build(max_open_files);
        let db = Db::open(&dir, opts(mem, max_open_files)).unwrap();
        let mut last = 0;
        for i in (0..KEYS).step_by(7) {
            db.get(&key(i)).unwrap();
            let now = prop(&db, "shale.block-reads");
            assert!(now >= last, "block-reads fell from {last} to {now}");
            last = now;
        }
        db.compact_range(None, None).unwrap();
        let now = prop(&db, "shale.block-reads");
        assert!(now >= last, "after compaction: {last} -> {now}");
    }
}

#[test]
fn invalid_bounds_are_rejected_and_the_bound_is_recorded() {
    for bad in [-2, 0, 1, 19] {
        let o = opts(Arc::new(MemFileSystem::new()), bad);
        match Db::open("/db", o) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("max_open_files"), "{m}"),
            Err(e) => panic!("max_open_files {bad}: {e}"),
            Ok(_) => panic!("max_open_files {bad} accepted"),
        }
    }
    let mem = Arc::new(MemFileSystem::new());
    let db = Db::open("/db", opts(mem.clone(), 300)).unwrap();
    db.close().unwrap();
    let options_file = mem
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|n| n.starts_with("OPTIONS-"))
        .unwrap();
    let text = mem.read_all(&Path::new("/db").join(options_file)).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("\nmax_open_files=300\n"), "{text}");
}
