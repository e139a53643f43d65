//! The vocabulary the dumpers print: [`EntryKind`] (a public mirror of the
//! frozen value kinds) and [`InternalKey`] (a decoded internal key).
//!
//! Invariant: `EntryKind` maps one to one onto the kinds the engine stores
//! (`base::ValueKind`); an unknown kind byte read from disk is corruption.

use crate::base::{parse_internal_key, SeqNo, ValueKind};
use crate::error::{Error, Result};

/// What an entry means (a write-batch record's or an SST entry's kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A value.
    Put,
    /// A point tombstone.
    Delete,
    /// A merge operand.
    Merge,
    /// A single-deletion tombstone.
    SingleDelete,
    /// A range tombstone `[key, value)`.
    RangeDelete,
    /// A value with an expiry.
    ExpiringPut,
    /// A reference into a blob file: the value is a blob index (file
    /// number, offset, size, compression; docs/format/blob.md).
    BlobIndex,
}

impl EntryKind {
    pub(crate) fn from_kind(k: ValueKind) -> EntryKind {
        match k {
            ValueKind::Deletion => EntryKind::Delete,
            ValueKind::Value => EntryKind::Put,
            ValueKind::Merge => EntryKind::Merge,
            ValueKind::SingleDeletion => EntryKind::SingleDelete,
            ValueKind::RangeDeletion => EntryKind::RangeDelete,
            ValueKind::BlobIndex => EntryKind::BlobIndex,
            ValueKind::ValueWithExpiry => EntryKind::ExpiringPut,
        }
    }

    /// A short lowercase name (`put`, `delete`, `merge`, `single_delete`,
    /// `range_delete`, `expiring_put`, `blob_index`).
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Put => "put",
            EntryKind::Delete => "delete",
            EntryKind::Merge => "merge",
            EntryKind::SingleDelete => "single_delete",
            EntryKind::RangeDelete => "range_delete",
            EntryKind::ExpiringPut => "expiring_put",
            EntryKind::BlobIndex => "blob_index",
        }
    }
}

/// A decoded internal key: user key, sequence number and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InternalKey {
    /// The user key.
    pub user_key: Vec<u8>,
    /// The sequence number (56 bits).
    pub seq: SeqNo,
    /// The entry's kind.
    pub kind: EntryKind,
}

impl InternalKey {
    /// Decodes `ikey`; a short key or an unknown kind is `Corruption`
    /// naming `file` and `offset`.
    pub(crate) fn decode(ikey: &[u8], file: &str, offset: u64) -> Result<InternalKey> {
        let p = parse_internal_key(ikey).ok_or_else(|| {
            Error::corruption(
                file,
                offset,
                format!("malformed internal key ({} bytes)", ikey.len()),
            )
        })?;
        Ok(InternalKey {
            user_key: p.user_key.to_vec(),
            seq: p.seq,
            kind: EntryKind::from_kind(p.kind),
        })
    }
}
