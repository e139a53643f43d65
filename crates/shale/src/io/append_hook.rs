//! [`Hooked`]: a [`WritableFile`] that runs an [`AppendHook`] around each
//! append and passes every other call through unchanged. The one shape of
//! the IO policies that act on appends (the rate limiter asks for the
//! bytes first, `bytes_per_sync` requests writeback after), so each policy
//! is only its rule, not another forwarding wrapper.
//!
//! Thread-safety: owned by one writer, like the file it wraps.

use crate::error::Result;
use crate::fs::WritableFile;

/// What a policy does around an append.
pub(crate) trait AppendHook: Send + 'static {
    /// Before `len` bytes are appended (may wait).
    fn before(&mut self, _len: usize) {}
    /// After an append, with the file (`len()` includes the new bytes).
    fn after(&mut self, _file: &mut dyn WritableFile) -> Result<()> {
        Ok(())
    }
}

/// `inner` with `hook` around its appends.
pub(crate) struct Hooked<H> {
    inner: Box<dyn WritableFile>,
    hook: H,
}

impl<H: AppendHook> Hooked<H> {
    pub(crate) fn boxed(inner: Box<dyn WritableFile>, hook: H) -> Box<dyn WritableFile> {
        Box::new(Hooked { inner, hook })
    }
}

impl<H: AppendHook> WritableFile for Hooked<H> {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.hook.before(data.len());
        self.inner.append(data)?;
        self.hook.after(&mut *self.inner)
    }

    fn append_parts(&mut self, parts: &[&[u8]]) -> Result<()> {
        self.hook.before(parts.iter().map(|p| p.len()).sum());
        self.inner.append_parts(parts)?;
        self.hook.after(&mut *self.inner)
    }

    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }

    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn finish_appends(&mut self) -> Result<()> {
        self.inner.finish_appends()
    }

    fn appends_reach_os(&self) -> bool {
        self.inner.appends_reach_os()
    }

    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.inner.range_sync(offset, len)
    }
}
