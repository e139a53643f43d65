//! `VersionSet`: the MANIFEST state of a DB — every column family's current
//! `Version`, name, persisted options and log number, the live MANIFEST
//! writer, and the DB-wide counters (next file number, last sequence, largest
//! family id) — plus recovery from CURRENT → MANIFEST.
//!
//! Families: family 0 (`default`) always exists and cannot be dropped. Every
//! other family is created by an edit carrying `cf_add` and dropped by one
//! carrying `cf_drop`; ids are never reused (`max_column_family`). A
//! family's log number says which WALs may still hold its unflushed writes
//! (those numbered at or above it). Several edits written together
//! (`log_and_apply_group`) form an atomic group: recovery applies all of
//! them or, when the MANIFEST ends inside the group, none.
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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::base::{FileNum, SeqNo};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::{LogReader, LogWriter, ReadOutcome};

use super::builder::VersionBuilder;
use super::edit::VersionEdit;
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
    dir: &Path,
    version: &Version,
    manifest: &str,
    added_at: &HashMap<FileNum, u64>,
    present: &HashSet<String>,
) -> Result<()> {
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
                         present with `shale repair {}` (RocksDB's RepairDB; files it cannot \
                         read whole go to lost/) and accept the loss of that file's keys",
                        f.file_size,
                        dir.display(),
                        dir.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The name of family 0.
pub(crate) const DEFAULT_COLUMN_FAMILY: &str = "default";

/// One column family's MANIFEST state.
pub(crate) struct FamilyVersions {
    /// The family's name (unique among live families).
    pub name: String,
    /// The family's persisted options (`name=value` lines; empty for the
    /// default family, whose options come from the OPTIONS file).
    pub options: String,
    current: Arc<Version>,
    /// Versions replaced by a newer one; pruned when dead.
    older: Vec<Weak<Version>>,
    /// WALs numbered below this hold none of the family's unflushed writes.
    log_number: FileNum,
}

impl FamilyVersions {
    fn new(name: String, options: String, version: Version, log_number: FileNum) -> Self {
        FamilyVersions {
            name,
            options,
            current: Arc::new(version),
            older: Vec::new(),
            log_number,
        }
    }

    /// The family's current version.
    pub(crate) fn current(&self) -> &Arc<Version> {
        &self.current
    }
}

/// The MANIFEST state of one DB.
pub(crate) struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn FileSystem>,
    num_levels: usize,
    /// Live families by id; 0 (`default`) always present.
    families: BTreeMap<u32, FamilyVersions>,
    /// Live family names → ids.
    names: HashMap<String, u32>,
    /// Versions of dropped families still held by readers (their files stay
    /// live until the readers are done); pruned when dead.
    dropped: Vec<Weak<Version>>,
    /// Largest family id handed out (persisted; ids are never reused).
    max_column_family: u32,
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
    prev_log_number: FileNum,
    /// DB-wide: WALs below this hold no unflushed write of any family
    /// (persisted; never decreases). See `min_log_number_to_keep`.
    min_log_number_to_keep: FileNum,
    db_id: String,
    max_manifest_size: u64,
    /// An empty version, returned for families that do not exist.
    empty: Arc<Version>,
}

mod recover;

mod apply;

impl VersionSet {
    fn empty(fs: Arc<dyn FileSystem>, dir: &Path, num_levels: usize, db_id: String) -> VersionSet {
        let mut vs = VersionSet {
            dir: dir.to_path_buf(),
            fs,
            num_levels,
            families: BTreeMap::new(),
            names: HashMap::new(),
            dropped: Vec::new(),
            max_column_family: 0,
            manifest: None,
            writing: false,
            rolling_to: None,
            unsure_tables: HashSet::new(),
            unsure_manifests: Vec::new(),
            manifest_number: 0,
            next_file_number: 1,
            last_sequence: 0,
            prev_log_number: 0,
            min_log_number_to_keep: 0,
            db_id,
            max_manifest_size: DEFAULT_MAX_MANIFEST_SIZE,
            empty: Arc::new(Version::new_empty(num_levels)),
        };
        vs.insert_family(
            0,
            FamilyVersions::new(
                DEFAULT_COLUMN_FAMILY.to_string(),
                String::new(),
                Version::new_empty(num_levels),
                0,
            ),
        );
        vs
    }

    fn insert_family(&mut self, id: u32, f: FamilyVersions) {
        self.names.insert(f.name.clone(), id);
        self.families.insert(id, f);
        self.max_column_family = self.max_column_family.max(id);
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

    /// Numbers of the SSTs referenced by a current version, by any older
    /// version someone still holds (of a live or a dropped family), or added
    /// by a failed edit that may have reached the disk (until the next roll).
    /// Files not in this set (and not being written) are obsolete.
    pub(crate) fn live_files(&self) -> HashSet<FileNum> {
        let mut out = self.unsure_tables.clone();
        for f in self.families.values() {
            f.current.live_file_numbers(&mut out);
            for v in f.older.iter().filter_map(Weak::upgrade) {
                v.live_file_numbers(&mut out);
            }
        }
        for v in self.dropped.iter().filter_map(Weak::upgrade) {
            v.live_file_numbers(&mut out);
        }
        out
    }

    /// The current version of family `cf` (an empty one if it does not
    /// exist).
    pub(crate) fn current(&self, cf: u32) -> Arc<Version> {
        self.families
            .get(&cf)
            .map_or_else(|| Arc::clone(&self.empty), |f| Arc::clone(&f.current))
    }

    /// Family `cf`, if live.
    pub(crate) fn family(&self, cf: u32) -> Option<&FamilyVersions> {
        self.families.get(&cf)
    }

    /// The id of the live family named `name`.
    pub(crate) fn family_id(&self, name: &str) -> Option<u32> {
        self.names.get(name).copied()
    }

    /// Live families by id.
    pub(crate) fn families(&self) -> impl Iterator<Item = (u32, &FamilyVersions)> {
        self.families.iter().map(|(&id, f)| (id, f))
    }

    /// Hands out a new family id (never reused, even if the create that
    /// asked for it fails).
    pub(crate) fn new_column_family_id(&mut self) -> u32 {
        self.max_column_family += 1;
        self.max_column_family
    }

    /// Number of levels of every family's versions.
    pub(crate) fn num_levels(&self) -> usize {
        self.num_levels
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

    /// The smallest log number of any live family: WALs numbered below it
    /// hold no unflushed write of any family.
    pub(crate) fn min_log_number(&self) -> FileNum {
        self.families
            .values()
            .map(|f| f.log_number)
            .min()
            .unwrap_or(0)
    }

    /// The persisted DB-wide minimum: WALs numbered below it hold no
    /// unflushed write of any family even where a family's own log number
    /// (that of a family idle since) is lower. Flush edits carry it while
    /// more than one family is live (RocksDB's `min_log_number_to_keep`).
    #[cfg(test)]
    pub(crate) fn min_log_number_to_keep(&self) -> FileNum {
        self.min_log_number_to_keep
    }

    /// The first WAL recovery reads (with `prev_log_number`): WALs below it
    /// hold nothing any family needs, so they may be deleted, and a power
    /// loss may have left them unsynced or their deletion undone.
    pub(crate) fn recovery_log_floor(&self) -> FileNum {
        self.min_log_number().max(self.min_log_number_to_keep)
    }

    /// The log number of family `cf` (0 if it does not exist).
    pub(crate) fn log_number(&self, cf: u32) -> FileNum {
        self.families.get(&cf).map_or(0, |f| f.log_number)
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

/// One family as recovery rebuilds it.
struct RecoveredFamily<'a> {
    name: String,
    options: String,
    builder: VersionBuilder<'a>,
    log_number: Option<FileNum>,
}

/// What recovery has read so far.
#[derive(Default)]
struct Recovered<'a> {
    families: BTreeMap<u32, RecoveredFamily<'a>>,
    max_column_family: u32,
    prev_log_number: Option<FileNum>,
    min_log_number_to_keep: FileNum,
    next_file_number: Option<FileNum>,
    last_sequence: Option<SeqNo>,
    db_id: Option<String>,
}

impl<'a> Recovered<'a> {
    /// Applies one edit (of a complete atomic group, if grouped).
    fn apply(
        &mut self,
        base: &'a Version,
        edit: &VersionEdit,
        file: &str,
        offset: u64,
    ) -> Result<()> {
        let id = edit.column_family;
        let corrupt = |what: String| Error::corruption(file, offset, what);
        self.max_column_family = self
            .max_column_family
            .max(id)
            .max(edit.max_column_family.unwrap_or(0));
        if let Some(name) = &edit.cf_add {
            if id == 0 || self.families.contains_key(&id) {
                return Err(corrupt(format!(
                    "column family {id} ({name:?}) created twice"
                )));
            }
            if self.families.values().any(|f| &f.name == name) {
                return Err(corrupt(format!("two live column families named {name:?}")));
            }
            self.families.insert(
                id,
                RecoveredFamily {
                    name: name.clone(),
                    options: String::new(),
                    builder: VersionBuilder::new(base),
                    log_number: None,
                },
            );
        }
        if edit.cf_drop {
            if id == 0 || self.families.remove(&id).is_none() {
                return Err(corrupt(format!(
                    "drop of column family {id}, which is not live"
                )));
            }
        } else {
            let Some(f) = self.families.get_mut(&id) else {
                return Err(corrupt(format!(
                    "edit of column family {id}, which is not live"
                )));
            };
            f.builder.apply(edit, file, offset)?;
            f.log_number = edit.log_number.or(f.log_number);
            if let Some(o) = &edit.cf_options {
                f.options = o.clone();
            }
        }
        self.prev_log_number = edit.prev_log_number.or(self.prev_log_number);
        self.min_log_number_to_keep = self
            .min_log_number_to_keep
            .max(edit.min_log_number_to_keep.unwrap_or(0));
        self.next_file_number = edit.next_file_number.or(self.next_file_number);
        self.last_sequence = edit.last_sequence.or(self.last_sequence);
        self.db_id = edit.db_id.clone().or(self.db_id.take());
        Ok(())
    }
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
mod tests;
