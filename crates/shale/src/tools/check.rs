//! [`check_db`]: verifies every checksum of every live file of a DB, as
//! `shale check` shows it: CURRENT, the MANIFEST it names (every record),
//! every table the MANIFEST lists (present, of the recorded size, footer,
//! meta blocks, index, filter and every data block), every blob file it
//! lists (present, of the recorded size, header, footer and every record,
//! and the footer's blob count and bytes equal to the MANIFEST's), every
//! WAL recovery would replay (every record and batch), and the newest
//! OPTIONS file.
//!
//! Blob references: every `BlobIndex` entry of a live table must decode
//! and point into a blob file the MANIFEST lists for the table's column
//! family, its whole record between the file's header and footer by the
//! size the MANIFEST records. A violation (a reference into an unlisted
//! file, e.g. one a repair lost; one past the end) is a problem naming the
//! table, one per table and blob file with the count of such references
//! and the first key (a read of those keys fails).
//!
//! The live files are the MANIFEST's edits replayed as recovery applies
//! them, per column family: a table leaves when an edit deletes it, a blob
//! file when the garbage its edits add reaches its blob count, and a
//! dropped family's files all go.
//!
//! Every problem is one `Error` (`Corruption { file, offset, what }` for
//! damage and for a listed file that is missing), collected rather than
//! returned at the first: the report says everything that is wrong. Files
//! the MANIFEST does not list (orphan tables and blob files, obsolete WALs)
//! are only noted. Read-only; takes no lock.
//!
//! A DB in use: when another handle holds the DB's `LOCK` at the start or
//! the end of the check (probed, never held, and only where a LOCK file
//! exists, so nothing is written), the running DB may delete, replace or
//! append to files while they are read. A problem about a file that is
//! then gone, or whose size changed during the check, or that is the WAL
//! being written (the newest at the start, or a newer one), is not damage: it
//! becomes a note saying the file could not be checked
//! ([`CheckReport::skipped`] counts them) and [`CheckReport::in_use`] is
//! set. Damage in a file that stayed as it was is still a problem. Stop the
//! process for a complete check.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use crate::blob::format::{FOOTER_LEN, HEADER_LEN};
use crate::blob::BlobIndex;
use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::version::filename::{
    blob_file_name, manifest_file_name, parse_file_name, table_file_name, FileType, LOCK_FILE_NAME,
};
use crate::version::read_current;

use super::blob_file::verify_blob_file;
use super::keys::EntryKind;
use super::manifest::{ManifestEdit, ManifestReader};
use super::options_file::OptionsFile;
use super::sst::SstReader;
use super::wal::WalReader;

/// A file `check_db` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedFile {
    /// The file's name in the DB directory.
    pub name: String,
    /// `CURRENT`, `MANIFEST`, `SST`, `BLOB`, `WAL` or `OPTIONS`.
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
    /// Observations that are not damage (orphan tables and blob files, a
    /// torn WAL tail).
    pub notes: Vec<String>,
    /// True when another handle held the DB's `LOCK` (see the module
    /// comment).
    pub in_use: bool,
    /// Problems set aside because the DB in use deleted or changed their
    /// file while it was checked (each with a note).
    pub skipped: usize,
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

/// A blob file the MANIFEST lists: its addition and the garbage found in
/// it since.
struct LiveBlobFile {
    cf: u32,
    count: u64,
    bytes: u64,
    size: u64,
    garbage_count: u64,
    garbage_bytes: u64,
    added_at: u64,
}

/// The live files of the MANIFEST's edits, replayed.
#[derive(Default)]
struct LiveFiles {
    tables: BTreeMap<u64, LiveTable>,
    blob_files: BTreeMap<u64, LiveBlobFile>,
    /// The log number of every live family.
    log_numbers: BTreeMap<u32, u64>,
    /// The DB-wide min log number to keep.
    min_log_to_keep: u64,
}

/// Checks the DB in `dir`. `Err` only when `dir` cannot be listed.
pub fn check_db(dir: &Path) -> Result<CheckReport> {
    let locked_before = lock_is_held(dir);
    let before = file_sizes(dir);
    let mut r = check_files(dir)?;
    r.in_use = locked_before || lock_is_held(dir);
    if r.in_use {
        settle_live_changes(dir, &before, &mut r);
    }
    Ok(r)
}

/// True when another handle holds the LOCK of the DB in `dir` (probed and
/// released at once; a directory without a LOCK file is not locked, and
/// none is created).
fn lock_is_held(dir: &Path) -> bool {
    let path = dir.join(LOCK_FILE_NAME);
    let fs = default_fs();
    fs.exists(&path) && matches!(fs.lock(&path), Err(Error::Locked(_)))
}

/// Every file of `dir` with its size now.
fn file_sizes(dir: &Path) -> BTreeMap<String, u64> {
    let fs = default_fs();
    fs.list(dir)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|n| Some((n.clone(), fs.file_size(&dir.join(&n)).ok()?)))
        .collect()
}

/// For a DB in use: problems about files that are gone or changed since
/// `before` become notes (see the module comment).
fn settle_live_changes(dir: &Path, before: &BTreeMap<String, u64>, r: &mut CheckReport) {
    let now = file_sizes(dir);
    // The newest WAL at the start is the one being written (a memory-mapped
    // WAL does not even change size as it fills); later ones are new.
    let live_wal = before
        .keys()
        .filter_map(|n| match parse_file_name(n) {
            Some((FileType::Log, num)) => Some(num),
            _ => None,
        })
        .max()
        .unwrap_or(u64::MAX);
    let being_written =
        |name: &str| matches!(parse_file_name(name), Some((FileType::Log, n)) if n >= live_wal);
    let changed = |name: &str| {
        !now.contains_key(name) || now.get(name) != before.get(name) || being_written(name)
    };
    let mut kept = Vec::new();
    for e in std::mem::take(&mut r.problems) {
        let name = match &e {
            Error::Corruption { file, .. } => Path::new(file)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned()),
            Error::Io {
                kind: std::io::ErrorKind::NotFound,
                context,
                ..
            } => Some(context.clone()),
            _ => None,
        };
        match name {
            Some(n) if matches!(e, Error::Io { .. }) || changed(&n) => {
                r.skipped += 1;
                r.notes.push(format!(
                    "{n}: not checked: deleted or changed by the process that has the DB open \
                     while it was read ({e})"
                ));
            }
            _ => kept.push(e),
        }
    }
    r.problems = kept;
    r.notes.insert(
        0,
        format!(
            "the DB is in use (another process holds its LOCK): every file that stayed \
             as it was is checked; {} problem(s) in files deleted or changed while checked were skipped. \
             Stop the process for a complete check.",
            r.skipped
        ),
    );
}

/// The check itself (see the module comment).
fn check_files(dir: &Path) -> Result<CheckReport> {
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
    let mut live = LiveFiles {
        log_numbers: BTreeMap::from([(0, 0)]),
        ..LiveFiles::default()
    };
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
            read_live_files(&dir.join(m), &mut live, &mut r);
        }
    }
    let manifest_name = manifest.as_deref().unwrap_or("the MANIFEST");

    for (&number, t) in &live.tables {
        let name = table_file_name(number);
        let path = dir.join(&name);
        let file = path.display().to_string();
        if !names.contains(&name) {
            r.problems.push(Error::corruption(
                file,
                0,
                format!(
                    "missing: {} (edit at offset {}) lists it in column family {} level {}, {} bytes",
                    manifest_name,
                    t.added_at,
                    t.cf,
                    t.level,
                    t.size
                ),
            ));
            continue;
        }
        check_size(&mut r, name, "SST", &file, size_of(&path), t.size);
        let sst = match SstReader::open(&path) {
            Ok(s) => s,
            Err(e) => {
                r.problems.push(e);
                continue;
            }
        };
        match sst.verify() {
            Ok(problems) => r.problems.extend(problems),
            Err(e) => r.problems.push(e),
        }
        check_blob_refs(&sst, &file, t.cf, &live.blob_files, manifest_name, &mut r);
    }

    for (&number, b) in &live.blob_files {
        check_blob_file(dir, &names, number, b, manifest_name, &mut r);
    }

    // WALs recovery would replay, oldest first.
    let min_log = live
        .log_numbers
        .values()
        .copied()
        .min()
        .unwrap_or(0)
        .max(live.min_log_to_keep);
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

    let mut orphans: Vec<(u64, &String)> = names
        .iter()
        .filter_map(|n| match parse_file_name(n) {
            Some((FileType::Table, num)) if !live.tables.contains_key(&num) => Some((num, n)),
            Some((FileType::Blob, num)) if !live.blob_files.contains_key(&num) => Some((num, n)),
            _ => None,
        })
        .collect();
    orphans.sort_unstable();
    if manifest.is_some() {
        for (_, name) in orphans {
            r.notes
                .push(format!("{name}: not listed by the MANIFEST (orphan)"));
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

/// Replays the MANIFEST's edits into `live` (see the module comment).
/// Garbage recovery would refuse (for a blob file that is not live, or
/// more than the file holds) is a problem at the edit's offset.
fn read_live_files(path: &Path, live: &mut LiveFiles, r: &mut CheckReport) {
    let mut reader = match ManifestReader::open(path) {
        Ok(m) => m,
        Err(e) => {
            r.problems.push(e);
            return;
        }
    };
    let file = path.display().to_string();
    let mut refused = Vec::new();
    let (damage, left_out) = reader.applied_edits(|e| {
        let cf = e.column_family;
        live.min_log_to_keep = e
            .min_log_number_to_keep
            .unwrap_or(0)
            .max(live.min_log_to_keep);
        if e.cf_drop {
            live.log_numbers.remove(&cf);
            live.tables.retain(|_, t| t.cf != cf);
            live.blob_files.retain(|_, b| b.cf != cf);
            return;
        }
        if e.cf_add.is_some() {
            live.log_numbers.insert(cf, 0);
        }
        if let Some(l) = e.log_number {
            live.log_numbers.insert(cf, l);
        }
        for d in &e.deleted_files {
            live.tables.remove(&d.number);
        }
        for f in &e.new_files {
            live.tables.insert(
                f.number,
                LiveTable {
                    cf,
                    level: f.level,
                    size: f.file_size,
                    added_at: e.offset,
                },
            );
        }
        apply_blob_files(&e, &mut live.blob_files, &file, &mut refused);
    });
    r.problems.extend(refused);
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
}

/// Applies an edit's blob file additions, then its garbage (as recovery
/// does): a file leaves when its garbage count reaches its blob count.
fn apply_blob_files(
    e: &ManifestEdit,
    blobs: &mut BTreeMap<u64, LiveBlobFile>,
    manifest: &str,
    refused: &mut Vec<Error>,
) {
    for a in &e.blob_file_additions {
        blobs.insert(
            a.number,
            LiveBlobFile {
                cf: e.column_family,
                count: a.count,
                bytes: a.bytes,
                size: a.file_size,
                garbage_count: 0,
                garbage_bytes: 0,
                added_at: e.offset,
            },
        );
    }
    for g in &e.blob_file_garbage {
        let Some(b) = blobs.get_mut(&g.number).filter(|b| b.cf == e.column_family) else {
            refused.push(Error::corruption(
                manifest,
                e.offset,
                format!(
                    "garbage for {}, which is not a live blob file of column family {} \
                     (recovery refuses this edit)",
                    blob_file_name(g.number),
                    e.column_family
                ),
            ));
            continue;
        };
        b.garbage_count = b.garbage_count.saturating_add(g.count);
        b.garbage_bytes = b.garbage_bytes.saturating_add(g.bytes);
        if b.garbage_count > b.count || b.garbage_bytes > b.bytes {
            refused.push(Error::corruption(
                manifest,
                e.offset,
                format!(
                    "{}: garbage ({} blobs, {} bytes) exceeds its contents ({} blobs, {} bytes) \
                     (recovery refuses this edit)",
                    blob_file_name(g.number),
                    b.garbage_count,
                    b.garbage_bytes,
                    b.count,
                    b.bytes
                ),
            ));
        }
        if b.garbage_count >= b.count {
            blobs.remove(&g.number);
        }
    }
}

/// Checks one live blob file: present, of the size the MANIFEST says, read
/// whole, and holding the blobs the MANIFEST counts.
fn check_blob_file(
    dir: &Path,
    names: &HashSet<String>,
    number: u64,
    b: &LiveBlobFile,
    manifest: &str,
    r: &mut CheckReport,
) {
    let name = blob_file_name(number);
    let path = dir.join(&name);
    let file = path.display().to_string();
    if !names.contains(&name) {
        r.problems.push(Error::corruption(
            file,
            0,
            format!(
                "missing: {manifest} (edit at offset {}) lists it in column family {}, \
                 {} blobs of {} bytes ({} of them garbage), {} bytes",
                b.added_at, b.cf, b.count, b.bytes, b.garbage_count, b.size
            ),
        ));
        return;
    }
    let fs = default_fs();
    let actual = size_of(&path);
    check_size(r, name, "BLOB", &file, actual, b.size);
    match verify_blob_file(&*fs, &path, number) {
        Ok(reader) => {
            if (reader.record_count(), reader.total_bytes()) != (b.count, b.bytes) {
                r.problems.push(Error::corruption(
                    reader.name(),
                    actual.saturating_sub(FOOTER_LEN as u64),
                    format!(
                        "the file holds {} blobs of {} bytes, {manifest} (edit at offset {}) \
                         says {} blobs of {} bytes",
                        reader.record_count(),
                        reader.total_bytes(),
                        b.added_at,
                        b.count,
                        b.bytes
                    ),
                ));
            }
        }
        Err(e) => r.problems.push(e),
    }
}

/// What is wrong with blob reference `idx` of a key of `key_len` bytes in
/// a table of family `cf`, given the listed blob file `listed` (`None`:
/// the MANIFEST does not list it); `None` when nothing is.
fn blob_ref_problem(
    idx: &BlobIndex,
    key_len: usize,
    cf: u32,
    listed: Option<&LiveBlobFile>,
    manifest: &str,
) -> Option<String> {
    let name = blob_file_name(idx.file_number);
    let Some(b) = listed else {
        return Some(format!("point into {name}, which {manifest} does not list"));
    };
    if b.cf != cf {
        return Some(format!(
            "point into {name}, which {manifest} lists for column family {}, not {cf}",
            b.cf
        ));
    }
    let end = idx.offset.saturating_add(idx.record_len(key_len));
    let records_end = b.size.saturating_sub(FOOTER_LEN as u64);
    if idx.offset < HEADER_LEN as u64 || end > records_end {
        return Some(format!(
            "point at bytes {}..{end} of {name}, outside its records ({HEADER_LEN}..{records_end} \
             of the {} bytes {manifest} lists)",
            idx.offset, b.size
        ));
    }
    None
}

/// Checks the blob references of table `sst` (`file`) of family `cf`
/// against the listed blob files (see the module comment). Entries that
/// do not read were reported by the table's verification.
fn check_blob_refs(
    sst: &SstReader,
    file: &str,
    cf: u32,
    blobs: &BTreeMap<u64, LiveBlobFile>,
    manifest: &str,
    r: &mut CheckReport,
) {
    let Ok(entries) = sst.entries() else { return };
    // Per problem: how many references, and the first key.
    let mut found: BTreeMap<String, (u64, Vec<u8>)> = BTreeMap::new();
    for e in entries.flatten() {
        if e.key.kind != EntryKind::BlobIndex {
            continue;
        }
        let what = match BlobIndex::decode(&e.value) {
            None => Some("are malformed blob indexes".to_string()),
            Some(idx) => {
                let listed = blobs.get(&idx.file_number);
                blob_ref_problem(&idx, e.key.user_key.len(), cf, listed, manifest)
            }
        };
        if let Some(what) = what {
            found.entry(what).or_insert((0, e.key.user_key)).0 += 1;
        }
    }
    for (what, (count, first)) in found {
        r.problems.push(Error::corruption(
            file,
            0,
            format!(
                "{count} blob reference(s) {what} (first: key {})",
                String::from_utf8_lossy(&first).escape_debug()
            ),
        ));
    }
}

/// The size of the file at `path` (0 when it cannot be read).
fn size_of(path: &Path) -> u64 {
    default_fs().file_size(path).unwrap_or(0)
}

/// Records a listed file as checked, and a problem when its size is not
/// the one the MANIFEST recorded.
fn check_size(
    r: &mut CheckReport,
    name: String,
    kind: &'static str,
    file: &str,
    actual: u64,
    expected: u64,
) {
    r.checked.push(CheckedFile {
        name,
        kind,
        bytes: actual,
    });
    if actual != expected {
        r.problems.push(Error::corruption(
            file,
            actual.min(expected),
            format!("file has {actual} bytes, the MANIFEST says {expected}"),
        ));
    }
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

#[cfg(test)]
mod tests;
