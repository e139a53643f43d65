//! `VersionSet`: the MANIFEST state of a DB — the current `Version`, the live
//! MANIFEST writer, and the counters (next file number, last sequence, log
//! number) — plus recovery from CURRENT → MANIFEST.
//!
//! Durability contract: `log_and_apply` appends the edit to the MANIFEST and
//! syncs it *before* installing the new version; if the append or sync fails,
//! nothing is installed, the writer is dropped (the next successful call rolls
//! to a fresh MANIFEST), and the error is returned so the caller can poison
//! the DB. A failed edit may still have reached the disk, so the caller must
//! not delete files that the edit adds.
//!
//! MANIFEST rolling: a new MANIFEST starts with a snapshot edit (all files and
//! counters), is synced, then CURRENT is switched (see `current.rs`), and only
//! then is the old MANIFEST deleted. Recovery always rolls; `log_and_apply`
//! rolls when the MANIFEST exceeds `max_manifest_size` or after a failure.
//!
//! Thread-safety: not internally synchronized; the DB keeps it under its
//! mutex. `current()` hands out `Arc<Version>`s that readers use without the
//! lock; `live_files` includes every version still held by someone.
//! (`log_and_apply` does IO with `&mut self`; releasing the DB mutex during
//! the MANIFEST write is left to the caller's design.)

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::base::{FileNum, SeqNo};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::{LogReader, LogWriter, ReadOutcome};

use super::builder::VersionBuilder;
use super::current::{read_current, set_current};
use super::edit::VersionEdit;
use super::filename::manifest_file_name;
use super::version::Version;

/// Name of the (only) key order, recorded in every MANIFEST snapshot.
pub(crate) const COMPARATOR_NAME: &str = "leveldb.BytewiseComparator";

/// Default size past which `log_and_apply` rolls to a new MANIFEST.
pub(crate) const DEFAULT_MAX_MANIFEST_SIZE: u64 = 64 << 20;

/// Every table the recovered `version` names must be in `dir`: a MANIFEST
/// cut short (recovery stops at an edit whose files a later compaction
/// deleted) or a file removed by hand is `Corruption` naming the missing
/// table and the MANIFEST, found before anything is written, so the DB is
/// left as it was.
fn check_tables_present(
    fs: &dyn FileSystem,
    dir: &Path,
    version: &Version,
    manifest: &str,
    added_at: &std::collections::HashMap<FileNum, u64>,
) -> Result<()> {
    let present: HashSet<String> = fs.list(dir)?.into_iter().collect();
    for level in 0..version.num_levels() {
        for f in version.files(level) {
            let table = super::filename::table_file_name(f.number);
            if !present.contains(&table) {
                return Err(Error::corruption(
                    manifest,
                    added_at.get(&f.number).copied().unwrap_or(0),
                    format!(
                        "the edit at this offset adds {table} (level {level}, {} bytes), which is not in {}; \
                         restore the file from a backup, or rebuild the MANIFEST from the files \
                         present with a repair tool (RocksDB's RepairDB; Shale's `shale repair` \
                         is planned) and accept the loss of that file's keys",
                        f.file_size,
                        dir.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The MANIFEST state of one DB (one column family for now).
pub(crate) struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    current: Arc<Version>,
    /// Versions replaced by a newer one; pruned when dead.
    older: Vec<Weak<Version>>,
    /// `None` before the first MANIFEST and after a failed write.
    manifest: Option<LogWriter>,
    manifest_number: FileNum,
    next_file_number: FileNum,
    last_sequence: SeqNo,
    log_number: FileNum,
    prev_log_number: FileNum,
    db_id: String,
    max_manifest_size: u64,
}

impl VersionSet {
    fn empty(fs: Arc<dyn FileSystem>, dir: &Path, num_levels: usize, db_id: String) -> VersionSet {
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            current: Arc::new(Version::new_empty(num_levels)),
            older: Vec::new(),
            manifest: None,
            manifest_number: 0,
            next_file_number: 1,
            last_sequence: 0,
            log_number: 0,
            prev_log_number: 0,
            db_id,
            max_manifest_size: DEFAULT_MAX_MANIFEST_SIZE,
        }
    }

    /// Creates the MANIFEST state of a new, empty DB in `dir` (which must
    /// exist): writes `MANIFEST-000001` with a snapshot edit, then `CURRENT`.
    pub(crate) fn create_new(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        num_levels: usize,
        db_id: &str,
    ) -> Result<VersionSet> {
        let mut vs = VersionSet::empty(fs, dir, num_levels, db_id.to_string());
        let number = vs.new_file_number();
        vs.write_new_manifest(number, None)?;
        Ok(vs)
    }

    /// Recovers from `dir/CURRENT` and the MANIFEST it names, then rolls to a
    /// new MANIFEST (so the old one, possibly with a torn tail, is never
    /// appended to). A torn tail is tolerated (that edit was never
    /// acknowledged); any other damage is `Corruption` with file and offset.
    pub(crate) fn recover(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        num_levels: usize,
    ) -> Result<VersionSet> {
        Self::recover_impl(fs, dir, num_levels, true)
    }

    /// `recover` without the check that every table is on disk, for unit
    /// tests whose tables exist only as metadata.
    #[cfg(test)]
    pub(crate) fn recover_unchecked(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        num_levels: usize,
    ) -> Result<VersionSet> {
        Self::recover_impl(fs, dir, num_levels, false)
    }

    fn recover_impl(
        fs: Arc<dyn FileSystem>,
        dir: &Path,
        num_levels: usize,
        check_tables: bool,
    ) -> Result<VersionSet> {
        let old_number = read_current(fs.as_ref(), dir)?;
        let path = dir.join(manifest_file_name(old_number));
        let name = path.display().to_string();
        if !fs.exists(&path) {
            return Err(Error::corruption(
                dir.join(super::filename::CURRENT_FILE_NAME)
                    .display()
                    .to_string(),
                0,
                format!(
                    "CURRENT names {}, which does not exist",
                    manifest_file_name(old_number)
                ),
            ));
        }
        let base = Version::new_empty(num_levels);
        let mut builder = VersionBuilder::new(&base);
        let mut s = Recovered::default();
        // Table number -> offset of the edit that added it (for errors).
        let mut added_at: std::collections::HashMap<FileNum, u64> = Default::default();
        read_manifest(fs.as_ref(), &path, old_number, |offset, edit| {
            if edit.column_family != 0 {
                return Err(Error::NotSupported(format!(
                    "{name} at offset {offset}: column family {} (only the default one is supported)",
                    edit.column_family
                )));
            }
            if let Some(c) = &edit.comparator {
                if c != COMPARATOR_NAME {
                    return Err(Error::InvalidArgument(format!(
                        "{name}: DB was written with comparator {c:?}, this build uses {COMPARATOR_NAME:?}"
                    )));
                }
            }
            builder.apply(&edit, &name, offset)?;
            for n in edit.new_file_numbers() {
                added_at.insert(n, offset);
            }
            s.log_number = edit.log_number.or(s.log_number);
            s.prev_log_number = edit.prev_log_number.or(s.prev_log_number);
            s.next_file_number = edit.next_file_number.or(s.next_file_number);
            s.last_sequence = edit.last_sequence.or(s.last_sequence);
            s.db_id = edit.db_id.or(s.db_id.take());
            Ok(())
        })?;
        let missing = |what: &str| {
            Error::corruption(name.as_str(), 0, format!("MANIFEST has no {what} entry"))
        };
        let next_file_number = s
            .next_file_number
            .ok_or_else(|| missing("next file number"))?;
        let log_number = s.log_number.ok_or_else(|| missing("log number"))?;
        let last_sequence = s.last_sequence.ok_or_else(|| missing("last sequence"))?;
        let version = builder.build()?;
        if check_tables {
            check_tables_present(fs.as_ref(), dir, &version, &name, &added_at)?;
        }

        let mut vs = VersionSet::empty(
            Arc::clone(&fs),
            dir,
            num_levels,
            s.db_id.unwrap_or_default(),
        );
        vs.manifest_number = old_number;
        vs.next_file_number = next_file_number;
        vs.log_number = log_number;
        vs.prev_log_number = s.prev_log_number.unwrap_or(0);
        vs.last_sequence = last_sequence;
        // Never hand out a number that is already in use, whatever the
        // counter says.
        let mut used = HashSet::new();
        version.live_file_numbers(&mut used);
        for n in used
            .into_iter()
            .chain([old_number, log_number, vs.prev_log_number])
        {
            vs.mark_file_number_used(n);
        }
        vs.current = Arc::new(version);
        let number = vs.new_file_number();
        vs.write_new_manifest(number, None)?;
        Ok(vs)
    }

    /// An edit describing the whole current state (the first record of every
    /// MANIFEST).
    fn snapshot_edit(&self) -> VersionEdit {
        let mut e = VersionEdit {
            comparator: Some(COMPARATOR_NAME.to_string()),
            log_number: Some(self.log_number),
            prev_log_number: Some(self.prev_log_number),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.last_sequence),
            db_id: Some(self.db_id.clone()),
            ..Default::default()
        };
        for level in 0..self.current.num_levels() {
            for f in self.current.files(level) {
                e.add_file(level, (**f).clone());
            }
        }
        e
    }

    /// Writes `MANIFEST-<number>` = snapshot (+ `pending` record), syncs it,
    /// points CURRENT at it and deletes the previous MANIFEST.
    fn write_new_manifest(&mut self, number: FileNum, pending: Option<&[u8]>) -> Result<()> {
        debug_assert!(number < self.next_file_number);
        self.manifest = None;
        let path = self.dir.join(manifest_file_name(number));
        let written = (|| {
            let mut writer = LogWriter::new(self.fs.create(&path)?, number);
            let mut rec = Vec::new();
            self.snapshot_edit().encode(&mut rec);
            writer.add_record(&rec)?;
            if let Some(p) = pending {
                writer.add_record(p)?;
            }
            writer.sync()?;
            Ok(writer)
        })();
        let writer = match written {
            Ok(w) => w,
            Err(e) => {
                // CURRENT does not name it yet: remove it (best effort).
                let _ = self.fs.remove(&path);
                return Err(e);
            }
        };
        // If this fails CURRENT may name either MANIFEST, so keep both.
        set_current(self.fs.as_ref(), &self.dir, number)?;
        let old = std::mem::replace(&mut self.manifest_number, number);
        self.manifest = Some(writer);
        if old != 0 && old != number {
            // Best effort: a leftover MANIFEST is obsolete and is removed by
            // the DB's obsolete-file sweep.
            let _ = self.fs.remove(&self.dir.join(manifest_file_name(old)));
        }
        Ok(())
    }

    /// Applies `edit` (filling in `next_file_number` and `last_sequence`),
    /// appends it to the MANIFEST, syncs, and then installs the new version.
    /// An edit that does not fit the current version is `InvalidArgument`.
    pub(crate) fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        if edit.column_family != 0 {
            return Err(Error::NotSupported(format!(
                "column family {}",
                edit.column_family
            )));
        }
        if let Some(l) = edit.log_number {
            if l < self.log_number || l >= self.next_file_number {
                return Err(Error::InvalidArgument(format!(
                    "edit log number {l} outside [{}, {})",
                    self.log_number, self.next_file_number
                )));
            }
        }
        let mut builder = VersionBuilder::new(&self.current);
        let built = builder
            .apply(edit, "log_and_apply", 0)
            .and_then(|()| builder.build());
        let version = built.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("bad version edit: {what}"))
            }
            e => e,
        })?;
        let roll = self
            .manifest
            .as_ref()
            .is_none_or(|w| w.file_size() >= self.max_manifest_size);
        let roll_number = roll.then(|| self.new_file_number());
        if let Some(s) = edit.last_sequence {
            self.last_sequence = self.last_sequence.max(s);
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        let written = match (roll_number, self.manifest.as_mut()) {
            (Some(number), _) => self.write_new_manifest(number, Some(&rec)),
            (None, Some(w)) => w.add_record(&rec).and_then(|()| w.sync()),
            (None, None) => Err(Error::InvalidArgument("no MANIFEST writer".into())),
        };
        if let Err(e) = written {
            self.manifest = None;
            return Err(e);
        }
        if let Some(l) = edit.log_number {
            self.log_number = l;
        }
        if let Some(p) = edit.prev_log_number {
            self.prev_log_number = p;
        }
        self.install(version);
        Ok(())
    }

    fn install(&mut self, v: Version) {
        self.older.retain(|w| w.strong_count() > 0);
        let old = std::mem::replace(&mut self.current, Arc::new(v));
        self.older.push(Arc::downgrade(&old));
    }

    /// Numbers of the SSTs referenced by the current version or by any older
    /// version someone still holds. Files not in this set (and not being
    /// written) are obsolete.
    pub(crate) fn live_files(&self) -> HashSet<FileNum> {
        let mut out = HashSet::new();
        self.current.live_file_numbers(&mut out);
        for v in self.older.iter().filter_map(Weak::upgrade) {
            v.live_file_numbers(&mut out);
        }
        out
    }

    /// The current version.
    pub(crate) fn current(&self) -> Arc<Version> {
        Arc::clone(&self.current)
    }

    /// Hands out a new file number.
    pub(crate) fn new_file_number(&mut self) -> FileNum {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// Makes sure `n` is never handed out by `new_file_number`.
    pub(crate) fn mark_file_number_used(&mut self, n: FileNum) {
        self.next_file_number = self.next_file_number.max(n.saturating_add(1));
    }

    /// The number `new_file_number` would return next.
    pub(crate) fn next_file_number(&self) -> FileNum {
        self.next_file_number
    }

    /// The last sequence number used.
    pub(crate) fn last_sequence(&self) -> SeqNo {
        self.last_sequence
    }

    /// Records that sequence numbers up to `s` are used (persisted with the
    /// next edit). Requires `s >= last_sequence()`.
    #[cfg(test)]
    pub(crate) fn set_last_sequence(&mut self, s: SeqNo) {
        debug_assert!(
            s >= self.last_sequence,
            "sequence went back: {s} < {}",
            self.last_sequence
        );
        self.last_sequence = s;
    }

    /// WALs numbered below this are no longer needed.
    pub(crate) fn log_number(&self) -> FileNum {
        self.log_number
    }

    /// The previous log number (0 when unused).
    pub(crate) fn prev_log_number(&self) -> FileNum {
        self.prev_log_number
    }

    /// Number of the live MANIFEST.
    pub(crate) fn manifest_file_number(&self) -> FileNum {
        self.manifest_number
    }

    /// Bytes written to the live MANIFEST (0 when there is no writer).
    pub(crate) fn manifest_file_size(&self) -> u64 {
        self.manifest.as_ref().map_or(0, LogWriter::file_size)
    }

    /// Sets the size past which `log_and_apply` rolls the MANIFEST.
    #[cfg(test)]
    pub(crate) fn set_max_manifest_size(&mut self, bytes: u64) {
        self.max_manifest_size = bytes;
    }

    /// The DB's identity.
    #[cfg(test)]
    pub(crate) fn db_id(&self) -> &str {
        &self.db_id
    }

    /// The DB directory.
    #[cfg(test)]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }
}

#[derive(Default)]
struct Recovered {
    log_number: Option<FileNum>,
    prev_log_number: Option<FileNum>,
    next_file_number: Option<FileNum>,
    last_sequence: Option<SeqNo>,
    db_id: Option<String>,
}

/// Reads every edit of the MANIFEST at `path` (numbered `number`) and calls
/// `f(record_offset, edit)` for each. Returns `Some(offset)` when the file
/// ends with a torn record at `offset` (tolerated: never acknowledged), `None`
/// on a clean end. A damaged record before the end is `Corruption` naming the
/// file and offset. Read-only; also used by the inspection tools.
pub(crate) fn read_manifest(
    fs: &dyn FileSystem,
    path: &Path,
    number: FileNum,
    mut f: impl FnMut(u64, VersionEdit) -> Result<()>,
) -> Result<Option<u64>> {
    let name = path.display().to_string();
    let mut reader = LogReader::new(fs.open_sequential(path)?, name.clone(), number);
    let mut buf = Vec::new();
    loop {
        match reader.read_record(&mut buf)? {
            ReadOutcome::Record { offset } => f(offset, VersionEdit::decode(&buf, &name, offset)?)?,
            ReadOutcome::Eof => return Ok(None),
            ReadOutcome::TornTail { offset } => return Ok(Some(offset)),
            ReadOutcome::Corrupt { offset, what, .. } => {
                return Err(Error::corruption(name, offset, what))
            }
        }
    }
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
