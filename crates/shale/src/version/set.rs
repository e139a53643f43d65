//! `VersionSet`: the MANIFEST state of a DB — the current `Version`, the live
//! MANIFEST writer, and the counters (next file number, last sequence, log
//! number) — plus recovery from CURRENT → MANIFEST.
//!
//! Durability contract: `log_and_apply` appends the edit to the MANIFEST and
//! syncs it *before* installing the new version; if the append or sync fails,
//! nothing is installed, the writer is dropped (the next successful call rolls
//! to a fresh MANIFEST), and the error is returned. A failed edit may still
//! have reached the disk, so the tables it adds stay in `live_files` (and a
//! MANIFEST that CURRENT may name stays in `protected_manifests`) until the
//! next successful roll makes CURRENT name a MANIFEST without that edit.
//!
//! MANIFEST rolling: a new MANIFEST starts with a snapshot edit (all files and
//! counters), is synced, then CURRENT is switched (see `current.rs`), and only
//! then is the old MANIFEST deleted. Recovery always rolls; `log_and_apply`
//! rolls when the MANIFEST exceeds `max_manifest_size` or after a failure.
//!
//! Split writes: `log_and_apply` = `begin_apply` (checks, builds the version,
//! captures the counters into the edit, takes the writer out) +
//! `ManifestWrite::run` (IO only) + `finish_apply` (installs). The DB calls
//! the halves with its mutex held and runs the IO with it released; at most
//! one write is in flight (`begin_apply` refuses a second).
//!
//! Thread-safety: not internally synchronized; the DB keeps it under its
//! mutex. `current()` hands out `Arc<Version>`s that readers use without the
//! lock; `live_files` includes every version still held by someone.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::base::{FileNum, SeqNo};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::{LogReader, LogWriter, ReadOutcome};

use super::builder::VersionBuilder;
use super::current::read_current;
use super::edit::VersionEdit;
use super::filename::manifest_file_name;
use super::manifest_write::{ManifestWrite, Roll};
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
    /// `None` before the first MANIFEST, after a failed write, and while a
    /// `ManifestWrite` (which holds it) is in flight.
    manifest: Option<LogWriter>,
    /// A `ManifestWrite` is in flight.
    writing: bool,
    /// Number of the MANIFEST the write in flight rolls to.
    rolling_to: Option<FileNum>,
    /// Tables added by failed edits (which may have reached the disk): live
    /// until the next roll.
    unsure_tables: HashSet<FileNum>,
    /// MANIFESTs CURRENT may name after a failed switch: kept until the next
    /// roll.
    unsure_manifests: Vec<FileNum>,
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
            writing: false,
            rolling_to: None,
            unsure_tables: HashSet::new(),
            unsure_manifests: Vec::new(),
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
        vs.roll_now()?;
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
        vs.roll_now()?;
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

    /// Writes a new MANIFEST holding just the snapshot and points CURRENT at
    /// it (create and recover; no other writer can be in flight).
    fn roll_now(&mut self) -> Result<()> {
        let mut w = self.prepare(None, true)?;
        let r = w.run();
        self.finish_apply(w, r)
    }

    /// Applies `edit` (filling in `next_file_number` and `last_sequence`),
    /// appends it to the MANIFEST, syncs, and then installs the new version.
    /// An edit that does not fit the current version is `InvalidArgument`.
    /// Does the IO in place: for callers that own the set alone (open,
    /// tests); the DB releases its mutex around `ManifestWrite::run` instead.
    pub(crate) fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        let mut w = self.begin_apply(edit)?;
        let r = w.run();
        self.finish_apply(w, r)
    }

    /// First half of `log_and_apply`: checks `edit` against the current
    /// version, builds the new version, fills in the edit's counters, decides
    /// whether to roll, and takes the MANIFEST writer out of the set. Fails
    /// (changing nothing) if another write is in flight or the edit does not
    /// fit. Call `ManifestWrite::run`, then `finish_apply`.
    pub(crate) fn begin_apply(&mut self, edit: &mut VersionEdit) -> Result<ManifestWrite> {
        self.prepare(Some(edit), false)
    }

    fn prepare(
        &mut self,
        edit: Option<&mut VersionEdit>,
        force_roll: bool,
    ) -> Result<ManifestWrite> {
        if self.writing {
            return Err(Error::InvalidArgument(
                "a MANIFEST write is already in flight".into(),
            ));
        }
        let version = match &edit {
            Some(edit) => Some(self.check_and_build(edit)?),
            None => None,
        };
        let roll = force_roll
            || self
                .manifest
                .as_ref()
                .is_none_or(|w| w.file_size() >= self.max_manifest_size);
        let roll_number = roll.then(|| self.new_file_number());
        let mut record = None;
        let (mut log_number, mut prev_log_number, mut added) = (None, None, Vec::new());
        if let Some(edit) = edit {
            if let Some(s) = edit.last_sequence {
                self.last_sequence = self.last_sequence.max(s);
            }
            edit.next_file_number = Some(self.next_file_number);
            edit.last_sequence = Some(self.last_sequence);
            let mut rec = Vec::new();
            edit.encode(&mut rec);
            record = Some(rec);
            log_number = edit.log_number;
            prev_log_number = edit.prev_log_number;
            added = edit.new_file_numbers();
        }
        let roll = roll_number.map(|number| {
            let mut snapshot = Vec::new();
            self.snapshot_edit().encode(&mut snapshot);
            Roll {
                number,
                snapshot,
                previous: self.manifest_number,
            }
        });
        // A roll starts a fresh writer: the old one is closed now.
        let writer = self.manifest.take().filter(|_| roll.is_none());
        self.writing = true;
        self.rolling_to = roll.as_ref().map(|r| r.number);
        Ok(ManifestWrite {
            fs: Arc::clone(&self.fs),
            dir: self.dir.clone(),
            writer,
            roll,
            record,
            version,
            log_number,
            prev_log_number,
            added,
            current_attempted: false,
        })
    }

    /// Checks `edit` against the current version and builds the result.
    fn check_and_build(&self, edit: &VersionEdit) -> Result<Version> {
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
        built.map_err(|e| match e {
            Error::Corruption { what, .. } => {
                Error::InvalidArgument(format!("bad version edit: {what}"))
            }
            e => e,
        })
    }

    /// Second half of `log_and_apply`: with `result` of `w.run()`, installs
    /// the new version (and the writer) or, on failure, drops the writer (the
    /// next write rolls) and keeps what the failed edit may have persisted:
    /// the tables it added and a MANIFEST CURRENT may name.
    pub(crate) fn finish_apply(&mut self, w: ManifestWrite, result: Result<()>) -> Result<()> {
        self.writing = false;
        self.rolling_to = None;
        if let Err(e) = result {
            self.manifest = None;
            self.unsure_tables.extend(w.added);
            if let (Some(roll), true) = (&w.roll, w.current_attempted) {
                self.unsure_manifests.push(roll.number);
            }
            return Err(e);
        }
        if let Some(roll) = &w.roll {
            self.manifest_number = roll.number;
            // CURRENT now names a MANIFEST that has none of the failed
            // edits: what they added is obsolete.
            self.unsure_tables.clear();
            self.unsure_manifests.clear();
        }
        self.manifest = w.writer;
        if let Some(l) = w.log_number {
            self.log_number = l;
        }
        if let Some(p) = w.prev_log_number {
            self.prev_log_number = p;
        }
        if let Some(v) = w.version {
            self.install(v);
        }
        Ok(())
    }

    /// True while a `ManifestWrite` is in flight.
    pub(crate) fn manifest_write_in_flight(&self) -> bool {
        self.writing
    }

    /// False after a failed MANIFEST write (the next write rolls).
    pub(crate) fn has_manifest_writer(&self) -> bool {
        self.manifest.is_some() || self.writing
    }

    /// MANIFEST numbers the obsolete-file sweep must keep besides the live
    /// one: a roll in flight, and MANIFESTs CURRENT may name after a failed
    /// switch. (Their `NNNNNN.dbtmp` CURRENT temp files share the number.)
    pub(crate) fn protected_manifests(&self) -> Vec<FileNum> {
        let mut out = self.unsure_manifests.clone();
        out.extend(self.rolling_to);
        out
    }

    fn install(&mut self, v: Version) {
        self.older.retain(|w| w.strong_count() > 0);
        let old = std::mem::replace(&mut self.current, Arc::new(v));
        self.older.push(Arc::downgrade(&old));
    }

    /// Numbers of the SSTs referenced by the current version, by any older
    /// version someone still holds, or added by a failed edit that may have
    /// reached the disk (until the next roll). Files not in this set (and
    /// not being written) are obsolete.
    pub(crate) fn live_files(&self) -> HashSet<FileNum> {
        let mut out = self.unsure_tables.clone();
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
