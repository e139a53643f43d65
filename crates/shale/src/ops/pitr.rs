//! Point-in-time restore from a backup directory (beyond RocksDB):
//! `BackupEngine::backup_wals` keeps the DB's WALs in `wal/` of the backup
//! directory, and `restore_to(target, S)` restores the newest backup that
//! holds nothing after sequence number `S` and replays the kept WALs up to
//! exactly `S`; `restore_to_time` finds `S` from the WALs' time records.
//!
//! Needs WAL archiving on the DB (`Options::wal_ttl_seconds` or
//! `wal_size_limit_mb`): obsolete WALs then wait in `archive/` for
//! `backup_wals`, and every WAL carries time records and unlogged-writes
//! records (docs/format/wal.md, types 132 and 133).
//!
//! The plan for `restore_to(S)` (`plan`): the backup `B` with the largest
//! `max_sequence <= S` (format 2 metas record it: the largest sequence
//! number in B's tables and WAL records); B's oldest WAL is the floor; the
//! WALs from the floor on are B's own copies, each replaced by the copy in
//! `wal/` when that is at least as long (a WAL copied while current grows;
//! an archived one is whole). Walking their records in order, the records
//! after `B.max_sequence` must continue it without a hole, and the walk
//! stops at the record that ends at `S` (a record ending after `S` that
//! starts at or before it is a batch `S` would cut: refused). Refused
//! with `InvalidArgument`, naming what is missing, when:
//! - a hole in the sequence numbers (a WAL missing from `wal/`, purged from
//!   the archive before `backup_wals` copied it, or a partial copy);
//! - an unlogged-writes record at or before `S` in a WAL from the floor on
//!   (a write made with `disable_wal`: B may not hold it and no WAL does;
//!   a backup made after it was flushed serves);
//! - an ingestion record after `B.max_sequence` and at or before `S` (the
//!   files are in no WAL; a backup made after the ingestion holds them);
//! - a family-change record (a column family created or dropped) made
//!   after every write up to some `c`, with `B.max_sequence <= c < S`: B
//!   may predate the change, which only the MANIFEST records;
//! - the WALs end before `S` (writes not yet copied by `backup_wals`, or
//!   held back by `manual_wal_flush` and never flushed);
//! - a WAL's predecessor-WAL record names a predecessor in the plan that
//!   is shorter than it says (a partial copy; recovery would stop there).
//!
//! The restore then copies B's files and the planned WALs (the last one
//! cut right after the record ending at `S`) into `target.tmp`, syncs it
//! and renames it to `target`, as `restore` does; opening it replays the
//! WALs, which yields exactly the writes up to `S`.
//!
//! Time records: the write path writes one (the last sequence number
//! written so far, the time) before the first write group of each WAL and
//! before the first group at least a second after the previous record. So
//! the writes up to a record's sequence number were all made at or before
//! its time. So is each line of `wal/TIMES` (one per `backup_wals`: the
//! sequence number visible when it began, the time it ended). And
//! `restore_to_time(T)` restores to the sequence number of the latest
//! record, line or backup at or before `T`: every write made by `T` except
//! those of the last second or so before it while writes were going on
//! (or since the last `backup_wals`, after the last writes), and nothing
//! made after `T`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use super::backup::{BackupEngine, Meta};
use super::wal_scan::{scan_wal, Item};
use crate::error::{Error, Result};
use crate::version::filename::{parse_file_name, FileType};
use crate::wal::Mark;

/// What [`BackupEngine::restore_to`] restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PointInTimeRestore {
    /// The backup it started from.
    pub backup_id: u32,
    /// The restored DB holds exactly the writes up to this sequence number.
    pub sequence: u64,
    /// WALs placed in the restored DB for replay.
    pub wal_files: usize,
}

/// One WAL of a plan: copy `len` bytes of `from` as `name`.
struct PlannedWal {
    name: String,
    from: PathBuf,
    len: u64,
}

/// A restore to one sequence number (module docs).
struct Plan {
    meta: Meta,
    wals: Vec<PlannedWal>,
}

fn refuse(msg: String) -> Error {
    Error::InvalidArgument(format!("point-in-time restore: {msg}"))
}

impl BackupEngine {
    /// Restores into `target` (which must not exist) the DB as it was
    /// right after the write with sequence number `sequence`: the newest
    /// backup not past it, and the WALs kept by `backup_wals` replayed up
    /// to it. Refused with `InvalidArgument` naming the cause when the
    /// backups and WALs cannot give exactly that state (module docs).
    pub fn restore_to(
        &self,
        target: impl AsRef<Path>,
        sequence: u64,
    ) -> Result<PointInTimeRestore> {
        let _g = self.mutex.lock();
        let plan = self.plan(sequence)?;
        let report = PointInTimeRestore {
            backup_id: plan.meta.id,
            sequence,
            wal_files: plan.wals.len(),
        };
        let fs = self.fs.as_ref();
        self.restore_locked(&plan.meta, target.as_ref(), |tmp| {
            for w in &plan.wals {
                fs.copy_file(&w.from, &tmp.join(&w.name), Some(w.len))?;
            }
            Ok(())
        })?;
        Ok(report)
    }

    /// [`BackupEngine::restore_to`] the latest sequence number known to
    /// have been written at or before `at` (a WAL's time record or a
    /// backup's time; module docs for the accuracy).
    pub fn restore_to_time(
        &self,
        target: impl AsRef<Path>,
        at: SystemTime,
    ) -> Result<PointInTimeRestore> {
        let micros = at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        let sequence = {
            let _g = self.mutex.lock();
            self.sequence_at(micros)?
        };
        self.restore_to(target, sequence)
    }

    /// The latest sequence number written by `micros` (Unix microseconds).
    fn sequence_at(&self, micros: u64) -> Result<u64> {
        let mut best: Option<u64> = None;
        for id in self.ids()? {
            let m = self.read_meta(id)?;
            if let Some(max) = m.max_sequence {
                if m.timestamp.saturating_mul(1_000_000) <= micros {
                    best = best.max(Some(max));
                }
            }
        }
        for (seq, t) in self.read_times()? {
            if t <= micros {
                best = best.max(Some(seq));
            }
        }
        for (n, path) in self.kept_wals()? {
            for item in scan_wal(self.fs.as_ref(), &path, n)?.items {
                if let Item::Mark(Mark::Time { seq, micros: t, .. }) = item {
                    if t <= micros {
                        best = best.max(Some(seq));
                    }
                }
            }
        }
        best.ok_or_else(|| {
            refuse(format!(
                "no backup or WAL time record at or before {micros} µs after the epoch"
            ))
        })
    }

    /// The restore to `s` (module docs).
    fn plan(&self, s: u64) -> Result<Plan> {
        let mut chosen: Option<Meta> = None;
        let mut without_max = 0;
        for id in self.ids()? {
            let m = self.read_meta(id)?;
            match m.max_sequence {
                None => without_max += 1,
                Some(max) if max <= s => {
                    if chosen.as_ref().is_none_or(|c| c.max_sequence <= Some(max)) {
                        chosen = Some(m);
                    }
                }
                Some(_) => {}
            }
        }
        let Some(meta) = chosen else {
            return Err(refuse(format!(
                "no backup holds only writes up to sequence {s}{}",
                if without_max > 0 {
                    format!(
                        " ({without_max} backup(s) of meta format 1 do not record their \
                         largest sequence number and cannot be used)"
                    )
                } else {
                    String::new()
                }
            )));
        };
        let max = meta.max_sequence.unwrap_or(0);
        let mut sources: BTreeMap<u64, (String, PathBuf, u64)> = BTreeMap::new();
        for f in &meta.files {
            if let Some((FileType::Log, n)) = parse_file_name(&f.name) {
                sources.insert(n, (f.name.clone(), self.dir.join(&f.stored), f.size));
            }
        }
        let floor = sources.keys().next().copied().unwrap_or(0);
        for (n, path) in self.kept_wals()?.range(floor..) {
            let size = self.fs.file_size(path)?;
            let name = crate::version::filename::log_file_name(*n);
            match sources.get(n) {
                Some((_, _, own)) if *own > size => {}
                _ => {
                    sources.insert(*n, (name, path.clone(), size));
                }
            }
        }
        let mut wals = Vec::new();
        // The next sequence number a record must start with.
        let mut next = max + 1;
        let mut lengths: BTreeMap<u64, u64> = BTreeMap::new();
        for (&n, (name, from, size)) in &sources {
            let scan = scan_wal(self.fs.as_ref(), from, n)?;
            if let Some((pred, pred_size)) = scan.predecessor {
                if let Some(&had) = lengths.get(&pred) {
                    if had < pred_size {
                        return Err(refuse(format!(
                            "WAL {pred} is a partial copy ({had} of {pred_size} bytes, as WAL \
                             {n} says); back the WALs up again while the DB still archives it"
                        )));
                    }
                }
            }
            // Where this WAL's copy ends when the walk stops in it.
            let mut cut = None;
            for item in scan.items {
                match item {
                    Item::Batch { last, .. } if last <= max => {}
                    Item::Batch { first, last, start } => {
                        if first != next {
                            return Err(refuse(format!(
                                "sequence numbers {next}..={} are in no WAL kept in the backup \
                                 directory (a WAL not copied by backup_wals before it left \
                                 the DB's archive)",
                                first.saturating_sub(1).max(next)
                            )));
                        }
                        if last <= s {
                            next = last + 1;
                        } else if first <= s {
                            return Err(refuse(format!(
                                "sequence {s} is inside a write batch ({first}..={last}); \
                                 restore to {} or {last}",
                                first - 1
                            )));
                        } else {
                            cut = Some(start);
                            break;
                        }
                    }
                    Item::Mark(Mark::Unlogged { first, last, end }) => {
                        if first <= s {
                            return Err(refuse(format!(
                                "sequence numbers {first}..={last} were written without the \
                                 WAL (disable_wal) after backup {}'s oldest WAL; restore from \
                                 a backup made after they were flushed",
                                meta.id
                            )));
                        }
                        cut = Some(end);
                        break;
                    }
                    Item::Mark(Mark::Ingested { first, last, end }) => {
                        // In the backup's tables when the backup is younger.
                        if first <= max {
                            continue;
                        }
                        if first <= s {
                            return Err(refuse(format!(
                                "sequence numbers {first}..={last} were taken by an ingestion \
                                 of external files after backup {}; restore from a backup \
                                 made after it",
                                meta.id
                            )));
                        }
                        cut = Some(end);
                        break;
                    }
                    Item::Mark(Mark::Family { seq, end }) => {
                        // A backup holding a later write has the change.
                        if seq < max {
                            continue;
                        }
                        if seq < s {
                            return Err(refuse(format!(
                                "a column family was created or dropped after sequence {seq} \
                                 (a MANIFEST change no WAL replays) and after backup {}; \
                                 restore to {seq} at most, or from a backup made after it",
                                meta.id
                            )));
                        }
                        cut = Some(end);
                        break;
                    }
                    Item::Mark(Mark::Time { .. }) => {}
                }
            }
            let len = cut.unwrap_or(*size);
            lengths.insert(n, len);
            wals.push(PlannedWal {
                name: name.clone(),
                from: from.clone(),
                len,
            });
            if cut.is_some() {
                break;
            }
        }
        if next <= s {
            return Err(refuse(format!(
                "the WALs kept in the backup directory reach sequence {}, not {s} (call \
                 backup_wals after the writes; writes held back by manual_wal_flush and never \
                 flushed are in no WAL)",
                next - 1
            )));
        }
        Ok(Plan { meta, wals })
    }
}
