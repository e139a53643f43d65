//! `CfRegistry`: the live families by id and by name, for the paths that
//! must not take the DB mutex (the write leader resolving a batch's family
//! ids, `Db::cf`).
//!
//! Invariant: holds exactly the families of `DbState::cfs`; both change
//! together under the DB mutex (the registry's own lock is taken inside
//! it). Lookups take the read lock only.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use super::ColumnFamily;

#[derive(Default)]
pub(crate) struct CfRegistry {
    inner: RwLock<Maps>,
    /// Some family ever registered has a default TTL (the write path then
    /// rewrites puts of such families as expiring ones).
    any_ttl: AtomicBool,
}

#[derive(Default)]
struct Maps {
    by_id: HashMap<u32, Arc<ColumnFamily>>,
    by_name: HashMap<String, Arc<ColumnFamily>>,
}

impl CfRegistry {
    /// Adds a family (under the DB mutex).
    pub(crate) fn insert(&self, cf: Arc<ColumnFamily>) {
        if cf.opts().default_ttl_secs > 0 {
            self.any_ttl.store(true, Ordering::Release);
        }
        let mut m = self.inner.write();
        m.by_name.insert(cf.name.clone(), Arc::clone(&cf));
        m.by_id.insert(cf.id, cf);
    }

    /// Takes note of a family's changed options (under the DB mutex).
    pub(crate) fn options_changed(&self, cf: &ColumnFamily) {
        if cf.opts().default_ttl_secs > 0 {
            self.any_ttl.store(true, Ordering::Release);
        }
    }

    /// Removes a family (under the DB mutex).
    pub(crate) fn remove(&self, id: u32) {
        let mut m = self.inner.write();
        if let Some(cf) = m.by_id.remove(&id) {
            m.by_name.remove(&cf.name);
        }
    }

    /// True when some family registered so far has a default TTL.
    #[inline]
    pub(crate) fn any_ttl(&self) -> bool {
        self.any_ttl.load(Ordering::Acquire)
    }

    /// The live family with id `id`.
    pub(crate) fn get(&self, id: u32) -> Option<Arc<ColumnFamily>> {
        self.inner.read().by_id.get(&id).cloned()
    }

    /// The live family named `name`.
    pub(crate) fn by_name(&self, name: &str) -> Option<Arc<ColumnFamily>> {
        self.inner.read().by_name.get(name).cloned()
    }

    /// Every live family, by id.
    pub(crate) fn all(&self) -> Vec<Arc<ColumnFamily>> {
        let m = self.inner.read();
        let mut v: Vec<Arc<ColumnFamily>> = m.by_id.values().cloned().collect();
        v.sort_by_key(|c| c.id);
        v
    }
}
