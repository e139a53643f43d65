use super::*;
use std::fs::OpenOptions;

fn open(path: &Path) -> MmapWritable {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap();
    MmapWritable::new(path, f).unwrap()
}

#[test]
fn finish_appends_truncates_and_keeps_sync() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.log");
    let mut w = open(&path);
    w.append(&[7u8; 5000]).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), WINDOW as u64);
    w.finish_appends().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 5000);
    w.sync().unwrap();
    assert!(w.append(b"x").is_err(), "append after finish_appends");
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), vec![7u8; 5000]);
}

#[test]
fn appends_across_windows_and_truncates_on_drop() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.log");
    let mut want = Vec::new();
    {
        let mut w = open(&path);
        let mut i = 0u32;
        while want.len() < 2 * WINDOW + 12_345 {
            let chunk: Vec<u8> = (0..(i % 5000 + 1)).map(|j| (i ^ j) as u8).collect();
            w.append(&chunk).unwrap();
            want.extend_from_slice(&chunk);
            assert_eq!(w.len(), want.len() as u64);
            i += 1;
        }
        w.flush().unwrap();
        w.sync().unwrap();
        // While open the file holds the reserved window.
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(size, 3 * WINDOW as u64);
    }
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// Large appends (and parts) go by `pwritev`, small ones through the
/// mapping, interleaved across window ends: the file holds every byte
/// in order, and the mapping is made only for small appends.
#[test]
fn large_appends_are_written_without_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.log");
    let mut want = Vec::new();
    {
        let mut w = open(&path);
        let big: Vec<u8> = (0..16_384u32).map(|i| (i * 7) as u8).collect();
        w.append_parts(&[b"hdr1234", &big]).unwrap();
        want.extend_from_slice(b"hdr1234");
        want.extend_from_slice(&big);
        assert!(w.map.is_null(), "a large append maps nothing");
        assert_eq!(w.len(), want.len() as u64);
        let mut i = 0u32;
        while want.len() < 2 * WINDOW + 5_000 {
            let n = [7usize, 100, 4095, 4096, 9_000, 40_000][i as usize % 6];
            let chunk: Vec<u8> = (0..n).map(|j| (i as usize ^ j) as u8).collect();
            if i.is_multiple_of(3) {
                let (a, b) = chunk.split_at(n / 3);
                w.append_parts(&[a, b]).unwrap();
            } else {
                w.append(&chunk).unwrap();
            }
            want.extend_from_slice(&chunk);
            assert_eq!(w.len(), want.len() as u64);
            i += 1;
        }
        // While open the file holds whole reserved windows.
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(
            size,
            (want.len() as u64).div_ceil(WINDOW as u64) * WINDOW as u64
        );
        w.sync().unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), want);
}

/// A crash after a large append leaves its bytes, then zeros.
#[test]
fn a_crash_after_a_large_append_leaves_the_bytes_then_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.log");
    let mut w = open(&path);
    w.append(b"hello").unwrap();
    w.append(&[9u8; 10_000]).unwrap();
    w.append(b"tail").unwrap();
    w.unmap(); // the process dies: no truncation
    std::mem::forget(w);
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got.len(), WINDOW);
    assert_eq!(&got[..5], b"hello");
    assert!(got[5..10_005].iter().all(|&b| b == 9));
    assert_eq!(&got[10_005..10_009], b"tail");
    assert!(got[10_009..].iter().all(|&b| b == 0));
}

/// A recycled file written with large appends over its old bytes keeps
/// the old bytes after the new ones until `finish_appends`.
#[test]
fn large_appends_over_a_recycled_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.log");
    std::fs::write(&path, vec![0xAAu8; 3 * WINDOW / 2]).unwrap();
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut w = MmapWritable::reuse(&path, f).unwrap();
    w.append(&[1u8; 6_000]).unwrap();
    w.append(b"xy").unwrap();
    let got = std::fs::read(&path).unwrap();
    assert!(got[..6_000].iter().all(|&b| b == 1));
    assert_eq!(&got[6_000..6_002], b"xy");
    assert!(got[6_002..3 * WINDOW / 2].iter().all(|&b| b == 0xAA));
    w.finish_appends().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 6_002);
}

/// A crash leaves the reserved tail: zeros after the appended bytes.
#[test]
fn a_crash_leaves_the_bytes_then_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.log");
    let mut w = open(&path);
    w.append(b"hello").unwrap();
    w.append(&[7u8; 100]).unwrap();
    w.unmap(); // the process dies: no truncation
    std::mem::forget(w);
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got.len(), WINDOW);
    assert_eq!(&got[..5], b"hello");
    assert!(got[5..105].iter().all(|&b| b == 7));
    assert!(got[105..].iter().all(|&b| b == 0));
}
