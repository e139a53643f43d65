use super::*;

/// Empties this thread's stash (a test may run on a thread an earlier
/// test used).
fn clear() {
    STASH.with(|s| {
        *s.borrow_mut() = Stash {
            slots: [None, None, None, None],
            next: 0,
        }
    });
}

/// The lengths of the buffers this thread keeps, slot by slot.
fn kept() -> Vec<Option<usize>> {
    STASH.with(|s| {
        s.borrow()
            .slots
            .iter()
            .map(|b| b.as_ref().map(|b| b.len()))
            .collect()
    })
}

#[test]
fn a_given_buffer_is_reused_for_the_same_length_and_fully_overwritten() {
    clear();
    let old: Arc<[u8]> = Arc::from(&[7u8; 100][..]);
    let addr = old.as_ptr();
    give(old);
    assert_eq!(kept(), [Some(100), None, None, None]);
    let v = shared_copy(&[1u8; 100]);
    assert_eq!(v.as_ptr(), addr, "the kept buffer is reused");
    assert!(v.iter().all(|&b| b == 1));
    assert_eq!(kept(), [None; SLOTS], "a buffer is reused once");
    let w = shared_copy(&[2u8; 100]);
    assert!(w.iter().all(|&b| b == 2));
}

#[test]
fn a_shared_or_long_buffer_is_not_kept() {
    clear();
    let held: Arc<[u8]> = Arc::from(&[3u8; 50][..]);
    let clone = Arc::clone(&held);
    give(held);
    assert_eq!(
        kept(),
        [None; SLOTS],
        "a buffer held elsewhere is never kept"
    );
    let v = shared_copy(&[4u8; 50]);
    assert_ne!(v.as_ptr(), clone.as_ptr());
    assert!(
        clone.iter().all(|&b| b == 3),
        "the holder's bytes are untouched"
    );

    give(Arc::from(vec![5u8; MAX_LEN + 1]));
    assert_eq!(kept(), [None; SLOTS], "longer than MAX_LEN");
    give(Arc::from(vec![5u8; MAX_LEN]));
    assert_eq!(kept(), [Some(MAX_LEN), None, None, None]);
}

#[test]
fn other_lengths_allocate_and_a_full_stash_replaces_round_robin() {
    clear();
    let kept_ptrs: Vec<*const u8> = (0..SLOTS + 1)
        .map(|i| {
            let b: Arc<[u8]> = Arc::from(vec![0u8; 10 + i]);
            let p = b.as_ptr();
            give(b);
            p
        })
        .collect();
    // The oldest slot took the fifth buffer.
    assert_eq!(kept(), [Some(14), Some(11), Some(12), Some(13)]);
    let other = shared_copy(&[9u8; 10]);
    assert_eq!(other.len(), 10);
    assert_eq!(
        kept(),
        [Some(14), Some(11), Some(12), Some(13)],
        "no length matched"
    );
    assert_eq!(shared_copy(&[9u8; 14]).as_ptr(), kept_ptrs[SLOTS]);
    for (i, &p) in kept_ptrs.iter().enumerate().take(SLOTS).skip(1) {
        assert_eq!(shared_copy(&vec![8u8; 10 + i]).as_ptr(), p);
    }
    assert_eq!(kept(), [None; SLOTS]);
    // The next replacement goes on round robin from slot 1; free slots
    // are filled first.
    give(Arc::from(vec![0u8; 20]));
    assert_eq!(kept(), [Some(20), None, None, None]);
}
