//! A bump arena for memtable nodes: memory is carved out of large chunks and
//! released all at once when the arena is dropped.
//!
//! Owns: the chunks (`memory::pages::Block`s: mappings of their own from 64 KiB up) and the
//! memory-usage counter that decides when a memtable is full.
//!
//! Thread-safety: `Arena` is `Send + Sync`. Small allocations come from a
//! block the calling thread carved for itself (a thread-local cache of the
//! last [`LOCAL_SLOTS`] arenas it allocated from), so concurrent inserters
//! take no lock and write no shared cache line per allocation; the arena's
//! lock is taken only to carve a block (512 bytes, doubling per refill up to
//! [`MAX_BLOCK`]; requests up to a quarter of that come from blocks), for a thread's first allocation from an arena (served
//! exactly, so an arena a thread touches once costs it no block), and for
//! large requests. [`Arena::memory_usage`] is a lock-free atomic load that
//! readers may call at any time.
//!
//! Invariants:
//! - every returned pointer is [`ALIGN`]-aligned, points to `size` bytes that
//!   no other call returned, and stays valid (never moves, never freed) until
//!   the arena is dropped;
//! - requests larger than a quarter of the chunk size get a chunk of their own,
//!   so the tail wasted when a chunk is retired is at most a quarter chunk;
//! - `memory_usage()` = bytes of all chunks minus the unused tail of the
//!   current chunk (so a memtable with a tiny write buffer still fills up
//!   gradually instead of jumping by a whole chunk); a block counts as used
//!   from the moment it is carved, so usage runs ahead of the bytes handed
//!   out by at most one block per thread and cached arena;
//! - a thread-local block is used only by the arena that carved it: arena
//!   ids are unique for the life of the process, and a cached block is
//!   followed only when its id is the id of the arena allocating (which is
//!   alive, so the block is).
//!
//! Memory handed out is uninitialized; the caller writes it before reading.

use std::alloc::Layout;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::memory::pages::Block;
use crate::memory::Meter;

/// Alignment of every allocation (enough for `AtomicPtr`/`u64`).
pub(crate) const ALIGN: usize = 8;

/// Default chunk size.
pub(crate) const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

/// Size of the first chunk: just enough for a skiplist's head node, so that
/// an empty memtable (one per idle column family) costs no full chunk.
pub(crate) const FIRST_CHUNK_SIZE: usize = 256;

/// The smallest block a thread carves for itself.
const MIN_BLOCK: usize = 512;

/// The largest block a thread carves for itself.
pub(crate) const MAX_BLOCK: usize = 8 << 10;

/// Arenas per thread with a cached block (several column families written
/// by one thread keep their blocks).
pub(crate) const LOCAL_SLOTS: usize = 4;

static NEXT_ARENA_ID: AtomicU64 = AtomicU64::new(1);

/// A thread's block in one arena: `remaining` free bytes at `ptr`; the
/// next block it carves there has `next_block` bytes.
#[derive(Clone, Copy)]
struct LocalBlock {
    arena: u64,
    ptr: *mut u8,
    remaining: usize,
    next_block: usize,
}

const EMPTY_SLOT: LocalBlock = LocalBlock {
    arena: 0,
    ptr: std::ptr::null_mut(),
    remaining: 0,
    next_block: MIN_BLOCK,
};

thread_local! {
    /// This thread's blocks, most recently used first.
    static LOCAL: Cell<[LocalBlock; LOCAL_SLOTS]> = const { Cell::new([EMPTY_SLOT; LOCAL_SLOTS]) };
}

/// State changed by allocations, behind the arena's lock.
struct State {
    /// Next free byte of the current chunk (dangling when `remaining == 0`).
    ptr: NonNull<u8>,
    /// Free bytes left at `ptr`.
    remaining: usize,
    /// Every chunk ever allocated; freed on drop.
    chunks: Vec<Block>,
    /// Sum of the sizes of `chunks`.
    chunk_bytes: usize,
}

/// A bump allocator with stable addresses (see the module comment).
pub(crate) struct Arena {
    /// Unique among all arenas ever made (see `LocalBlock`).
    id: u64,
    chunk_size: usize,
    /// The largest block a thread carves here: [`MAX_BLOCK`], or a quarter
    /// chunk if smaller (so a block never takes a chunk of its own).
    /// Requests up to a quarter of it come from blocks.
    max_block: usize,
    state: Mutex<State>,
    usage: AtomicUsize,
    /// The DB's memory ledger, charged with every chunk while the arena
    /// lives, if any.
    charge: Option<Meter>,
}

// SAFETY: the raw chunk pointers in `State` are owned exclusively by the
// arena (like a `Box<[u8]>`), are only touched under `state`'s lock, and the
// memory they point to carries no thread-affine data.
unsafe impl Send for Arena {}
// SAFETY: as above; shared access is either the lock-protected `alloc` or the
// atomic `usage` counter. What callers do with the returned memory is their
// own synchronization (the skiplist publishes it with release stores).
unsafe impl Sync for Arena {}

impl Arena {
    /// An arena with [`DEFAULT_CHUNK_SIZE`] chunks.
    pub(crate) fn new() -> Arena {
        Arena::with_chunk_size(DEFAULT_CHUNK_SIZE)
    }

    /// An arena with chunks of `chunk_size` bytes (rounded up to [`ALIGN`],
    /// at least 64).
    pub(crate) fn with_chunk_size(chunk_size: usize) -> Arena {
        let chunk_size = round_up(chunk_size.max(64));
        Arena {
            id: NEXT_ARENA_ID.fetch_add(1, Ordering::Relaxed),
            chunk_size,
            max_block: round_up((chunk_size / 4).min(MAX_BLOCK)),
            state: Mutex::new(State {
                ptr: NonNull::dangling(),
                remaining: 0,
                chunks: Vec::new(),
                chunk_bytes: 0,
            }),
            usage: AtomicUsize::new(0),
            charge: None,
        }
    }

    /// Caps the blocks threads carve here at `limit` bytes (rounded up to
    /// [`ALIGN`]); only requests up to a quarter of the cap come from blocks.
    pub(crate) fn with_block_limit(mut self, limit: usize) -> Arena {
        self.max_block = round_up(self.max_block.min(limit).max(1));
        self
    }

    /// Charges every chunk of this arena to `meter` until it is dropped.
    pub(crate) fn charged_to(mut self, meter: Meter) -> Arena {
        meter.add(self.state.get_mut().chunk_bytes);
        self.charge = Some(meter);
        self
    }

    /// Returns `size` fresh, uninitialized, [`ALIGN`]-aligned bytes that stay
    /// valid until the arena is dropped. `size == 0` is treated as `ALIGN`.
    #[inline]
    pub(crate) fn alloc(&self, size: usize) -> NonNull<u8> {
        let size = round_up(size.max(1));
        if size <= self.max_block / 4 {
            if let Ok(Some(p)) = LOCAL.try_with(|l| self.alloc_local(l, size)) {
                return p;
            }
        }
        self.alloc_shared(size)
    }

    /// A small allocation from this thread's block, carving a new block
    /// when it is used up; `None` for this thread's first allocation here
    /// (the caller allocates from the shared chunk).
    fn alloc_local(
        &self,
        local: &Cell<[LocalBlock; LOCAL_SLOTS]>,
        size: usize,
    ) -> Option<NonNull<u8>> {
        let mut slots = local.get();
        let Some(i) = slots.iter().position(|b| b.arena == self.id) else {
            // First touch: remember the arena, carve nothing yet.
            slots.rotate_right(1);
            slots[0] = LocalBlock {
                arena: self.id,
                ..EMPTY_SLOT
            };
            local.set(slots);
            return None;
        };
        let mut b = slots[i];
        if b.remaining < size {
            // The tail of the old block is left unused (counted as used).
            let block = b.next_block.max(4 * size).min(self.max_block);
            let p = self.alloc_shared(block);
            b.ptr = p.as_ptr();
            b.remaining = block;
            b.next_block = (block * 2).min(self.max_block);
        }
        let out = b.ptr;
        // SAFETY: `b` is this arena's block (ids are unique and `self` is
        // alive) with `remaining >= size` bytes at `ptr`, handed out to this
        // thread only; `ptr + size` stays within it (or one past its end).
        b.ptr = unsafe { out.add(size) };
        b.remaining -= size;
        slots[..=i].rotate_right(1);
        slots[0] = b;
        local.set(slots);
        // SAFETY: `out` points into a block carved from a chunk: not null.
        Some(unsafe { NonNull::new_unchecked(out) })
    }

    /// An allocation from the current chunk, under the lock.
    fn alloc_shared(&self, size: usize) -> NonNull<u8> {
        let mut st = self.state.lock();
        // A new chunk is charged once the lock is released (charging may
        // shrink the block cache).
        let mut charged = 0;
        let out = if size <= st.remaining {
            let p = st.ptr;
            // SAFETY: `p` points into the current chunk with `remaining >= size`
            // bytes after it, so `p + size` is in bounds (or one past the end).
            st.ptr = unsafe { NonNull::new_unchecked(p.as_ptr().add(size)) };
            st.remaining -= size;
            p
        } else if size > self.chunk_size / 4 {
            // Large request: a dedicated chunk; the current chunk stays current.
            charged = size;
            new_chunk(&mut st, size)
        } else {
            let want = if st.chunks.is_empty() && size <= FIRST_CHUNK_SIZE {
                FIRST_CHUNK_SIZE.min(self.chunk_size)
            } else {
                self.chunk_size
            };
            charged = want;
            let p = new_chunk(&mut st, want);
            // SAFETY: the new chunk has `want >= size` bytes (a request
            // larger than `chunk_size / 4` took the branch above).
            st.ptr = unsafe { NonNull::new_unchecked(p.as_ptr().add(size)) };
            st.remaining = want - size;
            p
        };
        self.usage
            .store(st.chunk_bytes - st.remaining, Ordering::Relaxed);
        drop(st);
        self.charge(charged);
        debug_assert_eq!(out.as_ptr() as usize % ALIGN, 0);
        out
    }

    fn charge(&self, bytes: usize) {
        if let Some(c) = &self.charge {
            c.add(bytes);
        }
    }

    /// Bytes in use: all chunks minus the free tail of the current chunk.
    #[inline]
    pub(crate) fn memory_usage(&self) -> usize {
        self.usage.load(Ordering::Relaxed)
    }

    /// Bytes reserved from the allocator (all chunks, including free tails).
    #[cfg(test)]
    pub(crate) fn allocated_bytes(&self) -> usize {
        self.state.lock().chunk_bytes
    }
}

impl Default for Arena {
    fn default() -> Arena {
        Arena::new()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        if let Some(c) = &self.charge {
            c.sub(self.state.get_mut().chunk_bytes);
        }
        // The chunks (`Block`s) free themselves. Nothing can use arena
        // memory after the arena is dropped: every user borrows or owns
        // (through an `Arc`) the structure that owns the arena.
    }
}

/// Allocates a chunk of `size` bytes, records it, and returns its start.
fn new_chunk(st: &mut State, size: usize) -> NonNull<u8> {
    let layout = match Layout::from_size_align(size, ALIGN) {
        Ok(l) => l,
        Err(_) => panic!("arena allocation of {size} bytes overflows"),
    };
    // Populated at once when mapped (chunks of `MIN_MAPPED` bytes or more,
    // freed at once when the memtable goes): every byte of a chunk is
    // about to be written (see `Pages::map_populated`).
    let chunk = Block::new(layout, true);
    let ptr = chunk.as_ptr();
    st.chunks.push(chunk);
    st.chunk_bytes += size;
    ptr
}

/// Rounds up to a multiple of [`ALIGN`].
#[inline]
fn round_up(n: usize) -> usize {
    match n.checked_add(ALIGN - 1) {
        Some(m) => m & !(ALIGN - 1),
        None => panic!("arena allocation of {n} bytes overflows"),
    }
}

#[cfg(test)]
mod tests;
