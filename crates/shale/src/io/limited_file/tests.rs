use super::*;
use crate::fs::{FileSystem, MemFileSystem};
use std::path::Path;
use std::sync::atomic::Ordering;

#[test]
fn appends_are_charged_and_pass_through() {
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let limiter = Arc::new(RateLimiter::new(1 << 30).unwrap());
    let limit = RateLimit {
        limiter: Arc::clone(&limiter),
        priority: IoPriority::High,
        cancel: Arc::new(AtomicBool::new(false)),
    };
    let mut f = limit.wrap(fs.create(Path::new("/d/1.sst")).unwrap());
    f.append(b"hello").unwrap();
    f.append(&[7u8; 1000]).unwrap();
    f.sync().unwrap();
    assert_eq!(f.len(), 1005);
    assert_eq!(
        limiter.get_total_bytes_through(Some(IoPriority::High)),
        1005
    );
    assert_eq!(limiter.get_total_requests(None), 2);
    // Cancelled: appends go through without asking the limiter.
    limit.cancel.store(true, Ordering::Release);
    f.append(b"more").unwrap();
    assert_eq!(f.len(), 1009);
    assert_eq!(limiter.get_total_requests(None), 2);
    drop(f);
    assert_eq!(fs.read_all(Path::new("/d/1.sst")).unwrap().len(), 1009);
}
