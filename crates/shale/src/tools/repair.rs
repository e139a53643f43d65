//! [`repair_db`]: rebuilds the MANIFEST of a damaged DB from the files
//! present, as RocksDB's `RepairDB` does:
//!
//! 1. Families and table owners come from the newest MANIFEST that still
//!    reads (up to its first damage): names, ids, persisted options, log
//!    numbers, the family of each table it lists. A table it does not list
//!    (all of them without a MANIFEST) joins the family its properties
//!    record (format version 2: `shale.column.family.id` and `.name`),
//!    which is created with the options the newest OPTIONS file has for
//!    that name; a family id whose name a larger id also records was
//!    dropped, and its tables are set aside. Tables of format version 1
//!    record no family: they join the default family, with a warning. WAL
//!    records of an id no MANIFEST or table names go to a family named
//!    `recovered_cf_<id>`. Without a MANIFEST's log numbers, a WAL record
//!    at or below the largest sequence number of its family's recorded
//!    tables is not replayed: it was flushed (and may since have been
//!    compacted away by a later delete).
//! 2. Every WAL recovery could still need (at or above the smallest family
//!    log number the old MANIFEST gives; all of them without one) is read
//!    past its damage, its records replayed into one memtable per family
//!    and written as L0 tables; the WAL then moves to `lost/` (its data is
//!    in the tables now).
//! 3. Every table is read whole (every block's checksum, every key) to find
//!    its key range, sequence numbers and blob references (count and
//!    record bytes per blob file; the oldest blob file it names); a table
//!    that does not read whole moves to `lost/` and the report says why. A
//!    table a MANIFEST that reads whole does not list (the output of a
//!    flush or compaction a crash cut short, or an input not yet deleted:
//!    its data is in the WALs or other tables, and an old input could bring
//!    deleted keys back) moves to `lost/` too; with a damaged or no
//!    MANIFEST it joins its recorded family (step 1).
//! 4. Every blob file is read whole (header, every record, footer). One
//!    that the kept tables reference (entries of kind `BlobIndex`) joins
//!    each family whose tables do, with its footer's blob count and bytes
//!    and its size; what the family's tables do not reference is its
//!    garbage (blobs minus references). A blob file no kept table
//!    references (its tables were lost or set aside, or a crash cut its
//!    job short) moves to `lost/`, and so does a referenced one that does
//!    not read whole (its blobs are lost: the tables referencing it are
//!    kept, the report names them, and reads of those keys fail as
//!    `Corruption`). `repair_blobs.rs` has the details.
//! 5. A new MANIFEST lists every table kept in L0 of its family and the
//!    family's blob files, with the largest sequence number seen as the
//!    last sequence; CURRENT then names it, and the old MANIFESTs move to
//!    `lost/`.
//! 6. A family whose L0 tables overlap in both keys and sequence numbers
//!    (a point read takes the first L0 file holding the key, by largest
//!    sequence number, which is then not always the newest version) is
//!    compacted by opening the repaired DB (with the options of its OPTIONS
//!    file).
//!
//! What was lost is the data of the tables moved to `lost/` and of those
//! the old MANIFEST lists that are gone, the blobs of referenced blob files
//! that are damaged or gone, the damaged stretches of WALs, and (without a
//! readable MANIFEST) which family each table of format version 1 belonged
//! to. Nothing is
//! deleted: every file set aside is in `lost/`. Requires: no process has
//! the DB open (the LOCK is taken).

use super::manifest::ManifestReader;
use super::options_file::OptionsFile;
use super::repair_blobs::{plan_blob_files, TableRefs};
use super::wal::WalReader;
use crate::build::filter::EntryFilter;
use crate::build::writer::{write_outputs, OutputSpec};
use crate::error::{Error, Result};
use crate::fs::{default_fs, FileSystem};
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::sst::{Compression, Table, TableOptions};
use crate::version::filename::{manifest_file_name, parse_file_name, table_file_name, FileType};
use crate::version::{
    set_current, BlobFileAddition, BlobFileGarbage, FileMeta, VersionEdit, COMPARATOR_NAME,
    DEFAULT_COLUMN_FAMILY,
};
use crate::wal::LogWriter;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

mod scan;

use scan::{raw_kind, scan_table};

/// What [`repair_db`] did.
#[derive(Debug, Clone, Default)]
pub struct RepairReport {
    /// The new MANIFEST's file name.
    pub manifest: String,
    /// Tables in the new MANIFEST: (file name, family name, entries).
    pub tables: Vec<(String, String, u64)>,
    /// Blob files in the new MANIFEST: (file name, family name, blobs in
    /// the file, blobs the family's tables reference; the rest is
    /// garbage). A file referenced by two families is listed for each.
    pub blob_files: Vec<(String, String, u64, u64)>,
    /// WALs replayed into new tables: (file name, batches read, tables
    /// written); each is now in `lost/`.
    pub wals: Vec<(String, u64, Vec<String>)>,
    /// Tables and referenced blob files moved to `lost/` because they
    /// could not be read whole, and tables and blob files the old MANIFEST
    /// lists or kept tables reference that are missing, each with the
    /// damage (the lost data).
    pub lost: Vec<(String, Error)>,
    /// Damaged stretches of WALs that were skipped (their records lost).
    pub wal_damage: Vec<Error>,
    /// Other files moved to `lost/` (old MANIFESTs, replayed WALs, blob
    /// files no kept table references).
    pub set_aside: Vec<String>,
    /// The last sequence number of the repaired DB.
    pub last_sequence: u64,
    /// Other observations (families guessed, compactions run).
    pub notes: Vec<String>,
}

/// A family of the repaired DB.
struct Family {
    name: String,
    options: String,
    log_number: u64,
    files: Vec<FileMeta>,
    blob_additions: Vec<BlobFileAddition>,
    blob_garbage: Vec<BlobFileGarbage>,
}

impl Family {
    fn new(name: String) -> Family {
        Family {
            name,
            options: String::new(),
            log_number: 0,
            files: Vec::new(),
            blob_additions: Vec::new(),
            blob_garbage: Vec::new(),
        }
    }
}

/// What the newest readable MANIFEST says.
#[derive(Default)]
struct OldState {
    families: BTreeMap<u32, Family>,
    table_family: HashMap<u64, u32>,
    /// Ingested tables' global sequence numbers (they are not in the files).
    global_seqnos: HashMap<u64, u64>,
    /// Imported tables' original numbers (`FileMeta::written_as`: their
    /// properties name it, not the number they have).
    written_as: HashMap<u64, u64>,
    /// The blob files it lists (those with blobs not yet garbage).
    blob_files: BTreeSet<u64>,
    last_sequence: u64,
    next_file_number: u64,
    max_column_family: u32,
    db_id: Option<String>,
    /// A MANIFEST was read.
    from_manifest: bool,
    /// ... to its end, without damage: it lists every live table.
    whole: bool,
}

/// Rebuilds the DB in `dir`; see the module comment. `Err` when the
/// directory cannot be listed or locked, or a write fails.
pub fn repair_db(dir: &Path) -> Result<RepairReport> {
    let fs = default_fs();
    let _lock = crate::fs::lock_db(&fs, dir)?;
    let mut report = RepairReport::default();
    let mut names = fs.list(dir)?;
    names.sort();
    let (mut tables, mut logs, mut manifests) = (Vec::new(), Vec::new(), Vec::new());
    let mut blob_files = Vec::new();
    let mut max_number = 0;
    for n in &names {
        if let Some((t, num)) = parse_file_name(n) {
            max_number = max_number.max(num);
            match t {
                FileType::Table => tables.push(num),
                FileType::Log => logs.push(num),
                FileType::Manifest => manifests.push(num),
                FileType::Blob => blob_files.push(num),
                _ => {}
            }
        }
    }
    let lost_dir = dir.join("lost");
    fs.create_dir_all(&lost_dir)?;
    let set_aside = |name: &str| fs.rename(&dir.join(name), &lost_dir.join(name));

    let mut old = read_old_state(&*fs, dir, &manifests, &mut report);
    let mut missing: Vec<u64> = old
        .table_family
        .keys()
        .filter(|n| !tables.contains(n))
        .copied()
        .collect();
    missing.sort_unstable();
    for num in missing {
        let name = table_file_name(num);
        let what = "listed by the old MANIFEST but not in the directory";
        report
            .lost
            .push((name.clone(), Error::corruption(name, 0, what)));
    }
    let mut next_number = max_number.max(old.next_file_number).max(1) + 1;
    let mut last_seq = old.last_sequence;

    // The family each table records (format version 2), for the tables no
    // readable MANIFEST places; and the families' options by name from the
    // newest OPTIONS file.
    let recorded = if old.whole {
        Recorded::default()
    } else {
        Recorded::read(&*fs, dir, &tables, &old)
    };

    // WALs → L0 tables.
    let min_log = old
        .families
        .values()
        .map(|f| f.log_number)
        .min()
        .unwrap_or(0);
    logs.sort_unstable();
    let mut mems: BTreeMap<u32, MemTable> = BTreeMap::new();
    for &num in &logs {
        let name = crate::version::filename::log_file_name(num);
        if num < min_log {
            report.notes.push(format!(
                "{name}: obsolete (every family flushed it); set aside"
            ));
            set_aside(&name)?;
            report.set_aside.push(name);
            continue;
        }
        let mut r = WalReader::open_numbered(&*fs, &dir.join(&name), num)?;
        let mut batches = 0;
        loop {
            let b = match r.next_batch() {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e @ Error::Corruption { .. }) => {
                    report.wal_damage.push(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            batches += 1;
            for (seq, e) in (b.sequence..).zip(&b.entries) {
                let cf = e.cf;
                if !old.families.contains_key(&cf) {
                    if old.from_manifest {
                        continue; // a family the MANIFEST dropped
                    }
                    let fam = recorded.family(cf, &mut report);
                    old.families.insert(cf, fam);
                    old.max_column_family = old.max_column_family.max(cf);
                }
                if old.families.get(&cf).is_some_and(|f| num < f.log_number) {
                    continue; // flushed already
                }
                if recorded.flushed.get(&cf).is_some_and(|&f| seq <= f) {
                    continue; // in the family's tables already (see `Recorded`)
                }
                let kind = raw_kind(e.kind);
                let mut value = e.value.clone();
                if let Some(x) = e.expiry {
                    value.extend_from_slice(&x.to_le_bytes());
                }
                mems.entry(cf)
                    .or_insert_with(|| MemTable::new(u64::from(cf)))
                    .add(seq, kind, &e.key, &value);
                last_seq = last_seq.max(seq);
            }
        }
        let written = flush_mems(&fs, dir, &mut mems, &mut next_number, &old)?;
        let mut out = Vec::new();
        for (cf, f) in written {
            out.push(table_file_name(f.number));
            tables.push(f.number);
            old.table_family.entry(f.number).or_insert(cf);
        }
        report.wals.push((name.clone(), batches, out));
        set_aside(&name)?;
    }

    // Tables: read each whole.
    tables.sort_unstable();
    tables.dedup();
    let (mut unowned, mut placed_by_property) = (0, 0);
    let mut refs: BTreeMap<u64, Vec<TableRefs>> = BTreeMap::new();
    for &num in &tables {
        let name = table_file_name(num);
        if fs.file_size(&dir.join(&name))? == 0 {
            report.notes.push(format!(
                "{name}: empty (created just before a crash); set aside"
            ));
            set_aside(&name)?;
            report.set_aside.push(name);
            continue;
        }
        match scan_table(&*fs, dir, num, old.global_seqnos.get(&num).copied()) {
            Ok((mut meta, table_refs)) => {
                meta.written_as = old.written_as.get(&num).copied().unwrap_or(0);
                let cf = match old.table_family.get(&num) {
                    Some(&cf) if old.families.contains_key(&cf) => cf,
                    Some(_) => {
                        report
                            .notes
                            .push(format!("{name}: of a dropped family; set aside"));
                        set_aside(&name)?;
                        report.set_aside.push(name);
                        continue;
                    }
                    None if old.whole => {
                        report.notes.push(format!(
                            "{name}: not listed by the MANIFEST, which reads whole (the output \
                             of a flush or compaction cut short, or an input not yet deleted: \
                             its data is in the WALs or in other tables); set aside"
                        ));
                        set_aside(&name)?;
                        report.set_aside.push(name);
                        continue;
                    }
                    None => match recorded.tables.get(&num) {
                        Some(&(cf, _)) if recorded.superseded(cf) => {
                            report.notes.push(format!(
                                "{name}: of column family id {cf}, whose name a newer family \
                                 has (so it was dropped); set aside"
                            ));
                            set_aside(&name)?;
                            report.set_aside.push(name);
                            continue;
                        }
                        Some(&(cf, _)) => {
                            if let std::collections::btree_map::Entry::Vacant(v) =
                                old.families.entry(cf)
                            {
                                v.insert(recorded.family(cf, &mut report));
                                old.max_column_family = old.max_column_family.max(cf);
                            }
                            placed_by_property += 1;
                            cf
                        }
                        None => {
                            unowned += 1;
                            0
                        }
                    },
                };
                last_seq = last_seq.max(meta.largest_seq);
                let fam = old
                    .families
                    .get_mut(&cf)
                    .ok_or_else(|| Error::InvalidArgument(format!("family {cf} vanished")))?;
                report
                    .tables
                    .push((name, fam.name.clone(), meta.num_entries));
                fam.files.push(meta);
                for (blob, (count, bytes)) in table_refs {
                    refs.entry(blob).or_default().push(TableRefs {
                        cf,
                        table: num,
                        count,
                        bytes,
                    });
                }
            }
            Err(e) => {
                set_aside(&name)?;
                report.lost.push((name, e));
            }
        }
    }
    if placed_by_property > 0 {
        report.notes.push(format!(
            "{}: {placed_by_property} table(s) placed in the column family each records",
            if old.from_manifest {
                "tables the damaged MANIFEST did not list"
            } else {
                "no MANIFEST could be read"
            }
        ));
    }
    if unowned > 0 {
        report.notes.push(format!(
            "WARNING: {unowned} table(s) {} record no column family (SST format version 1): \
             placed in the default family; if they belonged to another family, their keys now \
             read there",
            if old.from_manifest {
                "the damaged MANIFEST did not list"
            } else {
                "found without a MANIFEST"
            }
        ));
    }

    // Blob files: each one the kept tables reference and that reads whole
    // joins the families referencing it.
    blob_files.sort_unstable();
    let plan = plan_blob_files(&*fs, dir, &blob_files, refs, &old.blob_files)?;
    report.notes.extend(plan.notes);
    for name in plan.unreferenced {
        set_aside(&name)?;
        report.set_aside.push(name);
    }
    for (name, e) in plan.damaged {
        set_aside(&name)?;
        report.lost.push((name, e));
    }
    report.lost.extend(plan.missing);
    for j in plan.joins {
        let Some(fam) = old.families.get_mut(&j.cf) else {
            continue;
        };
        let n = j.addition.count;
        report
            .blob_files
            .push((j.name, fam.name.clone(), n, j.referenced));
        fam.blob_additions.push(j.addition);
        fam.blob_garbage.extend(j.garbage);
    }

    // The new MANIFEST.
    let manifest_number = next_number;
    let log_number = next_number + 1;
    next_number += 2;
    let mut edits = Vec::new();
    for (&id, f) in &mut old.families {
        let mut e = VersionEdit {
            column_family: id,
            log_number: Some(log_number),
            ..Default::default()
        };
        if id == 0 {
            e.comparator = Some(COMPARATOR_NAME.to_string());
            e.prev_log_number = Some(0);
            e.next_file_number = Some(next_number);
            e.last_sequence = Some(last_seq);
            e.db_id = old.db_id.clone();
            e.max_column_family = Some(old.max_column_family);
        } else {
            e.cf_add = Some(f.name.clone());
            e.cf_options = Some(f.options.clone());
        }
        for m in f.files.drain(..) {
            e.add_file(0, m);
        }
        e.blob_file_additions = std::mem::take(&mut f.blob_additions);
        e.blob_file_garbage = std::mem::take(&mut f.blob_garbage);
        edits.push(e);
    }
    let needs_compaction: Vec<String> = edits
        .iter()
        .filter(|e| l0_ambiguous(&e.new_files))
        .map(|e| {
            old.families
                .get(&e.column_family)
                .map_or(String::new(), |f| f.name.clone())
        })
        .collect();
    let mname = manifest_file_name(manifest_number);
    let mut w = LogWriter::new(fs.create(&dir.join(&mname))?, manifest_number);
    for e in &edits {
        let mut rec = Vec::new();
        e.encode(&mut rec);
        w.add_record(&rec)?;
    }
    w.sync()?;
    drop(w);
    set_current(&*fs, dir, manifest_number)?;
    for m in manifests {
        let name = manifest_file_name(m);
        set_aside(&name)?;
        report.set_aside.push(name);
    }
    fs.sync_dir(dir)?;
    fs.sync_dir(&lost_dir)?;
    report.manifest = mname;
    report.last_sequence = last_seq;
    drop(_lock);

    if !needs_compaction.is_empty() {
        let all: Vec<String> = old.families.values().map(|f| f.name.clone()).collect();
        compact(dir, &needs_compaction, &all)?;
        report.notes.push(format!(
            "compacted {} (L0 tables overlapping in keys and sequence numbers)",
            needs_compaction.join(", ")
        ));
    }
    Ok(report)
}

/// What the tables record of their families (format version 2), for the
/// tables no readable MANIFEST places, and the families' options by name
/// from the newest OPTIONS file.
#[derive(Default)]
struct Recorded {
    /// Table number → (family id, name) from its properties.
    tables: HashMap<u64, (u32, String)>,
    /// Family id → name, from the tables.
    names: BTreeMap<u32, String>,
    /// Family id → the largest sequence number of its recorded tables:
    /// every write of the family up to it was flushed (memtables flush
    /// oldest first), so WAL records at or below it are in tables already
    /// (or were compacted away: replaying them would bring back what a
    /// later delete removed).
    flushed: BTreeMap<u32, u64>,
    /// Family name → persisted options text (`CfOptions::to_text`).
    options: HashMap<String, String>,
    /// The OPTIONS file the options came from.
    options_file: Option<String>,
}

impl Recorded {
    /// Reads the properties of each of `tables` the MANIFEST state `old`
    /// does not place (a table that does not open is skipped here; the
    /// whole read later sets it aside), and the OPTIONS file.
    fn read(fs: &dyn FileSystem, dir: &Path, tables: &[u64], old: &OldState) -> Recorded {
        let mut r = Recorded::default();
        for &num in tables.iter().filter(|n| !old.table_family.contains_key(n)) {
            let path = dir.join(table_file_name(num));
            let Ok(file) = fs.open_random(&path) else {
                continue;
            };
            let name = path.display().to_string();
            let Ok(t) = Table::open(file, name, num, None, false) else {
                continue;
            };
            let props = t.properties();
            if let Some((id, fam)) = props.column_family.clone() {
                r.names.entry(id).or_insert_with(|| fam.clone());
                let f = r.flushed.entry(id).or_default();
                *f = (*f).max(props.largest_seqno);
                r.tables.insert(num, (id, fam));
            }
        }
        if let Ok(loaded) = super::load_latest_options(dir, &super::SuppliedCode::default()) {
            for (name, cf) in &loaded.options.column_families {
                r.options.insert(name.clone(), cf.to_text());
            }
            r.options_file = loaded
                .file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
        }
        r
    }

    /// True when family `id`'s recorded name is also recorded for a larger
    /// id: ids are never reused and names are unique among live families,
    /// so `id` was dropped and the name created again.
    fn superseded(&self, id: u32) -> bool {
        self.names
            .get(&id)
            .is_some_and(|n| self.names.range(id + 1..).any(|(_, m)| m == n))
    }

    /// Family `id` for a repaired DB whose MANIFEST does not know it: the
    /// name its tables record (else `recovered_cf_<id>`), the options the
    /// OPTIONS file has for that name (else the defaults).
    fn family(&self, id: u32, report: &mut RepairReport) -> Family {
        let Some(name) = self.names.get(&id) else {
            let name = format!("recovered_cf_{id}");
            report.notes.push(format!(
                "column family id {id} is known only from WAL records (no MANIFEST or table \
                 names it): family {name}, default options"
            ));
            return Family::new(name);
        };
        let mut f = Family::new(name.clone());
        match (self.options.get(name), &self.options_file) {
            (Some(o), Some(file)) => {
                f.options = o.clone();
                report.notes.push(format!(
                    "column family {name} (id {id}) restored from its tables, with its options \
                     from {file}"
                ));
            }
            _ => report.notes.push(format!(
                "column family {name} (id {id}) restored from its tables; no OPTIONS file has \
                 its options: it opens with the defaults"
            )),
        }
        f
    }
}

/// Reads MANIFESTs newest first; the first that yields an edit is used, up
/// to its first damage.
fn read_old_state(
    fs: &dyn FileSystem,
    dir: &Path,
    manifests: &[u64],
    report: &mut RepairReport,
) -> OldState {
    let mut nums = manifests.to_vec();
    nums.sort_unstable_by(|a, b| b.cmp(a));
    for num in nums {
        let name = manifest_file_name(num);
        let Ok(mut r) = ManifestReader::open_numbered(fs, &dir.join(&name), num) else {
            continue;
        };
        let mut st = OldState::default();
        st.families.insert(0, default_family());
        let mut live: HashMap<u64, u32> = HashMap::new();
        // Blob files: number → (family, blobs, garbage so far).
        let mut blobs: BTreeMap<u64, (u32, u64, u64)> = BTreeMap::new();
        let mut edits = 0;
        let (damage, _) = r.applied_edits(|e| {
            edits += 1;
            let cf = e.column_family;
            if let Some(n) = &e.cf_add {
                st.families.insert(cf, Family::new(n.clone()));
            }
            if e.cf_drop {
                st.families.remove(&cf);
                live.retain(|_, c| *c != cf);
                blobs.retain(|_, b| b.0 != cf);
                return;
            }
            if let Some(f) = st.families.get_mut(&cf) {
                if let Some(o) = &e.cf_options {
                    f.options = o.clone();
                }
                if let Some(l) = e.log_number {
                    f.log_number = l;
                }
            }
            for d in &e.deleted_files {
                live.remove(&d.number);
            }
            for f in &e.new_files {
                live.insert(f.number, cf);
                if let Some(g) = f.global_seqno {
                    st.global_seqnos.insert(f.number, g);
                }
                if f.written_as != 0 {
                    st.written_as.insert(f.number, f.written_as);
                }
            }
            for a in &e.blob_file_additions {
                blobs.insert(a.number, (cf, a.count, 0));
            }
            for g in &e.blob_file_garbage {
                if let Some(b) = blobs.get_mut(&g.number) {
                    b.2 = b.2.saturating_add(g.count);
                    if b.2 >= b.1 {
                        blobs.remove(&g.number);
                    }
                }
            }
            st.last_sequence = e.last_sequence.unwrap_or(st.last_sequence);
            st.next_file_number = e.next_file_number.unwrap_or(st.next_file_number);
            st.max_column_family = e.max_column_family.unwrap_or(st.max_column_family);
            st.db_id = e.db_id.or(st.db_id.take());
        });
        st.whole = damage.is_none();
        if let Some(e) = damage {
            report
                .notes
                .push(format!("{name}: read up to its damage ({e})"));
        }
        if edits > 0 {
            st.table_family = live;
            st.blob_files = blobs.into_keys().collect();
            st.from_manifest = true;
            report
                .notes
                .push(format!("families and table owners taken from {name}"));
            return st;
        }
    }
    let mut st = OldState::default();
    st.families.insert(0, default_family());
    st
}

fn default_family() -> Family {
    Family::new(DEFAULT_COLUMN_FAMILY.to_string())
}

/// Writes each non-empty memtable as an L0 table (as recovery's flush does:
/// no user code runs; merges stay operands).
fn flush_mems(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    mems: &mut BTreeMap<u32, MemTable>,
    next_number: &mut u64,
    old: &OldState,
) -> Result<Vec<(u32, FileMeta)>> {
    let mut out = Vec::new();
    let stop = AtomicBool::new(false);
    for (cf, mem) in std::mem::take(mems) {
        let mem = Arc::new(mem);
        let mut iter = mem.iter();
        iter.seek_to_first();
        let frags = mem.range_fragments();
        let range_dels = frags
            .as_ref()
            .map_or_else(Vec::new, |f| f.for_output(&[], false));
        let mut filter = EntryFilter::new(Vec::new(), None).with_range_dels(frags);
        let mut alloc = || {
            *next_number += 1;
            *next_number - 1
        };
        let mut spec = OutputSpec {
            // Repair writes its tables buffered, as every tool.
            file_opts: crate::fs::FileOptions::default(),
            rate_limit: None,
            range_dels,
            memory: None,
            builder_memory_limit: usize::MAX,
            fs,
            dir,
            table_opts: TableOptions {
                db_id: old.db_id.clone().unwrap_or_default(),
                compression: Compression::None,
                column_family: old.families.get(&cf).map(|f| (cf, f.name.clone())),
                ..TableOptions::default()
            },
            target_file_size: u64::MAX,
            new_file_number: &mut alloc,
            shutting_down: &stop,
            bytes_per_sync: 0,
            blob: None,
            // Repair rebuilds tables as found; compactions cut them later.
            partitioner: None,
            streams: None,
        };
        for f in write_outputs(&mut iter, &mut filter, &mut spec)?.files {
            out.push((cf, f));
        }
    }
    Ok(out)
}

/// True when two of `files` overlap both in user keys and in sequence
/// numbers (L0's newest-first order is then not per key).
fn l0_ambiguous(files: &[(usize, FileMeta)]) -> bool {
    files.iter().enumerate().any(|(i, (_, a))| {
        files[i + 1..].iter().any(|(_, b)| {
            a.smallest_user_key() <= b.largest_user_key()
                && b.smallest_user_key() <= a.largest_user_key()
                && a.smallest_seq <= b.largest_seq
                && b.smallest_seq <= a.largest_seq
        })
    })
}

/// Opens the repaired DB (whose families are `all`) and compacts
/// `families` whole, with the options of its newest OPTIONS file (never
/// replacing them with the defaults; without a readable one, the defaults
/// with the file's level count).
fn compact(dir: &Path, families: &[String], all: &[String]) -> Result<()> {
    let opts = match super::load_latest_options(dir, &super::SuppliedCode::default()) {
        Ok(l) => {
            let mut o = l.options;
            o.column_families.retain(|(n, _)| all.contains(n));
            o
        }
        Err(_) => {
            // The level count is structural: the DB's own.
            let num_levels = OptionsFile::latest_in(dir)
                .and_then(|p| OptionsFile::read(&p))
                .ok()
                .and_then(|o| o.get("CFOptions \"default\"", "num_levels")?.parse().ok());
            let mut opts = crate::options::Options::default();
            if let Some(n) = num_levels {
                opts.num_levels = n;
            }
            opts
        }
    };
    let db = crate::db::Db::open(dir, opts)?;
    for name in families {
        if let Some(cf) = db.cf(name) {
            db.compact_range_cf(&cf, None, None)?;
        }
    }
    db.close()
}
