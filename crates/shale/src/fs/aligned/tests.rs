use super::*;
use crate::memory::pages::MIN_MAPPED;

/// Exercises every unsafe block: allocation, growth (copy and free),
/// zeroing, appends, slices and the final free.
#[test]
fn grows_keeps_bytes_and_stays_aligned() {
    for align in [1, 512, 4096] {
        let mut b = AlignedBuf::new(align);
        assert!(b.is_empty());
        assert_eq!(b.capacity(), 0);
        b.extend_from_slice(b"hello");
        assert_eq!(&b[..], b"hello");
        assert_eq!(b.as_ptr() as usize % align, 0);
        assert_eq!(b.capacity() % align, 0);
        b.resize_zeroed(10_000);
        assert_eq!(&b[..5], b"hello");
        assert!(b[5..].iter().all(|&x| x == 0));
        assert_eq!(b.as_ptr() as usize % align, 0);
        b[9_999] = 7;
        b.truncate(3);
        b.resize_zeroed(10_000);
        assert_eq!(b[9_999], 0, "bytes past a truncation read as zero again");
        b.clear();
        b.extend_from_slice(&[1u8; 20_000]);
        assert_eq!(b.len(), 20_000);
        assert!(b.iter().all(|&x| x == 1));
        // Past MIN_MAPPED the storage is a mapping (alignments up to a
        // page): growth into it keeps the bytes and zeroes the rest,
        // and growth from one mapping to another frees the first.
        b.resize_zeroed(MIN_MAPPED + 1);
        assert!(b.storage.as_ref().is_some_and(|s| s.is_mapped()) || cfg!(miri));
        assert!(b[..20_000].iter().all(|&x| x == 1));
        assert!(b[20_000..].iter().all(|&x| x == 0));
        assert_eq!(b.as_ptr() as usize % align, 0);
        b[MIN_MAPPED] = 9;
        b.resize_zeroed(4 * MIN_MAPPED);
        assert_eq!(b[MIN_MAPPED], 9);
        assert!(b[MIN_MAPPED + 1..].iter().all(|&x| x == 0));
    }
    // An alignment above a page stays with the allocator.
    let mut big = AlignedBuf::new(8192);
    big.resize_zeroed(2 * MIN_MAPPED);
    assert!(!big.storage.as_ref().unwrap().is_mapped());
    assert_eq!(big.as_ptr() as usize % 8192, 0);
    assert_eq!(AlignedBuf::new(3000).align(), 4096);
    assert_eq!(round_up(1, 512), 512);
    assert_eq!(round_up(1024, 512), 1024);
    assert_eq!(round_up(0, 512), 0);
}
