//! Direct IO (`use_direct_reads`, `use_direct_io_for_flush_and_compaction`):
//! the flags reach the file system for table files only (checked on the
//! in-memory file system, which records them); a DB on a real directory
//! works with both and its table descriptors carry `O_DIRECT` (checked in
//! `/proc/self/fdinfo`); readahead asks a direct handle for aligned ranges;
//! a file system refusing `O_DIRECT` fails open (or the flush) with an
//! error naming the option and the file.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::fs::{
    FaultInjectionFs, FaultKind, FaultOp, FaultRule, FileSystem, MemFileSystem, PosixFileSystem,
    Trigger,
};
use shale::{Db, Error, Options, ReadOptions};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-")
        .repeat(1 + (i % 13) as usize)
        .into_bytes()
}

fn small(fs: Arc<dyn FileSystem>) -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 64 << 10,
            target_file_size_base: 64 << 10,
            max_bytes_for_level_base: 256 << 10,
            level0_file_num_compaction_trigger: 2,
            ..Default::default()
        },
        cache_size: 256 << 10,
        compaction_readahead_size: 16 << 10,
        fs,
        ..Options::default()
    }
}

/// Writes keys `0..n` in a scattered order with flushes, compacts, and
/// checks every key by get and by scans both ways.
fn exercise(db: &Db, n: u32) {
    let mut model = BTreeMap::new();
    for j in 0..n {
        let i = (j * 7919) % n;
        db.put(&key(i), &value(i)).unwrap();
        model.insert(key(i), value(i));
        if j % 3000 == 2999 {
            db.flush().unwrap();
        }
    }
    for i in (0..n).step_by(5) {
        db.delete(&key(i)).unwrap();
        model.remove(&key(i));
    }
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    check(db, &model, n);
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>, n: u32) {
    for i in 0..n {
        let got = db.get(&key(i)).unwrap().map(|v| v.to_vec());
        assert_eq!(got.as_ref(), model.get(&key(i)), "key {i}");
    }
    let ro = ReadOptions::default();
    let mut it = db.iter(&ro);
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(fwd, want);
    it.seek_to_last();
    let mut back = 0;
    while it.valid() {
        back += 1;
        it.prev();
    }
    assert_eq!(back, model.len());
}

/// Whether the file system of `dir` takes O_DIRECT; says why not.
fn direct_io_works(dir: &Path) -> bool {
    match PosixFileSystem::probe_direct_io(dir) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped: {} refuses direct IO: {e}", dir.display());
            false
        }
    }
}

/// The open descriptors of this process whose path ends with `suffix`,
/// and whether each has O_DIRECT (from `/proc/self/fdinfo`).
fn open_fds_with_direct(dir: &Path, suffix: &str) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(e.path()) else {
            continue;
        };
        if !target.starts_with(dir) || !target.to_string_lossy().ends_with(suffix) {
            continue;
        }
        let fd = e.file_name().to_string_lossy().to_string();
        let Ok(info) = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}")) else {
            continue;
        };
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .map(|f| i64::from_str_radix(f.trim(), 8).unwrap())
            .unwrap();
        out.push((target, flags & libc_o_direct() != 0));
    }
    out
}

/// `O_DIRECT` of this architecture (as in `<fcntl.h>`).
fn libc_o_direct() -> i64 {
    if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        0o200000
    } else {
        0o40000
    }
}

#[test]
fn a_db_with_direct_io_on_a_real_directory_reads_and_writes_correctly() {
    let dir = tempfile::tempdir().unwrap();
    if !direct_io_works(dir.path()) {
        return;
    }
    let db_dir = dir.path().join("db");
    let opts = Options {
        use_direct_reads: true,
        use_direct_io_for_flush_and_compaction: true,
        ..small(Arc::new(PosixFileSystem::default()))
    };
    let db = Db::open(&db_dir, opts.clone()).unwrap();
    exercise(&db, 20_000);
    if cfg!(target_os = "linux") {
        let tables = open_fds_with_direct(&db_dir, ".sst");
        assert!(!tables.is_empty(), "tables are open");
        assert!(tables.iter().all(|(_, d)| *d), "{tables:?}");
        let wals = open_fds_with_direct(&db_dir, ".log");
        assert!(!wals.is_empty());
        assert!(
            wals.iter().all(|(_, d)| !*d),
            "the WAL stays buffered: {wals:?}"
        );
    }
    drop(db);
    // Reopened buffered: the tables written directly are whole (no
    // padding past their ends).
    let db = Db::open(&db_dir, small(Arc::new(PosixFileSystem::default()))).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..20_000 {
        if i % 5 != 0 {
            model.insert(key(i), value(i));
        }
    }
    check(&db, &model, 20_000);
    let options = std::fs::read_dir(&db_dir)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("OPTIONS-"))
        .unwrap();
    let text = std::fs::read_to_string(options.path()).unwrap();
    assert!(text.contains("\nuse_direct_reads=false\n"), "{text}");
}

#[test]
fn compaction_alone_reads_its_inputs_directly_and_user_reads_stay_buffered() {
    let dir = tempfile::tempdir().unwrap();
    if !direct_io_works(dir.path()) {
        return;
    }
    let db_dir = dir.path().join("db");
    let opts = Options {
        use_direct_io_for_flush_and_compaction: true,
        ..small(Arc::new(PosixFileSystem::default()))
    };
    let db = Db::open(&db_dir, opts).unwrap();
    exercise(&db, 10_000);
    if cfg!(target_os = "linux") {
        let tables = open_fds_with_direct(&db_dir, ".sst");
        assert!(!tables.is_empty());
        assert!(tables.iter().all(|(_, d)| !*d), "{tables:?}");
    }
}

/// Which files the engine asked to open directly, on the in-memory file
/// system that records it.
fn direct_opens(reads: bool, flush_and_compaction: bool) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let fs = MemFileSystem::new();
    let opts = Options {
        use_direct_reads: reads,
        use_direct_io_for_flush_and_compaction: flush_and_compaction,
        ..small(Arc::new(fs.clone()))
    };
    let db = Db::open("/db", opts).unwrap();
    exercise(&db, 8_000);
    drop(db);
    let (mut writes, mut reads) = (Vec::new(), Vec::new());
    for o in fs.direct_opens() {
        if o.write {
            writes.push(o.path);
        } else {
            reads.push(o.path);
        }
    }
    (writes, reads)
}

fn all_tables(paths: &[PathBuf]) -> bool {
    paths
        .iter()
        .all(|p| p.extension().is_some_and(|e| e == "sst"))
}

#[test]
fn the_flags_reach_the_file_system_for_table_files_only() {
    assert_eq!(direct_opens(false, false), (vec![], vec![]));

    let (w, r) = direct_opens(false, true);
    assert!(
        w.len() >= 3 && all_tables(&w),
        "every flush/compaction output: {w:?}"
    );
    // The LOCK probe at open, then compaction inputs.
    assert_eq!(r[0], Path::new("/db/LOCK"));
    assert!(r.len() > 1 && all_tables(&r[1..]), "{r:?}");

    let (w, r) = direct_opens(true, false);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(r[0], Path::new("/db/LOCK"));
    assert!(r.len() > 1 && all_tables(&r[1..]), "{r:?}");
}

#[test]
fn a_file_system_refusing_o_direct_fails_open_naming_the_option_and_the_file() {
    for (reads, option) in [
        (true, "use_direct_reads"),
        (false, "use_direct_io_for_flush_and_compaction"),
    ] {
        let mem = MemFileSystem::new();
        let fs = FaultInjectionFs::new(Arc::new(mem));
        fs.add_rule(
            FaultRule::new(FaultKind::DirectIoRefused, Trigger::FromIndex(0)).direct_only(),
        );
        let opts = Options {
            use_direct_reads: reads,
            use_direct_io_for_flush_and_compaction: !reads,
            ..small(Arc::new(fs.clone()))
        };
        let e = Db::open("/db", opts).map(drop).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::InvalidArgument(_)), "{msg}");
        assert!(
            msg.contains(&format!(
                "{option}: the file system refused O_DIRECT for /db/LOCK (EINVAL)"
            )),
            "{msg}"
        );
        // Without direct IO the same file system opens the DB.
        let opts = small(Arc::new(fs.clone()));
        drop(Db::open("/db", opts).unwrap());
    }
}

#[test]
fn a_refusal_at_a_flush_output_names_the_option_and_the_table() {
    let fs = FaultInjectionFs::new(Arc::new(MemFileSystem::new()));
    fs.add_rule(
        FaultRule::new(FaultKind::DirectIoRefused, Trigger::FromIndex(0))
            .direct_only()
            .ops(&[FaultOp::Create])
            .path(".sst"),
    );
    let opts = Options {
        use_direct_io_for_flush_and_compaction: true,
        max_bgerror_resume_count: 0,
        ..small(Arc::new(fs.clone()))
    };
    let db = Db::open("/db", opts).unwrap();
    db.put(b"k", b"v").unwrap();
    let msg = db.flush().unwrap_err().to_string();
    assert!(
        msg.contains(
            "use_direct_io_for_flush_and_compaction: the file system refused O_DIRECT for /db/"
        ) && msg.contains(".sst"),
        "{msg}"
    );
}

#[test]
fn readahead_on_a_direct_handle_reads_aligned_ranges() {
    let dir = tempfile::tempdir().unwrap();
    if !direct_io_works(dir.path()) {
        return;
    }
    let (fs, reads) = common::recording_table_reads();
    let db = Db::open(
        dir.path(),
        Options {
            create_if_missing: true,
            use_direct_reads: true,
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
        db.put(&key(i), &[b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    let file_len: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".sst"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(db.get(&key(0)).unwrap().is_some());
    reads.lock().unwrap().clear();
    let ro = ReadOptions {
        readahead_size: 64 << 10,
        ..ReadOptions::default()
    };
    let mut it = db.iter(&ro);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert_eq!(n, 20_000);
    let reads = reads.lock().unwrap().clone();
    assert!(reads.len() > 10, "{reads:?}");
    // Every readahead read starts and ends on a block boundary of the
    // device (at least 512 bytes), but the one ending at the file's end.
    for &(off, len) in &reads {
        assert_eq!(off % 512, 0, "{reads:?}");
        assert!(
            len % 512 == 0 || off + len as u64 == file_len,
            "{off}+{len} of {file_len}: {reads:?}"
        );
    }
}
