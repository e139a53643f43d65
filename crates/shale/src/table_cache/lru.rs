//! [`Lru`]: a count-bounded least-recently-used map from file number to a
//! shared value, the bounded table cache's store (`max_open_files >= 0`).
//!
//! Entries live in a slab (`Vec<Slot>`) threaded by a doubly linked list
//! of slot indices, most recently used first, with a `HashMap` from key to
//! slot: lookup, insert, touch and eviction are O(1).
//!
//! Invariants:
//! - `len() <= capacity()` after every call (capacity is at least 1);
//! - the list holds exactly the occupied slots, each once; `map[k] == i`
//!   iff slot `i` is occupied with key `k`; free slots are in `free`.
//!
//! Eviction hands the evicted values back to the caller instead of dropping
//! them, so the caller can drop them after releasing its lock (dropping the
//! last handle of a table reader closes its file). A value that is still in
//! use elsewhere (a clone of an `Arc`) stays valid: eviction only drops the
//! cache's own handle.
//!
//! Thread-safety: none; the table cache wraps it in a mutex.

use std::collections::HashMap;

const NIL: usize = usize::MAX;

struct Slot<V> {
    key: u64,
    value: Option<V>,
    prev: usize,
    next: usize,
}

/// See the module comment.
pub(crate) struct Lru<V> {
    map: HashMap<u64, usize>,
    slots: Vec<Slot<V>>,
    free: Vec<usize>,
    /// Most recently used slot (`NIL` when empty).
    head: usize,
    /// Least recently used slot (`NIL` when empty).
    tail: usize,
    capacity: usize,
}

impl<V: Clone> Lru<V> {
    /// An empty map holding at most `capacity` (at least 1) entries.
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Lru {
            map: HashMap::with_capacity(capacity.min(1 << 16)),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity,
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// The value of `key`, now the most recently used entry.
    pub(crate) fn get(&mut self, key: u64) -> Option<V> {
        let i = *self.map.get(&key)?;
        self.unlink(i);
        self.push_front(i);
        self.slots[i].value.clone()
    }

    /// Inserts `value` under `key` as the most recently used entry and
    /// returns the value now cached under `key` (the existing one when the
    /// key was present: a file number always names the same file) and the
    /// entries evicted to stay within the capacity, least recent first.
    pub(crate) fn insert(&mut self, key: u64, value: V) -> (V, Vec<V>) {
        if let Some(v) = self.get(key) {
            return (v, Vec::new());
        }
        let mut evicted = Vec::new();
        while self.map.len() >= self.capacity {
            let lru = self.slots[self.tail].key;
            if let Some(v) = self.remove(lru) {
                evicted.push(v);
            }
        }
        let slot = Slot {
            key,
            value: Some(value.clone()),
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.push_front(i);
        self.map.insert(key, i);
        (value, evicted)
    }

    /// Removes `key`, returning its value.
    pub(crate) fn remove(&mut self, key: u64) -> Option<V> {
        let i = self.map.remove(&key)?;
        self.unlink(i);
        self.free.push(i);
        self.slots[i].value.take()
    }

    /// Every cached value, most recently used first (does not touch them).
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        let mut i = self.head;
        std::iter::from_fn(move || {
            let s = self.slots.get(i)?;
            i = s.next;
            s.value.as_ref()
        })
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.slots[i].prev, self.slots[i].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n].prev = prev,
        }
        self.slots[i].prev = NIL;
        self.slots[i].next = NIL;
    }

    fn push_front(&mut self, i: usize) {
        self.slots[i].prev = NIL;
        self.slots[i].next = self.head;
        match self.head {
            NIL => self.tail = i,
            h => self.slots[h].prev = i,
        }
        self.head = i;
    }
}

#[cfg(test)]
mod tests;
