//! Snapshots: a sequence number pinned until the handle is dropped.
//!
//! The list of live snapshots tells compaction which old versions must be
//! kept. Thread safety: the list is behind its own small mutex, touched only
//! when snapshots are created or dropped and when compaction starts.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::base::SeqNo;

/// Live snapshots: seqno -> number of handles.
#[derive(Default)]
pub(crate) struct SnapshotList {
    live: Mutex<BTreeMap<SeqNo, usize>>,
}

impl SnapshotList {
    #[cfg(test)]
    pub(crate) fn acquire(self: &Arc<Self>, seq: SeqNo) -> Snapshot {
        self.acquire_with(|| seq)
    }

    /// Registers the sequence number `seq()` returns, calling it under the
    /// list's lock (see `Db::snapshot`).
    pub(crate) fn acquire_with(self: &Arc<Self>, seq: impl FnOnce() -> SeqNo) -> Snapshot {
        let mut live = self.live.lock();
        let seq = seq();
        crate::sync_point!("Snapshot::AfterSequence");
        *live.entry(seq).or_insert(0) += 1;
        drop(live);
        Snapshot {
            seq,
            list: Arc::clone(self),
        }
    }

    /// Sequence numbers of all live snapshots, ascending.
    pub(crate) fn all(&self) -> Vec<SeqNo> {
        self.live.lock().keys().copied().collect()
    }

    /// The oldest live snapshot.
    pub(crate) fn oldest(&self) -> Option<SeqNo> {
        self.live.lock().keys().next().copied()
    }

    fn release(&self, seq: SeqNo) {
        let mut live = self.live.lock();
        if let Some(n) = live.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.remove(&seq);
            }
        }
    }
}

/// A consistent point-in-time view of the DB; released on drop.
pub struct Snapshot {
    seq: SeqNo,
    list: Arc<SnapshotList>,
}

impl Snapshot {
    /// The sequence number this snapshot reads at.
    pub fn sequence(&self) -> SeqNo {
        self.seq
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Snapshot({})", self.seq)
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.list.release(self.seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_release() {
        let l = Arc::new(SnapshotList::default());
        let a = l.acquire(5);
        let b = l.acquire(5);
        let c = l.acquire(9);
        assert_eq!(l.all(), vec![5, 9]);
        drop(a);
        assert_eq!(l.oldest(), Some(5));
        drop(b);
        assert_eq!(l.all(), vec![9]);
        assert_eq!(c.sequence(), 9);
        drop(c);
        assert!(l.all().is_empty());
    }
}
