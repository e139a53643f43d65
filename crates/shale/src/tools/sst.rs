//! [`SstReader`]: one SST opened by the engine's own reader (footer,
//! metaindex, properties, index, filter and range-deletion block are read
//! and their checksums verified at open), and what `sst_dump` shows of it:
//! properties, index entries, every entry with its sequence number and
//! kind, range tombstones, and a block-by-block verification.
//!
//! Entries are read one data block at a time through the index, so a
//! damaged block is reported (`Corruption` naming the file and the block's
//! offset) and the entries of the blocks after it are still shown.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use crate::base::{compare_internal, expiry::split_expiring, extract_user_key, TRAILER_LEN};
use crate::error::{Error, Result};
use crate::fs::default_fs;
use crate::iter::InternalIterator;
use crate::sst::{BlockIterator, Table};
use crate::version::filename::{parse_file_name, FileType};

use super::keys::{EntryKind, InternalKey};

/// The table's properties block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstProperties {
    /// Entries (all kinds, range tombstones excluded).
    pub num_entries: u64,
    /// Point tombstones among them.
    pub num_deletions: u64,
    /// Range tombstones.
    pub num_range_deletions: u64,
    /// Expiring values among the entries, and the latest expiry (Unix
    /// seconds; 0: none).
    pub expiry_entries: u64,
    /// See `expiry_entries`.
    pub expiry_max: u64,
    /// Sum of internal key lengths.
    pub raw_key_size: u64,
    /// Sum of value lengths.
    pub raw_value_size: u64,
    /// Number of data blocks.
    pub num_data_blocks: u64,
    /// Bytes of the data blocks as stored.
    pub data_size: u64,
    /// Bytes of the index block as stored.
    pub index_size: u64,
    /// Bytes of the filter as stored (0: no filter).
    pub filter_size: u64,
    /// Smallest sequence number of the entries.
    pub smallest_seqno: u64,
    /// Largest sequence number of the entries.
    pub largest_seqno: u64,
    /// The compression the table was written with.
    pub compression: String,
    /// Unix seconds when the table was finished.
    pub creation_time: u64,
    /// The file number the table was written as.
    pub file_number: u64,
    /// The SST format version.
    pub format_version: u64,
    /// 32 hex digits, unique per file.
    pub unique_id: String,
    /// Id of the DB that wrote it (may be empty).
    pub db_id: String,
    /// The column family it belongs to, (id, name); `None` for tables of
    /// format version 1 (which do not record it).
    pub column_family: Option<(u32, String)>,
    /// Non-zero for a table written by `SstFileWriter` (format version 3):
    /// RocksDB's `rocksdb.external_sst_file.version`.
    pub external_version: u64,
}

/// One index entry: the data block whose keys are all ≤ `separator`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// The user key of the separator (≥ the block's last user key).
    pub separator: Vec<u8>,
    /// Offset of the block in the file.
    pub offset: u64,
    /// Stored size of the block (without its 5-byte trailer).
    pub size: u64,
}

/// One entry of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstEntry {
    /// The decoded internal key.
    pub key: InternalKey,
    /// The value (an expiring put's value without the expiry).
    pub value: Vec<u8>,
    /// An expiring put's expiry (Unix seconds).
    pub expiry: Option<u64>,
}

/// One range tombstone fragment: `[start, end)` deleted at `seq`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First user key deleted.
    pub start: Vec<u8>,
    /// First user key not deleted.
    pub end: Vec<u8>,
    /// Sequence number of the tombstone.
    pub seq: u64,
}

/// An open table. See the module comment.
pub struct SstReader {
    table: Arc<Table>,
    name: String,
    file_size: u64,
}

impl SstReader {
    /// Opens the table at `path`; any name is accepted (the number in a
    /// `NNNNNN.sst` name is only used to label the table).
    pub fn open(path: &Path) -> Result<SstReader> {
        let name = path.display().to_string();
        let number = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(parse_file_name)
            .filter(|(t, _)| *t == FileType::Table)
            .map_or(0, |(_, n)| n);
        let file = default_fs().open_random(path)?;
        let file_size = file.len();
        let table = Table::open(file, name.clone(), number, None, false)?;
        Ok(SstReader {
            table,
            name,
            file_size,
        })
    }

    /// Size of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The properties block.
    pub fn properties(&self) -> SstProperties {
        let p = self.table.properties();
        SstProperties {
            num_entries: p.num_entries,
            num_deletions: p.num_deletions,
            num_range_deletions: p.num_range_deletions,
            expiry_entries: p.expiry_entries,
            expiry_max: p.expiry_max,
            raw_key_size: p.raw_key_size,
            raw_value_size: p.raw_value_size,
            num_data_blocks: p.num_data_blocks,
            data_size: p.data_size,
            index_size: p.index_size,
            filter_size: p.filter_size,
            smallest_seqno: p.smallest_seqno,
            largest_seqno: p.largest_seqno,
            compression: p.compression_name.clone(),
            creation_time: p.creation_time,
            file_number: p.file_number,
            format_version: p.format_version,
            unique_id: p.unique_id.clone(),
            db_id: p.db_id.clone(),
            column_family: p.column_family.clone(),
            external_version: p.external_version,
        }
    }

    /// The index entries, in key order.
    pub fn index_entries(&self) -> Result<Vec<IndexEntry>> {
        let index = self.table.index_block()?;
        let index_offset = index.offset();
        let mut it = BlockIterator::new(index);
        let mut out = Vec::new();
        it.seek_to_first();
        while it.valid() {
            if it.key().len() < TRAILER_LEN {
                return Err(Error::corruption(
                    self.name.as_str(),
                    index_offset,
                    "index key shorter than an internal key",
                ));
            }
            let h = self.table.decode_handle(it.value())?;
            out.push(IndexEntry {
                separator: extract_user_key(it.key()).to_vec(),
                offset: h.offset,
                size: h.size,
            });
            it.next();
        }
        it.status()?;
        Ok(out)
    }

    /// The range tombstones, fragmented, one per (fragment, sequence).
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        let Some(f) = self.table.range_fragments() else {
            return Vec::new();
        };
        f.fragments()
            .iter()
            .flat_map(|fr| {
                fr.seqs.iter().map(|&seq| RangeTombstone {
                    start: fr.start.clone(),
                    end: fr.end.clone(),
                    seq,
                })
            })
            .collect()
    }

    /// Every entry in key order. A damaged data block yields one error and
    /// the entries of the next block follow.
    pub fn entries(&self) -> Result<SstEntries<'_>> {
        Ok(SstEntries {
            reader: self,
            blocks: self.index_entries()?.into_iter(),
            current: None,
        })
    }

    /// Reads every data block (each checksum, decompression and entry) and
    /// checks the keys ascend across the table and stay within their index
    /// separators. Returns every problem found (empty: the table is
    /// whole). The meta blocks, index and filter were verified at open.
    pub fn verify(&self) -> Result<Vec<Error>> {
        let mut problems = Vec::new();
        let mut last: Option<Vec<u8>> = None;
        for ie in self.index_entries()? {
            let mut it = match self.block(&ie) {
                Ok(it) => it,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            it.seek_to_first();
            while it.valid() {
                let k = it.key();
                let bad = |what: &str| Error::corruption(self.name.as_str(), ie.offset, what);
                if let Err(e) = InternalKey::decode(k, &self.name, ie.offset) {
                    problems.push(e);
                    break;
                }
                if last
                    .as_deref()
                    .is_some_and(|l| compare_internal(l, k) != Ordering::Less)
                {
                    problems.push(bad("keys out of order"));
                    break;
                }
                if extract_user_key(k) > ie.separator.as_slice() {
                    problems.push(bad("key past its index separator"));
                    break;
                }
                last = Some(k.to_vec());
                it.next();
            }
            if let Err(e) = it.status() {
                problems.push(e);
            }
        }
        Ok(problems)
    }

    fn block(&self, ie: &IndexEntry) -> Result<BlockIterator> {
        let h = crate::sst::BlockHandle {
            offset: ie.offset,
            size: ie.size,
        };
        Ok(BlockIterator::new(self.table.data_block(h, false)?))
    }
}

/// The entries of an [`SstReader`]; see [`SstReader::entries`].
pub struct SstEntries<'a> {
    reader: &'a SstReader,
    blocks: std::vec::IntoIter<IndexEntry>,
    current: Option<(BlockIterator, u64)>,
}

impl Iterator for SstEntries<'_> {
    type Item = Result<SstEntry>;

    fn next(&mut self) -> Option<Result<SstEntry>> {
        loop {
            if let Some((it, offset)) = &mut self.current {
                if it.valid() {
                    let name = &self.reader.name;
                    let r = entry(it.key(), it.value(), name, *offset);
                    it.next();
                    return Some(r);
                }
                let status = it.status();
                self.current = None;
                if let Err(e) = status {
                    return Some(Err(e));
                }
            }
            let ie = self.blocks.next()?;
            match self.reader.block(&ie) {
                Ok(mut it) => {
                    it.seek_to_first();
                    self.current = Some((it, ie.offset));
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

fn entry(ikey: &[u8], value: &[u8], file: &str, offset: u64) -> Result<SstEntry> {
    let key = InternalKey::decode(ikey, file, offset)?;
    let (value, expiry) = if key.kind == EntryKind::ExpiringPut {
        let (v, x) = split_expiring(value).ok_or_else(|| {
            Error::corruption(file, offset, "expiring value shorter than its expiry")
        })?;
        (v, Some(x))
    } else {
        (value, None)
    };
    Ok(SstEntry {
        key,
        value: value.to_vec(),
        expiry,
    })
}
