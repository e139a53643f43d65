//! [`MemFileSystem`]'s hard links and directory renames (see the module
//! docs of `mem.rs` for the model).
//!
//! A directory rename moves every live name under the directory at once
//! and queues one `DirOp::RenameDir`, made durable by a sync of the new
//! parent. Directory operations still queued for names inside the
//! directory follow it (their paths are rewritten), so a later sync of the
//! new directory makes them durable. A power loss that drops the rename
//! puts the directory (and every directory under it) back under its old
//! name (`dirs_without`).

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{not_found, DirOp, InodeRef, MemFileSystem, State};
use crate::error::{Error, Result};
use crate::fs::LinkKind;

/// `path` with its prefix `from` replaced by `to` (`None` when `path` is
/// not under `from`).
fn moved(path: &Path, from: &Path, to: &Path) -> Option<PathBuf> {
    let rest = path.strip_prefix(from).ok()?;
    Some(if rest.as_os_str().is_empty() {
        to.to_path_buf()
    } else {
        to.join(rest)
    })
}

impl State {
    /// Renames every name under `from` to the same name under `to`.
    pub(super) fn move_names(names: &mut BTreeMap<PathBuf, InodeRef>, from: &Path, to: &Path) {
        let under: Vec<PathBuf> = names
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for p in under {
            if let (Some(inode), Some(new)) = (names.remove(&p), moved(&p, from, to)) {
                names.insert(new, inode);
            }
        }
    }

    /// The live directories with the directory renames `undone` (in the
    /// order they were made) taken back: what exists after a power loss that
    /// dropped them.
    pub(super) fn dirs_without(&self, undone: &[(&PathBuf, &PathBuf)]) -> BTreeSet<PathBuf> {
        let mut out = self.dirs.clone();
        for (from, to) in undone.iter().rev() {
            let under: Vec<PathBuf> = out.iter().filter(|d| d.starts_with(to)).cloned().collect();
            for d in under {
                out.remove(&d);
                if let Some(back) = moved(&d, to, from) {
                    out.insert(back);
                }
            }
        }
        out
    }
}

fn exists_error(op: &str, path: &Path, kind: io::ErrorKind) -> Error {
    Error::io_path(op, path, io::Error::from(kind))
}

impl MemFileSystem {
    /// `FileSystem::link`: a second name for `from`'s inode, queued as a
    /// `DirOp::Link` of `to`'s directory.
    pub(super) fn link_file(st: &mut State, from: &Path, to: &Path) -> Result<LinkKind> {
        let Some(inode) = st.names.get(from).cloned() else {
            return Err(not_found("link", from));
        };
        if st.names.contains_key(to) || st.dirs.contains(to) {
            return Err(exists_error("link", to, io::ErrorKind::AlreadyExists));
        }
        Self::check_dir(st, "link", to)?;
        Self::begin_op(st, "link", to)?;
        st.names.insert(to.to_path_buf(), Arc::clone(&inode));
        st.pending.push(DirOp::Link {
            path: to.to_path_buf(),
            inode,
        });
        Self::end_op(st);
        Ok(LinkKind::HardLink)
    }

    /// `FileSystem::rename` of the directory `from` (see the module docs).
    /// `to` must not exist, or be an empty directory (replaced).
    pub(super) fn rename_dir(st: &mut State, from: &Path, to: &Path) -> Result<()> {
        if st.names.contains_key(to) {
            return Err(exists_error("rename", to, io::ErrorKind::NotADirectory));
        }
        if to.starts_with(from) {
            return Err(exists_error("rename", to, io::ErrorKind::InvalidInput));
        }
        if st.dirs.contains(to) {
            let inside = |p: &PathBuf| p.parent() == Some(to);
            if st.names.keys().any(inside) || st.dirs.iter().any(inside) {
                return Err(exists_error("rename", to, io::ErrorKind::DirectoryNotEmpty));
            }
        }
        Self::check_dir(st, "rename", to)?;
        Self::begin_op(st, "rename", from)?;
        st.dirs.remove(to);
        let dirs: Vec<PathBuf> = st
            .dirs
            .iter()
            .filter(|d| d.starts_with(from))
            .cloned()
            .collect();
        for d in dirs {
            st.dirs.remove(&d);
            if let Some(new) = moved(&d, from, to) {
                st.dirs.insert(new);
            }
        }
        State::move_names(&mut st.names, from, to);
        for op in &mut st.pending {
            let (a, b) = match op {
                DirOp::Link { path, .. } | DirOp::Unlink { path } => (path, None),
                DirOp::Rename { from: f, to: t, .. } | DirOp::RenameDir { from: f, to: t } => {
                    (t, Some(f))
                }
            };
            for path in std::iter::once(a).chain(b) {
                if let Some(new) = moved(path, from, to) {
                    *path = new;
                }
            }
        }
        st.pending.push(DirOp::RenameDir {
            from: from.to_path_buf(),
            to: to.to_path_buf(),
        });
        Self::end_op(st);
        Ok(())
    }
}
