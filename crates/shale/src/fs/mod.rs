//! The file-system seam: every file operation of the engine goes through
//! [`FileSystem`], so tests can substitute an in-memory crash-simulating or a
//! fault-injecting implementation.
//!
//! Contract of the implementations:
//! - `WritableFile::append` may buffer in process; `flush` hands buffered bytes
//!   to the OS (after it returns they survive a process crash); `sync` makes
//!   them durable (survive power loss).
//! - A file created or renamed is durable only after `sync_dir` on its parent.
//! - `RandomAccessFile::read_exact_at` either fills the buffer or errors
//!   (a short file is an `UnexpectedEof` IO error).
//! - [`FileOptions`] reach the file system through `create_with` and
//!   `open_random_with`. A file system either honours `direct` (bypasses
//!   its page cache) or refuses the open with an `InvalidInput` IO error
//!   (what `open(2)` gives as EINVAL); it never opens a buffered file
//!   instead. A direct handle serves any `read_exact_at` (aligning
//!   internally) and says its alignment (`direct_alignment`), so callers
//!   that read large ranges can ask for aligned ones and save a copy.

/// The `FileSystem` calls on names and directories (`rename`, `link`, `remove`,
/// `list`, `create_dir_all`, `remove_dir`, `sync_dir`, `exists`,
/// `file_size`, `lock`),
/// passed unchanged to `self.$inner`: for the wrappers that act only on
/// file contents (`ReadHookFs`, the IO accounting).
macro_rules! forward_namespace_calls {
    ($inner:ident) => {
        fn rename(&self, from: &Path, to: &Path) -> Result<()> {
            self.$inner.rename(from, to)
        }
        fn link(&self, from: &Path, to: &Path) -> Result<crate::fs::LinkKind> {
            self.$inner.link(from, to)
        }
        fn remove(&self, path: &Path) -> Result<()> {
            self.$inner.remove(path)
        }
        fn list(&self, dir: &Path) -> Result<Vec<String>> {
            self.$inner.list(dir)
        }
        fn create_dir_all(&self, dir: &Path) -> Result<()> {
            self.$inner.create_dir_all(dir)
        }
        fn remove_dir(&self, dir: &Path) -> Result<()> {
            self.$inner.remove_dir(dir)
        }
        fn sync_dir(&self, dir: &Path) -> Result<()> {
            self.$inner.sync_dir(dir)
        }
        fn exists(&self, path: &Path) -> bool {
            self.$inner.exists(path)
        }
        fn file_size(&self, path: &Path) -> Result<u64> {
            self.$inner.file_size(path)
        }
        fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
            self.$inner.lock(path)
        }
    };
}
pub(crate) use forward_namespace_calls;

mod aligned;
mod direct;
#[cfg(feature = "testing")]
mod fault;
mod file_system;
mod mem;
#[cfg(target_os = "linux")]
mod mmap_writable;
mod overlay;
mod posix;
mod range_sync;
mod read_hook;

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;

pub(crate) use aligned::round_up;
pub use aligned::AlignedBuf;
#[cfg(feature = "testing")]
pub use fault::{FaultInjectionFs, FaultKind, FaultOp, FaultRule, InjectedFault, Trigger};
pub(crate) use file_system::copy_paced;
pub use file_system::{
    is_direct_io_refusal, AccessPattern, FileLock, FileOptions, FileSystem, LinkKind,
    RandomAccessFile, SequentialFile, WritableFile,
};
pub use mem::{DirectOpen, MemFileSystem, CRASH_BLOCK_SIZE};
pub use overlay::OverlayFs;
pub use posix::PosixFileSystem;
pub use read_hook::{AdviceHook, ReadHook, ReadHookFs};

/// True where `PosixFileSystem` can open files with direct IO
/// (`O_DIRECT`: Linux).
pub(crate) const DIRECT_IO_PLATFORM: bool = direct::SUPPORTED;

/// The error a DB reports when the file system refused direct IO for
/// `path`, naming the option that asked for it; other errors pass.
pub(crate) fn explain_direct_refusal(
    option: &str,
    path: &Path,
    e: crate::error::Error,
) -> crate::error::Error {
    if is_direct_io_refusal(&e) {
        crate::error::Error::InvalidArgument(format!(
            "{option}: the file system refused O_DIRECT for {} (EINVAL): {e}",
            path.display()
        ))
    } else {
        e
    }
}

/// How long [`lock_db`] keeps trying a held LOCK.
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// Takes the LOCK of the DB in `dir` (the engine's open and `repair`),
/// trying again for up to `LOCK_RETRY` while it is held. `flock` locks
/// belong to the open file description, which a child process shares from
/// its fork until its exec closes it: a DB closed while another thread of
/// this process spawns a child stays locked for that window, and a reopen
/// (or a `shale repair` run) right after the close would fail with
/// `Locked` though nobody holds the DB (`shale-cli`'s repair test did,
/// once, in a loop of the test binaries beside other load). A lock another
/// process really holds is still `Locked`, half a second later.
pub(crate) fn lock_db(fs: &Arc<dyn FileSystem>, dir: &Path) -> Result<Box<dyn FileLock>> {
    let path = dir.join("LOCK");
    let deadline = std::time::Instant::now() + LOCK_RETRY;
    loop {
        match fs.lock(&path) {
            Err(crate::error::Error::Locked(_)) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            r => return r,
        }
    }
}

/// The default file system.
pub fn default_fs() -> Arc<dyn FileSystem> {
    Arc::new(PosixFileSystem::default())
}
