//! Write batches: [`WriteBatch`], the public type users build writes with, and
//! the exact bytes of a batch, which are also the payload of a WAL record.
//!
//! Layout (RocksDB's; byte by byte in `docs/format/batch.md`):
//!
//! ```text
//! header  := sequence: fixed64 LE | count: fixed32 LE        (12 bytes)
//! record  := 0x1 key value            put, default column family
//!          | 0x0 key                  delete, default column family
//!          | 0x5 cf:varint32 key value put, column family `cf`
//!          | 0x4 cf:varint32 key      delete, column family `cf`
//!          | 0x2 key value / 0x6 cf key value   merge operand
//!          | 0x7 key / 0x8 cf key                single delete
//!          | 0xF start end / 0xE cf start end    range delete [start, end)
//!          | 0x20 key value / 0x21 cf key value  expiring put (value ends
//!                                                 with fixed64 expiry)
//! key, value := varint32 length ++ bytes
//! ```
//!
//! Thread safety: a `WriteBatch` is a plain owned value (`Send + Sync`), built
//! by one thread and handed to the write path.
//!
//! Invariants: the buffer always holds at least the 12-byte header; a batch
//! built through the API always decodes, and its header count equals the
//! number of records. Bytes from disk are checked by [`BatchIter`](iter::BatchIter) /
//! [`WriteBatch::validate`], which report damage as `Error::Corruption`
//! and never panic.

mod iter;
pub(crate) use iter::BatchEntry;
mod write_batch;

pub use write_batch::{ColumnFamilyId, WriteBatch, MAX_KEY_LEN, MAX_VALUE_LEN};
pub(crate) use write_batch::{Mark, Owner};

/// Length of the batch header (sequence + count).
///
/// FROZEN: on-disk (WAL payload, docs/format/batch.md).
pub(crate) const BATCH_HEADER_LEN: usize = 12;

/// Record tags. They equal the [`crate::base::ValueKind`] discriminants for
/// the default column family and RocksDB's `kTypeColumnFamily*` values for
/// the others.
///
/// FROZEN: on-disk (docs/format/batch.md). Never renumber.
pub(crate) mod tag {
    /// Deletion in the default column family (`ValueKind::Deletion`).
    pub(crate) const DELETION: u8 = 0x0;
    /// Value in the default column family (`ValueKind::Value`).
    pub(crate) const VALUE: u8 = 0x1;
    /// Deletion in a column family named by a varint32 id.
    pub(crate) const CF_DELETION: u8 = 0x4;
    /// Value in a column family named by a varint32 id.
    pub(crate) const CF_VALUE: u8 = 0x5;
    /// Merge operand in the default column family (`ValueKind::Merge`).
    pub(crate) const MERGE: u8 = 0x2;
    /// Merge operand in a column family named by a varint32 id.
    pub(crate) const CF_MERGE: u8 = 0x6;
    /// Single deletion in the default column family
    /// (`ValueKind::SingleDeletion`).
    pub(crate) const SINGLE_DELETION: u8 = 0x7;
    /// Single deletion in a column family named by a varint32 id.
    pub(crate) const CF_SINGLE_DELETION: u8 = 0x8;
    /// Range deletion `[key, value)` in the default column family
    /// (`ValueKind::RangeDeletion`).
    pub(crate) const RANGE_DELETION: u8 = 0xF;
    /// Range deletion in a column family named by a varint32 id.
    pub(crate) const CF_RANGE_DELETION: u8 = 0xE;
    /// Expiring value (`value ++ fixed64 expiry`) in the default column
    /// family (`ValueKind::ValueWithExpiry`; Shale's own tag).
    pub(crate) const VALUE_WITH_EXPIRY: u8 = 0x20;
    /// Expiring value in a column family named by a varint32 id.
    pub(crate) const CF_VALUE_WITH_EXPIRY: u8 = 0x21;
}

/// The `file` named by corruption errors of the batch decoder before a
/// caller relocates them (see [`WriteBatch::validate`]); their `offset` is
/// then the byte offset inside the batch.
pub(crate) const BATCH_ERROR_FILE: &str = "write batch";
