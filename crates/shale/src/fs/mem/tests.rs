use super::*;

fn write(fs: &MemFileSystem, path: &str, data: &[u8], sync: bool) -> Box<dyn WritableFile> {
    let mut f = fs.create(Path::new(path)).unwrap();
    f.append(data).unwrap();
    if sync {
        f.sync().unwrap();
    } else {
        f.flush().unwrap();
    }
    f
}

fn read(fs: &MemFileSystem, path: &str) -> Option<Vec<u8>> {
    fs.read_all(Path::new(path)).ok()
}

fn setup() -> MemFileSystem {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/db")).unwrap();
    fs
}

#[test]
fn synced_data_and_synced_entries_survive_power_loss() {
    let fs = setup();
    let mut f = write(&fs, "/db/a", b"durable", true);
    fs.sync_dir(Path::new("/db")).unwrap();
    f.append(b" lost").unwrap();
    f.flush().unwrap();
    let _g = write(&fs, "/db/b", b"new file", true); // entry never synced
    assert_eq!(read(&fs, "/db/a").unwrap(), b"durable lost");
    assert_eq!(fs.unsynced_bytes(), 5);

    let img = fs.crash(0.0, 1);
    assert_eq!(read(&img, "/db/a").unwrap(), b"durable");
    assert!(!img.exists(Path::new("/db/b")), "unsynced creation dropped");
    let img = fs.crash(1.0, 1);
    assert_eq!(read(&img, "/db/a").unwrap(), b"durable lost");
    assert_eq!(read(&img, "/db/b").unwrap(), b"new file");
    // Images are independent and fully durable.
    let img2 = img.crash(0.0, 0);
    assert_eq!(read(&img2, "/db/b").unwrap(), b"new file");
    drop(f);
    assert_eq!(read(&img, "/db/a").unwrap(), b"durable lost");
}

#[test]
fn process_crash_keeps_flushed_bytes_only() {
    let fs = setup();
    let mut f = fs.create(Path::new("/db/w")).unwrap();
    f.append(b"flushed").unwrap();
    f.flush().unwrap();
    f.append(b" buffered").unwrap();
    assert_eq!(f.len(), 16);
    let img = fs.crash_process();
    assert_eq!(read(&img, "/db/w").unwrap(), b"flushed");
    drop(f); // drop hands the buffer to the OS
    assert_eq!(read(&fs, "/db/w").unwrap(), b"flushed buffered");
}

#[test]
fn unsynced_rename_and_remove_may_revert() {
    let fs = setup();
    let dir = Path::new("/db");
    drop(write(&fs, "/db/CURRENT", b"old", true));
    drop(write(&fs, "/db/tmp", b"new", true));
    fs.sync_dir(dir).unwrap();
    fs.rename(Path::new("/db/tmp"), Path::new("/db/CURRENT"))
        .unwrap();
    let img = fs.crash(0.0, 3);
    assert_eq!(read(&img, "/db/CURRENT").unwrap(), b"old");
    assert_eq!(read(&img, "/db/tmp").unwrap(), b"new");
    fs.sync_dir(dir).unwrap();
    let img = fs.crash(0.0, 3);
    assert_eq!(read(&img, "/db/CURRENT").unwrap(), b"new");
    assert!(!img.exists(Path::new("/db/tmp")));
    fs.remove(Path::new("/db/CURRENT")).unwrap();
    assert!(fs.crash(0.0, 0).exists(Path::new("/db/CURRENT")));
    assert!(!fs.crash(1.0, 0).exists(Path::new("/db/CURRENT")));
    assert_eq!(fs.list(dir).unwrap(), Vec::<String>::new());
}

#[test]
fn unsynced_blocks_are_kept_independently() {
    let fs = setup();
    let data: Vec<u8> = (0..10 * CRASH_BLOCK_SIZE)
        .map(|i| (i % 251 + 1) as u8)
        .collect();
    let _f = write(&fs, "/db/log", &data, false);
    fs.sync_dir(Path::new("/db")).unwrap();
    let mut saw_hole = false;
    for seed in 0..50 {
        let got = read(&fs.crash(0.5, seed), "/db/log").unwrap();
        assert_eq!(got.len() % CRASH_BLOCK_SIZE, 0);
        for (b, chunk) in got.chunks(CRASH_BLOCK_SIZE).enumerate() {
            let want = &data[b * CRASH_BLOCK_SIZE..(b + 1) * CRASH_BLOCK_SIZE];
            if chunk.iter().all(|&x| x == 0) {
                saw_hole = true;
            } else {
                assert_eq!(chunk, want, "seed {seed} block {b}");
            }
        }
    }
    assert!(saw_hole, "a dropped block before a kept one reads as zeros");
    // Same seed, same image.
    assert_eq!(
        read(&fs.crash(0.5, 7), "/db/log"),
        read(&fs.crash(0.5, 7), "/db/log")
    );
}

#[test]
fn locks_are_exclusive_and_not_copied() {
    let fs = setup();
    let p = Path::new("/db/LOCK");
    let l = fs.lock(p).unwrap();
    assert!(matches!(fs.clone().lock(p), Err(Error::Locked(_))));
    let img = fs.crash(1.0, 0);
    drop(img.lock(p).unwrap());
    drop(l);
    drop(fs.lock(p).unwrap());
}

#[test]
fn op_counter_freeze_and_capture() {
    let fs = setup();
    fs.capture_at(0..=10);
    let mut f = fs.create(Path::new("/db/x")).unwrap(); // 1
    f.append(b"abc").unwrap();
    f.flush().unwrap(); // 2
    f.flush().unwrap(); // empty: not counted
    f.sync().unwrap(); // 3
    fs.sync_dir(Path::new("/db")).unwrap(); // 4
    assert_eq!(fs.op_count(), 4);
    let caps = fs.take_captures();
    assert_eq!(
        caps.keys().copied().collect::<Vec<_>>(),
        vec![0, 1, 2, 3, 4]
    );
    assert!(!caps[&3].exists(Path::new("/db/x")));
    assert_eq!(read(&caps[&4], "/db/x").unwrap(), b"abc");

    fs.freeze_after(Some(5));
    fs.rename(Path::new("/db/x"), Path::new("/db/y")).unwrap(); // 5
    assert!(fs.remove(Path::new("/db/y")).is_err());
    f.append(b"d").unwrap();
    assert!(f.sync().is_err());
    assert_eq!(fs.op_count(), 5);
    fs.freeze_after(None);
    fs.remove(Path::new("/db/y")).unwrap();
    assert!(matches!(
        fs.open_random(Path::new("/db/y")).map(|_| ()),
        Err(Error::Io {
            kind: io::ErrorKind::NotFound,
            ..
        })
    ));
}

#[test]
fn direct_opens_are_recorded_and_behave_as_buffered() {
    let fs = setup();
    let p = Path::new("/db/t");
    let mut w = fs.create_with(p, FileOptions::DIRECT).unwrap();
    w.append(b"abc").unwrap();
    w.sync().unwrap();
    let r = fs.open_random_with(p, FileOptions::DIRECT).unwrap();
    let mut b = [0u8; 2];
    r.read_exact_at(1, &mut b).unwrap();
    assert_eq!(&b, b"bc");
    drop(fs.open_random_with(p, FileOptions::default()).unwrap());
    let want = |write| DirectOpen {
        path: p.to_path_buf(),
        write,
    };
    assert_eq!(fs.direct_opens(), vec![want(true), want(false)]);
    assert!(fs.crash(1.0, 0).direct_opens().is_empty());
}

#[test]
fn random_reads_and_missing_files() {
    let fs = setup();
    let _f = write(&fs, "/db/t", b"0123456789", true);
    let r = fs.open_random(Path::new("/db/t")).unwrap();
    let mut b = [0u8; 4];
    r.read_exact_at(3, &mut b).unwrap();
    assert_eq!(&b, b"3456");
    assert!(r.read_exact_at(8, &mut b).is_err());
    assert_eq!(fs.file_size(Path::new("/db/t")).unwrap(), 10);
    assert!(fs.create(Path::new("/nodir/f")).is_err());
    assert!(fs
        .rename(Path::new("/db/none"), Path::new("/db/t"))
        .is_err());
    assert!(fs.list(Path::new("/nodir")).is_err());
}

#[test]
fn link_shares_bytes_and_is_durable_after_the_directory_sync() {
    let fs = setup();
    let mut f = write(&fs, "/db/a", b"one", true);
    fs.sync_dir(Path::new("/db")).unwrap();
    fs.create_dir_all(Path::new("/cp")).unwrap();
    let before = fs.op_count();
    assert_eq!(
        fs.link(Path::new("/db/a"), Path::new("/cp/a")).unwrap(),
        crate::fs::LinkKind::HardLink
    );
    assert_eq!(fs.op_count(), before + 1, "link is a numbered call");
    f.append(b" two").unwrap();
    f.sync().unwrap();
    assert_eq!(read(&fs, "/cp/a").unwrap(), b"one two", "one inode");
    // The new name is not durable before /cp is synced.
    assert!(!fs.crash(0.0, 3).exists(Path::new("/cp/a")));
    assert!(fs.crash(1.0, 3).exists(Path::new("/cp/a")));
    fs.sync_dir(Path::new("/cp")).unwrap();
    let img = fs.crash(0.0, 3);
    assert_eq!(read(&img, "/cp/a").unwrap(), b"one two");
    // The image keeps one inode under both names.
    let mut g = img.create(Path::new("/db/b")).unwrap();
    g.append(b"x").unwrap();
    drop(g);
    // Removing one name leaves the other.
    fs.remove(Path::new("/db/a")).unwrap();
    assert_eq!(read(&fs, "/cp/a").unwrap(), b"one two");
    // Refusals: an existing name, a missing source, a missing directory.
    write(&fs, "/db/c", b"c", true);
    let exists = fs.link(Path::new("/db/c"), Path::new("/cp/a")).unwrap_err();
    assert!(
        matches!(
            exists,
            Error::Io {
                kind: io::ErrorKind::AlreadyExists,
                ..
            }
        ),
        "{exists}"
    );
    assert!(fs.link(Path::new("/db/none"), Path::new("/cp/n")).is_err());
    assert!(fs.link(Path::new("/db/c"), Path::new("/nodir/c")).is_err());
    // Frozen: link fails like every mutating call.
    fs.freeze_after(Some(fs.op_count()));
    assert!(fs.link(Path::new("/db/c"), Path::new("/cp/c")).is_err());
}

#[test]
fn directory_rename_moves_its_files_and_a_power_loss_may_undo_it() {
    let fs = setup();
    fs.create_dir_all(Path::new("/cp.tmp")).unwrap();
    write(&fs, "/cp.tmp/CURRENT", b"M", true);
    fs.sync_dir(Path::new("/cp.tmp")).unwrap();
    write(&fs, "/cp.tmp/late", b"L", true); // entry not yet durable
    fs.rename(Path::new("/cp.tmp"), Path::new("/cp")).unwrap();
    assert!(!fs.exists(Path::new("/cp.tmp")));
    assert_eq!(read(&fs, "/cp/CURRENT").unwrap(), b"M");
    assert!(fs.list(Path::new("/")).unwrap().contains(&"cp".to_string()));
    // Not durable yet: a power loss puts it back under the old name.
    let img = fs.crash(0.0, 1);
    assert!(!img.exists(Path::new("/cp")));
    assert_eq!(read(&img, "/cp.tmp/CURRENT").unwrap(), b"M");
    assert!(!img.exists(Path::new("/cp.tmp/late")));
    fs.sync_dir(Path::new("/")).unwrap();
    let img = fs.crash(0.0, 1);
    assert!(!img.exists(Path::new("/cp.tmp")));
    assert_eq!(read(&img, "/cp/CURRENT").unwrap(), b"M");
    assert!(
        !img.exists(Path::new("/cp/late")),
        "its entry was never synced"
    );
    // The queued creation followed the directory.
    fs.sync_dir(Path::new("/cp")).unwrap();
    assert_eq!(read(&fs.crash(0.0, 1), "/cp/late").unwrap(), b"L");
    // A non-empty target is refused; an empty one is replaced.
    fs.create_dir_all(Path::new("/x")).unwrap();
    write(&fs, "/x/f", b"f", true);
    assert!(fs.rename(Path::new("/x"), Path::new("/cp")).is_err());
    fs.create_dir_all(Path::new("/empty")).unwrap();
    fs.rename(Path::new("/x"), Path::new("/empty")).unwrap();
    assert_eq!(read(&fs, "/empty/f").unwrap(), b"f");
}
