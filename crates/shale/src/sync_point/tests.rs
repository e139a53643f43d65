use super::*;

#[test]
fn a_dependency_orders_two_threads() {
    let _g = exclusive();
    reset();
    load_dependency(&[("test::A", "test::B")]);
    enable();
    let order = Arc::new(Mutex::new(Vec::new()));
    let o2 = Arc::clone(&order);
    let t = std::thread::spawn(move || {
        process("test::B");
        o2.lock().unwrap().push("B");
    });
    std::thread::sleep(std::time::Duration::from_millis(20));
    order.lock().unwrap().push("A");
    process("test::A");
    t.join().unwrap();
    assert_eq!(*order.lock().unwrap(), vec!["A", "B"]);
    assert!(passed("test::B"));
    reset();
    assert!(!passed("test::B"));
}

#[test]
fn callbacks_run_and_disabled_points_do_nothing() {
    let _g = exclusive();
    reset();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = Arc::clone(&hits);
    set_callback("test::C", move || {
        h.fetch_add(1, Ordering::SeqCst);
    });
    process("test::C");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "not enabled yet");
    enable();
    process("test::C");
    process("test::C");
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    reset();
}
