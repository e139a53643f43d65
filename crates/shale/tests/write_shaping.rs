//! Write shaping (issue 16), observed through the file-system seam:
//! - `bytes_per_sync` / `wal_bytes_per_sync`: the `range_sync` calls a flush
//!   output and a WAL receive (RocksDB's cadence: contiguous, 4 KiB aligned,
//!   at least N bytes each, never the last 1 MiB);
//! - `recycle_log_file_num`: obsolete WALs are reused (renamed) instead of
//!   new files created, at most N kept; a recycled WAL's old records are
//!   never replayed after a power loss, and nothing synced is lost;
//! - the option is refused with the strict recovery modes.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::fs::{
    FileLock, FileSystem, MemFileSystem, RandomAccessFile, SequentialFile, WritableFile,
};
use shale::{Db, Error, Options, WalRecoveryMode, WriteBatch, WriteOptions};

const DIR: &str = "/db";

/// Forwards to a `MemFileSystem`, counting WAL creations and reuses.
struct CountingFs {
    inner: MemFileSystem,
    log_creates: AtomicUsize,
    log_reuses: AtomicUsize,
}

fn is_log(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "log")
}

impl FileSystem for CountingFs {
    fn create(&self, path: &Path) -> shale::Result<Box<dyn WritableFile>> {
        if is_log(path) {
            self.log_creates.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.create(path)
    }
    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> shale::Result<Box<dyn WritableFile>> {
        self.log_reuses.fetch_add(1, Ordering::Relaxed);
        self.inner.reuse_writable(old, new, mapped)
    }
    fn open_random(&self, path: &Path) -> shale::Result<Arc<dyn RandomAccessFile>> {
        self.inner.open_random(path)
    }
    fn open_sequential(&self, path: &Path) -> shale::Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    fn link(&self, from: &Path, to: &Path) -> shale::Result<shale::fs::LinkKind> {
        self.inner.link(from, to)
    }
    fn rename(&self, from: &Path, to: &Path) -> shale::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &Path) -> shale::Result<()> {
        self.inner.remove(path)
    }
    fn list(&self, dir: &Path) -> shale::Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> shale::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> shale::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn file_size(&self, path: &Path) -> shale::Result<u64> {
        self.inner.file_size(path)
    }
    fn lock(&self, path: &Path) -> shale::Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

fn logs_in(fs: &dyn FileSystem) -> usize {
    fs.list(Path::new(DIR))
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".log"))
        .count()
}

fn key(prefix: &str, i: usize) -> Vec<u8> {
    format!("{prefix}{i:06}").into_bytes()
}

/// Writes `n` keys `prefix*` of `len`-byte values, one batch each.
fn fill(db: &Db, prefix: &str, n: usize, len: usize, sync: bool) {
    let wo = WriteOptions {
        sync,
        ..WriteOptions::default()
    };
    for i in 0..n {
        let mut b = WriteBatch::new();
        b.put(&key(prefix, i), &vec![prefix.as_bytes()[0]; len]);
        db.write(b, &wo).unwrap();
    }
}

#[test]
fn recycling_reuses_obsolete_wals_and_keeps_at_most_n() {
    for recycle in [0usize, 2] {
        let fs = Arc::new(CountingFs {
            inner: MemFileSystem::new(),
            log_creates: AtomicUsize::new(0),
            log_reuses: AtomicUsize::new(0),
        });
        let opts = Options {
            create_if_missing: true,
            recycle_log_file_num: recycle,
            fs: fs.clone(),
            ..Options::default()
        };
        let db = Db::open(DIR, opts.clone()).unwrap();
        let rounds = 12;
        for r in 0..rounds {
            fill(&db, &format!("r{r:02}-"), 50, 100, false);
            db.flush().unwrap();
            // The current WAL, and at most `recycle` kept (none at 0).
            assert!(logs_in(&fs.inner) <= 1 + recycle, "round {r}");
        }
        let (creates, reuses) = (
            fs.log_creates.load(Ordering::Relaxed),
            fs.log_reuses.load(Ordering::Relaxed),
        );
        if recycle == 0 {
            assert_eq!((creates, reuses), (rounds + 1, 0));
        } else {
            // The first switches find nothing obsolete yet; then every new
            // WAL is an old one.
            assert!(creates <= 3, "{creates} WALs created");
            assert_eq!(creates + reuses, rounds + 1);
        }
        drop(db);
        let db = Db::open(DIR, opts).unwrap();
        for r in 0..rounds {
            for i in [0, 49] {
                let k = key(&format!("r{r:02}-"), i);
                assert!(db.get(&k).unwrap().is_some(), "{recycle} {r} {i}");
            }
        }
        // Kept files are not this instance's: the open deleted them.
        assert_eq!(logs_in(&fs.inner), 1);
    }
}

/// The scenario: a long WAL (many `old` records) becomes obsolete
/// and is recycled for a short one; its keys are deleted and the
/// tombstones compacted away, so a replayed old record would resurrect a
/// key. A power loss in the middle of the recycled WAL must keep every
/// synced write of the short WAL and bring back none of the old records.
#[test]
fn recycled_wal_after_power_loss_holds_exactly_the_short_wals_data() {
    let counting = Arc::new(CountingFs {
        inner: MemFileSystem::new(),
        log_creates: AtomicUsize::new(0),
        log_reuses: AtomicUsize::new(0),
    });
    let fs = counting.inner.clone();
    let opts = |fs: Arc<dyn FileSystem>| Options {
        create_if_missing: true,
        recycle_log_file_num: 1,
        fs,
        ..Options::default()
    };
    let db = Db::open(DIR, opts(counting.clone())).unwrap();
    // WAL 1: long (about 2 MiB of old records).
    fill(&db, "old", 2000, 1000, false);
    db.flush().unwrap(); // WAL 1 obsolete: kept for reuse
    let mut b = WriteBatch::new();
    for i in 0..2000 {
        b.delete(&key("old", i));
    }
    db.write(b, &WriteOptions::default()).unwrap();
    db.flush().unwrap(); // the next WAL is WAL 1's file
    db.compact_range(None, None).unwrap();
    assert_eq!(
        counting.log_reuses.load(Ordering::Relaxed),
        1,
        "WAL 1 reused"
    );
    assert!(db.get(&key("old", 7)).unwrap().is_none());
    // The short WAL, written over the long one's file: synced writes, then
    // a few unsynced ones.
    fill(&db, "new", 30, 300, true);
    fill(&db, "tail", 5, 300, false);
    for seed in 0..24u64 {
        let p = [0.0, 0.3, 0.7, 1.0][(seed % 4) as usize];
        let img = fs.crash(p, seed);
        let db2 = Db::open(DIR, opts(Arc::new(img))).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let keys: Vec<Vec<u8>> = db2.range(..).map(|r| r.unwrap().0).collect();
        let ctx = format!("seed {seed} p {p}");
        assert!(
            !keys.iter().any(|k| k.starts_with(b"old")),
            "{ctx}: an old record came back"
        );
        for i in 0..30 {
            let v = db2.get(&key("new", i)).unwrap();
            assert_eq!(
                v.map(|v| v.to_vec()),
                Some(vec![b'n'; 300]),
                "{ctx}: new {i}"
            );
        }
        // Unsynced writes: a prefix survives (all with p = 1).
        let tails = keys.iter().filter(|k| k.starts_with(b"tail")).count();
        for i in 0..tails {
            assert!(db2.get(&key("tail", i)).unwrap().is_some(), "{ctx}: hole");
        }
        if p == 1.0 {
            assert_eq!(tails, 5, "{ctx}");
        }
        assert_eq!(keys.len(), 30 + tails, "{ctx}");
    }
    drop(db);
}

#[test]
fn range_sync_cadence_through_the_seam() {
    let fs = MemFileSystem::new();
    let opts = Options {
        create_if_missing: true,
        bytes_per_sync: 64 << 10,
        wal_bytes_per_sync: 256 << 10,
        cf: shale::CfOptions {
            write_buffer_size: 16 << 20,
            ..Default::default()
        },
        fs: Arc::new(fs.clone()),
        ..Options::default()
    };
    let db = Db::open(DIR, opts).unwrap();
    fill(&db, "k", 3000, 1000, false);
    let wal_size: u64 = fs
        .list(Path::new(DIR))
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".log"))
        .map(|n| fs.file_size(&Path::new(DIR).join(n)).unwrap())
        .sum();
    db.flush().unwrap();
    let calls = fs.range_syncs();
    for (ext, bps) in [("log", 256u64 << 10), ("sst", 64 << 10)] {
        let mine: Vec<_> = calls
            .iter()
            .filter(|c| c.0.extension().is_some_and(|e| e == ext))
            .collect();
        assert!(!mine.is_empty(), "no range_sync on a .{ext} file");
        let path = &mine[0].0;
        let size = match ext {
            "log" => wal_size,
            _ => fs.file_size(path).unwrap(),
        };
        let mut next = 0;
        for (p, off, len) in mine {
            assert_eq!(p, path, "one file of each kind here");
            assert_eq!(*off, next, "contiguous");
            assert!(*len >= bps && (off + len) % 4096 == 0, "{off}+{len}");
            next = off + len;
        }
        // Caught up to within a cadence of the end, never in its last MiB.
        assert!(next + (1 << 20) <= size, "{next} of {size}");
        assert!(
            size - next < (1 << 20) + bps + 64 * 1024,
            "{next} of {size}"
        );
    }
    // Off by default.
    let fs = MemFileSystem::new();
    let db = Db::open(
        DIR,
        Options {
            create_if_missing: true,
            fs: Arc::new(fs.clone()),
            ..Options::default()
        },
    )
    .unwrap();
    fill(&db, "k", 3000, 1000, false);
    db.flush().unwrap();
    assert!(fs.range_syncs().is_empty());
}

#[test]
fn recycling_is_refused_with_the_strict_recovery_modes() {
    for (mode, ok) in [
        (WalRecoveryMode::PointInTime, true),
        (WalRecoveryMode::SkipAnyCorruptedRecords, true),
        (WalRecoveryMode::TolerateCorruptedTailRecords, false),
        (WalRecoveryMode::AbsoluteConsistency, false),
    ] {
        let fs = MemFileSystem::new();
        let r = Db::open(
            DIR,
            Options {
                create_if_missing: true,
                recycle_log_file_num: 1,
                wal_recovery_mode: mode,
                fs: Arc::new(fs),
                ..Options::default()
            },
        );
        match (r, ok) {
            (Ok(_), true) => {}
            (Err(Error::InvalidArgument(m)), false) => {
                assert!(m.contains("recycle_log_file_num"), "{m}")
            }
            (r, _) => panic!("{mode:?}: {:?}", r.map(|_| ())),
        }
    }
}
