//! Snapshots: a sequence number pinned until the handle is dropped.
//!
//! The list of live snapshots tells compaction which old versions must be
//! kept. Thread safety: the list is behind its own small mutex, touched only
//! when snapshots are created or dropped and when jobs start and install;
//! it is taken after the DB mutex, never before it.
//!
//! A flush or compaction takes the list when it starts; a snapshot taken
//! later is unknown to it. Such a snapshot reads at or above every entry of
//! the job's input (all of it was visible when the job started: an
//! immutable memtable holds no write in flight), so it cannot read the
//! versions the job drops as shadowed; it can read what the user's
//! compaction filter changed. A job whose filter changed a value therefore
//! asks [`SnapshotList::admit`] before installing; refused, it runs again
//! with the filter off. A rerun that knew the refusing snapshot would leave
//! every value unfiltered anyway (the snapshot sees all of its input), and
//! without the filter nothing can be refused: a job runs at most twice,
//! whatever stream of snapshots is taken meanwhile.
//!
//! Invariant: a snapshot reads the same before and after any job installs.
//! While an admitted job installs (its MANIFEST write, then the new super
//! version), new snapshots wait: one taken in between could read the old
//! state and then the filtered one. Jobs that changed nothing never make
//! snapshots wait.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::SeqNo;

/// Live snapshots: seqno -> number of handles.
#[derive(Default)]
pub(crate) struct SnapshotList {
    live: Mutex<Live>,
    /// Signalled when the last install hold is dropped.
    installed: Condvar,
}

#[derive(Default)]
struct Live {
    seqs: BTreeMap<SeqNo, usize>,
    /// Jobs admitted and still installing: new snapshots wait for 0.
    installing: usize,
}

/// What a job with outputs ready does with them (see
/// [`SnapshotList::admit`]).
pub(crate) enum Admission {
    /// Install them; new snapshots wait while the hold (if any) lives.
    Install(Option<InstallHold>),
    /// A snapshot the job did not know reads a value its filter changed:
    /// discard the outputs and run again, with the current list and the
    /// filter off.
    RunAgain,
}

/// Keeps new snapshots waiting until dropped.
pub(crate) struct InstallHold {
    list: Arc<SnapshotList>,
}

impl Drop for InstallHold {
    fn drop(&mut self) {
        let mut live = self.list.live.lock();
        live.installing -= 1;
        if live.installing == 0 {
            self.list.installed.notify_all();
        }
    }
}

impl SnapshotList {
    #[cfg(test)]
    pub(crate) fn acquire(self: &Arc<Self>, seq: SeqNo) -> Snapshot {
        self.acquire_with(|| seq)
    }

    /// Registers the sequence number `seq()` returns, calling it under the
    /// list's lock (see `Db::snapshot`), once no admitted job is installing.
    pub(crate) fn acquire_with(self: &Arc<Self>, seq: impl FnOnce() -> SeqNo) -> Snapshot {
        let mut live = self.live.lock();
        while live.installing > 0 {
            self.installed.wait(&mut live);
        }
        let seq = seq();
        crate::sync_point!("Snapshot::AfterSequence");
        *live.seqs.entry(seq).or_insert(0) += 1;
        drop(live);
        Snapshot {
            seq,
            list: Arc::clone(self),
        }
    }

    /// Sequence numbers of all live snapshots, ascending.
    pub(crate) fn all(&self) -> Vec<SeqNo> {
        self.live.lock().seqs.keys().copied().collect()
    }

    /// The oldest live snapshot.
    pub(crate) fn oldest(&self) -> Option<SeqNo> {
        self.live.lock().seqs.keys().next().copied()
    }

    /// Whether a job may install its outputs, asked under the DB mutex
    /// before its MANIFEST write. `known` is the list the job ran with
    /// (ascending); its filter changed values from sequence
    /// `oldest_filtered` up (`None`: nothing). A live snapshot outside
    /// `known` at or above it reads a changed value in its original form now
    /// and would read it changed once the job installs: the job must run
    /// again. Else, if the filter changed anything, new snapshots wait until
    /// the returned hold is dropped, which the job does once its super
    /// version is installed (or it gives up).
    pub(crate) fn admit(
        self: &Arc<Self>,
        known: &[SeqNo],
        oldest_filtered: Option<SeqNo>,
    ) -> Admission {
        let Some(oldest) = oldest_filtered else {
            return Admission::Install(None);
        };
        let mut live = self.live.lock();
        if live
            .seqs
            .range(oldest..)
            .any(|(s, _)| known.binary_search(s).is_err())
        {
            return Admission::RunAgain;
        }
        live.installing += 1;
        Admission::Install(Some(InstallHold {
            list: Arc::clone(self),
        }))
    }

    fn release(&self, seq: SeqNo) {
        let mut live = self.live.lock();
        if let Some(n) = live.seqs.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                live.seqs.remove(&seq);
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
mod tests;
