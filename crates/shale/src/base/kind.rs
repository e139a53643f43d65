//! Value kinds stored in the low byte of an internal key's trailer and in
//! write-batch records.
//!
//! FROZEN: these discriminants are on disk (WAL, SST, MANIFEST). Never
//! renumber them; add new kinds with new numbers. They match RocksDB's
//! `ValueType` numbering so that dumps read the same to RocksDB users.

/// What an internal-key entry means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub(crate) enum ValueKind {
    /// A tombstone.
    Deletion = 0x0,
    /// A plain value.
    Value = 0x1,
    /// A merge operand, combined by the family's merge operator.
    Merge = 0x2,
    /// A single-deletion tombstone: deletes a key written once; it and
    /// that value vanish together at the first compaction that sees both.
    SingleDeletion = 0x7,
    /// A range tombstone: key = start, value = end (exclusive). Kept apart
    /// from point entries (memtable range list, SST range-deletion block).
    RangeDeletion = 0xF,
    /// A reference to a value in a blob file (`blob::BlobIndex`), written
    /// only by flushes and compactions (never in a WAL or a memtable).
    BlobIndex = 0x11,
    /// A value with an expiry: `value ++ fixed64 expiry` (Unix seconds;
    /// `base/expiry.rs`). Shale's own kind (RocksDB has no per-key TTL).
    ValueWithExpiry = 0x20,
}

impl ValueKind {
    /// Decodes a kind byte read from disk; `None` for unknown tags, which
    /// readers report as corruption.
    #[inline]
    pub(crate) fn from_u8(b: u8) -> Option<ValueKind> {
        Some(match b {
            0x0 => ValueKind::Deletion,
            0x1 => ValueKind::Value,
            0x2 => ValueKind::Merge,
            0x7 => ValueKind::SingleDeletion,
            0xF => ValueKind::RangeDeletion,
            0x11 => ValueKind::BlobIndex,
            0x20 => ValueKind::ValueWithExpiry,
            _ => return None,
        })
    }

    /// Kinds a write batch and a memtable hold (blob references are only
    /// in tables).
    #[inline]
    pub(crate) fn is_supported(self) -> bool {
        matches!(
            self,
            ValueKind::Deletion
                | ValueKind::Value
                | ValueKind::Merge
                | ValueKind::SingleDeletion
                | ValueKind::RangeDeletion
                | ValueKind::ValueWithExpiry
        )
    }
}

#[cfg(test)]
mod tests;
