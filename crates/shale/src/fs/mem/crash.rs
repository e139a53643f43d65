//! The crash simulation of [`MemFileSystem`]: the file system as a power
//! loss (`crash`: unsynced bytes kept with a probability, by crash blocks)
//! or a process crash (`crash_process`) would leave it, snapshots taken at
//! chosen operation counts (`capture_at`), and what the tests inspect
//! (operation counts, direct opens, range syncs, unsynced bytes).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{Content, DirectOpen, MemFileSystem};

impl MemFileSystem {
    /// The image a power loss would leave now: synced data and synced
    /// directory entries, plus each unsynced 4 KiB block and each unsynced
    /// directory operation kept with probability `keep_unsynced_probability`
    /// (deterministic for a given `seed` and history).
    pub fn crash(&self, keep_unsynced_probability: f64, seed: u64) -> MemFileSystem {
        self.state
            .lock()
            .power_loss_image(keep_unsynced_probability, seed)
    }

    /// The image a process crash would leave now: every byte and directory
    /// operation handed to the OS is kept; bytes still in a writable
    /// handle's process buffer are lost.
    pub fn crash_process(&self) -> MemFileSystem {
        let st = self.state.lock();
        st.image(&st.names, st.dirs.clone(), |c| Content {
            synced: c.data.len(),
            data: Arc::clone(&c.data),
            old: None,
        })
    }

    /// Number of mutating calls performed so far (see the module docs for
    /// which calls count).
    pub fn op_count(&self) -> u64 {
        self.state.lock().ops
    }

    /// After this, every mutating call numbered above `after` fails with an
    /// IO error, as if the machine had stopped (calls are numbered from 1);
    /// `None` lifts the freeze.
    pub fn freeze_after(&self, after: Option<u64>) {
        self.state.lock().freeze_after = after;
    }

    /// Records the `crash(0.0, _)` image right after each mutating call whose
    /// number is in `ops` (0 = now, if no call happened yet). Collect them
    /// with [`MemFileSystem::take_captures`].
    pub fn capture_at(&self, ops: impl IntoIterator<Item = u64>) {
        let mut st = self.state.lock();
        st.capture_at.extend(ops);
        let now = st.ops;
        if st.capture_at.remove(&now) {
            let img = st.power_loss_image(0.0, 0);
            st.captures.insert(now, img);
        }
    }

    /// The images recorded so far by [`MemFileSystem::capture_at`], by call
    /// number.
    pub fn take_captures(&self) -> BTreeMap<u64, MemFileSystem> {
        std::mem::take(&mut self.state.lock().captures)
    }

    /// The opens with `FileOptions::direct` so far, oldest first (not
    /// carried into crash images).
    pub fn direct_opens(&self) -> Vec<DirectOpen> {
        self.state.lock().direct_opens.clone()
    }

    /// Every `range_sync` call so far, in order: (path, offset, len).
    pub fn range_syncs(&self) -> Vec<(PathBuf, u64, u64)> {
        self.state.lock().range_syncs.clone()
    }

    /// Total bytes handed to the OS but not yet synced, over all live files.
    pub fn unsynced_bytes(&self) -> u64 {
        let st = self.state.lock();
        st.names
            .values()
            .map(|i| {
                let c = i.content.lock();
                (c.data.len() - c.synced.min(c.data.len())) as u64
            })
            .sum()
    }
}
