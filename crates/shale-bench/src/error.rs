//! The bench tool's error type: one message for the operator.
//!
//! Every failure (bad flag, engine error, IO error on a report file) ends the
//! run with a message naming what went wrong; there is nothing to recover.

use std::fmt;

/// An error that stops the run, with a message for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

/// The bench tool's result type.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Builds an error from a message.
    pub fn msg(m: impl Into<String>) -> Error {
        Error(m.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        Error(format!("io error: {e}"))
    }
}

impl From<std::fmt::Error> for Error {
    fn from(e: std::fmt::Error) -> Error {
        Error(format!("formatting error: {e}"))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Error {
        Error(format!("json error: {e}"))
    }
}

#[cfg(feature = "shale-engine")]
impl From<shale::Error> for Error {
    fn from(e: shale::Error) -> Error {
        Error(format!("shale: {e}"))
    }
}

/// Returns early with a formatted [`Error`].
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error(format!($($arg)*)))
    };
}
pub(crate) use bail;
