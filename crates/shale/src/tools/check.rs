//! [`check_db`]: verifies every checksum of every live file of a DB, as
//! `shale check` shows it: CURRENT, the MANIFEST it names (every record),
//! every table the MANIFEST lists (present, of the recorded size, footer,
//! meta blocks, index, filter and every data block), every WAL recovery
//! would replay (every record and batch), and the newest OPTIONS file.
//!
//! Every problem is one `Error` (`Corruption { file, offset, what }` for
//! damage and for a listed file that is missing), collected rather than
//! returned at the first: the report says everything that is wrong. Files
//! the MANIFEST does not list (orphans, obsolete WALs) are only noted.
//! Read-only; takes no lock.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::version::filename::{manifest_file_name, parse_file_name, table_file_name, FileType};
use crate::version::read_current;

use super::manifest::ManifestReader;
use super::options_file::OptionsFile;
use super::sst::SstReader;
use super::wal::WalReader;

/// A file `check_db` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// The file's name in the DB directory.
    pub name: String,
    /// `CURRENT`, `MANIFEST`, `SST`, `WAL` or `OPTIONS`.
    pub kind: &'static str,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What [`check_db`] found.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// The files read, in the order they were checked.
    pub checked: Vec<CheckedFile>,
    /// Every problem found (empty: the DB is whole).
    pub problems: Vec<Error>,
    /// Observations that are not damage (orphan tables, a torn WAL tail).
    pub notes: Vec<String>,
}

impl CheckReport {
    /// True when no problem was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A table the MANIFEST lists.
struct LiveTable {
    cf: u32,
    level: usize,
    size: u64,
    added_at: u64,
}

/// Checks the DB in `dir`. `Err` only when `dir` cannot be listed.
pub fn check_db(dir: &Path) -> Result<CheckReport> {
    let fs = default_fs();
    let names: HashSet<String> = fs.list(dir)?.into_iter().collect();
    let mut r = CheckReport::default();
    let size = |name: &str| fs.file_size(&dir.join(name)).unwrap_or(0);

    // CURRENT → MANIFEST.
    let manifest = match read_current(&*fs, dir) {
        Ok(n) => {
            r.checked.push(CheckedFile {
                name: "CURRENT".into(),
                kind: "CURRENT",
                bytes: size("CURRENT"),
            });
            Some(manifest_file_name(n))
        }
        Err(Error::Io {
            kind: std::io::ErrorKind::NotFound,
            ..
        }) => {
            r.problems.push(Error::corruption(
                dir.join("CURRENT").display().to_string(),
                0,
                "missing: no CURRENT file names the live MANIFEST (`shale repair` writes one)",
            ));
            None
        }
        Err(e) => {
            r.problems.push(e);
            None
        }
    };
    let mut live: BTreeMap<u64, LiveTable> = BTreeMap::new();
    let mut log_numbers: BTreeMap<u32, u64> = BTreeMap::from([(0, 0)]);
    let mut min_log_to_keep = 0;
    if let Some(m) = &manifest {
        if !names.contains(m) {
            r.problems.push(Error::corruption(
                dir.join(m).display().to_string(),
                0,
                "missing: CURRENT names this MANIFEST",
            ));
        } else {
            r.checked.push(CheckedFile {
                name: m.clone(),
                kind: "MANIFEST",
                bytes: size(m),
            });
            min_log_to_keep = read_live_tables(&dir.join(m), &mut live, &mut log_numbers, &mut r);
        }
    }

    for (&number, t) in &live {
        let name = table_file_name(number);
        let path = dir.join(&name);
        let file = path.display().to_string();
        if !names.contains(&name) {
            r.problems.push(Error::corruption(
                file,
                0,
                format!(
                    "missing: {} (edit at offset {}) lists it in column family {} level {}, {} bytes",
                    manifest.as_deref().unwrap_or("the MANIFEST"),
                    t.added_at,
                    t.cf,
                    t.level,
                    t.size
                ),
            ));
            continue;
        }
        let actual = size(&name);
        r.checked.push(CheckedFile {
            name,
            kind: "SST",
            bytes: actual,
        });
        if actual != t.size {
            r.problems.push(Error::corruption(
                file.as_str(),
                actual.min(t.size),
                format!("file has {actual} bytes, the MANIFEST says {}", t.size),
            ));
        }
        match SstReader::open(&path).and_then(|s| s.verify()) {
            Ok(problems) => r.problems.extend(problems),
            Err(e) => r.problems.push(e),
        }
    }

    // WALs recovery would replay, oldest first.
    let min_log = log_numbers
        .values()
        .copied()
        .min()
        .unwrap_or(0)
        .max(min_log_to_keep);
    let mut logs: Vec<(u64, String)> = names
        .iter()
        .filter_map(|n| match parse_file_name(n) {
            Some((FileType::Log, num)) => Some((num, n.clone())),
            _ => None,
        })
        .collect();
    logs.sort();
    for (num, name) in &logs {
        if *num < min_log {
            r.notes.push(format!(
                "{name}: obsolete WAL (below log number {min_log}), not checked"
            ));
            continue;
        }
        r.checked.push(CheckedFile {
            name: name.clone(),
            kind: "WAL",
            bytes: size(name),
        });
        check_wal(&dir.join(name), *num, &mut r);
    }

    let mut orphans: Vec<u64> = names
        .iter()
        .filter_map(|n| match parse_file_name(n) {
            Some((FileType::Table, num)) if !live.contains_key(&num) => Some(num),
            _ => None,
        })
        .collect();
    orphans.sort_unstable();
    if manifest.is_some() {
        for n in orphans {
            r.notes.push(format!(
                "{}: not listed by the MANIFEST (orphan)",
                table_file_name(n)
            ));
        }
    }

    match OptionsFile::latest_in(dir) {
        Ok(p) => {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            r.checked.push(CheckedFile {
                kind: "OPTIONS",
                bytes: size(&name),
                name,
            });
            if let Err(e) = OptionsFile::read(&p) {
                r.problems.push(e);
            }
        }
        Err(_) => r.notes.push("no OPTIONS file".into()),
    }
    Ok(r)
}

/// Replays the MANIFEST's edits into the set of live tables and the log
/// number of every live family; returns the DB-wide min log number to keep.
fn read_live_tables(
    path: &Path,
    live: &mut BTreeMap<u64, LiveTable>,
    log_numbers: &mut BTreeMap<u32, u64>,
    r: &mut CheckReport,
) -> u64 {
    let mut reader = match ManifestReader::open(path) {
        Ok(m) => m,
        Err(e) => {
            r.problems.push(e);
            return 0;
        }
    };
    let mut min_log_to_keep = 0;
    let (damage, left_out) = reader.applied_edits(|e| {
        let cf = e.column_family;
        min_log_to_keep = e.min_log_number_to_keep.unwrap_or(0).max(min_log_to_keep);
        if e.cf_drop {
            log_numbers.remove(&cf);
            live.retain(|_, t| t.cf != cf);
            return;
        }
        if e.cf_add.is_some() {
            log_numbers.insert(cf, 0);
        }
        if let Some(l) = e.log_number {
            log_numbers.insert(cf, l);
        }
        for d in &e.deleted_files {
            live.remove(&d.number);
        }
        for f in &e.new_files {
            live.insert(
                f.number,
                LiveTable {
                    cf,
                    level: f.level,
                    size: f.file_size,
                    added_at: e.offset,
                },
            );
        }
    });
    r.problems.extend(damage);
    if left_out > 0 {
        r.notes.push(format!(
            "{}: its last atomic group ({left_out} edit(s)) is incomplete; recovery ignores it",
            path.display()
        ));
    }
    if let Some(off) = reader.torn_tail() {
        r.notes.push(format!(
            "{}: ends inside a record at offset {off} (a write cut short; recovery ignores it)",
            path.display()
        ));
    }
    min_log_to_keep
}

fn check_wal(path: &Path, number: u64, r: &mut CheckReport) {
    let mut w = match WalReader::open_numbered(&*default_fs(), path, number) {
        Ok(w) => w,
        Err(e) => return r.problems.push(e),
    };
    loop {
        match w.next_batch() {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e @ Error::Corruption { .. }) => r.problems.push(e),
            Err(e) => return r.problems.push(e),
        }
    }
    if let Some(off) = w.torn_tail() {
        r.notes.push(format!(
            "{}: ends inside a record at offset {off} (a write cut short by a crash)",
            path.display()
        ));
    }
}
