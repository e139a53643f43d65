//! `shale.Iterator`: a Python iterator over an engine cursor.
//!
//! Entries are copied out of the cursor in chunks, with the GIL released
//! (moving the cursor may read blocks from disk), into one reused buffer;
//! `__next__` then builds Python objects from the buffer with the GIL held.
//! Chunks start at one entry and double up to `MAX_CHUNK`, so taking only the
//! first item reads one entry, and a full scan pays the GIL hand-off once per
//! `MAX_CHUNK` entries.
//!
//! Invariants: `spans[pos..]` are the entries read but not yet returned, in
//! iteration order; the cursor sits on the last entry read (or is exhausted,
//! `done`). An error of the cursor is raised after the entries read before
//! it. The iterator is used by one thread at a time: a second thread calling
//! `__next__` meanwhile gets `RuntimeError` (as a running generator does),
//! never a wait that could deadlock on the GIL.

use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use shale::{DbIterator, Snapshot};

use crate::errors::to_py;

/// Entries per chunk at most.
const MAX_CHUNK: usize = 256;
/// Bytes per chunk at most (a chunk ends after the entry crossing it).
const MAX_CHUNK_BYTES: usize = 256 << 10;

/// What each item is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Items,
    Keys,
    Values,
}

struct State {
    it: DbIterator,
    mode: Mode,
    reverse: bool,
    /// The cursor was positioned (seek to first or last).
    positioned: bool,
    /// The cursor is exhausted (or failed, `err`).
    done: bool,
    err: Option<shale::Error>,
    buf: Vec<u8>,
    /// Per entry read: key start, key end (= value start), value end in `buf`.
    spans: Vec<(usize, usize, usize)>,
    pos: usize,
    chunk: usize,
    /// Keeps the snapshot the cursor reads at alive while it is used.
    _snap: Option<Arc<Snapshot>>,
}

impl State {
    /// Reads the next chunk of entries into `buf` (GIL released).
    fn fill(&mut self) {
        self.buf.clear();
        self.spans.clear();
        self.pos = 0;
        while self.spans.len() < self.chunk && self.buf.len() < MAX_CHUNK_BYTES {
            if !self.positioned {
                self.positioned = true;
                if self.reverse {
                    self.it.seek_to_last();
                } else {
                    self.it.seek_to_first();
                }
            } else if self.reverse {
                self.it.prev();
            } else {
                self.it.next();
            }
            if !self.it.valid() {
                self.done = true;
                self.err = self.it.status().err();
                break;
            }
            let ks = self.buf.len();
            if self.mode != Mode::Values {
                self.buf.extend_from_slice(self.it.key());
            }
            let ke = self.buf.len();
            if self.mode != Mode::Keys {
                self.buf.extend_from_slice(self.it.value());
            }
            self.spans.push((ks, ke, self.buf.len()));
        }
        self.chunk = (self.chunk * 2).min(MAX_CHUNK);
    }
}

/// A Python iterator of keys, values or `(key, value)` tuples.
#[pyclass(frozen, module = "shale", name = "Iterator")]
pub struct PyIter {
    state: Mutex<State>,
}

impl PyIter {
    pub fn new(it: DbIterator, mode: Mode, reverse: bool, snap: Option<Arc<Snapshot>>) -> PyIter {
        PyIter {
            state: Mutex::new(State {
                it,
                mode,
                reverse,
                positioned: false,
                done: false,
                err: None,
                buf: Vec::new(),
                spans: Vec::new(),
                pos: 0,
                chunk: 1,
                _snap: snap,
            }),
        }
    }
}

#[pymethods]
impl PyIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let Some(mut guard) = self.state.try_lock() else {
            return Err(PyRuntimeError::new_err(
                "iterator already in use by another thread",
            ));
        };
        let st = &mut *guard;
        if st.pos == st.spans.len() {
            if !st.done {
                py.allow_threads(|| st.fill());
            }
            if st.pos == st.spans.len() {
                return match st.err.take() {
                    Some(e) => Err(to_py(e)),
                    None => Ok(None),
                };
            }
        }
        let (ks, ke, ve) = st.spans[st.pos];
        st.pos += 1;
        let obj = match st.mode {
            Mode::Keys => PyBytes::new(py, &st.buf[ks..ke]).into_any().unbind(),
            Mode::Values => PyBytes::new(py, &st.buf[ke..ve]).into_any().unbind(),
            Mode::Items => {
                let k = PyBytes::new(py, &st.buf[ks..ke]);
                let v = PyBytes::new(py, &st.buf[ke..ve]);
                PyTuple::new(py, [k, v])?.into_any().unbind()
            }
        };
        Ok(Some(obj))
    }
}
