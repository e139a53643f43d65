use super::*;

#[test]
fn auto_starts_after_two_sequential_reads_and_doubles() {
    let mut r = Readahead::new(ReadaheadPolicy::Auto { max: 32 * 1024 });
    assert_eq!(r.plan(0, 4096), None);
    assert_eq!(r.plan(4096, 4096), None);
    assert_eq!(r.plan(8192, 4096), Some(8 * 1024));
    assert_eq!(r.plan(8192 + 4096, 4096), Some(16 * 1024));
    assert_eq!(r.plan(8192 + 8192, 4096), Some(32 * 1024));
    assert_eq!(r.plan(8192 + 12288, 4096), Some(32 * 1024));
    // A jump resets.
    assert_eq!(r.plan(1 << 20, 4096), None);
    let mut f = Readahead::new(ReadaheadPolicy::Fixed(1 << 20));
    assert_eq!(f.plan(0, 4096), Some(1 << 20));
    let mut b = f.take_buffer(0, 1);
    b.extend_from_slice(&[1, 2, 3, 4]);
    f.fill(100, b);
    assert_eq!(f.get(101, 2), Some(&[2u8, 3][..]));
    assert_eq!(f.get(99, 2), None);
    assert_eq!(f.get(103, 2), None);
}

mod span_tests {
    use super::super::aligned_span;

    #[test]
    fn spans_are_aligned_cover_the_block_and_stay_within_the_request() {
        // A 2 MiB request from an unaligned block: down to 4096 on both ends.
        assert_eq!(
            aligned_span(5000, 2 << 20, 4000, 4096, 1 << 30),
            (4096, (2 << 20) + 4096 - 4096)
        );
        for off in [0u64, 1, 511, 512, 4095, 4096, 100_000] {
            for (len, need) in [(4096, 4096), (8192, 100), (1 << 20, 70_000), (300, 300)] {
                for align in [512, 4096] {
                    let file_len = 10 << 20;
                    let (s, l) = aligned_span(off, len, need, align, file_len);
                    assert!(s <= off && s % align as u64 == 0);
                    assert!(s + l as u64 >= off + need as u64, "covers the block");
                    assert_eq!(l % align, 0);
                    assert!(l <= len.max(need) + 2 * align);
                }
            }
        }
        // Near the end of the file: the span stops at the file's end.
        assert_eq!(aligned_span(9000, 8192, 100, 4096, 9500), (8192, 1308));
    }
}
