use super::*;

#[test]
fn the_mmap_threshold_is_fixed_once_on_glibc() {
    let set = fix_mmap_threshold();
    assert_eq!(set, cfg!(all(target_os = "linux", target_env = "gnu")));
    assert_eq!(fix_mmap_threshold(), set);
}

/// Pages of `p` (of `len` bytes) resident in memory (`mincore`).
#[cfg(target_os = "linux")]
fn resident_pages(p: &Pages, len: usize) -> usize {
    let pages = len.div_ceil(4096);
    let mut vec = vec![0u8; pages];
    // SAFETY: `p` maps `len` bytes at a page-aligned address; `vec` has
    // one byte per page of that range.
    let r = unsafe { libc::mincore(p.as_ptr().as_ptr().cast(), len, vec.as_mut_ptr()) };
    assert_eq!(r, 0, "mincore");
    vec.iter().filter(|&&b| b & 1 == 1).count()
}

#[cfg(target_os = "linux")]
#[test]
fn a_populated_mapping_is_resident_at_once_and_zeroed() {
    let len = 16 * 4096;
    let lazy = Pages::map(len).expect("mmap");
    assert_eq!(
        resident_pages(&lazy, len),
        0,
        "a plain mapping faults pages in on use"
    );
    let p = Pages::map_populated(len).expect("mmap");
    assert_eq!(resident_pages(&p, len), 16);
    // SAFETY: the mapping is `len` bytes long and owned here.
    let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr().as_ptr(), len) };
    assert!(s.iter().all(|&b| b == 0));
    s.fill(0xCD);
    assert_eq!(s[len - 1], 0xCD);
}

#[test]
fn a_mapping_is_zeroed_writable_and_page_aligned() {
    let p = Pages::map(MIN_MAPPED + 100).expect("mmap");
    assert_eq!(p.as_ptr().as_ptr() as usize % 4096, 0);
    // SAFETY: the mapping is `MIN_MAPPED + 100` bytes long and owned here.
    let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr().as_ptr(), MIN_MAPPED + 100) };
    assert!(s.iter().all(|&b| b == 0));
    s.fill(0xAB);
    assert_eq!(s[MIN_MAPPED + 99], 0xAB);
}
