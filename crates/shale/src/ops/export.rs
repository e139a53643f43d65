//! `Db::export_column_family`: one family's table and blob files, and a
//! metadata file describing them, in a new directory (RocksDB's
//! `Checkpoint::ExportColumnFamily`), which `Db::create_column_family_with_import`
//! (`ops/import.rs`) turns into a family of this or another DB.
//!
//! Steps:
//! 1. Refuse an existing target (`InvalidArgument`); clear a `DIR.tmp`
//!    left by an earlier crash and create it afresh (as `checkpoint`).
//! 2. Hold off file deletions; flush the family.
//! 3. Under the DB mutex, with no MANIFEST write in flight, take the
//!    family's current version: every table with its level, keys,
//!    sequence numbers and counts (`FileMeta`), every blob file.
//! 4. With no lock held, hard-link each file into `DIR.tmp` under its own
//!    name (a copy where the file system cannot link), write
//!    [`EXPORT_METADATA_FILE`] (JSON, [`ExportMetadata`]; byte by byte in
//!    docs/FORMAT.md, "Column family export") and sync it.
//! 5. Sync `DIR.tmp`, rename it to `DIR`, sync the parent: a crash leaves
//!    no `DIR` or a complete one.
//!
//! The metadata is versioned (`format_version`, now 1): a reader refuses a
//! version it does not know. Keys are lowercase hex. Thread-safety: the
//! export runs beside writes and background jobs; what it copies is the
//! version of one moment, and tables and blob files are immutable.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cf::Cf;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::version::filename::{blob_file_name, table_file_name};
use crate::version::COMPARATOR_NAME;

use super::checkpoint::{build_dir, link_or_copy};

/// The metadata file's name in an export directory.
pub const EXPORT_METADATA_FILE: &str = "EXPORT-METADATA.json";

/// The metadata version this build writes and reads.
pub const EXPORT_FORMAT_VERSION: u32 = 1;

/// What an export directory holds (RocksDB's `ExportImportFilesMetaData`),
/// as written to its [`EXPORT_METADATA_FILE`]. Byte by byte in
/// docs/FORMAT.md, "Column family export".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportMetadata {
    /// [`EXPORT_FORMAT_VERSION`] when written by this build.
    pub format_version: u32,
    /// The exported family's name.
    pub column_family: String,
    /// The key comparator's name (`leveldb.BytewiseComparator`, the only
    /// one Shale has): an import into a DB with another one is refused.
    pub comparator: String,
    /// The family's merge operator's name, if it had one: an import with a
    /// different one (or none) is refused, as the tables may hold operands.
    pub merge_operator: Option<String>,
    /// Every table, in level order (L0 newest first, as in the version).
    pub tables: Vec<ExportedTable>,
    /// Every blob file (key-value separation).
    pub blob_files: Vec<ExportedBlobFile>,
    /// The directory the files are in: set by `export_column_family` and
    /// [`ExportMetadata::load`]; not written.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One exported table (the MANIFEST's fields for it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedTable {
    /// Its name in the export directory (`NNNNNN.sst`).
    pub name: String,
    /// The file number its properties record (the one it was written as;
    /// an import gives it a new one and remembers this).
    pub written_as: u64,
    /// Its level in the exported family.
    pub level: usize,
    /// Smallest internal key (user key ++ 8-byte trailer).
    #[serde(with = "hex_bytes")]
    pub smallest_key: Vec<u8>,
    /// Largest internal key.
    #[serde(with = "hex_bytes")]
    pub largest_key: Vec<u8>,
    /// Smallest sequence number of its entries.
    pub smallest_seqno: u64,
    /// Largest sequence number of its entries.
    pub largest_seqno: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// Entries.
    pub num_entries: u64,
    /// Point tombstones among them.
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// Expiring values.
    pub expiry_entries: u64,
    /// Their latest expiry (Unix seconds; 0: none).
    pub expiry_max: u64,
    /// Upper bound of its newest entry's write time (0: unknown).
    pub newest_key_time: u64,
    /// Smallest blob file it references (0: none).
    pub oldest_blob_file: u64,
    /// Compression tag of its data blocks.
    pub compression: u8,
    /// For an ingested table: the sequence number its entries read at.
    pub global_seqno: Option<u64>,
    /// The user keys its range tombstones span, when recorded.
    pub range_del_span: Option<(HexBytes, HexBytes)>,
}

/// Bytes written as a lowercase hex string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HexBytes(#[serde(with = "hex_bytes")] pub Vec<u8>);

/// One exported blob file (it keeps its number: tables name it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportedBlobFile {
    /// Its name in the export directory (`NNNNNN.blob`).
    pub name: String,
    /// Its number (tables' blob references carry it).
    pub number: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// Blobs in it.
    pub count: u64,
    /// Their records' bytes.
    pub bytes: u64,
    /// Of those, blobs no table references any more.
    pub garbage_count: u64,
    /// And their bytes.
    pub garbage_bytes: u64,
}

mod hex_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        s.serialize_str(&hex)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        let bad = || serde::de::Error::custom(format!("not lowercase hex: {s:?}"));
        if s.len() % 2 != 0 {
            return Err(bad());
        }
        let digit = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        s.as_bytes()
            .chunks(2)
            .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
            .collect::<Option<Vec<u8>>>()
            .ok_or_else(bad)
    }
}

impl ExportMetadata {
    /// Reads the metadata of the export directory `dir` (written by
    /// `export_column_family`, perhaps by another process). A missing or
    /// malformed file is `Corruption` naming it; a newer version is
    /// `NotSupported`.
    pub fn load(dir: impl AsRef<Path>) -> Result<ExportMetadata> {
        let dir = dir.as_ref();
        let path = dir.join(EXPORT_METADATA_FILE);
        let name = path.display().to_string();
        let text = std::fs::read(&path).map_err(|e| Error::io(&name, e))?;
        let mut meta = Self::decode(&text, &name)?;
        meta.dir = dir.to_path_buf();
        Ok(meta)
    }

    fn decode(text: &[u8], name: &str) -> Result<ExportMetadata> {
        #[derive(Deserialize)]
        struct Version {
            format_version: u32,
        }
        let v: Version = serde_json::from_slice(text)
            .map_err(|e| Error::corruption(name, 0, format!("export metadata: {e}")))?;
        if v.format_version != EXPORT_FORMAT_VERSION {
            return Err(Error::NotSupported(format!(
                "{name}: export metadata version {} (this build reads {EXPORT_FORMAT_VERSION})",
                v.format_version
            )));
        }
        serde_json::from_slice(text)
            .map_err(|e| Error::corruption(name, 0, format!("export metadata: {e}")))
    }

    /// The JSON text written to [`EXPORT_METADATA_FILE`].
    pub(crate) fn to_json(&self) -> Result<Vec<u8>> {
        let mut v = serde_json::to_vec_pretty(self)
            .map_err(|e| Error::InvalidArgument(format!("export metadata: {e}")))?;
        v.push(b'\n');
        Ok(v)
    }
}

/// Step 3 of the module docs: the family's files, under the DB mutex.
fn capture(db: &Db, cf: &Cf) -> Result<ExportMetadata> {
    let inner = db.inner();
    let fam = db.family(cf)?;
    let mut st = inner.state.lock();
    while st.versions.manifest_write_in_flight() {
        inner.manifest_cv.wait(&mut st);
    }
    if st.cf(fam.id).is_none() {
        return Err(Error::InvalidArgument(format!(
            "export: column family \"{}\" was dropped",
            fam.name
        )));
    }
    let v = st.versions.current(fam.id);
    let mut tables = Vec::new();
    for level in 0..v.num_levels() {
        for f in v.files(level) {
            tables.push(ExportedTable {
                name: table_file_name(f.number),
                written_as: if f.written_as != 0 {
                    f.written_as
                } else {
                    f.number
                },
                level,
                smallest_key: f.smallest.clone(),
                largest_key: f.largest.clone(),
                smallest_seqno: f.smallest_seq,
                largest_seqno: f.largest_seq,
                file_size: f.file_size,
                num_entries: f.num_entries,
                num_deletions: f.num_deletions,
                num_range_deletions: f.num_range_deletions,
                expiry_entries: f.expiry_entries,
                expiry_max: f.expiry_max,
                newest_key_time: f.newest_key_time,
                oldest_blob_file: f.oldest_blob_file,
                compression: f.compression,
                global_seqno: f.global_seqno,
                range_del_span: f
                    .range_del_span
                    .get()
                    .map(|(a, b)| (HexBytes(a.clone()), HexBytes(b.clone()))),
            });
        }
    }
    let blob_files = v
        .blob_files()
        .values()
        .map(|b| ExportedBlobFile {
            name: blob_file_name(b.number),
            number: b.number,
            file_size: b.file_size,
            count: b.count,
            bytes: b.bytes,
            garbage_count: b.garbage_count,
            garbage_bytes: b.garbage_bytes,
        })
        .collect();
    Ok(ExportMetadata {
        format_version: EXPORT_FORMAT_VERSION,
        column_family: fam.name.clone(),
        comparator: COMPARATOR_NAME.to_string(),
        merge_operator: fam
            .opts()
            .merge_operator
            .as_ref()
            .map(|m| m.name().to_string()),
        tables,
        blob_files,
        dir: PathBuf::new(),
    })
}

/// Steps 2 to 4 into `tmp`.
fn fill(db: &Db, cf: &Cf, tmp: &Path) -> Result<ExportMetadata> {
    let inner = db.inner();
    let fs = inner.fs.as_ref();
    crate::bg::scheduler::flush_and_wait(inner, db.family(cf)?.id)?;
    let meta = capture(db, cf)?;
    crate::sync_point!("ExportColumnFamily:Captured");
    let names = meta.tables.iter().map(|t| &t.name);
    for name in names.chain(meta.blob_files.iter().map(|b| &b.name)) {
        link_or_copy(fs, &inner.dir.join(name), &tmp.join(name))?;
    }
    let mut f = fs.create(&tmp.join(EXPORT_METADATA_FILE))?;
    f.append(&meta.to_json()?)?;
    f.sync()?;
    Ok(meta)
}

impl Db {
    /// Exports family `cf` into `dir` (which must not exist): flushes it,
    /// hard-links (or copies) its table and blob files there and writes
    /// [`EXPORT_METADATA_FILE`], returning the same metadata (RocksDB's
    /// `Checkpoint::ExportColumnFamily`). See `ops/export.rs`.
    pub fn export_column_family(&self, cf: &Cf, dir: impl AsRef<Path>) -> Result<ExportMetadata> {
        let dir = dir.as_ref();
        let inner = self.inner();
        inner.check_open()?;
        inner.check_read_write("export_column_family")?;
        let fs = inner.fs.as_ref();
        if fs.exists(dir) {
            return Err(Error::InvalidArgument(format!(
                "export directory {} already exists",
                dir.display()
            )));
        }
        let mut meta = build_dir(inner, dir, |tmp| fill(self, cf, tmp))?;
        inner.log.info(&format!(
            "export of column family \"{}\" to {}: {} tables, {} blob files",
            meta.column_family,
            dir.display(),
            meta.tables.len(),
            meta.blob_files.len()
        ));
        meta.dir = dir.to_path_buf();
        Ok(meta)
    }
}
