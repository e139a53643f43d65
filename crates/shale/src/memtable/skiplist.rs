//! An arena-backed skiplist of internal-key entries with lock-free readers and
//! lock-free (CAS) concurrent inserters. Entries are never removed; the whole
//! list is freed at once when it is dropped.
//!
//! Owns: the [`Arena`] holding every node, and the list structure.
//!
//! Thread-safety: `SkipList` is `Send + Sync`. Any number of threads may call
//! [`SkipList::insert`] and read (seek, iterate) at the same time. An insert
//! writes the whole node (entry bytes and its own links) before publishing it
//! with a release compare-and-swap on its predecessor's link, bottom level
//! first; readers load links with acquire. So a reader that sees a node sees
//! its complete entry, and the level-0 list is always sorted. A reader may or
//! may not see an entry whose insert runs concurrently.
//!
//! Node layout in the arena (one allocation, 8-aligned; `h` = height 1..=12):
//!
//! ```text
//!  start                                   node pointer
//!  | link[h-1] | ... | link[1] | link[0] | varint klen | internal key | varint vlen | value |
//! ```
//!
//! A node is named by the address of its level-0 link; link `i` lives
//! `8 * i` bytes below it and the entry starts 8 bytes above it, so a node
//! needs no height field and `link[0]` shares a cache line with the key. The
//! head node has `MAX_HEIGHT` links and no entry. Lengths are LEB128 varints
//! (the memtable's "varint32"; keys and values over 4 GiB are not expected).
//!
//! Invariants: along every level, keys are in ascending
//! [`compare_internal`] order; a node linked at level `i` is linked at every
//! level below `i`. Equal keys (which the memtable never inserts, since every
//! entry has its own sequence number) are all kept, in unspecified order.

use std::cmp::Ordering as CmpOrdering;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::arena::Arena;
use crate::base::Striped;
use crate::base::{compare_internal, TRAILER_LEN};
use crate::codec::varint_len;

/// Maximum node height.
pub(crate) const MAX_HEIGHT: usize = 12;
/// A node reaches the next level with probability 1 / 2^BRANCHING_BITS = 1/4.
const BRANCHING_BITS: u32 = 2;
/// Size of one link.
const LINK: usize = std::mem::size_of::<AtomicPtr<u8>>();

/// A node: the address of its level-0 link, or null for "no node".
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Node(*mut u8);

impl Node {
    const NULL: Node = Node(ptr::null_mut());

    #[inline]
    fn is_null(self) -> bool {
        self.0.is_null()
    }

    /// The link at `level`.
    ///
    /// # Safety
    /// `self` is a live node (or the head) of a list that outlives `'a`, and
    /// `level` is below the node's height.
    #[inline]
    unsafe fn link<'a>(self, level: usize) -> &'a AtomicPtr<u8> {
        // SAFETY: per the contract, `self.0 - 8 * level` is one of the node's
        // links: 8-aligned, inside the node's allocation, initialized with an
        // `AtomicPtr` before the node was published, never freed while the
        // list lives. Links are only ever accessed atomically.
        unsafe { &*self.0.sub(level * LINK).cast::<AtomicPtr<u8>>() }
    }

    /// The successor at `level` (acquire: its entry is fully visible).
    ///
    /// # Safety
    /// As for [`Node::link`].
    #[inline]
    unsafe fn next(self, level: usize) -> Node {
        // SAFETY: forwarded contract.
        Node(unsafe { self.link(level) }.load(Ordering::Acquire))
    }

    /// Hints the CPU to start loading the successor at `level`: if the
    /// search drops to that level from here, that node is compared next, so
    /// its cache miss overlaps with the comparison at the current level.
    ///
    /// # Safety
    /// As for [`Node::link`].
    #[inline]
    unsafe fn prefetch_next(self, level: usize) {
        // SAFETY: forwarded contract. The loaded address is only a hint.
        let p = unsafe { self.link(level) }.load(Ordering::Relaxed);
        prefetch(p);
    }

    /// The entry's internal key and value.
    ///
    /// # Safety
    /// `self` is a live, non-head node of a list that outlives `'a`.
    #[inline]
    unsafe fn entry<'a>(self) -> (&'a [u8], &'a [u8]) {
        // SAFETY: the entry was completely written before the node was
        // published (release/acquire on the link that led us here) and is
        // never written again; the varints and lengths were written by
        // `SkipList::insert`, so every read stays inside the allocation.
        unsafe {
            let (klen, p) = read_varint(self.0.add(LINK));
            let key = std::slice::from_raw_parts(p, klen);
            let (vlen, p) = read_varint(p.add(klen));
            let value = std::slice::from_raw_parts(p, vlen);
            (key, value)
        }
    }

    /// The entry's internal key.
    ///
    /// # Safety
    /// As for [`Node::entry`].
    #[inline]
    unsafe fn key<'a>(self) -> &'a [u8] {
        // SAFETY: as in `entry`.
        unsafe {
            let (klen, p) = read_varint(self.0.add(LINK));
            std::slice::from_raw_parts(p, klen)
        }
    }
}

/// Asks the CPU to bring the cache line at `p` closer; never faults.
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch is only a hint: it never faults, whatever the
    // address (including null), and changes no memory.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

/// Reads a varint written by [`write_varint`].
///
/// # Safety
/// `p` points to a complete varint written by `write_varint`.
#[inline]
unsafe fn read_varint(mut p: *const u8) -> (usize, *const u8) {
    let mut result = 0usize;
    let mut shift = 0u32;
    loop {
        // SAFETY: the caller guarantees a complete varint at the start of `p`;
        // we stop at its last byte (the first below 0x80).
        let b = unsafe { p.read() };
        // SAFETY: the byte just read was part of the varint, so `p + 1` is in
        // bounds or one past the varint (inside the node allocation).
        p = unsafe { p.add(1) };
        result |= usize::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (result, p);
        }
        shift += 7;
    }
}

/// Writes `v` as a LEB128 varint at `p`, returning the byte after it.
///
/// # Safety
/// `p` is valid for `varint_len(v)` byte writes.
#[inline]
unsafe fn write_varint(mut p: *mut u8, mut v: usize) -> *mut u8 {
    // SAFETY: `varint_len(v)` bytes are written, one per iteration plus the
    // last, matching the caller's contract.
    unsafe {
        while v >= 0x80 {
            p.write((v as u8) | 0x80);
            p = p.add(1);
            v >>= 7;
        }
        p.write(v as u8);
        p.add(1)
    }
}

/// SplitMix64 finalizer: turns a counter into well-mixed bits.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Source of `SkipList::id`: ids are never reused, so a finger (below) can
/// never be taken for one of another list, even at the same address.
static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

/// This thread's last insert into list `list`: the node, its height, and
/// the nodes it was linked after at every level (all before its key). The
/// next insert of a larger key that also goes right after `node` at level 0
/// (ascending keys, as `fillseq` and time-ordered writes) starts each
/// level's search there instead of at the head: a few comparisons instead
/// of a walk down the whole list. Nodes are never removed while their list
/// lives, and the pointers are only followed when `list` is the inserting
/// list, so they never dangle when used.
#[derive(Clone, Copy)]
struct Finger {
    list: u64,
    node: Node,
    height: usize,
    prev: [Node; MAX_HEIGHT],
}

thread_local! {
    static FINGER: std::cell::Cell<Finger> = const {
        std::cell::Cell::new(Finger {
            list: 0,
            node: Node::NULL,
            height: 0,
            prev: [Node::NULL; MAX_HEIGHT],
        })
    };
}

/// The skiplist (see the module comment).
pub(crate) struct SkipList {
    /// Unique among all lists ever made (see `Finger`).
    id: u64,
    arena: Arena,
    head: Node,
    /// Height of the tallest node ever inserted (at least 1).
    max_height: AtomicUsize,
    /// Entries, counted on the inserting thread's stripe (no cache line
    /// bounces between concurrent inserters).
    len: Striped<AtomicUsize>,
}

// SAFETY: the only non-thread-safe field is the raw `head` pointer, which
// points into `arena` (owned by the list, itself Send + Sync). All shared
// mutation goes through atomics (links, counters) or the arena's lock; entry
// bytes are written only before publication (see the module comment).
unsafe impl Send for SkipList {}
// SAFETY: see `Send` above.
unsafe impl Sync for SkipList {}

impl SkipList {
    /// An empty list in a fresh default arena.
    pub(crate) fn new() -> SkipList {
        SkipList::with_arena(Arena::new())
    }

    /// An empty list whose nodes live in `arena`.
    pub(crate) fn with_arena(arena: Arena) -> SkipList {
        let start = arena.alloc(MAX_HEIGHT * LINK).as_ptr();
        // SAFETY: `start` is a fresh, 8-aligned allocation of MAX_HEIGHT links;
        // each slot is initialized as an `AtomicPtr` before any read.
        let head = unsafe {
            for i in 0..MAX_HEIGHT {
                start
                    .add(i * LINK)
                    .cast::<AtomicPtr<u8>>()
                    .write(AtomicPtr::new(ptr::null_mut()));
            }
            Node(start.add((MAX_HEIGHT - 1) * LINK))
        };
        SkipList {
            id: NEXT_LIST_ID.fetch_add(1, Ordering::Relaxed),
            arena,
            head,
            max_height: AtomicUsize::new(1),
            len: Striped::default(),
        }
    }

    /// Number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len.all().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Arena bytes in use (nodes and entries).
    #[inline]
    pub(crate) fn memory_usage(&self) -> usize {
        self.arena.memory_usage()
    }

    /// A height in 1..=MAX_HEIGHT, each level above 1 with probability 1/4.
    #[inline]
    fn random_height(&self) -> usize {
        // A per-thread SplitMix64 stream: concurrent inserters share no
        // cache line for their random bits.
        thread_local! {
            static STATE: std::cell::Cell<u64> = const { std::cell::Cell::new(0x5eed_5eed_1234_5678) };
        }
        let mut bits = STATE.with(|s| {
            let next = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
            s.set(next);
            mix64(next)
        });
        let mut h = 1;
        while h < MAX_HEIGHT && bits & ((1 << BRANCHING_BITS) - 1) == 0 {
            h += 1;
            bits >>= BRANCHING_BITS;
        }
        h
    }

    /// Inserts the entry (internal key `user_key ++ trailer_le`, `value`),
    /// building it directly in the arena. Safe to call from many threads.
    pub(crate) fn insert(&self, user_key: &[u8], trailer: u64, value: &[u8]) {
        let klen = user_key.len() + TRAILER_LEN;
        let vlen = value.len();
        debug_assert!(klen <= u32::MAX as usize && vlen <= u32::MAX as usize);
        let height = self.random_height();
        let entry_len = varint_len(klen as u64) + klen + varint_len(vlen as u64) + vlen;
        let start = self.arena.alloc(height * LINK + entry_len).as_ptr();
        // SAFETY: `start` is a fresh, 8-aligned allocation of
        // `height * LINK + entry_len` bytes that nobody else can see yet. We
        // initialize the `height` links, then write exactly `entry_len` entry
        // bytes right after link[0].
        let node = unsafe {
            for i in 0..height {
                start
                    .add(i * LINK)
                    .cast::<AtomicPtr<u8>>()
                    .write(AtomicPtr::new(ptr::null_mut()));
            }
            let node = start.add((height - 1) * LINK);
            let mut p = write_varint(node.add(LINK), klen);
            ptr::copy_nonoverlapping(user_key.as_ptr(), p, user_key.len());
            p = p.add(user_key.len());
            ptr::copy_nonoverlapping(trailer.to_le_bytes().as_ptr(), p, TRAILER_LEN);
            p = write_varint(p.add(TRAILER_LEN), vlen);
            ptr::copy_nonoverlapping(value.as_ptr(), p, vlen);
            Node(node)
        };
        // SAFETY: `node` is fully written; it lives as long as `self`.
        let key = unsafe { node.key() };

        let mut top = self.max_height.load(Ordering::Relaxed);
        if height > top {
            // Readers that see the new height before the node is linked find
            // null head links at those levels and simply drop down.
            self.max_height.fetch_max(height, Ordering::Relaxed);
            top = height;
        }

        // The splice: at each level, prev < key <= next.
        let mut prev = [self.head; MAX_HEIGHT];
        let mut next = [Node::NULL; MAX_HEIGHT];
        if let Some(starts) = self.finger_starts(key) {
            // Each start is before `key` and linked at its level; the
            // search walks forward from it (past nodes other threads linked
            // since).
            for level in (0..top).rev() {
                let (p, n) = self.find_splice(key, starts[level], level, Node::NULL);
                prev[level] = p;
                next[level] = n;
            }
        } else {
            let mut x = self.head;
            let mut known_ge = Node::NULL;
            for level in (0..top).rev() {
                let (p, n) = self.find_splice(key, x, level, known_ge);
                prev[level] = p;
                next[level] = n;
                x = p;
                known_ge = n;
            }
        }

        // Link bottom-up, so a node linked at level i is linked below i.
        for level in 0..height {
            loop {
                // SAFETY: `level < height`, so this is one of the new node's
                // links; `prev[level]` is the head or a live node at least
                // `level + 1` high (it was found at this level).
                let linked = unsafe {
                    node.link(level).store(next[level].0, Ordering::Relaxed);
                    prev[level]
                        .link(level)
                        .compare_exchange(
                            next[level].0,
                            node.0,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok()
                };
                if linked {
                    break;
                }
                // Someone linked a node after prev[level]; prev[level] is still
                // before `key`, so search again from it.
                let (p, n) = self.find_splice(key, prev[level], level, Node::NULL);
                prev[level] = p;
                next[level] = n;
            }
        }
        self.len.local().fetch_add(1, Ordering::Relaxed);
        FINGER.with(|f| {
            f.set(Finger {
                list: self.id,
                node,
                height,
                prev,
            })
        });
    }

    /// Where each level's search may start for `key`, if this thread's last
    /// insert was into this list and `key` goes right after it at level 0:
    /// the last node itself on the levels it has, its predecessors above.
    #[inline]
    fn finger_starts(&self, key: &[u8]) -> Option<[Node; MAX_HEIGHT]> {
        let f = FINGER.with(|f| f.get());
        if f.list != self.id {
            return None;
        }
        // SAFETY: `f.list == self.id`, so `f.node` is a node of this list
        // (ids are unique), fully written and alive as long as `self`; it
        // has links up to `f.height`.
        let after_last = unsafe {
            compare_internal(f.node.key(), key) == CmpOrdering::Less && {
                let n = f.node.next(0);
                n.is_null() || compare_internal(n.key(), key) != CmpOrdering::Less
            }
        };
        if !after_last {
            return None;
        }
        let mut starts = f.prev;
        for s in starts.iter_mut().take(f.height) {
            *s = f.node;
        }
        for s in starts.iter_mut() {
            if s.is_null() {
                *s = self.head;
            }
        }
        Some(starts)
    }

    /// From `start` (before `key`) along `level`, returns `(prev, next)` with
    /// prev < key <= next (next null at the end). `known_ge` is a node already
    /// known to be >= key, to skip one comparison.
    #[inline]
    fn find_splice(&self, key: &[u8], start: Node, level: usize, known_ge: Node) -> (Node, Node) {
        let mut x = start;
        loop {
            // SAFETY: `x` is the head or a node reached along `level`, so its
            // height is above `level`; nodes live as long as `self`.
            let n = unsafe { x.next(level) };
            if level > 0 {
                // SAFETY: `x` has links at every level up to `level`.
                unsafe { x.prefetch_next(level - 1) };
            }
            if n.is_null()
                || n == known_ge
                || compare_internal(
                    // SAFETY: `n` is non-null and was published, hence fully
                    // written.
                    unsafe { n.key() },
                    key,
                ) != CmpOrdering::Less
            {
                return (x, n);
            }
            x = n;
        }
    }

    /// The first node with key >= `target`, or null.
    fn seek_ge(&self, target: &[u8]) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Relaxed) - 1;
        let mut known_ge = Node::NULL;
        loop {
            // SAFETY: `x` is the head or was reached at `level`, so it has a
            // link at `level`.
            let n = unsafe { x.next(level) };
            if level > 0 {
                // SAFETY: `x` has links at every level up to `level`.
                unsafe { x.prefetch_next(level - 1) };
            }
            if !n.is_null()
                && n != known_ge
                && compare_internal(
                    // SAFETY: a non-null published node is fully written.
                    unsafe { n.key() },
                    target,
                ) == CmpOrdering::Less
            {
                x = n;
            } else if level == 0 {
                return n;
            } else {
                known_ge = n;
                level -= 1;
            }
        }
    }

    /// The last node with key < `target` (`strict`) or <= `target`, or null.
    fn seek_before(&self, target: &[u8], strict: bool) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Relaxed) - 1;
        loop {
            // SAFETY: as in `seek_ge`.
            let n = unsafe { x.next(level) };
            let advance = !n.is_null()
                // SAFETY: a non-null published node is fully written.
                && match compare_internal(unsafe { n.key() }, target) {
                    CmpOrdering::Less => true,
                    CmpOrdering::Equal => !strict,
                    CmpOrdering::Greater => false,
                };
            if advance {
                x = n;
            } else if level == 0 {
                return if x == self.head { Node::NULL } else { x };
            } else {
                level -= 1;
            }
        }
    }

    /// The last node, or null.
    fn last(&self) -> Node {
        let mut x = self.head;
        let mut level = self.max_height.load(Ordering::Relaxed) - 1;
        loop {
            // SAFETY: as in `seek_ge`.
            let n = unsafe { x.next(level) };
            if !n.is_null() {
                x = n;
            } else if level == 0 {
                return if x == self.head { Node::NULL } else { x };
            } else {
                level -= 1;
            }
        }
    }

    /// The first node, or null.
    #[inline]
    fn first(&self) -> Node {
        // SAFETY: the head has MAX_HEIGHT links.
        unsafe { self.head.next(0) }
    }

    /// The first entry with internal key >= `target`: `(key, value)`.
    #[inline]
    pub(crate) fn get_ge(&self, target: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = self.seek_ge(target);
        // SAFETY: a non-null node returned by a search is a live, published,
        // non-head node of `self`.
        (!n.is_null()).then(|| unsafe { n.entry() })
    }
}

impl Default for SkipList {
    fn default() -> SkipList {
        SkipList::new()
    }
}

/// Something that keeps one [`SkipList`] alive and reachable, so an
/// [`Iter`] can own it (e.g. `Arc<MemTable>`).
///
/// # Safety
/// `list()` must return the same list every time for as long as the owner
/// lives, and the list must not move while the owner lives (it is behind an
/// `Arc`, a `Box` or a reference).
pub(crate) unsafe trait ListOwner {
    /// The list.
    fn list(&self) -> &SkipList;
}

// SAFETY: a shared reference always points at the same, unmoved list.
unsafe impl ListOwner for &SkipList {
    #[inline]
    fn list(&self) -> &SkipList {
        self
    }
}

// SAFETY: the `Arc`'s allocation does not move and always holds the same list.
unsafe impl ListOwner for std::sync::Arc<SkipList> {
    #[inline]
    fn list(&self) -> &SkipList {
        self
    }
}

/// A bidirectional cursor over a list kept alive by `O`.
///
/// Sees entries inserted while it is in use or not, depending on timing;
/// `next`/`prev` always move in key order.
pub(crate) struct Iter<O: ListOwner> {
    owner: O,
    node: Node,
}

// SAFETY: `node` points into the list that `owner` keeps alive; the list is
// Sync, so using it from another thread is fine when the owner may move there.
unsafe impl<O: ListOwner + Send> Send for Iter<O> {}
// SAFETY: `&Iter` only reads the node through the Sync list.
unsafe impl<O: ListOwner + Sync> Sync for Iter<O> {}

impl<O: ListOwner> Iter<O> {
    /// An unpositioned cursor.
    pub(crate) fn new(owner: O) -> Iter<O> {
        Iter {
            owner,
            node: Node::NULL,
        }
    }

    /// The owner.
    #[cfg(test)]
    pub(crate) fn owner(&self) -> &O {
        &self.owner
    }

    #[inline]
    pub(crate) fn valid(&self) -> bool {
        !self.node.is_null()
    }

    /// Current `(internal key, value)`; empty slices when not valid.
    #[inline]
    pub(crate) fn entry(&self) -> (&[u8], &[u8]) {
        if self.node.is_null() {
            return (&[], &[]);
        }
        // SAFETY: a non-null `node` came from a search on `owner.list()`,
        // which the owner keeps alive (and unmoved) while `self` lives.
        unsafe { self.node.entry() }
    }

    /// Current internal key; empty when not valid.
    #[inline]
    pub(crate) fn key(&self) -> &[u8] {
        if self.node.is_null() {
            return &[];
        }
        // SAFETY: as in `entry`.
        unsafe { self.node.key() }
    }

    /// Current value; empty when not valid.
    #[inline]
    pub(crate) fn value(&self) -> &[u8] {
        self.entry().1
    }

    pub(crate) fn seek_to_first(&mut self) {
        self.node = self.owner.list().first();
    }

    pub(crate) fn seek_to_last(&mut self) {
        self.node = self.owner.list().last();
    }

    /// First entry with key >= `target`.
    pub(crate) fn seek(&mut self, target: &[u8]) {
        self.node = self.owner.list().seek_ge(target);
    }

    /// Last entry with key <= `target`.
    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) {
        self.node = self.owner.list().seek_before(target, false);
    }

    /// Next entry; no-op when not valid.
    #[inline]
    pub(crate) fn next(&mut self) {
        if !self.node.is_null() {
            // SAFETY: a valid node of the owned list; level 0 always exists.
            self.node = unsafe { self.node.next(0) };
        }
    }

    /// Previous entry (a search for the last key < the current one); no-op
    /// when not valid.
    pub(crate) fn prev(&mut self) {
        if !self.node.is_null() {
            // SAFETY: as in `entry`.
            let key = unsafe { self.node.key() };
            self.node = self.owner.list().seek_before(key, true);
        }
    }
}

#[cfg(test)]
mod tests;
