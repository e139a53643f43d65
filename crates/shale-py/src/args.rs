//! Keys and values from Python arguments.
//!
//! `bytes` is read in place (no copy); `str` is encoded as UTF-8;
//! `bytearray` is copied. Anything else is a `TypeError`
//! naming the type: no pickling, no `str()` of arbitrary objects.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};

/// A key or value borrowed from (or, for `str`, encoded from) a Python object.
pub struct Bytes<'a>(pub Cow<'a, [u8]>);

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl<'a> Bytes<'a> {
    /// Reads `obj` as bytes (see the module header for the types taken).
    pub fn of(obj: &'a Bound<'_, PyAny>) -> PyResult<Bytes<'a>> {
        if let Ok(b) = obj.downcast::<PyBytes>() {
            return Ok(Bytes(Cow::Borrowed(b.as_bytes())));
        }
        if let Ok(s) = obj.downcast::<PyString>() {
            let s = s.to_cow()?;
            return Ok(Bytes(Cow::Owned(s.into_owned().into_bytes())));
        }
        if let Ok(b) = obj.downcast::<PyByteArray>() {
            return Ok(Bytes(Cow::Owned(b.to_vec())));
        }
        Err(PyTypeError::new_err(format!(
            "keys and values are bytes or str, not {}",
            obj.get_type().name()?
        )))
    }
}

/// The smallest key greater than every key starting with `prefix`, or
/// `None` when there is none (the prefix is empty or all 0xFF).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}
