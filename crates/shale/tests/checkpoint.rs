//! Checkpoints (issue 39): `Db::checkpoint` / `checkpoint_with`, file
//! deletions held off and the live-file lists for backup tools.
//!
//! - `checkpoint_copies_every_family`: several families (one with blob
//!   files), puts, deletes, merges, range deletions, flushed tables and
//!   unflushed memtables; with and without the memory-mapped WAL, with a
//!   flush first (`log_size_for_flush = 0`) and with the WALs carried
//!   instead (`u64::MAX`). The copy opens (WAL recovery in
//!   `AbsoluteConsistency`, so a copied zero tail would fail it) and every
//!   family equals the model as of the call; later writes are not in it;
//!   tables are hard links (no table byte copied).
//! - `concurrent_writers_flushes_and_compactions`: a writer thread with a
//!   ledger of acknowledged batches (each in two families) while
//!   checkpoints are taken: each copy holds a prefix of the batches, in
//!   both families, covering every batch acknowledged before the call.
//! - `power_loss_during_and_after_a_checkpoint` (MemFileSystem): the image
//!   after every IO call of a checkpoint and random power losses after it:
//!   the target either is absent or opens with the full contents.
//! - `crash_injected_mid_checkpoint`: a fault on every IO call of the
//!   checkpoint in turn (links, creates, writes, syncs, renames): the call
//!   fails, no directory is at the target (live, process crash or power
//!   loss), and the next checkpoint succeeds.
//! - `file_deletions_disabled_keep_obsolete_files` (counted, and `force`),
//!   `live_files_name_what_a_copy_needs`, `an_existing_target_is_refused`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use shale::fs::{
    FaultInjectionFs, FaultKind, FaultOp, FaultRule, FileSystem, MemFileSystem, Trigger,
};
use shale::{
    BlobOptions, Cf, CfOptions, CheckpointOptions, Db, Error, LiveFileKind, MergeOperator, Options,
    StringAppendOperator, WalRecoveryMode, WriteBatch, WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Models = BTreeMap<String, Model>;

const FAMILIES: [&str; 2] = ["blobs", "plain"];

fn append() -> Option<Arc<dyn MergeOperator>> {
    Some(Arc::new(StringAppendOperator::new(b",")))
}

fn cf_opts(name: &str) -> CfOptions {
    let o = CfOptions {
        write_buffer_size: 64 << 10,
        target_file_size_base: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        level0_file_num_compaction_trigger: 3,
        merge_operator: append(),
        ..CfOptions::default()
    };
    if name == "blobs" {
        return CfOptions {
            blob: BlobOptions {
                enable_blob_files: true,
                min_blob_size: 200,
                ..BlobOptions::default()
            },
            ..o
        };
    }
    o
}

fn options(fs: Option<Arc<dyn FileSystem>>, mmap: bool) -> Options {
    let mut o = Options {
        create_if_missing: true,
        create_missing_column_families: true,
        column_families: FAMILIES
            .iter()
            .map(|n| (n.to_string(), cf_opts(n)))
            .collect(),
        cf: cf_opts("default"),
        wal_mmap_writes: mmap,
        wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
        ..Options::default()
    };
    if let Some(fs) = fs {
        o.fs = fs;
    }
    o
}

fn families(db: &Db) -> Vec<Cf> {
    let mut cfs = vec![db.default_cf()];
    cfs.extend(FAMILIES.iter().map(|n| db.cf(n).unwrap()));
    cfs
}

fn scan(db: &Db) -> Models {
    db.cfs()
        .iter()
        .map(|cf| {
            let m: Model = db.range_cf(cf, ..).map(|r| r.unwrap()).collect();
            (cf.name().to_string(), m)
        })
        .collect()
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

/// One round of writes in every family (puts, some large for blob files,
/// deletes, merges, a range deletion), applied to `model` too.
fn write_round(db: &Db, cfs: &[Cf], model: &mut Models, round: u64) {
    for cf in cfs {
        let m = model.entry(cf.name().to_string()).or_default();
        let mut b = WriteBatch::new();
        for i in 0..120u64 {
            let k = key((i * 7 + round * 13) % 400);
            match (i + round) % 6 {
                0..=2 => {
                    let len = if i % 3 == 0 { 600 } else { 20 };
                    let mut v = format!("{round}-{i}-").into_bytes();
                    v.resize(len, b'a' + (i % 26) as u8);
                    b.put_cf(cf, &k, &v);
                    m.insert(k, v);
                }
                3 => {
                    b.delete_cf(cf, &k);
                    m.remove(&k);
                }
                _ => {
                    let op = format!("m{round}.{i}").into_bytes();
                    b.merge_cf(cf, &k, &op);
                    let v = match m.remove(&k) {
                        Some(mut old) => {
                            old.push(b',');
                            old.extend_from_slice(&op);
                            old
                        }
                        None => op,
                    };
                    m.insert(k, v);
                }
            }
        }
        let (lo, hi) = (key(round * 31 % 400), key(round * 31 % 400 + 9));
        b.delete_range_cf(cf, &lo, &hi);
        let gone: Vec<Vec<u8>> = m.range(lo..hi).map(|(k, _)| k.clone()).collect();
        for k in gone {
            m.remove(&k);
        }
        db.write(b, &WriteOptions::default()).unwrap();
    }
}

fn open_copy(dir: &Path, fs: Option<Arc<dyn FileSystem>>, mmap: bool) -> shale::Result<Db> {
    let mut o = options(fs, mmap);
    o.create_if_missing = false;
    o.create_missing_column_families = false;
    Db::open(dir, o)
}

fn check_copy_of_live_db(mmap: bool, log_size_for_flush: u64) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("db");
    let db = Db::open(&src, options(None, mmap)).unwrap();
    let cfs = families(&db);
    let mut model = Models::new();
    for round in 0..12 {
        write_round(&db, &cfs, &mut model, round);
        if round == 5 {
            db.flush().unwrap();
            db.flush_cf(&cfs[1]).unwrap();
            db.compact_range_cf(&cfs[2], None, None).unwrap();
        }
    }
    // Unflushed data in every family's memtable.
    assert!(db.property("shale.num-entries-active-mem-table").unwrap() != "0");
    let cp = dir.path().join("cp");
    let opts = CheckpointOptions { log_size_for_flush };
    let report = db.checkpoint_with(&cp, &opts).unwrap();
    assert_eq!(report.flushed, log_size_for_flush == 0, "{report:?}");
    assert!(report.files_linked > 0, "{report:?}");
    assert_eq!(report.files_copied, 0, "one file system: {report:?}");
    assert!(report.wal_files >= 1, "{report:?}");
    if report.flushed {
        // Every family flushed: only the current WAL is read by recovery
        // (the older ones, kept while deletions were held off, are not
        // copied).
        assert_eq!(report.wal_files, 1, "{report:?}");
    }
    assert!(!dir.path().join("cp.tmp").exists());
    assert!(common::files_ending(&cp, ".blob") >= 1, "blob files linked");
    // Each WAL copy holds exactly its records: no reserved zero tail of a
    // memory-mapped WAL.
    let mut compared = 0;
    for w in db.live_wal_files().unwrap() {
        if let Ok(m) = std::fs::metadata(cp.join(&w.name)) {
            assert_eq!(m.len(), w.size, "{w:?}");
            compared += 1;
        }
    }
    assert!(compared >= 1);
    // Writes after the checkpoint are not in it.
    let mut later = model.clone();
    write_round(&db, &cfs, &mut later, 99);
    let copy = open_copy(&cp, None, mmap).unwrap();
    assert_eq!(
        scan(&copy),
        model,
        "mmap {mmap}, log_size_for_flush {log_size_for_flush}"
    );
    // The copy is a DB of its own: writable, and reopens.
    let ccfs = families(&copy);
    let mut model2 = model.clone();
    write_round(&copy, &ccfs, &mut model2, 100);
    copy.flush().unwrap();
    drop(copy);
    let copy = open_copy(&cp, None, mmap).unwrap();
    assert_eq!(scan(&copy), model2);
    drop(copy);
    assert_eq!(scan(&db), later, "the DB is unchanged by its copy");
    db.close().unwrap();
    let db = Db::open(&src, options(None, mmap)).unwrap();
    assert_eq!(scan(&db), later);
}

#[test]
fn checkpoint_copies_every_family() {
    for mmap in [true, false] {
        for log_size_for_flush in [0, u64::MAX] {
            check_copy_of_live_db(mmap, log_size_for_flush);
        }
    }
}

#[test]
fn an_existing_target_is_refused_and_a_stale_temp_dir_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), options(None, true)).unwrap();
    db.put(b"a", b"1").unwrap();
    let cp = dir.path().join("cp");
    std::fs::create_dir(&cp).unwrap();
    let e = db.checkpoint(&cp).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    std::fs::remove_dir(&cp).unwrap();
    // A temporary directory left by a crash is cleared first.
    let tmp = dir.path().join("cp.tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(tmp.join("CURRENT"), b"MANIFEST-999999\n").unwrap();
    db.checkpoint(&cp).unwrap();
    assert!(!tmp.exists());
    let copy = open_copy(&cp, None, true).unwrap();
    assert_eq!(copy.get(b"a").unwrap().unwrap().as_ref(), b"1");
    // A second checkpoint to the same place is refused too.
    assert!(matches!(db.checkpoint(&cp), Err(Error::InvalidArgument(_))));
}

#[test]
fn concurrent_writers_flushes_and_compactions() {
    for mmap in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(None, mmap);
        for (_, c) in &mut o.column_families {
            c.write_buffer_size = 32 << 10;
        }
        let db = Db::open(dir.path().join("db"), o).unwrap();
        let acked = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (db, acked, stop) = (db.clone(), Arc::clone(&acked), Arc::clone(&stop));
            std::thread::spawn(move || {
                let cfs = families(&db);
                let mut i = 0u64;
                while !stop.load(Ordering::Acquire) {
                    // One batch in two families: the copy must hold it in
                    // both or in neither.
                    let mut b = WriteBatch::new();
                    let v = vec![b'v'; if i.is_multiple_of(4) { 400 } else { 40 }];
                    b.put_cf(&cfs[1], &key(i), &v);
                    b.put_cf(&cfs[2], &key(i), &v);
                    db.write(b, &WriteOptions::default()).unwrap();
                    i += 1;
                    acked.store(i, Ordering::Release);
                }
            })
        };
        let compactor = {
            let (db, stop) = (db.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let cfs = families(&db);
                while !stop.load(Ordering::Acquire) {
                    db.flush_cf(&cfs[2]).unwrap();
                    db.compact_range_cf(&cfs[2], None, None).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            })
        };
        for n in 0..4u64 {
            std::thread::sleep(std::time::Duration::from_millis(60));
            let before = acked.load(Ordering::Acquire);
            let cp = dir.path().join(format!("cp{n}"));
            let opts = CheckpointOptions {
                log_size_for_flush: if n % 2 == 0 { u64::MAX } else { 0 },
            };
            db.checkpoint_with(&cp, &opts).unwrap();
            let after = acked.load(Ordering::Acquire);
            let copy = open_copy(&cp, None, mmap).unwrap();
            let got = scan(&copy);
            let (a, b) = (&got["blobs"], &got["plain"]);
            assert_eq!(a.len(), b.len(), "each batch in both families or neither");
            let count = a.len() as u64;
            assert!(
                (before..=after).contains(&count),
                "copy {n} (mmap {mmap}) holds {count} batches; {before} were acknowledged \
                 before the call, {after} after"
            );
            for i in 0..count {
                assert!(
                    a.contains_key(&key(i)) && b.contains_key(&key(i)),
                    "hole at {i}"
                );
            }
        }
        stop.store(true, Ordering::Release);
        writer.join().unwrap();
        compactor.join().unwrap();
    }
}

/// A DB on `fs` at /db with the model's contents, flushed in part.
fn mem_db(fs: &MemFileSystem) -> (Db, Models) {
    fs.create_dir_all(Path::new("/db")).unwrap();
    let db = Db::open("/db", options(Some(Arc::new(fs.clone())), false)).unwrap();
    let cfs = families(&db);
    let mut model = Models::new();
    for round in 0..4 {
        write_round(&db, &cfs, &mut model, round);
        if round == 1 {
            for cf in &cfs {
                db.flush_cf(cf).unwrap();
            }
        }
    }
    (db, model)
}

/// In `img`, /cp is absent, or opens with exactly `model`.
fn absent_or_complete(img: &MemFileSystem, model: &Models, what: &str) -> bool {
    if !img.exists(Path::new("/cp")) {
        return false;
    }
    let copy = open_copy(Path::new("/cp"), Some(Arc::new(img.clone())), false)
        .unwrap_or_else(|e| panic!("{what}: /cp exists but does not open: {e}"));
    assert_eq!(&scan(&copy), model, "{what}");
    true
}

#[test]
fn power_loss_during_and_after_a_checkpoint() {
    for log_size_for_flush in [u64::MAX, 0] {
        let fs = MemFileSystem::new();
        let (db, model) = mem_db(&fs);
        let start = fs.op_count();
        fs.capture_at(start + 1..start + 2000);
        db.checkpoint_with("/cp", &CheckpointOptions { log_size_for_flush })
            .unwrap();
        let end = fs.op_count();
        fs.capture_at(std::iter::empty());
        let captures = fs.take_captures();
        assert!(captures.len() as u64 >= end - start - 1);
        let mut complete = 0;
        for (k, img) in &captures {
            if absent_or_complete(img, &model, &format!("image after call {k}")) {
                complete += 1;
            }
        }
        assert!(complete >= 1, "the final image holds the checkpoint");
        for (p, seed) in [(0.0, 1), (0.5, 2), (1.0, 3)] {
            let img = fs.crash(p, seed);
            assert!(
                absent_or_complete(&img, &model, &format!("power loss {p} after")),
                "the checkpoint was synced: it survives"
            );
        }
        drop(db);
    }
}

#[test]
fn crash_injected_mid_checkpoint() {
    let ops = [
        FaultOp::Link,
        FaultOp::Create,
        FaultOp::Append,
        FaultOp::Sync,
        FaultOp::Rename,
        FaultOp::SyncDir,
    ];
    let mem = MemFileSystem::new();
    let fault = FaultInjectionFs::new(Arc::new(mem.clone()));
    mem.create_dir_all(Path::new("/db")).unwrap();
    let db = Db::open("/db", options(Some(Arc::new(fault.clone())), false)).unwrap();
    let cfs = families(&db);
    let mut model = Models::new();
    for round in 0..3 {
        write_round(&db, &cfs, &mut model, round);
        db.flush_cf(&cfs[round as usize]).unwrap();
    }
    let opts = CheckpointOptions {
        log_size_for_flush: u64::MAX,
    };
    let mut failures = 0;
    for i in 0.. {
        fault.clear_rules();
        fault.add_rule(
            FaultRule::new(FaultKind::Eio, Trigger::OnIndex(i))
                .ops(&ops)
                .path("/cp"),
        );
        let r = db.checkpoint_with("/cp", &opts);
        if r.is_ok() {
            break;
        }
        failures += 1;
        assert!(
            !mem.exists(Path::new("/cp")),
            "fault {i}: no target after a failure"
        );
        for img in [mem.crash_process(), mem.crash(0.0, i), mem.crash(1.0, i)] {
            assert!(!absent_or_complete(&img, &model, &format!("fault {i}")));
        }
        assert!(i < 500, "the checkpoint never finished");
    }
    assert!(failures > 10, "every step was faulted: {failures}");
    fault.clear_rules();
    assert!(absent_or_complete(&mem, &model, "after the faults"));
    assert!(!mem.exists(Path::new("/cp.tmp")));
}

fn sst_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    v.sort();
    v
}

#[test]
fn file_deletions_disabled_keep_obsolete_files() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), common::quiet_options()).unwrap();
    for round in 0..4u64 {
        for i in 0..50 {
            db.put(&key(i), format!("{round}").as_bytes()).unwrap();
        }
        db.flush().unwrap();
    }
    let before = sst_names(dir.path());
    assert_eq!(before.len(), 4);
    db.disable_file_deletions().unwrap();
    db.disable_file_deletions().unwrap();
    db.compact_range(None, None).unwrap();
    let after = sst_names(dir.path());
    for f in &before {
        assert!(
            after.contains(f),
            "{f} was deleted while deletions were disabled"
        );
    }
    db.enable_file_deletions(false).unwrap();
    db.compact_range(None, None).unwrap();
    for f in &before {
        assert!(
            sst_names(dir.path()).contains(f),
            "counted: one enable is not enough"
        );
    }
    db.enable_file_deletions(false).unwrap();
    let now = sst_names(dir.path());
    assert!(before.iter().all(|f| !now.contains(f)), "{now:?}");
    // `force` ends every disable at once.
    for i in 0..50 {
        db.put(&key(i), b"x").unwrap();
    }
    db.flush().unwrap();
    let before = sst_names(dir.path());
    for _ in 0..3 {
        db.disable_file_deletions().unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert!(before.iter().all(|f| sst_names(dir.path()).contains(f)));
    db.enable_file_deletions(true).unwrap();
    let now = sst_names(dir.path());
    assert!(before.iter().all(|f| !now.contains(f)), "{now:?}");
    assert_eq!(db.get(&key(3)).unwrap().unwrap().as_ref(), b"x");
}

#[test]
fn live_files_name_what_a_copy_needs() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("db");
    let db = Db::open(&src, options(None, true)).unwrap();
    let cfs = families(&db);
    let mut model = Models::new();
    for round in 0..6 {
        write_round(&db, &cfs, &mut model, round);
        db.flush_cf(&cfs[(round % 3) as usize]).unwrap();
    }
    write_round(&db, &cfs, &mut model, 6);
    db.disable_file_deletions().unwrap();
    db.flush_wal(false).unwrap();
    let live = db.live_files().unwrap();
    let wals = db.live_wal_files().unwrap();
    assert!(live.files.iter().any(|f| f.kind == LiveFileKind::Blob));
    assert!(live.files.iter().any(|f| f.column_family == "plain"));
    for f in &live.files {
        let len = std::fs::metadata(src.join(&f.name)).unwrap().len();
        assert_eq!(len, f.size, "{f:?}");
        assert_eq!(f.level.is_none(), f.kind == LiveFileKind::Blob);
    }
    let manifest_len = std::fs::metadata(src.join(&live.manifest)).unwrap().len();
    assert!(live.manifest_size > 0 && live.manifest_size <= manifest_len);
    assert!(wals.last().unwrap().current);
    // What an external tool does with them: a copy that opens.
    let out: PathBuf = dir.path().join("copy");
    std::fs::create_dir(&out).unwrap();
    for f in &live.files {
        std::fs::copy(src.join(&f.name), out.join(&f.name)).unwrap();
    }
    let bytes = std::fs::read(src.join(&live.manifest)).unwrap();
    std::fs::write(
        out.join(&live.manifest),
        &bytes[..live.manifest_size as usize],
    )
    .unwrap();
    std::fs::write(out.join("CURRENT"), format!("{}\n", live.manifest)).unwrap();
    for w in &wals {
        let bytes = std::fs::read(src.join(&w.name)).unwrap();
        std::fs::write(out.join(&w.name), &bytes[..w.size as usize]).unwrap();
    }
    db.enable_file_deletions(false).unwrap();
    let copy = open_copy(&out, None, true).unwrap();
    assert_eq!(scan(&copy), model);
}

/// With `manual_wal_flush` the WAL's bytes wait in the process buffer:
/// the checkpoint hands them to the OS before copying the WAL.
#[test]
fn writes_held_by_manual_wal_flush_are_in_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options(None, false);
    o.manual_wal_flush = true;
    let db = Db::open(dir.path().join("db"), o).unwrap();
    let cfs = families(&db);
    let mut model = Models::new();
    write_round(&db, &cfs, &mut model, 0);
    let cp = dir.path().join("cp");
    let report = db
        .checkpoint_with(
            &cp,
            &CheckpointOptions {
                log_size_for_flush: u64::MAX,
            },
        )
        .unwrap();
    assert!(!report.flushed);
    let copy = open_copy(&cp, None, false).unwrap();
    assert_eq!(scan(&copy), model);
}

/// Timing (not run by default): a ~200 MB DB (200,000 incompressible
/// 1 KiB values, compacted, plus unflushed writes), checkpointed carrying
/// the WALs, then with a flush first, on the same file system (hard
/// links) and, where /dev/shm is another file system, across (copies).
/// `cargo test --release -p shale --test checkpoint -- --ignored --nocapture`
#[test]
#[ignore = "timing: builds a 200 MB DB"]
fn checkpoint_timing_200mb() {
    use rand::{RngCore, SeedableRng};
    let dir =
        tempfile::tempdir_in(std::env::var("SHALE_TIMING_DIR").unwrap_or("/tmp".into())).unwrap();
    let src = dir.path().join("db");
    let o = Options {
        create_if_missing: true,
        cf: CfOptions {
            compression_per_level: vec![shale::Compression::None],
            ..CfOptions::default()
        },
        ..Options::default()
    };
    let db = Db::open(&src, o).unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let mut v = vec![0u8; 1024];
    let t = std::time::Instant::now();
    for i in 0..200_000u64 {
        rng.fill_bytes(&mut v);
        db.put(&key(i * 7919 % 200_000), &v).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    for i in 0..20_000u64 {
        rng.fill_bytes(&mut v);
        db.put(&key(i), &v).unwrap();
    }
    let size: u64 = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!("filled {} MB in {:?}", size >> 20, t.elapsed());
    let run = |cp: PathBuf, log_size_for_flush: u64| {
        let t = std::time::Instant::now();
        let r = db
            .checkpoint_with(&cp, &CheckpointOptions { log_size_for_flush })
            .unwrap();
        println!(
            "checkpoint to {} (log_size_for_flush {log_size_for_flush}): {:?}; {r:?}",
            cp.display(),
            t.elapsed()
        );
    };
    run(dir.path().join("cp-wal"), u64::MAX);
    run(dir.path().join("cp-flush"), 0);
    if let Ok(other) = tempfile::tempdir_in("/dev/shm") {
        run(other.path().join("cp-across"), u64::MAX);
    }
}
