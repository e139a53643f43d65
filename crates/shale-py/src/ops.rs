//! Operations (issue 39) for Python: `shale.BackupEngine`, `shale.write_sst`
//! (an external table from sorted pairs, `SstFileWriter`), and
//! `DB.ingest` (in db.rs). Every engine call runs with the GIL released.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use shale::{BackupEngine, Options, SstFileWriter};

use crate::args::Bytes;
use crate::db::PyDb;
use crate::errors::to_py;

/// Backups of DBs in one directory (`shale::BackupEngine`): incremental
/// (tables and blob files shared between backups), verified by checksum,
/// restored into a new directory. `read_only=True` takes no lock and
/// allows list, verify and restore only.
#[pyclass(name = "BackupEngine", module = "shale")]
pub struct PyBackupEngine {
    engine: BackupEngine,
}

#[pymethods]
impl PyBackupEngine {
    /// `backup_rate_limit` / `restore_rate_limit`: bytes per second a
    /// backup reads or a restore copies (None: unpaced).
    #[new]
    #[pyo3(signature = (dir, *, read_only = false, backup_rate_limit = None, restore_rate_limit = None))]
    fn new(
        py: Python<'_>,
        dir: PathBuf,
        read_only: bool,
        backup_rate_limit: Option<u64>,
        restore_rate_limit: Option<u64>,
    ) -> PyResult<PyBackupEngine> {
        let fs = shale::fs::default_fs();
        let limiter = |rate: Option<u64>| -> PyResult<_> {
            rate.map(|r| shale::RateLimiter::new(r).map(std::sync::Arc::new))
                .transpose()
                .map_err(to_py)
        };
        let opts = shale::BackupEngineOptions {
            backup_rate_limiter: limiter(backup_rate_limit)?,
            restore_rate_limiter: limiter(restore_rate_limit)?,
            progress: None,
        };
        let engine = py
            .allow_threads(|| {
                if read_only {
                    BackupEngine::open_read_only_with(&dir, fs, opts)
                } else {
                    BackupEngine::open_with(&dir, fs, opts)
                }
            })
            .map_err(to_py)?;
        Ok(PyBackupEngine { engine })
    }

    /// Backs `db` up (every column family); returns the new backup's id.
    #[pyo3(signature = (db, metadata = ""))]
    fn create_backup(&self, py: Python<'_>, db: PyRef<'_, PyDb>, metadata: &str) -> PyResult<u32> {
        let db = db.as_super().db.clone();
        py.allow_threads(|| self.engine.create_backup_with_metadata(&db, metadata))
            .map_err(to_py)
    }

    /// Every backup, oldest first: dicts with id, timestamp, size,
    /// file_count, sequence, app_metadata.
    fn list<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let list = py.allow_threads(|| self.engine.list()).map_err(to_py)?;
        list.iter()
            .map(|b| {
                let d = PyDict::new(py);
                d.set_item("id", b.id)?;
                d.set_item("timestamp", b.timestamp)?;
                d.set_item("size", b.size)?;
                d.set_item("file_count", b.file_count)?;
                d.set_item("sequence", b.sequence)?;
                d.set_item("app_metadata", &b.app_metadata)?;
                Ok(d)
            })
            .collect()
    }

    /// Checks every file of backup `id` (CorruptionError naming the file).
    fn verify(&self, py: Python<'_>, id: u32) -> PyResult<()> {
        py.allow_threads(|| self.engine.verify(id)).map_err(to_py)
    }

    /// Restores backup `id` into `target`, which must not exist.
    fn restore(&self, py: Python<'_>, id: u32, target: PathBuf) -> PyResult<()> {
        py.allow_threads(|| self.engine.restore(id, &target))
            .map_err(to_py)
    }

    /// Copies the WALs of `db` (opened with WAL archiving:
    /// `WAL_size_limit_MB` or `WAL_ttl_seconds`) into the backup
    /// directory for point-in-time restore; returns files_copied and
    /// bytes_copied.
    fn backup_wals<'py>(
        &self,
        py: Python<'py>,
        db: PyRef<'_, PyDb>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let db = db.as_super().db.clone();
        let r = py
            .allow_threads(|| self.engine.backup_wals(&db))
            .map_err(to_py)?;
        let d = PyDict::new(py);
        d.set_item("files_copied", r.files_copied)?;
        d.set_item("bytes_copied", r.bytes_copied)?;
        Ok(d)
    }

    /// Restores into `target` (which must not exist) the DB as it was right
    /// after the write with sequence number `sequence`; returns backup_id,
    /// sequence and wal_files. InvalidArgumentError names why a point
    /// cannot be restored exactly.
    fn restore_to<'py>(
        &self,
        py: Python<'py>,
        target: PathBuf,
        sequence: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = py
            .allow_threads(|| self.engine.restore_to(&target, sequence))
            .map_err(to_py)?;
        pitr_dict(py, &r)
    }

    /// `restore_to` the latest write made at or before `timestamp` (Unix
    /// seconds) as the WALs' time records place it.
    fn restore_to_time<'py>(
        &self,
        py: Python<'py>,
        target: PathBuf,
        timestamp: f64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let at = std::time::Duration::try_from_secs_f64(timestamp)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        let r = py
            .allow_threads(|| {
                self.engine
                    .restore_to_time(&target, std::time::UNIX_EPOCH + at)
            })
            .map_err(to_py)?;
        pitr_dict(py, &r)
    }

    /// Deletes backup `id`.
    fn delete(&self, py: Python<'_>, id: u32) -> PyResult<()> {
        py.allow_threads(|| self.engine.delete(id)).map_err(to_py)
    }

    /// Deletes every backup but the newest `keep`.
    fn purge_old(&self, py: Python<'_>, keep: usize) -> PyResult<()> {
        py.allow_threads(|| self.engine.purge_old(keep))
            .map_err(to_py)
    }
}

fn pitr_dict<'py>(py: Python<'py>, r: &shale::PointInTimeRestore) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("backup_id", r.backup_id)?;
    d.set_item("sequence", r.sequence)?;
    d.set_item("wal_files", r.wal_files)?;
    Ok(d)
}

/// Writes `items` (pairs of keys and values in strictly increasing key
/// order) into a new external table at `path` for `DB.ingest`, with the
/// default table options; returns its path, smallest and largest key and
/// entry count.
#[pyfunction]
pub fn write_sst<'py>(
    py: Python<'py>,
    path: PathBuf,
    items: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut w = SstFileWriter::new(&Options::default());
    w.open(&path).map_err(to_py)?;
    for item in items.try_iter()? {
        let (k, v): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
        w.put(&Bytes::of(&k)?, &Bytes::of(&v)?).map_err(to_py)?;
    }
    let info = py.allow_threads(|| w.finish()).map_err(to_py)?;
    let d = PyDict::new(py);
    d.set_item("path", &info.file_path)?;
    d.set_item(
        "smallest_key",
        pyo3::types::PyBytes::new(py, &info.smallest_key),
    )?;
    d.set_item(
        "largest_key",
        pyo3::types::PyBytes::new(py, &info.largest_key),
    )?;
    d.set_item("num_entries", info.num_entries)?;
    Ok(d)
}
