//! The exception hierarchy and the one mapping from engine errors to it.
//!
//! ```text
//! shale.Error (Exception)
//!  ├─ CorruptionError      .file, .offset: where the damage is
//!  ├─ LockedError          another process (or DB object) holds the LOCK
//!  ├─ InvalidArgumentError bad options, bad ranges, dropped families
//!  └─ ClosedError          the DB was closed (or a snapshot released)
//! ```
//!
//! Every other engine error (IO, read-only after a write failure, merge
//! failures) is a plain `shale.Error` whose message is the engine's.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    shale,
    Error,
    PyException,
    "Base class of every Shale error."
);
create_exception!(
    shale,
    CorruptionError,
    Error,
    "Damaged data: `file` and `offset` name where it was found."
);
create_exception!(
    shale,
    LockedError,
    Error,
    "The DB's LOCK is held by another open DB."
);
create_exception!(
    shale,
    InvalidArgumentError,
    Error,
    "An argument or option the engine refuses."
);
create_exception!(
    shale,
    ClosedError,
    Error,
    "The DB is closed, or the snapshot released."
);

/// The Python exception for an engine error.
pub fn to_py(e: shale::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        shale::Error::Corruption { file, offset, .. } => Python::with_gil(|py| {
            let err = CorruptionError::new_err(msg);
            let value = err.value(py);
            // Setting attributes on a fresh exception instance cannot fail
            // short of memory exhaustion; if it does, the message still
            // names file and offset.
            let _ = value.setattr("file", file);
            let _ = value.setattr("offset", offset);
            err
        }),
        shale::Error::Locked(_) => LockedError::new_err(msg),
        shale::Error::InvalidArgument(_) => InvalidArgumentError::new_err(msg),
        shale::Error::ShutdownInProgress => ClosedError::new_err("the DB is closed"),
        _ => Error::new_err(msg),
    }
}

/// `InvalidArgumentError` with `msg`.
pub fn invalid(msg: impl Into<String>) -> PyErr {
    InvalidArgumentError::new_err(msg.into())
}

/// Registers the exception classes in the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}
