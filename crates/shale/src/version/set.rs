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
use super::current::read_current;
use super::edit::VersionEdit;
use super::edit::{BlobFileAddition, BlobFileGarbage};
use super::filename::manifest_file_name;
use super::manifest_write::{Change, ManifestWrite, Roll};
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

    /// Recovers from `dir/CURRENT` and the MANIFEST it names, then rolls to a
    /// new MANIFEST (so the old one, possibly with a torn tail, is never
    /// appended to). A torn tail is tolerated (that edit was never
    /// acknowledged), and so is an atomic group the MANIFEST ends inside (it
    /// is discarded whole); any other damage is `Corruption` with file and
    /// offset.
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
        let mut s = Recovered::default();
        s.families.insert(
            0,
            RecoveredFamily {
                name: DEFAULT_COLUMN_FAMILY.to_string(),
                options: String::new(),
                builder: VersionBuilder::new(&base),
                log_number: None,
            },
        );
        // Table number -> offset of the edit that added it (for errors).
        let mut added_at: HashMap<FileNum, u64> = HashMap::new();
        // Edits of an atomic group not yet complete.
        let mut group: Vec<(u64, VersionEdit)> = Vec::new();
        read_manifest(fs.as_ref(), &path, old_number, |offset, edit| {
            if let Some(c) = &edit.comparator {
                if c != COMPARATOR_NAME {
                    return Err(Error::InvalidArgument(format!(
                        "{name}: DB was written with comparator {c:?}, this build uses {COMPARATOR_NAME:?}"
                    )));
                }
            }
            match edit.atomic_group {
                Some(remaining) => {
                    group.push((offset, edit));
                    if remaining > 0 {
                        return Ok(());
                    }
                }
                None if !group.is_empty() => {
                    return Err(Error::corruption(
                        name.as_str(),
                        offset,
                        "edit outside an atomic group that is not complete".to_string(),
                    ));
                }
                None => group.push((offset, edit)),
            }
            for (offset, edit) in group.drain(..) {
                s.apply(&base, &edit, &name, offset)?;
                for n in edit.new_file_numbers() {
                    added_at.insert(n, offset);
                }
            }
            Ok(())
        })?;
        // A group the MANIFEST ends inside was never acknowledged: `group`
        // is dropped unapplied.
        let missing = |what: &str| {
            Error::corruption(name.as_str(), 0, format!("MANIFEST has no {what} entry"))
        };
        let next_file_number = s
            .next_file_number
            .ok_or_else(|| missing("next file number"))?;
        let last_sequence = s.last_sequence.ok_or_else(|| missing("last sequence"))?;
        let mut vs = VersionSet::empty(
            Arc::clone(&fs),
            dir,
            num_levels,
            s.db_id.take().unwrap_or_default(),
        );
        vs.families.clear();
        vs.names.clear();
        let present: HashSet<String> = if check_tables {
            fs.list(dir)?.into_iter().collect()
        } else {
            HashSet::new()
        };
        let mut used = HashSet::new();
        for (id, f) in std::mem::take(&mut s.families) {
            let log_number = match (id, f.log_number) {
                (0, None) => return Err(missing("log number")),
                (_, l) => l.unwrap_or(0),
            };
            let version = f.builder.build()?;
            if check_tables {
                check_tables_present(dir, &version, &name, &added_at, &present)?;
            }
            version.live_file_numbers(&mut used);
            used.insert(log_number);
            vs.insert_family(
                id,
                FamilyVersions::new(f.name, f.options, version, log_number),
            );
        }
        vs.max_column_family = vs.max_column_family.max(s.max_column_family);
        vs.manifest_number = old_number;
        vs.next_file_number = next_file_number;
        vs.prev_log_number = s.prev_log_number.unwrap_or(0);
        vs.min_log_number_to_keep = s.min_log_number_to_keep;
        vs.last_sequence = last_sequence;
        // Never hand out a number that is already in use, whatever the
        // counter says.
        for n in used.into_iter().chain([old_number, vs.prev_log_number]) {
            vs.mark_file_number_used(n);
        }
        vs.roll_now()?;
        Ok(vs)
    }

    /// The names of the live families of the DB in `dir`, read from the
    /// MANIFEST CURRENT names without changing anything (an atomic group the
    /// MANIFEST ends inside is ignored, as recovery ignores it).
    pub(crate) fn list_column_families(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<String>> {
        let number = read_current(fs, dir)?;
        let path = dir.join(manifest_file_name(number));
        let mut names: BTreeMap<u32, String> = BTreeMap::new();
        names.insert(0, DEFAULT_COLUMN_FAMILY.to_string());
        let mut group: Vec<VersionEdit> = Vec::new();
        read_manifest(fs, &path, number, |_, edit| {
            let done = edit.atomic_group.is_none_or(|r| r == 0);
            group.push(edit);
            if done {
                for e in group.drain(..) {
                    if let Some(n) = e.cf_add {
                        names.insert(e.column_family, n);
                    }
                    if e.cf_drop {
                        names.remove(&e.column_family);
                    }
                }
            }
            Ok(())
        })?;
        Ok(names.into_values().collect())
    }

    /// The edits describing the whole current state (the first records of
    /// every MANIFEST): the counters and the default family first, then one
    /// creating edit per other family with its files.
    fn snapshot_edits(&self) -> Vec<VersionEdit> {
        let mut out = Vec::with_capacity(self.families.len());
        for (&id, f) in &self.families {
            let mut e = VersionEdit {
                column_family: id,
                log_number: Some(f.log_number),
                ..Default::default()
            };
            if id == 0 {
                e.comparator = Some(COMPARATOR_NAME.to_string());
                e.prev_log_number = Some(self.prev_log_number);
                // Only when it says more than the families' own log
                // numbers (then the edit needs format 3).
                if self.min_log_number_to_keep > self.min_log_number() {
                    e.min_log_number_to_keep = Some(self.min_log_number_to_keep);
                }
                e.next_file_number = Some(self.next_file_number);
                e.last_sequence = Some(self.last_sequence);
                e.db_id = Some(self.db_id.clone());
                e.max_column_family = Some(self.max_column_family);
            } else {
                e.cf_add = Some(f.name.clone());
                e.cf_options = Some(f.options.clone());
            }
            for level in 0..f.current.num_levels() {
                for file in f.current.files(level) {
                    e.add_file(level, (**file).clone());
                }
            }
            for b in f.current.blob_files().values() {
                e.blob_file_additions.push(BlobFileAddition {
                    number: b.number,
                    count: b.count,
                    bytes: b.bytes,
                    file_size: b.file_size,
                });
                if b.garbage_count > 0 {
                    e.blob_file_garbage.push(BlobFileGarbage {
                        number: b.number,
                        count: b.garbage_count,
                        bytes: b.garbage_bytes,
                    });
                }
            }
            out.push(e);
        }
        out
    }

    /// Writes a new MANIFEST holding just the snapshot and points CURRENT at
    /// it (create and recover; no other writer can be in flight).
    fn roll_now(&mut self) -> Result<()> {
        let mut w = self.prepare(&mut [], true)?;
        let r = w.run();
        self.finish_apply(w, r)
    }

    /// Applies `edit` (filling in `next_file_number` and `last_sequence`),
    /// appends it to the MANIFEST, syncs, and then installs the new version.
    /// An edit that does not fit the current state is `InvalidArgument`.
    /// Does the IO in place: for callers that own the set alone (open,
    /// tests); the DB releases its mutex around `ManifestWrite::run` instead.
    #[cfg(test)]
    pub(crate) fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        self.log_and_apply_group(std::slice::from_mut(edit))
    }

    /// `log_and_apply` for several edits written as one atomic group with
    /// one sync (see the module comment).
    pub(crate) fn log_and_apply_group(&mut self, edits: &mut [VersionEdit]) -> Result<()> {
        let mut w = self.begin_apply(edits)?;
        let r = w.run();
        self.finish_apply(w, r)
    }

    /// First half of `log_and_apply`: checks the edits against the current
    /// state (each against the state the ones before it leave), builds the
    /// new versions, fills in the edits' counters (and atomic-group fields
    /// when there are several), decides whether to roll, and takes the
    /// MANIFEST writer out of the set. Fails (changing nothing) if another
    /// write is in flight or an edit does not fit. Call
    /// `ManifestWrite::run`, then `finish_apply`.
    pub(crate) fn begin_apply(&mut self, edits: &mut [VersionEdit]) -> Result<ManifestWrite> {
        self.prepare(edits, false)
    }

    fn prepare(&mut self, edits: &mut [VersionEdit], force_roll: bool) -> Result<ManifestWrite> {
        if self.writing {
            return Err(Error::InvalidArgument(
                "a MANIFEST write is already in flight".into(),
            ));
        }
        let changes = self.check_and_build(edits)?;
        let roll = force_roll
            || self
                .manifest
                .as_ref()
                .is_none_or(|w| w.file_size() >= self.max_manifest_size);
        let roll_number = roll.then(|| self.new_file_number());
        for e in edits.iter() {
            if let Some(s) = e.last_sequence {
                self.last_sequence = self.last_sequence.max(s);
            }
        }
        let n = edits.len();
        let mut records = Vec::with_capacity(n);
        let mut added = Vec::new();
        let mut prev_log_number = None;
        let mut min_log_number_to_keep = None;
        for (i, edit) in edits.iter_mut().enumerate() {
            edit.next_file_number = Some(self.next_file_number);
            edit.last_sequence = Some(self.last_sequence);
            if n > 1 {
                edit.atomic_group = Some((n - 1 - i) as u32);
            }
            if edit.cf_add.is_some() {
                edit.max_column_family = Some(self.max_column_family);
            }
            let mut rec = Vec::new();
            edit.encode(&mut rec);
            records.push(rec);
            prev_log_number = edit.prev_log_number.or(prev_log_number);
            min_log_number_to_keep = edit.min_log_number_to_keep.max(min_log_number_to_keep);
            added.extend(edit.new_file_numbers());
        }
        let roll = roll_number.map(|number| Roll {
            number,
            snapshot: self
                .snapshot_edits()
                .iter()
                .map(|e| {
                    let mut rec = Vec::new();
                    e.encode(&mut rec);
                    rec
                })
                .collect(),
            previous: self.manifest_number,
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
            records,
            changes,
            prev_log_number,
            min_log_number_to_keep,
            added,
            current_attempted: false,
        })
    }

    /// Checks each edit against the state the earlier ones leave and builds
    /// the resulting changes.
    fn check_and_build(&self, edits: &[VersionEdit]) -> Result<Vec<Change>> {
        // Family id -> its version after the edits so far (`None`: dropped
        // by one of them), for families the edits touch.
        let mut overlay: HashMap<u32, Option<(Arc<Version>, FileNum)>> = HashMap::new();
        let mut new_names: HashMap<&str, u32> = HashMap::new();
        let mut changes = Vec::with_capacity(edits.len());
        let bad = |m: String| Error::InvalidArgument(m);
        for edit in edits {
            let id = edit.column_family;
            let state = match overlay.get(&id) {
                Some(s) => s.clone(),
                None => self
                    .families
                    .get(&id)
                    .map(|f| (Arc::clone(&f.current), f.log_number)),
            };
            if let Some(name) = &edit.cf_add {
                if state.is_some() {
                    return Err(bad(format!("column family id {id} already exists")));
                }
                let taken = new_names
                    .get(name.as_str())
                    .is_some_and(|i| overlay.get(i).is_some_and(|s| s.is_some()))
                    || self
                        .names
                        .get(name)
                        .is_some_and(|i| overlay.get(i).is_none_or(|s| s.is_some()));
                if taken {
                    return Err(bad(format!("column family \"{name}\" already exists")));
                }
                if id == 0 || id > self.max_column_family {
                    return Err(bad(format!("column family id {id} was not handed out")));
                }
                new_names.insert(name, id);
            }
            if edit.cf_drop {
                if id == 0 {
                    return Err(bad("the default column family cannot be dropped".into()));
                }
                if state.is_none() {
                    return Err(bad(format!("column family id {id} does not exist")));
                }
                overlay.insert(id, None);
                changes.push(Change::Drop { cf: id });
                continue;
            }
            let (base, log_number) = match (&edit.cf_add, state) {
                (Some(_), _) => (Arc::clone(&self.empty), 0),
                (None, Some(s)) => s,
                (None, None) => return Err(bad(format!("column family id {id} does not exist"))),
            };
            if let Some(l) = edit.log_number {
                if l < log_number || l >= self.next_file_number {
                    return Err(bad(format!(
                        "edit log number {l} outside [{log_number}, {})",
                        self.next_file_number
                    )));
                }
            }
            let touches_files = !edit.new_files.is_empty() || !edit.deleted_files.is_empty();
            let version = if touches_files || edit.cf_add.is_some() {
                let mut builder = VersionBuilder::new(&base);
                let built = builder
                    .apply(edit, "log_and_apply", 0)
                    .and_then(|()| builder.build());
                let v = Arc::new(built.map_err(|e| match e {
                    Error::Corruption { what, .. } => bad(format!("bad version edit: {what}")),
                    e => e,
                })?);
                Some(v)
            } else {
                None
            };
            let new_log = edit.log_number.unwrap_or(log_number);
            overlay.insert(id, Some((version.clone().unwrap_or(base), new_log)));
            changes.push(match &edit.cf_add {
                Some(name) => Change::Add {
                    cf: id,
                    name: name.clone(),
                    options: edit.cf_options.clone().unwrap_or_default(),
                    version: version.unwrap_or_else(|| Arc::clone(&self.empty)),
                    log_number: new_log,
                },
                None => Change::Update {
                    cf: id,
                    version,
                    log_number: edit.log_number,
                    options: edit.cf_options.clone(),
                },
            });
        }
        Ok(changes)
    }

    /// Second half of `log_and_apply`: with `result` of `w.run()`, installs
    /// the changes (and the writer) or, on failure, drops the writer (the
    /// next write rolls) and keeps what the failed edits may have persisted:
    /// the tables they added and a MANIFEST CURRENT may name.
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
        if let Some(p) = w.prev_log_number {
            self.prev_log_number = p;
        }
        if let Some(k) = w.min_log_number_to_keep {
            self.min_log_number_to_keep = self.min_log_number_to_keep.max(k);
        }
        for change in w.changes {
            match change {
                Change::Add {
                    cf,
                    name,
                    options,
                    version,
                    log_number,
                } => {
                    let f = FamilyVersions {
                        name,
                        options,
                        current: version,
                        older: Vec::new(),
                        log_number,
                    };
                    self.insert_family(cf, f);
                }
                Change::Drop { cf } => {
                    if let Some(f) = self.families.remove(&cf) {
                        self.names.remove(&f.name);
                        self.dropped.retain(|w| w.strong_count() > 0);
                        self.dropped.push(Arc::downgrade(&f.current));
                        self.dropped.extend(f.older);
                    }
                }
                Change::Update {
                    cf,
                    version,
                    log_number,
                    options,
                } => {
                    let Some(f) = self.families.get_mut(&cf) else {
                        continue;
                    };
                    if let Some(l) = log_number {
                        f.log_number = l;
                    }
                    if let Some(o) = options {
                        f.options = o;
                    }
                    if let Some(v) = version {
                        f.older.retain(|w| w.strong_count() > 0);
                        let old = std::mem::replace(&mut f.current, v);
                        f.older.push(Arc::downgrade(&old));
                    }
                }
            }
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
#[path = "set_tests.rs"]
mod tests;
