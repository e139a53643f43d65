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
mod tests {
    use super::*;
    use std::sync::Arc;

    fn keys(l: &Lru<Arc<u64>>) -> Vec<u64> {
        l.values().map(|v| **v).collect()
    }

    #[test]
    fn holds_at_most_capacity_and_evicts_least_recent() {
        let mut l = Lru::new(3);
        for k in 1..=3 {
            let (v, ev) = l.insert(k, Arc::new(k));
            assert_eq!(*v, k);
            assert!(ev.is_empty());
        }
        assert_eq!(keys(&l), vec![3, 2, 1]);
        // Touching 1 makes 2 the least recently used.
        assert_eq!(l.get(1).map(|v| *v), Some(1));
        assert_eq!(keys(&l), vec![1, 3, 2]);
        let (_, ev) = l.insert(4, Arc::new(4));
        assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![2]);
        assert_eq!(l.len(), 3);
        assert!(l.get(2).is_none());
        assert_eq!(keys(&l), vec![4, 1, 3]);
        let (_, ev) = l.insert(5, Arc::new(5));
        assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![3]);
        assert_eq!(keys(&l), vec![5, 4, 1]);
    }

    #[test]
    fn insert_of_present_key_keeps_the_cached_value() {
        let mut l = Lru::new(2);
        l.insert(1, Arc::new(10));
        l.insert(2, Arc::new(20));
        let (v, ev) = l.insert(1, Arc::new(99));
        assert_eq!(*v, 10);
        assert!(ev.is_empty());
        // The repeated insert counted as a use: 2 is evicted next.
        let (_, ev) = l.insert(3, Arc::new(30));
        assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), vec![20]);
    }

    #[test]
    fn evicted_value_in_use_stays_valid() {
        let mut l = Lru::new(1);
        let (held, _) = l.insert(1, Arc::new(7));
        assert_eq!(Arc::strong_count(&held), 2);
        let (_, ev) = l.insert(2, Arc::new(8));
        drop(ev);
        // The cache dropped its handle; the user's is the last one.
        assert_eq!(*held, 7);
        assert_eq!(Arc::strong_count(&held), 1);
        assert!(l.get(1).is_none());
    }

    #[test]
    fn remove_and_slot_reuse_keep_the_list_consistent() {
        let mut l = Lru::new(4);
        for k in 0..4 {
            l.insert(k, Arc::new(k));
        }
        assert_eq!(l.remove(2).map(|v| *v), Some(2));
        assert_eq!(l.remove(2), None);
        assert_eq!(l.remove(3).map(|v| *v), Some(3)); // the head
        assert_eq!(l.remove(0).map(|v| *v), Some(0)); // the tail
        assert_eq!(keys(&l), vec![1]);
        for k in 10..13 {
            l.insert(k, Arc::new(k));
        }
        assert_eq!(keys(&l), vec![12, 11, 10, 1]);
        assert_eq!(l.slots.len(), 4, "freed slots are reused");
        l.insert(13, Arc::new(13));
        assert_eq!(keys(&l), vec![13, 12, 11, 10]);
        assert_eq!(l.remove(13).map(|v| *v), Some(13));
        assert_eq!(l.remove(10).map(|v| *v), Some(10));
        assert_eq!(keys(&l), vec![12, 11]);
    }

    #[test]
    fn random_ops_match_a_model() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(0x7ab1e);
        for cap in 1..6 {
            let mut l: Lru<Arc<u64>> = Lru::new(cap);
            // Model: keys, most recent first.
            let mut model: Vec<u64> = Vec::new();
            for _ in 0..2000 {
                let k = rng.gen_range(0..10u64);
                match rng.gen_range(0..3) {
                    0 => {
                        let got = l.get(k).map(|v| *v);
                        let pos = model.iter().position(|&m| m == k);
                        assert_eq!(got, pos.map(|_| k));
                        if let Some(p) = pos {
                            model.remove(p);
                            model.insert(0, k);
                        }
                    }
                    1 => {
                        let (_, ev) = l.insert(k, Arc::new(k));
                        let mut want = Vec::new();
                        if let Some(p) = model.iter().position(|&m| m == k) {
                            model.remove(p);
                        } else {
                            while model.len() >= cap {
                                want.push(model.pop().unwrap_or_default());
                            }
                        }
                        model.insert(0, k);
                        assert_eq!(ev.iter().map(|v| **v).collect::<Vec<_>>(), want);
                    }
                    _ => {
                        let got = l.remove(k).map(|v| *v);
                        let pos = model.iter().position(|&m| m == k);
                        assert_eq!(got, pos.map(|_| k));
                        if let Some(p) = pos {
                            model.remove(p);
                        }
                    }
                }
                assert!(l.len() <= cap);
                assert_eq!(keys(&l), model);
            }
        }
    }
}
