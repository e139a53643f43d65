use super::*;
use crate::fs::PosixFileSystem;

#[test]
fn set_then_read() {
    let d = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    set_current(&fs, d.path(), 5).unwrap();
    assert_eq!(
        std::fs::read(d.path().join("CURRENT")).unwrap(),
        b"MANIFEST-000005\n"
    );
    assert_eq!(read_current(&fs, d.path()).unwrap(), 5);
    set_current(&fs, d.path(), 1_234_567).unwrap();
    assert_eq!(read_current(&fs, d.path()).unwrap(), 1_234_567);
    // No temp file is left behind.
    let names = fs.list(d.path()).unwrap();
    assert_eq!(names, vec!["CURRENT".to_string()]);
}

#[test]
fn malformed_current_is_corruption() {
    let d = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    for bad in [
        &b""[..],
        b"\n",
        b"MANIFEST-000001",
        b"MANIFEST-000001\n\n",
        b"MANIFEST-\n",
        b"000001.sst\n",
        b"garbage\n",
        b"MANIFEST-00\xff01\n",
    ] {
        std::fs::write(d.path().join("CURRENT"), bad).unwrap();
        match read_current(&fs, d.path()) {
            Err(Error::Corruption { file, offset, what }) => {
                assert!(file.ends_with("CURRENT"), "{file}");
                assert_eq!(offset, 0);
                assert!(what.contains("CURRENT"));
            }
            other => panic!("{bad:?}: {other:?}"),
        }
    }
    std::fs::remove_file(d.path().join("CURRENT")).unwrap();
    assert!(matches!(read_current(&fs, d.path()), Err(Error::Io { .. })));
}
