//! WAL replay at open (see `open` for the whole recovery): the WALs a
//! family has not flushed are read in order under the `WalRecoveryMode`,
//! each record inserted into its family's memtable (`RecoveryTarget`),
//! memtables that fill flushed to L0 as they go, and what is left flushed
//! before the DB opens (`flush_recovered`).

use super::write::{insert_batch, MemTarget};
use crate::batch::WriteBatch;
use crate::blob::source::BlobSource;
use crate::build::filter::EntryFilter;
use crate::build::writer::{write_outputs, OutputSpec};
use crate::error::{Error, Result};
use crate::events::info_log::InfoLog;
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::options::{CfOptions, Options};
use crate::version::filename::{log_file_name, parse_file_name, FileType};
use crate::version::{VersionEdit, VersionSet};
use crate::wal::{replay, LogReader, WalRecoveryMode};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A family as the open resolves it.
pub(super) struct OpenFamily {
    pub(super) id: u32,
    pub(super) name: String,
    pub(super) opts: CfOptions,
    /// The options differ from the persisted ones: persist them.
    pub(super) persist_options: bool,
    /// Listed in `Options::column_families` but absent: create it.
    pub(super) create: bool,
}

/// Recovery's scratch memtables: one per family with records, for the WAL
/// being replayed.
pub(super) struct RecoveryTarget<'a> {
    /// Live families (existing before this open): id → (log number, index
    /// into `mems`).
    pub(super) families: &'a HashMap<u32, (u64, usize)>,
    pub(super) mems: &'a mut Vec<Option<MemTable>>,
    /// The WAL being replayed.
    pub(super) wal: u64,
    /// Per family index, its write buffer size.
    pub(super) write_buffer_sizes: &'a [usize],
    /// Per family index, the estimated bytes replayed into its memtable
    /// since it was last flushed (see `REPLAY_ENTRY_OVERHEAD`).
    pub(super) replayed: &'a mut Vec<usize>,
}

/// Bytes a replayed entry is counted for beyond its key and value: the
/// 8-byte sequence/kind trailer and about 24 bytes of skiplist node (length
/// fields and next pointers). Recovery flushes a memtable once this count
/// reaches its write buffer size, not by the arena's usage: node heights
/// come from a per-thread random generator, so arena usage differs from
/// one recovery of the same WAL to the next, and a recovery crashed and
/// redone would otherwise cut different tables than a clean one
/// (`power_loss.rs::exhaustive_crash_points_long` found 2 L0 tables against
/// 1; the keys were the same).
pub(super) const REPLAY_ENTRY_OVERHEAD: usize = 32;

impl MemTarget for RecoveryTarget<'_> {
    fn mem(&mut self, cf: u32) -> Option<&MemTable> {
        let &(log_number, i) = self.families.get(&cf)?;
        if self.wal < log_number {
            return None; // flushed already
        }
        let wbs = self.write_buffer_sizes.get(i).copied().unwrap_or(0);
        Some(self.mems[i].get_or_insert_with(|| MemTable::charged(0, 0, None, wbs)))
    }

    fn added(&mut self, cf: u32, bytes: usize) {
        if let Some(&(_, i)) = self.families.get(&cf) {
            if let Some(n) = self.replayed.get_mut(i) {
                *n += bytes + REPLAY_ENTRY_OVERHEAD;
            }
        }
    }
}

/// Replays WALs into per-family memtables, flushing them to L0 as they fill
/// and at the end, or with `keep` (a read-only open, which writes nothing
/// and serves the last memtables from memory) returning the last ones.
/// Returns the recovery report, the highest sequence number seen and one
/// edit per family that got tables (not yet applied: the caller adds the
/// new log numbers and applies them as one group). The WALs are in
/// `to.dir`, where the recovered memtables are written.
pub(super) fn replay_wals(
    to: RecoveryTables<'_>,
    opts: &Options,
    versions: &mut VersionSet,
    families: &[OpenFamily],
    log: &InfoLog,
    shutting_down: &AtomicBool,
    keep: bool,
) -> Result<Replayed> {
    let (fs, dir) = (to.fs, to.dir);
    // Not the families' smallest log number alone: a family idle for a
    // while keeps an old one, and the WALs between it and the persisted
    // DB-wide floor may have been deleted, or left unsynced, before a
    // power loss.
    let min_log = versions.recovery_log_floor();
    let prev_log = versions.prev_log_number();
    let names = fs.list(dir)?;
    // A job's output that a crash left unlogged may be numbered past the
    // MANIFEST's next file number: its number must not be handed out
    // again, and marked used it is below the obsolete-file pass's limit,
    // which deletes it (RocksDB's `MarkFileNumberUsed` at recovery).
    for (t, n) in names.iter().filter_map(|n| parse_file_name(n)) {
        if matches!(t, FileType::Table | FileType::Blob | FileType::Temp) {
            versions.mark_file_number_used(n);
        }
    }
    let mut logs: Vec<u64> = names
        .iter()
        .filter_map(|n| parse_file_name(n))
        .filter(|(t, n)| {
            *t == FileType::Log && (*n >= min_log || (*n == prev_log && prev_log != 0))
        })
        .map(|(_, n)| n)
        .collect();
    logs.sort_unstable();
    let existing: Vec<&OpenFamily> = families.iter().filter(|f| !f.create).collect();
    let index: HashMap<u32, (u64, usize)> = existing
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id, (versions.log_number(f.id), i)))
        .collect();
    let mut mems: Vec<Option<MemTable>> = existing.iter().map(|_| None).collect();
    let mut replayed: Vec<usize> = vec![0; existing.len()];
    let write_buffer_sizes: Vec<usize> =
        existing.iter().map(|f| f.opts.write_buffer_size).collect();
    let mut max_seq = versions.last_sequence();
    let mut report = String::new();
    let mut stopped = false;
    let mut edits: BTreeMap<u32, VersionEdit> = BTreeMap::new();
    // The logs replayed and how far each held whole records.
    let mut replayed_logs: HashMap<u64, u64> = HashMap::new();
    for (i, &number) in logs.iter().enumerate() {
        versions.mark_file_number_used(number);
        let name = log_file_name(number);
        if !stopped {
            if let Some(msg) = broken_predecessor(fs, dir, &name, number, &replayed_logs, min_log)?
            {
                let what = match opts.wal_recovery_mode {
                    WalRecoveryMode::PointInTime => {
                        stopped = true;
                        "it and later WALs are not replayed"
                    }
                    WalRecoveryMode::SkipAnyCorruptedRecords => "replayed anyway (salvage)",
                    mode => {
                        return Err(Error::corruption(name, 0, format!("{msg} ({mode:?})")));
                    }
                };
                let msg = format!("WAL recovery ({:?}): {msg}; {what}", opts.wal_recovery_mode);
                log.warn(&msg);
                report.push_str(&msg);
                report.push('\n');
                if stopped {
                    continue;
                }
            }
        }
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
                let mut target = RecoveryTarget {
                    families: &index,
                    mems: &mut mems,
                    wal: number,
                    write_buffer_sizes: &write_buffer_sizes,
                    replayed: &mut replayed,
                };
                insert_batch(&mut target, &batch).map_err(|e| {
                    Error::corruption(name.clone(), offset, format!("bad batch: {e}"))
                })?;
                let count = u64::from(batch.count());
                if count > 0 {
                    max_seq = max_seq.max(batch.sequence() + count - 1);
                }
                for ((slot, f), bytes) in mems.iter_mut().zip(&existing).zip(replayed.iter_mut()) {
                    if slot.is_some() && *bytes >= f.opts.write_buffer_size {
                        *bytes = 0;
                        if let Some(m) = slot.take() {
                            let edit = edits.entry(f.id).or_default();
                            flush_recovered(to, f.id, &f.opts, versions, edit, m, shutting_down)?;
                        }
                    }
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
        replayed_logs.insert(number, rep.valid_end);
    }
    let mut kept = BTreeMap::new();
    for (slot, f) in mems.iter_mut().zip(&existing) {
        if let Some(m) = slot.take().filter(|m| m.num_entries() > 0) {
            if keep {
                kept.insert(f.id, m);
                continue;
            }
            let edit = edits.entry(f.id).or_default();
            flush_recovered(to, f.id, &f.opts, versions, edit, m, shutting_down)?;
        }
    }
    Ok((report, max_seq, edits, kept))
}

/// What `replay_wals` returns: its LOG report, the largest sequence number
/// replayed, the recovery's version edits by family, and (with `keep`)
/// each family's last recovered memtable, not flushed.
pub(super) type Replayed = (
    String,
    u64,
    BTreeMap<u32, VersionEdit>,
    BTreeMap<u32, MemTable>,
);

/// Checks WAL `number` against its predecessor-WAL record (written by the
/// memtable switch that created it): `Some(why)` when this WAL's writes
/// would follow a hole. That is when the WAL it names was replayed but
/// holds fewer whole records than it held when closed, or when it is not
/// there though recovery needs it (numbered at or above `min_log`): a
/// switch does not sync the directory, so a power loss can drop one WAL's
/// entry and keep a later one's. A predecessor below `min_log` was deleted
/// as obsolete (no family had unflushed writes in it, and flushes sync
/// closed WALs first); a WAL without the record (created at open) has
/// nothing to check. `replayed` maps each log replayed so far to the end
/// of its last whole record.
pub(super) fn broken_predecessor(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    name: &str,
    number: u64,
    replayed: &HashMap<u64, u64>,
    min_log: u64,
) -> Result<Option<String>> {
    let file = fs.open_sequential(&dir.join(name))?;
    let mut reader = LogReader::new(file, name.to_string(), number);
    let _ = reader.read_record(&mut Vec::new())?;
    let Some(p) = reader.predecessor() else {
        return Ok(None);
    };
    let pred = log_file_name(p.log_number);
    Ok(match replayed.get(&p.log_number) {
        Some(&end) if end < p.size => Some(format!(
            "{name} follows {pred}, which held {} bytes when closed but holds whole records \
             only up to offset {end} (its unsynced tail was lost)",
            p.size
        )),
        Some(_) => None,
        None if p.log_number >= min_log => Some(format!(
            "{name} follows {pred}, which held {} bytes when closed but is missing (its \
             directory entry was not durable)",
            p.size
        )),
        None => None,
    })
}

/// Where WAL recovery writes its tables.
#[derive(Clone, Copy)]
pub(super) struct RecoveryTables<'a> {
    pub(super) fs: &'a Arc<dyn FileSystem>,
    pub(super) dir: &'a Path,
    /// `use_direct_io_for_flush_and_compaction` (a recovery flush is a
    /// flush).
    pub(super) file_opts: crate::fs::FileOptions,
    /// The clock (the tables' `newest_key_time`: their entries were
    /// written before the open).
    pub(super) now: u64,
    /// Where blob files are read (the source a recovery flush's blob
    /// side writes for).
    pub(super) blobs: &'a Arc<BlobSource>,
}

/// Writes recovered memtable `mem` of family `cf` to L0 tables (and blob
/// files) and adds them to `edit`.
pub(super) fn flush_recovered(
    to: RecoveryTables<'_>,
    cf: u32,
    opts: &CfOptions,
    versions: &mut VersionSet,
    edit: &mut VersionEdit,
    mem: MemTable,
    shutting_down: &AtomicBool,
) -> Result<()> {
    let RecoveryTables {
        fs,
        dir,
        file_opts,
        now,
        blobs,
    } = to;
    let mem = Arc::new(mem);
    let mut iter = mem.iter();
    iter.seek_to_first();
    let compression = opts.compression_for_level(0, false);
    let mut topts = opts.table_options(0, compression, &dir.display().to_string());
    topts.column_family = versions.family(cf).map(|f| (cf, f.name.clone()));
    // Recovery runs no user code: merges are collapsed by the flushes and
    // compactions that follow.
    let frags = mem.range_fragments();
    let range_dels = frags
        .as_ref()
        .map_or_else(Vec::new, |f| f.for_output(&[], false));
    let mut filter = EntryFilter::new(Vec::new(), None).with_range_dels(frags);
    let mut alloc = || versions.new_file_number();
    let mut spec = OutputSpec {
        file_opts,
        rate_limit: None,
        range_dels,
        memory: None,
        builder_memory_limit: usize::MAX,
        fs,
        dir,
        table_opts: topts,
        target_file_size: u64::MAX,
        new_file_number: &mut alloc,
        shutting_down,
        // Tables written at open (recovered memtables) are synced whole.
        bytes_per_sync: 0,
        // Values go to blob files as a flush's would (RocksDB's recovery
        // flush does the same), blob files finished and synced before the
        // group edit that names them.
        blob: crate::shared::blob_glue::recovery_spec(blobs, cf, opts),
        partitioner: opts.flush_partitioner(),
        streams: opts.stream_detector(opts.write_buffer_size as u64),
    };
    let out = write_outputs(&mut iter, &mut filter, &mut spec)?;
    edit.blob_file_additions.extend(out.blobs.additions());
    for mut f in out.files {
        f.compression = compression.code();
        f.newest_key_time = now;
        edit.add_file(0, f);
    }
    Ok(())
}
