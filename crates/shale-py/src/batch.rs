//! `shale.WriteBatch`: writes applied atomically by `db.write(batch)`.
//!
//! A batch made by `db.write_batch(sync=...)` is bound to its DB and, used as
//! a context manager, is written when the `with` block ends without an
//! exception (and dropped unwritten when it raises). A batch made by
//! `shale.WriteBatch()` is written with `db.write(batch)`. Writing a batch
//! leaves its contents in place (RocksDB's `Write` does too): write it again
//! or `clear()` it. Operations on another DB's column family are refused by
//! the engine at write time.

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::PyType;
use shale::{Db, WriteOptions};

use crate::args::Bytes;
use crate::errors::{invalid, to_py};
use crate::reader::Reader;

/// A write batch; see the module header.
#[pyclass(frozen, module = "shale", name = "WriteBatch")]
pub struct Batch {
    batch: Mutex<shale::WriteBatch>,
    /// Where a bound batch is written, and how.
    target: Option<(Db, WriteOptions)>,
}

impl Batch {
    pub fn bound(db: Db, opts: WriteOptions) -> Batch {
        Batch {
            batch: Mutex::new(shale::WriteBatch::new()),
            target: Some((db, opts)),
        }
    }

    /// A copy of the batch's contents, to write with the GIL released.
    pub fn contents(&self) -> shale::WriteBatch {
        self.batch.lock().clone()
    }
}

#[pymethods]
impl Batch {
    #[new]
    fn new() -> Batch {
        Batch {
            batch: Mutex::new(shale::WriteBatch::new()),
            target: None,
        }
    }

    /// Sets `key` to `value` in column family `cf` (a `DB` from
    /// `db.column_family(name)`; default: the default family); with `ttl`
    /// (seconds) the value expires that long after this call.
    #[pyo3(signature = (key, value, cf = None, ttl = None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, Reader>>,
        ttl: Option<f64>,
    ) -> PyResult<()> {
        let (key, value) = (Bytes::of(key)?, Bytes::of(value)?);
        let cf = cf.map(|c| c.get());
        let Some(ttl) = ttl else {
            let mut b = self.batch.lock();
            match cf {
                Some(r) => b.put_cf(&r.cf, &key, &value),
                None => b.put(&key, &value),
            }
            return Ok(());
        };
        // The expiry is a Unix second by the DB's clock.
        let db =
            match (cf, &self.target) {
                (Some(r), _) => &r.db,
                (None, Some((db, _))) => db,
                (None, None) => return Err(invalid(
                    "put with ttl in a batch from shale.WriteBatch() needs cf= (whose DB's clock \
                     sets the expiry); or use db.write_batch()",
                )),
            };
        let at = db.expiry_after(crate::db::ttl_duration(ttl)?);
        let mut b = self.batch.lock();
        match cf {
            Some(r) => b.put_cf_with_expiry(&r.cf, &key, &value, at),
            None => b.put_with_expiry(&key, &value, at),
        }
        Ok(())
    }

    /// Deletes `key`.
    #[pyo3(signature = (key, cf = None))]
    fn delete(&self, key: &Bound<'_, PyAny>, cf: Option<&Bound<'_, Reader>>) -> PyResult<()> {
        let key = Bytes::of(key)?;
        let mut b = self.batch.lock();
        match cf {
            Some(r) => b.delete_cf(&r.get().cf, &key),
            None => b.delete(&key),
        }
        Ok(())
    }

    /// Deletes `key`, written once since its last deletion (RocksDB's
    /// SingleDelete contract).
    #[pyo3(signature = (key, cf = None))]
    fn single_delete(
        &self,
        key: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, Reader>>,
    ) -> PyResult<()> {
        let key = Bytes::of(key)?;
        let mut b = self.batch.lock();
        match cf {
            Some(r) => b.single_delete_cf(&r.get().cf, &key),
            None => b.single_delete(&key),
        }
        Ok(())
    }

    /// Adds merge `operand` to `key` (the family's `merge_operator`).
    #[pyo3(signature = (key, operand, cf = None))]
    fn merge(
        &self,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, Reader>>,
    ) -> PyResult<()> {
        let (key, operand) = (Bytes::of(key)?, Bytes::of(operand)?);
        let mut b = self.batch.lock();
        match cf {
            Some(r) => b.merge_cf(&r.get().cf, &key, &operand),
            None => b.merge(&key, &operand),
        }
        Ok(())
    }

    /// Deletes every key in `[start, end)`.
    #[pyo3(signature = (start, end, cf = None))]
    fn delete_range(
        &self,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        cf: Option<&Bound<'_, Reader>>,
    ) -> PyResult<()> {
        let (start, end) = (Bytes::of(start)?, Bytes::of(end)?);
        let mut b = self.batch.lock();
        match cf {
            Some(r) => b.delete_range_cf(&r.get().cf, &start, &end),
            None => b.delete_range(&start, &end),
        }
        Ok(())
    }

    /// Removes every operation.
    fn clear(&self) {
        self.batch.lock().clear();
    }

    /// The number of operations.
    fn __len__(&self) -> usize {
        self.batch.lock().len()
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        if slf.target.is_none() {
            return Err(invalid(
                "only a batch from db.write_batch() is a context manager; write this one with db.write(batch)",
            ));
        }
        Ok(slf)
    }

    /// Writes the batch unless the block raised.
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let Some((db, opts)) = &self.target else {
            return Ok(false);
        };
        if exc_type.is_none() {
            let batch = self.contents();
            py.allow_threads(|| db.write(batch, opts)).map_err(to_py)?;
        }
        Ok(false)
    }
}
