//! The history vocabulary: one [`Operation`] per client call on a key-value
//! store, with its call and return times.
//!
//! Times are nanoseconds on one monotonic clock shared by all clients. An
//! operation whose outcome is unknown (it returned an error, or was in flight
//! at a crash) has `ret == None`: it may or may not have taken effect, and if
//! it did, at any time after its call. The checker treats its return as
//! +infinity, which is exactly that: linearizing it last makes it invisible.
//!
//! Invariants expected by the checker (not enforced): `call <= ret` for
//! completed operations; a `Get` always has a return (a read whose outcome is
//! unknown constrains nothing and should be dropped by the recorder).

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
        }
    }

    /// True if this operation may or may not have taken effect.
    pub fn is_maybe(&self) -> bool {
        self.ret.is_none()
    }
}
