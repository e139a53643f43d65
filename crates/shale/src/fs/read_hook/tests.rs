use super::*;
use crate::fs::{LinkKind, MemFileSystem};
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn link_reaches_the_inner_file_system_and_links_read_through_the_hook() {
    let mem = MemFileSystem::new();
    mem.create_dir_all(Path::new("/d")).unwrap();
    let reads = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&reads);
    let fs = ReadHookFs::new(Arc::new(mem.clone()), move |_, _, _| {
        seen.fetch_add(1, Ordering::Relaxed);
    });
    let mut w = fs.create(Path::new("/d/a")).unwrap();
    w.append(b"abc").unwrap();
    w.sync().unwrap();
    drop(w);
    assert_eq!(
        fs.link(Path::new("/d/a"), Path::new("/d/b")).unwrap(),
        LinkKind::HardLink
    );
    assert_eq!(mem.read_all(Path::new("/d/b")).unwrap(), b"abc");
    assert!(fs.link(Path::new("/d/a"), Path::new("/d/b")).is_err());
    let r = fs.open_random(Path::new("/d/b")).unwrap();
    let mut buf = [0u8; 3];
    r.read_exact_at(0, &mut buf).unwrap();
    assert_eq!((&buf, reads.load(Ordering::Relaxed)), (b"abc", 1));
}
