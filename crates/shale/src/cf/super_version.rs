//! The super version: everything a read of one column family needs,
//! published atomically.
//!
//! A reader loads the current `Arc<SuperVersion>` from an `ArcSwap` (no DB
//! mutex) and reads the memtable, the immutable memtables (newest first) and
//! the LSM version it names. Writers of the DB state build a new super version
//! under the DB mutex and swap it in; readers holding the old one keep its
//! memtables and tables alive until they drop it.

use std::sync::Arc;

use crate::memtable::MemTable;
use crate::version::Version;

pub(crate) struct SuperVersion {
    /// The active memtable.
    pub mem: Arc<MemTable>,
    /// Immutable memtables waiting for flush, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// The LSM shape.
    pub version: Arc<Version>,
}
