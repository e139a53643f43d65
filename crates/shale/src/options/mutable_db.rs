//! The DB-wide options that change while the DB is open
//! (`Db::set_db_options`, RocksDB's `SetDBOptions`): background job count,
//! subcompactions, the delayed-write rate, the WAL size limit, the
//! `bytes_per_sync` pair and compaction readahead.
//!
//! Each is an atomic read where the decision is made (the scheduler, a
//! stalled writer, a job or WAL file when it starts), so a change applies
//! to the next such decision; jobs and WAL files already started keep what
//! they read. A change is validated as a whole `Options` before any value
//! is stored.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::error::{Error, Result};

use super::db_text::set_db_option;
use super::Options;
use crate::base::declare::flatten;

/// The options `Db::set_db_options` takes: those declared `mutable` (the
/// variants of [`DbOption`](super::DbOption)), in OPTIONS file order.
fn names() -> Vec<String> {
    flatten(Options::DECLARED)
        .into_iter()
        .filter(|(_, _, mutable, _)| *mutable)
        .map(|(n, ..)| n)
        .collect()
}

/// The current values (see the module comment).
#[derive(Debug)]
pub(crate) struct MutableDbOptions {
    max_background_jobs: AtomicUsize,
    max_subcompactions: AtomicUsize,
    delayed_write_rate: AtomicU64,
    max_total_wal_size: AtomicU64,
    bytes_per_sync: AtomicU64,
    wal_bytes_per_sync: AtomicU64,
    compaction_readahead_size: AtomicUsize,
}

impl MutableDbOptions {
    pub(crate) fn new(o: &Options) -> Self {
        MutableDbOptions {
            max_background_jobs: AtomicUsize::new(o.max_background_jobs),
            max_subcompactions: AtomicUsize::new(o.max_subcompactions),
            delayed_write_rate: AtomicU64::new(o.delayed_write_rate),
            max_total_wal_size: AtomicU64::new(o.max_total_wal_size),
            bytes_per_sync: AtomicU64::new(o.bytes_per_sync),
            wal_bytes_per_sync: AtomicU64::new(o.wal_bytes_per_sync),
            compaction_readahead_size: AtomicUsize::new(o.compaction_readahead_size),
        }
    }

    /// Stores `o`'s values (validated by the caller).
    pub(crate) fn store(&self, o: &Options) {
        let r = Ordering::Release;
        self.max_background_jobs.store(o.max_background_jobs, r);
        self.max_subcompactions.store(o.max_subcompactions, r);
        self.delayed_write_rate.store(o.delayed_write_rate, r);
        self.max_total_wal_size.store(o.max_total_wal_size, r);
        self.bytes_per_sync.store(o.bytes_per_sync, r);
        self.wal_bytes_per_sync.store(o.wal_bytes_per_sync, r);
        self.compaction_readahead_size
            .store(o.compaction_readahead_size, r);
    }

    /// Writes the current values into `o`.
    pub(crate) fn apply_to(&self, o: &mut Options) {
        o.max_background_jobs = self.max_background_jobs();
        o.max_subcompactions = self.max_subcompactions();
        o.delayed_write_rate = self.delayed_write_rate();
        o.max_total_wal_size = self.max_total_wal_size();
        o.bytes_per_sync = self.bytes_per_sync();
        o.wal_bytes_per_sync = self.wal_bytes_per_sync();
        o.compaction_readahead_size = self.compaction_readahead_size();
    }

    pub(crate) fn max_background_jobs(&self) -> usize {
        self.max_background_jobs.load(Ordering::Acquire)
    }
    pub(crate) fn max_subcompactions(&self) -> usize {
        self.max_subcompactions.load(Ordering::Acquire)
    }
    pub(crate) fn delayed_write_rate(&self) -> u64 {
        self.delayed_write_rate.load(Ordering::Acquire)
    }
    pub(crate) fn max_total_wal_size(&self) -> u64 {
        self.max_total_wal_size.load(Ordering::Acquire)
    }
    pub(crate) fn bytes_per_sync(&self) -> u64 {
        self.bytes_per_sync.load(Ordering::Acquire)
    }
    pub(crate) fn wal_bytes_per_sync(&self) -> u64 {
        self.wal_bytes_per_sync.load(Ordering::Acquire)
    }
    pub(crate) fn compaction_readahead_size(&self) -> usize {
        self.compaction_readahead_size.load(Ordering::Acquire)
    }
}

/// Sets DB-wide option `name` of `o` from its text `value`; a name not
/// in the list `Db::set_db_options` takes, or a bad value, is
/// `InvalidArgument`.
pub(crate) fn set(o: &mut Options, name: &str, value: &str) -> Result<()> {
    let names = names();
    if !names.iter().any(|n| n == name) {
        return Err(Error::InvalidArgument(format!(
            "set_db_options: {name:?} is not a DB option that changes while open \
             (those are {}; column family options go to set_options)",
            names.join(", ")
        )));
    }
    set_db_option(o, name, value)
}

impl super::DbOption {
    /// The typed change of `Db::set_db_options_from_strings(&[(name,
    /// value)])`: the string form parsed. A name that is not a DB option
    /// changing while open, or a bad value, is `InvalidArgument`.
    pub fn parse(name: &str, value: &str) -> Result<super::DbOption> {
        crate::base::declare::parse_change(
            Options::DECLARED,
            &Options::default(),
            name,
            value,
            |o, n, v| o.set_text(n, n, v),
            super::DbOption::from_field,
            "set_db_options",
        )
    }
}

#[cfg(test)]
mod tests;
