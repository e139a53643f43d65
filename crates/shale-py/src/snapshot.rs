//! `shale.Snapshot`: the read API at one point in time.
//!
//! Made by `db.snapshot()`; reads the same family as the DB object it came
//! from. Released by `release()`, at the end of a `with` block, or when
//! garbage collected; reads after release raise `ClosedError`. Iterators
//! made from it keep reading at its point in time after it is released.

use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::reader::Reader;

/// A snapshot; its read methods are `Reader`'s.
#[pyclass(extends = Reader, frozen, module = "shale", name = "Snapshot")]
pub struct PySnapshot;

#[pymethods]
impl PySnapshot {
    /// The sequence number read at (None once released).
    #[getter]
    fn sequence(slf: PyRef<'_, Self>) -> Option<u64> {
        slf.as_super().sequence()
    }

    /// Releases the snapshot: compaction may drop what only it could see.
    fn release(slf: PyRef<'_, Self>) {
        slf.as_super().release();
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        slf: PyRef<'_, Self>,
        _exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> bool {
        slf.as_super().release();
        false
    }
}
