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
