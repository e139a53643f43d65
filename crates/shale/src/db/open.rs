//! Open and recovery: LOCK → CURRENT → MANIFEST → column families → WAL
//! replay → new WAL.
//!
//! Families: every family the MANIFEST lists opens, with the options given
//! in `Options::column_families`, else the options persisted for it (an
//! unreadable persisted text opens it with defaults, reported in `LOG` and
//! in `shale.cf-options-report`; a family is never dropped for it). A family
//! given but absent is created when `create_missing_column_families`, else
//! open fails with `InvalidArgument`.
//!
//! Recovery replays the WALs numbered at or above the smallest family log
//! number (and at or above the DB-wide `min_log_number_to_keep`) in order, under the configured `WalRecoveryMode`; a record goes
//! to a family only if the WAL is at or above that family's log number (a
//! family that flushed it already skips it), and records of dropped
//! families are skipped. Whatever a mode drops is written to `LOG` and kept
//! for the `shale.wal-recovery` property. Recovered data is flushed to L0
//! before the DB opens, and one atomic group of MANIFEST edits records
//! those tables, the families created at open and the options changed,
//! *and* moves every family with recovered data (and the default family)
//! to the new WAL, and the DB-wide `min_log_number_to_keep` with them (so
//! no family reads an old WAL again, whose torn last record would stop a
//! later recovery in front of the new WAL): a crash before the group
//! replays the same logs again (the tables written so far are orphans,
//! deleted at the next open); a crash after it replays none of them. The
//! recovery flush separates values into blob files as a flush does
//! (`enable_blob_files` with `blob_file_starting_level` 0, RocksDB's
//! `WriteLevel0TableForRecovery`); its blob files join the same group.
//! Recovery is idempotent
//! at every crash point (regression test `crash_during_recovery` counts
//! tables as well as keys).

use super::recover::*;
use crate::base::snapshots::SnapshotList;
use crate::blob::source::BlobSource;
use crate::cf::{CfRegistry, CfState, ColumnFamily};
use crate::error::{Error, Result};
use crate::events::info_log::InfoLog;
use crate::events::Notifier;
use crate::fs::FileSystem;
use crate::io::accounting::{self, AccountingFs, IoCounters, Purpose};
use crate::memory::{Ledger, Part};
use crate::memtable::MemTable;
use crate::options::{in_family, CfOptions, Options};
use crate::shared::wal_files::WalFiles;
use crate::shared::{DbInner, DbState};
use crate::stats::DbStats;
use crate::table_cache::{effective_max_open_files, TableCache};
use crate::version::filename::log_file_name;
use crate::version::{VersionEdit, VersionSet};
use crate::wal::LogWriter;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

/// `DbInner::max_read_request` when the file system cannot tell the
/// device's request size.
const DEFAULT_MAX_READ_REQUEST: usize = 512 << 10;

/// Source of `DbInner::instance`.
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

/// Opens the DB in `dir`; `read_only` marks the result (the caller has put
/// an `OverlayFs` under `opts.fs`, so recovery changes nothing on disk).
pub(crate) fn open(dir: &Path, opts: Options, read_only: bool) -> Result<DbInner> {
    opts.validate()?;
    let block_cache = crate::table_cache::block_cache::make_block_cache(&opts)?;
    // Every file operation of the DB is counted by purpose; opening
    // (recovery included) is `Other`.
    let io = Arc::new(IoCounters::default());
    let fs: Arc<dyn FileSystem> =
        Arc::new(AccountingFs::new(Arc::clone(&opts.fs), Arc::clone(&io)));
    let _io_purpose = accounting::scope(Purpose::Other);
    let current = dir.join("CURRENT");
    if !fs.exists(dir) {
        if !opts.create_if_missing {
            return Err(Error::InvalidArgument(format!(
                "{}: does not exist (create_if_missing is false)",
                dir.display()
            )));
        }
        fs.create_dir_all(dir)?;
    }
    let lock = crate::fs::lock_db(&fs, dir)?;
    probe_direct_io(&fs, dir, &opts)?;
    let exists = fs.exists(&current);
    if exists && opts.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "{}: exists (error_if_exists is true)",
            dir.display()
        )));
    }
    if !exists && !opts.create_if_missing {
        return Err(Error::InvalidArgument(format!(
            "{}: no DB here (create_if_missing is false)",
            dir.display()
        )));
    }
    let log = Arc::new(InfoLog::open(&fs, dir, opts.info_log_options()));
    log.info(&format!("Opening {} with {:?}", dir.display(), opts));
    let mut versions = if exists {
        VersionSet::recover(Arc::clone(&fs), dir, opts.num_levels)?
    } else {
        VersionSet::create_new(Arc::clone(&fs), dir, opts.num_levels, &new_db_id())?
    };
    let (mut families, cf_options_report) = resolve_families(&opts, &versions, &log)?;
    let hook = block_cache
        .clone()
        .map(|c| c as Arc<dyn crate::sst::BlockCacheHook>);
    let max_open_files = effective_max_open_files(opts.max_open_files);
    if max_open_files != opts.max_open_files {
        log.info(&format!(
            "max_open_files {} lowered to {max_open_files} (the process's open-file limit)",
            opts.max_open_files
        ));
    }
    let memtables_max: usize = families
        .iter()
        .map(|f| f.opts.memtables_max())
        .fold(0, usize::saturating_add);
    let max_read_request = match fs.max_request_bytes(dir) {
        Some(n) => n,
        None => DEFAULT_MAX_READ_REQUEST,
    };
    log.info(&format!(
        "compaction reads at most {max_read_request} bytes per request (the device's max_sectors_kb, or 512 KiB when unknown)"
    ));
    match &opts.rate_limiter {
        Some(l) => log.info(&format!(
            "rate_limiter: flush and compaction writes limited to {} bytes/s (max {}, refill period {} us, single burst {} bytes, auto_tuned {})",
            l.get_bytes_per_second(),
            l.get_max_bytes_per_second(),
            l.refill_period_us(),
            l.get_single_burst_bytes(),
            l.is_auto_tuned()
        )),
        None => log.info("rate_limiter: none (flush and compaction writes unlimited)"),
    }
    let memory = Ledger::with_memtable_reserve(
        opts.memory_budget,
        crate::shared::memtables::memtable_reserve(&opts, memtables_max),
    );
    if opts.memory_budget > 0 && crate::memory::pages::fix_mmap_threshold() {
        log.info("memory_budget: glibc M_MMAP_THRESHOLD fixed at 131072 for this process (large buffers are mapped and freed to the kernel)");
    }
    if let Some(c) = &block_cache {
        let c = Arc::clone(c);
        memory.attach_cache(opts.cache_size, move |n| c.cache.set_capacity(n));
    }
    let wal_archive = crate::shared::wal_archive::WalArchive::open(fs.as_ref(), dir, &opts)?;
    let table_cache = Arc::new(
        TableCache::new(
            dir.to_path_buf(),
            Arc::clone(&fs),
            hook,
            opts.cache_index_and_filter_blocks,
            max_open_files,
        )
        .charging(Arc::clone(&memory))
        .advising_random(opts.advise_random_on_open)
        .direct_io(
            opts.use_direct_reads,
            opts.use_direct_io_for_flush_and_compaction,
        ),
    );
    let mut blobs = BlobSource::new(
        Arc::clone(&fs),
        dir.to_path_buf(),
        opts.use_direct_reads,
        block_cache
            .clone()
            .map(|c| c as Arc<dyn crate::blob::source::BlobCacheHook>),
    );
    // Bounded `max_open_files`: blob readers share the table cache's bound.
    if let Some(readers) = table_cache.blob_readers() {
        blobs = blobs.sharing_readers(readers);
    }
    let blobs = Arc::new(blobs);
    if opts.paranoid_checks {
        // Every live table must open (footer, index, filter checksums),
        // and every blob file (header and footer; a missing one fails
        // open here rather than the reads that need it).
        for (_, fam) in versions.families() {
            let v = fam.current();
            for level in 0..v.num_levels() {
                for f in v.files(level) {
                    table_cache.get(f)?;
                }
            }
            for &n in v.blob_files().keys() {
                blobs.reader(n)?;
            }
        }
    }

    let shutting_down = AtomicBool::new(false);
    let to = RecoveryTables {
        fs: &fs,
        dir,
        file_opts: opts.flush_file_options(),
        now: opts.clock.now_secs(),
        blobs: &blobs,
    };
    // A read-only open keeps the last replayed memtables as the families'
    // memtables instead of writing them as tables (into its overlay): the
    // same reads, without building tables (a secondary's catch-up is one).
    let (report, max_seq, mut edits, mut kept) = replay_wals(
        to,
        &opts,
        &mut versions,
        &families,
        &log,
        &shutting_down,
        read_only,
    )?;
    let stats = DbStats::new(opts.num_levels);

    let wal_number = versions.new_file_number();
    let wal_file = crate::shared::wal_files::create_wal_file(
        &fs,
        &opts,
        opts.wal_bytes_per_sync,
        &dir.join(log_file_name(wal_number)),
    )?;
    fs.sync_dir(dir)?;
    let wal = LogWriter::new(wal_file, wal_number);
    // One atomic group: the recovered tables, the families' new log
    // numbers, options to persist, and families created at open.
    for e in edits.values_mut() {
        e.log_number = Some(wal_number);
    }
    let default = edits.entry(0).or_default();
    default.log_number = Some(wal_number);
    default.prev_log_number = Some(0);
    default.last_sequence = Some(max_seq.max(versions.last_sequence()));
    // Every replayed write is in the group's tables: no family needs the
    // old WALs. The families without recovered data keep their log numbers
    // (one edit less each), so the DB-wide floor moves past the old WALs
    // instead: the last of them may end in a torn record, harmless while it
    // was the last log but a hole once the new WAL follows it.
    if families.len() > 1 {
        default.min_log_number_to_keep = Some(wal_number);
    }
    for f in &families {
        if f.persist_options && f.id != 0 {
            edits.entry(f.id).or_default().cf_options = Some(f.opts.to_text());
        }
    }
    let mut group: Vec<VersionEdit> = edits
        .into_iter()
        .map(|(id, mut e)| {
            e.column_family = id;
            e
        })
        .collect();
    for f in families.iter_mut().filter(|f| f.create) {
        f.id = versions.new_column_family_id();
        group.push(VersionEdit {
            column_family: f.id,
            cf_add: Some(f.name.clone()),
            cf_options: Some(f.opts.to_text()),
            log_number: Some(wal_number),
            ..VersionEdit::default()
        });
    }
    versions.log_and_apply_group(&mut group)?;
    let number = versions.new_file_number();
    let others: Vec<(String, CfOptions)> = families
        .iter()
        .filter(|f| f.id != 0)
        .map(|f| (f.name.clone(), f.opts.clone()))
        .collect();
    let text = crate::options::file::render(&opts, &others);
    crate::options::file::write(&fs, dir, number, &text, &log)?;

    let instance = NEXT_INSTANCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let registry = CfRegistry::default();
    let mut cfs = BTreeMap::new();
    let mut sum_write_buffers = 0u64;
    let mut default_cf = None;
    for f in families {
        let mem = Arc::new(match kept.remove(&f.id) {
            Some(recovered) => recovered,
            None => MemTable::charged(
                wal_number,
                f.opts.memtable_bloom_bytes(opts.write_buffer_budget()),
                Some(memory.meter(Part::Memtables)),
                f.opts.write_buffer_size,
            )
            .with_prefix(f.opts.prefix_extractor, f.opts.memtable_whole_key_filtering),
        });
        sum_write_buffers += f.opts.write_buffer_size as u64;
        let cf = Arc::new(ColumnFamily::new(
            f.id,
            f.name,
            f.opts,
            instance,
            Arc::clone(&mem),
            versions.current(f.id),
        ));
        if f.id == 0 {
            default_cf = Some(Arc::clone(&cf));
        }
        registry.insert(Arc::clone(&cf));
        cfs.insert(f.id, CfState::new(cf, mem, opts.num_levels));
    }
    let default_cf = default_cf.ok_or_else(|| {
        Error::corruption(dir.display().to_string(), 0, "no default column family")
    })?;
    let last = versions.last_sequence();
    let state = DbState {
        versions,
        cfs,
        flush_queue: VecDeque::new(),
        compaction_queue: Default::default(),
        pending_switch: Vec::new(),
        stalled: BTreeMap::new(),
        closed_wals: VecDeque::new(),
        recycle_wals: VecDeque::new(),
        sum_write_buffers,
        wal_flush_requested: 0,
        flushes_running: 0,
        compactions_running: 0,
        manual_compactions: 0,
        pending_outputs: HashSet::new(),
        errors: Default::default(),
        bg_wakeups: 0,
        file_deletions_disabled: 0,
    };
    let ids: Vec<u32> = state.cfs.keys().copied().collect();
    let inner = DbInner {
        dir: dir.to_path_buf(),
        fs,
        io,
        lock: Mutex::new(Some(lock)),
        visible_seq: AtomicU64::new(last),
        instance,
        default_cf,
        cfs: registry,
        full_cfs: Mutex::new(Vec::new()),
        memory,
        max_read_request,
        state: Mutex::new(state),
        bg_cv: Condvar::new(),
        wals: WalFiles::new(wal, wal_number, last, opts.recycle_log_file_num > 0),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        block_cache,
        blobs,
        stats,
        events: {
            let log = Arc::clone(&log);
            Notifier::start(opts.listeners.clone(), Box::new(move |m| log.error(m)))
        },
        log,
        shutting_down,
        io_cancel: Arc::new(AtomicBool::new(false)),
        stop_writes: AtomicBool::new(false),
        read_only,
        manifest_cv: Condvar::new(),
        wal_recovery_report: report,
        cf_options_report,
        purge_lock: Mutex::new(()),
        wal_archive,
        options_lock: Mutex::new(()),
        mutable: crate::options::mutable_db::MutableDbOptions::new(&opts),
        purge_requested: AtomicBool::new(false),
        room_clear: AtomicBool::new(false),
        unpersisted: AtomicBool::new(false),
        opts,
    };
    {
        let mut st = inner.state.lock();
        for id in ids {
            // Stall conditions and the compaction queue of the recovered
            // shapes.
            inner.install_super_version(&mut st, id);
        }
    }
    Ok(inner)
}

/// Decides every family's options (see the module comment).
/// A FIFO family keeps every table in L0 (`compaction::fifo`): opening one
/// whose tables reach deeper levels (it was leveled before) is refused.
/// RocksDB (since 7.0) migrates such a DB by dropping the deeper levels'
/// tables first; this build does not, and says so instead of dropping data
/// the user may not expect to lose (compact it to one level while leveled,
/// or ingest it into a new family).
fn fifo_needs_l0_only(name: &str, o: &CfOptions, v: &crate::version::Version) -> Result<()> {
    if o.compaction_style != crate::options::CompactionStyle::Fifo {
        return Ok(());
    }
    match (1..v.num_levels()).find(|&l| v.num_files(l) > 0) {
        None => Ok(()),
        Some(l) => Err(in_family(
            name,
            Error::InvalidArgument(format!(
                "compaction_style kCompactionStyleFIFO needs every table in L0, \
                 but L{l} holds {} table(s) (the family was not FIFO before); \
                 migrating a multi-level family to FIFO is not supported",
                v.num_files(l)
            )),
        )),
    }
}

fn resolve_families(
    opts: &Options,
    versions: &VersionSet,
    log: &InfoLog,
) -> Result<(Vec<OpenFamily>, String)> {
    let mut report = String::new();
    let given: HashMap<&str, &CfOptions> = opts
        .column_families
        .iter()
        .map(|(n, o)| (n.as_str(), o))
        .collect();
    let mut out = Vec::new();
    for (id, fam) in versions.families() {
        let (o, persist) = if id == 0 {
            (opts.cf_options(), false)
        } else if let Some(o) = given.get(fam.name.as_str()) {
            ((*o).clone(), o.to_text() != fam.options)
        } else {
            match CfOptions::from_text(&fam.options) {
                Ok(o) => (o, false),
                Err(e) => {
                    let msg = format!(
                        "column family \"{}\": persisted options unreadable ({e}); opened with defaults",
                        fam.name
                    );
                    log.warn(&msg);
                    report.push_str(&msg);
                    report.push('\n');
                    (CfOptions::default(), true)
                }
            }
        };
        fifo_needs_l0_only(&fam.name, &o, fam.current())?;
        // A family opened with its persisted options was validated
        // against the num_levels of its time.
        o.validate_levels(opts.num_levels, opts.allow_ingest_behind)
            .map_err(|e| in_family(&fam.name, e))?;
        out.push(OpenFamily {
            id,
            name: fam.name.clone(),
            opts: o,
            persist_options: persist,
            create: false,
        });
    }
    for (name, o) in &opts.column_families {
        if versions.family_id(name).is_some() {
            continue;
        }
        if !opts.create_missing_column_families {
            return Err(in_family(
                name,
                Error::InvalidArgument(
                    "listed in Options::column_families but does not exist \
                     (create_missing_column_families is false)"
                        .into(),
                ),
            ));
        }
        out.push(OpenFamily {
            id: 0,
            name: name.clone(),
            opts: o.clone(),
            persist_options: false,
            create: true,
        });
    }
    Ok((out, report))
}

fn new_db_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:016x}-{:08x}", t.as_nanos() as u64, std::process::id())
}

/// With direct IO asked for, checks that the file system takes it by
/// opening the DB's LOCK file with `O_DIRECT`: a file system without
/// direct IO fails the open here, with `InvalidArgument` naming the option
/// and the file, rather than the first flush or read. (CURRENT where there
/// is no LOCK.)
fn probe_direct_io(fs: &Arc<dyn FileSystem>, dir: &Path, opts: &Options) -> Result<()> {
    let option = if opts.use_direct_reads {
        "use_direct_reads"
    } else if opts.use_direct_io_for_flush_and_compaction {
        "use_direct_io_for_flush_and_compaction"
    } else {
        return Ok(());
    };
    // A read-only open takes no LOCK, and a checkpoint has none: CURRENT
    // then.
    let mut path = dir.join("LOCK");
    if !fs.exists(&path) {
        path = dir.join("CURRENT");
    }
    fs.open_random_with(&path, crate::fs::FileOptions::DIRECT)
        .map(drop)
        .map_err(|e| crate::fs::explain_direct_refusal(option, &path, e))
}

#[cfg(test)]
mod tests;
