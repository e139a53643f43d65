//! [`ManifestReader`]: the edits of one MANIFEST, decoded by the engine's
//! own `VersionEdit::decode` and copied into public structs.
//!
//! A MANIFEST ending inside a record (a torn tail: never acknowledged) ends
//! the edits cleanly and is reported by [`ManifestReader::torn_tail`];
//! damage before the end is `Corruption` naming the file and the record's
//! offset, after which the reader yields nothing more (as recovery stops).

use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::{default_fs, FileSystem};
use crate::version::filename::FileType;
use crate::version::{FileMeta, VersionEdit};
use crate::wal::{LogReader, ReadOutcome};

use super::keys::InternalKey;

/// One MANIFEST record. Fields absent from the record are `None` / empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestEdit {
    /// Byte offset of the record in the MANIFEST.
    pub offset: u64,
    /// The column family the edit applies to (0 = default).
    pub column_family: u32,
    /// The edit creates the family with this name.
    pub cf_add: Option<String>,
    /// The edit drops the family.
    pub cf_drop: bool,
    /// The family's persisted options (`name=value` lines).
    pub cf_options: Option<String>,
    /// Name of the key comparator.
    pub comparator: Option<String>,
    /// Identity of the DB.
    pub db_id: Option<String>,
    /// WALs numbered below this hold nothing unflushed of the family.
    pub log_number: Option<u64>,
    /// The legacy previous log number.
    pub prev_log_number: Option<u64>,
    /// DB-wide: WALs numbered below this hold nothing unflushed of any
    /// family (written by flushes while several families are live).
    pub min_log_number_to_keep: Option<u64>,
    /// The next file number to hand out.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// The largest family id handed out.
    pub max_column_family: Option<u32>,
    /// Edits following this one in the same atomic group.
    pub atomic_group: Option<u32>,
    /// Files the edit removes.
    pub deleted_files: Vec<DeletedFile>,
    /// Files the edit adds.
    pub new_files: Vec<NewFile>,
    /// Blob files the edit adds to the family.
    pub blob_file_additions: Vec<BlobFileAddition>,
    /// Garbage the edit adds to the family's blob files.
    pub blob_file_garbage: Vec<BlobFileGarbage>,
}

/// A file an edit removes from a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeletedFile {
    /// The level it leaves.
    pub level: usize,
    /// Its number (`NNNNNN.sst`).
    pub number: u64,
}

/// A table an edit adds to a level, as the MANIFEST describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    /// The level it joins.
    pub level: usize,
    /// Its number (`NNNNNN.sst`).
    pub number: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// Its smallest internal key.
    pub smallest: InternalKey,
    /// Its largest internal key (for a file ending with a range tombstone,
    /// the tombstone's exclusive end at the largest sequence number).
    pub largest: InternalKey,
    /// Smallest sequence number of its entries.
    pub smallest_seq: u64,
    /// Largest sequence number of its entries.
    pub largest_seq: u64,
    /// Entries (all kinds).
    pub num_entries: u64,
    /// Point tombstones among them.
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// Expiring values among the entries.
    pub expiry_entries: u64,
    /// Latest expiry among them (Unix seconds; 0: none).
    pub expiry_max: u64,
    /// Compression of its blocks (`NoCompression`, `LZ4`, `ZSTD`).
    pub compression: String,
    /// The smallest blob file number its blob references name (0: it
    /// holds none, or the MANIFEST does not say).
    pub oldest_blob_file: u64,
    /// An ingested table's global sequence number: every entry of the
    /// table reads as written at it (MANIFEST file sub-field 1).
    pub global_seqno: Option<u64>,
    /// An imported table's number in the DB it was exported from, which
    /// its properties record (MANIFEST file sub-field 74; 0: none).
    pub written_as: u64,
}

/// A blob file an edit adds to its family (MANIFEST tag 15; format in
/// docs/format/blob.md). It stays live until its garbage count reaches
/// `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobFileAddition {
    /// Its number (`NNNNNN.blob`).
    pub number: u64,
    /// Blobs (records) in the file.
    pub count: u64,
    /// Bytes of those blobs' whole records (header, key and stored value).
    pub bytes: u64,
    /// The file's size in bytes (records plus header and footer).
    pub file_size: u64,
}

/// Blobs of a blob file that no table references any more (MANIFEST tag
/// 16), added to the garbage earlier edits gave the same file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobFileGarbage {
    /// The blob file's number (`NNNNNN.blob`).
    pub number: u64,
    /// Blobs that became garbage.
    pub count: u64,
    /// Bytes of their whole records.
    pub bytes: u64,
}

/// The name of an on-disk compression code.
pub(super) fn compression_name(code: u8) -> String {
    match code {
        0 => "NoCompression".into(),
        1 => "LZ4".into(),
        2 => "ZSTD".into(),
        n => format!("unknown({n})"),
    }
}

impl NewFile {
    fn from_meta(level: usize, f: &FileMeta, file: &str, offset: u64) -> Result<NewFile> {
        Ok(NewFile {
            level,
            number: f.number,
            file_size: f.file_size,
            smallest: InternalKey::decode(&f.smallest, file, offset)?,
            largest: InternalKey::decode(&f.largest, file, offset)?,
            smallest_seq: f.smallest_seq,
            largest_seq: f.largest_seq,
            num_entries: f.num_entries,
            num_deletions: f.num_deletions,
            num_range_deletions: f.num_range_deletions,
            expiry_entries: f.expiry_entries,
            expiry_max: f.expiry_max,
            compression: compression_name(f.compression),
            oldest_blob_file: f.oldest_blob_file,
            global_seqno: f.global_seqno,
            written_as: f.written_as,
        })
    }
}

impl ManifestEdit {
    fn from_edit(e: &VersionEdit, file: &str, offset: u64) -> Result<ManifestEdit> {
        Ok(ManifestEdit {
            offset,
            column_family: e.column_family,
            cf_add: e.cf_add.clone(),
            cf_drop: e.cf_drop,
            cf_options: e.cf_options.clone(),
            comparator: e.comparator.clone(),
            db_id: e.db_id.clone(),
            log_number: e.log_number,
            prev_log_number: e.prev_log_number,
            min_log_number_to_keep: e.min_log_number_to_keep,
            next_file_number: e.next_file_number,
            last_sequence: e.last_sequence,
            max_column_family: e.max_column_family,
            atomic_group: e.atomic_group,
            deleted_files: e
                .deleted_files
                .iter()
                .map(|&(level, number)| DeletedFile { level, number })
                .collect(),
            new_files: e
                .new_files
                .iter()
                .map(|(level, f)| NewFile::from_meta(*level, f, file, offset))
                .collect::<Result<_>>()?,
            blob_file_additions: e
                .blob_file_additions
                .iter()
                .map(|b| BlobFileAddition {
                    number: b.number,
                    count: b.count,
                    bytes: b.bytes,
                    file_size: b.file_size,
                })
                .collect(),
            blob_file_garbage: e
                .blob_file_garbage
                .iter()
                .map(|g| BlobFileGarbage {
                    number: g.number,
                    count: g.count,
                    bytes: g.bytes,
                })
                .collect(),
        })
    }
}

/// Reads the edits of one MANIFEST in order. See the module comment.
pub struct ManifestReader {
    reader: LogReader,
    name: String,
    buf: Vec<u8>,
    done: bool,
    torn_tail: Option<u64>,
}

impl ManifestReader {
    /// Opens `path`, whose name (`MANIFEST-NNNNNN`) gives the number that
    /// seeds its checksums.
    pub fn open(path: &Path) -> Result<ManifestReader> {
        let number = super::file_number(path, FileType::Manifest)?;
        Self::open_numbered(&*default_fs(), path, number)
    }

    /// Opens `path` as MANIFEST number `number` (for a copy renamed).
    pub fn open_numbered(fs: &dyn FileSystem, path: &Path, number: u64) -> Result<ManifestReader> {
        let name = path.display().to_string();
        Ok(ManifestReader {
            reader: LogReader::new(fs.open_sequential(path)?, name.clone(), number),
            name,
            buf: Vec::new(),
            done: false,
            torn_tail: None,
        })
    }

    /// The next edit; `Ok(None)` at the end. After an error, `Ok(None)`.
    pub fn next_edit(&mut self) -> Result<Option<ManifestEdit>> {
        if self.done {
            return Ok(None);
        }
        let r = self.read();
        if !matches!(r, Ok(Some(_))) {
            self.done = true;
        }
        r
    }

    fn read(&mut self) -> Result<Option<ManifestEdit>> {
        match self.reader.read_record(&mut self.buf)? {
            ReadOutcome::Record { offset } => {
                let e = VersionEdit::decode(&self.buf, &self.name, offset)?;
                ManifestEdit::from_edit(&e, &self.name, offset).map(Some)
            }
            ReadOutcome::Eof => Ok(None),
            ReadOutcome::TornTail { offset } => {
                self.torn_tail = Some(offset);
                Ok(None)
            }
            ReadOutcome::Corrupt { offset, what, .. } => {
                Err(Error::corruption(self.name.as_str(), offset, what))
            }
        }
    }

    /// Where the file ends inside a record, once the edits are read.
    pub fn torn_tail(&self) -> Option<u64> {
        self.torn_tail
    }

    /// Reads the rest and hands `f` each edit recovery would apply: the
    /// edits of an atomic group once the whole group is read (a group cut
    /// short by the end of the file or by damage is left out, as recovery
    /// leaves it). Returns the damage that ended reading, if any, and the
    /// number of edits left out.
    pub(super) fn applied_edits(
        &mut self,
        mut f: impl FnMut(ManifestEdit),
    ) -> (Option<Error>, usize) {
        let mut group: Vec<ManifestEdit> = Vec::new();
        let damage = loop {
            match self.next_edit() {
                Ok(Some(e)) => match e.atomic_group {
                    Some(rest) if rest > 0 => group.push(e),
                    _ => {
                        group.drain(..).for_each(&mut f);
                        f(e);
                    }
                },
                Ok(None) => break None,
                Err(e) => break Some(e),
            }
        };
        (damage, group.len())
    }
}

impl Iterator for ManifestReader {
    type Item = Result<ManifestEdit>;
    fn next(&mut self) -> Option<Result<ManifestEdit>> {
        self.next_edit().transpose()
    }
}

#[cfg(test)]
mod tests;
