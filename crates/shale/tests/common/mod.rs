//! Options shared by several integration test files (each test file is its
//! own crate, so not every file uses every helper).
#![allow(dead_code)]

use std::sync::Arc;

use shale::fs::FileSystem;
use shale::{Db, Options, WriteBatch, WriteOptions};

/// Nothing compacts by itself: every LSM shape is the test's own.
pub fn quiet_options() -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            level0_file_num_compaction_trigger: 100,
            level0_slowdown_writes_trigger: 100,
            level0_stop_writes_trigger: 100,
            ..Default::default()
        },
        ..Options::default()
    }
}

/// For fault sweeps over `fs`: nothing flushes or compacts on its own and
/// no background error is retried, so each run is deterministic.
pub fn fault_options(fs: Arc<dyn FileSystem>) -> Options {
    {
        let base = quiet_options();
        Options {
            cf: shale::CfOptions {
                write_buffer_size: 4 << 20,
                block_size: 512,
                ..base.cf
            },
            cache_size: 0,
            max_bgerror_resume_count: 0,
            fs,
            ..base
        }
    }
}

/// Puts `(key, value)` in its own batch, synced or not.
pub fn put_kv(db: &Db, (key, value): (Vec<u8>, Vec<u8>), sync: bool) -> shale::Result<()> {
    let mut b = WriteBatch::new();
    b.put(&key, &value);
    db.write(
        b,
        &WriteOptions {
            sync,
            ..WriteOptions::default()
        },
    )
}

/// Pauses the first thread that reaches test-only sync point `point` until
/// `release`: `reached()` returns once it is there. Enables sync points;
/// the caller holds `sync_point::exclusive()` and resets them.
pub struct Pause {
    reached: Arc<std::sync::Barrier>,
    go: Arc<std::sync::Barrier>,
}

impl Pause {
    pub fn at(point: &str) -> Pause {
        use std::sync::atomic::{AtomicBool, Ordering};
        let reached = Arc::new(std::sync::Barrier::new(2));
        let go = Arc::new(std::sync::Barrier::new(2));
        let fired = AtomicBool::new(false);
        let (r, g) = (Arc::clone(&reached), Arc::clone(&go));
        shale::sync_point::set_callback(point, move || {
            if !fired.swap(true, Ordering::SeqCst) {
                r.wait();
                g.wait();
            }
        });
        shale::sync_point::enable();
        Pause { reached, go }
    }

    /// Waits until a thread is paused at the point.
    pub fn reached(&self) {
        self.reached.wait();
    }

    /// Lets the paused thread go on.
    pub fn release(&self) {
        self.go.wait();
    }
}

/// Aligned data blocks (`block_align`, issue 16) in a quarter of the
/// draws, with compression turned off on every level as the option
/// requires (the block sizes the tests draw are powers of two). Returns the
/// option's value.
pub fn random_block_align(
    rng: &mut impl rand::Rng,
    compression_per_level: &mut Vec<shale::Compression>,
    bottommost_compression: &mut Option<shale::Compression>,
) -> bool {
    if !rng.gen_bool(0.25) {
        return false;
    }
    *compression_per_level = vec![shale::Compression::None];
    *bottommost_compression = None;
    true
}

/// `block_size_deviation` as the model and power-loss tests draw it: off
/// (0 or 100), RocksDB's default 10, or 50 (blocks cut once half full
/// before an entry that would overflow them).
pub fn random_block_size_deviation(rng: &mut impl rand::Rng) -> u32 {
    [0, 10, 10, 50, 100][rng.gen_range(0..5)]
}

/// Where a family's outputs are cut besides their size (issue 15), as the
/// model and power-loss tests draw it: a fixed-prefix partitioner (none; 2
/// or 3 bytes over their `k%0Nd` keys: up to ten or a hundred partitions;
/// longer prefixes make files of a few keys, each synced) and insert-stream
/// detection (the style's default, off, or on for leveled families).
pub fn random_output_cuts(
    rng: &mut impl rand::Rng,
    style: shale::CompactionStyle,
) -> (Option<shale::SstPartitioner>, Option<bool>) {
    let partitioner = rng
        .gen_bool(0.3)
        .then(|| shale::SstPartitioner::FixedPrefix(rng.gen_range(2..=3)));
    let detect = match rng.gen_range(0..3) {
        0 => None,
        1 => Some(false),
        _ => (style == shale::CompactionStyle::Level).then_some(true),
    };
    (partitioner, detect)
}

/// The reads of table files, (offset, length) in order, as a file system
/// on the real disk (`ReadHookFs` over `PosixFileSystem`) sees them.
pub type TableReads = Arc<std::sync::Mutex<Vec<(u64, usize)>>>;

/// A file system on the real disk that records every random-access read
/// of a table (`.sst`) file, and the list it records into.
pub fn recording_table_reads() -> (Arc<dyn FileSystem>, TableReads) {
    let reads: TableReads = Arc::default();
    let seen = Arc::clone(&reads);
    let fs = shale::fs::ReadHookFs::new(
        Arc::new(shale::fs::PosixFileSystem::default()),
        move |path: &std::path::Path, offset, len| {
            if path.extension().is_some_and(|e| e == "sst") {
                seen.lock().unwrap().push((offset, len));
            }
        },
    );
    (Arc::new(fs), reads)
}

/// 1-3 changes for `Db::set_options`, drawn from the changeable options in
/// the ranges the model test draws options from (a TTL, if any, no run
/// reaches; FIFO families (`fifo`) keep their size cap and get no blob
/// files; universal `incremental` only with `num_levels` >= 3), the prefix
/// extractor one draw in 68, and, three draws in 68, an option that changes
/// only on reopen or an unknown one, which `set_options` must refuse.
pub fn random_option_changes<R: rand::Rng>(
    rng: &mut R,
    fifo: bool,
    num_levels: usize,
) -> Vec<(&'static str, String)> {
    const FAR_TTL: &str = "1099511627776";
    let bool_text = |rng: &mut R| rng.gen_bool(0.5).to_string();
    let pick = |rng: &mut R, xs: &[&str]| xs[rng.gen_range(0..xs.len())].to_string();
    let mut changes: Vec<(&str, String)> = Vec::new();
    for _ in 0..rng.gen_range(1..=3) {
        let c = match rng.gen_range(0..34) {
            0 => (
                "write_buffer_size",
                rng.gen_range(4096..64 * 1024).to_string(),
            ),
            1 => ("max_write_buffer_number", rng.gen_range(2..=4).to_string()),
            2 => (
                "memtable_bloom_size_ratio",
                pick(rng, &["0", "0.001", "0.02"]),
            ),
            3 => ("memtable_whole_key_filtering", bool_text(rng)),
            4 => ("block_size", pick(rng, &["64", "256", "4096"])),
            5 => ("block_restart_interval", pick(rng, &["1", "4", "16"])),
            6 => ("block_size_deviation", rng.gen_range(0..=100).to_string()),
            7 => ("bloom_bits_per_key", pick(rng, &["0", "10"])),
            8 => (
                "bloom_bits_per_key_per_level",
                pick(rng, &["1:8", "10:4:0.5"]),
            ),
            9 => ("whole_key_filtering", bool_text(rng)),
            10 => (
                "compression_per_level",
                pick(rng, &["NoCompression", "LZ4:ZSTD"]),
            ),
            11 => ("bottommost_compression", pick(rng, &["Disabled", "LZ4"])),
            12 => ("disable_auto_compactions", bool_text(rng)),
            13 => (
                "level0_file_num_compaction_trigger",
                pick(rng, &["2", "4", "100"]),
            ),
            14 => ("level0_slowdown_writes_trigger", pick(rng, &["20", "100"])),
            15 => ("level0_stop_writes_trigger", pick(rng, &["36", "100"])),
            16 => ("max_bytes_for_level_base", pick(rng, &["32768", "65536"])),
            17 => ("max_bytes_for_level_multiplier", pick(rng, &["2", "10"])),
            18 => ("target_file_size_base", pick(rng, &["8192", "16384"])),
            19 => ("target_file_size_multiplier", pick(rng, &["1", "2"])),
            20 => ("max_compaction_bytes", pick(rng, &["0", "65536"])),
            21 => ("level_compaction_dynamic_file_size", bool_text(rng)),
            22 => (
                "soft_pending_compaction_bytes_limit",
                pick(rng, &["262144", "68719476736"]),
            ),
            23 => ("default_ttl_secs", pick(rng, &["0", FAR_TTL])),
            24 => (
                "compaction_options_universal.size_ratio",
                pick(rng, &["0", "1", "10"]),
            ),
            25 => (
                "compaction_options_universal.max_size_amplification_percent",
                pick(rng, &["25", "200"]),
            ),
            26 => (
                "compaction_options_universal.incremental",
                (num_levels >= 3 && rng.gen_bool(0.5)).to_string(),
            ),
            27 => ("compaction_options_fifo.allow_compaction", bool_text(rng)),
            28 => (
                "enable_blob_files",
                (!fifo && rng.gen_bool(0.5)).to_string(),
            ),
            29 => ("min_blob_size", pick(rng, &["0", "16", "100"])),
            30 => ("enable_blob_garbage_collection", bool_text(rng)),
            31 => (
                "blob_garbage_collection_age_cutoff",
                pick(rng, &["0.25", "1"]),
            ),
            // Changes only on reopen, or unknown: refused.
            32 => (
                [
                    "compaction_style",
                    "sst_partitioner_factory",
                    "block_align",
                    "merge_operator",
                ][rng.gen_range(0..4)],
                "x".to_string(),
            ),
            // (The same share as before the extractor became changeable:
            // the seeds' other draws stay as they were.)
            _ if rng.gen_bool(0.5) => (
                "prefix_extractor",
                pick(
                    rng,
                    &[
                        "nullptr",
                        "rocksdb.FixedPrefix.3",
                        "rocksdb.CappedPrefix.1",
                        "rocksdb.CappedPrefix.5",
                    ],
                ),
            ),
            _ => ("no_such_option", "1".to_string()),
        };
        changes.push(c);
    }
    changes
}

/// Options that change only on reopen, and a name no option has: what
/// `random_option_changes` draws for `set_options` to refuse.
pub const REFUSED_OPTIONS: [&str; 5] = [
    "compaction_style",
    "sst_partitioner_factory",
    "block_align",
    "merge_operator",
    "no_such_option",
];

/// The options `set_options(changes)` must leave on a family that had
/// `before`, or `None` where it must refuse them (and change nothing).
pub fn options_after(
    before: &shale::CfOptions,
    changes: &[(&'static str, String)],
) -> Option<shale::CfOptions> {
    if changes.iter().any(|(k, _)| REFUSED_OPTIONS.contains(k)) {
        return None;
    }
    let mut want = before.clone();
    for (k, v) in changes {
        want.set_option(k, v).ok()?;
    }
    want.validate().ok()?;
    Some(want)
}

/// Files in directory `path` whose names end with `suffix` (`".sst"`,
/// `".blob"`, `".log"`).
pub fn files_ending(path: &std::path::Path, suffix: &str) -> usize {
    std::fs::read_dir(path)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(suffix)
        })
        .count()
}

/// Names of the files in directory `dir` of `fs` that `keep` accepts,
/// sorted (WAL and table numbers are zero-padded, so oldest first).
pub fn sorted_names(fs: &dyn FileSystem, dir: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut v: Vec<String> = fs
        .list(std::path::Path::new(dir))
        .expect("list")
        .into_iter()
        .filter(|n| keep(n))
        .collect();
    v.sort();
    v
}

/// 1-2 changes for `Db::set_db_options` over the DB-wide options that
/// change while open, and, one draw in 9, `max_open_files` (fixed while
/// open: refused). Returns the changes and whether they must be refused.
pub fn random_db_option_changes<R: rand::Rng>(rng: &mut R) -> (Vec<(&'static str, String)>, bool) {
    let pick = |rng: &mut R, xs: &[&str]| xs[rng.gen_range(0..xs.len())].to_string();
    let mut refused = false;
    let changes = (0..rng.gen_range(1..=2))
        .map(|_| match rng.gen_range(0..9) {
            0 => ("max_background_jobs", pick(rng, &["1", "2", "4"])),
            1 => ("max_subcompactions", pick(rng, &["1", "2", "3"])),
            2 => ("delayed_write_rate", pick(rng, &["1048576", "16777216"])),
            3 => ("max_total_wal_size", pick(rng, &["0", "65536", "1048576"])),
            4 => ("bytes_per_sync", pick(rng, &["0", "4096", "1048576"])),
            5 => ("wal_bytes_per_sync", pick(rng, &["0", "4096", "1048576"])),
            6 | 7 => (
                "compaction_readahead_size",
                pick(rng, &["0", "65536", "2097152"]),
            ),
            _ => {
                refused = true;
                ("max_open_files", "100".to_string())
            }
        })
        .collect();
    (changes, refused)
}

/// The first seed of a many-seed loop: `SHALE_SEED_BASE` (set fresh and
/// printed by scripts/long_tests.sh), else 0 (the fixed seeds).
pub fn seed_base() -> u64 {
    let base = std::env::var("SHALE_SEED_BASE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    println!("SHALE_SEED_BASE={base}");
    base
}

/// Every column family's contents, by family name.
pub type FamilyContents =
    std::collections::BTreeMap<String, std::collections::BTreeMap<Vec<u8>, Vec<u8>>>;

/// Every live family of `db` read in full ([`FamilyContents`]).
pub fn family_contents(db: &Db) -> FamilyContents {
    db.cfs()
        .iter()
        .map(|cf| {
            let kv = db
                .range_cf(cf, ..)
                .map(|r| {
                    let (k, v) = r.unwrap();
                    (k.to_vec(), v.to_vec())
                })
                .collect();
            (cf.name().to_string(), kv)
        })
        .collect()
}

/// A clock the test sets (Unix seconds, or microseconds through
/// `set_micros`), for TTLs, archived WALs' ages and WAL time records.
#[derive(Debug, Default)]
pub struct TestClock(pub std::sync::atomic::AtomicU64);

impl TestClock {
    /// A clock at `secs`.
    pub fn at(secs: u64) -> std::sync::Arc<TestClock> {
        std::sync::Arc::new(TestClock(std::sync::atomic::AtomicU64::new(
            secs * 1_000_000,
        )))
    }

    /// Sets the time in Unix microseconds.
    pub fn set_micros(&self, micros: u64) {
        self.0.store(micros, std::sync::atomic::Ordering::SeqCst);
    }

    /// Moves the time by `micros`.
    pub fn advance_micros(&self, micros: u64) {
        self.0
            .fetch_add(micros, std::sync::atomic::Ordering::SeqCst);
    }
}

impl shale::Clock for TestClock {
    fn now_secs(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst) / 1_000_000
    }

    fn now_micros(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}
