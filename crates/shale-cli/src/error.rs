//! [`CliError`]: everything that stops a command, and [`Outcome`]: how a
//! command that ran to the end went. Both map to the exit code.

use std::fmt;

/// How a command that ran to its end went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done; nothing wrong found. Exit code 0.
    Ok,
    /// Damage was found and reported (`check`, `sst dump --verify`, a dump
    /// of a damaged file). Exit code 1.
    CorruptionFound,
    /// `get` found no value. Exit code 1.
    NotFound,
}

impl Outcome {
    /// The process exit code.
    pub fn exit_code(self) -> i32 {
        match self {
            Outcome::Ok => 0,
            Outcome::CorruptionFound | Outcome::NotFound => 1,
        }
    }
}

/// Why a command stopped.
#[derive(Debug)]
pub enum CliError {
    /// Arguments that cannot work together, or a malformed argument.
    Usage(String),
    /// An engine error (a `Corruption` exits with 1, the rest with 2).
    Engine(shale::Error),
    /// Writing the output failed.
    Output(std::io::Error),
    /// Writing a file the command makes (`--svg FILE`) failed.
    Write(std::path::PathBuf, std::io::Error),
}

impl CliError {
    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Engine(e) if e.is_corruption() => 1,
            _ => 2,
        }
    }

    /// True when stdout was closed (`shale dump | head`): not worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(m) => write!(f, "usage: {m}"),
            CliError::Engine(e @ shale::Error::MergeFailed(_)) => write!(
                f,
                "{e} (the DB's merge operator is not one this tool has: pass --merge-operator NAME)"
            ),
            CliError::Engine(e) => write!(f, "{e}"),
            CliError::Output(e) => write!(f, "writing output: {e}"),
            CliError::Write(path, e) => write!(f, "cannot write {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for CliError {}

impl From<shale::Error> for CliError {
    fn from(e: shale::Error) -> Self {
        CliError::Engine(e)
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Output(e)
    }
}
