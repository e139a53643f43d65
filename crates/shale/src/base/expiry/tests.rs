use super::*;

#[test]
fn layout_and_expiry() {
    let mut v = b"value".to_vec();
    v.extend_from_slice(&1_700_000_000u64.to_le_bytes());
    assert_eq!(split_expiring(&v), Some((&b"value"[..], 1_700_000_000)));
    assert_eq!(split_expiring(b"short"), None);
    assert!(expired(10, 10) && !expired(11, 10));
    // At least the TTL, whenever in the second the write came.
    use std::time::Duration;
    assert_eq!(expiry_after(100, Duration::from_secs(1)), 102);
    assert_eq!(expiry_after(100, Duration::from_millis(1500)), 103);
    assert_eq!(expiry_after(100, Duration::ZERO), 100);
    assert_eq!(expiry_after(u64::MAX - 1, Duration::from_secs(5)), u64::MAX);
    assert!(SystemClock.now_secs() > 1_700_000_000);
}
