//! Flush: an immutable memtable of one column family becomes an L0 table.
//! `job` holds the computation; the DB's flush runner (db/flush_runner.rs)
//! schedules it, logs its edit and installs the result.

pub(crate) mod job;
