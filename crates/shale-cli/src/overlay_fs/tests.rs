use super::*;

#[test]
fn link_copies_a_real_file_into_memory_and_links_a_written_one() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("000005.sst");
    std::fs::write(&real, b"on disk").unwrap();
    let fs = OverlayFs::new();
    let copy = dir.path().join("000006.sst");
    assert_eq!(fs.link(&real, &copy).unwrap(), LinkKind::Copied);
    assert_eq!(fs.read_all(&copy).unwrap(), b"on disk");
    assert!(!copy.exists(), "the real directory is unchanged");
    let written = dir.path().join("MANIFEST-000007");
    let mut f = fs.create(&written).unwrap();
    f.append(b"in memory").unwrap();
    f.flush().unwrap();
    drop(f);
    let linked = dir.path().join("MANIFEST-000008");
    assert_eq!(fs.link(&written, &linked).unwrap(), LinkKind::HardLink);
    assert_eq!(fs.read_all(&linked).unwrap(), b"in memory");
    assert!(fs.link(&written, &copy).is_err(), "an existing name");
    assert!(fs
        .link(&dir.path().join("none"), &dir.path().join("x"))
        .is_err());
    fs.freeze();
    assert!(fs
        .link(&written, &dir.path().join("MANIFEST-000009"))
        .is_err());
    let names = fs.list(dir.path()).unwrap();
    assert!(names.contains(&"000006.sst".to_string()), "{names:?}");
}
