//! IO accounting by purpose (`Db::stats().io`): each purpose gets the bytes
//! the engine's own counters say it moved, compaction reads are large
//! (RocksDB bug 12038 would show as a 4 KiB average here), and the sum of
//! every purpose matches what the kernel counted for the process
//! (`rchar`/`wchar` of /proc/self/io), checked in a child process that does
//! nothing else.

use std::path::Path;

use shale::{Db, IoPurposeStats, Options, ReadOptions, Stats};

fn purpose<'a>(s: &'a Stats, name: &str) -> &'a IoPurposeStats {
    s.io.purpose(name).unwrap()
}

fn fill(db: &Db, n: u32, value: usize) {
    for i in 0..n {
        // Spread keys so that every flush overlaps the last: compactions.
        let k = (i.wrapping_mul(2_654_435_761)) % n;
        db.put(format!("key{k:010}").as_bytes(), &vec![b'v'; value])
            .unwrap();
    }
}

fn small_lsm(dir: &Path, wal_mmap_writes: bool) -> Db {
    Db::open(
        dir,
        Options {
            create_if_missing: true,
            cf: shale::CfOptions {
                write_buffer_size: 1 << 20,
                target_file_size_base: 1 << 20,
                max_bytes_for_level_base: 4 << 20,
                level0_file_num_compaction_trigger: 2,
                ..Default::default()
            },
            cache_size: 0,
            wal_mmap_writes,
            ..Options::default()
        },
    )
    .unwrap()
}

#[test]
fn purposes_match_the_engines_own_counters() {
    let dir = tempfile::tempdir().unwrap();
    let db = small_lsm(dir.path(), true);
    fill(&db, 60_000, 200);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let s = db.stats();
    assert!(s.compaction.compactions > 0, "{:?}", s.compaction);

    // Flush and compaction wrote exactly their tables.
    let flush = purpose(&s, "flush");
    assert_eq!(flush.write_bytes, s.compaction.flush_bytes);
    assert_eq!(flush.read_bytes, 0);
    let comp = purpose(&s, "compaction");
    assert_eq!(comp.write_bytes, s.compaction.compaction_bytes_written);
    // Compaction read its inputs (its table opens are `other`), in large
    // requests: readahead, not block by block.
    assert!(
        comp.read_bytes >= s.compaction.compaction_bytes_read / 2,
        "{comp:?} vs {:?}",
        s.compaction
    );
    assert!(
        comp.avg_read_size() >= 64.0 * 1024.0,
        "compaction reads average {} bytes",
        comp.avg_read_size()
    );
    // Every WAL byte, and nothing else, is the WAL's.
    let wal = purpose(&s, "wal");
    assert!(wal.write_bytes >= s.wal.bytes, "{wal:?} vs {:?}", s.wal);
    assert_eq!(wal.read_bytes, 0);
    // Nobody read for a user yet.
    assert_eq!(purpose(&s, "user").read_requests, 0);
    let other = purpose(&s, "other");
    assert!(other.write_bytes > 0 && other.read_bytes > 0, "{other:?}");

    // Point reads without a block cache: one data block each.
    let before = purpose(&db.stats(), "user").clone();
    for i in 0..1000u32 {
        db.get(format!("key{:010}", i * 37).as_bytes()).unwrap();
    }
    let s = db.stats();
    let user = purpose(&s, "user");
    let reads = user.read_requests - before.read_requests;
    // Some keys were never written (the fill repeats some): bloom filters
    // answer those without a read.
    assert!((500..=3000).contains(&reads), "{reads} reads for 1000 gets");
    let avg = (user.read_bytes - before.read_bytes) as f64 / reads as f64;
    assert!(
        (1024.0..=16384.0).contains(&avg),
        "{avg} bytes per get read"
    );
    // A scan reads ahead: fewer, larger requests than blocks.
    let before = user.clone();
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    let s = db.stats();
    let user = purpose(&s, "user");
    let scan_avg = (user.read_bytes - before.read_bytes) as f64
        / (user.read_requests - before.read_requests) as f64;
    assert!(scan_avg > 16384.0, "scan reads average {scan_avg} bytes");
    // The histogram holds every request.
    for p in &s.io.purposes {
        assert_eq!(p.read_sizes.iter().sum::<u64>(), p.read_requests, "{p:?}");
        assert_eq!(p.write_sizes.iter().sum::<u64>(), p.write_requests, "{p:?}");
        assert_eq!(p.read_sizes.len(), s.io.bucket_limits.len() + 1);
    }
    let n = |name: &str| -> u64 { db.property(name).unwrap().parse().unwrap() };
    let comp = purpose(&s, "compaction");
    assert_eq!(n("shale.io-read-bytes-compaction"), comp.read_bytes);
    assert_eq!(n("shale.io-write-requests-compaction"), comp.write_requests);
    assert_eq!(db.property("shale.io-read-bytes-nothing"), None);
    let table = db.property("shale.io-stats").unwrap();
    for p in ["user", "flush", "compaction", "wal", "other", "blob"] {
        assert!(table.contains(p), "{table}");
    }
    assert!(db.property("shale.stats").unwrap().contains("** IO Stats"));
}

#[test]
fn reopening_counts_recovery_as_other() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = small_lsm(dir.path(), false);
        fill(&db, 2000, 100);
    }
    let db = small_lsm(dir.path(), false);
    let s = db.stats();
    let other = purpose(&s, "other");
    // The WAL was read back (and its memtable flushed) by recovery.
    assert!(other.read_bytes >= 2000 * 100, "{other:?}");
    assert_eq!(purpose(&s, "flush").write_bytes, 0);
    assert_eq!(purpose(&s, "user").read_bytes, 0);
    assert_eq!(db.get(b"key0000000000").unwrap().unwrap().len(), 100);
}

/// Name of the test the child process runs.
const CHILD: &str = "child_counts_match_the_kernel";

/// Runs `CHILD` in a fresh process (only its workload in that process) and
/// checks it passed.
#[test]
fn every_byte_is_counted_against_proc_self_io() {
    if !Path::new("/proc/self/io").exists() {
        eprintln!("skipped: no /proc/self/io on this system");
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--ignored", "--test-threads=1"])
        .env("SHALE_IO_CHILD", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

fn proc_io() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/io").unwrap();
    let field = |name: &str| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    (field("rchar:"), field("wchar:"))
}

/// The child's side: a DB written with `write(2)` (no memory-mapped WAL,
/// whose appends the kernel does not count as `wchar`), flushed,
/// compacted, read and reopened; the DB's per-purpose sums against the
/// kernel's counts for the process.
#[test]
#[ignore = "run by every_byte_is_counted_against_proc_self_io in a child process"]
fn child_counts_match_the_kernel() {
    if std::env::var_os("SHALE_IO_CHILD").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (r0, w0) = proc_io();
    let mut read = 0u64;
    let mut written = 0u64;
    let mut add = |s: &Stats| {
        for p in &s.io.purposes {
            read += p.read_bytes;
            written += p.write_bytes;
        }
    };
    {
        let db = small_lsm(dir.path(), false);
        fill(&db, 40_000, 300);
        db.flush().unwrap();
        db.wait_for_compaction().unwrap();
        for i in 0..2000u32 {
            db.get(format!("key{:010}", i * 13).as_bytes()).unwrap();
        }
        let handle = db.clone();
        db.close().unwrap();
        add(&handle.stats());
    }
    {
        let db = small_lsm(dir.path(), false);
        let mut it = db.iter(&ReadOptions::default());
        it.seek_to_first();
        while it.valid() {
            it.next();
        }
        drop(it);
        let handle = db.clone();
        db.close().unwrap();
        add(&handle.stats());
    }
    let (r1, w1) = proc_io();
    let (kr, kw) = (r1 - r0, w1 - w0);
    eprintln!("read: ours {read}, kernel {kr}; written: ours {written}, kernel {kw}");
    let near = |ours: u64, kernel: u64| (ours as f64 - kernel as f64).abs() <= 0.05 * kernel as f64;
    assert!(
        kw > 10 << 20 && kr > 10 << 20,
        "kernel: read {kr} written {kw}"
    );
    assert!(near(written, kw), "written: ours {written}, kernel {kw}");
    assert!(near(read, kr), "read: ours {read}, kernel {kr}");
}
