use super::*;
use crate::fs::MemFileSystem;

fn fs() -> (AccountingFs, Arc<IoCounters>) {
    fs_over(Arc::new(MemFileSystem::new()))
}

fn fs_over(mem: Arc<MemFileSystem>) -> (AccountingFs, Arc<IoCounters>) {
    let c = Arc::new(IoCounters::default());
    mem.create_dir_all(Path::new("/db")).unwrap();
    (AccountingFs::new(mem, Arc::clone(&c)), c)
}

#[test]
fn open_options_reach_the_wrapped_file_system() {
    let mem = Arc::new(MemFileSystem::new());
    let (fs, c) = fs_over(Arc::clone(&mem));
    let p = Path::new("/db/000011.sst");
    let mut w = fs.create_with(p, FileOptions::DIRECT).unwrap();
    w.append(&[1; 10]).unwrap();
    w.sync().unwrap();
    let r = fs.open_random_with(p, FileOptions::DIRECT).unwrap();
    assert_eq!(
        r.direct_alignment(),
        mem.open_random_with(p, FileOptions::DIRECT)
            .unwrap()
            .direct_alignment()
    );
    let mut b = [0u8; 10];
    r.read_exact_at(0, &mut b).unwrap();
    assert_eq!(mem.direct_opens().len(), 3);
    assert_eq!(c.totals(Purpose::User).0.bytes, 10);
}

#[test]
fn buckets_are_powers_of_two_from_512() {
    assert_eq!(bucket(0), 0);
    assert_eq!(bucket(512), 0);
    assert_eq!(bucket(513), 1);
    assert_eq!(bucket(1024), 1);
    assert_eq!(bucket(4096), 3);
    assert_eq!(bucket(4097), 4);
    assert_eq!(bucket(8 << 20), 14);
    assert_eq!(bucket((8 << 20) + 1), 15);
    assert_eq!(bucket(u64::MAX), 15);
    for i in 0..BUCKETS - 1 {
        let lim = bucket_limit(i).unwrap();
        assert_eq!(bucket(lim), i);
        assert_eq!(bucket(lim + 1), i + 1);
    }
    assert_eq!(bucket_limit(BUCKETS - 1), None);
}

#[test]
fn purposes_follow_the_file_and_the_thread() {
    let (fs, c) = fs();
    let mut wal = fs.create(Path::new("/db/000007.log")).unwrap();
    wal.append(&[1; 100]).unwrap();
    wal.sync().unwrap();
    drop(wal);
    {
        let _s = scope(Purpose::Flush);
        let mut t = fs.create(Path::new("/db/000008.sst")).unwrap();
        t.append(&vec![2; 200_000]).unwrap();
        t.flush().unwrap();
    }
    let mut m = fs.create(Path::new("/db/MANIFEST-000001")).unwrap();
    m.append(&[3; 10]).unwrap();
    drop(m);
    let t = fs.open_random(Path::new("/db/000008.sst")).unwrap();
    let mut buf = [0u8; 4096];
    t.read_exact_at(0, &mut buf).unwrap();
    {
        let _s = scope(Purpose::Compaction);
        let mut big = vec![0u8; 100_000];
        t.read_exact_at(0, &mut big).unwrap();
        // Nested scopes restore the outer one.
        {
            let _o = scope(Purpose::Other);
            t.read_exact_at(0, &mut buf[..100]).unwrap();
        }
        t.read_exact_at(0, &mut buf[..10]).unwrap();
    }
    assert_eq!(current(), Purpose::User);
    fs.read_all(Path::new("/db/000007.log")).unwrap();

    let (r, w) = c.totals(Purpose::Wal);
    assert_eq!((r.bytes, w.bytes, w.requests), (0, 100, 1));
    let (r, w) = c.totals(Purpose::Flush);
    // 200,000 bytes: three 64 KiB write-outs, then the rest at flush.
    assert_eq!((r.bytes, w.bytes, w.requests), (0, 200_000, 4));
    assert_eq!(w.sizes[bucket(WRITE_OUT)], 3);
    let (r, _) = c.totals(Purpose::User);
    assert_eq!((r.bytes, r.requests), (4096, 1));
    assert_eq!(r.sizes[3], 1);
    let (r, w) = c.totals(Purpose::Compaction);
    assert_eq!((r.bytes, r.requests, w.bytes), (100_010, 2, 0));
    let (r, w) = c.totals(Purpose::Other);
    assert_eq!((r.bytes, r.requests), (100 + 100, 2));
    assert_eq!((w.bytes, w.requests), (10, 1));
}

#[test]
fn table_writes_outside_a_job_are_other() {
    let (fs, c) = fs();
    let mut t = fs.create(Path::new("/db/000009.sst")).unwrap();
    t.append(&[1; 10]).unwrap();
    t.finish_appends().unwrap();
    t.sync().unwrap();
    let (_, w) = c.totals(Purpose::Other);
    assert_eq!((w.bytes, w.requests), (10, 1));
}

#[test]
fn threads_count_on_their_own_and_sums_are_exact() {
    let (fs, c) = fs();
    let mut t = fs.create(Path::new("/db/000010.sst")).unwrap();
    t.append(&[7; 8192]).unwrap();
    t.sync().unwrap();
    let file = fs.open_random(Path::new("/db/000010.sst")).unwrap();
    std::thread::scope(|s| {
        for i in 0..8 {
            let file = Arc::clone(&file);
            s.spawn(move || {
                let _g = (i % 2 == 1).then(|| scope(Purpose::Compaction));
                let mut b = [0u8; 1000];
                for _ in 0..1000 {
                    file.read_exact_at(0, &mut b).unwrap();
                }
            });
        }
    });
    assert_eq!(c.totals(Purpose::User).0.bytes, 4 * 1000 * 1000);
    assert_eq!(c.totals(Purpose::Compaction).0.requests, 4 * 1000);
}

#[test]
fn a_link_moves_no_bytes_and_a_copy_counts_its_reads_and_writes() {
    let (fs, c) = fs();
    let mut t = fs.create(Path::new("/db/000009.sst")).unwrap();
    t.append(&[1; 1000]).unwrap();
    t.sync().unwrap();
    drop(t);
    let before = (c.totals(Purpose::Other), c.totals(Purpose::User));
    fs.create_dir_all(Path::new("/cp")).unwrap();
    assert_eq!(
        fs.link(Path::new("/db/000009.sst"), Path::new("/cp/000009.sst"))
            .unwrap(),
        crate::fs::LinkKind::HardLink
    );
    let after = (c.totals(Purpose::Other), c.totals(Purpose::User));
    assert_eq!(
        (before.0 .0.bytes, before.0 .1.bytes, before.1 .0.bytes),
        (after.0 .0.bytes, after.0 .1.bytes, after.1 .0.bytes),
        "a hard link reads and writes nothing"
    );
    assert_eq!(
        fs.read_all(Path::new("/cp/000009.sst")).unwrap().len(),
        1000
    );
    fs.copy_file(
        Path::new("/db/000009.sst"),
        Path::new("/cp/000010.sst"),
        Some(600),
    )
    .unwrap();
    let (_, w) = c.totals(Purpose::Other);
    assert_eq!(
        w.bytes - after.0 .1.bytes,
        600,
        "the copy's writes are counted"
    );
}
