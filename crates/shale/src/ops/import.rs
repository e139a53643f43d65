//! `Db::create_column_family_with_import`: a new family holding exactly
//! the tables (at their levels) and blob files of an export directory
//! (`ops/export.rs`; RocksDB's `CreateColumnFamilyWithImport`).
//!
//! Steps:
//! 1. Check, before anything is copied: the family's name and options (as
//!    `create_cf`), the metadata (its version, the comparator, the merge
//!    operator's name, each level below `num_levels`, the files of each
//!    level ≥ 1 disjoint in internal-key order, FIFO families only in L0:
//!    `InvalidArgument`), and every file: a table is opened and read
//!    whole (footer, meta blocks, every data block's checksum, key order,
//!    the entry count and the size the metadata records), a blob file
//!    walked record by record. A damaged file is `Corruption` naming it.
//! 2. Copy each table into the DB directory under a new file number
//!    (hard-linked with `move_files`), each blob file under its own number
//!    (its records' checksums and the tables' references carry it; a
//!    number this DB already uses is refused, so an export's blob files can
//!    be imported once per DB), synced, then the directory synced. The
//!    numbers are pending outputs until the end; a crash leaves them named
//!    by no MANIFEST, and the next open deletes them.
//! 3. Under the DB mutex, no MANIFEST write in flight, the WAL lock held
//!    with no write group in flight: one MANIFEST edit creates the family
//!    and adds every file (a crash leaves the family absent or complete),
//!    and raises the last sequence number to the files' largest if it is
//!    higher (RocksDB's rule: later writes must be newer than every
//!    imported entry); then the family is registered and published. With
//!    `move_files` the export directory's names of the files go afterwards.
//!
//! Entries keep their sequence numbers, so snapshots taken before the
//! import may see imported entries older than them (as in RocksDB).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::base::compare_internal;
use crate::blob::reader::BlobFileReader;
use crate::cf::Cf;
use crate::db::cf_admin;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::options::{CfOptions, CompactionStyle};
use crate::shared::{DbInner, DbState, Reason};
use crate::sst::Table;
use crate::version::filename::{parse_file_name, table_file_name};
use crate::version::{BlobFileAddition, BlobFileGarbage, FileMeta, VersionEdit, COMPARATOR_NAME};

use super::export::{ExportMetadata, ExportedTable, EXPORT_FORMAT_VERSION};

/// RocksDB's `ImportColumnFamilyOptions`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportOptions {
    /// Hard-link the files into the DB (copied where the link fails) and
    /// remove their names from the export directory once the family
    /// exists; otherwise copy them. Default false.
    pub move_files: bool,
}

/// A table checked and, once copied, numbered.
struct Imported {
    src: PathBuf,
    meta: FileMeta,
    level: usize,
}

impl Db {
    /// Creates family `name` with `opts` holding the files of the export
    /// `meta` (from [`Db::export_column_family`] or [`ExportMetadata::load`])
    /// at their levels, in one MANIFEST edit. See `ops/import.rs`.
    pub fn create_column_family_with_import(
        &self,
        name: &str,
        opts: &CfOptions,
        meta: &ExportMetadata,
        iopts: &ImportOptions,
    ) -> Result<Cf> {
        import(self.inner(), name, opts, meta, iopts)
    }
}

fn invalid(what: String) -> Error {
    Error::InvalidArgument(format!("import: {what}"))
}

/// Step 1's checks of the metadata against the options.
fn check_meta(db: &DbInner, opts: &CfOptions, meta: &ExportMetadata) -> Result<()> {
    if meta.format_version != EXPORT_FORMAT_VERSION {
        return Err(Error::NotSupported(format!(
            "import: export metadata version {} (this build reads {EXPORT_FORMAT_VERSION})",
            meta.format_version
        )));
    }
    if meta.comparator != COMPARATOR_NAME {
        return Err(invalid(format!(
            "the export was written with comparator {:?}, this DB uses {COMPARATOR_NAME:?}",
            meta.comparator
        )));
    }
    let ours = opts.merge_operator.as_ref().map(|m| m.name().to_string());
    if meta.merge_operator.is_some() && meta.merge_operator != ours {
        return Err(invalid(format!(
            "the exported family used merge operator {:?}, the options name {:?}",
            meta.merge_operator, ours
        )));
    }
    let mut levels: BTreeMap<usize, Vec<&ExportedTable>> = BTreeMap::new();
    for t in &meta.tables {
        if t.level >= db.opts.num_levels {
            return Err(invalid(format!(
                "{} is at L{}, this DB has {} levels",
                t.name, t.level, db.opts.num_levels
            )));
        }
        if t.smallest_key.len() < 8 || t.largest_key.len() < 8 {
            return Err(invalid(format!(
                "{}: keys of the metadata too short",
                t.name
            )));
        }
        if t.smallest_seqno > t.largest_seqno {
            return Err(invalid(format!("{}: sequence range reversed", t.name)));
        }
        if opts.compaction_style == CompactionStyle::Fifo && t.level > 0 {
            return Err(invalid(format!(
                "{} is at L{}: a FIFO family keeps every table in L0",
                t.name, t.level
            )));
        }
        levels.entry(t.level).or_default().push(t);
    }
    for (level, files) in levels.iter_mut().filter(|(l, _)| **l > 0) {
        // In internal-key order: neighbours may share a boundary user key.
        files.sort_by(|a, b| compare_internal(&a.smallest_key, &b.smallest_key));
        for w in files.windows(2) {
            if compare_internal(&w[0].largest_key, &w[1].smallest_key).is_ge() {
                return Err(invalid(format!(
                    "{} and {} overlap in L{level}",
                    w[0].name, w[1].name
                )));
            }
        }
    }
    Ok(())
}

/// Opens exported file `file_name`: its path, its name for errors, the
/// open file; `Corruption` unless it has the size the metadata says.
fn open_sized(
    db: &DbInner,
    meta: &ExportMetadata,
    file_name: &str,
    size: u64,
) -> Result<(
    std::path::PathBuf,
    String,
    std::sync::Arc<dyn crate::fs::RandomAccessFile>,
)> {
    let src = meta.dir.join(file_name);
    let name = src.display().to_string();
    let file = db.fs.open_random(&src)?;
    if file.len() != size {
        return Err(Error::corruption(
            &name,
            file.len(),
            format!("{} bytes, the export metadata says {size}", file.len()),
        ));
    }
    Ok((src, name, file))
}

/// Step 1's checks of the files: every table read whole, every blob file
/// walked.
fn check_files(db: &DbInner, meta: &ExportMetadata) -> Result<Vec<Imported>> {
    let mut out = Vec::with_capacity(meta.tables.len());
    for t in &meta.tables {
        let (src, name, file) = open_sized(db, meta, &t.name, t.file_size)?;
        let table = Table::open_at(file, name.clone(), 0, None, false, t.global_seqno)?;
        let p = table.properties();
        if p.file_number != t.written_as && !(p.external_version > 0 && p.file_number == 0) {
            return Err(Error::corruption(
                &name,
                0,
                format!(
                    "the table's properties say it is file {}, the export metadata {}",
                    p.file_number, t.written_as
                ),
            ));
        }
        super::ingest::verify_table(&table, &name)?;
        if table.properties().num_entries != t.num_entries {
            return Err(Error::corruption(
                &name,
                0,
                format!(
                    "{} entries, the export metadata says {}",
                    table.properties().num_entries,
                    t.num_entries
                ),
            ));
        }
        let mut m = FileMeta::new(
            0,
            t.file_size,
            t.smallest_key.clone(),
            t.largest_key.clone(),
            t.smallest_seqno,
            t.largest_seqno,
            t.num_entries,
            t.num_deletions,
        );
        m.num_range_deletions = t.num_range_deletions;
        m.expiry_entries = t.expiry_entries;
        m.expiry_max = t.expiry_max;
        m.newest_key_time = t.newest_key_time;
        m.oldest_blob_file = t.oldest_blob_file;
        m.compression = t.compression;
        m.global_seqno = t.global_seqno;
        m.written_as = t.written_as;
        if let Some((a, b)) = &t.range_del_span {
            let _ = m.range_del_span.set((a.0.clone(), b.0.clone()));
        }
        out.push(Imported {
            src,
            meta: m,
            level: t.level,
        });
    }
    for b in &meta.blob_files {
        let (_, name, file) = open_sized(db, meta, &b.name, b.file_size)?;
        BlobFileReader::open(file, &name, b.number)?.verify_all()?;
    }
    Ok(out)
}

/// Blob file numbers this DB uses (a live file, a pending output, or a
/// file of that number in the directory): an import cannot take them.
fn blob_number_taken(st: &DbState, number: u64, in_dir: &[u64]) -> bool {
    st.pending_outputs.contains(&number)
        || in_dir.contains(&number)
        || st.versions.families().any(|(_, f)| {
            let v = f.current();
            v.blob_files().contains_key(&number)
                || (0..v.num_levels()).any(|l| v.files(l).iter().any(|t| t.number == number))
        })
}

fn import(
    db: &Arc<DbInner>,
    name: &str,
    opts: &CfOptions,
    meta: &ExportMetadata,
    iopts: &ImportOptions,
) -> Result<Cf> {
    db.check_open()?;
    db.check_read_write("create_column_family_with_import")?;
    db.check_writable()?;
    cf_admin::check_new(db, name, opts)?;
    if db.state.lock().versions.family_id(name).is_some() {
        return Err(invalid(format!("column family \"{name}\" already exists")));
    }
    check_meta(db, opts, meta)?;
    let mut files = check_files(db, meta)?;
    let mut created: Vec<PathBuf> = Vec::new();
    let mut numbers: Vec<u64> = Vec::new();
    let r = copy_in(db, meta, iopts, &mut files, &mut created, &mut numbers)
        .and_then(|()| install(db, name, opts, meta, &files));
    let mut st = db.state.lock();
    for n in &numbers {
        st.pending_outputs.remove(n);
    }
    drop(st);
    match r {
        Ok(cf) => {
            if iopts.move_files {
                let blobs = meta.blob_files.iter().map(|b| meta.dir.join(&b.name));
                for p in files.iter().map(|f| f.src.clone()).chain(blobs) {
                    let _ = db.fs.remove(&p);
                }
            }
            db.log.info(&format!(
                "column family \"{name}\" created by import from {}: {} tables, {} blob files",
                meta.dir.display(),
                files.len(),
                meta.blob_files.len()
            ));
            Ok(cf)
        }
        Err(e) => {
            for p in &created {
                let _ = db.fs.remove(p);
            }
            Err(e)
        }
    }
}

/// Step 2: tables under new numbers, blob files under theirs.
fn copy_in(
    db: &DbInner,
    meta: &ExportMetadata,
    iopts: &ImportOptions,
    files: &mut [Imported],
    created: &mut Vec<PathBuf>,
    numbers: &mut Vec<u64>,
) -> Result<()> {
    let in_dir: Vec<u64> = db
        .fs
        .list(&db.dir)?
        .iter()
        .filter_map(|n| parse_file_name(n).map(|(_, number)| number))
        .collect();
    for b in &meta.blob_files {
        let taken = {
            let mut st = db.state.lock();
            let taken = blob_number_taken(&st, b.number, &in_dir);
            if !taken {
                st.pending_outputs.insert(b.number);
                st.versions.mark_file_number_used(b.number);
            }
            taken
        };
        if taken {
            return Err(invalid(format!(
                "blob file {} keeps its number (the tables' references name it), and this DB \
                 already uses that number",
                b.name
            )));
        }
        numbers.push(b.number);
        let dest = db.dir.join(&b.name);
        link_or_copy_in(db, &meta.dir.join(&b.name), &dest, iopts.move_files)?;
        created.push(dest);
    }
    // New numbers in the order of the exported ones, so that L0 files
    // whose sequence ranges tie keep their order (`l0_order`).
    let exported_number = |f: &Imported| {
        f.src
            .file_name()
            .and_then(|n| parse_file_name(&n.to_string_lossy()))
            .map_or(0, |(_, n)| n)
    };
    files.sort_by_key(exported_number);
    for f in files.iter_mut() {
        f.meta.number = {
            let mut st = db.state.lock();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            n
        };
        numbers.push(f.meta.number);
        let dest = db.dir.join(table_file_name(f.meta.number));
        link_or_copy_in(db, &f.src, &dest, iopts.move_files)?;
        created.push(dest);
        crate::sync_point!("ImportColumnFamily:Copied");
    }
    db.fs.sync_dir(&db.dir)
}

/// A hard link with `move_files` where the file system can; a synced copy
/// otherwise.
fn link_or_copy_in(
    db: &DbInner,
    from: &std::path::Path,
    to: &std::path::Path,
    link: bool,
) -> Result<()> {
    if !(link && db.fs.link(from, to).is_ok()) {
        db.fs.copy_file(from, to, None)?;
    }
    Ok(())
}

/// Step 3.
fn install(
    db: &Arc<DbInner>,
    name: &str,
    opts: &CfOptions,
    meta: &ExportMetadata,
    files: &[Imported],
) -> Result<Cf> {
    let mut st = db.state.lock();
    crate::shared::manifest::wait_for_manifest_writer(db, &mut st);
    let mut wal = db.wals.lock_wal_quiesced(&db.visible_seq);
    if st.versions.family_id(name).is_some() {
        return Err(invalid(format!("column family \"{name}\" already exists")));
    }
    let max_seq = files
        .iter()
        .map(|f| f.meta.global_seqno.unwrap_or(0).max(f.meta.largest_seq))
        .max()
        .unwrap_or(0);
    let bump = max_seq > wal.last_allocated;
    let wal_number = wal.number;
    let mut edit = VersionEdit {
        column_family: st.versions.new_column_family_id(),
        cf_add: Some(name.to_string()),
        cf_options: Some(opts.to_text()),
        log_number: Some(wal_number),
        last_sequence: bump.then_some(max_seq),
        ..VersionEdit::default()
    };
    for f in files {
        edit.add_file(f.level, f.meta.clone_meta());
    }
    for b in &meta.blob_files {
        edit.blob_file_additions.push(BlobFileAddition {
            number: b.number,
            count: b.count,
            bytes: b.bytes,
            file_size: b.file_size,
        });
        if b.garbage_count > 0 {
            edit.blob_file_garbage.push(BlobFileGarbage {
                number: b.number,
                count: b.garbage_count,
                bytes: b.garbage_bytes,
            });
        }
    }
    crate::sync_point!("ImportColumnFamily:BeforeManifestWrite");
    let r =
        crate::shared::manifest::log_and_apply_locked(db, &mut st, std::slice::from_mut(&mut edit));
    if bump {
        // Used either way (a failed write may have persisted it).
        wal.last_allocated = max_seq;
        db.visible_seq.store(max_seq, Ordering::Release);
    }
    drop(wal);
    if let Err(e) = r {
        db.set_bg_error(&mut st, e.clone(), Reason::ManifestWrite);
        return Err(e);
    }
    let id = edit.column_family;
    let cf = cf_admin::register(db, &mut st, id, name, opts, wal_number);
    db.refresh_memtable_reserve(&st);
    db.install_super_version(&mut st, id);
    db.wake_bg(&mut st);
    // Point-in-time restore must know: the family and its data are in the
    // MANIFEST only.
    crate::shared::wal_marks::mark_family_change(db, id)?;
    Ok(cf)
}
