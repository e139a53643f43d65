use super::*;

fn compressible(n: usize) -> Vec<u8> {
    (0..n).map(|i| b"abcdefgh"[(i / 7) % 8]).collect()
}

#[test]
fn roundtrip_each_codec() {
    let raw = compressible(10_000);
    for (kind, want) in [(Compression::Lz4, TYPE_LZ4), (Compression::Zstd, TYPE_ZSTD)] {
        let mut c = Compressor::new(kind);
        let mut out = Vec::new();
        // Twice, to exercise buffer reuse.
        for _ in 0..2 {
            assert_eq!(c.compress(&raw, &mut out), want);
            assert!(out.len() < raw.len() / 2, "{kind:?}: {}", out.len());
            assert_eq!(decompress(want, &out, "f", 0).unwrap(), raw);
        }
    }
    let mut c = Compressor::new(Compression::None);
    assert_eq!(c.compress(&raw, &mut Vec::new()), TYPE_NONE);
}

#[test]
fn incompressible_and_empty_blocks_stay_raw() {
    // Pseudo-random bytes do not compress by 12.5%.
    let mut x = 0x1234_5678_u32;
    let raw: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    for kind in [Compression::Lz4, Compression::Zstd] {
        let mut c = Compressor::new(kind);
        assert_eq!(c.compress(&raw, &mut Vec::new()), TYPE_NONE);
        assert_eq!(c.compress(&[], &mut Vec::new()), TYPE_NONE);
    }
}

#[test]
fn bogus_sizes_and_payloads_are_corruption_without_huge_allocations() {
    let raw = compressible(5000);
    for (kind, t) in [(Compression::Lz4, TYPE_LZ4), (Compression::Zstd, TYPE_ZSTD)] {
        let mut stored = Vec::new();
        assert_eq!(Compressor::new(kind).compress(&raw, &mut stored), t);
        // Replace the size prefix by a huge one: rejected before allocating.
        let mut payload = &stored[..];
        get_varint32(&mut payload).unwrap();
        let mut huge = Vec::new();
        put_varint32(&mut huge, u32::MAX);
        huge.extend_from_slice(payload);
        assert!(decompress(t, &huge, "f", 9).unwrap_err().is_corruption());
        // A size that is off by one.
        let mut off = Vec::new();
        put_varint32(&mut off, raw.len() as u32 + 1);
        off.extend_from_slice(payload);
        assert!(decompress(t, &off, "f", 9).unwrap_err().is_corruption());
        let mut off = Vec::new();
        put_varint32(&mut off, raw.len() as u32 - 1);
        off.extend_from_slice(payload);
        assert!(decompress(t, &off, "f", 9).unwrap_err().is_corruption());
        // Truncated payloads.
        for cut in [0, 1, stored.len() / 2, stored.len() - 1] {
            assert!(decompress(t, &stored[..cut], "f", 9).is_err());
        }
    }
    assert!(decompress(7, &[0], "f", 0).unwrap_err().is_corruption());
    assert_eq!(max_uncompressed_len(0), 64 << 20);
    assert_eq!(max_uncompressed_len(1 << 20), 256 << 20);
}
