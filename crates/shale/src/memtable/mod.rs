//! The memtable: the in-memory, sorted write buffer in front of the SSTs.
//!
//! Owns: one arena skiplist of internal-key entries (`arena.rs`,
//! `skiplist.rs`), an optional bloom filter over its user keys (`bloom.rs`)
//! that lets point reads skip the list, the range tombstones written to it
//! (a list under a mutex, and its fragments rebuilt lazily for readers),
//! plus counters (entries, deletes, smallest/largest seqno).
//!
//! Thread-safety: `MemTable` is `Send + Sync` and is shared as
//! `Arc<MemTable>`. [`MemTable::add`] may be called from several threads at
//! once (the skiplist inserts with compare-and-swap); reads (`get`, iterators)
//! never lock and may run concurrently with adds. A reader may or may not see
//! an add that is in progress; the DB decides visibility with sequence
//! numbers (a reader only asks for `seq <=` the published last sequence).
//!
//! Invariants: entries are never removed or changed; every entry has a
//! distinct (user key, seqno) pair (the caller assigns each write its own
//! seqno), so no two entries have equal internal keys.
//!
//! Requires: only kinds the engine supports (`ValueKind::is_supported`).
//! A range tombstone is never in the skiplist: `add` of a `RangeDeletion`
//! (key = start, value = end) goes to the range list. Readers that see no
//! range tombstone (`has_range_dels` false) pay nothing for them.

mod arena;
mod bloom;
mod skiplist;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::base::{
    extract_user_key, pack_trailer, PrefixExtractor, SeqNo, Striped, ValueKind, KIND_FOR_SEEK,
    MAX_SEQNO, TRAILER_LEN,
};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::memory::Meter;
use crate::range_del::{Fragments, RangeTombstone};
use bloom::MemBloom;
use skiplist::{Iter, ListOwner, SkipList};

/// User keys up to this length are looked up without a heap allocation.
const STACK_LOOKUP_KEY: usize = 256;

/// The result of [`MemTable::get`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemGet<'a> {
    /// The newest visible entry is a value.
    Value(&'a [u8]),
    /// The newest visible entry is a tombstone.
    Deleted,
    /// The newest visible entry is a merge operand (older entries of the
    /// key may hold more operands and the base value).
    Merge(&'a [u8]),
    /// The newest visible entry is a value expiring at the second given
    /// (the caller decides whether it still exists).
    Expiring(&'a [u8], u64),
}

/// An in-memory sorted buffer of writes (see the module comment).
pub(crate) struct MemTable {
    list: SkipList,
    /// Filter over the user keys added (every `add` sets its bits first),
    /// allocated by the first `add`: an idle memtable (one per idle column
    /// family) costs no filter memory.
    bloom: std::sync::OnceLock<MemBloom>,
    /// Size of the filter once allocated (0: no filter).
    bloom_bytes: usize,
    /// With an extractor the bloom holds each key's prefix, and the whole
    /// key too when `bloom_whole_keys`.
    prefix: Option<PrefixExtractor>,
    bloom_whole_keys: bool,
    /// The DB's memory ledger, charged with the arena's chunks, the filter
    /// and the range tombstones while this memtable lives.
    charge: Option<Meter>,
    id: u64,
    num_deletes: AtomicUsize,
    /// Smallest seqno inserted; `u64::MAX` while empty.
    first_seq: AtomicU64,
    /// Largest seqno inserted; meaningful once `num_entries() > 0`.
    /// Per stripe (see `base::striped`): concurrent inserters each raise
    /// their own.
    largest_seq: Striped<AtomicU64>,
    /// Range tombstones written here, and how many.
    range_dels: parking_lot::Mutex<Vec<RangeTombstone>>,
    num_range_dels: AtomicUsize,
    /// Bytes the range tombstones take (charged like arena memory).
    range_del_bytes: AtomicUsize,
    /// Fragments of `range_dels` with the count they were built from.
    fragments: arc_swap::ArcSwapOption<(usize, Arc<Fragments>)>,
}

impl MemTable {
    /// An empty memtable belonging to WAL file number `id`, without a bloom
    /// filter.
    pub(crate) fn new(id: u64) -> MemTable {
        MemTable::with_bloom(id, 0)
    }

    /// An empty memtable with a bloom filter of about `bloom_bytes` bytes
    /// (none when 0).
    pub(crate) fn with_bloom(id: u64, bloom_bytes: usize) -> MemTable {
        MemTable::charged(id, bloom_bytes, None, 0)
    }

    /// `with_bloom`, charging its memory to `charge` while it lives, for a
    /// write buffer of `write_buffer_size` bytes (0: unknown): inserting
    /// threads carve arena blocks of at most 1/64 of it, so a small buffer
    /// still fills gradually (and its flush points do not depend on how the
    /// blocks fell).
    pub(crate) fn charged(
        id: u64,
        bloom_bytes: usize,
        charge: Option<Meter>,
        write_buffer_size: usize,
    ) -> MemTable {
        let mut arena = arena::Arena::new();
        if write_buffer_size > 0 {
            arena = arena.with_block_limit(write_buffer_size / 64);
        }
        if let Some(c) = &charge {
            arena = arena.charged_to(c.clone());
        }
        MemTable {
            list: SkipList::with_arena(arena),
            charge,
            bloom: std::sync::OnceLock::new(),
            bloom_bytes,
            prefix: None,
            bloom_whole_keys: true,
            id,
            num_deletes: AtomicUsize::new(0),
            first_seq: AtomicU64::new(u64::MAX),
            largest_seq: Striped::default(),
            range_dels: parking_lot::Mutex::new(Vec::new()),
            num_range_dels: AtomicUsize::new(0),
            range_del_bytes: AtomicUsize::new(0),
            fragments: arc_swap::ArcSwapOption::empty(),
        }
    }

    /// The bloom filter holds prefixes of `extractor` (when `Some`), and
    /// whole keys unless an extractor is set and `whole_keys` is false.
    pub(crate) fn with_prefix(
        mut self,
        extractor: Option<PrefixExtractor>,
        whole_keys: bool,
    ) -> MemTable {
        self.prefix = extractor;
        self.bloom_whole_keys = extractor.is_none() || whole_keys;
        self
    }

    /// False when no key with `extractor`'s prefix `prefix` was added (the
    /// bloom holds that extractor's prefixes); true when unsure.
    pub(crate) fn may_contain_prefix(&self, prefix: &[u8], extractor: PrefixExtractor) -> bool {
        if self.bloom_bytes == 0 || self.prefix != Some(extractor) {
            return true;
        }
        match self.bloom.get() {
            Some(b) => b.may_contain(MemBloom::hash(prefix)),
            None => true,
        }
    }

    /// The WAL file number this memtable belongs to.
    #[inline]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Adds one entry, built directly in the arena. Safe to call from several
    /// threads at once. Requires: `(user_key, seq)` not added before,
    /// `seq <= MAX_SEQNO`, a supported `kind`.
    #[inline]
    pub(crate) fn add(&self, seq: SeqNo, kind: ValueKind, user_key: &[u8], value: &[u8]) {
        debug_assert!(seq <= MAX_SEQNO);
        debug_assert!(kind.is_supported(), "unsupported kind {kind:?}");
        if kind == ValueKind::RangeDeletion {
            return self.add_range_del(seq, user_key, value);
        }
        if self.bloom_bytes > 0 {
            let b = self.bloom.get_or_init(|| {
                let b = MemBloom::new(self.bloom_bytes);
                if let Some(c) = &self.charge {
                    c.add(b.size());
                }
                b
            });
            if self.bloom_whole_keys {
                b.add(MemBloom::hash(user_key));
            }
            if let Some(p) = self.prefix.and_then(|e| e.prefix(user_key)) {
                b.add(MemBloom::hash(p));
            }
        }
        self.list
            .insert(user_key, pack_trailer(seq, kind as u8), value);
        if matches!(kind, ValueKind::Deletion | ValueKind::SingleDeletion) {
            self.num_deletes.fetch_add(1, Ordering::Relaxed);
        }
        // Usually seqnos grow: skip the read-modify-write when it cannot help.
        if seq < self.first_seq.load(Ordering::Relaxed) {
            self.first_seq.fetch_min(seq, Ordering::Relaxed);
        }
        let largest = self.largest_seq.local();
        if seq > largest.load(Ordering::Relaxed) {
            largest.fetch_max(seq, Ordering::Relaxed);
        }
    }

    /// Adds the range tombstone `[start, end)` at `seq`.
    #[cold]
    fn add_range_del(&self, seq: SeqNo, start: &[u8], end: &[u8]) {
        let bytes = start.len() + end.len() + 64;
        {
            let mut r = self.range_dels.lock();
            r.push(RangeTombstone {
                start: start.to_vec(),
                end: end.to_vec(),
                seq,
            });
            // Published under the lock: a reader that sees the count sees
            // the tombstone.
            self.num_range_dels.store(r.len(), Ordering::Release);
        }
        self.range_del_bytes.fetch_add(bytes, Ordering::Relaxed);
        if let Some(c) = &self.charge {
            c.add(bytes);
        }
        if seq < self.first_seq.load(Ordering::Relaxed) {
            self.first_seq.fetch_min(seq, Ordering::Relaxed);
        }
        self.largest_seq.local().fetch_max(seq, Ordering::Relaxed);
    }

    /// True once a range tombstone was added.
    #[inline]
    pub(crate) fn has_range_dels(&self) -> bool {
        self.num_range_dels.load(Ordering::Acquire) > 0
    }

    /// The range tombstones added so far, fragmented (`None` while there
    /// are none). Rebuilt when tombstones were added since the last call.
    pub(crate) fn range_fragments(&self) -> Option<Arc<Fragments>> {
        let n = self.num_range_dels.load(Ordering::Acquire);
        if n == 0 {
            return None;
        }
        if let Some(cached) = self.fragments.load().as_ref() {
            if cached.0 == n {
                return Some(Arc::clone(&cached.1));
            }
        }
        let (n, built) = {
            let r = self.range_dels.lock();
            (r.len(), Arc::new(Fragments::build(r.iter())))
        };
        self.fragments
            .store(Some(Arc::new((n, Arc::clone(&built)))));
        Some(built)
    }

    /// The newest entry of `user_key` with seqno <= `seq`, if any.
    #[cfg(test)]
    pub(crate) fn get(&self, user_key: &[u8], seq: SeqNo) -> Option<MemGet<'_>> {
        self.get_with_seq(user_key, seq).map(|(g, _)| g)
    }

    /// [`MemTable::get`] with the entry's sequence number.
    #[inline]
    pub(crate) fn get_with_seq(&self, user_key: &[u8], seq: SeqNo) -> Option<(MemGet<'_>, SeqNo)> {
        if self.bloom_bytes > 0 {
            // No filter yet: nothing was added (an add allocates the filter
            // before it inserts, and a reader that can see the entry also
            // sees the filter).
            let b = self.bloom.get()?;
            if self.list.len() == 0 {
                return None;
            }
            let probe = if self.bloom_whole_keys {
                Some(user_key)
            } else {
                self.prefix.and_then(|e| e.prefix(user_key))
            };
            if probe.is_some_and(|k| !b.may_contain(MemBloom::hash(k))) {
                return None;
            }
        }
        // The lookup key (user_key, seq, KIND_FOR_SEEK) sorts before every
        // entry of user_key with seqno <= seq and after the newer ones.
        let trailer = pack_trailer(seq.min(MAX_SEQNO), KIND_FOR_SEEK).to_le_bytes();
        let n = user_key.len() + TRAILER_LEN;
        let mut stack = [0u8; STACK_LOOKUP_KEY + TRAILER_LEN];
        let heap: Vec<u8>;
        let lookup: &[u8] = if let Some(buf) = stack.get_mut(..n) {
            let (uk, tr) = buf.split_at_mut(user_key.len());
            uk.copy_from_slice(user_key);
            tr.copy_from_slice(&trailer);
            buf
        } else {
            heap = [user_key, &trailer[..]].concat();
            &heap
        };
        let (ikey, value) = self.list.get_ge(lookup)?;
        if extract_user_key(ikey) != user_key {
            return None;
        }
        // The kind is the low byte of the little-endian trailer.
        let trailer = ikey.get(ikey.len().checked_sub(TRAILER_LEN)?..)?;
        let (entry_seq, kind) =
            crate::base::unpack_trailer(u64::from_le_bytes(trailer.try_into().ok()?));
        let got = match ValueKind::from_u8(kind) {
            Some(ValueKind::Deletion | ValueKind::SingleDeletion) => MemGet::Deleted,
            Some(ValueKind::Value) => MemGet::Value(value),
            Some(ValueKind::Merge) => MemGet::Merge(value),
            Some(ValueKind::ValueWithExpiry) => match crate::base::expiry::split_expiring(value) {
                Some((v, expiry)) => MemGet::Expiring(v, expiry),
                // Batches are checked before they reach a memtable.
                None => MemGet::Deleted,
            },
            // `add` refuses other kinds (debug builds); treat them as values.
            _ => {
                debug_assert!(false, "unexpected kind {kind:#x} in memtable");
                MemGet::Value(value)
            }
        };
        Some((got, entry_seq))
    }

    /// Bytes of memory in use (arena and bloom filter); compare with
    /// `write_buffer_size`.
    #[inline]
    /// `approximate_memory_usage` without the bloom filter: what switching
    /// this memtable frees (a new one gets a filter of its own).
    pub(crate) fn entries_memory_usage(&self) -> usize {
        self.list.memory_usage() + self.range_del_bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn approximate_memory_usage(&self) -> usize {
        self.list.memory_usage()
            + self.bloom.get().map_or(0, MemBloom::size)
            + self.range_del_bytes.load(Ordering::Relaxed)
    }

    /// Number of entries (values, tombstones and range tombstones).
    #[inline]
    pub(crate) fn num_entries(&self) -> usize {
        self.list.len() + self.num_range_dels.load(Ordering::Acquire)
    }

    /// Number of tombstones.
    #[inline]
    pub(crate) fn num_deletes(&self) -> usize {
        self.num_deletes.load(Ordering::Relaxed)
    }

    /// Number of range tombstones.
    pub(crate) fn num_range_deletes(&self) -> usize {
        self.num_range_dels.load(Ordering::Acquire)
    }

    /// Smallest seqno added, `None` while empty.
    pub(crate) fn first_seq(&self) -> Option<SeqNo> {
        let s = self.first_seq.load(Ordering::Relaxed);
        (s != u64::MAX).then_some(s)
    }

    /// Largest seqno added, `None` while empty.
    pub(crate) fn largest_seq(&self) -> Option<SeqNo> {
        self.first_seq().map(|_| {
            self.largest_seq
                .all()
                .map(|s| s.load(Ordering::Relaxed))
                .max()
                .unwrap_or(0)
        })
    }

    /// An unpositioned iterator that keeps this memtable alive.
    pub(crate) fn iter(self: &Arc<Self>) -> MemTableIterator {
        MemTableIterator {
            inner: Iter::new(Arc::clone(self)),
        }
    }
}

// SAFETY: `Arc<MemTable>` keeps the memtable (and so its `list` field) alive
// at a fixed address, and `list()` always returns that same field.
unsafe impl ListOwner for Arc<MemTable> {
    #[inline]
    fn list(&self) -> &SkipList {
        &self.list
    }
}

/// An [`InternalIterator`] over one memtable; owns an `Arc<MemTable>`.
/// Never fails: `status()` is always `Ok`.
pub(crate) struct MemTableIterator {
    inner: Iter<Arc<MemTable>>,
}

impl MemTableIterator {
    /// The memtable iterated.
    #[cfg(test)]
    pub(crate) fn memtable(&self) -> &Arc<MemTable> {
        self.inner.owner()
    }
}

impl InternalIterator for MemTableIterator {
    #[inline]
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first()
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target)
    }
    fn seek_for_prev(&mut self, target: &[u8]) {
        self.inner.seek_for_prev(target)
    }
    #[inline]
    fn next(&mut self) {
        debug_assert!(self.valid());
        self.inner.next()
    }
    fn prev(&mut self) {
        debug_assert!(self.valid());
        self.inner.prev()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        self.inner.key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        self.inner.value()
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;

impl Drop for MemTable {
    fn drop(&mut self) {
        if let Some(c) = &self.charge {
            let filter = self.bloom.get().map_or(0, MemBloom::size);
            c.sub(filter + self.range_del_bytes.load(Ordering::Relaxed));
        }
    }
}
