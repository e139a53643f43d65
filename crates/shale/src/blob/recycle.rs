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
mod tests {
    use super::*;

    /// Empties this thread's stash (a test may run on a thread an earlier
    /// test used).
    fn clear() {
        STASH.with(|s| {
            *s.borrow_mut() = Stash {
                slots: [None, None, None, None],
                next: 0,
            }
        });
    }

    /// The lengths of the buffers this thread keeps, slot by slot.
    fn kept() -> Vec<Option<usize>> {
        STASH.with(|s| {
            s.borrow()
                .slots
                .iter()
                .map(|b| b.as_ref().map(|b| b.len()))
                .collect()
        })
    }

    #[test]
    fn a_given_buffer_is_reused_for_the_same_length_and_fully_overwritten() {
        clear();
        let old: Arc<[u8]> = Arc::from(&[7u8; 100][..]);
        let addr = old.as_ptr();
        give(old);
        assert_eq!(kept(), [Some(100), None, None, None]);
        let v = shared_copy(&[1u8; 100]);
        assert_eq!(v.as_ptr(), addr, "the kept buffer is reused");
        assert!(v.iter().all(|&b| b == 1));
        assert_eq!(kept(), [None; SLOTS], "a buffer is reused once");
        let w = shared_copy(&[2u8; 100]);
        assert!(w.iter().all(|&b| b == 2));
    }

    #[test]
    fn a_shared_or_long_buffer_is_not_kept() {
        clear();
        let held: Arc<[u8]> = Arc::from(&[3u8; 50][..]);
        let clone = Arc::clone(&held);
        give(held);
        assert_eq!(
            kept(),
            [None; SLOTS],
            "a buffer held elsewhere is never kept"
        );
        let v = shared_copy(&[4u8; 50]);
        assert_ne!(v.as_ptr(), clone.as_ptr());
        assert!(
            clone.iter().all(|&b| b == 3),
            "the holder's bytes are untouched"
        );

        give(Arc::from(vec![5u8; MAX_LEN + 1]));
        assert_eq!(kept(), [None; SLOTS], "longer than MAX_LEN");
        give(Arc::from(vec![5u8; MAX_LEN]));
        assert_eq!(kept(), [Some(MAX_LEN), None, None, None]);
    }

    #[test]
    fn other_lengths_allocate_and_a_full_stash_replaces_round_robin() {
        clear();
        let kept_ptrs: Vec<*const u8> = (0..SLOTS + 1)
            .map(|i| {
                let b: Arc<[u8]> = Arc::from(vec![0u8; 10 + i]);
                let p = b.as_ptr();
                give(b);
                p
            })
            .collect();
        // The oldest slot took the fifth buffer.
        assert_eq!(kept(), [Some(14), Some(11), Some(12), Some(13)]);
        let other = shared_copy(&[9u8; 10]);
        assert_eq!(other.len(), 10);
        assert_eq!(
            kept(),
            [Some(14), Some(11), Some(12), Some(13)],
            "no length matched"
        );
        assert_eq!(shared_copy(&[9u8; 14]).as_ptr(), kept_ptrs[SLOTS]);
        for (i, &p) in kept_ptrs.iter().enumerate().take(SLOTS).skip(1) {
            assert_eq!(shared_copy(&vec![8u8; 10 + i]).as_ptr(), p);
        }
        assert_eq!(kept(), [None; SLOTS]);
        // The next replacement goes on round robin from slot 1; free slots
        // are filled first.
        give(Arc::from(vec![0u8; 20]));
        assert_eq!(kept(), [Some(20), None, None, None]);
    }
}
