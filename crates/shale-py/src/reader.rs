//! `shale.Reader`: the read API shared by a DB, a column family and a
//! snapshot.
//!
//! A `Reader` is an engine handle (`Db` clone), a column family and, for a
//! snapshot, the engine snapshot it reads at. `shale.DB` and
//! `shale.Snapshot` are its Python subclasses, so `get`, `[]`, `in`,
//! `get_many`, `iter`, `items`, `keys` and `values` are written once.
//!
//! The GIL is released for every engine call (a read may wait for the
//! disk); the engine snapshot is taken out of its lock before that, so no
//! lock is held while the GIL is released.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use shale::{Cf, Db, ReadOptions, Snapshot};

use crate::args::{prefix_successor, Bytes};
use crate::errors::{to_py, ClosedError};
use crate::iter::{Mode, PyIter};

/// The read API; see the module header.
#[pyclass(subclass, frozen, module = "shale", name = "Reader")]
pub struct Reader {
    pub(crate) db: Db,
    pub(crate) cf: Cf,
    /// The snapshot read at: `None` for the live DB. A snapshot's is `Some`
    /// until released.
    snap: Mutex<Option<Arc<Snapshot>>>,
    is_snapshot: bool,
    /// Set by `DB.close()`, shared by every reader of the same open DB: the
    /// engine refuses reads and writes after close by itself, but still
    /// answers properties.
    closed: Arc<AtomicBool>,
}

impl Reader {
    /// A reader of the latest state of a newly opened DB's family `cf`.
    pub fn open(db: Db, cf: Cf) -> Reader {
        Reader {
            db,
            cf,
            snap: Mutex::new(None),
            is_snapshot: false,
            closed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A reader of the latest state of family `cf` of this reader's DB.
    pub fn family(&self, cf: Cf) -> Reader {
        Reader {
            db: self.db.clone(),
            cf,
            snap: Mutex::new(None),
            is_snapshot: false,
            closed: Arc::clone(&self.closed),
        }
    }

    /// A reader of this reader's family at a new snapshot.
    pub fn snapshot_reader(&self) -> Reader {
        Reader {
            db: self.db.clone(),
            cf: self.cf.clone(),
            snap: Mutex::new(Some(Arc::new(self.db.snapshot()))),
            is_snapshot: true,
            closed: Arc::clone(&self.closed),
        }
    }

    /// Marks the DB closed (for calls the engine still answers).
    pub fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// `ClosedError` once the DB was closed.
    pub fn check_open(&self) -> PyResult<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(ClosedError::new_err("the DB is closed"));
        }
        Ok(())
    }

    /// The snapshot to read at (`None`: the latest state); `ClosedError`
    /// for a released snapshot.
    fn snapshot(&self) -> PyResult<Option<Arc<Snapshot>>> {
        let s = self.snap.lock().clone();
        if self.is_snapshot && s.is_none() {
            return Err(ClosedError::new_err("the snapshot was released"));
        }
        Ok(s)
    }

    /// Drops the engine snapshot (reads through this reader fail after).
    pub fn release(&self) {
        self.snap.lock().take();
    }

    /// The engine snapshot's sequence number, if still held.
    pub fn sequence(&self) -> Option<u64> {
        self.snap.lock().as_ref().map(|s| s.sequence())
    }

    fn read(&self, py: Python<'_>, key: &[u8]) -> PyResult<Option<Py<PyBytes>>> {
        let snap = self.snapshot()?;
        let got = py.allow_threads(|| {
            let mut ro = ReadOptions::new();
            ro.snapshot = snap.as_deref();
            self.db.get_cf_opt(&self.cf, key, &ro)
        });
        Ok(got.map_err(to_py)?.map(|v| PyBytes::new(py, &v).unbind()))
    }

    fn make_iter(
        &self,
        mode: Mode,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyIter> {
        let snap = self.snapshot()?;
        let mut lower = start
            .map(|s| Bytes::of(s).map(|b| b.to_vec()))
            .transpose()?;
        let mut upper = stop.map(|s| Bytes::of(s).map(|b| b.to_vec())).transpose()?;
        if let Some(p) = prefix {
            let p = Bytes::of(p)?;
            if lower.as_deref().is_none_or(|l| l < &p[..]) {
                lower = Some(p.to_vec());
            }
            if let Some(end) = prefix_successor(&p) {
                if upper.as_deref().is_none_or(|u| u > &end[..]) {
                    upper = Some(end);
                }
            }
        }
        let mut ro = ReadOptions::new();
        ro.snapshot = snap.as_deref();
        ro.iterate_lower_bound = lower;
        ro.iterate_upper_bound = upper;
        let it = self.db.iter_cf(&self.cf, &ro);
        Ok(PyIter::new(it, mode, reverse, snap))
    }
}

#[pymethods]
impl Reader {
    /// The value of `key`, or `default` when it is absent.
    #[pyo3(signature = (key, default = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        default: Option<PyObject>,
    ) -> PyResult<PyObject> {
        let key = Bytes::of(key)?;
        Ok(match self.read(py, &key)? {
            Some(v) => v.into_any(),
            None => default.unwrap_or_else(|| py.None()),
        })
    }

    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
        let k = Bytes::of(key)?;
        match self.read(py, &k)? {
            Some(v) => Ok(v),
            None => Err(PyKeyError::new_err(key.clone().unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = Bytes::of(key)?;
        Ok(self.read(py, &key)?.is_some())
    }

    /// The values of `keys` (None where absent), read at one consistent
    /// point in time.
    fn get_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let objs: Vec<Bound<'py, PyAny>> = keys.try_iter()?.collect::<PyResult<_>>()?;
        let owned: Vec<Bytes<'_>> = objs.iter().map(Bytes::of).collect::<PyResult<_>>()?;
        let slices: Vec<&[u8]> = owned.iter().map(|b| &b[..]).collect();
        let snap = self.snapshot()?;
        let got = py.allow_threads(|| {
            let mut ro = ReadOptions::new();
            ro.snapshot = snap.as_deref();
            self.db.multi_get_cf(&self.cf, &slices, &ro)
        });
        let out = PyList::empty(py);
        for r in got {
            match r.map_err(to_py)? {
                Some(v) => out.append(PyBytes::new(py, &v))?,
                None => out.append(py.None())?,
            }
        }
        Ok(out)
    }

    /// `(key, value)` pairs in key order (descending with `reverse`), from
    /// `start` (inclusive) to `stop` (exclusive), only keys starting with
    /// `prefix` when given.
    #[pyo3(signature = (start = None, stop = None, prefix = None, reverse = false))]
    fn iter(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyIter> {
        self.make_iter(Mode::Items, start, stop, prefix, reverse)
    }

    /// `iter(...)`, as `(key, value)` pairs.
    #[pyo3(signature = (start = None, stop = None, prefix = None, reverse = false))]
    fn items(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyIter> {
        self.make_iter(Mode::Items, start, stop, prefix, reverse)
    }

    /// `iter(...)`, keys only.
    #[pyo3(signature = (start = None, stop = None, prefix = None, reverse = false))]
    fn keys(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyIter> {
        self.make_iter(Mode::Keys, start, stop, prefix, reverse)
    }

    /// `iter(...)`, values only.
    #[pyo3(signature = (start = None, stop = None, prefix = None, reverse = false))]
    fn values(
        &self,
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<PyIter> {
        self.make_iter(Mode::Values, start, stop, prefix, reverse)
    }

    /// Iterating a reader yields its keys, as a dict does.
    fn __iter__(&self) -> PyResult<PyIter> {
        self.make_iter(Mode::Keys, None, None, None, false)
    }
}
