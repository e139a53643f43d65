//! [`SstFileWriter`]: writes a table file outside any DB, for
//! [`Db::ingest_external_file`](crate::Db::ingest_external_file) (RocksDB's
//! `SstFileWriter`).
//!
//! Point entries (puts, deletes, merges) come in strictly increasing user
//! key order (the bytewise comparator, the only one Shale has); range
//! deletions in any order. The table is written by the engine's own table
//! builder with a family's table options (block size, restart interval,
//! bloom filter, prefix extractor, and the compression of the bottommost
//! level, as RocksDB's writer uses), every entry at sequence number 0, and
//! marked external in its properties (`shale.external.version` = 1,
//! `shale.external.global.seqno` = 0; SST format version 3, see
//! docs/format/sst.md). Its properties name no DB, family or file number.
//!
//! Range tombstones in the file delete older data of the DB it is ingested
//! into, not the file's own point entries (all of one file's entries share
//! one sequence number, and a tombstone covers only smaller ones), as in
//! RocksDB.
//!
//! After an error the writer refuses further entries; `finish` on an empty
//! writer is `InvalidArgument` (RocksDB refuses an empty file too).
//!
//! Thread-safety: owned by one thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::base::{make_internal_key, ValueKind};
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::options::{CfOptions, Options};
use crate::range_del::{Fragments, RangeTombstone};
use crate::sst::{TableBuilder, TableOptions};

/// What [`SstFileWriter::finish`] wrote (RocksDB's
/// `ExternalSstFileInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalSstFileInfo {
    /// The file written.
    pub file_path: PathBuf,
    /// Smallest user key of the point entries (empty when the file has
    /// only range deletions).
    pub smallest_key: Vec<u8>,
    /// Largest user key of the point entries (empty likewise).
    pub largest_key: Vec<u8>,
    /// Smallest range-deletion start (empty without range deletions).
    pub smallest_range_del_key: Vec<u8>,
    /// Largest range-deletion (exclusive) end (empty likewise).
    pub largest_range_del_key: Vec<u8>,
    /// Point entries written (puts, deletes, merges).
    pub num_entries: u64,
    /// Range deletions given.
    pub num_range_del_entries: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The sequence number of every entry in the file: 0.
    pub sequence_number: u64,
}

/// Writes one external table at a time. See the module comment.
pub struct SstFileWriter {
    fs: Arc<dyn FileSystem>,
    table: TableOptions,
    open: Option<OpenFile>,
}

struct OpenFile {
    path: PathBuf,
    builder: TableBuilder,
    /// User key of the last point entry.
    last: Option<Vec<u8>>,
    smallest: Vec<u8>,
    num_entries: u64,
    tombstones: Vec<RangeTombstone>,
    ikey: Vec<u8>,
    failed: Option<Error>,
}

impl std::fmt::Debug for SstFileWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstFileWriter")
            .field("file", &self.open.as_ref().map(|o| &o.path))
            .finish_non_exhaustive()
    }
}

impl SstFileWriter {
    /// A writer using the default family's options of `opts` and its file
    /// system.
    pub fn new(opts: &Options) -> SstFileWriter {
        let bottom = opts.num_levels.saturating_sub(1);
        SstFileWriter {
            fs: Arc::clone(&opts.fs),
            table: table_options(&opts.cf, bottom),
            open: None,
        }
    }

    /// A writer using `cf`'s table options (for a family of a DB with the
    /// default 7 levels) and the default file system.
    pub fn with_cf_options(cf: &CfOptions) -> SstFileWriter {
        SstFileWriter {
            fs: crate::fs::default_fs(),
            table: table_options(cf, 6),
            open: None,
        }
    }

    /// Creates the file at `path` (replacing one there) and starts a table
    /// in it. A file already open is abandoned (and deleted).
    pub fn open(&mut self, path: impl AsRef<Path>) -> Result<()> {
        self.abandon();
        let path = path.as_ref().to_path_buf();
        let file = self.fs.create(&path)?;
        let mut builder =
            TableBuilder::new(file, path.display().to_string(), 0, self.table.clone());
        builder.set_external();
        self.open = Some(OpenFile {
            path,
            builder,
            last: None,
            smallest: Vec::new(),
            num_entries: 0,
            tombstones: Vec::new(),
            ikey: Vec::new(),
            failed: None,
        });
        Ok(())
    }

    /// Adds `key` → `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.add(key, ValueKind::Value, value)
    }

    /// Adds a deletion of `key`.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.add(key, ValueKind::Deletion, &[])
    }

    /// Adds a merge operand for `key` (combined, once ingested, by the
    /// family's merge operator).
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) -> Result<()> {
        self.add(key, ValueKind::Merge, operand)
    }

    /// Adds a deletion of the keys in `[begin, end)`; in any order
    /// relative to the point entries and other range deletions. An empty
    /// range (`begin >= end`) is `InvalidArgument`.
    pub fn delete_range(&mut self, begin: &[u8], end: &[u8]) -> Result<()> {
        let o = self.open_file()?;
        if begin >= end {
            return Err(Error::InvalidArgument(format!(
                "{}: delete_range with begin {:?} not below end {:?}",
                o.path.display(),
                String::from_utf8_lossy(begin),
                String::from_utf8_lossy(end)
            )));
        }
        o.tombstones.push(RangeTombstone {
            start: begin.to_vec(),
            end: end.to_vec(),
            seq: 0,
        });
        Ok(())
    }

    /// Bytes written so far plus the open data block.
    pub fn file_size(&self) -> u64 {
        self.open
            .as_ref()
            .map_or(0, |o| o.builder.estimated_file_size())
    }

    /// Writes the rest of the table, syncs the file and reports it. The
    /// writer is then free for another `open`.
    pub fn finish(&mut self) -> Result<ExternalSstFileInfo> {
        let Some(mut o) = self.open.take() else {
            return Err(Error::InvalidArgument(
                "SstFileWriter::finish without an open file".into(),
            ));
        };
        if let Some(e) = o.failed.take() {
            let _ = self.fs.remove(&o.path);
            return Err(e);
        }
        if o.num_entries == 0 && o.tombstones.is_empty() {
            let _ = self.fs.remove(&o.path);
            return Err(Error::InvalidArgument(format!(
                "{}: cannot create an SST file with no entries",
                o.path.display()
            )));
        }
        let (mut rd_lo, mut rd_hi) = (Vec::new(), Vec::new());
        if !o.tombstones.is_empty() {
            let frags = Fragments::build(o.tombstones.iter());
            if let (Some(first), Some(last)) = (frags.fragments().first(), frags.fragments().last())
            {
                rd_lo = first.start.clone();
                rd_hi = last.end.clone();
            }
            o.builder.set_range_dels(frags.fragments().to_vec());
        }
        let built = match o.builder.finish_unsynced() {
            Ok((built, mut file)) => file.sync().map(|()| built),
            Err(e) => Err(e),
        };
        let built = match built {
            Ok(b) => b,
            Err(e) => {
                let _ = self.fs.remove(&o.path);
                return Err(e);
            }
        };
        Ok(ExternalSstFileInfo {
            file_path: o.path,
            smallest_key: o.smallest,
            largest_key: o.last.unwrap_or_default(),
            smallest_range_del_key: rd_lo,
            largest_range_del_key: rd_hi,
            num_entries: o.num_entries,
            num_range_del_entries: o.tombstones.len() as u64,
            file_size: built.file_size,
            sequence_number: 0,
        })
    }

    fn open_file(&mut self) -> Result<&mut OpenFile> {
        self.open.as_mut().ok_or_else(|| {
            Error::InvalidArgument("SstFileWriter: no open file (call open first)".into())
        })
    }

    fn add(&mut self, key: &[u8], kind: ValueKind, value: &[u8]) -> Result<()> {
        let o = self.open_file()?;
        if let Some(e) = &o.failed {
            return Err(e.clone());
        }
        if let Some(last) = &o.last {
            if key <= last.as_slice() {
                return Err(Error::InvalidArgument(format!(
                    "{}: keys must be added in strictly increasing order: {:?} after {:?}",
                    o.path.display(),
                    String::from_utf8_lossy(key),
                    String::from_utf8_lossy(last)
                )));
            }
        }
        o.ikey.clear();
        make_internal_key(&mut o.ikey, key, 0, kind as u8);
        if let Err(e) = o.builder.add(&o.ikey, value) {
            o.failed = Some(e.clone());
            return Err(e);
        }
        if o.num_entries == 0 {
            o.smallest = key.to_vec();
        }
        match &mut o.last {
            Some(l) => {
                l.clear();
                l.extend_from_slice(key);
            }
            None => o.last = Some(key.to_vec()),
        }
        o.num_entries += 1;
        Ok(())
    }

    /// Drops an open file without finishing it (and deletes it).
    fn abandon(&mut self) {
        if let Some(o) = self.open.take() {
            drop(o.builder);
            let _ = self.fs.remove(&o.path);
        }
    }
}

impl Drop for SstFileWriter {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// The table options of a file for the bottommost level `bottom` of a
/// family with `cf`'s options.
fn table_options(cf: &CfOptions, bottom: usize) -> TableOptions {
    cf.table_options(bottom, cf.compression_for_level(bottom, true), "")
}
