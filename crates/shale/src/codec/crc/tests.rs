use super::*;

#[test]
fn mask_roundtrip_and_known_value() {
    // CRC32C("123456789") is the standard check value.
    assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    let c = crc32c(b"foo");
    assert_ne!(mask_crc(c), c);
    assert_eq!(unmask_crc(mask_crc(c)), c);
    assert_eq!(
        crc32c_extend(crc32c(b"hello "), b"world"),
        crc32c(b"hello world")
    );
}
