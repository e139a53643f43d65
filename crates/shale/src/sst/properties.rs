//! Table properties: what a table holds and how it was written, stored as a
//! block (shared block format) of string name → value, names in bytewise
//! order. Numbers are varint64, strings are raw bytes (UTF-8).
//!
//! Readers ignore names they do not know (forward compatibility) and treat
//! missing names as zero / empty; a known number that does not decode is
//! `Corruption`. FROZEN: the names below are on disk; add new ones, never
//! rename.
//!
//! Thread-safety: plain data.

use std::sync::Arc;

use crate::codec::{get_varint64, put_varint64};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sst::block::{Block, BlockIterator};
use crate::sst::block_builder::BlockBuilder;

const COLUMN_FAMILY_ID: &str = "shale.column.family.id";
const COLUMN_FAMILY_NAME: &str = "shale.column.family.name";
const COMPRESSION: &str = "shale.compression";
const CREATION_TIME: &str = "shale.creation.time";
const DATA_SIZE: &str = "shale.data.size";
const DB_ID: &str = "shale.db.id";
const DELETED_KEYS: &str = "shale.deleted.keys";
const EXTERNAL_GLOBAL_SEQNO: &str = "shale.external.global.seqno";
const EXTERNAL_VERSION: &str = "shale.external.version";
const EXPIRY_ENTRIES: &str = "shale.expiry.entries";
const EXPIRY_MAX: &str = "shale.expiry.max";
const FILE_NUMBER: &str = "shale.file.number";
const FILTER_SIZE: &str = "shale.filter.size";
const FORMAT_VERSION: &str = "shale.format.version";
const INDEX_SIZE: &str = "shale.index.size";
const LARGEST_SEQNO: &str = "shale.largest.seqno";
const NUM_DATA_BLOCKS: &str = "shale.num.data.blocks";
const NUM_ENTRIES: &str = "shale.num.entries";
const NUM_RANGE_DELETIONS: &str = "shale.num.range-deletions";
const PREFIX_EXTRACTOR: &str = "shale.prefix.extractor";
const RAW_KEY_SIZE: &str = "shale.raw.key.size";
const RAW_VALUE_SIZE: &str = "shale.raw.value.size";
const SMALLEST_SEQNO: &str = "shale.smallest.seqno";
const UNIQUE_ID: &str = "shale.unique.id";

/// Properties of one table. Sizes of blocks include their 5-byte trailers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TableProperties {
    /// Entries (all kinds).
    pub num_entries: u64,
    /// Deletion tombstones among them.
    pub num_deletions: u64,
    /// Range tombstones in the range-deletion block (not in `num_entries`).
    pub num_range_deletions: u64,
    /// Expiring values among the entries, and the latest expiry among
    /// them (0: none).
    pub expiry_entries: u64,
    pub expiry_max: u64,
    /// Sum of internal key lengths.
    pub raw_key_size: u64,
    /// Sum of value lengths.
    pub raw_value_size: u64,
    pub num_data_blocks: u64,
    /// Bytes of data blocks as stored.
    pub data_size: u64,
    /// Bytes of the index block as stored.
    pub index_size: u64,
    /// Bytes of the filter block as stored (0 without a filter).
    pub filter_size: u64,
    pub smallest_seqno: u64,
    pub largest_seqno: u64,
    /// `Compression::name()` of the configured compression.
    pub compression_name: String,
    /// Unix seconds when the table was finished.
    pub creation_time: u64,
    pub file_number: u64,
    pub format_version: u64,
    /// 32 hex digits, unique per file.
    pub unique_id: String,
    /// Id of the DB that wrote the file (may be empty).
    pub db_id: String,
    /// Name of the prefix extractor whose prefixes the filter holds
    /// (empty: none; written only when set).
    pub prefix_extractor: String,
    /// The column family the table belongs to, (id, name), as RocksDB's
    /// `rocksdb.column.family.id` / `.name` (format version 2; `None` in
    /// older tables and in tables written outside a DB).
    pub column_family: Option<(u32, String)>,
    /// Non-zero for a table written by `SstFileWriter` (RocksDB's
    /// `rocksdb.external_sst_file.version`; format version 3): its entries
    /// carry sequence number 0 and are presented, once ingested, at the
    /// global sequence number the MANIFEST records for the table.
    pub external_version: u64,
    /// The global sequence number written in the file (RocksDB's
    /// `rocksdb.external_sst_file.global_seqno`): always 0 in a file of
    /// this build, which records the one assigned at ingestion in the
    /// MANIFEST instead (as RocksDB does without `write_global_seqno`).
    pub external_global_seqno: u64,
}

impl TableProperties {
    /// Encodes the properties as a finished block into `b` (which is reset
    /// first) and returns the block bytes.
    pub(crate) fn encode<'a>(&self, b: &'a mut BlockBuilder) -> &'a [u8] {
        b.reset();
        let mut num = Vec::with_capacity(10);
        let mut put_num = |b: &mut BlockBuilder, name: &str, v: u64| {
            num.clear();
            put_varint64(&mut num, v);
            b.add(name.as_bytes(), &num);
        };
        // Bytewise name order.
        if let Some((id, name)) = &self.column_family {
            put_num(b, COLUMN_FAMILY_ID, u64::from(*id));
            b.add(COLUMN_FAMILY_NAME.as_bytes(), name.as_bytes());
        }
        b.add(COMPRESSION.as_bytes(), self.compression_name.as_bytes());
        put_num(b, CREATION_TIME, self.creation_time);
        put_num(b, DATA_SIZE, self.data_size);
        b.add(DB_ID.as_bytes(), self.db_id.as_bytes());
        put_num(b, DELETED_KEYS, self.num_deletions);
        if self.expiry_entries > 0 {
            put_num(b, EXPIRY_ENTRIES, self.expiry_entries);
            put_num(b, EXPIRY_MAX, self.expiry_max);
        }
        if self.external_version > 0 {
            put_num(b, EXTERNAL_GLOBAL_SEQNO, self.external_global_seqno);
            put_num(b, EXTERNAL_VERSION, self.external_version);
        }
        put_num(b, FILE_NUMBER, self.file_number);
        put_num(b, FILTER_SIZE, self.filter_size);
        put_num(b, FORMAT_VERSION, self.format_version);
        put_num(b, INDEX_SIZE, self.index_size);
        put_num(b, LARGEST_SEQNO, self.largest_seqno);
        put_num(b, NUM_DATA_BLOCKS, self.num_data_blocks);
        put_num(b, NUM_ENTRIES, self.num_entries);
        put_num(b, NUM_RANGE_DELETIONS, self.num_range_deletions);
        if !self.prefix_extractor.is_empty() {
            b.add(
                PREFIX_EXTRACTOR.as_bytes(),
                self.prefix_extractor.as_bytes(),
            );
        }
        put_num(b, RAW_KEY_SIZE, self.raw_key_size);
        put_num(b, RAW_VALUE_SIZE, self.raw_value_size);
        put_num(b, SMALLEST_SEQNO, self.smallest_seqno);
        b.add(UNIQUE_ID.as_bytes(), self.unique_id.as_bytes());
        b.finish()
    }

    /// Decodes a properties block.
    pub(crate) fn decode(block: Arc<Block>) -> Result<TableProperties> {
        let (file, offset) = (block.file().to_string(), block.offset());
        let mut p = TableProperties::default();
        let (mut cf_id, mut cf_name) = (None, None);
        let mut it = BlockIterator::new(block);
        it.seek_to_first();
        while it.valid() {
            let (name, v) = (it.key(), it.value());
            let bad = || Error::corruption(&file, offset, "bad number in properties block");
            let num = || {
                let mut s = v;
                get_varint64(&mut s)
                    .filter(|_| s.is_empty())
                    .ok_or_else(bad)
            };
            let text = || String::from_utf8_lossy(v).into_owned();
            match std::str::from_utf8(name).unwrap_or("") {
                COLUMN_FAMILY_ID => {
                    cf_id = Some(u32::try_from(num()?).map_err(|_| {
                        Error::corruption(&file, offset, "column family id over 32 bits")
                    })?)
                }
                COLUMN_FAMILY_NAME => cf_name = Some(text()),
                COMPRESSION => p.compression_name = text(),
                CREATION_TIME => p.creation_time = num()?,
                DATA_SIZE => p.data_size = num()?,
                DB_ID => p.db_id = text(),
                DELETED_KEYS => p.num_deletions = num()?,
                EXPIRY_ENTRIES => p.expiry_entries = num()?,
                EXTERNAL_GLOBAL_SEQNO => p.external_global_seqno = num()?,
                EXTERNAL_VERSION => p.external_version = num()?,
                EXPIRY_MAX => p.expiry_max = num()?,
                FILE_NUMBER => p.file_number = num()?,
                FILTER_SIZE => p.filter_size = num()?,
                FORMAT_VERSION => p.format_version = num()?,
                INDEX_SIZE => p.index_size = num()?,
                LARGEST_SEQNO => p.largest_seqno = num()?,
                NUM_DATA_BLOCKS => p.num_data_blocks = num()?,
                NUM_ENTRIES => p.num_entries = num()?,
                NUM_RANGE_DELETIONS => p.num_range_deletions = num()?,
                PREFIX_EXTRACTOR => p.prefix_extractor = text(),
                RAW_KEY_SIZE => p.raw_key_size = num()?,
                RAW_VALUE_SIZE => p.raw_value_size = num()?,
                SMALLEST_SEQNO => p.smallest_seqno = num()?,
                UNIQUE_ID => p.unique_id = text(),
                _ => {} // written by a newer version: ignored
            }
            it.next();
        }
        it.status()?;
        p.column_family = match (cf_id, cf_name) {
            (Some(id), Some(name)) => Some((id, name)),
            (None, None) => None,
            _ => {
                return Err(Error::corruption(
                    &file,
                    offset,
                    "column family id without its name, or name without its id",
                ))
            }
        };
        Ok(p)
    }
}

#[cfg(test)]
mod tests;
