//! The `shale` Python module: Shale's engine behind a dict-like API.
//!
//! | Python | file |
//! |---|---|
//! | `shale.DB` (writes, maintenance, column families) | `db.rs` |
//! | `shale.Reader` (reads; base of `DB` and `Snapshot`) | `reader.rs` |
//! | `shale.Snapshot` | `snapshot.rs` |
//! | `shale.Iterator` | `iter.rs` |
//! | `shale.WriteBatch` | `batch.rs` |
//! | exceptions | `errors.rs` |
//! | keyword options | `options.rs` |
//!
//! Keys and values are `bytes` (`str` is accepted and encoded as UTF-8);
//! reads return `bytes`. Every call that enters the engine releases the GIL,
//! so Python threads read and write in parallel.

mod args;
mod batch;
mod db;
mod errors;
mod iter;
mod keywords;
mod ops;
mod options;
mod reader;
mod snapshot;
mod stats;

use pyo3::prelude::*;

#[pymodule]
fn _shale(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<reader::Reader>()?;
    m.add_class::<db::PyDb>()?;
    m.add_class::<snapshot::PySnapshot>()?;
    m.add_class::<iter::PyIter>()?;
    m.add_class::<batch::Batch>()?;
    m.add_class::<ops::PyBackupEngine>()?;
    m.add_function(wrap_pyfunction!(db::list_column_families, m)?)?;
    m.add_function(wrap_pyfunction!(ops::write_sst, m)?)?;
    errors::register(m)?;
    Ok(())
}
