//! Clock block cache with lock-free lookups, in the spirit of RocksDB's
//! HyperClockCache.
//!
//! Each shard is a fixed-size open-addressing table (`2^k` slots, sized at
//! creation from `capacity / estimated_entry_charge / 0.7`; it never grows).
//! A slot holds the key (two atomics), the charge, a displacement count and
//! the value `V` in an `UnsafeCell<MaybeUninit<V>>`, published through an
//! atomic *meta* word:
//!
//! ```text
//!   bits 0..30   acquire counter  (lookups that took a reference)
//!   bits 30..60  release counter  (references given back)
//!   bits 60..62  state: 0 Empty, 1 Construction, 2 Invisible, 3 Visible
//! ```
//!
//! - *Visible*: findable by lookups. *Invisible*: erased while a lookup held
//!   a reference; waits for the clock to free it. Both are "shareable":
//!   their value is initialized and their counters are exact, so
//!   `refs = acquire - release`.
//! - *Empty* / *Construction*: owned by the writer. Lookups may bump the
//!   acquire bits of such a word (a lost race); those bits are garbage and
//!   are overwritten by the writer's next plain store.
//! - While no reference is held, `acquire == release` and that value is the
//!   entry's clock *countdown*: set at insert by priority (High 3, Low 2,
//!   Bottom 1, as HyperClockCache), raised by one by every hit (a lookup
//!   bumps both counters), lowered by one by each pass of the clock hand
//!   (capped at 3 first). Eviction takes entries at countdown 0.
//!
//! Lookup (no lock): probe the slots of the key's double-hashing sequence;
//! on a Visible slot with the key, `fetch_add` the acquire counter; if the
//! old word was still Visible and the key still matches, clone the value and
//! `fetch_add` the release counter. A probe stops at a non-matching slot
//! whose displacement count is 0 (no live entry's sequence passes it).
//!
//! Insert, erase and eviction take the shard's mutex (one writer per shard;
//! lookups stay lock-free). The writer owns Empty slots outright and takes
//! a shareable slot only by a CAS from a word with `acquire == release`
//! (no reference held) to Construction; a reader arriving later sees
//! Construction and backs off, so the writer can move the value out. Erase
//! of a referenced entry marks it Invisible; the clock frees it later.
//!
//! Pinned entries (a clone alive outside the cache) are skipped by the
//! clock, as in `lru.rs`; erase removes them regardless.
//!
//! Simplifications against HyperClockCache: inserts take a per-shard mutex;
//! the table is sized once and `set_capacity` does not resize it; counter
//! overflow is corrected by the releasing reader with a CAS.
//!
//! Thread-safety: `ClockCache<V>` is `Send + Sync` for `V: Send + Sync`
//! (values are cloned by many threads at once and dropped by whichever
//! thread evicts them).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};

use parking_lot::Mutex;

use super::counters::{CacheStats, ShardCounters};
use super::{hash_key, shard_of, CacheKey, CacheOptions, CacheValue, Priority};

#[cfg(test)]
mod tests;

const COUNTER_BITS: u32 = 30;
const COUNTER_MASK: u64 = (1 << COUNTER_BITS) - 1;
const ACQ_ONE: u64 = 1;
const REL_ONE: u64 = 1 << COUNTER_BITS;
const STATE_SHIFT: u32 = 2 * COUNTER_BITS;

const EMPTY: u64 = 0;
const CONSTRUCTION: u64 = 1;
const INVISIBLE: u64 = 2;
const VISIBLE: u64 = 3;

/// Highest clock countdown (a High-priority insert).
const MAX_COUNTDOWN: u64 = 3;
/// A releasing reader that sees the acquire counter this high folds both
/// counters back down (keeping their difference), far before overflow.
const CORRECTION_THRESHOLD: u64 = 1 << (COUNTER_BITS - 1);
/// Target load factor used to size the table.
const LOAD_FACTOR: f64 = 0.7;
/// Share of slots that may be occupied before eviction is forced.
const MAX_LOAD: f64 = 0.85;

#[inline]
fn state(m: u64) -> u64 {
    (m >> STATE_SHIFT) & 3
}

#[inline]
fn acquires(m: u64) -> u64 {
    m & COUNTER_MASK
}

#[inline]
fn releases(m: u64) -> u64 {
    (m >> COUNTER_BITS) & COUNTER_MASK
}

/// References held on a shareable word.
#[inline]
fn refs(m: u64) -> u64 {
    acquires(m).wrapping_sub(releases(m)) & COUNTER_MASK
}

#[inline]
fn meta(st: u64, acq: u64, rel: u64) -> u64 {
    (st << STATE_SHIFT) | (rel << COUNTER_BITS) | acq
}

fn initial_countdown(pri: Priority) -> u64 {
    match pri {
        Priority::High => 3,
        Priority::Low => 2,
        Priority::Bottom => 1,
    }
}

struct Slot<V> {
    meta: AtomicU64,
    file_number: AtomicU64,
    offset: AtomicU64,
    charge: AtomicUsize,
    /// Number of live entries whose probe sequence passes this slot (before
    /// reaching their own). Written by the writer only.
    displacements: AtomicU32,
    value: UnsafeCell<MaybeUninit<V>>,
}

// SAFETY: the value is only read through `&V` by lookups holding a reference
// (many threads at once: needs `V: Sync`) or by the writer under the shard
// mutex, and only written, moved out or dropped by the writer while no
// reference is held (the meta protocol above): a value may be dropped on a
// thread other than the one that inserted it (needs `V: Send`).
unsafe impl<V: Send + Sync> Sync for Slot<V> {}

impl<V> Slot<V> {
    fn new() -> Self {
        Slot {
            meta: AtomicU64::new(meta(EMPTY, 0, 0)),
            file_number: AtomicU64::new(0),
            offset: AtomicU64::new(0),
            charge: AtomicUsize::new(0),
            displacements: AtomicU32::new(0),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    #[inline]
    fn key_is(&self, key: &CacheKey) -> bool {
        self.file_number.load(Relaxed) == key.file_number && self.offset.load(Relaxed) == key.offset
    }

    fn key(&self) -> CacheKey {
        CacheKey::new(self.file_number.load(Relaxed), self.offset.load(Relaxed))
    }
}

impl<V> Drop for Slot<V> {
    fn drop(&mut self) {
        let st = state(*self.meta.get_mut());
        if st == VISIBLE || st == INVISIBLE {
            // SAFETY: shareable states always hold an initialized value, and
            // `&mut self` means no reader or writer is active.
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

/// Writer state of a shard, guarded by its mutex.
struct Writer {
    hand: usize,
    capacity: usize,
    usage: usize,
    occupancy: usize,
    strict: bool,
}

#[repr(align(64))]
struct Shard<V> {
    slots: Box<[Slot<V>]>,
    mask: usize,
    max_occupancy: usize,
    writer: Mutex<Writer>,
    counters: ShardCounters,
}

/// Decrements the release counter on drop, so that a panicking `clone`
/// cannot leave an entry referenced forever.
struct RefGuard<'a, V> {
    slot: &'a Slot<V>,
}

impl<V> Drop for RefGuard<'_, V> {
    fn drop(&mut self) {
        release(self.slot);
    }
}

/// Gives back one reference; folds the counters down when they grow large.
#[inline]
fn release<V>(slot: &Slot<V>) {
    let now = slot.meta.fetch_add(REL_ONE, Release).wrapping_add(REL_ONE);
    if acquires(now) >= CORRECTION_THRESHOLD {
        let st = state(now);
        if st == VISIBLE || st == INVISIBLE {
            let r = refs(now);
            let folded = meta(st, MAX_COUNTDOWN + r, MAX_COUNTDOWN);
            // Failure means someone else changed the word; a later release
            // retries.
            let _ = slot.meta.compare_exchange(now, folded, Release, Relaxed);
        }
    }
}

impl<V: CacheValue> Shard<V> {
    fn new(capacity: usize, est: usize, strict: bool) -> Self {
        let wanted = (capacity as f64 / est.max(1) as f64 / LOAD_FACTOR).ceil() as usize;
        let len = wanted.clamp(16, 1 << 28).next_power_of_two();
        Shard {
            slots: (0..len).map(|_| Slot::new()).collect(),
            mask: len - 1,
            max_occupancy: ((len as f64 * MAX_LOAD) as usize).max(1),
            writer: Mutex::new(Writer {
                hand: 0,
                capacity,
                usage: 0,
                occupancy: 0,
                strict,
            }),
            counters: ShardCounters::default(),
        }
    }

    /// First slot and odd stride of `hash`'s probe sequence.
    #[inline]
    fn probe_start(&self, hash: u64) -> (usize, usize) {
        ((hash as usize) & self.mask, ((hash >> 32) as usize) | 1)
    }

    /// Lock-free lookup.
    fn lookup(&self, key: &CacheKey, hash: u64) -> Option<V> {
        let (mut i, step) = self.probe_start(hash);
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            let m = slot.meta.load(Acquire);
            if state(m) == VISIBLE && slot.key_is(key) {
                let old = slot.meta.fetch_add(ACQ_ONE, Acquire);
                match state(old) {
                    VISIBLE => {
                        let guard = RefGuard { slot };
                        if slot.key_is(key) {
                            // SAFETY: we hold a reference taken on a Visible
                            // word, so the value is initialized and the writer
                            // cannot move it out until we release (it needs a
                            // CAS from a word with no reference). Shared `&V`
                            // across threads is allowed since `V: Sync`.
                            let v = unsafe { (*slot.value.get()).assume_init_ref() }.clone();
                            drop(guard);
                            return Some(v);
                        }
                        // Reused for another key meanwhile: fall through.
                    }
                    INVISIBLE => release(slot),
                    // Empty/Construction: the increment is garbage that the
                    // writer overwrites; undoing it could corrupt a new word.
                    _ => {}
                }
            }
            if slot.displacements.load(Acquire) == 0 {
                return None;
            }
            i = (i + step) & self.mask;
        }
        None
    }

    /// Writer-side search for a Visible slot holding `key`.
    /// Requires: the writer mutex is held.
    fn find_visible(&self, key: &CacheKey, hash: u64) -> Option<usize> {
        let (mut i, step) = self.probe_start(hash);
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            if state(slot.meta.load(Acquire)) == VISIBLE && slot.key_is(key) {
                return Some(i);
            }
            if slot.displacements.load(Relaxed) == 0 {
                return None;
            }
            i = (i + step) & self.mask;
        }
        None
    }

    fn publish(&self, w: &Writer) {
        self.counters.usage.store(w.usage, Relaxed);
        self.counters.entries.store(w.occupancy, Relaxed);
    }

    fn insert(
        &self,
        key: CacheKey,
        hash: u64,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<(), V> {
        let mut w = self.writer.lock();
        if self.find_visible(&key, hash).is_some() {
            drop(w);
            drop(value);
            return Ok(());
        }
        self.make_room(&mut w, charge);
        let has_slot = w.occupancy < self.slots.len();
        let fits = w.usage + charge <= w.capacity;
        if !has_slot || !fits {
            if w.strict {
                return Err(value);
            }
            if !has_slot || !value.is_pinned() {
                // Inserted and evicted at once (see lru.rs).
                self.counters.inserted(charge);
                self.counters.evicted(charge);
                drop(w);
                drop(value);
                return Ok(());
            }
        }
        let (mut i, step) = self.probe_start(hash);
        for _ in 0..self.slots.len() {
            let slot = &self.slots[i];
            if state(slot.meta.load(Relaxed)) == EMPTY {
                slot.file_number.store(key.file_number, Relaxed);
                slot.offset.store(key.offset, Relaxed);
                slot.charge.store(charge, Relaxed);
                // SAFETY: Empty slots belong to the writer (we hold the
                // mutex) and hold no value; readers never touch the value of
                // a slot whose word they did not see shareable, and it becomes
                // shareable only with the Release store below.
                unsafe { (*slot.value.get()).write(value) };
                let cd = initial_countdown(pri);
                slot.meta.store(meta(VISIBLE, cd, cd), Release);
                w.usage += charge;
                w.occupancy += 1;
                self.counters.inserted(charge);
                self.publish(&w);
                return Ok(());
            }
            slot.displacements.fetch_add(1, Release);
            i = (i + step) & self.mask;
        }
        // Unreachable: `has_slot` guarantees an Empty slot and an odd stride
        // visits every slot of a power-of-two table.
        debug_assert!(false, "no empty slot although occupancy < len");
        Ok(())
    }

    /// Runs the clock until `charge` more bytes fit and a slot is free below
    /// the load limit, or until a bounded number of steps found nothing.
    /// Requires: the writer mutex is held (`w` is its guard's content).
    fn make_room(&self, w: &mut Writer, charge: usize) {
        let limit = self.slots.len() * (MAX_COUNTDOWN as usize + 2);
        let mut steps = 0;
        while (w.usage + charge > w.capacity || w.occupancy >= self.max_occupancy) && steps < limit
        {
            let i = w.hand;
            w.hand = (w.hand + 1) & self.mask;
            steps += 1;
            if let Some((v, c)) = self.clock_step(w, i) {
                self.counters.evicted(c);
                v.evicted();
            }
        }
        self.publish(w);
    }

    /// One step of the clock hand at slot `i`: frees an Invisible slot with
    /// no reference, ages a Visible one, or evicts it at countdown 0 unless
    /// pinned. Returns the evicted value and its charge.
    fn clock_step(&self, w: &mut Writer, i: usize) -> Option<(V, usize)> {
        let slot = &self.slots[i];
        let m = slot.meta.load(Acquire);
        match state(m) {
            INVISIBLE if refs(m) == 0 => {
                if slot
                    .meta
                    .compare_exchange(m, meta(CONSTRUCTION, 0, 0), AcqRel, Relaxed)
                    .is_ok()
                {
                    return Some(self.free_slot(w, i));
                }
                None
            }
            VISIBLE if refs(m) == 0 => {
                let cd = acquires(m).min(MAX_COUNTDOWN);
                if cd > 0 {
                    // A failed CAS means a lookup touched it: leave it.
                    let _ = slot.meta.compare_exchange(
                        m,
                        meta(VISIBLE, cd - 1, cd - 1),
                        Relaxed,
                        Relaxed,
                    );
                    return None;
                }
                // SAFETY: the word is Visible, so the value is initialized;
                // only the writer (us, holding the mutex) moves or drops it,
                // and concurrent readers only take `&V` too.
                let pinned = unsafe { (*slot.value.get()).assume_init_ref() }.is_pinned();
                // A clone made after our check changes the word (a reader's
                // acquire/release), so the CAS fails and the entry stays.
                if !pinned
                    && slot
                        .meta
                        .compare_exchange(m, meta(CONSTRUCTION, 0, 0), AcqRel, Relaxed)
                        .is_ok()
                {
                    return Some(self.free_slot(w, i));
                }
                None
            }
            _ => None,
        }
    }

    /// Moves the value out of slot `i`, which this writer just took to
    /// Construction by CAS, and returns the slot to Empty.
    fn free_slot(&self, w: &mut Writer, i: usize) -> (V, usize) {
        let slot = &self.slots[i];
        debug_assert_eq!(state(slot.meta.load(Relaxed)), CONSTRUCTION);
        // SAFETY: the CAS to Construction succeeded from a shareable word with
        // no reference held, so the value is initialized and no reader can
        // gain access to it any more (they see Construction and back off);
        // we are the only writer (mutex). The slot becomes Empty below, so the
        // value is never read again from it.
        let v = unsafe { (*slot.value.get()).assume_init_read() };
        let charge = slot.charge.load(Relaxed);
        let hash = hash_key(&slot.key());
        let (mut j, step) = self.probe_start(hash);
        while j != i {
            let d = self.slots[j].displacements.fetch_sub(1, Release);
            debug_assert!(d > 0);
            j = (j + step) & self.mask;
        }
        slot.meta.store(meta(EMPTY, 0, 0), Release);
        w.usage -= charge;
        w.occupancy -= 1;
        (v, charge)
    }

    #[cfg(test)]
    fn erase(&self, key: &CacheKey, hash: u64) {
        let mut w = self.writer.lock();
        let Some(i) = self.find_visible(key, hash) else {
            return;
        };
        let slot = &self.slots[i];
        let mut m = slot.meta.load(Acquire);
        let mut freed = None;
        while state(m) == VISIBLE {
            let (new, free) = if refs(m) == 0 {
                (meta(CONSTRUCTION, 0, 0), true)
            } else {
                (meta(INVISIBLE, acquires(m), releases(m)), false)
            };
            match slot.meta.compare_exchange(m, new, AcqRel, Acquire) {
                Ok(_) => {
                    if free {
                        freed = Some(self.free_slot(&mut w, i));
                    }
                    break;
                }
                Err(cur) => m = cur,
            }
        }
        self.publish(&w);
        drop(w);
        drop(freed);
    }

    /// Charge of pinned entries. Takes the writer mutex.
    fn pinned_usage(&self) -> usize {
        let _w = self.writer.lock();
        let mut sum = 0;
        for slot in self.slots.iter() {
            let st = state(slot.meta.load(Acquire));
            if st == VISIBLE || st == INVISIBLE {
                // SAFETY: shareable, so initialized; only the writer (us,
                // holding the mutex) could move it out.
                if unsafe { (*slot.value.get()).assume_init_ref() }.is_pinned() {
                    sum += slot.charge.load(Relaxed);
                }
            }
        }
        sum
    }

    fn set_capacity(&self, capacity: usize) {
        let mut w = self.writer.lock();
        w.capacity = capacity;
        self.make_room(&mut w, 0);
    }

    /// Test helper: recomputes usage, occupancy and every displacement
    /// count from the slots and compares them with the maintained values.
    #[cfg(test)]
    fn check_invariants(&self) {
        let w = self.writer.lock();
        let mut usage = 0;
        let mut occupancy = 0;
        let mut disp = vec![0u32; self.slots.len()];
        for (i, slot) in self.slots.iter().enumerate() {
            let st = state(slot.meta.load(Acquire));
            assert_ne!(st, CONSTRUCTION, "slot {i} left in Construction");
            if st == EMPTY {
                continue;
            }
            usage += slot.charge.load(Relaxed);
            occupancy += 1;
            let (mut j, step) = self.probe_start(hash_key(&slot.key()));
            while j != i {
                disp[j] += 1;
                j = (j + step) & self.mask;
            }
        }
        assert_eq!(usage, w.usage);
        assert_eq!(occupancy, w.occupancy);
        for (i, slot) in self.slots.iter().enumerate() {
            assert_eq!(
                slot.displacements.load(Relaxed),
                disp[i],
                "displacements of slot {i}"
            );
        }
    }
}

/// A sharded clock cache with lock-free lookups. See the module header.
pub(crate) struct ClockCache<V: CacheValue> {
    shards: Box<[Shard<V>]>,
    bits: u32,
    capacity: Mutex<usize>,
}

impl<V: CacheValue> ClockCache<V> {
    /// A cache of `opts.capacity` bytes over `2^shard_bits` shards, each a
    /// table sized from `opts.estimated_entry_charge`.
    pub(crate) fn new(opts: &CacheOptions) -> Self {
        let bits = opts.shard_bits();
        let per_shard = CacheOptions::per_shard(opts.capacity, bits);
        let shards = (0..1usize << bits)
            .map(|_| {
                Shard::new(
                    per_shard,
                    opts.estimated_entry_charge,
                    opts.strict_capacity_limit,
                )
            })
            .collect();
        ClockCache {
            shards,
            bits,
            capacity: Mutex::new(opts.capacity),
        }
    }

    #[inline]
    fn shard(&self, hash: u64) -> &Shard<V> {
        // `shard_of` returns `< 2^bits == shards.len()`.
        &self.shards[shard_of(hash, self.bits)]
    }

    /// Inserts `value` under `key`. See [`super::BlockCache::insert`].
    pub(crate) fn insert(
        &self,
        key: CacheKey,
        value: V,
        charge: usize,
        pri: Priority,
    ) -> Result<(), V> {
        let hash = hash_key(&key);
        self.shard(hash).insert(key, hash, value, charge, pri)
    }

    /// A clone of the value under `key`, without taking any lock.
    pub(crate) fn lookup(&self, key: &CacheKey, pri: Priority) -> Option<V> {
        let hash = hash_key(key);
        let shard = self.shard(hash);
        let v = shard.lookup(key, hash);
        if v.is_some() {
            shard.counters.hit(pri);
        } else {
            shard.counters.miss(pri);
        }
        v
    }

    /// Removes `key`; an entry a lookup is cloning right now is hidden at
    /// once and freed by the clock later.
    #[cfg(test)]
    pub(crate) fn erase(&self, key: &CacheKey) {
        let hash = hash_key(key);
        self.shard(hash).erase(key, hash);
    }

    /// Charge held, summed over shards.
    pub(crate) fn usage(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.counters.usage.load(Relaxed))
            .sum()
    }

    /// Charge of pinned entries (walks every slot under each shard's mutex).
    pub(crate) fn pinned_usage(&self) -> usize {
        self.shards.iter().map(|s| s.pinned_usage()).sum()
    }

    /// The configured total capacity.
    pub(crate) fn capacity(&self) -> usize {
        *self.capacity.lock()
    }

    /// Sets the total capacity (the tables keep their size).
    pub(crate) fn set_capacity(&self, capacity: usize) {
        let mut cap = self.capacity.lock();
        *cap = capacity;
        let per_shard = CacheOptions::per_shard(capacity, self.bits);
        for s in self.shards.iter() {
            s.set_capacity(per_shard);
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

    /// Test helper: see `Shard::check_invariants`.
    #[cfg(test)]
    fn check_invariants(&self) {
        for s in self.shards.iter() {
            s.check_invariants();
        }
    }

    /// Test helper: slots per shard.
    #[cfg(test)]
    fn table_len(&self) -> usize {
        self.shards[0].slots.len()
    }
}
