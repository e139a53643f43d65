//! Iterator readahead, checked by counting reads through the `fs` seam: a
//! long scan with no block cache issues reads that grow from the block size
//! to 8 KiB, doubling up to `max_auto_readahead_size`; `readahead_size` fixes
//! the read size; point lookups never read ahead.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use shale::fs::{PosixFileSystem, ReadHookFs};
use shale::{Db, Options, ReadOptions};

#[derive(Default)]
struct Counters {
    reads: AtomicU64,
    sizes: Mutex<Vec<usize>>,
}

fn setup() -> (tempfile::TempDir, Db, Arc<Counters>) {
    let dir = tempfile::tempdir().unwrap();
    let c = Arc::new(Counters::default());
    let counters = Arc::clone(&c);
    let fs = Arc::new(ReadHookFs::new(
        Arc::new(PosixFileSystem::default()),
        move |path: &Path, _offset, len| {
            if path.extension().is_some_and(|e| e == "sst") {
                counters.reads.fetch_add(1, Ordering::Relaxed);
                counters.sizes.lock().unwrap().push(len);
            }
        },
    ));
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cache_size: 0,
            cf: shale::CfOptions {
                bloom_bits_per_key: 0,
                ..Default::default()
            },
            fs,
            ..Options::default()
        },
    )
    .unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:08}").as_bytes(), &[b'v'; 100])
            .unwrap();
    }
    db.flush().unwrap();
    // Open the table (footer, index, filter reads) before counting.
    assert!(db.get(b"key00000000").unwrap().is_some());
    c.sizes.lock().unwrap().clear();
    (dir, db, c)
}

fn scan(db: &Db, ro: &ReadOptions) -> usize {
    let mut it = db.iter(ro);
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
fn auto_readahead_grows_to_the_cap() {
    let (_dir, db, c) = setup();
    c.reads.store(0, Ordering::Relaxed);
    c.sizes.lock().unwrap().clear();
    assert_eq!(scan(&db, &ReadOptions::new()), 20_000);
    let sizes = c.sizes.lock().unwrap().clone();
    let blocks = 20_000 * 120 / 4096; // about this many data blocks
    assert!(
        sizes.len() < blocks / 8,
        "{} reads for ~{blocks} blocks",
        sizes.len()
    );
    // First two reads are single blocks, then 8 KiB, 16 KiB, ... up to 256 KiB.
    assert!(
        sizes[0] <= 4096 + 200 && sizes[1] <= 4096 + 200,
        "{sizes:?}"
    );
    assert_eq!(sizes[2], 8 * 1024, "{sizes:?}");
    assert_eq!(sizes[3], 16 * 1024, "{sizes:?}");
    assert_eq!(*sizes.iter().max().unwrap(), 256 * 1024, "{sizes:?}");
}

#[test]
fn fixed_readahead_and_point_reads() {
    let (_dir, db, c) = setup();
    c.sizes.lock().unwrap().clear();
    let mut ro = ReadOptions::new();
    ro.readahead_size = 1 << 20;
    assert_eq!(scan(&db, &ro), 20_000);
    let sizes = c.sizes.lock().unwrap().clone();
    assert_eq!(sizes[0], 1 << 20, "{sizes:?}");
    assert!(sizes.len() <= 4, "{sizes:?}");
    c.sizes.lock().unwrap().clear();
    for i in (0..20_000u32).step_by(997) {
        assert!(db.get(format!("key{i:08}").as_bytes()).unwrap().is_some());
    }
    let sizes = c.sizes.lock().unwrap().clone();
    assert!(
        sizes.iter().all(|&s| s < 8192),
        "point reads read ahead: {sizes:?}"
    );
}

/// Writes two overlapping L0 tables (16,000 keys, 100-byte values) with
/// `compaction_readahead_size` = `ra` on a file system whose device serves
/// `max_request` bytes per request (`None`: what the real one says), compacts
/// them, and returns the sizes of the reads of the two inputs during the
/// compaction and the inputs' total bytes.
fn compaction_input_reads(ra: usize, max_request: Option<usize>) -> (Vec<usize>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let log: Arc<Mutex<Vec<(std::path::PathBuf, usize)>>> = Arc::default();
    let l2 = Arc::clone(&log);
    let mut fs = ReadHookFs::new(
        Arc::new(PosixFileSystem::default()),
        move |path: &Path, _offset, len| {
            if path.extension().is_some_and(|e| e == "sst") {
                l2.lock().unwrap().push((path.to_path_buf(), len));
            }
        },
    );
    if max_request.is_some() {
        fs = fs.with_max_request_bytes(max_request);
    }
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            cache_size: 0,
            compaction_readahead_size: ra,
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 100,
                level0_slowdown_writes_trigger: 100,
                level0_stop_writes_trigger: 100,
                ..Default::default()
            },
            fs: Arc::new(fs),
            ..Options::default()
        },
    )
    .unwrap();
    for round in 0..2u32 {
        for i in 0..8_000u32 {
            db.put(format!("key{:08}", i * 2 + round).as_bytes(), &[b'v'; 100])
                .unwrap();
        }
        db.flush().unwrap();
    }
    let inputs: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    assert_eq!(inputs.len(), 2);
    let input_bytes: u64 = inputs
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    log.lock().unwrap().clear();
    db.compact_range(None, None).unwrap();
    let reads = log
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| inputs.contains(p))
        .map(|(_, n)| *n)
        .collect();
    (reads, input_bytes)
}

/// Defect 7 of issue 10: `compaction_readahead_size` was accepted and
/// ignored (compaction read one block per IO). Each input table is now read
/// in reads of that size from its first block on.
#[test]
fn compaction_reads_inputs_in_compaction_readahead_size_reads() {
    const RA: usize = 64 << 10;
    let (reads, input_bytes) = compaction_input_reads(RA, None);
    let full = reads.iter().filter(|&&n| n == RA).count();
    let bytes_in_full = (full * RA) as u64;
    assert!(
        bytes_in_full * 10 >= input_bytes * 8,
        "{} of {input_bytes} input bytes read in {RA}-byte reads; reads: {reads:?}",
        bytes_in_full
    );
    assert!(
        // One read per RA bytes, each table's tail, and the reads that open
        // a table (footer, properties, index, filter: 5 each).
        reads.len() as u64 <= input_bytes / RA as u64 + 2 + 2 * 5,
        "{} reads for {input_bytes} bytes: {reads:?}",
        reads.len()
    );
}

/// `advise_random_on_open`: every table the DB opens gets a `Random` hint
/// through the fs seam (the posix file system turns it into
/// `posix_fadvise(RANDOM)`, so a point read does not drag the kernel's
/// readahead window in); turned off, tables get no hint. Nothing else is
/// hinted either way.
#[test]
fn tables_are_opened_for_random_access_unless_told_otherwise() {
    use shale::fs::AccessPattern;
    for advise in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let hints: Arc<Mutex<Vec<(String, AccessPattern)>>> = Arc::default();
        let seen = Arc::clone(&hints);
        let fs = Arc::new(
            ReadHookFs::new(Arc::new(PosixFileSystem::default()), |_: &Path, _, _| {}).on_advise(
                move |path: &Path, pattern| {
                    let name = path.file_name().unwrap().to_string_lossy().into_owned();
                    seen.lock().unwrap().push((name, pattern));
                },
            ),
        );
        let opts = Options {
            create_if_missing: true,
            advise_random_on_open: advise,
            fs,
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        for round in 0..3u32 {
            for i in 0..1000u32 {
                db.put(format!("key{i:06}").as_bytes(), &round.to_le_bytes())
                    .unwrap();
            }
            db.flush().unwrap();
        }
        db.compact_range(None, None).unwrap();
        assert!(db.get(b"key000001").unwrap().is_some());
        let hints = hints.lock().unwrap().clone();
        if advise {
            // The three overlapping flushed tables (read by the compaction)
            // and its output (read by the get), each opened once.
            assert!(hints.len() >= 4, "{hints:?}");
            assert!(
                hints
                    .iter()
                    .all(|(n, p)| n.ends_with(".sst") && *p == AccessPattern::Random),
                "{hints:?}"
            );
        } else {
            assert!(hints.is_empty(), "{hints:?}");
        }
    }
}

/// Compaction readahead never asks for more than the device serves as one
/// request (`FileSystem::max_request_bytes`, injected here below the
/// readahead; this machine's disk reports 4 MiB): every input read is at
/// most the cap, and the inputs' bytes go in reads of the cap, not in
/// single blocks (RocksDB's bug 12038, where compaction reads fell to
/// 4 KiB, guarded by counting request sizes through the fs seam).
#[test]
fn compaction_reads_are_capped_at_the_device_request_size() {
    const CAP: usize = 16 << 10;
    let (reads, input_bytes) = compaction_input_reads(64 << 10, Some(CAP));
    assert!(
        reads.iter().all(|&n| n <= CAP),
        "a read above {CAP}: {reads:?}"
    );
    let in_full: u64 = reads.iter().filter(|&&n| n == CAP).map(|&n| n as u64).sum();
    assert!(
        in_full * 10 >= input_bytes * 8,
        "{in_full} of {input_bytes} input bytes read in {CAP}-byte reads: {reads:?}"
    );
}
