//! The history vocabulary: one [`Operation`] per client call on a key-value
//! store, with its call and return times.
//!
//! Times are nanoseconds on one monotonic clock shared by all clients. An
//! operation whose outcome is unknown (it returned an error, or was in flight
//! at a crash) has `ret == None`: it may or may not have taken effect, and if
//! it did, at any time after its call. The checker treats its return as
//! +infinity, which is exactly that: linearizing it last makes it invisible.
//!
//! An operation in flight when its process was killed has `ret == None` and
//! `crash == Some(t)`, t at or after the kill: if it took effect, it did
//! before t (the process that ran it is gone). The checker may linearize it
//! as a no-op, or as its effect anywhere in `[call, t]`, but never after t:
//! a write cut by a crash cannot reappear after the recovery read that did
//! not see it.
//!
//! Multi-key operations (a write batch, a read of several keys at one
//! snapshot) are recorded as one operation per key sharing a `group` id,
//! unique in the history. The per-key check treats them as independent
//! operations over the group's interval; the cross-key check (`cut`) uses
//! the group to check atomicity and consistent cuts.
//!
//! Invariants expected by the checker (not enforced): `call <= ret` (and
//! `call <= crash`) for operations; a `Get` always has a return (a read whose
//! outcome is unknown constrains nothing and should be dropped by the
//! recorder); the operations of one group have the same call, return and
//! crash times, and are all reads or all writes.

/// What an operation did to its key, with its observed result for reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpKind {
    /// Set the key to this value.
    Put(Vec<u8>),
    /// Remove the key.
    Delete,
    /// Read the key and observed this value (`None`: absent).
    Get(Option<Vec<u8>>),
}

/// One call on the store by one client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operation {
    /// The calling client (thread); used for reports and Porcupine's
    /// visualization, not by the check itself.
    pub client_id: usize,
    /// The key the operation touched.
    pub key: Vec<u8>,
    /// The operation and, for a read, its result.
    pub kind: OpKind,
    /// Time the call started.
    pub call: u64,
    /// Time the call returned; `None` if its outcome is unknown.
    pub ret: Option<u64>,
    /// For an operation with unknown outcome: a time by which its process
    /// had died, so any effect happened before it. `None`: unbounded.
    pub crash: Option<u64>,
    /// The multi-key operation this one belongs to, if any.
    pub group: Option<u64>,
}

impl Operation {
    /// A completed operation.
    pub fn new(client_id: usize, key: &[u8], kind: OpKind, call: u64, ret: u64) -> Operation {
        Operation {
            client_id,
            key: key.to_vec(),
            kind,
            call,
            ret: Some(ret),
            crash: None,
            group: None,
        }
    }

    /// A write whose outcome is unknown ("maybe applied").
    pub fn maybe(client_id: usize, key: &[u8], kind: OpKind, call: u64) -> Operation {
        Operation {
            client_id,
            key: key.to_vec(),
            kind,
            call,
            ret: None,
            crash: None,
            group: None,
        }
    }

    /// A write cut by a crash at `crash`: maybe applied, and if so before
    /// `crash`.
    pub fn cut_by_crash(
        client_id: usize,
        key: &[u8],
        kind: OpKind,
        call: u64,
        crash: u64,
    ) -> Operation {
        Operation {
            crash: Some(crash),
            ..Operation::maybe(client_id, key, kind, call)
        }
    }

    /// This operation as part of multi-key operation `group`.
    pub fn in_group(self, group: u64) -> Operation {
        Operation {
            group: Some(group),
            ..self
        }
    }

    /// The latest time this operation can take effect: its return, else
    /// its crash bound, else never bounded (`u64::MAX`).
    pub fn effect_deadline(&self) -> u64 {
        self.ret.or(self.crash).unwrap_or(u64::MAX)
    }

    /// True if this operation may or may not have taken effect.
    pub fn is_maybe(&self) -> bool {
        self.ret.is_none()
    }
}
