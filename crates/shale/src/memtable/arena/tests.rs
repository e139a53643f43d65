use super::*;
use crate::memory::{Ledger, Part};
use std::sync::Arc;

#[test]
fn allocations_are_aligned_disjoint_and_stable() {
    let a = Arena::with_chunk_size(4096);
    let mut got: Vec<(NonNull<u8>, usize, u8)> = Vec::new();
    for i in 0..if cfg!(miri) { 150 } else { 2000usize } {
        let size = match i % 7 {
            0 => 1,
            1 => 3000, // > chunk/4: its own chunk
            2 => 0,
            _ => i % 97 + 1,
        };
        let p = a.alloc(size);
        assert_eq!(p.as_ptr() as usize % ALIGN, 0);
        let fill = (i % 251) as u8;
        // SAFETY: `p` points to at least `size` writable bytes of our own.
        unsafe { p.as_ptr().write_bytes(fill, size) };
        got.push((p, size, fill));
    }
    // Nothing was overwritten by a later allocation.
    for &(p, size, fill) in &got {
        // SAFETY: the arena is alive and the bytes were initialized above.
        let s = unsafe { std::slice::from_raw_parts(p.as_ptr(), size) };
        assert!(s.iter().all(|&b| b == fill));
    }
    let mut ranges: Vec<(usize, usize)> = got
        .iter()
        .map(|&(p, s, _)| (p.as_ptr() as usize, p.as_ptr() as usize + s))
        .collect();
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(w[0].1 <= w[1].0, "overlapping allocations {w:?}");
    }
    assert!(a.memory_usage() <= a.allocated_bytes());
    let handed_out: usize = got.iter().map(|&(_, s, _)| round_up(s.max(1))).sum();
    assert!(a.memory_usage() >= handed_out);
}

#[test]
fn usage_grows_gradually() {
    let a = Arena::with_chunk_size(1 << 16);
    assert_eq!(a.memory_usage(), 0);
    a.alloc(10);
    // The first chunk is small (an idle memtable's head node only), and
    // a thread's first allocation carves no block.
    assert_eq!(a.memory_usage(), 16);
    assert_eq!(a.allocated_bytes(), FIRST_CHUNK_SIZE);
    a.alloc(20_000); // dedicated chunk
    assert_eq!(a.memory_usage(), 16 + 20_000);
    // This thread's first block: 512 bytes, which do not fit the first
    // chunk's tail: a full chunk (the tail counts as used).
    a.alloc(8);
    assert_eq!(a.memory_usage(), FIRST_CHUNK_SIZE + 20_000 + MIN_BLOCK);
    assert_eq!(a.allocated_bytes(), FIRST_CHUNK_SIZE + 20_000 + (1 << 16));
    // Then blocks double up to MAX_BLOCK: usage runs ahead of what was
    // handed out by the current block and the tails left in full blocks
    // (each shorter than the request that did not fit).
    let mut handed = FIRST_CHUNK_SIZE + 20_000 + 8;
    for i in 0..2000 {
        let size = i % 200 + 1;
        a.alloc(size);
        handed += round_up(size);
        assert!(a.memory_usage() >= handed);
        let bound = handed + handed / 16 + MAX_BLOCK;
        assert!(a.memory_usage() <= bound, "{} > {bound}", a.memory_usage());
    }
}

#[test]
fn a_thread_keeps_blocks_in_a_few_arenas_and_wastes_none_in_more() {
    // Round robin over LOCAL_SLOTS arenas: each keeps its block.
    let arenas: Vec<Arena> = (0..LOCAL_SLOTS)
        .map(|_| Arena::with_chunk_size(1 << 16))
        .collect();
    for _ in 0..500 {
        for a in &arenas {
            a.alloc(40);
        }
    }
    for a in &arenas {
        assert!(a.memory_usage() <= 500 * 40 + MAX_BLOCK);
    }
    // Round robin over more arenas than slots: every allocation is a
    // first touch, served exactly (no block carved and abandoned).
    let arenas: Vec<Arena> = (0..LOCAL_SLOTS + 1)
        .map(|_| Arena::with_chunk_size(1 << 16))
        .collect();
    for _ in 0..500 {
        for a in &arenas {
            a.alloc(40);
        }
    }
    for a in &arenas {
        // (Only the first chunk's unused tail on top.)
        assert!(a.memory_usage() <= 500 * 40 + FIRST_CHUNK_SIZE);
    }
}

#[test]
fn chunks_are_charged_to_the_budget_while_the_arena_lives() {
    let ledger = Ledger::new(0);
    let a = Arena::with_chunk_size(1 << 16).charged_to(ledger.meter(Part::Memtables));
    a.alloc(10);
    a.alloc(100);
    a.alloc(1 << 15); // a dedicated chunk
    assert_eq!(ledger.get(Part::Memtables), a.allocated_bytes());
    drop(a);
    assert_eq!(ledger.charged(), 0);
}

#[test]
fn concurrent_allocations_do_not_overlap() {
    const THREADS: usize = 4;
    const PER_THREAD: usize = if cfg!(miri) { 20 } else { 200 };
    let a = Arc::new(Arena::with_chunk_size(1024));
    let barrier = Arc::new(std::sync::Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let a = Arc::clone(&a);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let fill = t as u8 + 1;
                let mut v = Vec::new();
                for i in 0..PER_THREAD {
                    let size = i % 40 + 1;
                    let p = a.alloc(size);
                    // SAFETY: fresh memory of `size` bytes owned by this thread.
                    unsafe { p.as_ptr().write_bytes(fill, size) };
                    v.push((p, size));
                }
                // Everyone has written everything: check nobody overwrote us.
                barrier.wait();
                for (p, size) in v {
                    // SAFETY: the arena is alive; these bytes were written
                    // by this thread and are not handed to anyone else.
                    let s = unsafe { std::slice::from_raw_parts(p.as_ptr(), size) };
                    assert!(s.iter().all(|&b| b == fill));
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    assert!(a.memory_usage() >= THREADS * PER_THREAD * 8);
}
