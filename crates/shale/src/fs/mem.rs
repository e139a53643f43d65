//! [`MemFileSystem`]: an in-memory [`FileSystem`] that can simulate a power
//! loss or a process crash, for crash-recovery tests.
//!
//! Model (what it assumes of a real disk, see `fs/mod.rs` for the contract):
//! - Each file (inode) holds the bytes handed to the OS (`flush`, or an
//!   implicit hand-off when the handle's 64 KiB process buffer fills, or the
//!   handle's drop) and the length of the durable prefix (`sync`). Bytes only
//!   appended stay in the handle and are lost by any crash.
//! - The namespace has a live view and a durable view. `create`, `rename`,
//!   `link` and `remove` change the live view at once and queue a directory
//!   operation; `sync_dir(dir)` applies the queued operations of `dir` to
//!   the durable view. Directories themselves are durable when created; a
//!   directory's rename is a queued operation of its new parent, and a
//!   power loss that drops it puts the directory back under its old name
//!   (`dirs.rs`). `link` gives an inode a second name (a hard link).
//! - [`MemFileSystem::crash`] builds the image a power loss leaves: the
//!   durable view plus each queued directory operation kept with probability
//!   `p`; per file, the synced prefix plus each unsynced 4 KiB block (aligned
//!   to file offsets) kept with probability `p`. A dropped block followed by
//!   a kept one reads as zeros, so the image need not be a prefix (as Pebble's
//!   `CrashClone`). [`MemFileSystem::crash_process`] keeps everything handed
//!   to the OS. Images are independent deep copies (shared only where the
//!   bytes are identical and immutable), fully durable, with no locks held.
//! - Mutating IO calls are numbered: `create`, each hand-off of bytes
//!   ("write"), `sync`, `rename`, `link`, `remove` and `sync_dir`; reads, `lock`,
//!   `create_dir_all` and empty flushes are not. [`MemFileSystem::capture_at`]
//!   records the `crash(0)` image right after chosen call numbers, and
//!   [`MemFileSystem::freeze_after`] fails every call after a number, so a
//!   test can crash "after the k-th write/sync/rename".
//! - A file reused by `reuse_writable` (a recycled WAL) is overwritten in
//!   place from offset 0: its durable bytes at that moment become the
//!   file's `old` content, and a power loss keeps, per unsynced 4 KiB
//!   block, either the new bytes or the old ones (not zeros), and the old
//!   bytes past the new ones. `finish_appends` cuts the file to what was
//!   appended (durable with the next `sync`).
//! - `range_sync` calls are recorded ([`MemFileSystem::range_syncs`]) and
//!   change nothing else: only `sync` makes bytes durable.
//! - `lock` is an in-process table: a second lock of the same path on the
//!   same file system (or a clone of it) fails with `Error::Locked`.
//! - Direct IO (`FileOptions::direct`) is accepted and behaves as buffered
//!   IO (there is no page cache to bypass); each direct open is recorded
//!   ([`MemFileSystem::direct_opens`]) so tests can check which files the
//!   engine asked to open that way.
//!
//! Thread safety: `Clone` shares the state (an `Arc`). One mutex guards the
//! namespace and the call counter; each file's bytes have their own mutex,
//! taken after the namespace mutex when both are needed.
//!
//! Simplifications: `create` over an existing name links a new inode (the old
//! content is not truncated in place); a rename is made durable by syncing
//! the destination's directory.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use super::{FileLock, FileOptions, FileSystem, RandomAccessFile, SequentialFile, WritableFile};
use crate::error::{Error, Result};

/// Granularity at which unsynced data survives a simulated power loss.
pub const CRASH_BLOCK_SIZE: usize = 4096;

/// Bytes a writable handle buffers in process before handing them to the OS
/// (as `PosixFileSystem` does).
const PROCESS_BUFFER: usize = 64 * 1024;

/// The bytes of one file as the OS sees them.
#[derive(Clone)]
struct Content {
    /// Everything handed to the OS (copy-on-write: images share it).
    data: Arc<Vec<u8>>,
    /// Length of the durable prefix of `data`.
    synced: usize,
    /// For a file being overwritten in place (`reuse_writable`): its
    /// durable bytes when the overwriting began. The durable file is
    /// `data[..synced]` followed by `old[synced..]`.
    old: Option<Arc<Vec<u8>>>,
}

impl Content {
    /// The bytes a power loss that keeps nothing unsynced leaves.
    fn durable(&self) -> Vec<u8> {
        let synced = self.synced.min(self.data.len());
        let mut out = self.data[..synced].to_vec();
        if let Some(old) = &self.old {
            out.extend_from_slice(old.get(synced..).unwrap_or_default());
        }
        out
    }
}

struct Inode {
    id: u64,
    content: Mutex<Content>,
}

type InodeRef = Arc<Inode>;

/// A directory operation not yet made durable by `sync_dir`.
enum DirOp {
    Link {
        path: PathBuf,
        inode: InodeRef,
    },
    Unlink {
        path: PathBuf,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        inode: InodeRef,
    },
    /// A directory renamed with everything under it (`dirs.rs`).
    RenameDir {
        from: PathBuf,
        to: PathBuf,
    },
}

impl DirOp {
    /// The directory whose sync makes this operation durable.
    fn dir(&self) -> &Path {
        let p = match self {
            DirOp::Link { path, .. } | DirOp::Unlink { path } => path,
            DirOp::Rename { to, .. } | DirOp::RenameDir { to, .. } => to,
        };
        p.parent().unwrap_or(Path::new(""))
    }

    fn apply(&self, names: &mut BTreeMap<PathBuf, InodeRef>) {
        match self {
            DirOp::Link { path, inode } => {
                names.insert(path.clone(), Arc::clone(inode));
            }
            DirOp::Unlink { path } => {
                names.remove(path);
            }
            DirOp::Rename { from, to, inode } => {
                names.remove(from);
                names.insert(to.clone(), Arc::clone(inode));
            }
            DirOp::RenameDir { from, to } => State::move_names(names, from, to),
        }
    }
}

#[derive(Default)]
struct State {
    next_inode: u64,
    /// The live namespace.
    names: BTreeMap<PathBuf, InodeRef>,
    /// The namespace as of the last `sync_dir` of each directory.
    durable: BTreeMap<PathBuf, InodeRef>,
    /// Directory operations not yet durable, in order.
    pending: Vec<DirOp>,
    dirs: BTreeSet<PathBuf>,
    locks: HashSet<PathBuf>,
    /// Mutating calls performed so far.
    ops: u64,
    /// Calls numbered above this fail.
    freeze_after: Option<u64>,
    capture_at: BTreeSet<u64>,
    captures: BTreeMap<u64, MemFileSystem>,
    /// Every open with `FileOptions::direct`, in order.
    direct_opens: Vec<DirectOpen>,
    /// Every `range_sync` call: (path, offset, len).
    range_syncs: Vec<(PathBuf, u64, u64)>,
}

/// One open with `FileOptions::direct`, as recorded by [`MemFileSystem`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectOpen {
    /// The file.
    pub path: PathBuf,
    /// Created for writing (`create_with`), else opened for reading
    /// (`open_random_with`).
    pub write: bool,
}

/// An in-memory, crash-simulating [`FileSystem`]; see the module docs.
#[derive(Clone)]
pub struct MemFileSystem {
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for MemFileSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state.lock();
        f.debug_struct("MemFileSystem")
            .field("files", &st.names.keys().collect::<Vec<_>>())
            .field("pending_dir_ops", &st.pending.len())
            .field("ops", &st.ops)
            .finish()
    }
}

/// splitmix64: a small deterministic generator for crash images.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// True with probability `p` (exactly never for p <= 0, always for p >= 1).
    fn chance(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

fn not_found(op: &str, path: &Path) -> Error {
    Error::io_path(op, path, io::Error::from(io::ErrorKind::NotFound))
}

/// What survives of one file's bytes after a power loss.
fn crash_content(c: &Content, p: f64, rng: &mut SplitMix) -> Content {
    let len = c.data.len();
    let synced = c.synced.min(len);
    let old = c.old.as_deref().map_or(&[][..], |o| o.as_slice());
    if synced == len && old.len() <= len {
        return Content {
            data: Arc::clone(&c.data),
            synced,
            old: None,
        };
    }
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let mut start = synced;
    while start < len {
        let end = ((start / CRASH_BLOCK_SIZE + 1) * CRASH_BLOCK_SIZE).min(len);
        if rng.chance(p) {
            kept.push((start, end));
        }
        start = end;
    }
    let new_len = kept.last().map_or(synced, |&(_, e)| e).max(old.len());
    let mut out = vec![0u8; new_len];
    // Dropped blocks of an overwritten file read as its old bytes.
    if let Some(stale) = old.get(synced..) {
        out[synced..synced + stale.len()].copy_from_slice(stale);
    }
    out[..synced].copy_from_slice(&c.data[..synced]);
    for (s, e) in kept {
        out[s..e].copy_from_slice(&c.data[s..e]);
    }
    Content {
        data: Arc::new(out),
        synced: new_len,
        old: None,
    }
}

impl State {
    /// A fully durable image built from a namespace and per-file contents.
    fn image(
        &self,
        names: &BTreeMap<PathBuf, InodeRef>,
        mut dirs: BTreeSet<PathBuf>,
        mut content: impl FnMut(&Content) -> Content,
    ) -> MemFileSystem {
        // A file's directories exist (a directory rename may be undone).
        for p in names.keys() {
            dirs.extend(p.ancestors().skip(1).map(Path::to_path_buf));
        }
        dirs.remove(Path::new(""));
        let mut copied: HashMap<u64, InodeRef> = HashMap::new();
        let mut next_inode = 0;
        let mut new_names = BTreeMap::new();
        for (path, inode) in names {
            let new = copied.entry(inode.id).or_insert_with(|| {
                next_inode += 1;
                let c = content(&inode.content.lock());
                Arc::new(Inode {
                    id: next_inode,
                    content: Mutex::new(c),
                })
            });
            new_names.insert(path.clone(), Arc::clone(new));
        }
        MemFileSystem {
            state: Arc::new(Mutex::new(State {
                next_inode,
                durable: new_names.clone(),
                names: new_names,
                dirs,
                ..State::default()
            })),
        }
    }

    fn power_loss_image(&self, p: f64, seed: u64) -> MemFileSystem {
        let mut rng = SplitMix(seed);
        let mut names = self.durable.clone();
        let mut undone = Vec::new();
        for op in &self.pending {
            if rng.chance(p) {
                op.apply(&mut names);
            } else if let DirOp::RenameDir { from, to } = op {
                undone.push((from, to));
            }
        }
        let dirs = self.dirs_without(&undone);
        self.image(&names, dirs, |c| crash_content(c, p, &mut rng))
    }
}

impl Default for MemFileSystem {
    fn default() -> Self {
        Self::new()
    }
}

mod crash;
mod dirs;

impl MemFileSystem {
    /// An empty file system (only the root directory exists).
    pub fn new() -> Self {
        let mut st = State::default();
        st.dirs.insert(PathBuf::from("/"));
        MemFileSystem {
            state: Arc::new(Mutex::new(st)),
        }
    }

    /// Starts a mutating call: fails if the file system is frozen.
    fn begin_op(st: &mut State, op: &str, path: &Path) -> Result<()> {
        if let Some(k) = st.freeze_after {
            if st.ops >= k {
                return Err(Error::io_path(
                    op,
                    path,
                    io::Error::other(format!("file system frozen after call {k}")),
                ));
            }
        }
        st.ops += 1;
        Ok(())
    }

    /// Ends a mutating call: records a requested image.
    fn end_op(st: &mut State) {
        let now = st.ops;
        if st.capture_at.remove(&now) {
            let img = st.power_loss_image(0.0, 0);
            st.captures.insert(now, img);
        }
    }

    fn lookup(&self, op: &str, path: &Path) -> Result<InodeRef> {
        self.state
            .lock()
            .names
            .get(path)
            .cloned()
            .ok_or_else(|| not_found(op, path))
    }

    fn check_dir(st: &State, op: &str, path: &Path) -> Result<()> {
        let dir = path.parent().unwrap_or(Path::new(""));
        if st.dirs.contains(dir) {
            Ok(())
        } else {
            Err(not_found(op, dir))
        }
    }

    /// Creates an empty file at `path` (replacing any name there) as an
    /// unsynced directory operation.
    fn link_new_file(st: &mut State, path: &Path) -> Arc<Inode> {
        st.next_inode += 1;
        let inode = Arc::new(Inode {
            id: st.next_inode,
            content: Mutex::new(Content {
                data: Arc::new(Vec::new()),
                synced: 0,
                old: None,
            }),
        });
        st.names.insert(path.to_path_buf(), Arc::clone(&inode));
        st.pending.push(DirOp::Link {
            path: path.to_path_buf(),
            inode: Arc::clone(&inode),
        });
        inode
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }
}

struct MemWritable {
    fs: MemFileSystem,
    path: PathBuf,
    inode: InodeRef,
    buf: Vec<u8>,
    len: u64,
    /// Offset in the file where the buffer goes (`len` minus the buffer).
    pos: usize,
}

impl MemWritable {
    /// Hands the process buffer to the OS (one numbered "write" call).
    fn hand_off(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let mut st = self.fs.lock_state();
        MemFileSystem::begin_op(&mut st, "write", &self.path)?;
        {
            let mut c = self.inode.content.lock();
            let data = Arc::make_mut(&mut c.data);
            let end = self.pos + self.buf.len();
            if data.len() < end {
                data.resize(end, 0);
            }
            data[self.pos..end].copy_from_slice(&self.buf);
        }
        MemFileSystem::end_op(&mut st);
        self.pos += self.buf.len();
        self.buf.clear();
        Ok(())
    }
}

impl WritableFile for MemWritable {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.buf.extend_from_slice(data);
        self.len += data.len() as u64;
        if self.buf.len() >= PROCESS_BUFFER {
            self.hand_off()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.hand_off()
    }

    fn sync(&mut self) -> Result<()> {
        self.hand_off()?;
        let mut st = self.fs.lock_state();
        MemFileSystem::begin_op(&mut st, "fdatasync", &self.path)?;
        {
            let mut c = self.inode.content.lock();
            c.synced = self.pos;
            if c.data.len() == self.pos {
                // Nothing of the old content is left past the new bytes
                // (cut, or overwritten): the file is its data.
                c.old = None;
            }
        }
        MemFileSystem::end_op(&mut st);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn finish_appends(&mut self) -> Result<()> {
        self.hand_off()?;
        let mut c = self.inode.content.lock();
        if c.data.len() > self.pos {
            Arc::make_mut(&mut c.data).truncate(self.pos);
            c.synced = c.synced.min(self.pos);
        }
        Ok(())
    }

    fn range_sync(&mut self, offset: u64, len: u64) -> Result<()> {
        let path = self.path.clone();
        self.fs.lock_state().range_syncs.push((path, offset, len));
        Ok(())
    }
}

impl Drop for MemWritable {
    fn drop(&mut self) {
        // As PosixWritable: best effort hand-off of what is buffered.
        let _ = self.hand_off();
    }
}

struct MemRandom {
    path: PathBuf,
    inode: InodeRef,
    len: u64,
}

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let c = self.inode.content.lock();
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start
            .checked_add(buf.len())
            .and_then(|end| c.data.get(start..end))
        {
            Some(src) => {
                buf.copy_from_slice(src);
                Ok(())
            }
            None => Err(Error::io(
                format!("read {} at {offset}", self.path.display()),
                io::Error::from(io::ErrorKind::UnexpectedEof),
            )),
        }
    }

    fn len(&self) -> u64 {
        self.len
    }
}

struct MemSequential {
    inode: InodeRef,
    pos: usize,
}

impl SequentialFile for MemSequential {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let c = self.inode.content.lock();
        let rest = c.data.get(self.pos..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

struct MemLock {
    fs: MemFileSystem,
    path: PathBuf,
}

impl FileLock for MemLock {}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.fs.lock_state().locks.remove(&self.path);
    }
}

impl FileSystem for MemFileSystem {
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let mut st = self.lock_state();
        Self::check_dir(&st, "create", path)?;
        Self::begin_op(&mut st, "create", path)?;
        let inode = Self::link_new_file(&mut st, path);
        Self::end_op(&mut st);
        Ok(Box::new(MemWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            inode,
            buf: Vec::new(),
            len: 0,
            pos: 0,
        }))
    }

    fn reuse_writable(
        &self,
        old: &Path,
        new: &Path,
        _mapped: bool,
    ) -> Result<Box<dyn WritableFile>> {
        self.rename(old, new)?;
        let inode = self.lookup("open for reuse", new)?;
        {
            let mut c = inode.content.lock();
            let durable = c.durable();
            c.old = Some(Arc::new(durable));
            c.synced = 0;
        }
        Ok(Box::new(MemWritable {
            fs: self.clone(),
            path: new.to_path_buf(),
            inode,
            buf: Vec::new(),
            len: 0,
            pos: 0,
        }))
    }

    fn open_random(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let inode = self.lookup("open", path)?;
        let len = inode.content.lock().data.len() as u64;
        Ok(Arc::new(MemRandom {
            path: path.to_path_buf(),
            inode,
            len,
        }))
    }

    fn create_with(&self, path: &Path, opts: FileOptions) -> Result<Box<dyn WritableFile>> {
        let f = self.create(path)?;
        if opts.direct {
            self.state.lock().direct_opens.push(DirectOpen {
                path: path.to_path_buf(),
                write: true,
            });
        }
        Ok(f)
    }

    fn open_random_with(
        &self,
        path: &Path,
        opts: FileOptions,
    ) -> Result<Arc<dyn RandomAccessFile>> {
        let f = self.open_random(path)?;
        if opts.direct {
            self.state.lock().direct_opens.push(DirectOpen {
                path: path.to_path_buf(),
                write: false,
            });
        }
        Ok(f)
    }

    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        let inode = self.lookup("open", path)?;
        Ok(Box::new(MemSequential { inode, pos: 0 }))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut st = self.lock_state();
        if st.dirs.contains(from) {
            return Self::rename_dir(&mut st, from, to);
        }
        if !st.names.contains_key(from) {
            return Err(not_found("rename", from));
        }
        Self::check_dir(&st, "rename", to)?;
        Self::begin_op(&mut st, "rename", from)?;
        if let Some(inode) = st.names.remove(from) {
            st.names.insert(to.to_path_buf(), Arc::clone(&inode));
            st.pending.push(DirOp::Rename {
                from: from.to_path_buf(),
                to: to.to_path_buf(),
                inode,
            });
        }
        Self::end_op(&mut st);
        Ok(())
    }

    fn link(&self, from: &Path, to: &Path) -> Result<super::LinkKind> {
        Self::link_file(&mut self.lock_state(), from, to)
    }

    fn remove(&self, path: &Path) -> Result<()> {
        let mut st = self.lock_state();
        if !st.names.contains_key(path) {
            return Err(not_found("remove", path));
        }
        Self::begin_op(&mut st, "remove", path)?;
        st.names.remove(path);
        st.pending.push(DirOp::Unlink {
            path: path.to_path_buf(),
        });
        Self::end_op(&mut st);
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let st = self.lock_state();
        if !st.dirs.contains(dir) {
            return Err(not_found("list", dir));
        }
        let files = st.names.keys();
        let dirs = st.dirs.iter();
        Ok(files
            .chain(dirs)
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(String::from))
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let mut st = self.lock_state();
        for d in dir.ancestors() {
            if st.names.contains_key(d) {
                return Err(Error::io_path(
                    "mkdir",
                    d,
                    io::Error::from(io::ErrorKind::AlreadyExists),
                ));
            }
            if !d.as_os_str().is_empty() {
                st.dirs.insert(d.to_path_buf());
            }
        }
        Ok(())
    }

    /// Removes `dir` at once (not modelled as a pending directory
    /// operation: nothing a crash test checks depends on it).
    fn remove_dir(&self, dir: &Path) -> Result<()> {
        let mut st = self.lock_state();
        if !st.dirs.contains(dir) {
            return Err(not_found("rmdir", dir));
        }
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        if st.names.keys().any(in_dir) || st.dirs.iter().any(in_dir) {
            return Err(Error::io_path(
                "rmdir",
                dir,
                io::Error::from(io::ErrorKind::DirectoryNotEmpty),
            ));
        }
        st.dirs.remove(dir);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let mut st = self.lock_state();
        if !st.dirs.contains(dir) {
            return Err(not_found("fsync dir", dir));
        }
        Self::begin_op(&mut st, "fsync dir", dir)?;
        let pending = std::mem::take(&mut st.pending);
        for op in pending {
            if op.dir() == dir {
                op.apply(&mut st.durable);
            } else {
                st.pending.push(op);
            }
        }
        Self::end_op(&mut st);
        Ok(())
    }

    fn exists(&self, path: &Path) -> bool {
        let st = self.lock_state();
        st.names.contains_key(path) || st.dirs.contains(path)
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let inode = self.lookup("stat", path)?;
        let len = inode.content.lock().data.len() as u64;
        Ok(len)
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let mut st = self.lock_state();
        if st.locks.contains(path) {
            return Err(Error::Locked(format!(
                "{} is held by another handle on this file system",
                path.display()
            )));
        }
        Self::check_dir(&st, "open lock", path)?;
        if !st.names.contains_key(path) {
            // Like `open(O_CREAT)`: an unsynced, uncounted creation.
            Self::link_new_file(&mut st, path);
        }
        st.locks.insert(path.to_path_buf());
        Ok(Box::new(MemLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }
}

#[cfg(test)]
mod tests;
