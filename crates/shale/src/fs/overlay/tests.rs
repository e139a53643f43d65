use super::*;

fn base_with(files: &[(&str, &[u8])]) -> Arc<MemFileSystem> {
    let base = Arc::new(MemFileSystem::new());
    base.create_dir_all(Path::new("/db")).unwrap();
    for (name, bytes) in files {
        let mut f = base.create(&Path::new("/db").join(name)).unwrap();
        f.append(bytes).unwrap();
        f.sync().unwrap();
    }
    base.sync_dir(Path::new("/db")).unwrap();
    base
}

fn read(fs: &dyn FileSystem, p: &str) -> Vec<u8> {
    fs.read_all(Path::new(p)).unwrap()
}

#[test]
fn changes_stay_in_memory_and_the_base_is_untouched() {
    let base = base_with(&[("CURRENT", b"MANIFEST-1\n"), ("000007.sst", b"table")]);
    let o = OverlayFs::new(base.clone());
    // Reads pass through.
    assert_eq!(read(&*o, "/db/000007.sst"), b"table");
    // A create, a rename over a base file, a removal.
    let mut f = o.create(Path::new("/db/CURRENT.tmp")).unwrap();
    f.append(b"MANIFEST-9\n").unwrap();
    f.flush().unwrap();
    drop(f);
    o.rename(Path::new("/db/CURRENT.tmp"), Path::new("/db/CURRENT"))
        .unwrap();
    o.remove(Path::new("/db/000007.sst")).unwrap();
    assert_eq!(read(&*o, "/db/CURRENT"), b"MANIFEST-9\n");
    assert!(!o.exists(Path::new("/db/000007.sst")));
    assert!(o.open_random(Path::new("/db/000007.sst")).is_err());
    assert_eq!(
        o.list(Path::new("/db")).unwrap(),
        vec!["CURRENT".to_string()]
    );
    // The base saw none of it.
    assert_eq!(read(&*base, "/db/CURRENT"), b"MANIFEST-1\n");
    assert_eq!(read(&*base, "/db/000007.sst"), b"table");
    assert!(!base.exists(Path::new("/db/CURRENT.tmp")));
}

#[test]
fn a_base_file_renamed_away_is_served_from_its_old_name() {
    let base = base_with(&[("a", b"bytes")]);
    let o = OverlayFs::new(base.clone());
    o.rename(Path::new("/db/a"), Path::new("/db/b")).unwrap();
    assert_eq!(read(&*o, "/db/b"), b"bytes");
    assert!(!o.exists(Path::new("/db/a")));
    assert_eq!(o.file_size(Path::new("/db/b")).unwrap(), 5);
    assert!(base.exists(Path::new("/db/a")) && !base.exists(Path::new("/db/b")));
}

#[test]
fn frozen_refuses_every_change_and_locks_are_private() {
    let base = base_with(&[("a", b"x")]);
    let o = OverlayFs::new(base.clone());
    let _held = base.lock(Path::new("/db/LOCK")).unwrap();
    // The base's LOCK is held by "another process": the overlay's is its own.
    let _mine = o.lock(Path::new("/db/LOCK")).unwrap();
    let other = OverlayFs::new(base.clone());
    let _theirs = other.lock(Path::new("/db/LOCK")).unwrap();
    o.freeze();
    assert!(matches!(
        o.create(Path::new("/db/new")),
        Err(Error::NotSupported(_))
    ));
    assert!(matches!(
        o.rename(Path::new("/db/a"), Path::new("/db/b")),
        Err(Error::NotSupported(_))
    ));
    assert_eq!(read(&*o, "/db/a"), b"x");
}

#[test]
fn log_files_go_to_the_log_dir_of_the_base() {
    let base = base_with(&[("LOG", b"primary's"), ("CURRENT", b"x")]);
    base.create_dir_all(Path::new("/sec")).unwrap();
    let o = OverlayFs::with_log_dir(base.clone(), Path::new("/db"), Path::new("/sec"));
    assert!(
        !o.exists(Path::new("/db/LOG")),
        "the primary's LOG is not ours"
    );
    let mut f = o.create(Path::new("/db/LOG")).unwrap();
    f.append(b"mine").unwrap();
    f.sync().unwrap();
    drop(f);
    o.rename(Path::new("/db/LOG"), Path::new("/db/LOG.old.1"))
        .unwrap();
    o.freeze();
    o.create(Path::new("/db/LOG")).unwrap();
    assert_eq!(read(&*base, "/sec/LOG.old.1"), b"mine");
    assert!(base.exists(Path::new("/sec/LOG")));
    assert_eq!(read(&*base, "/db/LOG"), b"primary's");
    let mut names = o.list(Path::new("/db")).unwrap();
    names.sort();
    assert_eq!(names, vec!["CURRENT", "LOG", "LOG.old.1"]);
}

#[test]
fn links_share_bytes_without_touching_the_base() {
    let base = base_with(&[("000009.sst", b"table")]);
    let o = OverlayFs::new(base.clone());
    assert_eq!(
        o.link(Path::new("/db/000009.sst"), Path::new("/db/000010.sst"))
            .unwrap(),
        LinkKind::HardLink
    );
    assert_eq!(read(&*o, "/db/000010.sst"), b"table");
    assert!(!base.exists(Path::new("/db/000010.sst")));
    assert!(o
        .link(Path::new("/db/000009.sst"), Path::new("/db/000010.sst"))
        .is_err());
    o.freeze();
    assert!(matches!(
        o.link(Path::new("/db/000009.sst"), Path::new("/db/x")),
        Err(Error::NotSupported(_))
    ));
}
