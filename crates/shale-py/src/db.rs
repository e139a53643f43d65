//! `shale.DB`: an open DB, or one of its column families.
//!
//! A `DB` object is an engine handle plus a column family: `shale.DB(path)`
//! is the `default` family, `db.column_family(name)` another one of the
//! same DB (closing any of them closes the DB). Reads come from `Reader`,
//! its base class; this file has writes, snapshots, batches, maintenance and
//! column-family management.
//!
//! Every engine call runs with the GIL released. A single write with
//! `sync=True` (or a `ttl`) is a one-entry batch, as the engine's own
//! single-key calls are.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyType};
use shale::{Db, WriteBatch, WriteOptions};

use crate::args::Bytes;
use crate::batch::Batch;
use crate::errors::{invalid, to_py};
use crate::options;
use crate::reader::Reader;
use crate::snapshot::PySnapshot;

/// `ttl` seconds as a duration; `InvalidArgumentError` unless finite and
/// positive.
pub fn ttl_duration(ttl: f64) -> PyResult<Duration> {
    if !(ttl.is_finite() && ttl > 0.0) {
        return Err(invalid(format!(
            "ttl must be a positive number of seconds, not {ttl}"
        )));
    }
    Duration::try_from_secs_f64(ttl).map_err(|e| invalid(format!("ttl {ttl}: {e}")))
}

/// An open DB bound to one column family; see the module header.
#[pyclass(extends = Reader, frozen, module = "shale", name = "DB")]
pub struct PyDb {
    num_levels: usize,
    family: String,
}

/// Engine handle and family of `slf`.
fn parts<'a>(slf: &'a PyRef<'_, PyDb>) -> &'a Reader {
    slf.as_super()
}

/// Writes `batch` with `sync`, GIL released.
fn write_one(py: Python<'_>, db: &Db, batch: WriteBatch, sync: bool) -> PyResult<()> {
    let opts = WriteOptions {
        sync,
        ..WriteOptions::default()
    };
    py.allow_threads(|| db.write(batch, &opts)).map_err(to_py)
}

fn child(
    py: Python<'_>,
    r: &Reader,
    cf: shale::Cf,
    num_levels: usize,
    family: String,
) -> PyResult<Py<PyDb>> {
    let init = PyClassInitializer::from(r.family(cf)).add_subclass(PyDb { num_levels, family });
    Py::new(py, init)
}

#[pymethods]
impl PyDb {
    /// Opens (by default creating) the DB at `path`; `options` are RocksDB's
    /// option names (see `shale.DB.__doc__` in the stubs), anything else is
    /// refused with `InvalidArgumentError`. `read_only` opens it as
    /// `Db::open_read_only` does (no LOCK, nothing written; changes raise
    /// `shale.Error`), and creates nothing.
    #[new]
    #[pyo3(signature = (path, create_if_missing = true, read_only = false, **options))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        create_if_missing: bool,
        read_only: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<(PyDb, Reader)> {
        let opts = options::db_options(create_if_missing && !read_only, options)?;
        let num_levels = opts.num_levels;
        let db = py
            .allow_threads(|| {
                if read_only {
                    Db::open_read_only(&path, opts)
                } else {
                    Db::open(&path, opts)
                }
            })
            .map_err(to_py)?;
        let cf = db.default_cf();
        Ok((
            PyDb {
                num_levels,
                family: "default".to_string(),
            },
            Reader::open(db, cf),
        ))
    }

    /// The DB directory.
    #[getter]
    fn path(slf: PyRef<'_, Self>) -> PathBuf {
        parts(&slf).db.path().to_path_buf()
    }

    /// The column family this object reads and writes.
    #[getter]
    fn name(&self) -> &str {
        &self.family
    }

    /// Sets `key` to `value`; with `ttl` (seconds) it expires then; with
    /// `sync` the WAL is synced before returning.
    #[pyo3(signature = (key, value, *, ttl = None, sync = false))]
    fn put(
        slf: PyRef<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        ttl: Option<f64>,
        sync: bool,
    ) -> PyResult<()> {
        let py = slf.py();
        let r = parts(&slf);
        let (key, value) = (Bytes::of(key)?, Bytes::of(value)?);
        if ttl.is_none() && !sync {
            return py
                .allow_threads(|| r.db.put_cf(&r.cf, &key, &value))
                .map_err(to_py);
        }
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 40);
        match ttl {
            Some(t) => {
                let at = r.db.expiry_after(ttl_duration(t)?);
                b.put_cf_with_expiry(&r.cf, &key, &value, at);
            }
            None => b.put_cf(&r.cf, &key, &value),
        }
        write_one(py, &r.db, b, sync)
    }

    fn __setitem__(
        slf: PyRef<'_, Self>,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let r = parts(&slf);
        let (key, value) = (Bytes::of(key)?, Bytes::of(value)?);
        py.allow_threads(|| r.db.put_cf(&r.cf, &key, &value))
            .map_err(to_py)
    }

    /// Deletes `key` (absent or not: an LSM delete does not read).
    #[pyo3(signature = (key, *, sync = false))]
    fn delete(slf: PyRef<'_, Self>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        let py = slf.py();
        let r = parts(&slf);
        let key = Bytes::of(key)?;
        if !sync {
            return py
                .allow_threads(|| r.db.delete_cf(&r.cf, &key))
                .map_err(to_py);
        }
        let mut b = WriteBatch::new();
        b.delete_cf(&r.cf, &key);
        write_one(py, &r.db, b, sync)
    }

    fn __delitem__(slf: PyRef<'_, Self>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        Self::delete(slf, key, false)
    }

    /// Deletes `key`, written once since its last deletion (RocksDB's
    /// SingleDelete contract).
    #[pyo3(signature = (key, *, sync = false))]
    fn single_delete(slf: PyRef<'_, Self>, key: &Bound<'_, PyAny>, sync: bool) -> PyResult<()> {
        let r = parts(&slf);
        let key = Bytes::of(key)?;
        let mut b = WriteBatch::new();
        b.single_delete_cf(&r.cf, &key);
        write_one(slf.py(), &r.db, b, sync)
    }

    /// Adds merge `operand` to `key` (the family's `merge_operator`).
    #[pyo3(signature = (key, operand, *, sync = false))]
    fn merge(
        slf: PyRef<'_, Self>,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let r = parts(&slf);
        let (key, operand) = (Bytes::of(key)?, Bytes::of(operand)?);
        let mut b = WriteBatch::with_capacity(key.len() + operand.len() + 24);
        b.merge_cf(&r.cf, &key, &operand);
        write_one(slf.py(), &r.db, b, sync)
    }

    /// Deletes every key in `[start, end)` with one range tombstone.
    #[pyo3(signature = (start, end, *, sync = false))]
    fn delete_range(
        slf: PyRef<'_, Self>,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        sync: bool,
    ) -> PyResult<()> {
        let r = parts(&slf);
        let (start, end) = (Bytes::of(start)?, Bytes::of(end)?);
        let mut b = WriteBatch::new();
        b.delete_range_cf(&r.cf, &start, &end);
        write_one(slf.py(), &r.db, b, sync)
    }

    /// Applies `batch` atomically.
    #[pyo3(signature = (batch, *, sync = false, disable_wal = false))]
    fn write(
        slf: PyRef<'_, Self>,
        batch: &Bound<'_, Batch>,
        sync: bool,
        disable_wal: bool,
    ) -> PyResult<()> {
        let r = parts(&slf);
        let contents = batch.get().contents();
        let opts = WriteOptions { sync, disable_wal };
        slf.py()
            .allow_threads(|| r.db.write(contents, &opts))
            .map_err(to_py)
    }

    /// A batch bound to this DB: as a context manager it is written when
    /// the block ends without an exception.
    #[pyo3(signature = (*, sync = false, disable_wal = false))]
    fn write_batch(slf: PyRef<'_, Self>, sync: bool, disable_wal: bool) -> Batch {
        Batch::bound(parts(&slf).db.clone(), WriteOptions { sync, disable_wal })
    }

    /// A consistent point-in-time view (of every family; reads this one).
    fn snapshot(slf: PyRef<'_, Self>) -> PyResult<Py<PySnapshot>> {
        let r = parts(&slf);
        r.check_open()?;
        let init = PyClassInitializer::from(r.snapshot_reader()).add_subclass(PySnapshot);
        Py::new(slf.py(), init)
    }

    /// Flushes this family's memtable to a table file.
    fn flush(slf: PyRef<'_, Self>) -> PyResult<()> {
        let r = parts(&slf);
        slf.py()
            .allow_threads(|| r.db.flush_cf(&r.cf))
            .map_err(to_py)
    }

    /// Hands the WAL's buffered bytes to the OS (and syncs with `sync`):
    /// needed with `manual_wal_flush=True`.
    #[pyo3(signature = (sync = false))]
    fn flush_wal(slf: PyRef<'_, Self>, sync: bool) -> PyResult<()> {
        let r = parts(&slf);
        slf.py()
            .allow_threads(|| r.db.flush_wal(sync))
            .map_err(to_py)
    }

    /// Compacts keys in `[start, end]` (None: unbounded) down the levels.
    #[pyo3(signature = (start = None, end = None))]
    fn compact_range(
        slf: PyRef<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let r = parts(&slf);
        let start = start.map(Bytes::of).transpose()?;
        let end = end.map(Bytes::of).transpose()?;
        slf.py()
            .allow_threads(|| {
                r.db.compact_range_cf(&r.cf, start.as_deref(), end.as_deref())
            })
            .map_err(to_py)
    }

    /// Rewrites what no read can return in `[start, end]` (deleted,
    /// overwritten, expired); returns the bytes of table files freed.
    #[pyo3(signature = (start = None, end = None))]
    fn reclaim(
        slf: PyRef<'_, Self>,
        start: Option<&Bound<'_, PyAny>>,
        end: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let r = parts(&slf);
        let start = start.map(Bytes::of).transpose()?;
        let end = end.map(Bytes::of).transpose()?;
        slf.py()
            .allow_threads(|| {
                r.db.reclaim_cf(&r.cf, start.as_deref(), end.as_deref(), |_| {})
            })
            .map_err(to_py)
    }

    /// The sequence number of the last write visible to reads (a point
    /// `BackupEngine.restore_to` can restore to).
    fn latest_sequence_number(slf: PyRef<'_, Self>) -> u64 {
        parts(&slf).db.latest_sequence_number()
    }

    /// Makes an openable copy of the whole DB (every column family) in
    /// `dir`, which must not exist: tables and blob files hard-linked, the
    /// MANIFEST, OPTIONS and live WALs copied, built in `dir.tmp` and
    /// renamed into place. `log_size_for_flush` as RocksDB's: 0 flushes
    /// the memtables first; otherwise only when the live WALs are larger.
    /// Returns what was linked and copied.
    #[pyo3(signature = (dir, *, log_size_for_flush = 0))]
    fn checkpoint<'py>(
        slf: PyRef<'py, Self>,
        dir: PathBuf,
        log_size_for_flush: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = parts(&slf);
        let opts = shale::CheckpointOptions { log_size_for_flush };
        let report = slf
            .py()
            .allow_threads(|| r.db.checkpoint_with(&dir, &opts))
            .map_err(to_py)?;
        let out = PyDict::new(slf.py());
        out.set_item("flushed", report.flushed)?;
        out.set_item("files_linked", report.files_linked)?;
        out.set_item("bytes_linked", report.bytes_linked)?;
        out.set_item("files_copied", report.files_copied)?;
        out.set_item("bytes_copied", report.bytes_copied)?;
        out.set_item("wal_files", report.wal_files)?;
        Ok(out)
    }

    /// Ingests external table files (from `shale.write_sst` or
    /// `shale sst write`) into this family, all or none, with RocksDB's
    /// `IngestExternalFileOptions` (`move_files` hard-links them in and
    /// removes the given names).
    #[pyo3(signature = (
        files,
        *,
        move_files = false,
        snapshot_consistency = true,
        allow_global_seqno = true,
        allow_blocking_flush = true,
        verify_checksums_before_ingest = false,
        fail_if_not_bottommost_level = false,
        ingest_behind = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn ingest(
        slf: PyRef<'_, Self>,
        files: Vec<PathBuf>,
        move_files: bool,
        snapshot_consistency: bool,
        allow_global_seqno: bool,
        allow_blocking_flush: bool,
        verify_checksums_before_ingest: bool,
        fail_if_not_bottommost_level: bool,
        ingest_behind: bool,
    ) -> PyResult<()> {
        let r = parts(&slf);
        let opts = shale::IngestOptions {
            move_files,
            snapshot_consistency,
            allow_global_seqno,
            allow_blocking_flush,
            verify_checksums_before_ingest,
            fail_if_not_bottommost_level,
            ingest_behind,
        };
        slf.py()
            .allow_threads(|| r.db.ingest_external_file_cf(&r.cf, &files, &opts))
            .map_err(to_py)
    }

    /// Waits until no flush or compaction is pending or running.
    fn wait_for_compaction(slf: PyRef<'_, Self>) -> PyResult<()> {
        let r = parts(&slf);
        slf.py()
            .allow_threads(|| r.db.wait_for_compaction())
            .map_err(to_py)
    }

    /// An engine property of this family (`shale.stats`,
    /// `shale.estimate-num-keys`, ...), or None if unknown.
    fn property(slf: PyRef<'_, Self>, name: &str) -> PyResult<Option<String>> {
        let r = parts(&slf);
        r.check_open()?;
        Ok(r.db.property_cf(&r.cf, name))
    }

    /// The family's numeric properties as a dict (names without `shale.`,
    /// dashes as underscores); key counts are estimates and named so.
    fn stats<'py>(slf: PyRef<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let py = slf.py();
        let r = parts(&slf);
        r.check_open()?;
        let out = PyDict::new(py);
        for name in crate::stats::NUMERIC {
            if let Some(v) = r.db.property_cf(&r.cf, &format!("shale.{name}")) {
                if let Ok(n) = v.trim().parse::<u64>() {
                    out.set_item(name.replace('-', "_"), n)?;
                }
            }
        }
        let files = pyo3::types::PyList::empty(py);
        for level in 0..slf.num_levels {
            let n =
                r.db.property_cf(&r.cf, &format!("shale.num-files-at-level{level}"))
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0);
            files.append(n)?;
        }
        out.set_item("num_files_at_level", files)?;
        if let Some(json) = r.db.property_cf(&r.cf, "shale.compaction-stats-json") {
            let loads = py.import("json")?.getattr("loads")?;
            out.set_item("compaction", loads.call1((json,))?)?;
        }
        Ok(out)
    }

    /// Changes options of this family (or of `cf`, a family of the same
    /// DB) while the DB is open: RocksDB's `SetOptions`. `options` maps
    /// names to values: the OPTIONS file's names (`compression_per_level`,
    /// `compaction_options_universal.size_ratio`) or `shale.DB()`'s keyword
    /// names; values are `str` (the OPTIONS file's text), `bool`, `int` or
    /// `float`. All apply or none: an unknown name, one that changes only
    /// on reopen (`compaction_style`, `merge_operator`, `block_align`, ...),
    /// a bad value or a refused combination is `InvalidArgumentError` and
    /// changes nothing. The default family's changes last until the DB is
    /// closed; another family's are persisted with it.
    #[pyo3(signature = (options, cf = None))]
    fn set_options(
        slf: PyRef<'_, Self>,
        options: &Bound<'_, PyDict>,
        cf: Option<&Bound<'_, PyDb>>,
    ) -> PyResult<()> {
        let r = parts(&slf);
        r.check_open()?;
        let target = cf.map(|c| c.as_super().get());
        let family = &target.unwrap_or(r).cf;
        let changes = options::set_changes(options)?;
        let changes: Vec<(&str, &str)> = changes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        slf.py()
            .allow_threads(|| r.db.set_options_cf_from_strings(family, &changes))
            .map_err(to_py)
    }

    /// Changes DB-wide options while the DB is open: RocksDB's
    /// `SetDBOptions`. `options` maps the OPTIONS file's `[DBOptions]`
    /// names (`max_background_jobs`, `max_subcompactions`,
    /// `delayed_write_rate`, `max_total_wal_size`, `bytes_per_sync`,
    /// `wal_bytes_per_sync`, `compaction_readahead_size`) to values: `str`
    /// (the OPTIONS file's text), `bool`, `int` or `float`. All apply or
    /// none: an empty dict, any other name (a family's option goes to
    /// `set_options`) or a bad value is `InvalidArgumentError` and changes
    /// nothing. The changes last until the DB is closed and show in a new
    /// OPTIONS file.
    fn set_db_options(slf: PyRef<'_, Self>, options: &Bound<'_, PyDict>) -> PyResult<()> {
        let r = parts(&slf);
        r.check_open()?;
        let changes = options::set_db_changes(options)?;
        let changes: Vec<(&str, &str)> = changes
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        slf.py()
            .allow_threads(|| r.db.set_db_options_from_strings(&changes))
            .map_err(to_py)
    }

    /// A few current options of this family (or of `cf`): the sizes,
    /// counts and triggers `set_options` changes, named as it takes them.
    #[pyo3(signature = (cf = None))]
    fn get_options<'py>(
        slf: PyRef<'py, Self>,
        cf: Option<&Bound<'py, PyDb>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = parts(&slf);
        r.check_open()?;
        let target = cf.map(|c| c.as_super().get());
        let opts = r.db.cf_options(&target.unwrap_or(r).cf).map_err(to_py)?;
        options::current(slf.py(), &opts)
    }

    /// The DB's column family names.
    fn column_families(slf: PyRef<'_, Self>) -> PyResult<Vec<String>> {
        let r = parts(&slf);
        r.check_open()?;
        Ok(r.db.cfs().iter().map(|c| c.name().to_string()).collect())
    }

    /// Family `name` of this DB; `InvalidArgumentError` if it does not exist.
    fn column_family(slf: PyRef<'_, Self>, name: &str) -> PyResult<Py<PyDb>> {
        let r = parts(&slf);
        r.check_open()?;
        let cf =
            r.db.cf(name)
                .ok_or_else(|| invalid(format!("no column family '{name}'")))?;
        child(slf.py(), r, cf, slf.num_levels, name.to_string())
    }

    /// Creates family `name` with per-family `options`.
    #[pyo3(signature = (name, **options))]
    fn create_column_family(
        slf: PyRef<'_, Self>,
        name: &str,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyDb>> {
        let r = parts(&slf);
        let opts = options::cf_options(options)?;
        let cf = slf
            .py()
            .allow_threads(|| r.db.create_cf(name, opts))
            .map_err(to_py)?;
        child(slf.py(), r, cf, slf.num_levels, name.to_string())
    }

    /// Exports family `cf` (a name) into `dir`, which must not exist: its
    /// tables and blob files hard-linked and `EXPORT-METADATA.json`
    /// (RocksDB's `ExportColumnFamily`). Returns the metadata: the family,
    /// the comparator and merge operator names, and per table its name,
    /// level, size and sequence range.
    fn export_column_family<'py>(
        slf: PyRef<'py, Self>,
        cf: &str,
        dir: PathBuf,
    ) -> PyResult<Bound<'py, PyDict>> {
        let r = parts(&slf);
        r.check_open()?;
        let fam =
            r.db.cf(cf)
                .ok_or_else(|| invalid(format!("no column family '{cf}'")))?;
        let meta = slf
            .py()
            .allow_threads(|| r.db.export_column_family(&fam, &dir))
            .map_err(to_py)?;
        let py = slf.py();
        let out = PyDict::new(py);
        out.set_item("column_family", &meta.column_family)?;
        out.set_item("comparator", &meta.comparator)?;
        out.set_item("merge_operator", meta.merge_operator.as_deref())?;
        let tables = pyo3::types::PyList::empty(py);
        for t in &meta.tables {
            let d = PyDict::new(py);
            d.set_item("name", &t.name)?;
            d.set_item("level", t.level)?;
            d.set_item("file_size", t.file_size)?;
            d.set_item("smallest_seqno", t.smallest_seqno)?;
            d.set_item("largest_seqno", t.largest_seqno)?;
            d.set_item("num_entries", t.num_entries)?;
            tables.append(d)?;
        }
        out.set_item("tables", tables)?;
        let blobs: Vec<&str> = meta.blob_files.iter().map(|b| b.name.as_str()).collect();
        out.set_item("blob_files", blobs)?;
        Ok(out)
    }

    /// Creates family `name` holding the files of the export in `dir`
    /// (from `export_column_family`, perhaps by another process) at their
    /// levels, with per-family `options` (the merge operator must be the
    /// exported family's); `move_files` hard-links the files in and
    /// removes their names from `dir`.
    #[pyo3(signature = (name, dir, *, move_files = false, **options))]
    fn create_column_family_with_import(
        slf: PyRef<'_, Self>,
        name: &str,
        dir: PathBuf,
        move_files: bool,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyDb>> {
        let r = parts(&slf);
        r.check_open()?;
        let opts = options::cf_options(options)?;
        let io = shale::ImportOptions { move_files };
        let cf = slf
            .py()
            .allow_threads(|| {
                let meta = shale::ExportMetadata::load(&dir)?;
                r.db.create_column_family_with_import(name, &opts, &meta, &io)
            })
            .map_err(to_py)?;
        child(slf.py(), r, cf, slf.num_levels, name.to_string())
    }

    /// Drops family `name` (its data is deleted once no reader needs it).
    fn drop_column_family(slf: PyRef<'_, Self>, name: &str) -> PyResult<()> {
        let r = parts(&slf);
        let cf =
            r.db.cf(name)
                .ok_or_else(|| invalid(format!("no column family '{name}'")))?;
        slf.py().allow_threads(|| r.db.drop_cf(&cf)).map_err(to_py)
    }

    /// Closes the DB (every family of it): later calls on it, its families,
    /// snapshots and iterators raise `ClosedError`. Closing twice is fine.
    fn close(slf: PyRef<'_, Self>) -> PyResult<()> {
        let r = parts(&slf);
        r.mark_closed();
        let db = r.db.clone();
        slf.py().allow_threads(|| db.close()).map_err(to_py)
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        slf: PyRef<'_, Self>,
        _exc_type: Option<&Bound<'_, PyType>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        Self::close(slf)?;
        Ok(false)
    }

    fn __repr__(slf: PyRef<'_, Self>) -> String {
        format!(
            "shale.DB({:?}, column_family={:?})",
            parts(&slf).db.path().display().to_string(),
            slf.family
        )
    }
}

/// The column family names of the DB at `path` (without opening it).
#[pyfunction]
pub fn list_column_families(py: Python<'_>, path: PathBuf) -> PyResult<Vec<String>> {
    py.allow_threads(|| Db::list_cfs(&path, &shale::Options::default()))
        .map_err(to_py)
}
