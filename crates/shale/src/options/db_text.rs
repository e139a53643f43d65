//! The DB-wide options as the OPTIONS file holds them, by section, from
//! their declaration (`Options`, `declare_options!`): the file is written
//! from these lines (`options::file::render`) and read back with
//! [`set_db_option`] (used by `tools::load_latest_options`).
//!
//! Invariant: every persisted DB-wide option is in exactly one section;
//! the tests write every one and read it back.

use crate::error::{Error, Result};

use super::Options;
use crate::base::declare::{flatten, Section};

/// `(name, text)` of every DB-wide option of `o` in `section`, in file
/// order.
fn lines_in(o: &Options, section: Section) -> Vec<(String, String)> {
    o.text_lines()
        .into_iter()
        .filter(|l| l.section == section)
        .map(|l| (l.name, l.value))
        .collect()
}

/// `(name, text)` of every `[DBOptions]` option of `o`, in file order.
pub(crate) fn db_lines(o: &Options) -> Vec<(String, String)> {
    lines_in(o, Section::Db)
}

/// `(name, text)` of the DB-wide options of the `default` family's table
/// section, in file order.
pub(crate) fn table_lines(o: &Options) -> Vec<(String, String)> {
    lines_in(o, Section::DefaultTable)
}

/// `(name, text)` of the DB-wide options of the `default` family's
/// `[CFOptions]` section (`num_levels`).
pub(crate) fn cf_section_lines(o: &Options) -> Vec<(String, String)> {
    lines_in(o, Section::DefaultCf)
}

/// True when `name` is a DB-wide option written in one of the `default`
/// family's sections (not a family option).
pub(crate) fn is_db_option_of_default_family(name: &str) -> bool {
    flatten(Options::DECLARED)
        .iter()
        .any(|(n, _, _, s)| n == name && matches!(s, Section::DefaultTable | Section::DefaultCf))
}

/// Sets the DB-wide option `name` (of any section) of `o` from its OPTIONS
/// file text; an unknown name or a bad value is `InvalidArgument`.
pub(crate) fn set_db_option(o: &mut Options, name: &str, value: &str) -> Result<()> {
    if o.set_text(name, name, value)? {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "unknown DB option {name:?}"
    )))
}

impl Options {
    /// Sets the DB-wide option `name` from its text `value`, in the form
    /// of the OPTIONS file (`set_db_option("max_open_files", "500")`): the
    /// counterpart of [`CfOptions::set_option`]; does not validate the
    /// whole (see [`Options::validate`]). An unknown name or a bad value is
    /// `InvalidArgument`.
    pub fn set_db_option(&mut self, name: &str, value: &str) -> Result<()> {
        set_db_option(self, name, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::log_options::InfoLogLevel;
    use crate::options::CacheType;
    use crate::wal::WalRecoveryMode;

    #[test]
    fn every_field_is_written_and_read_back() {
        let mut o = Options {
            paranoid_checks: false,
            max_background_jobs: 7,
            max_subcompactions: 3,
            wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
            manual_wal_flush: true,
            wal_mmap_writes: false,
            bytes_per_sync: 11,
            wal_bytes_per_sync: 12,
            recycle_log_file_num: 2,
            delayed_write_rate: 13,
            max_total_wal_size: 14,
            max_open_files: 300,
            use_direct_reads: true,
            use_direct_io_for_flush_and_compaction: true,
            max_bgerror_resume_count: 4,
            bgerror_resume_retry_interval: 15,
            compaction_readahead_size: 16,
            info_log_level: InfoLogLevel::Warn,
            max_log_file_size: 17,
            keep_log_file_num: 5,
            cache_size: 18,
            cache_type: CacheType::Clock,
            max_auto_readahead_size: 19,
            ..Options::default()
        };
        let lines: Vec<(String, String)> =
            db_lines(&o).into_iter().chain(table_lines(&o)).collect();
        let mut back = Options::default();
        for (k, v) in &lines {
            set_db_option(&mut back, k, v).unwrap();
        }
        let again: Vec<(String, String)> = db_lines(&back)
            .into_iter()
            .chain(table_lines(&back))
            .collect();
        assert_eq!(lines, again);
        // Every value differs from its default, so each field was really set.
        let defaults: Vec<(String, String)> = db_lines(&Options::default())
            .into_iter()
            .chain(table_lines(&Options::default()))
            .collect();
        for (l, d) in lines.iter().zip(&defaults) {
            assert_ne!(l, d, "{} equals its default in the test", l.0);
        }
        assert!(set_db_option(&mut o, "wal_recovery_mode", "Sometimes").is_err());
        assert!(set_db_option(&mut o, "block_size", "4096").is_err());
        assert!(is_db_option_of_default_family("cache_type"));
        assert!(is_db_option_of_default_family("num_levels"));
        assert!(!is_db_option_of_default_family("block_size"));
        set_db_option(&mut o, "num_levels", "5").unwrap();
        assert_eq!(o.num_levels, 5);
    }
}
