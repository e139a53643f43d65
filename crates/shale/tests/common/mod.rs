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
        level0_file_num_compaction_trigger: 100,
        level0_slowdown_writes_trigger: 100,
        level0_stop_writes_trigger: 100,
        ..Options::default()
    }
}

/// For fault sweeps over `fs`: nothing flushes or compacts on its own and
/// no background error is retried, so each run is deterministic.
pub fn fault_options(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        write_buffer_size: 4 << 20,
        block_size: 512,
        cache_size: 0,
        max_bgerror_resume_count: 0,
        fs,
        ..quiet_options()
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
