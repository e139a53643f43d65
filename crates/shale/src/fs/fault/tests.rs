use super::*;
use crate::fs::MemFileSystem;

fn setup() -> (MemFileSystem, FaultInjectionFs) {
    let mem = MemFileSystem::new();
    mem.create_dir_all(Path::new("/d")).unwrap();
    let fs = FaultInjectionFs::new(Arc::new(mem.clone()));
    (mem, fs)
}

#[test]
fn fails_the_nth_matching_call_and_records_it() {
    let (_mem, fs) = setup();
    fs.add_rule(
        FaultRule::new(FaultKind::Eio, Trigger::OnIndex(1))
            .ops(&[FaultOp::Sync])
            .path(".log"),
    );
    let mut a = fs.create(Path::new("/d/1.log")).unwrap();
    let mut b = fs.create(Path::new("/d/2.sst")).unwrap();
    a.sync().unwrap();
    b.sync().unwrap(); // not matched
    let e = a.sync().unwrap_err();
    a.sync().unwrap(); // OnIndex fires once
    assert!(!e.is_no_space());
    assert!(matches!(
        &e,
        Error::Io {
            kind: io::ErrorKind::Other,
            ..
        }
    ));
    let ledger = fs.ledger();
    assert_eq!(ledger.len(), 1);
    assert_eq!(ledger[0].op, FaultOp::Sync);
    assert_eq!(ledger[0].path, Path::new("/d/1.log"));
    assert!(e.to_string().contains(&ledger[0].marker()), "{e}");
    assert!(e.to_string().contains("Input/output error"), "{e}");
    assert_eq!(fs.rule_matches(), vec![3]);
}

#[test]
fn no_space_is_sticky_until_cleared_and_torn_writes_write_a_prefix() {
    let (mem, fs) = setup();
    fs.add_rule(
        FaultRule::new(FaultKind::NoSpace, Trigger::FromIndex(1))
            .ops(&[FaultOp::Append])
            .except_path("LOG")
            .torn_writes(),
    );
    let mut f = fs.create(Path::new("/d/f")).unwrap();
    f.append(b"ok").unwrap();
    assert!(f.append(b"abcd").unwrap_err().is_no_space());
    assert!(f.append(b"xy").unwrap_err().is_no_space());
    let mut log = fs.create(Path::new("/d/LOG")).unwrap();
    log.append(b"fine").unwrap();
    fs.clear_rules();
    f.append(b"!").unwrap();
    f.flush().unwrap();
    assert_eq!(mem.read_all(Path::new("/d/f")).unwrap(), b"okabx!");
    let l = fs.ledger();
    assert_eq!(l.len(), 2);
    assert!(l.iter().all(|x| x.torn && x.kind == FaultKind::NoSpace));
}

#[test]
fn direct_io_refusal_fires_only_on_direct_opens_and_forwards_the_flag() {
    let (mem, fs) = setup();
    fs.add_rule(FaultRule::new(FaultKind::DirectIoRefused, Trigger::FromIndex(0)).direct_only());
    let p = Path::new("/d/1.sst");
    let mut w = fs.create_with(p, FileOptions::default()).unwrap();
    w.append(b"x").unwrap();
    w.sync().unwrap();
    drop(fs.open_random_with(p, FileOptions::default()).unwrap());
    let e = fs
        .open_random_with(p, FileOptions::DIRECT)
        .map(|_| ())
        .unwrap_err();
    assert!(crate::fs::is_direct_io_refusal(&e), "{e}");
    assert!(e.to_string().contains("/d/1.sst"), "{e}");
    assert!(fs.create_with(p, FileOptions::DIRECT).is_err());
    assert_eq!(fs.ledger().len(), 2);
    assert!(
        mem.direct_opens().is_empty(),
        "refused opens never reach the inner fs"
    );
    fs.clear_rules();
    drop(fs.open_random_with(p, FileOptions::DIRECT).unwrap());
    assert_eq!(mem.direct_opens().len(), 1, "the flag is forwarded");
}

#[test]
fn random_faults_are_reproducible() {
    let run = |seed| {
        let (_mem, fs) = setup();
        fs.add_rule(
            FaultRule::new(
                FaultKind::Eio,
                Trigger::Randomly {
                    probability: 0.3,
                    seed,
                },
            )
            .ops(FaultOp::READS),
        );
        let mut f = fs.create(Path::new("/d/f")).unwrap();
        f.append(b"hello").unwrap();
        f.sync().unwrap();
        (0..100)
            .map(|_| fs.read_all(Path::new("/d/f")).is_ok())
            .collect::<Vec<_>>()
    };
    let a = run(5);
    assert_eq!(a, run(5));
    let fails = a.iter().filter(|ok| !**ok).count();
    assert!((30..=95).contains(&fails), "{fails}");
}

#[test]
fn link_can_fail_and_copies_go_through_the_rules() {
    let (mem, fs) = setup();
    let mut a = fs.create(Path::new("/d/1.sst")).unwrap();
    a.append(b"table").unwrap();
    a.sync().unwrap();
    drop(a);
    fs.add_rule(FaultRule::new(FaultKind::Eio, Trigger::OnIndex(0)).ops(&[FaultOp::Link]));
    let e = fs
        .link(Path::new("/d/1.sst"), Path::new("/d/2.sst"))
        .unwrap_err();
    assert!(e.to_string().contains("link"), "{e}");
    assert!(
        !mem.exists(Path::new("/d/2.sst")),
        "the inner link was not made"
    );
    assert_eq!(fs.ledger()[0].op, FaultOp::Link);
    assert_eq!(fs.ledger()[0].path, Path::new("/d/2.sst"));
    assert_eq!(
        fs.link(Path::new("/d/1.sst"), Path::new("/d/2.sst"))
            .unwrap(),
        crate::fs::LinkKind::HardLink
    );
    assert_eq!(mem.read_all(Path::new("/d/2.sst")).unwrap(), b"table");
    // `copy_file` creates, appends and syncs through the wrapper.
    fs.add_rule(FaultRule::new(FaultKind::NoSpace, Trigger::OnIndex(0)).ops(&[FaultOp::Sync]));
    let e = fs
        .copy_file(Path::new("/d/1.sst"), Path::new("/d/3.sst"), None)
        .unwrap_err();
    assert!(e.is_no_space(), "{e}");
    assert_eq!(
        fs.copy_file(Path::new("/d/1.sst"), Path::new("/d/3.sst"), Some(3))
            .unwrap(),
        3
    );
    assert_eq!(mem.read_all(Path::new("/d/3.sst")).unwrap(), b"tab");
}
