//! The endpoint's errors.

use std::fmt;

/// Why the endpoint could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The address could not be bound (in use, no permission, not an
    /// address of this machine), with the server library's reason.
    Bind(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bind(why) => write!(f, "cannot listen for metrics: {why}"),
        }
    }
}

impl std::error::Error for Error {}
