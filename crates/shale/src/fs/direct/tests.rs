use super::*;

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 4093) as u8).collect()
}

/// Where the temp directory takes O_DIRECT (ext4 here); elsewhere the
/// tests say why they check nothing.
fn direct_dir() -> Option<tempfile::TempDir> {
    let dir = tempfile::tempdir().unwrap();
    match probe(dir.path()) {
        Ok(()) => Some(dir),
        Err(e) => {
            eprintln!("skipped: no direct IO in {}: {e}", dir.path().display());
            None
        }
    }
}

#[test]
fn unaligned_reads_match_buffered_reads_at_many_offsets() {
    let Some(dir) = direct_dir() else { return };
    let p = dir.path().join("f");
    let data = pattern(3 * 65536 + 1234);
    std::fs::write(&p, &data).unwrap();
    let r = open_random(&p).unwrap();
    assert_eq!(r.len(), data.len() as u64);
    let a = r.direct_alignment().unwrap();
    assert!(a >= 512 && a.is_power_of_two());
    let before = ISSUED.with(|c| c.get().0);
    let mut reads = 0;
    let lens = [1, 7, 511, 512, 513, 4095, 4096, 4097, 10_000, 70_000];
    for off in (0..data.len())
        .step_by(997)
        .chain([0, 512, 4096, data.len() - 1])
    {
        for &len in &lens {
            let mut buf = vec![0u8; len];
            let r2 = r.read_exact_at(off as u64, &mut buf);
            if off + len <= data.len() {
                r2.unwrap();
                assert_eq!(buf, data[off..off + len], "offset {off} len {len}");
                reads += 1;
            } else {
                assert!(r2.is_err(), "read past the end at {off} len {len}");
            }
        }
    }
    // An aligned request goes straight into the caller's buffer.
    let mut buf = AlignedBuf::new(a);
    buf.resize_zeroed(2 * a);
    r.read_exact_at(a as u64, &mut buf).unwrap();
    assert_eq!(&buf[..], &data[a..3 * a]);
    let issued = ISSUED.with(|c| c.get().0) - before;
    assert!(issued > reads, "{issued} aligned preads for {reads} reads");
}

#[test]
fn misaligned_direct_io_is_refused_before_the_kernel() {
    let p = Path::new("/x");
    let mut v = AlignedBuf::new(4096);
    v.resize_zeroed(8192);
    assert!(check_aligned("read", p, 0, &v, 4096).is_ok());
    assert!(check_aligned("read", p, 1, &v, 4096).is_err());
    assert!(check_aligned("read", p, 0, &v[..100], 4096).is_err());
    assert!(check_aligned("read", p, 0, &v[512..4608], 4096).is_err());
}

#[test]
fn direct_writes_flush_padded_and_truncate_to_the_true_length() {
    let Some(dir) = direct_dir() else { return };
    let p = dir.path().join("w");
    let data = pattern(200_000);
    let mut w = create(&p).unwrap();
    let before = ISSUED.with(|c| c.get().1);
    // Appends of many sizes, with flushes in between.
    let mut at = 0;
    for (i, n) in [1, 100, 4096, 5000, 65536, 3, 70_000]
        .iter()
        .cycle()
        .enumerate()
    {
        let n = (*n).min(data.len() - at);
        w.append(&data[at..at + n]).unwrap();
        at += n;
        if i % 3 == 0 {
            w.flush().unwrap();
            assert_eq!(std::fs::metadata(&p).unwrap().len(), at as u64);
            assert_eq!(std::fs::read(&p).unwrap(), data[..at]);
        }
        if at == data.len() {
            break;
        }
    }
    assert_eq!(w.len(), data.len() as u64);
    w.sync().unwrap();
    assert!(ISSUED.with(|c| c.get().1) > before);
    w.append(b"tail").unwrap();
    drop(w); // drop writes the tail
    let mut want = data.clone();
    want.extend_from_slice(b"tail");
    assert_eq!(std::fs::read(&p).unwrap(), want);
}
