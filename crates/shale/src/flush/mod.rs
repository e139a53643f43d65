//! Flush: an immutable memtable of one column family becomes an L0 table.
//! `job` holds the computation (the memtable's entries through `build/`
//! into tables); `runner` runs it against the DB's state: picks the
//! memtables, writes the tables outside the DB mutex, syncs the closed
//! WALs, logs the edit and installs the result.

pub(crate) mod job;
pub(crate) mod runner;
