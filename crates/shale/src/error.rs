//! The one error type of the engine.
//!
//! Every fallible function returns [`Result`]. Errors are `Clone` so that a
//! latched background error can be handed to every writer that follows it.
//! `Corruption` always names the file and the byte offset where the damage was
//! found, so an operator can go straight to it with the admin tool.

use std::fmt;
use std::io;
use std::path::Path;

/// Errors returned by Shale.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system IO error. `kind` allows callers to tell, for
    /// example, a full disk (`StorageFull`) from other failures.
    Io {
        /// What was being done, usually with the path.
        context: String,
        /// The IO error kind.
        kind: io::ErrorKind,
        /// The OS message.
        message: String,
    },
    /// Bytes read from disk are not what was written.
    Corruption {
        /// The file the damage was found in.
        file: String,
        /// Byte offset within that file.
        offset: u64,
        /// What check failed.
        what: String,
    },
    /// An option or argument is invalid.
    InvalidArgument(String),
    /// Another handle (in this or another process) holds the DB's `LOCK`.
    Locked(String),
    /// A write or sync failed earlier; the DB refuses writes until reopened.
    Poisoned(String),
    /// A background flush or MANIFEST write failed; the DB refuses writes
    /// until it recovers, automatically or by `Db::resume` (reads work).
    WritesStopped(String),
    /// The feature or on-disk format version is not supported.
    NotSupported(String),
    /// The DB is closing or closed.
    ShutdownInProgress,
    /// A merge could not be resolved: the column family has no merge
    /// operator (data written by an earlier open with one), or the operator
    /// failed. The operands stay stored; reads of the key fail until an
    /// operator that accepts them is configured.
    MergeFailed(String),
    /// The operation met a concurrent change it could not see through and
    /// may succeed if tried again (RocksDB's `Status::TryAgain`): a
    /// secondary's catch-up while the primary kept rewriting its MANIFEST.
    TryAgain(String),
}

/// Shale's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds an `Io` error from an `io::Error` and what was being done.
    pub(crate) fn io(context: impl Into<String>, e: io::Error) -> Error {
        Error::Io {
            context: context.into(),
            kind: e.kind(),
            message: e.to_string(),
        }
    }

    /// Builds an `Io` error for an operation on `path`.
    pub(crate) fn io_path(op: &str, path: &Path, e: io::Error) -> Error {
        Error::io(format!("{op} {}", path.display()), e)
    }

    /// Builds a `Corruption` error.
    pub(crate) fn corruption(
        file: impl Into<String>,
        offset: u64,
        what: impl Into<String>,
    ) -> Error {
        Error::Corruption {
            file: file.into(),
            offset,
            what: what.into(),
        }
    }

    /// True for `Corruption`.
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }

    /// True for an IO error that reports a full disk.
    pub fn is_no_space(&self) -> bool {
        matches!(
            self,
            Error::Io {
                kind: io::ErrorKind::StorageFull,
                ..
            }
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                context, message, ..
            } => write!(f, "IO error: {context}: {message}"),
            Error::Corruption { file, offset, what } => {
                write!(f, "Corruption: {what} in {file} at offset {offset}")
            }
            Error::InvalidArgument(m) => write!(f, "Invalid argument: {m}"),
            Error::Locked(m) => write!(f, "Lock held: {m}"),
            Error::Poisoned(m) => write!(f, "DB is read-only after an earlier write failure: {m}"),
            Error::WritesStopped(m) => write!(
                f,
                "writes stopped by a background error until the DB resumes: {m}"
            ),
            Error::NotSupported(m) => write!(f, "Not supported: {m}"),
            Error::TryAgain(m) => write!(f, "Try again: {m}"),
            Error::ShutdownInProgress => write!(f, "Shutdown in progress"),
            Error::MergeFailed(m) => write!(f, "Merge failed: {m}"),
        }
    }
}

impl std::error::Error for Error {}
