//! The DB: open and recovery, the write path (group commit), reads, iterators,
//! snapshots, background flush, properties.

mod snapshot;

pub use snapshot::Snapshot;
#[allow(unused_imports)]
pub(crate) use snapshot::SnapshotList;
