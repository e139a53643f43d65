//! [`AlignedBuf`]: a byte buffer whose start address is a multiple of a
//! chosen alignment, for direct IO (`O_DIRECT` needs the buffer address,
//! the file offset and the length to be multiples of the device's logical
//! block size).
//!
//! Storage: a `memory::pages::Block`, so from 64 KiB up (alignments up to a
//! page) an anonymous mapping of its own, which freeing gives back to the
//! kernel at once: compaction readahead buffers (2 MiB each) freed into
//! glibc's heap otherwise stay part of the process's resident memory
//! (13-15 MiB measured, docs/PERFORMANCE.md).
//!
//! Invariants: `storage` is `None` when `cap == 0`, else a block of `cap`
//! bytes at `align` and `ptr` its first byte; `cap` a multiple of `align`;
//! `len <= cap`; the bytes `[0, len)` are initialised (every block is
//! zeroed, and growth copies the old bytes). `align` is a power of two.
//!
//! Thread safety: an owned buffer (`Send + Sync` like `Vec<u8>`).

use std::alloc::Layout;
use std::ptr::NonNull;

use crate::memory::pages::Block;

/// An aligned, growable byte buffer; see the module docs.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    cap: usize,
    align: usize,
    /// The storage `ptr` points into (`None` before the first reserve).
    storage: Option<Block>,
}

// SAFETY: `AlignedBuf` owns its allocation exclusively (like `Vec<u8>`);
// nothing in it refers to thread-local state.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only reads the bytes (`Deref`), as for `Vec<u8>`.
unsafe impl Sync for AlignedBuf {}

/// `n` rounded up to a multiple of `align` (a power of two).
pub(crate) fn round_up(n: usize, align: usize) -> usize {
    n.div_ceil(align) * align
}

/// True when `offset`, the length of `buf` and its address are multiples
/// of `align`: a direct IO the device takes as it is.
pub(crate) fn is_aligned(offset: u64, buf: &[u8], align: usize) -> bool {
    offset.is_multiple_of(align as u64)
        && buf.len().is_multiple_of(align)
        && (buf.as_ptr() as usize).is_multiple_of(align)
}

impl AlignedBuf {
    /// An empty buffer (no allocation) that will align to `align`, which
    /// must be a power of two (else 4096 is used).
    pub fn new(align: usize) -> AlignedBuf {
        let align = if align.is_power_of_two() { align } else { 4096 };
        AlignedBuf {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
            align,
            storage: None,
        }
    }

    /// The alignment of the start address (and of the capacity).
    pub fn align(&self) -> usize {
        self.align
    }

    /// Bytes the allocation holds.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Makes room for at least `cap` bytes, keeping the first `len`.
    pub fn reserve_total(&mut self, cap: usize) {
        if cap <= self.cap {
            return;
        }
        let new_cap = round_up(cap, self.align);
        let Ok(layout) = Layout::from_size_align(new_cap, self.align) else {
            panic!("aligned buffer of {new_cap} bytes is too large");
        };
        // `new_cap > cap >= 0`: a non-zero size.
        let block = Block::new(layout, false);
        let new = block.as_ptr();
        if self.len > 0 {
            // SAFETY: the old storage holds `len <= cap` initialised bytes,
            // the new one `new_cap > cap`; they do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr(), new.as_ptr(), self.len) };
        }
        self.ptr = new;
        self.cap = new_cap;
        self.storage = Some(block); // frees the old block
    }

    /// Sets the length to `len`, the new bytes (if any) zero.
    pub fn resize_zeroed(&mut self, len: usize) {
        self.reserve_total(len);
        if len > self.len {
            // SAFETY: `[self.len, len)` lies inside the allocation
            // (`len <= cap` after `reserve_total`).
            unsafe { std::ptr::write_bytes(self.ptr.as_ptr().add(self.len), 0, len - self.len) };
        }
        self.len = len;
    }

    /// Appends `data`, growing the allocation if needed.
    pub fn extend_from_slice(&mut self, data: &[u8]) {
        let end = self.len + data.len();
        self.reserve_total(end);
        // SAFETY: `[len, end)` lies inside the allocation; `data` is a
        // separate borrow, so the ranges do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(
                data.as_ptr(),
                self.ptr.as_ptr().add(self.len),
                data.len(),
            )
        };
        self.len = end;
    }

    /// Shortens to `len` bytes (no effect if already shorter).
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Empties the buffer, keeping the allocation.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised bytes (dangling but
        // well aligned and non-null for `len == 0`), borrowed with `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl std::fmt::Debug for AlignedBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuf")
            .field("len", &self.len)
            .field("cap", &self.cap)
            .field("align", &self.align)
            .finish()
    }
}

#[cfg(test)]
mod tests;
