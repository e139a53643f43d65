//! [`FaultInjectionFs`]: wraps any [`FileSystem`] and makes chosen calls fail,
//! for error-handling tests (after Pebble's `errorfs` and RocksDB's
//! `FaultInjectionTestFS`).
//!
//! A [`FaultRule`] selects calls by kind ([`FaultOp`]) and path substring, and
//! fires on the i-th matching call, on every matching call from the i-th on
//! (a full disk), or with a seeded probability. A firing rule returns an
//! `Error::Io` of the rule's [`FaultKind`] (EIO or ENOSPC) without calling the
//! inner file system; with [`FaultRule::torn_writes`] an `append` first
//! passes a prefix of its data through (a torn write). Every injected error
//! is recorded in a ledger ([`FaultInjectionFs::ledger`]) and its message
//! carries a marker (`[injected fault #N]`) so a test can check that each
//! one surfaced.
//!
//! Thread safety: `Clone` shares the rules and the ledger (one mutex). Rules
//! are checked in the order added; every matching rule counts the call, the
//! first that fires wins. With concurrent callers the numbering of calls
//! follows the order in which they reach the mutex.
//!
//! Not faulted: `exists`, `file_size`, `create_dir_all`, `lock`, and the
//! hints `range_sync` and `invalidate_cache` (forwarded). `reuse_writable`
//! is a `Rename` for the rules; `finish_appends` a `Flush`.
//!
//! Direct IO: `create_with` and `open_random_with` count as `Create` and
//! `Open` calls; a rule narrowed with [`FaultRule::direct_only`] matches
//! only those asking for `FileOptions::direct`, and
//! [`FaultKind::DirectIoRefused`] returns what a file system without
//! direct IO gives (EINVAL at open).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

/// Kinds of file-system calls a rule can select.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultOp {
    /// `create`.
    Create,
    /// `WritableFile::append`.
    Append,
    /// `WritableFile::flush`.
    Flush,
    /// `WritableFile::sync`.
    Sync,
    /// `open_random`, `open_sequential` (and so `read_all`).
    Open,
    /// `RandomAccessFile::read_exact_at`, `SequentialFile::read`.
    Read,
    /// `rename`.
    Rename,
    /// `link` (also when it copies).
    Link,
    /// `remove`.
    Remove,
    /// `list`.
    List,
    /// `sync_dir`.
    SyncDir,
}

impl FaultOp {
    /// The calls that change files or directories.
    pub const MUTATING: &'static [FaultOp] = &[
        FaultOp::Create,
        FaultOp::Append,
        FaultOp::Flush,
        FaultOp::Sync,
        FaultOp::Rename,
        FaultOp::Link,
        FaultOp::Remove,
        FaultOp::SyncDir,
    ];

    /// The calls that read.
    pub const READS: &'static [FaultOp] = &[FaultOp::Open, FaultOp::Read, FaultOp::List];

    fn name(self) -> &'static str {
        match self {
            FaultOp::Create => "create",
            FaultOp::Append => "append",
            FaultOp::Flush => "flush",
            FaultOp::Sync => "fdatasync",
            FaultOp::Open => "open",
            FaultOp::Read => "read",
            FaultOp::Rename => "rename",
            FaultOp::Link => "link",
            FaultOp::Remove => "remove",
            FaultOp::List => "list",
            FaultOp::SyncDir => "fsync dir",
        }
    }
}

/// The error a rule injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// EIO: `io::ErrorKind::Other`, "Input/output error".
    Eio,
    /// ENOSPC: `io::ErrorKind::StorageFull` (`Error::is_no_space`).
    NoSpace,
    /// EINVAL: `io::ErrorKind::InvalidInput`, what `open(2)` with
    /// `O_DIRECT` gives on a file system without direct IO
    /// (`fs::is_direct_io_refusal`).
    DirectIoRefused,
}

/// When a rule fires, counting only the calls it matches (from 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    /// Only the matching call with this index.
    OnIndex(u64),
    /// Every matching call from this index on (a disk that stays full).
    FromIndex(u64),
    /// Each matching call with this probability, from a seeded generator.
    Randomly {
        /// Probability in [0, 1].
        probability: f64,
        /// Seed of the generator.
        seed: u64,
    },
}

/// Which calls fail and how; build with [`FaultRule::new`] and the
/// `with`-style methods.
#[derive(Debug, Clone)]
pub struct FaultRule {
    ops: Vec<FaultOp>,
    path_contains: Option<String>,
    path_excludes: Vec<String>,
    direct_only: bool,
    trigger: Trigger,
    kind: FaultKind,
    torn: bool,
    matched: u64,
    rng: u64,
}

impl FaultRule {
    /// A rule matching every call (narrow it with `ops`/`path`).
    pub fn new(kind: FaultKind, trigger: Trigger) -> Self {
        let rng = match trigger {
            Trigger::Randomly { seed, .. } => seed,
            _ => 0,
        };
        FaultRule {
            ops: Vec::new(),
            path_contains: None,
            path_excludes: Vec::new(),
            direct_only: false,
            trigger,
            kind,
            torn: false,
            matched: 0,
            rng,
        }
    }

    /// Matches only these kinds of calls.
    pub fn ops(mut self, ops: &[FaultOp]) -> Self {
        self.ops = ops.to_vec();
        self
    }

    /// Matches only paths containing `s`.
    pub fn path(mut self, s: &str) -> Self {
        self.path_contains = Some(s.to_string());
        self
    }

    /// Never matches paths containing `s` (may be given several times).
    pub fn except_path(mut self, s: &str) -> Self {
        self.path_excludes.push(s.to_string());
        self
    }

    /// Matches only opens asking for direct IO (`FileOptions::direct`).
    pub fn direct_only(mut self) -> Self {
        self.direct_only = true;
        self
    }

    /// A failing `append` first writes a prefix (half) of its data.
    pub fn torn_writes(mut self) -> Self {
        self.torn = true;
        self
    }

    fn matches(&self, op: FaultOp, path: &Path, direct: bool) -> bool {
        let p = path.to_string_lossy();
        (direct || !self.direct_only)
            && (self.ops.is_empty() || self.ops.contains(&op))
            && self
                .path_contains
                .as_ref()
                .is_none_or(|s| p.contains(s.as_str()))
            && !self.path_excludes.iter().any(|s| p.contains(s.as_str()))
    }

    /// Counts a matching call; true when the rule fires for it.
    fn fires(&mut self) -> bool {
        let i = self.matched;
        self.matched += 1;
        match self.trigger {
            Trigger::OnIndex(n) => i == n,
            Trigger::FromIndex(n) => i >= n,
            Trigger::Randomly { probability, .. } => {
                // splitmix64
                self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = self.rng;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                z ^= z >> 31;
                ((z >> 11) as f64 / (1u64 << 53) as f64) < probability
            }
        }
    }
}

/// One injected error, as recorded in the ledger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    /// Sequence number of the injection (from 1), also in the error message.
    pub id: u64,
    /// The failed call.
    pub op: FaultOp,
    /// Its path.
    pub path: PathBuf,
    /// The error kind returned.
    pub kind: FaultKind,
    /// Index of the call among all calls seen by the file system.
    pub call: u64,
    /// An append wrote a prefix of its data before failing.
    pub torn: bool,
}

impl InjectedFault {
    /// The text the error's message carries: `[injected fault #id]`.
    pub fn marker(&self) -> String {
        format!("[injected fault #{}]", self.id)
    }
}

#[derive(Default)]
struct FaultState {
    rules: Vec<FaultRule>,
    ledger: Vec<InjectedFault>,
    calls: u64,
}

/// A [`FileSystem`] wrapper that injects errors; see the module docs.
#[derive(Clone)]
pub struct FaultInjectionFs {
    inner: Arc<dyn FileSystem>,
    state: Arc<Mutex<FaultState>>,
}

impl std::fmt::Debug for FaultInjectionFs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("FaultInjectionFs")
            .field("rules", &st.rules)
            .field("injected", &st.ledger.len())
            .finish_non_exhaustive()
    }
}

impl FaultInjectionFs {
    /// Wraps `inner`; no rule is active.
    pub fn new(inner: Arc<dyn FileSystem>) -> Self {
        FaultInjectionFs {
            inner,
            state: Arc::new(Mutex::new(FaultState::default())),
        }
    }

    /// Adds a rule (checked after the ones already added).
    pub fn add_rule(&self, rule: FaultRule) {
        self.state.lock().rules.push(rule);
    }

    /// Removes every rule ("the disk has space again"); keeps the ledger.
    pub fn clear_rules(&self) {
        self.state.lock().rules.clear();
    }

    /// Calls each rule has matched so far, in the order the rules were added.
    pub fn rule_matches(&self) -> Vec<u64> {
        self.state.lock().rules.iter().map(|r| r.matched).collect()
    }

    /// Every error injected so far, oldest first.
    pub fn ledger(&self) -> Vec<InjectedFault> {
        self.state.lock().ledger.clone()
    }

    /// Number of faultable calls seen so far.
    pub fn calls(&self) -> u64 {
        self.state.lock().calls
    }

    /// Decides a call: `Some` (the error, torn) when a rule fires.
    fn check(&self, op: FaultOp, path: &Path) -> Option<(Error, bool)> {
        self.check_direct(op, path, false)
    }

    /// `check` for a call that asks for direct IO or not.
    fn check_direct(&self, op: FaultOp, path: &Path, direct: bool) -> Option<(Error, bool)> {
        let mut st = self.state.lock();
        let call = st.calls;
        st.calls += 1;
        let mut fired: Option<(FaultKind, bool)> = None;
        for r in st.rules.iter_mut().filter(|r| r.matches(op, path, direct)) {
            if r.fires() && fired.is_none() {
                fired = Some((r.kind, r.torn && op == FaultOp::Append));
            }
        }
        let (kind, torn) = fired?;
        let id = st.ledger.len() as u64 + 1;
        let fault = InjectedFault {
            id,
            op,
            path: path.to_path_buf(),
            kind,
            call,
            torn,
        };
        let (io_kind, msg) = match kind {
            FaultKind::Eio => (io::ErrorKind::Other, "Input/output error (os error 5)"),
            FaultKind::NoSpace => (
                io::ErrorKind::StorageFull,
                "No space left on device (os error 28)",
            ),
            FaultKind::DirectIoRefused => (
                io::ErrorKind::InvalidInput,
                "Invalid argument (os error 22)",
            ),
        };
        let context = format!("{} {} {}", op.name(), path.display(), fault.marker());
        st.ledger.push(fault);
        Some((Error::io(context, io::Error::new(io_kind, msg)), torn))
    }

    fn guard(&self, op: FaultOp, path: &Path) -> Result<()> {
        match self.check(op, path) {
            Some((e, _)) => Err(e),
            None => Ok(()),
        }
    }
}

struct FaultWritable {
    fs: FaultInjectionFs,
    path: PathBuf,
    inner: Box<dyn WritableFile>,
}

impl WritableFile for FaultWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        match self.fs.check(FaultOp::Append, &self.path) {
            None => self.inner.append(data),
            Some((e, torn)) => {
                if torn {
                    let _ = self.inner.append(&data[..data.len() / 2]);
                }
                Err(e)
            }
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.fs.guard(FaultOp::Flush, &self.path)?;
        self.inner.flush()
    }

    fn sync(&mut self) -> Result<()> {
        self.fs.guard(FaultOp::Sync, &self.path)?;
        self.inner.sync()
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn finish_appends(&mut self) -> Result<()> {
        self.fs.guard(FaultOp::Flush, &self.path)?;
        self.inner.finish_appends()
    }

    fn appends_reach_os(&self) -> bool {
        self.inner.appends_reach_os()
    }

    /// Forwarded, never faulted: a hint whose failure changes nothing.
    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        self.inner.range_sync(offset, len)
    }
}

struct FaultRandom {
    fs: FaultInjectionFs,
    path: PathBuf,
    inner: Arc<dyn RandomAccessFile>,
}

impl RandomAccessFile for FaultRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.fs.guard(FaultOp::Read, &self.path)?;
        self.inner.read_exact_at(offset, buf)
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn advise(&self, pattern: super::AccessPattern) {
        self.inner.advise(pattern);
    }

    fn direct_alignment(&self) -> Option<usize> {
        self.inner.direct_alignment()
    }

    fn invalidate_cache(&self, offset: u64, len: u64) {
        self.inner.invalidate_cache(offset, len);
    }
}

struct FaultSequential {
    fs: FaultInjectionFs,
    path: PathBuf,
    inner: Box<dyn SequentialFile>,
}

impl SequentialFile for FaultSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        self.fs.guard(FaultOp::Read, &self.path)?;
        self.inner.read(buf)
    }
}

impl FileSystem for FaultInjectionFs {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.guard(FaultOp::Create, path)?;
        Ok(Box::new(FaultWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            inner: self.inner.create(path)?,
        }))
    }

    /// A `Rename` call for the rules (it renames), then the inner reuse.
    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        self.guard(FaultOp::Rename, old)?;
        Ok(Box::new(FaultWritable {
            fs: self.clone(),
            path: new.to_path_buf(),
            inner: self.inner.reuse_writable(old, new, mapped)?,
        }))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        self.guard(FaultOp::Open, path)?;
        Ok(Arc::new(FaultRandom {
            fs: self.clone(),
            path: path.to_path_buf(),
            inner: self.inner.open_random(path)?,
        }))
    }

    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        if let Some((e, _)) = self.check_direct(FaultOp::Create, path, opts.direct) {
            return Err(e);
        }
        Ok(Box::new(FaultWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            inner: self.inner.create_with(path, opts)?,
        }))
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        if let Some((e, _)) = self.check_direct(FaultOp::Open, path, opts.direct) {
            return Err(e);
        }
        Ok(Arc::new(FaultRandom {
            fs: self.clone(),
            path: path.to_path_buf(),
            inner: self.inner.open_random_with(path, opts)?,
        }))
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        self.guard(FaultOp::Open, path)?;
        Ok(Box::new(FaultSequential {
            fs: self.clone(),
            path: path.to_path_buf(),
            inner: self.inner.open_sequential(path)?,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.guard(FaultOp::Rename, from)?;
        self.inner.rename(from, to)
    }

    /// Matched against the new name `to`.
    fn link(&self, from: &Path, to: &Path) -> Result<super::LinkKind> {
        self.guard(FaultOp::Link, to)?;
        self.inner.link(from, to)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        self.guard(FaultOp::Remove, path)?;
        self.inner.remove(path)
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        self.guard(FaultOp::List, dir)?;
        self.inner.list(dir)
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }

    fn remove_dir(&self, dir: &Path) -> Result<()> {
        self.guard(FaultOp::Remove, dir)?;
        self.inner.remove_dir(dir)
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        self.guard(FaultOp::SyncDir, dir)?;
        self.inner.sync_dir(dir)
    }

    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }

    fn max_request_bytes(&self, dir: &Path) -> Option<usize> {
        self.inner.max_request_bytes(dir)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        self.inner.file_size(path)
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
}

#[cfg(test)]
mod tests;
