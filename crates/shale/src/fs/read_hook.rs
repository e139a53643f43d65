//! [`ReadHookFs`]: a file system that forwards every operation to an inner
//! one and calls a hook before each positional read of a file it opened for
//! random access (and, if given, another on each access-pattern hint). Tests use it to count SST reads and their sizes (readahead)
//! or to slow reads down (compaction lag) without writing a whole
//! [`FileSystem`] of their own.
//!
//! Thread-safety: the hook is shared by every file and called from any
//! reading thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{
    AccessPattern, FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile,
    WritableFile,
};
use crate::error::Result;

/// Called before each `read_exact_at`: (path, offset, length).
pub type ReadHook = dyn Fn(&Path, u64, usize) + Send + Sync;

/// Called on each `advise` of a file opened for random access.
pub type AdviceHook = dyn Fn(&Path, AccessPattern) + Send + Sync;

/// See the module comment.
pub struct ReadHookFs {
    inner: Arc<dyn FileSystem>,
    hook: Arc<ReadHook>,
    advice: Option<Arc<AdviceHook>>,
    /// Replaces the inner file system's answer to `max_request_bytes`.
    max_request: Option<Option<usize>>,
}

impl ReadHookFs {
    /// Wraps `inner`; `hook` sees every random-access read.
    pub fn new(
        inner: Arc<dyn FileSystem>,
        hook: impl Fn(&Path, u64, usize) + Send + Sync + 'static,
    ) -> Self {
        ReadHookFs {
            inner,
            hook: Arc::new(hook),
            advice: None,
            max_request: None,
        }
    }

    /// Answers `max_request_bytes` with `bytes` (a device's request size
    /// without the device).
    pub fn with_max_request_bytes(mut self, bytes: Option<usize>) -> Self {
        self.max_request = Some(bytes);
        self
    }

    /// Also calls `hook` on every access-pattern hint (then forwarded).
    pub fn on_advise(
        mut self,
        hook: impl Fn(&Path, AccessPattern) + Send + Sync + 'static,
    ) -> Self {
        self.advice = Some(Arc::new(hook));
        self
    }
}

struct HookedFile {
    inner: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    hook: Arc<ReadHook>,
    advice: Option<Arc<AdviceHook>>,
}

impl RandomAccessFile for HookedFile {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        (self.hook)(&self.path, offset, buf.len());
        self.inner.read_exact_at(offset, buf)
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn advise(&self, pattern: AccessPattern) {
        if let Some(h) = &self.advice {
            h(&self.path, pattern);
        }
        self.inner.advise(pattern);
    }
    fn direct_alignment(&self) -> Option<usize> {
        self.inner.direct_alignment()
    }
    fn invalidate_cache(&self, offset: u64, len: u64) {
        self.inner.invalidate_cache(offset, len);
    }
}

impl FileSystem for ReadHookFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        self.inner.reuse_writable(old, new, mapped)
    }
    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.open_random_with(path, FileOptions::default())
    }
    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        self.inner.create_with(path, opts)
    }
    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        Ok(Arc::new(HookedFile {
            inner: self.inner.open_random_with(path, opts)?,
            path: path.to_path_buf(),
            hook: Arc::clone(&self.hook),
            advice: self.advice.clone(),
        }))
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.inner.open_sequential(path)
    }
    crate::fs::forward_namespace_calls!(inner);

    fn max_request_bytes(&self, dir: &Path) -> Option<usize> {
        match self.max_request {
            Some(answer) => answer,
            None => self.inner.max_request_bytes(dir),
        }
    }
}

#[cfg(test)]
mod tests;
