use super::*;

#[test]
fn write_read_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let p = dir.path().join("f");
    let mut w = fs.create(&p).unwrap();
    w.append(b"hello ").unwrap();
    w.append(&vec![b'x'; WRITE_BUFFER + 10]).unwrap();
    w.sync().unwrap();
    assert_eq!(w.len(), 6 + WRITE_BUFFER as u64 + 10);
    drop(w);
    let r = fs.open_random(&p).unwrap();
    let mut b = [0u8; 6];
    r.read_exact_at(0, &mut b).unwrap();
    assert_eq!(&b, b"hello ");
    let mut big = vec![0u8; 100];
    assert!(r.read_exact_at(r.len() - 10, &mut big).is_err());
    assert_eq!(fs.list(dir.path()).unwrap(), vec!["f".to_string()]);

    let lp = dir.path().join("LOCK");
    let l1 = fs.lock(&lp).unwrap();
    assert!(matches!(fs.lock(&lp), Err(Error::Locked(_))));
    drop(l1);
    fs.lock(&lp).unwrap();
}

#[cfg(target_os = "linux")]
mod cache_tests {
    use super::super::*;

    /// Pages of `path` resident in the page cache (`mincore`).
    fn resident_pages(path: &Path) -> usize {
        let f = File::open(path).unwrap();
        let len = f.metadata().unwrap().len() as usize;
        // SAFETY: a read-only shared mapping of `len` bytes of a file we
        // opened, checked for failure, only passed to `mincore` (never
        // dereferenced) and unmapped before returning.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            let mut vec = vec![0u8; len.div_ceil(4096)];
            assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
            libc::munmap(p, len);
            vec.iter().filter(|&&b| b & 1 != 0).count()
        }
    }

    /// `invalidate_cache` over the whole file drops its clean cached pages;
    /// a partial range drops at most that range (the kernel drops whole
    /// folios only: this machine's ext4 caches a small file in one large
    /// folio, so half of it drops nothing). The file still reads back.
    #[test]
    fn invalidate_cache_drops_clean_pages() {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFileSystem::default();
        let p = dir.path().join("t");
        let mut w = fs.create(&p).unwrap();
        w.append(&vec![5u8; 256 * 4096]).unwrap();
        w.sync().unwrap();
        drop(w);
        let r = fs.open_random(&p).unwrap();
        let mut buf = vec![0u8; 256 * 4096];
        r.read_exact_at(0, &mut buf).unwrap();
        let before = resident_pages(&p);
        r.invalidate_cache(0, 128 * 4096);
        let half = resident_pages(&p);
        r.invalidate_cache(0, 0);
        let after = resident_pages(&p);
        // A page cache under pressure may already have dropped some.
        assert!(before >= half && half >= after, "{before} {half} {after}");
        assert!(before > 0, "read pages are cached");
        assert_eq!(after, 0, "whole file dropped");
        r.read_exact_at(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&b| b == 5));
    }
}

mod device_tests {
    use super::super::*;

    /// Where sysfs knows the device (this repository's CI and dev machines
    /// have one under their temp directories, or none for tmpfs/overlay),
    /// the answer is a whole number of sectors and at least a page.
    #[test]
    fn the_device_request_size_is_read_from_sysfs_when_there_is_one() {
        let dir = tempfile::tempdir().unwrap();
        if let Some(n) = device_max_request(dir.path()) {
            assert!(n >= 4096 && n % 512 == 0, "{n}");
        }
        assert_eq!(device_max_request(Path::new("/no/such/dir")), None);
    }
}

#[test]
fn link_shares_the_inode_and_refuses_an_existing_name() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let mut w = fs.create(&a).unwrap();
    w.append(b"linked bytes").unwrap();
    w.sync().unwrap();
    drop(w);
    assert_eq!(fs.link(&a, &b).unwrap(), LinkKind::HardLink);
    let (ma, mb) = (fs::metadata(&a).unwrap(), fs::metadata(&b).unwrap());
    assert_eq!(ma.ino(), mb.ino());
    assert_eq!(ma.nlink(), 2);
    fs.remove(&a).unwrap();
    assert_eq!(fs.read_all(&b).unwrap(), b"linked bytes");
    let c = dir.path().join("c");
    fs.create(&c).unwrap();
    let e = fs.link(&b, &c).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Io {
                kind: std::io::ErrorKind::AlreadyExists,
                ..
            }
        ),
        "{e}"
    );
    assert!(fs
        .link(&dir.path().join("none"), &dir.path().join("d"))
        .is_err());
}

#[test]
fn copy_file_copies_a_prefix_and_refuses_a_short_file() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let a = dir.path().join("a");
    let data: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
    let mut w = fs.create(&a).unwrap();
    w.append(&data).unwrap();
    w.sync().unwrap();
    drop(w);
    let b = dir.path().join("b");
    assert_eq!(fs.copy_file(&a, &b, None).unwrap(), data.len() as u64);
    assert_eq!(fs.read_all(&b).unwrap(), data);
    assert_eq!(fs.copy_file(&a, &b, Some(1_500_001)).unwrap(), 1_500_001);
    assert_eq!(fs.read_all(&b).unwrap(), &data[..1_500_001]);
    let e = fs.copy_file(&a, &b, Some(4_000_000)).unwrap_err();
    assert!(
        matches!(
            e,
            Error::Io {
                kind: std::io::ErrorKind::UnexpectedEof,
                ..
            }
        ),
        "{e}"
    );
}

/// Across file systems (a tmpfs at /dev/shm beside the temp directory,
/// when the machine has one on another device) `link` copies.
#[test]
fn link_across_file_systems_copies() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let Ok(other) = tempfile::tempdir_in("/dev/shm") else {
        return;
    };
    let dev = |p: &Path| fs::metadata(p).unwrap().dev();
    if dev(dir.path()) == dev(other.path()) {
        return;
    }
    let fs = PosixFileSystem::default();
    let a = dir.path().join("a");
    let mut w = fs.create(&a).unwrap();
    w.append(b"copied across").unwrap();
    w.sync().unwrap();
    drop(w);
    let b = other.path().join("b");
    assert_eq!(fs.link(&a, &b).unwrap(), LinkKind::Copied);
    assert_eq!(fs.read_all(&b).unwrap(), b"copied across");
    assert_ne!(
        fs::metadata(&a).unwrap().ino(),
        fs::metadata(&b).unwrap().ino()
    );
    assert!(fs.link(&a, &b).is_err(), "an existing name is refused");
}

#[test]
fn rename_moves_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let t = dir.path().join("t.tmp");
    fs.create_dir_all(&t).unwrap();
    fs.create(&t.join("f")).unwrap();
    fs.rename(&t, &dir.path().join("t")).unwrap();
    assert!(fs.exists(&dir.path().join("t").join("f")));
    assert!(!fs.exists(&t));
}
