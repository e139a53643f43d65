//! Recovering a version set from the MANIFEST named by CURRENT (`recover`):
//! the edits replayed in order, every table they leave live checked to
//! exist, and the families listed without a full recovery
//! (`list_column_families`).

use crate::base::FileNum;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::version::builder::VersionBuilder;
use crate::version::current::read_current;
use crate::version::edit::VersionEdit;
use crate::version::filename::manifest_file_name;
use crate::version::version::Version;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{
    check_tables_present, read_manifest, FamilyVersions, Recovered, RecoveredFamily, VersionSet,
    COMPARATOR_NAME, DEFAULT_COLUMN_FAMILY,
};

impl VersionSet {
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

    pub(super) fn recover_impl(
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
                dir.join(crate::version::filename::CURRENT_FILE_NAME)
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
}
