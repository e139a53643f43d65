//! `shale-stress`: random concurrent operations on a DB, checked against an
//! expected state that survives `kill -9` (RocksDB's db_stress, blackbox
//! mode; driven by `bench/crash_test.sh`).
//!
//! A run: draw options from the seed and print them; open (creating the DB
//! and a fresh expected state if the DB directory does not exist) with its
//! `--column_families` families (`default`, `cf1`, ...; missing ones are
//! made with `create_cf`/`create_cfs` after the open, each with its own
//! drawn write buffer); verify the whole DB; then, unless `--verify_only`, run `--threads` workers in
//! `--reopen + 1` phases (close, reopen and verify between phases) until
//! `--ops_per_thread` or `--duration`; verify again; exit.
//!
//! With `--history=DIR` the run records a history instead and
//! `--verify_only` checks it (see [`history_mode`]).
//!
//! Merges and single deletes: every family has the stress merge operator
//! (`merge_op.rs`); `--merge_percent` of the puts become read-modify-write
//! merges the expected state predicts, `--use_merge` turns the other puts
//! into merges of the whole value, and `--nooverwritepercent` of the keys
//! are put only while absent and removed with `single_delete`. Range
//! deletions: `--delrangepercent` of the operations delete
//! `--range_deletion_width` consecutive keys of one family (cut around
//! no-overwrite keys, which are never range-deleted). Expiring puts:
//! `--ttl_percent` of the puts expire, already at write time, 1-4 s later
//! or in 30 days; the expected state keeps each value's expiry second and
//! reads judge it by the clock (`expect.rs`). Compaction filter:
//! `--compaction_filter` opens the DB with the stress filter
//! (`compaction_filter.rs`), fixed when the DB is created: every run and
//! every verification reopens it with the same filter. Unless given, each
//! percent and the filter are drawn from the seed.
//!
//! Key-value separation: every family's blob options are drawn per run
//! (`db_options::random_blob`), or forced on or off with
//! `--enable_blob_files`; values run from 12 bytes to 4 KiB (`value.rs`),
//! so blob files, inline values and garbage collection all meet the kill
//! loop and verification.
//!
//! Output: `options: ...` (the DB options, then the merge, single-delete,
//! range-deletion, TTL and filter settings; `blob=` the default family's
//! blob options; with several families an `options: family blob ...` line
//! has the others'), `verify: ...`, one
//! `progress: ops=N` line per second (the last
//! one survives a kill), and `done: ...` (operations by kind, then the
//! entries written by kind).
//! Exit status: 0 ok, 1 verification failure, 2 usage or setup error.

mod compaction_filter;
mod db_options;
mod events;
mod expect;
mod expected;
mod flags;
mod history_mode;
mod key_locks;
mod merge_op;
mod ops;
mod value;
mod verify;
mod worker;

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::SeedableRng;
use shale::{Cf, Db, Options, WriteOptions};

use compaction_filter::StressFilter;
use expected::{ExpectedState, Shape};
use flags::{Flags, HELP, USAGE};
use key_locks::KeyLocks;
use worker::{Shared, OP_NAMES, WRITE_NAMES};

/// Entry point of the binary; returns the exit status.
pub fn main(args: Vec<String>) -> i32 {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}\n{HELP}");
        return 0;
    }
    let flags = match Flags::parse(&args) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return 2;
        }
    };
    let result = match &flags.history {
        Some(dir) => history_mode::run(&flags, dir),
        None => run(&flags),
    };
    match result {
        Ok(0) => 0,
        Ok(failures) => {
            println!(
                "FAILED: {failures} verification failures (seed {})",
                flags.seed
            );
            1
        }
        Err(e) => {
            eprintln!("error: {e} (seed {})", flags.seed);
            2
        }
    }
}

/// Opens the expected state, creating it with the DB when the DB is new.
fn open_expected(flags: &Flags) -> Result<ExpectedState, String> {
    let err = |e: std::io::Error| format!("expected state {}: {e}", flags.expected.display());
    if flags.db.exists() {
        let e = ExpectedState::open(&flags.expected).map_err(err)?;
        if e.max_key() != flags.max_key
            || e.num_cfs() != flags.column_families
            || (flags.nooverwritepercent_given
                && e.no_overwrite_percent() != flags.nooverwritepercent)
            || (flags.compaction_filter_given && e.compaction_filter() != flags.compaction_filter)
        {
            println!(
                "note: using max_key={} column_families={} nooverwritepercent={} \
                 compaction_filter={} from the expected state",
                e.max_key(),
                e.num_cfs(),
                e.no_overwrite_percent(),
                u8::from(e.compaction_filter())
            );
        }
        Ok(e)
    } else {
        if flags.verify_only {
            return Err(format!("--verify_only: no DB at {}", flags.db.display()));
        }
        ExpectedState::create(
            &flags.expected,
            Shape {
                max_key: flags.max_key,
                num_cfs: flags.column_families,
                num_levels: db_options::random_num_levels(flags.seed),
                no_overwrite_percent: flags.nooverwritepercent,
                compaction_filter: flags.compaction_filter,
                fifo: flags.compaction_style == 2,
            },
        )
        .map_err(err)
    }
}

/// Opens the DB with families `default`, `cf1`, ... `cf<num_cfs-1>` (the
/// existing ones with this run's options; missing ones created, the first
/// with `create_cf` and the rest with one `create_cfs`). Returns the DB and
/// the handles by family number.
/// Opens the DB with every family (creating the missing ones), or with
/// `read_only` by `Db::open_read_only` (creating nothing).
fn open_db(
    flags: &Flags,
    opts: &Options,
    num_cfs: u32,
    read_only: bool,
) -> Result<(Db, Vec<Cf>), String> {
    open_db_at(&flags.db, flags, opts, num_cfs, read_only)
}

/// `open_db` of the DB at `dir` (the stress DB or a checkpoint of it).
fn open_db_at(
    dir: &std::path::Path,
    flags: &Flags,
    opts: &Options,
    num_cfs: u32,
    read_only: bool,
) -> Result<(Db, Vec<Cf>), String> {
    let wanted: Vec<String> = (1..num_cfs).map(db_options::cf_name).collect();
    let cf_opts = |name: &str| {
        let i = (1..num_cfs)
            .find(|&i| db_options::cf_name(i) == name)
            .unwrap_or(1);
        db_options::random_cf_options(flags.seed, opts, i, flags.enable_blob_files)
    };
    // A DB killed before its first MANIFEST has no families to list.
    let existing = Db::list_cfs(dir, opts).unwrap_or_default();
    if let Some(odd) = existing
        .iter()
        .find(|n| *n != "default" && !wanted.contains(n))
    {
        return Err(format!(
            "{}: unexpected column family {odd:?}",
            dir.display()
        ));
    }
    let opts = Options {
        column_families: existing
            .iter()
            .filter(|n| *n != "default")
            .map(|n| (n.clone(), cf_opts(n)))
            .collect(),
        ..opts.clone()
    };
    if read_only {
        // Every family exists (the DB was open read-write before).
        let db = Db::open_read_only(dir, opts)
            .map_err(|e| format!("open_read_only {}: {e}", dir.display()))?;
        let mut cfs = vec![db.default_cf()];
        for n in &wanted {
            cfs.push(
                db.cf(n)
                    .ok_or_else(|| format!("column family {n} missing in the read-only open"))?,
            );
        }
        return Ok((db, cfs));
    }
    let db = Db::open(dir, opts).map_err(|e| format!("open {}: {e}", dir.display()))?;
    let missing: Vec<&String> = wanted.iter().filter(|n| db.cf(n).is_none()).collect();
    if let Some((first, rest)) = missing.split_first() {
        db.create_cf(first, cf_opts(first))
            .map_err(|e| format!("create_cf {first}: {e}"))?;
        if !rest.is_empty() {
            let req: Vec<(&str, shale::CfOptions)> =
                rest.iter().map(|n| (n.as_str(), cf_opts(n))).collect();
            db.create_cfs(&req)
                .map_err(|e| format!("create_cfs {rest:?}: {e}"))?;
        }
        println!("created column families {missing:?}");
    }
    let mut cfs = vec![db.default_cf()];
    for n in &wanted {
        cfs.push(
            db.cf(n)
                .ok_or_else(|| format!("column family {n} missing after create"))?,
        );
    }
    Ok((db, cfs))
}

fn verify_db(db: &Db, cfs: &[Cf], expected: &ExpectedState, when: &str) -> Result<u64, String> {
    let start = Instant::now();
    let v = verify::verify(db, cfs, expected).map_err(|e| format!("expected state: {e}"))?;
    for m in &v.messages {
        eprintln!("VERIFICATION FAILURE ({when}): {m}");
    }
    println!(
        "verify ({when}): column_families={} keys={} live={} pending_resolved_new={} pending_resolved_old={} \
         pending_expiring={} batches_cut={} batches_cut_applied={} batches_cut_cross_family={} expiring={} expired={} \
         filtered={} filter_removed={} failures={} in {:.2?}",
        cfs.len(),
        v.keys,
        v.live,
        v.pending_new,
        v.pending_old,
        v.pending_expiring,
        v.batches_cut,
        v.batches_applied,
        v.batches_cross_family,
        v.expiring,
        v.expired,
        v.filtered,
        v.filter_removed,
        v.failures,
        start.elapsed()
    );
    Ok(v.failures)
}

fn run(flags: &Flags) -> Result<u64, String> {
    let expected = open_expected(flags)?;
    let mut opts =
        db_options::random_options(flags.seed, expected.num_levels(), flags.enable_blob_files);
    db_options::keep_direct_io_if_supported(&mut opts, &flags.db);
    // Write shaping (issue 16), drawn from the seed like the rest: WAL
    // recycling (the default PointInTime recovery allows it) under the
    // kill -9 loop, and range-sync cadences.
    let shape = flags.seed.rotate_left(16);
    opts.recycle_log_file_num = [0, 1, 4][(shape % 3) as usize];
    opts.bytes_per_sync = [0, 64 << 10, 1 << 20][(shape / 3 % 3) as usize];
    opts.wal_bytes_per_sync = [0, 64 << 10][(shape / 9 % 2) as usize];
    let events = std::sync::Arc::new(events::EventCounter::default());
    opts.listeners
        .push(std::sync::Arc::clone(&events) as std::sync::Arc<dyn shale::EventListener>);
    if expected.compaction_filter() {
        // Also the families' (`random_cf_options` starts from these).
        opts.compaction_filter = Some(std::sync::Arc::new(StressFilter {
            no_overwrite_percent: expected.no_overwrite_percent(),
        }));
    }
    if expected.fifo() {
        if flags.enable_blob_files == Some(true) {
            println!("note: --enable_blob_files ignored: the DB uses FIFO compaction");
        }
        db_options::use_fifo(&mut opts);
    }
    let num_cfs = expected.num_cfs();
    // Before the main line: tests read the last `options:` line.
    if num_cfs > 1 {
        let each: Vec<String> = (1..num_cfs)
            .map(|i| {
                let o =
                    db_options::random_cf_options(flags.seed, &opts, i, flags.enable_blob_files);
                format!(
                    "{}={}",
                    db_options::cf_name(i),
                    db_options::describe_blob(&o.blob)
                )
            })
            .collect();
        println!("options: family blob {}", each.join(" "));
    }
    println!("seed: {}", flags.seed);
    println!(
        "options: {} use_merge={} merge_percent={} nooverwritepercent={} delrangepercent={} \
         range_deletion_width={} ttl_percent={} compaction_filter={} recycle_log_file_num={} \
         bytes_per_sync={} wal_bytes_per_sync={}",
        db_options::describe(&opts),
        flags.use_merge,
        flags.merge_percent,
        expected.no_overwrite_percent(),
        flags.delrangepercent,
        flags.range_deletion_width,
        flags.ttl_percent,
        u8::from(expected.compaction_filter()),
        opts.recycle_log_file_num,
        opts.bytes_per_sync,
        opts.wal_bytes_per_sync
    );
    let open = || open_db(flags, &opts, num_cfs, false);
    let (mut db, mut cfs) = open()?;
    let mut failures = verify_db(&db, &cfs, &expected, "start")?;
    if flags.verify_only || failures > 0 {
        db.close().map_err(|e| format!("close: {e}"))?;
        return Ok(failures);
    }
    let locks = KeyLocks::new(expected.len());
    let deadline = flags.duration.map(|d| Instant::now() + d);
    let phases = u64::from(flags.reopen) + 1;
    let mut total_ops = 0u64;
    let mut counts = [0u64; OP_NAMES.len()];
    let mut written = [0u64; WRITE_NAMES.len()];
    let start = Instant::now();
    for phase in 0..phases {
        let open_copy = |dir: &std::path::Path| open_db_at(dir, flags, &opts, num_cfs, true);
        let shared = Shared {
            open_copy: &open_copy,
            db: &db,
            cfs: &cfs,
            expected: &expected,
            locks: &locks,
            write_options: WriteOptions {
                sync: flags.sync,
                ..WriteOptions::default()
            },
            use_merge: flags.use_merge,
            merge_percent: flags.merge_percent,
            delrange_percent: flags.delrangepercent,
            range_deletion_width: flags.range_deletion_width,
            ttl_percent: flags.ttl_percent,
            counts: Default::default(),
            written: Default::default(),
            failures: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        };
        let per_thread = flags.ops_per_thread / phases;
        run_phase(
            &shared,
            flags,
            phase,
            per_thread,
            deadline,
            (total_ops, &written),
        );
        for (c, s) in counts.iter_mut().zip(&shared.counts) {
            *c += s.load(Ordering::Relaxed);
        }
        for (c, s) in written.iter_mut().zip(&shared.written) {
            *c += s.load(Ordering::Relaxed);
        }
        total_ops += shared.total_ops();
        failures += shared.failures.load(Ordering::Relaxed);
        if failures > 0 {
            break;
        }
        let last = phase + 1 == phases || deadline.is_some_and(|d| Instant::now() >= d);
        if !last {
            // A checkpoint of the quiet DB (every family, flushed first or
            // carrying the WALs, by phase) holds the expected state.
            let cp = flags.db.with_extension("checkpoint");
            let _ = std::fs::remove_dir_all(&cp);
            let log_size_for_flush = [0, 1 << 20, u64::MAX][(phase % 3) as usize];
            db.checkpoint_with(&cp, &shale::CheckpointOptions { log_size_for_flush })
                .map_err(|e| format!("checkpoint: {e}"))?;
            {
                let (c, c_cfs) = open_db_at(&cp, flags, &opts, num_cfs, true)?;
                failures += verify_db(&c, &c_cfs, &expected, "checkpoint")?;
            }
            std::fs::remove_dir_all(&cp).map_err(|e| format!("remove {}: {e}", cp.display()))?;
            drop(cfs);
            db.close().map_err(|e| format!("close: {e}"))?;
            // A read-only open of the closed DB (the WAL replayed into
            // memory, nothing written) holds the expected state too.
            let (ro, ro_cfs) = open_db(flags, &opts, num_cfs, true)?;
            failures += verify_db(&ro, &ro_cfs, &expected, "read-only")?;
            drop(ro_cfs);
            ro.close().map_err(|e| format!("close read-only: {e}"))?;
            (db, cfs) = open()?;
            println!("reopened ({} of {})", phase + 1, flags.reopen);
            failures += verify_db(&db, &cfs, &expected, "reopen")?;
        }
        if last || failures > 0 {
            break;
        }
    }
    if failures == 0 {
        failures += verify_db(&db, &cfs, &expected, "end")?;
    }
    db.close().map_err(|e| format!("close: {e}"))?;
    println!("{}", events.summary());
    for v in events.violations() {
        eprintln!("EVENT ORDER FAILURE: {v}");
        failures += 1;
    }
    expected
        .sync()
        .map_err(|e| format!("expected state: {e}"))?;
    let by_op: Vec<String> = OP_NAMES
        .iter()
        .zip(counts)
        .map(|(n, c)| format!("{n}={c}"))
        .collect();
    let by_entry: Vec<String> = WRITE_NAMES
        .iter()
        .zip(written)
        .map(|(n, c)| format!("{n}={c}"))
        .collect();
    println!(
        "done: ops={total_ops} ({}) in {:.1?}, failures={failures}; written: {}",
        by_op.join(" "),
        start.elapsed(),
        by_entry.join(" ")
    );
    Ok(failures)
}

/// Runs one phase: the workers plus, every second, a progress line and a
/// line of the entries written by kind (both counted from the start of the
/// run: `before` holds the earlier phases' counts).
fn run_phase(
    sh: &Shared<'_>,
    flags: &Flags,
    phase: u64,
    per_thread: u64,
    deadline: Option<Instant>,
    before: (u64, &[u64; WRITE_NAMES.len()]),
) {
    let workers_left = AtomicU64::new(flags.threads as u64);
    std::thread::scope(|s| {
        for t in 0..flags.threads {
            let workers_left = &workers_left;
            s.spawn(move || {
                // Counts the worker out even if it panics.
                struct Done<'a>(&'a AtomicU64);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                let _done = Done(workers_left);
                let seed =
                    flags.seed ^ (phase << 48) ^ (t as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                let mut rng = SmallRng::seed_from_u64(seed);
                worker::run(sh, &mut rng, per_thread);
            });
        }
        let mut last_print = Instant::now();
        while workers_left.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(20));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                sh.stop.store(true, Ordering::Relaxed);
            }
            if last_print.elapsed() >= Duration::from_secs(1) {
                last_print = Instant::now();
                println!("progress: ops={}", before.0 + sh.total_ops());
                let by_entry: Vec<String> = WRITE_NAMES
                    .iter()
                    .zip(before.1.iter().zip(&sh.written))
                    .map(|(n, (b, c))| format!("{n}={}", b + c.load(Ordering::Relaxed)))
                    .collect();
                println!("written: {}", by_entry.join(" "));
                let _ = std::io::stdout().flush();
            }
        }
    });
}
