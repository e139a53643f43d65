use super::*;
use crate::codec::decode_fixed32;

#[test]
fn layout_of_a_small_block() {
    let mut b = BlockBuilder::new(2);
    b.add(b"apple", b"1");
    b.add(b"apricot", b"22");
    b.add(b"banana", b"");
    let est = b.size_estimate();
    let bytes = b.finish().to_vec();
    assert_eq!(bytes.len(), est);
    let mut want = Vec::new();
    want.extend_from_slice(&[0, 5, 1]);
    want.extend_from_slice(b"apple1");
    want.extend_from_slice(&[2, 5, 2]);
    want.extend_from_slice(b"ricot22");
    let second_restart = want.len() as u32;
    want.extend_from_slice(&[0, 6, 0]);
    want.extend_from_slice(b"banana");
    want.extend_from_slice(&0u32.to_le_bytes());
    want.extend_from_slice(&second_restart.to_le_bytes());
    want.extend_from_slice(&2u32.to_le_bytes());
    assert_eq!(bytes, want);
    assert_eq!(b.num_entries(), 3);
    assert_eq!(b.last_key(), b"banana");

    b.reset();
    assert!(b.is_empty());
    assert_eq!(b.size_estimate(), 8);
    let empty = b.finish();
    assert_eq!(empty.len(), 8);
    assert_eq!(decode_fixed32(&empty[4..]), Some(1));
}

#[test]
fn a_byte_bound_adds_restarts_between_large_entries() {
    let value = [7u8; 300];
    let restarts = |bytes: usize| {
        let mut b = BlockBuilder::with_restart_bytes(16, bytes);
        for i in 0..10u32 {
            b.add(format!("key{i:04}").as_bytes(), &value);
        }
        let data = b.finish().to_vec();
        let n = data.len();
        decode_fixed32(&data[n - 4..]).unwrap()
    };
    assert_eq!(restarts(0), 1, "by count only: one interval of 16");
    // ~310 bytes an entry: a restart every 4th entry (0, 4, 8).
    assert_eq!(restarts(1024), 3);
    assert_eq!(restarts(1), 10, "every entry restarts");
    // Small entries are bounded by the count first.
    let mut b = BlockBuilder::with_restart_bytes(4, 1024);
    for i in 0..10u32 {
        b.add(format!("k{i:02}").as_bytes(), b"v");
    }
    let data = b.finish().to_vec();
    assert_eq!(decode_fixed32(&data[data.len() - 4..]), Some(3));
}
