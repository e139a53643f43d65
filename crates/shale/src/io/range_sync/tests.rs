use std::path::Path;

use super::*;
use crate::fs::{FileSystem, MemFileSystem};

/// The requests through the seam: contiguous from 0, 4 KiB aligned, each
/// at least `bytes_per_sync` long, never within the last 1 MiB, and
/// caught up to within `bytes_per_sync + 1 MiB + 4 KiB` of the end.
#[test]
fn requests_follow_rocksdb_cadence() {
    for (bps, chunk) in [
        (1u64 << 20, 1000usize),
        (256 << 10, 70_000),
        (64 << 10, 4096),
    ] {
        let fs = MemFileSystem::new();
        fs.create_dir_all(Path::new("/d")).unwrap();
        let p = Path::new("/d/f");
        let mut w = RangeSyncer::wrap(fs.create(p).unwrap(), bps);
        let total = 9u64 << 20;
        let data = vec![7u8; chunk];
        while w.len() < total {
            w.append(&data).unwrap();
            let calls = fs.range_syncs();
            let end = calls.last().map_or(0, |c| c.1 + c.2);
            assert!(
                end + NOT_SYNCED <= w.len().max(NOT_SYNCED),
                "{end} {}",
                w.len()
            );
            assert!(
                w.len() < end + bps + NOT_SYNCED + ALIGN + chunk as u64,
                "fell behind: {end} of {}",
                w.len()
            );
        }
        let calls = fs.range_syncs();
        let mut next = 0;
        for (path, off, len) in &calls {
            assert_eq!(path, p);
            assert_eq!(*off, next, "contiguous");
            assert_eq!((off + len) % ALIGN, 0, "aligned");
            assert!(*len >= bps, "{len} < {bps}");
            next = off + len;
        }
        let n = calls.len() as u64;
        assert!(
            n >= (total - NOT_SYNCED) / (bps + chunk as u64 + ALIGN),
            "{n} calls for {bps}"
        );
    }
}

#[test]
fn zero_means_off_and_small_files_never_ask() {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let mut w = RangeSyncer::wrap(fs.create(Path::new("/d/a")).unwrap(), 0);
    w.append(&vec![1u8; 3 << 20]).unwrap();
    let mut w = RangeSyncer::wrap(fs.create(Path::new("/d/b")).unwrap(), 1);
    w.append(&vec![1u8; 1 << 20]).unwrap();
    w.sync().unwrap();
    assert!(fs.range_syncs().is_empty());
    w.append(&[1u8; 4096]).unwrap();
    assert_eq!(
        fs.range_syncs(),
        vec![(Path::new("/d/b").to_path_buf(), 0, 4096)]
    );
}

/// On the real file system the call succeeds (Linux: the kernel accepts
/// the range) and the bytes read back.
#[test]
fn posix_range_sync_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let fs = crate::fs::PosixFileSystem::default();
    let p = dir.path().join("f");
    let mut w = RangeSyncer::wrap(fs.create(&p).unwrap(), 64 << 10);
    for i in 0..40u8 {
        w.append(&vec![i; 64 << 10]).unwrap();
    }
    w.sync().unwrap();
    drop(w);
    let m = dir.path().join("m");
    let mut w = RangeSyncer::wrap(fs.create_mapped(&m).unwrap(), 64 << 10);
    for i in 0..40u8 {
        w.append(&vec![i; 64 << 10]).unwrap();
    }
    w.finish_appends().unwrap();
    w.sync().unwrap();
    drop(w);
    for path in [&p, &m] {
        let got = std::fs::read(path).unwrap();
        assert_eq!(got.len(), 40 << 16);
        assert!(got
            .chunks(64 << 10)
            .enumerate()
            .all(|(i, c)| c.iter().all(|&b| b == i as u8)));
    }
}
