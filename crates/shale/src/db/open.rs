//! Open and recovery: LOCK → CURRENT → MANIFEST → WAL replay → new WAL.
//!
//! Recovery replays the WALs numbered at or above the MANIFEST's log number
//! in order, under the configured `WalRecoveryMode`; whatever a mode drops is
//! written to `LOG` and kept for the `shale.wal-recovery` property. Recovered
//! data is flushed to L0 before the DB opens, and one MANIFEST edit records
//! those tables *and* moves the log number to the new WAL: a crash before
//! that edit replays the same logs again (the tables written so far are
//! orphans, deleted at the next open); a crash after it replays none of
//! them. Recovery is idempotent at every crash point (regression test
//! `crash_during_recovery` counts tables as well as keys).

use std::collections::HashSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use crate::batch::WriteBatch;
use crate::compaction::filter::EntryFilter;
use crate::compaction::job::{write_outputs, OutputSpec};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::options::Options;
use crate::stats::DbStats;
use crate::version::filename::{log_file_name, options_file_name, parse_file_name, FileType};
use crate::version::{VersionEdit, VersionSet};
use crate::wal::{replay, LogReader, LogWriter};

use super::info_log::InfoLog;
use super::super_version::SuperVersion;
use super::table_cache::{effective_max_open_files, TableCache};
use super::write::{insert_batch, WriteQueue};
use super::{DbInner, DbState, SnapshotList};

pub(crate) fn open(dir: &Path, opts: Options) -> Result<DbInner> {
    opts.validate()?;
    let block_cache = super::cache_glue::make_block_cache(&opts)?;
    let fs = Arc::clone(&opts.fs);
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
    let lock = fs.lock(&dir.join("LOCK"))?;
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
    let log = InfoLog::open(&fs, dir);
    log.info(&format!("Opening {} with {:?}", dir.display(), opts));
    let mut versions = if exists {
        VersionSet::recover(Arc::clone(&fs), dir, opts.num_levels)?
    } else {
        VersionSet::create_new(Arc::clone(&fs), dir, opts.num_levels, &new_db_id())?
    };
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
    let table_cache = Arc::new(TableCache::new(
        dir.to_path_buf(),
        Arc::clone(&fs),
        hook,
        opts.cache_index_and_filter_blocks,
        max_open_files,
    ));
    if opts.paranoid_checks {
        // Every live table must open (footer, index, filter checksums).
        let v = versions.current();
        for level in 0..v.num_levels() {
            for f in v.files(level) {
                table_cache.get(f.number)?;
            }
        }
    }

    let shutting_down = AtomicBool::new(false);
    let (report, max_seq, mut edit) =
        replay_wals(&fs, dir, &opts, &mut versions, &log, &shutting_down)?;
    let stats = DbStats::new(opts.num_levels);

    let wal_number = versions.new_file_number();
    let wal_file = fs.create(&dir.join(log_file_name(wal_number)))?;
    fs.sync_dir(dir)?;
    let wal = LogWriter::new(wal_file, wal_number);
    // One edit: the recovered tables and the log number of the new WAL.
    edit.log_number = Some(wal_number);
    edit.prev_log_number = Some(0);
    edit.last_sequence = Some(max_seq.max(versions.last_sequence()));
    versions.log_and_apply(&mut edit)?;
    write_options_file(&fs, dir, &opts, &mut versions, &log)?;

    let mem = Arc::new(MemTable::with_bloom(
        wal_number,
        opts.memtable_bloom_bytes(),
    ));
    let sv = SuperVersion {
        mem: Arc::clone(&mem),
        imm: Vec::new(),
        version: versions.current(),
    };
    let last = versions.last_sequence();
    Ok(DbInner {
        dir: dir.to_path_buf(),
        fs,
        lock: Mutex::new(Some(lock)),
        visible_seq: AtomicU64::new(last),
        super_version: ArcSwap::from_pointee(sv),
        state: Mutex::new(DbState {
            versions,
            mem,
            imm: Vec::new(),
            flush_running: false,
            compactions_running: 0,
            manual_compactions: 0,
            pending_outputs: HashSet::new(),
            errors: Default::default(),
            compact_cursors: vec![0; opts.num_levels],
        }),
        bg_cv: Condvar::new(),
        writer: WriteQueue::new(wal, wal_number),
        snapshots: Arc::new(SnapshotList::default()),
        table_cache,
        block_cache,
        stats,
        log,
        shutting_down,
        stop_writes: AtomicBool::new(false),
        manifest_cv: Condvar::new(),
        wal_recovery_report: report,
        purge_lock: Mutex::new(()),
        unpersisted: AtomicBool::new(false),
        opts,
    })
}

fn new_db_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:016x}-{:08x}", t.as_nanos() as u64, std::process::id())
}

/// Replays WALs into memtables, flushing them to L0 as they fill. Returns the
/// recovery report, the highest sequence number seen and the edit naming
/// the tables written (not yet applied: the caller adds the new log number
/// and applies it as one edit).
fn replay_wals(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    versions: &mut VersionSet,
    log: &InfoLog,
    shutting_down: &AtomicBool,
) -> Result<(String, u64, VersionEdit)> {
    let min_log = versions.log_number();
    let prev_log = versions.prev_log_number();
    let mut logs: Vec<u64> = fs
        .list(dir)?
        .iter()
        .filter_map(|n| parse_file_name(n))
        .filter(|(t, n)| {
            *t == FileType::Log && (*n >= min_log || (*n == prev_log && prev_log != 0))
        })
        .map(|(_, n)| n)
        .collect();
    logs.sort_unstable();
    let mut max_seq = versions.last_sequence();
    let mut report = String::new();
    let mut stopped = false;
    let mut edit = VersionEdit::default();
    let mut mem = MemTable::new(0);
    let mut scratch_batch_errors = 0u64;
    for (i, &number) in logs.iter().enumerate() {
        versions.mark_file_number_used(number);
        let name = log_file_name(number);
        if stopped {
            let msg = format!(
                "WAL {name} not replayed: point-in-time recovery stopped in an earlier log"
            );
            log.warn(&msg);
            report.push_str(&msg);
            report.push('\n');
            continue;
        }
        let file = fs.open_sequential(&dir.join(&name))?;
        let mut reader = LogReader::new(file, name.clone(), number);
        let is_last = i + 1 == logs.len();
        let rep = replay(
            &mut reader,
            opts.wal_recovery_mode,
            is_last,
            |payload, offset| {
                let batch = WriteBatch::from_data(payload.to_vec())?;
                batch.validate(&name, offset)?;
                insert_batch(&mem, &batch).map_err(|e| {
                    scratch_batch_errors += 1;
                    Error::corruption(name.clone(), offset, format!("bad batch: {e}"))
                })?;
                let count = u64::from(batch.count());
                if count > 0 {
                    max_seq = max_seq.max(batch.sequence() + count - 1);
                }
                if mem.approximate_memory_usage() >= opts.write_buffer_size {
                    let full = std::mem::replace(&mut mem, MemTable::new(0));
                    flush_recovered(fs, dir, opts, versions, &mut edit, full, shutting_down)?;
                }
                Ok(())
            },
        )?;
        for d in &rep.dropped {
            let msg = format!(
                "WAL recovery ({:?}) dropped {} bytes of {name} at offset {}: {}",
                opts.wal_recovery_mode, d.bytes, d.offset, d.what
            );
            log.warn(&msg);
            report.push_str(&msg);
            report.push('\n');
        }
        log.info(&format!("Recovered {} records from {name}", rep.records));
        if rep.stopped_early {
            stopped = true;
        }
    }
    if mem.num_entries() > 0 {
        flush_recovered(fs, dir, opts, versions, &mut edit, mem, shutting_down)?;
    }
    Ok((report, max_seq, edit))
}

fn flush_recovered(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    versions: &mut VersionSet,
    edit: &mut VersionEdit,
    mem: MemTable,
    shutting_down: &AtomicBool,
) -> Result<()> {
    let mem = Arc::new(mem);
    let mut iter = mem.iter();
    iter.seek_to_first();
    let compression = opts.compression_for_level(0, false);
    let topts = opts.table_options(compression, &dir.display().to_string());
    let mut filter = EntryFilter::new(Vec::new(), None);
    let mut alloc = || versions.new_file_number();
    let mut spec = OutputSpec {
        fs,
        dir,
        table_opts: topts,
        target_file_size: u64::MAX,
        new_file_number: &mut alloc,
        shutting_down,
    };
    let out = write_outputs(&mut iter, &mut filter, &mut spec)?;
    for mut f in out.files {
        f.compression = compression.code();
        edit.add_file(0, f);
    }
    Ok(())
}

/// Writes `OPTIONS-NNNNNN` (a versioned key=value text file) and removes
/// older ones.
fn write_options_file(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    versions: &mut VersionSet,
    log: &InfoLog,
) -> Result<()> {
    let number = versions.new_file_number();
    let text = super::options_file::render(opts);
    let tmp = dir.join(format!("{number:06}.dbtmp"));
    let mut f = fs.create(&tmp)?;
    f.append(text.as_bytes())?;
    f.sync()?;
    drop(f);
    fs.rename(&tmp, &dir.join(options_file_name(number)))?;
    for name in fs.list(dir)? {
        if let Some((FileType::Options, n)) = parse_file_name(&name) {
            if n < number {
                if let Err(e) = fs.remove(&dir.join(&name)) {
                    log.warn(&format!("could not remove {name}: {e}"));
                }
            }
        }
    }
    Ok(())
}
