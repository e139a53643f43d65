//! The queue of write requests: one slot per waiting write (reused by its
//! thread's next write), and the queue the leader takes its group from.

use crate::batch::WriteBatch;
use crate::error::Result;
use crate::options::WriteOptions;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::Arc;

use super::insert::InsertJob;

pub(super) struct Request {
    pub(super) batch: Option<WriteBatch>,
    pub(super) sync: bool,
    pub(super) disable_wal: bool,
    /// Set by the leader: insert this batch into the memtable, then wait for
    /// the group to be published.
    pub(super) insert: Option<InsertJob>,
    pub(super) done: bool,
    pub(super) result: Result<()>,
}

pub(super) struct Slot {
    pub(super) req: Mutex<Request>,
    pub(super) cv: Condvar,
}

/// The queue of write requests: the request at its head leads the next
/// group (see the module header). Owned by the DB handle (`Db`): only
/// writes use it.
pub(crate) struct WriteQueue {
    pub(super) queue: Mutex<VecDeque<Arc<Slot>>>,
    /// The leader's group and batch vectors, kept between groups so that a
    /// group allocates nothing (only a leader takes it, and gives it back
    /// before its inserts: rarely contended).
    pub(super) scratch: Mutex<(Vec<Arc<Slot>>, Vec<WriteBatch>)>,
}

impl WriteQueue {
    pub(crate) fn new() -> Self {
        WriteQueue {
            queue: Mutex::new(VecDeque::new()),
            scratch: Mutex::new((Vec::new(), Vec::new())),
        }
    }
}

thread_local! {
    /// This thread's request slot, reused by its next write once nobody
    /// else holds it (a write allocates no slot in the common case).
    static SLOT: std::cell::RefCell<Option<Arc<Slot>>> = const { std::cell::RefCell::new(None) };
}

/// A slot for a new request: this thread's previous one if it is free.
pub(super) fn take_slot(batch: WriteBatch, opts: &WriteOptions) -> Arc<Slot> {
    let request = Request {
        batch: Some(batch),
        sync: opts.sync,
        disable_wal: opts.disable_wal,
        insert: None,
        done: false,
        result: Ok(()),
    };
    let reused = SLOT
        .try_with(|s| s.borrow_mut().take())
        .ok()
        .flatten()
        .filter(|s| Arc::strong_count(s) == 1);
    match reused {
        Some(slot) => {
            *slot.req.lock() = request;
            slot
        }
        None => Arc::new(Slot {
            req: Mutex::new(request),
            cv: Condvar::new(),
        }),
    }
}

/// Keeps `slot` for this thread's next write.
pub(super) fn return_slot(slot: Arc<Slot>) {
    let _ = SLOT.try_with(|s| *s.borrow_mut() = Some(slot));
}

/// Gives the group vectors back for the next leader.
pub(super) fn return_scratch(
    wq: &WriteQueue,
    mut group: Vec<Arc<Slot>>,
    mut batches: Vec<WriteBatch>,
) {
    group.clear();
    batches.clear();
    *wq.scratch.lock() = (group, batches);
}
