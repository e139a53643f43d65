//! The blob side of [`super::repair_db`] (step 4 of its module comment):
//! given the blob files present and the references the kept tables hold
//! into them, decides which blob files rejoin which family, with what
//! garbage, and which are set aside or lost.
//!
//! - A blob file some kept table references and that reads whole (header,
//!   every record, footer: [`verify_blob_file`]) joins each family whose
//!   tables reference it, with its footer's blob count and record bytes
//!   and its size. Its garbage in that family is its blobs minus the
//!   family's references to it (bytes likewise), which is what later
//!   compactions count down from: each reference a compaction drops adds
//!   one blob of garbage, and the file leaves once every blob is garbage.
//! - A blob file no kept table references is set aside: its blobs are
//!   unreachable (their tables were lost or set aside, or a crash cut the
//!   job writing it short).
//! - A referenced blob file that does not read whole is set aside and its
//!   blobs are lost; so are those of a referenced (or, by the old MANIFEST,
//!   listed) blob file that is gone. The tables referencing it stay: the
//!   notes name them.
//!
//! Read-only: the caller moves the files. Thread-safety: plain functions.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::version::filename::{blob_file_name, table_file_name};
use crate::version::{BlobFileAddition, BlobFileGarbage};

use super::blob_file::verify_blob_file;

/// Blob references per blob file number: (count, bytes of the whole
/// records they point to).
pub(super) type BlobRefs = BTreeMap<u64, (u64, u64)>;

/// The references of one kept table into one blob file.
pub(super) struct TableRefs {
    /// The table's family in the repaired DB.
    pub cf: u32,
    /// The table's number.
    pub table: u64,
    /// References, and the bytes of the whole records they point to.
    pub count: u64,
    pub bytes: u64,
}

/// A blob file joining a family of the repaired DB.
pub(super) struct BlobJoin {
    pub cf: u32,
    /// Its file name.
    pub name: String,
    pub addition: BlobFileAddition,
    /// Its blobs the family's tables do not reference (`None`: none).
    pub garbage: Option<BlobFileGarbage>,
    /// Its blobs the family's tables reference.
    pub referenced: u64,
}

/// What becomes of the blob files (see the module comment).
#[derive(Default)]
pub(super) struct BlobPlan {
    /// Blob files joining families.
    pub joins: Vec<BlobJoin>,
    /// Present blob files no kept table references: to set aside.
    pub unreferenced: Vec<String>,
    /// Present, referenced blob files that do not read whole, with the
    /// damage: to set aside; their blobs are lost.
    pub damaged: Vec<(String, Error)>,
    /// Blob files that are gone though kept tables reference them or the
    /// old MANIFEST lists them: their blobs are lost.
    pub missing: Vec<(String, Error)>,
    /// Observations for the report.
    pub notes: Vec<String>,
}

/// Plans the blob files of `dir`: `present` are the numbers of those in
/// it, `refs` the kept tables' references by blob file number, `listed`
/// the blob files the old MANIFEST lists. `Err` only for an IO error
/// other than damage (a size that cannot be read).
pub(super) fn plan_blob_files(
    fs: &dyn FileSystem,
    dir: &Path,
    present: &[u64],
    mut refs: BTreeMap<u64, Vec<TableRefs>>,
    listed: &BTreeSet<u64>,
) -> Result<BlobPlan> {
    let mut plan = BlobPlan::default();
    for &num in present {
        let name = blob_file_name(num);
        let path = dir.join(&name);
        let table_refs = refs.remove(&num).unwrap_or_default();
        let verified = verify_blob_file(fs, &path, num);
        if table_refs.is_empty() {
            plan.notes.push(match &verified {
                Ok(_) => format!("{name}: no kept table references it; set aside"),
                Err(e) => format!(
                    "{name}: does not read whole ({e}) and no kept table references it \
                     (a job cut short); set aside"
                ),
            });
            plan.unreferenced.push(name);
            continue;
        }
        let r = match verified {
            Ok(r) => r,
            Err(e) => {
                plan.notes.push(dangling(&name, &table_refs, "is damaged"));
                plan.damaged.push((name, e));
                continue;
            }
        };
        let (count, bytes, file_size) = (r.record_count(), r.total_bytes(), fs.file_size(&path)?);
        let mut per_cf: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for t in &table_refs {
            let e = per_cf.entry(t.cf).or_default();
            e.0 += t.count;
            e.1 = e.1.saturating_add(t.bytes);
        }
        for (cf, (ref_count, ref_bytes)) in per_cf {
            if ref_count > count || ref_bytes > bytes {
                plan.notes.push(format!(
                    "{name}: the tables of column family {cf} hold {ref_count} references \
                     ({ref_bytes} bytes) to its {count} blobs ({bytes} bytes): some blobs are \
                     referenced twice (a compaction's input kept beside its output?); no \
                     garbage recorded"
                ));
            }
            let garbage = BlobFileGarbage {
                number: r.number(),
                count: count.saturating_sub(ref_count),
                bytes: bytes.saturating_sub(ref_bytes),
            };
            plan.joins.push(BlobJoin {
                cf,
                name: name.clone(),
                addition: BlobFileAddition {
                    number: r.number(),
                    count,
                    bytes,
                    file_size,
                },
                garbage: (garbage.count > 0).then_some(garbage),
                referenced: ref_count.min(count),
            });
        }
    }
    for (num, table_refs) in &refs {
        let name = blob_file_name(*num);
        plan.notes
            .push(dangling(&name, table_refs, "is not in the directory"));
        let what = "referenced by kept tables but not in the directory";
        plan.missing
            .push((name.clone(), Error::corruption(name, 0, what)));
    }
    for num in listed {
        if !present.contains(num) && !refs.contains_key(num) {
            let name = blob_file_name(*num);
            let what = "listed by the old MANIFEST but not in the directory";
            plan.missing
                .push((name.clone(), Error::corruption(name, 0, what)));
        }
    }
    Ok(plan)
}

/// The note for blob file `name` that `what` (damaged or gone) while kept
/// tables reference it.
fn dangling(name: &str, refs: &[TableRefs], what: &str) -> String {
    let tables: Vec<String> = refs
        .iter()
        .map(|t| format!("{} ({} references)", table_file_name(t.table), t.count))
        .collect();
    format!(
        "{name} {what}; kept tables still reference it: {}; reads of those keys fail as \
         Corruption, and a compaction that drops those references (an overwrite or delete \
         of such a key compacted) fails its MANIFEST edit, as garbage of a blob file the \
         DB does not list, and stops writes",
        tables.join(", ")
    )
}
