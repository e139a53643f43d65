//! Applying version edits: checked against the current versions and built
//! into new ones (`prepare`, `check_and_build`), appended to the MANIFEST
//! outside the DB mutex (`begin_apply` → write → `finish_apply`), or all at
//! once (`log_and_apply`); a MANIFEST past its size limit is rolled, its
//! first records a snapshot of every family (`snapshot_edits`).

use crate::base::FileNum;
use crate::error::{Error, Result};
use crate::version::builder::VersionBuilder;
use crate::version::edit::VersionEdit;
use crate::version::edit::{BlobFileAddition, BlobFileGarbage};
use crate::version::manifest_write::{Change, ManifestWrite, Roll};
use crate::version::version::Version;
use std::collections::HashMap;
use std::sync::Arc;

use super::{FamilyVersions, VersionSet, COMPARATOR_NAME};

impl VersionSet {
    /// The edits describing the whole current state (the first records of
    /// every MANIFEST): the counters and the default family first, then one
    /// creating edit per other family with its files.
    pub(super) fn snapshot_edits(&self) -> Vec<VersionEdit> {
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
    pub(super) fn roll_now(&mut self) -> Result<()> {
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

    pub(super) fn prepare(
        &mut self,
        edits: &mut [VersionEdit],
        force_roll: bool,
    ) -> Result<ManifestWrite> {
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
    pub(super) fn check_and_build(&self, edits: &[VersionEdit]) -> Result<Vec<Change>> {
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
}
