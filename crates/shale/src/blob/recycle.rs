//! Blob buffers the block cache evicted, kept by the evicting thread for
//! its next blob read of the same length (Go's `sync.Pool`, per thread and
//! keyed by length).
//!
//! Why: when the blobs read outnumber what the cache holds, every blob read
//! allocates its value and its insert into the cache evicts an older blob,
//! which another reader thread allocated about half the time. glibc's
//! malloc frees a chunk into the arena of the thread that allocated it,
//! under that arena's lock, while that thread allocates from it: with two
//! reader threads and 1 KiB blobs, 14,700 futex sleeps in 3 s of
//! `seekrandom` and 13% of the two cores idle (RocksDB: 1,600; its 1 KiB
//! values fit glibc's per-thread cache, Shale's `Arc` header pushes them
//! past it). Reusing the evicted buffer skips both the free and the next
//! allocation. docs/PERFORMANCE.md, "Blob buffers reused".
//!
//! Invariants: a stashed `Arc` is unique (no other strong or weak
//! reference) when stashed and cannot be cloned afterwards, so [`take`]'s
//! `Arc::get_mut` never fails on it and no reader ever sees its bytes
//! change; every byte of a reused buffer is overwritten before it is
//! shared again. A thread keeps at most [`SLOTS`] buffers of at most
//! [`MAX_LEN`] bytes each, outside the cache's capacity (at most 256 KiB
//! per thread that evicts blobs), freed when the thread exits.

use std::cell::RefCell;
use std::sync::Arc;

/// Buffers kept per thread.
const SLOTS: usize = 4;
/// Longer buffers are freed at once: reuse saves one allocation and one
/// free per read, which matters less the longer the copy of the value is.
const MAX_LEN: usize = 64 << 10;

struct Stash {
    slots: [Option<Arc<[u8]>>; SLOTS],
    /// The slot the next buffer replaces when all are taken.
    next: usize,
}

thread_local! {
    static STASH: RefCell<Stash> = const {
        RefCell::new(Stash { slots: [None, None, None, None], next: 0 })
    };
}

/// Keeps `buf` (the cache's own copy of an evicted blob) for a later
/// [`shared_copy`] on this thread, or drops it: when something else still
/// holds it, when it is longer than [`MAX_LEN`], or during thread exit.
pub(crate) fn give(mut buf: Arc<[u8]>) {
    if buf.len() > MAX_LEN || Arc::get_mut(&mut buf).is_none() {
        return;
    }
    // `try_with` fails only while the thread's locals are being destroyed
    // (the buffer is dropped with the closure). The replaced buffer, if
    // any, is dropped after the borrow ends.
    let replaced = STASH.try_with(move |s| match s.try_borrow_mut() {
        Ok(mut s) => {
            let i = match s.slots.iter().position(Option::is_none) {
                Some(free) => free,
                None => {
                    let i = s.next;
                    s.next = (i + 1) % SLOTS;
                    i
                }
            };
            s.slots[i].replace(buf)
        }
        Err(_) => Some(buf),
    });
    drop(replaced);
}

/// A kept buffer of exactly `len` bytes, if this thread has one.
fn take(len: usize) -> Option<Arc<[u8]>> {
    STASH
        .try_with(|s| {
            let mut s = s.try_borrow_mut().ok()?;
            let i = s
                .slots
                .iter()
                .position(|b| b.as_ref().is_some_and(|b| b.len() == len))?;
            s.slots[i].take()
        })
        .ok()
        .flatten()
}

/// `bytes` in a shared buffer: a kept one of the same length when this
/// thread has one, else a new allocation.
pub(crate) fn shared_copy(bytes: &[u8]) -> Arc<[u8]> {
    if let Some(mut buf) = take(bytes.len()) {
        if let Some(dst) = Arc::get_mut(&mut buf) {
            dst.copy_from_slice(bytes);
            return buf;
        }
    }
    Arc::from(bytes)
}

#[cfg(test)]
mod tests;
