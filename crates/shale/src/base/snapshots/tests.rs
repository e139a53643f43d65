use super::*;

#[test]
fn acquire_release() {
    let l = Arc::new(SnapshotList::default());
    let a = l.acquire(5);
    let b = l.acquire(5);
    let c = l.acquire(9);
    assert_eq!(l.all(), vec![5, 9]);
    drop(a);
    assert_eq!(l.oldest(), Some(5));
    drop(b);
    assert_eq!(l.all(), vec![9]);
    assert_eq!(c.sequence(), 9);
    drop(c);
    assert!(l.all().is_empty());
}

#[test]
fn admit_refuses_unknown_snapshots_that_read_filtered_values() {
    let l = Arc::new(SnapshotList::default());
    let _old = l.acquire(3);
    let known = l.all();
    assert!(matches!(
        l.admit(&known, Some(5)),
        Admission::Install(Some(_))
    ));
    let _new = l.acquire(8);
    // The new snapshot reads values from 5 up, not the one at 9.
    assert!(matches!(l.admit(&known, Some(5)), Admission::RunAgain));
    assert!(matches!(
        l.admit(&known, Some(9)),
        Admission::Install(Some(_))
    ));
    assert!(matches!(l.admit(&known, None), Admission::Install(None)));
    assert!(matches!(
        l.admit(&l.all(), Some(5)),
        Admission::Install(Some(_))
    ));
}

#[test]
fn new_snapshots_wait_for_an_admitted_install() {
    let l = Arc::new(SnapshotList::default());
    let Admission::Install(Some(hold)) = l.admit(&[], Some(1)) else {
        panic!("nothing to refuse");
    };
    let taker = {
        let l = Arc::clone(&l);
        std::thread::spawn(move || l.acquire(7).sequence())
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    let waited = !taker.is_finished();
    drop(hold);
    assert_eq!(taker.join().unwrap(), 7);
    assert!(waited, "a snapshot was taken while a job installed");
}
