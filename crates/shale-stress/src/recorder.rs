//! Records a concurrent history of operations on a [`Store`] for the
//! linearizability checker.
//!
//! Thread safety: a [`Recorder`] is shared by all client threads; each thread
//! owns its [`ClientLog`] (an append-only buffer, passed `&mut`), so the op
//! path takes no shared lock and the recorder does not serialize clients
//! (which would hide races). Logs are merged after the threads stop.
//!
//! Per operation: the call time is taken right before the store call, the
//! return time right after it returns (both fenced, see [`Clock`]).
//! - A write that returns an error is recorded as maybe-applied (no return).
//! - A read that returns an error is dropped (counted in `failed_reads`).
//! - A batch is recorded as one operation per key, all with the batch's
//!   interval and one group id; when a key occurs twice in a batch only its
//!   last write is recorded (earlier ones are invisible to every reader).
//! - A snapshot read of several keys is one `Get` per key with the read's
//!   interval and one group id. The per-key checker sees each key alone;
//!   `lincheck::cut` checks atomicity across the keys of a group.
//!
//! Written values are unique per history: `v<client>.<counter>`, and the
//! counter lives in the `ClientLog`, so it keeps counting across a reopen
//! (a new `Recorder` over the reopened store, same clock, same logs).

use std::collections::HashMap;

use crate::clock::Clock;
use crate::lincheck::{OpKind, Operation};
use crate::store::{BatchWrite, Store};

/// One client's operations, in call order.
#[derive(Debug)]
pub struct ClientLog {
    client_id: usize,
    counter: u64,
    ops: Vec<Operation>,
    /// Reads that returned an error (not recorded).
    pub failed_reads: u64,
}

impl ClientLog {
    /// An empty log for client `client_id`.
    pub fn new(client_id: usize) -> ClientLog {
        ClientLog {
            client_id,
            counter: 0,
            ops: Vec::new(),
            failed_reads: 0,
        }
    }

    /// A fresh value, unique across all clients of a history.
    pub fn unique_value(&mut self) -> Vec<u8> {
        self.counter += 1;
        format!("v{}.{}", self.client_id, self.counter).into_bytes()
    }

    /// The recorded operations.
    pub fn ops(&self) -> &[Operation] {
        &self.ops
    }

    /// Merges logs into one history (order does not matter to the checker).
    pub fn merge(logs: impl IntoIterator<Item = ClientLog>) -> Vec<Operation> {
        logs.into_iter().flat_map(|l| l.ops).collect()
    }

    /// A fresh group id, unique across all clients of a history.
    fn group_id(&mut self) -> u64 {
        self.counter += 1;
        ((self.client_id as u64 + 1) << 40) | self.counter
    }

    fn record(&mut self, key: &[u8], kind: OpKind, call: u64, ret: Option<u64>) {
        self.record_in(key, kind, call, ret, None);
    }

    fn record_in(
        &mut self,
        key: &[u8],
        kind: OpKind,
        call: u64,
        ret: Option<u64>,
        group: Option<u64>,
    ) {
        self.ops.push(Operation {
            client_id: self.client_id,
            key: key.to_vec(),
            kind,
            call,
            ret,
            crash: None,
            group,
        });
    }
}

/// A store whose operations are recorded into client logs.
pub struct Recorder<S> {
    store: S,
    clock: Clock,
}

impl<S: Store> Recorder<S> {
    /// Records operations on `store`, timed by `clock`.
    pub fn new(store: S, clock: Clock) -> Recorder<S> {
        Recorder { store, clock }
    }

    /// The wrapped store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Unwraps the store (for example to close it before a reopen).
    pub fn into_store(self) -> S {
        self.store
    }

    /// Puts a fresh unique value under `key`; returns the value written.
    pub fn put(&self, log: &mut ClientLog, key: &[u8]) -> shale::Result<Vec<u8>> {
        let value = log.unique_value();
        let call = self.clock.now();
        let r = self.store.put(key, &value);
        let ret = self.clock.now();
        log.record(
            key,
            OpKind::Put(value.clone()),
            call,
            r.is_ok().then_some(ret),
        );
        r.map(|()| value)
    }

    /// Deletes `key`.
    pub fn delete(&self, log: &mut ClientLog, key: &[u8]) -> shale::Result<()> {
        let call = self.clock.now();
        let r = self.store.delete(key);
        let ret = self.clock.now();
        log.record(key, OpKind::Delete, call, r.is_ok().then_some(ret));
        r
    }

    /// Reads `key`.
    pub fn get(&self, log: &mut ClientLog, key: &[u8]) -> shale::Result<Option<Vec<u8>>> {
        let call = self.clock.now();
        let r = self.store.get(key);
        let ret = self.clock.now();
        match &r {
            Ok(v) => log.record(key, OpKind::Get(v.clone()), call, Some(ret)),
            Err(_) => log.failed_reads += 1,
        }
        r
    }

    /// Writes a batch: for each `(key, put)` a fresh unique value if `put`,
    /// else a delete. Returns the writes applied.
    pub fn write_batch(
        &self,
        log: &mut ClientLog,
        keys: &[(Vec<u8>, bool)],
    ) -> shale::Result<Vec<BatchWrite>> {
        let writes: Vec<BatchWrite> = keys
            .iter()
            .map(|(k, put)| (k.clone(), put.then(|| log.unique_value())))
            .collect();
        let call = self.clock.now();
        let r = self.store.write(&writes);
        let ret = self.clock.now();
        let ret = r.is_ok().then_some(ret);
        // The last write per key is the one the batch leaves behind.
        let mut last: HashMap<&[u8], usize> = HashMap::new();
        for (i, (k, _)) in writes.iter().enumerate() {
            last.insert(k, i);
        }
        let group = (last.len() > 1).then(|| log.group_id());
        for (i, (k, v)) in writes.iter().enumerate() {
            if last.get(k.as_slice()) == Some(&i) {
                let kind = match v {
                    Some(v) => OpKind::Put(v.clone()),
                    None => OpKind::Delete,
                };
                log.record_in(k, kind, call, ret, group);
            }
        }
        r.map(|()| writes)
    }

    /// Reads `keys` (distinct) at one snapshot; returns what was read.
    pub fn snapshot_get(
        &self,
        log: &mut ClientLog,
        keys: &[Vec<u8>],
    ) -> shale::Result<Vec<Option<Vec<u8>>>> {
        let call = self.clock.now();
        let r = self.store.snapshot_get(keys);
        let ret = self.clock.now();
        match &r {
            Ok(values) => {
                let group = (keys.len() > 1).then(|| log.group_id());
                for (k, v) in keys.iter().zip(values) {
                    log.record_in(k, OpKind::Get(v.clone()), call, Some(ret), group);
                }
            }
            Err(_) => log.failed_reads += 1,
        }
        r
    }
}
