//! Universal (tiered) compaction through the DB (issue 15): the run count
//! stays near the trigger under a steady load, reads stay exact, a manual
//! compaction leaves one run in the last level, trivial moves of disjoint
//! runs, write stalls count sorted runs, the style switches on reopen in
//! both directions, and the options it cannot honour are refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use shale::fs::MemFileSystem;
use shale::{
    CfOptions, CompactionStyle, Db, Options, UniversalCompactionOptions, UniversalStopStyle,
};

fn universal(u: UniversalCompactionOptions) -> Options {
    Options {
        create_if_missing: true,
        fs: Arc::new(MemFileSystem::new()),
        cf: CfOptions {
            write_buffer_size: 16 << 10,
            target_file_size_base: 16 << 10,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            compaction_style: CompactionStyle::Universal,
            compaction_options_universal: u,
            ..Default::default()
        },
        ..Options::default()
    }
}

fn prop(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().trim().parse().unwrap()
}

fn files_per_level(db: &Db) -> Vec<u64> {
    (0..7)
        .map(|l| prop(db, &format!("shale.num-files-at-level{l}")))
        .collect()
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Random overwrites and deletes of 2,000 keys in rounds, each flushed,
/// applied to `model` too; then waits for compactions.
fn load_into(db: &Db, rounds: u32, seed: u64, model: &mut Model) {
    let mut x = seed;
    for round in 0..rounds {
        for i in 0..300u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = format!("k{:05}", (x >> 33) % 2000).into_bytes();
            if (x >> 20).is_multiple_of(7) {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("v{round}-{i}-{}", "x".repeat(((x >> 40) % 50) as usize));
                db.put(&k, v.as_bytes()).unwrap();
                model.insert(k, v.into_bytes());
            }
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
}

fn load(db: &Db, rounds: u32, seed: u64) -> Model {
    let mut model = Model::new();
    load_into(db, rounds, seed, &mut model);
    model
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db
        .range(..)
        .map(|r| {
            let (k, v) = r.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect();
    assert_eq!(got.len(), model.len());
    assert!(got == *model, "scan differs from the model");
    for (k, v) in model.iter().step_by(37) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
}

#[test]
fn runs_stay_near_the_trigger_and_reads_stay_exact() {
    for (stop_style, size_ratio) in [
        (UniversalStopStyle::TotalSize, 1),
        (UniversalStopStyle::SimilarSize, 10),
    ] {
        let db = Db::open(
            "/db",
            universal(UniversalCompactionOptions {
                size_ratio,
                stop_style,
                ..Default::default()
            }),
        )
        .unwrap();
        let model = load(&db, 30, 7);
        // At the trigger a merge is due only by space amplification or size
        // ratio; past it the newest runs merge whatever their sizes.
        let runs = prop(&db, "shale.num-sorted-runs");
        assert!(
            runs <= 4,
            "{runs} sorted runs after compactions ({stop_style:?})"
        );
        assert!(
            db.stats().compaction.compaction_bytes_written > 0,
            "universal compactions ran"
        );
        check(&db, &model);
        // Universal has no pending-bytes estimate (as RocksDB).
        assert_eq!(prop(&db, "shale.estimate-pending-compaction-bytes"), 0);
        db.close().unwrap();
    }
}

#[test]
fn compact_range_merges_every_run_into_the_last_level() {
    let mut o = universal(UniversalCompactionOptions::default());
    o.level0_file_num_compaction_trigger = 100; // no automatic compaction
    o.level0_slowdown_writes_trigger = 100;
    o.level0_stop_writes_trigger = 100;
    let fs = MemFileSystem::new();
    o.fs = Arc::new(fs.clone());
    let db = Db::open("/db", o.clone()).unwrap();
    let model = load(&db, 6, 11);
    assert!(prop(&db, "shale.num-sorted-runs") >= 6);
    // A bounded range still compacts everything (RocksDB's universal
    // CompactRange), so deletes outside it go too.
    db.compact_range(Some(b"k00100"), Some(b"k00200")).unwrap();
    let shape = files_per_level(&db);
    assert_eq!(&shape[..6], &[0, 0, 0, 0, 0, 0], "{shape:?}");
    assert!(shape[6] > 0);
    assert_eq!(prop(&db, "shale.num-sorted-runs"), 1);
    check(&db, &model);
    // Nothing to do the second time: one run in the last level.
    let written = db.stats().compaction.compaction_bytes_written;
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().compaction.compaction_bytes_written, written);
    drop(db);
    let db = Db::open("/db", o).unwrap();
    check(&db, &model);
}

#[test]
fn disjoint_runs_move_without_rewrite_when_allowed() {
    let db = Db::open(
        "/db",
        universal(UniversalCompactionOptions {
            allow_trivial_move: true,
            ..Default::default()
        }),
    )
    .unwrap();
    // Ascending keys: every flush is a run disjoint from the others.
    let mut model = BTreeMap::new();
    for round in 0..12u32 {
        for i in 0..200u32 {
            let k = format!("k{round:03}-{i:04}").into_bytes();
            db.put(&k, b"value").unwrap();
            model.insert(k, b"value".to_vec());
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
    let moved = db.stats().compaction.compaction_bytes_moved;
    assert!(moved > 0, "no trivial move");
    check(&db, &model);
}

#[test]
fn write_stalls_count_sorted_runs() {
    let mut o = universal(UniversalCompactionOptions::default());
    // No merge is ever wide or amplified enough; slowdown at 3 runs, stop
    // at 5.
    o.level0_file_num_compaction_trigger = 3;
    o.level0_slowdown_writes_trigger = 3;
    o.level0_stop_writes_trigger = 5;
    o.compaction_options_universal.min_merge_width = 50;
    o.compaction_options_universal
        .max_size_amplification_percent = u32::MAX;
    let db = Db::open("/db", o).unwrap();
    for round in 0..3u32 {
        db.put(format!("k{round}").as_bytes(), b"v").unwrap();
        db.flush().unwrap();
    }
    // Three runs in L0 (no compaction can merge them): writes are delayed.
    assert_eq!(prop(&db, "shale.num-sorted-runs"), 3);
    let stalls = db.stats().stalls_now;
    assert_eq!(stalls.len(), 1, "{stalls:?}");
    assert_eq!(stalls[0].reason, shale::StallReason::L0Slowdown);
    assert_eq!(stalls[0].value, Some(3));
    assert!(
        stalls[0].message.contains("3 sorted runs"),
        "{}",
        stalls[0].message
    );
}

#[test]
fn the_style_switches_on_reopen_both_ways() {
    let fs = MemFileSystem::new();
    let leveled = Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        cf: CfOptions {
            write_buffer_size: 16 << 10,
            target_file_size_base: 16 << 10,
            max_bytes_for_level_base: 64 << 10,
            level0_file_num_compaction_trigger: 2,
            ..Default::default()
        },
        ..Options::default()
    };
    let db = Db::open("/db", leveled.clone()).unwrap();
    let mut model = load(&db, 10, 3);
    db.close().unwrap();
    // Leveled levels are sorted runs as they are: universal takes over.
    let mut uni = universal(UniversalCompactionOptions::default());
    uni.fs = Arc::new(fs.clone());
    let db = Db::open("/db", uni).unwrap();
    check(&db, &model);
    load_into(&db, 10, 5, &mut model);
    check(&db, &model);
    db.close().unwrap();
    // And back: universal's levels are a valid leveled shape.
    let db = Db::open("/db", leveled).unwrap();
    check(&db, &model);
    db.compact_range(None, None).unwrap();
    check(&db, &model);
}

#[test]
fn a_family_compacts_in_its_own_style() {
    let o = Options {
        create_if_missing: true,
        fs: Arc::new(MemFileSystem::new()),
        cf: CfOptions {
            write_buffer_size: 16 << 10,
            ..Default::default()
        },
        ..Options::default()
    };
    let db = Db::open("/db", o).unwrap();
    let cf = db
        .create_cf(
            "tiered",
            CfOptions {
                write_buffer_size: 16 << 10,
                target_file_size_base: 16 << 10,
                compaction_style: CompactionStyle::Universal,
                ..CfOptions::default()
            },
        )
        .unwrap();
    for round in 0..8u32 {
        for i in 0..100u32 {
            db.put_cf(
                &cf,
                format!("k{i:04}").as_bytes(),
                format!("{round}").as_bytes(),
            )
            .unwrap();
        }
        db.flush_cf(&cf).unwrap();
    }
    db.wait_for_compaction().unwrap();
    let runs: u64 = db
        .property_cf(&cf, "shale.num-sorted-runs")
        .unwrap()
        .parse()
        .unwrap();
    assert!(runs <= 4, "{runs}");
    assert_eq!(
        db.get_cf(&cf, b"k0042").unwrap().as_deref(),
        Some(&b"7"[..])
    );
    db.close().unwrap();
}

#[test]
fn options_it_cannot_honour_are_refused() {
    // Incremental needs a level between L0 and the last (num_levels ≥ 3),
    // at open and at create_cf.
    let mut incremental = universal(UniversalCompactionOptions {
        incremental: true,
        ..Default::default()
    });
    incremental.num_levels = 2;
    assert!(matches!(
        Db::open("/db", incremental.clone()),
        Err(shale::Error::InvalidArgument(m)) if m.contains("incremental") && m.contains("num_levels")
    ));
    incremental.num_levels = 3;
    Db::open("/db", incremental).unwrap().close().unwrap();
    let two_levels = Options {
        create_if_missing: true,
        fs: Arc::new(MemFileSystem::new()),
        num_levels: 2,
        ..Options::default()
    };
    let db = Db::open("/db", two_levels).unwrap();
    let cf_opts = CfOptions {
        compaction_style: CompactionStyle::Universal,
        compaction_options_universal: UniversalCompactionOptions {
            incremental: true,
            ..Default::default()
        },
        ..CfOptions::default()
    };
    assert!(matches!(
        db.create_cf("tiered", cf_opts.clone()),
        Err(shale::Error::InvalidArgument(m)) if m.contains("incremental")
    ));
    drop(db);
    // A family persisted with it, reopened (unlisted) with two levels.
    let fs = MemFileSystem::new();
    let three = Options {
        create_if_missing: true,
        fs: Arc::new(fs.clone()),
        num_levels: 3,
        ..Options::default()
    };
    let db = Db::open("/db", three.clone()).unwrap();
    drop(db.create_cf("tiered", cf_opts).unwrap());
    db.close().unwrap();
    let two = Options {
        num_levels: 2,
        ..three
    };
    assert!(matches!(
        Db::open("/db", two),
        Err(shale::Error::InvalidArgument(m)) if m.contains("\"tiered\"") && m.contains("incremental")
    ));
    for (min, max) in [(1, 5), (4, 3)] {
        let o = universal(UniversalCompactionOptions {
            min_merge_width: min,
            max_merge_width: max,
            ..Default::default()
        });
        assert!(matches!(
            Db::open("/db", o),
            Err(shale::Error::InvalidArgument(_))
        ));
    }
}

/// A file system that counts the bytes of the table files (`*.sst`) that
/// exist at every moment, and the most they ever added up to: the space a
/// DB needs, compaction outputs written before their inputs go included.
/// Exact (every append and removal is counted), unlike sampling.
mod space_meter {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use parking_lot::Mutex;
    use shale::fs::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile};
    use shale::fs::{MemFileSystem, WritableFile};
    use shale::Result;

    #[derive(Default)]
    pub struct Meter {
        sizes: Mutex<HashMap<PathBuf, u64>>,
        live: AtomicU64,
        peak: AtomicU64,
    }

    impl Meter {
        fn grow(&self, path: &Path, by: u64) {
            *self.sizes.lock().entry(path.to_path_buf()).or_default() += by;
            let now = self.live.fetch_add(by, Ordering::SeqCst) + by;
            self.peak.fetch_max(now, Ordering::SeqCst);
        }
        fn forget(&self, path: &Path) {
            if let Some(n) = self.sizes.lock().remove(path) {
                self.live.fetch_sub(n, Ordering::SeqCst);
            }
        }
        /// Table bytes that exist now.
        pub fn live(&self) -> u64 {
            self.live.load(Ordering::SeqCst)
        }
        /// The most table bytes that existed at once since the last reset.
        pub fn peak(&self) -> u64 {
            self.peak.load(Ordering::SeqCst)
        }
        pub fn reset_peak(&self) {
            self.peak.store(self.live(), Ordering::SeqCst);
        }
    }

    fn is_table(path: &Path) -> bool {
        path.extension().is_some_and(|e| e == "sst")
    }

    pub struct MeterFs {
        pub inner: MemFileSystem,
        pub meter: Arc<Meter>,
    }

    struct Counted {
        inner: Box<dyn WritableFile>,
        path: PathBuf,
        meter: Arc<Meter>,
    }

    impl WritableFile for Counted {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            self.inner.append(data)?;
            self.meter.grow(&self.path, data.len() as u64);
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            self.inner.flush()
        }
        fn sync(&mut self) -> Result<()> {
            self.inner.sync()
        }
        fn len(&self) -> u64 {
            self.inner.len()
        }
        fn finish_appends(&mut self) -> Result<()> {
            self.inner.finish_appends()
        }
        fn appends_reach_os(&self) -> bool {
            self.inner.appends_reach_os()
        }
        fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
            self.inner.range_sync(offset, len)
        }
    }

    impl MeterFs {
        fn wrap(&self, path: &Path, f: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
            if !is_table(path) {
                return f;
            }
            self.meter.forget(path);
            Box::new(Counted {
                inner: f,
                path: path.to_path_buf(),
                meter: Arc::clone(&self.meter),
            })
        }
    }

    impl FileSystem for MeterFs {
        fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
            let f = self.inner.create(path)?;
            Ok(self.wrap(path, f))
        }
        fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
            let f = self.inner.create_with(path, opts)?;
            Ok(self.wrap(path, f))
        }
        fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
            self.inner.open_random(path)
        }
        fn open_random_with(
            &self,
            path: &Path,
            opts: FileOptions,
        ) -> Result<Arc<dyn RandomAccessFile>> {
            self.inner.open_random_with(path, opts)
        }
        fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
            self.inner.open_sequential(path)
        }
        fn link(&self, from: &Path, to: &Path) -> Result<shale::fs::LinkKind> {
            self.inner.link(from, to)
        }
        fn rename(&self, from: &Path, to: &Path) -> Result<()> {
            assert!(!is_table(from) && !is_table(to), "tables are never renamed");
            self.inner.rename(from, to)
        }
        fn remove(&self, path: &Path) -> Result<()> {
            self.inner.remove(path)?;
            self.meter.forget(path);
            Ok(())
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
}

/// Records the largest automatic compaction into the last level (bytes
/// written): a slice with `incremental`, the whole data without.
#[derive(Default)]
struct LastLevelJobs {
    largest: std::sync::atomic::AtomicU64,
    count: std::sync::atomic::AtomicU64,
    /// Jobs that wrote more than a slice (`SLICE_BYTES` plus one file).
    over_slice: std::sync::atomic::AtomicU64,
}

impl shale::EventListener for LastLevelJobs {
    fn on_compaction_completed(&self, info: &shale::CompactionJobInfo) {
        use std::sync::atomic::Ordering::SeqCst;
        if info.output_level != 6
            || info.trivial_move
            || info.reason == shale::CompactionReason::ManualCompaction
        {
            return;
        }
        let written: u64 = info.output_files.iter().map(|f| f.file_size).sum();
        self.largest.fetch_max(written, SeqCst);
        self.count.fetch_add(1, SeqCst);
        if written > SLICE_BYTES + (32 << 10) {
            self.over_slice.fetch_add(1, SeqCst);
        }
    }
}

/// What one overwrite run of [`overwrite_under_meter`] measured.
#[derive(Debug)]
struct SpaceRun {
    /// Most table bytes at once during the overwrites.
    peak: u64,
    /// Table bytes of the final data compacted into one run.
    compacted: u64,
    /// Bytes written by the largest automatic compaction into the last
    /// level, and how many there were.
    largest_into_last: u64,
    into_last: u64,
    over_slice: u64,
}

/// Slices are bounded by this `max_compaction_bytes` (six table files; the
/// DB holds ~50).
const SLICE_BYTES: u64 = 96 << 10;

/// A universal DB (size amplification allowed up to `amp`%) on a metering
/// file system: fills 6,000 keys, then overwrites and deletes at random in
/// 60 flushed rounds, holding a snapshot over ten rounds at a time and
/// reopening in the middle, checked against a model throughout; returns
/// what it measured of the overwrite phase.
fn overwrite_under_meter(incremental: bool, amp: u32) -> SpaceRun {
    let meter = Arc::new(space_meter::Meter::default());
    let jobs = Arc::new(LastLevelJobs::default());
    let mut o = universal(UniversalCompactionOptions {
        incremental,
        max_size_amplification_percent: amp,
        ..Default::default()
    });
    o.fs = Arc::new(space_meter::MeterFs {
        inner: MemFileSystem::new(),
        meter: Arc::clone(&meter),
    });
    o.max_compaction_bytes = SLICE_BYTES;
    o.listeners = vec![Arc::clone(&jobs) as Arc<dyn shale::EventListener>];
    let mut db = Db::open("/db", o.clone()).unwrap();
    let mut model = Model::new();
    let value = |k: u64, round: u64| format!("{k:06}-{round:04}-{}", "v".repeat(100)).into_bytes();
    const KEYS: u64 = 6000;
    for k in 0..KEYS {
        let key = format!("k{k:06}").into_bytes();
        db.put(&key, &value(k, 0)).unwrap();
        model.insert(key, value(k, 0));
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    let compacted_before = meter.live();
    meter.reset_peak();
    let mut x = 12345u64;
    let mut held: Option<(shale::Snapshot, Model)> = None;
    for round in 1..=60u64 {
        for _ in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = (x >> 33) % KEYS;
            let key = format!("k{k:06}").into_bytes();
            if (x >> 20).is_multiple_of(11) {
                db.delete(&key).unwrap();
                model.remove(&key);
            } else {
                db.put(&key, &value(k, round)).unwrap();
                model.insert(key, value(k, round));
            }
        }
        db.flush().unwrap();
        if round % 10 == 0 {
            db.wait_for_compaction().unwrap();
            // The snapshot taken ten rounds ago still reads its data.
            if let Some((snap, then)) = held.take() {
                check_at(&db, &snap, &then);
            }
            held = Some((db.snapshot(), model.clone()));
        }
        if round == 30 {
            held = None;
            db.close().unwrap();
            db = Db::open("/db", o.clone()).unwrap();
            check(&db, &model);
        }
    }
    db.wait_for_compaction().unwrap();
    check(&db, &model);
    let peak = meter.peak();
    drop(held);
    // `reclaim`, not `compact_range`: when the last merge left one run in
    // the last level while a snapshot was held, that run keeps the versions
    // the snapshot saw, and `compact_range` leaves a lone last level alone
    // (RocksDB's default bottommost rule), so the end size would depend on
    // where the run stopped (CI saw 1.47x once). `reclaim` rewrites it.
    db.reclaim(None, None).unwrap();
    check(&db, &model);
    assert!(compacted_before > 0);
    use std::sync::atomic::Ordering::SeqCst;
    SpaceRun {
        peak,
        compacted: meter.live(),
        largest_into_last: jobs.largest.load(SeqCst),
        into_last: jobs.count.load(SeqCst),
        over_slice: jobs.over_slice.load(SeqCst),
    }
}

/// Every key of `then` and nothing else, read at `snap`.
fn check_at(db: &Db, snap: &shale::Snapshot, then: &Model) {
    let ro = shale::ReadOptions {
        snapshot: Some(snap),
        ..Default::default()
    };
    let mut it = db.iter(&ro);
    it.seek_to_first();
    let mut got = Model::new();
    while it.valid() {
        got.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    assert!(got == *then, "the snapshot's view differs from its model");
}

#[test]
fn incremental_merges_need_a_slice_of_space_not_the_db() {
    let whole = overwrite_under_meter(false, 50);
    let inc = overwrite_under_meter(true, 50);
    eprintln!("full merges: {whole:?}\nincremental: {inc:?}");
    // The same data either way.
    assert_eq!(whole.compacted, inc.compacted);
    let data = inc.compacted;
    // Without incremental, space amplification rewrites the whole data
    // into the last level at once, and that output exists next to its
    // inputs: the peak is over 3x the data (1.5x live at the trigger, plus
    // newer runs, plus the copy).
    assert!(whole.largest_into_last > data / 2, "{whole:?}");
    assert!(whole.peak > 3 * data, "{whole:?}");
    // With it, the automatic merges into the last level are slices within
    // max_compaction_bytes (plus the one file a window may exceed it by),
    // and the peak stays well below the full merges' (observed: -33%).
    // Not every one: when flushes outrun the merges (a loaded machine), a
    // size-ratio merge can reach the last run, or the newer runs outweigh
    // the oldest and the full merge is the rule (`universal_incremental.rs`);
    // a run of the test binaries beside other load once saw 1 of 99 (262 KB).
    assert!(inc.into_last >= 10, "{inc:?}");
    assert!(inc.over_slice * 10 <= inc.into_last, "{inc:?}");
    assert!(inc.peak * 10 < whole.peak * 8, "{inc:?} vs {whole:?}");
}
