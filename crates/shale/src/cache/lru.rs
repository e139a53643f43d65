//! Sharded LRU block cache with RocksDB's three priority pools.
//!
//! Layout of a shard: a slab `Vec<Node>` of entries linked into intrusive
//! doubly linked lists by `u32` indices, a `HashMap<CacheKey, u32>` from key
//! to slot, and a free list of slots. No operation allocates except when the
//! slab or the map grows past its high-water mark.
//!
//! Priority pools (RocksDB `lru_cache.cc` semantics, with the one RocksDB
//! list cut into three lists at its two pool boundaries):
//! - three LRU lists, `High`, `Low`, `Bottom`, each ordered oldest → newest.
//!   The high list may hold at most `high_pri_pool_ratio × capacity` bytes,
//!   the low list `low_pri_pool_ratio × capacity`; bottom takes the rest.
//! - where an entry goes when it is inserted or hit: entries that were hit
//!   go to the newest end of the highest pool that exists (ratio > 0);
//!   entries never hit go to the highest existing pool whose priority does
//!   not exceed their own (a High entry with `high_pri_pool_ratio = 0` goes
//!   to Low if it exists, else Bottom).
//! - overflow: while the high list exceeds its pool capacity its oldest
//!   entry is demoted to the newest end of the low list; then while the low
//!   list exceeds its pool its oldest entry is demoted to the newest end of
//!   the bottom list.
//! - eviction takes the oldest entry of Bottom, then of Low, then of High.
//!   With the defaults (0.5 / 0.0) this is RocksDB's "midpoint insertion":
//!   data blocks enter in the middle of the LRU order and must be hit to
//!   reach the protected upper half.
//!
//! Pinned entries: RocksDB takes referenced entries out of the LRU lists. We
//! cannot see a clone being dropped, so eviction discovers pinning lazily:
//! when the oldest candidate is pinned it is moved to a fourth list,
//! `Pinned`, and eviction goes on. A lookup of a parked entry puts it back
//! into the pools as a hit. When the three pools are empty and room is still
//! needed, the `Pinned` list is scanned and entries no longer pinned are
//! evicted (O(pinned entries) for that insert).
//!
//! Evicted values are dropped after the shard lock is released, as RocksDB
//! does (for `Arc<Block>` the drop is a free of the block, which other
//! threads should not wait for): eviction moves them into a [`Victims`]
//! on the caller's stack (no allocation), handed to
//! [`CacheValue::evicted`] once the guard is gone (which drops them, or
//! keeps a blob's buffer for reuse, `blob::recycle`).
//! An insert evicts about one entry of its own size, so the four slots are
//! enough but for a shrink of the capacity, whose extra victims are dropped
//! under the lock.
//!
//! Thread-safety: one `parking_lot::Mutex` per shard guards the lists and
//! the map; counters are atomics (see `counters.rs`).
//! Invariants (checked by `check_invariants` in tests): every live slot is
//! in exactly one list and in the map; each list's `usage` is the sum of
//! its charges; the shard's `usage` is the sum over all four lists; after
//! every operation `High.usage <= high_cap` and `Low.usage <= low_cap`.

use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;

use parking_lot::Mutex;

use super::counters::{CacheStats, ShardCounters};
use super::{hash_key, shard_of, CacheKey, CacheOptions, CacheValue, KeyHashBuilder, Priority};

#[cfg(test)]
mod tests;

const NIL: u32 = u32::MAX;

/// Which list a slot is linked into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListId {
    Bottom = 0,
    Low = 1,
    High = 2,
    /// Entries found pinned by eviction, out of the LRU order.
    Pinned = 3,
}

struct Node<V> {
    key: CacheKey,
    /// `None` only while the slot is on the free list.
    value: Option<V>,
    charge: usize,
    prev: u32,
    next: u32,
    list: ListId,
    pri: Priority,
    hit: bool,
}

#[derive(Debug, Clone, Copy)]
struct List {
    oldest: u32,
    newest: u32,
    usage: usize,
}

const EMPTY_LIST: List = List {
    oldest: NIL,
    newest: NIL,
    usage: 0,
};

/// The state of one shard, guarded by its mutex.
struct Inner<V> {
    map: HashMap<CacheKey, u32, KeyHashBuilder>,
    nodes: Vec<Node<V>>,
    free: Vec<u32>,
    lists: [List; 4],
    capacity: usize,
    high_ratio: f64,
    low_ratio: f64,
    high_cap: usize,
    low_cap: usize,
    usage: usize,
    strict: bool,
}

#[repr(align(64))]
struct Shard<V> {
    inner: Mutex<Inner<V>>,
    counters: ShardCounters,
}

/// A sharded LRU cache with priority pools. See the module header.
pub(crate) struct LruCache<V: CacheValue> {
    shards: Box<[Shard<V>]>,
    bits: u32,
    capacity: Mutex<usize>,
}

impl<V: CacheValue> LruCache<V> {
    /// A cache with `opts.capacity` bytes split over `2^shard_bits` shards.
    /// Pool ratios outside `[0, 1]` are clamped (validate options first).
    pub(crate) fn new(opts: &CacheOptions) -> Self {
        let bits = opts.shard_bits();
        let per_shard = CacheOptions::per_shard(opts.capacity, bits);
        let high_ratio = opts.high_pri_pool_ratio.clamp(0.0, 1.0);
        let low_ratio = opts.low_pri_pool_ratio.clamp(0.0, 1.0 - high_ratio);
        let shards = (0..1usize << bits)
            .map(|_| {
                let mut inner = Inner {
                    map: HashMap::default(),
                    nodes: Vec::new(),
                    free: Vec::new(),
                    lists: [EMPTY_LIST; 4],
                    capacity: 0,
                    high_ratio,
                    low_ratio,
                    high_cap: 0,
                    low_cap: 0,
                    usage: 0,
                    strict: opts.strict_capacity_limit,
                };
                inner.set_capacity(per_shard);
                Shard {
                    inner: Mutex::new(inner),
                    counters: ShardCounters::default(),
                }
            })
            .collect();
        LruCache {
            shards,
            bits,
            capacity: Mutex::new(opts.capacity),
        }
    }

    #[inline]
    fn shard(&self, key: &CacheKey) -> &Shard<V> {
        let i = shard_of(hash_key(key), self.bits);
        // `shard_of` returns `< 2^bits == shards.len()`.
        &self.shards[i]
    }

    /// Inserts `value` under `key` with `charge` bytes. See
    /// [`super::BlockCache::insert`].
    pub(crate) fn insert(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<(), V> {
        let shard = self.shard(&key);
        // Declared before the guard: dropped after it.
        let mut victims = Victims::new();
        let mut g = shard.inner.lock();
        if g.map.contains_key(&key) {
            drop(g);
            drop(value);
            return Ok(());
        }
        g.make_room(charge, &shard.counters, &mut victims);
        g.publish(&shard.counters);
        if g.usage + charge > g.capacity {
            if g.strict {
                return Err(value);
            }
            if !value.is_pinned() {
                // As RocksDB does for an insert without a handle: the entry
                // is inserted and evicted at once.
                shard.counters.inserted(charge);
                shard.counters.evicted(charge);
                drop(g);
                drop(value);
                return Ok(());
            }
        }
        let idx = g.alloc(Node {
            key,
            value: Some(value),
            charge,
            prev: NIL,
            next: NIL,
            list: ListId::Bottom,
            pri,
            hit: false,
        });
        g.map.insert(key, idx);
        g.usage += charge;
        g.lru_insert(idx);
        shard.counters.inserted(charge);
        g.publish(&shard.counters);
        Ok(())
    }

    /// A clone of the value under `key`; a hit moves the entry to the newest
    /// end of the highest pool. `pri` selects the hit/miss counter.
    pub(crate) fn lookup(&self, key: &CacheKey, pri: Priority) -> Option<V> {
        let shard = self.shard(key);
        let mut g = shard.inner.lock();
        let Some(&idx) = g.map.get(key) else {
            drop(g);
            shard.counters.miss(pri);
            return None;
        };
        let v = g.nodes[idx as usize].value.clone();
        g.nodes[idx as usize].hit = true;
        g.unlink(idx);
        g.lru_insert(idx);
        drop(g);
        debug_assert!(v.is_some());
        shard.counters.hit(pri);
        v
    }

    /// Removes `key` if present (not counted as an eviction).
    #[cfg(test)]
    pub(crate) fn erase(&self, key: &CacheKey) {
        let shard = self.shard(key);
        let mut g = shard.inner.lock();
        if let Some(&idx) = g.map.get(key) {
            let v = g.remove(idx);
            g.publish(&shard.counters);
            drop(g);
            drop(v);
        }
    }

    /// Charge held, summed over shards (lock-free read of mirrors).
    pub(crate) fn usage(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.counters.usage.load(Relaxed))
            .sum()
    }

    /// Charge of entries whose value is cloned outside the cache. Locks
    /// each shard and walks its entries.
    pub(crate) fn pinned_usage(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let g = s.inner.lock();
                g.nodes
                    .iter()
                    .filter(|n| n.value.as_ref().is_some_and(|v| v.is_pinned()))
                    .map(|n| n.charge)
                    .sum::<usize>()
            })
            .sum()
    }

    /// The configured total capacity.
    pub(crate) fn capacity(&self) -> usize {
        *self.capacity.lock()
    }

    /// Sets the total capacity; each shard evicts unpinned entries to fit.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut cap = self.capacity.lock();
        *cap = capacity;
        let per_shard = CacheOptions::per_shard(capacity, self.bits);
        for s in self.shards.iter() {
            let mut victims = Victims::new();
            let mut g = s.inner.lock();
            g.set_capacity(per_shard);
            g.make_room(0, &s.counters, &mut victims);
            g.publish(&s.counters);
        }
    }

    /// Counters summed over shards.
    pub(crate) fn stats(&self) -> CacheStats {
        let mut st = CacheStats::default();
        for s in self.shards.iter() {
            s.counters.add_to(&mut st);
        }
        st
    }

    /// Test helper: the keys of shard `i` in eviction order (Bottom oldest
    /// first, then Low, then High), and the parked pinned keys.
    #[cfg(test)]
    fn order(&self, i: usize) -> (Vec<CacheKey>, Vec<CacheKey>) {
        let g = self.shards[i].inner.lock();
        let walk = |l: ListId| {
            let mut out = Vec::new();
            let mut cur = g.lists[l as usize].oldest;
            while cur != NIL {
                out.push(g.nodes[cur as usize].key);
                cur = g.nodes[cur as usize].next;
            }
            out
        };
        let mut lru = walk(ListId::Bottom);
        lru.extend(walk(ListId::Low));
        lru.extend(walk(ListId::High));
        (lru, walk(ListId::Pinned))
    }

    /// Test helper: usage of the (high, low, bottom) pools of shard `i`.
    #[cfg(test)]
    fn pool_usage(&self, i: usize) -> (usize, usize, usize) {
        let g = self.shards[i].inner.lock();
        (
            g.lists[ListId::High as usize].usage,
            g.lists[ListId::Low as usize].usage,
            g.lists[ListId::Bottom as usize].usage,
        )
    }

    /// Test helper: whether `key` is present (no recency change).
    #[cfg(test)]
    fn contains(&self, key: &CacheKey) -> bool {
        self.shard(key).inner.lock().map.contains_key(key)
    }

    /// Test helper: (usage, pinned usage, capacity) of the shard of `key`.
    #[cfg(test)]
    fn shard_state(&self, key: &CacheKey) -> (usize, usize, usize) {
        let g = self.shard(key).inner.lock();
        let pinned = g
            .nodes
            .iter()
            .filter(|n| n.value.as_ref().is_some_and(|v| v.is_pinned()))
            .map(|n| n.charge)
            .sum();
        (g.usage, pinned, g.capacity)
    }

    /// Test helper: panics if any shard's structure is inconsistent.
    #[cfg(test)]
    fn check_invariants(&self) {
        for s in self.shards.iter() {
            s.inner.lock().check_invariants();
        }
    }
}

/// Values evicted under a shard lock, to be handed to
/// [`CacheValue::evicted`] after it (see the module comment): up to four
/// inline; more are handed over at once.
struct Victims<V: CacheValue> {
    slots: [Option<V>; 4],
    len: usize,
}

impl<V: CacheValue> Victims<V> {
    fn new() -> Self {
        Victims {
            slots: [None, None, None, None],
            len: 0,
        }
    }

    fn push(&mut self, v: Option<V>) {
        match self.slots.get_mut(self.len) {
            Some(slot) => {
                *slot = v;
                self.len += 1;
            }
            None => v.into_iter().for_each(V::evicted),
        }
    }
}

impl<V: CacheValue> Drop for Victims<V> {
    fn drop(&mut self) {
        for v in self.slots.iter_mut().filter_map(Option::take) {
            v.evicted();
        }
    }
}

impl<V: CacheValue> Inner<V> {
    fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        self.high_cap = (capacity as f64 * self.high_ratio) as usize;
        self.low_cap = (capacity as f64 * self.low_ratio) as usize;
        self.maintain_pool_size();
    }

    /// Mirrors usage and entry count into the lock-free counters.
    fn publish(&self, c: &ShardCounters) {
        c.usage.store(self.usage, Relaxed);
        c.entries.store(self.map.len(), Relaxed);
    }

    fn alloc(&mut self, node: Node<V>) -> u32 {
        if let Some(idx) = self.free.pop() {
            self.nodes[idx as usize] = node;
            idx
        } else {
            let idx = self.nodes.len() as u32;
            debug_assert!(idx != NIL, "more than 2^32 - 1 entries in one shard");
            self.nodes.push(node);
            idx
        }
    }

    /// Removes slot `idx` from its list, the map and the usage; frees it.
    fn remove(&mut self, idx: u32) -> Option<V> {
        self.unlink(idx);
        let n = &mut self.nodes[idx as usize];
        let (key, charge, value) = (n.key, n.charge, n.value.take());
        self.map.remove(&key);
        self.usage -= charge;
        self.free.push(idx);
        value
    }

    fn unlink(&mut self, idx: u32) {
        let (prev, next, list, charge) = {
            let n = &self.nodes[idx as usize];
            (n.prev, n.next, n.list, n.charge)
        };
        if prev == NIL {
            self.lists[list as usize].oldest = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.lists[list as usize].newest = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        self.lists[list as usize].usage -= charge;
        let n = &mut self.nodes[idx as usize];
        n.prev = NIL;
        n.next = NIL;
    }

    fn push_newest(&mut self, list: ListId, idx: u32) {
        let l = self.lists[list as usize];
        {
            let n = &mut self.nodes[idx as usize];
            n.list = list;
            n.prev = l.newest;
            n.next = NIL;
        }
        if l.newest == NIL {
            self.lists[list as usize].oldest = idx;
        } else {
            self.nodes[l.newest as usize].next = idx;
        }
        let charge = self.nodes[idx as usize].charge;
        let l = &mut self.lists[list as usize];
        l.newest = idx;
        l.usage += charge;
    }

    /// Links an unlinked slot into the pool its priority and hit bit select
    /// (RocksDB's `LRU_Insert`), then rebalances the pools.
    fn lru_insert(&mut self, idx: u32) {
        let (pri, hit) = {
            let n = &self.nodes[idx as usize];
            (n.pri, n.hit)
        };
        let list = if self.high_ratio > 0.0 && (pri == Priority::High || hit) {
            ListId::High
        } else if self.low_ratio > 0.0 && (pri != Priority::Bottom || hit) {
            ListId::Low
        } else {
            ListId::Bottom
        };
        self.push_newest(list, idx);
        self.maintain_pool_size();
    }

    /// Demotes the oldest entries of overflowing pools one level down
    /// (RocksDB's `MaintainPoolSize`).
    fn maintain_pool_size(&mut self) {
        while self.lists[ListId::High as usize].usage > self.high_cap {
            let idx = self.lists[ListId::High as usize].oldest;
            debug_assert!(idx != NIL);
            self.unlink(idx);
            self.push_newest(ListId::Low, idx);
        }
        while self.lists[ListId::Low as usize].usage > self.low_cap {
            let idx = self.lists[ListId::Low as usize].oldest;
            debug_assert!(idx != NIL);
            self.unlink(idx);
            self.push_newest(ListId::Bottom, idx);
        }
    }

    /// Evicts unpinned entries, Bottom then Low then High oldest first,
    /// until `charge` more bytes fit or nothing evictable is left.
    fn make_room(&mut self, charge: usize, c: &ShardCounters, victims: &mut Victims<V>) {
        while self.usage + charge > self.capacity {
            let victim = [ListId::Bottom, ListId::Low, ListId::High]
                .into_iter()
                .map(|l| self.lists[l as usize].oldest)
                .find(|&i| i != NIL);
            let Some(idx) = victim else {
                self.evict_unpinned_parked(charge, c, victims);
                return;
            };
            if self.nodes[idx as usize]
                .value
                .as_ref()
                .is_some_and(|v| v.is_pinned())
            {
                self.unlink(idx);
                self.push_newest(ListId::Pinned, idx);
                continue;
            }
            let freed = self.nodes[idx as usize].charge;
            let v = self.remove(idx);
            c.evicted(freed);
            victims.push(v);
        }
    }

    /// Scans the `Pinned` list oldest first and evicts entries that are no
    /// longer pinned until `charge` more bytes fit.
    fn evict_unpinned_parked(
        &mut self,
        charge: usize,
        c: &ShardCounters,
        victims: &mut Victims<V>,
    ) {
        let mut cur = self.lists[ListId::Pinned as usize].oldest;
        while cur != NIL && self.usage + charge > self.capacity {
            let next = self.nodes[cur as usize].next;
            if !self.nodes[cur as usize]
                .value
                .as_ref()
                .is_some_and(|v| v.is_pinned())
            {
                let freed = self.nodes[cur as usize].charge;
                let v = self.remove(cur);
                c.evicted(freed);
                victims.push(v);
            }
            cur = next;
        }
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        let mut seen = 0usize;
        let mut total = 0usize;
        for (li, l) in self.lists.iter().enumerate() {
            let mut cur = l.oldest;
            let mut prev = NIL;
            let mut sum = 0;
            while cur != NIL {
                let n = &self.nodes[cur as usize];
                assert_eq!(n.list as usize, li);
                assert_eq!(n.prev, prev);
                assert!(n.value.is_some());
                assert_eq!(self.map.get(&n.key), Some(&cur));
                sum += n.charge;
                seen += 1;
                prev = cur;
                cur = n.next;
            }
            assert_eq!(l.newest, prev);
            assert_eq!(l.usage, sum, "list {li}");
            total += sum;
        }
        assert_eq!(seen, self.map.len());
        assert_eq!(seen + self.free.len(), self.nodes.len());
        assert_eq!(total, self.usage);
        assert!(self.lists[ListId::High as usize].usage <= self.high_cap);
        assert!(self.lists[ListId::Low as usize].usage <= self.low_cap);
    }
}
