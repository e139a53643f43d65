//! [`load_latest_options`]: the options a DB was last opened with (RocksDB's
//! `LoadLatestOptions`), so that a tool or a restarted service reopens the
//! DB as it was configured instead of with the defaults.
//!
//! Where each part comes from: the DB-wide options and the `default`
//! family's from the newest `OPTIONS-NNNNNN` file (written at every open
//! and `set_options`); every other family, and its options, from the live
//! MANIFEST (the one `CURRENT` names), which records each create, drop and
//! `set_options` of a family as it happens. Shale does not rewrite the
//! OPTIONS file at each create and drop (RocksDB does, which makes creating
//! thousands of families one by one quadratic), so the OPTIONS file alone
//! may lack the families created since the last open; its family sections
//! are used only when no MANIFEST reads whole (a DB being repaired).
//!
//! What an OPTIONS file cannot hold is code: a merge operator or a
//! compaction filter is written by name. Shipped merge operators come back
//! by themselves; any other named operator or filter is taken from the
//! caller's [`SuppliedCode`] by its `name()`, and one not supplied is
//! listed in [`LoadedOptions::unresolved`] (the family then opens without
//! it: call [`LoadedOptions::require_all_code`] to refuse instead).
//!
//! Invariants: reads one file of at most 1 MiB (`OptionsFile::read`);
//! every name in it must be an option this build knows (an unknown name or
//! a bad value is `InvalidArgument` naming the file, the section and the
//! option; a file from a newer `options_file_version` is `NotSupported`);
//! the result is validated as `Db::open` would.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::manifest::ManifestReader;
use super::OptionsFile;
use crate::build::user_filter::CompactionFilter;
use crate::error::{Error, Result};
use crate::merge::MergeOperator;
use crate::options::db_text::{is_db_option_of_default_family, set_db_option};
use crate::options::file::OPTIONS_FILE_VERSION;
use crate::options::{CfOptions, Options};

/// Code an OPTIONS file names but cannot hold, supplied by the caller and
/// matched by `name()`.
#[derive(Clone, Default)]
pub struct SuppliedCode {
    /// Merge operators beyond the shipped ones (`uint64add`, `max`,
    /// `stringappend`, which come back without being supplied).
    pub merge_operators: Vec<Arc<dyn MergeOperator>>,
    /// Compaction filters.
    pub compaction_filters: Vec<Arc<dyn CompactionFilter>>,
}

/// What [`load_latest_options`] read.
#[derive(Clone)]
pub struct LoadedOptions {
    /// The DB-wide options and the `default` family's, with every other
    /// family in `column_families`; ready for `Db::open` once the caller
    /// has set what files do not hold (`fs`, `clock`, listeners, the
    /// rate limiter).
    pub options: Options,
    /// The file read.
    pub file: PathBuf,
    /// Code the file names that was neither shipped nor supplied, one
    /// line each (`family "users": merge_operator "my-counter"`).
    pub unresolved: Vec<String>,
}

impl LoadedOptions {
    /// `InvalidArgument` naming every unresolved operator and filter, if
    /// any: for callers that must not open a family without its code (a
    /// compaction without its filter keeps what the filter would drop).
    pub fn require_all_code(&self) -> Result<()> {
        if self.unresolved.is_empty() {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "{} names code this program does not have: {}",
            self.file.display(),
            self.unresolved.join("; ")
        )))
    }
}

impl std::fmt::Debug for LoadedOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedOptions")
            .field("file", &self.file)
            .field("unresolved", &self.unresolved)
            .finish_non_exhaustive()
    }
}

/// Reads the newest OPTIONS file of the DB in `dir` (see the module
/// comment). No OPTIONS file is `InvalidArgument`.
pub fn load_latest_options(dir: impl AsRef<Path>, code: &SuppliedCode) -> Result<LoadedOptions> {
    let file = OptionsFile::latest_in(dir.as_ref())?;
    let parsed = OptionsFile::read(&file)?;
    let bad = |section: &str, e: Error| match e {
        Error::InvalidArgument(m) => {
            Error::InvalidArgument(format!("{} [{section}]: {m}", file.display()))
        }
        e => e,
    };
    if let Some(v) = parsed.get("Version", "options_file_version") {
        let v: u32 = v.parse().map_err(|_| {
            Error::InvalidArgument(format!(
                "{}: options_file_version {v:?} is not a number",
                file.display()
            ))
        })?;
        if v > OPTIONS_FILE_VERSION {
            return Err(Error::NotSupported(format!(
                "{}: options_file_version {v} is newer than this build reads ({OPTIONS_FILE_VERSION})",
                file.display()
            )));
        }
    }
    let mut options = Options::default();
    let mut unresolved = Vec::new();
    // Each family's lines from its CFOptions and TableOptions sections, in
    // the order the families first appear.
    let mut families: Vec<(String, Vec<(String, String)>)> = Vec::new();
    for s in &parsed.sections {
        if s.name == "DBOptions" {
            for (k, v) in &s.entries {
                set_db_option(&mut options, k, v).map_err(|e| bad(&s.name, e))?;
            }
            continue;
        }
        let Some(family) = family_of(&s.name) else {
            continue;
        };
        let at = match families.iter().position(|(n, _)| n == family) {
            Some(i) => i,
            None => {
                families.push((family.to_string(), Vec::new()));
                families.len() - 1
            }
        };
        families[at].1.extend(s.entries.iter().cloned());
    }
    // The live families from the MANIFEST, when it reads whole, replace the
    // OPTIONS file's sections of families other than `default`.
    if let Some(live) = manifest_families(dir.as_ref()) {
        families.retain(|(n, _)| n == "default");
        for (name, text) in live {
            let lines = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            families.push((name, lines));
        }
    }
    for (name, lines) in families {
        let is_default = name == "default";
        let mut cf = CfOptions::default();
        for (k, v) in &lines {
            let (k, v) = (k.as_str(), v.as_str());
            let section = format!("family \"{name}\"");
            match k {
                _ if is_default && is_db_option_of_default_family(k) => {
                    set_db_option(&mut options, k, v).map_err(|e| bad(&section, e))?
                }
                "merge_operator" => {
                    cf.merge_operator = crate::merge::from_name(v)
                        .or_else(|| code.merge_operators.iter().find(|m| m.name() == v).cloned());
                    if cf.merge_operator.is_none() {
                        unresolved.push(format!("{section}: merge_operator {v:?}"));
                    }
                }
                "compaction_filter" => {
                    cf.compaction_filter = code
                        .compaction_filters
                        .iter()
                        .find(|f| f.name() == v)
                        .cloned();
                    if cf.compaction_filter.is_none() {
                        unresolved.push(format!("{section}: compaction_filter {v:?}"));
                    }
                }
                _ => cf.set_option(k, v).map_err(|e| bad(&section, e))?,
            }
        }
        if is_default {
            options.cf = cf;
        } else {
            options.column_families.push((name, cf));
        }
    }
    options.validate().map_err(|e| bad("validation", e))?;
    Ok(LoadedOptions {
        options,
        file,
        unresolved,
    })
}

/// The live families other than `default` of the MANIFEST `dir/CURRENT`
/// names, with their persisted options text, in id order; `None` when it
/// cannot be read to its end (a damaged or missing MANIFEST: the OPTIONS
/// file's sections are used then).
fn manifest_families(dir: &Path) -> Option<Vec<(String, String)>> {
    let path = super::current_manifest(dir).ok()?;
    let mut r = ManifestReader::open(&path).ok()?;
    let mut live: std::collections::BTreeMap<u32, (String, String)> = Default::default();
    let (damage, _) = r.applied_edits(|e| {
        if e.column_family == 0 {
            return;
        }
        if e.cf_drop {
            live.remove(&e.column_family);
            return;
        }
        if let Some(name) = e.cf_add {
            live.insert(e.column_family, (name, String::new()));
        }
        if let (Some(o), Some(f)) = (e.cf_options, live.get_mut(&e.column_family)) {
            f.1 = o;
        }
    });
    if damage.is_some() {
        return None;
    }
    Some(live.into_values().collect())
}

/// The family a `CFOptions "name"` or `TableOptions/BlockBasedTable
/// "name"` section belongs to.
fn family_of(section: &str) -> Option<&str> {
    let rest = section
        .strip_prefix("CFOptions ")
        .or_else(|| section.strip_prefix("TableOptions/BlockBasedTable "))?;
    rest.strip_prefix('"')?.strip_suffix('"')
}

#[cfg(test)]
mod tests;
