//! Large buffers taken straight from the kernel (anonymous private
//! mappings) instead of the allocator, so that freeing one gives its pages
//! back at once.
//!
//! Why: memtable arena chunks are the largest churn of the engine (every
//! byte written passes through one and is freed wholesale at flush). Taken
//! from a general-purpose allocator (glibc's raises its mmap threshold after
//! the first large free), they end up in the heap, where the small blocks
//! allocated after them (cached blocks) pin the freed space: measured under
//! `memory_budget` = 64 MiB, the process held 36–57 MiB of freed heap on top
//! of the 64 MiB in use (docs/PERFORMANCE.md, "One memory budget").
//!
//! The same holds for the engine's other large buffers (index and filter
//! blocks, readahead, table builders): under a memory budget, on glibc,
//! [`fix_mmap_threshold`] pins the allocator's mmap threshold at its
//! default 128 KiB (glibc otherwise raises it to the largest buffer freed,
//! up to 32 MiB, and serves later large buffers from the heap).
//!
//! Under Miri (which has no `mmap`) the global allocator stands in.
//!
//! Thread-safety: a [`Pages`] owns its mapping like a `Box<[u8]>`.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Requests from this size up are mapped; smaller ones belong to the
/// allocator.
pub(crate) const MIN_MAPPED: usize = 64 << 10;

/// glibc only: fixes `M_MMAP_THRESHOLD` at 128 KiB for the process, once,
/// so that buffers of that size and up are mapped and go back to the kernel
/// when freed. Returns whether it was set (false with another C library,
/// or under Miri). A process-wide setting: called only for a DB opened with
/// a `memory_budget`, and said in its LOG.
pub(crate) fn fix_mmap_threshold() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
    {
        static SET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *SET.get_or_init(|| {
            // SAFETY: `mallopt` only changes allocator parameters; it is
            // thread-safe in glibc.
            unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) == 1 }
        })
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu", not(miri))))]
    {
        false
    }
}

/// glibc only: gives the free pages inside the heap back to the kernel
/// (`malloc_trim(0)`). Called after the block cache shrank under a memory
/// budget: the blocks it evicted leave free pages among live ones, which
/// glibc keeps otherwise. Does nothing with another C library.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu", not(miri)))]
    // SAFETY: `malloc_trim` only returns free memory; thread-safe in glibc.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// An owned, zero-filled, page-aligned mapping of `len` bytes.
pub(crate) struct Pages {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned exclusively (like a `Box<[u8]>`) and holds
// plain bytes.
unsafe impl Send for Pages {}
// SAFETY: `&Pages` gives no access to the bytes; users synchronise their
// own use of the pointer.
unsafe impl Sync for Pages {}

impl Pages {
    /// Maps `len > 0` bytes; `None` when the kernel refuses. The pages
    /// are faulted in as they are first touched.
    #[cfg(not(miri))]
    pub(crate) fn map(len: usize) -> Option<Pages> {
        Pages::map_with(len, 0)
    }

    /// Maps `len > 0` bytes and, on Linux, faults them all in at once
    /// (`MAP_POPULATE`): for memory that is about to be written through
    /// (memtable arena chunks), one system call instead of a page fault
    /// per 4 KiB page as the writes reach it. The pages are resident from
    /// the start, so the memory is used as soon as it is mapped (an arena
    /// counts its chunks as used anyway). Elsewhere as `map`.
    #[cfg(not(miri))]
    pub(crate) fn map_populated(len: usize) -> Option<Pages> {
        #[cfg(target_os = "linux")]
        let flags = libc::MAP_POPULATE;
        #[cfg(not(target_os = "linux"))]
        let flags = 0;
        Pages::map_with(len, flags)
    }

    /// Miri: as `map`.
    #[cfg(miri)]
    pub(crate) fn map_populated(len: usize) -> Option<Pages> {
        Pages::map(len)
    }

    #[cfg(not(miri))]
    fn map_with(len: usize, extra_flags: libc::c_int) -> Option<Pages> {
        debug_assert!(len > 0);
        // SAFETY: an anonymous private mapping at an address the kernel
        // chooses touches no existing memory; the result is checked.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra_flags,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Pages {
            ptr: NonNull::new(p.cast::<u8>())?,
            len,
        })
    }

    /// Miri: zeroed memory from the global allocator.
    #[cfg(miri)]
    pub(crate) fn map(len: usize) -> Option<Pages> {
        let layout = std::alloc::Layout::from_size_align(len, 4096).ok()?;
        // SAFETY: `len > 0`.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        Some(Pages {
            ptr: NonNull::new(p)?,
            len,
        })
    }

    /// The first byte; valid for `len` bytes until `self` is dropped.
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        #[cfg(not(miri))]
        // SAFETY: `ptr`/`len` are exactly the mapping made by `map`, unmapped
        // once, here; nothing uses it after its owner drops it.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
        #[cfg(miri)]
        // SAFETY: allocated by `map` with this layout, freed once.
        unsafe {
            std::alloc::dealloc(
                self.ptr.as_ptr(),
                std::alloc::Layout::from_size_align_unchecked(self.len, 4096),
            );
        }
    }
}

/// Zero-filled storage of `layout.size()` bytes at `layout.align()`: a
/// mapping of its own from [`MIN_MAPPED`] bytes up (alignments up to a
/// page), so that dropping it gives the memory back to the kernel at once;
/// smaller or more aligned blocks come from the global allocator. The one
/// place that decides between the two for the engine's large buffers
/// (memtable arena chunks, `fs::AlignedBuf`).
pub(crate) struct Block {
    ptr: NonNull<u8>,
    layout: Layout,
    /// The mapping `ptr` points into, when mapped.
    mapped: Option<Pages>,
}

// SAFETY: a `Block` owns its storage exclusively, like a `Box<[u8]>`.
unsafe impl Send for Block {}
// SAFETY: `&Block` gives no access to the bytes; users synchronise their
// own use of the pointer.
unsafe impl Sync for Block {}

/// Alignments a mapping satisfies (it starts on a page).
const PAGE: usize = 4096;

impl Block {
    /// A block for `layout` (non-zero size). `populate`: a mapping's pages
    /// are faulted in at once (`map_populated`), for memory about to be
    /// written through.
    pub(crate) fn new(layout: Layout, populate: bool) -> Block {
        debug_assert!(layout.size() > 0);
        let mapped = if layout.size() >= MIN_MAPPED && layout.align() <= PAGE {
            if populate {
                Pages::map_populated(layout.size())
            } else {
                Pages::map(layout.size())
            }
        } else {
            None
        };
        let ptr = match &mapped {
            Some(p) => p.as_ptr(),
            None => {
                // SAFETY: `layout` has a non-zero size (checked by callers).
                let raw = unsafe { std::alloc::alloc_zeroed(layout) };
                let Some(ptr) = NonNull::new(raw) else {
                    std::alloc::handle_alloc_error(layout)
                };
                ptr
            }
        };
        Block {
            ptr,
            layout,
            mapped,
        }
    }

    /// The first byte; valid for the layout's size until `self` drops.
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    /// Whether the storage is a mapping (tests).
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped.is_some()
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.mapped.is_none() {
            // SAFETY: not mapped, so allocated in `new` with exactly this
            // layout, and freed once, here.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) };
        }
    }
}

#[cfg(test)]
mod tests;
