//! Range tombstones (`Db::delete_range`): `[start, end)` deleted at a
//! sequence number, for every entry of a key in the range with a smaller
//! sequence number.
//!
//! A memtable keeps the tombstones written to it apart from its point
//! entries; a table keeps them in its range-deletion block
//! (docs/format/sst.md). Readers use them *fragmented* (`fragments.rs`):
//! cut at every start and end into disjoint pieces, each with the sequence
//! numbers of the tombstones over it, so that "which tombstones cover this
//! key" is one binary search.
//!
//! Invariant the readers rely on (RocksDB's): a tombstone in a newer source
//! (memtable before older memtables, L0 newest first, then the levels) is
//! newer than every entry of the keys it covers in older sources, because
//! tables' key ranges include their tombstones (so compaction moves them
//! down with the keys they cover).

mod fragments;

pub(crate) use fragments::{clip, Fragment, Fragments};

use crate::base::SeqNo;

/// One range tombstone as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RangeTombstone {
    pub start: Vec<u8>,
    pub end: Vec<u8>,
    pub seq: SeqNo,
}
