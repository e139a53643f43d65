//! One mutex per key, so the expected state of a key changes only with the
//! DB write it describes (db_stress locks key ranges the same way).
//!
//! Deadlock freedom: an operation on several keys locks them in ascending
//! order ([`KeyLocks::lock_many`] sorts and deduplicates).

use std::sync::{Mutex, MutexGuard};

/// Per-key locks for keys `0..max_key`.
pub struct KeyLocks {
    locks: Vec<Mutex<()>>,
}

/// Held locks of one operation.
pub type Held<'a> = Vec<MutexGuard<'a, ()>>;

impl KeyLocks {
    /// Locks for `max_key` keys.
    pub fn new(max_key: u64) -> KeyLocks {
        KeyLocks {
            locks: (0..max_key).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Locks one key. Requires `key < max_key`.
    pub fn lock(&self, key: u64) -> MutexGuard<'_, ()> {
        // A poisoned lock only means another worker panicked; the expected
        // state stays meaningful (its pending mark covers the broken write).
        self.locks[key as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Locks `keys` in ascending order; returns them sorted and deduplicated.
    pub fn lock_many(&self, keys: &mut Vec<u64>) -> Held<'_> {
        keys.sort_unstable();
        keys.dedup();
        keys.iter().map(|&k| self.lock(k)).collect()
    }
}
