//! The DB-wide options as the OPTIONS file holds them: one list, in file
//! order, that the file is written from (`options::file::render`) and
//! read back from ([`set_db_option`], used by
//! `tools::load_latest_options`), and from which `Db::set_db_options`
//! takes the options that change while open.
//!
//! Invariant: every DB-wide option the OPTIONS file names is in
//! [`db_fields`], [`table_fields`] or [`cf_section_fields`] exactly once; the tests write every
//! field and read it back.

use crate::error::{Error, Result};
use crate::wal::WalRecoveryMode;

use super::text_value::TextValue;
use super::{CacheType, Options};
use crate::events::log_options::InfoLogLevel;

/// One DB-wide option: its OPTIONS-file name, the field, and whether
/// `Db::set_db_options` may change it while the DB is open.
pub(super) struct DbField<'a> {
    pub name: &'static str,
    pub value: &'a mut dyn TextValue,
    pub changeable_while_open: bool,
}

fn field<'a>(name: &'static str, value: &'a mut dyn TextValue, mutable: bool) -> DbField<'a> {
    DbField {
        name,
        value,
        changeable_while_open: mutable,
    }
}

/// The `[DBOptions]` section, in file order.
pub(super) fn db_fields(o: &mut Options) -> [DbField<'_>; 20] {
    [
        field("paranoid_checks", &mut o.paranoid_checks, false),
        field("max_background_jobs", &mut o.max_background_jobs, true),
        field("max_subcompactions", &mut o.max_subcompactions, true),
        field("wal_recovery_mode", &mut o.wal_recovery_mode, false),
        field("manual_wal_flush", &mut o.manual_wal_flush, false),
        field("wal_mmap_writes", &mut o.wal_mmap_writes, false),
        field("bytes_per_sync", &mut o.bytes_per_sync, true),
        field("wal_bytes_per_sync", &mut o.wal_bytes_per_sync, true),
        field("recycle_log_file_num", &mut o.recycle_log_file_num, false),
        field("delayed_write_rate", &mut o.delayed_write_rate, true),
        field("max_total_wal_size", &mut o.max_total_wal_size, true),
        field("max_open_files", &mut o.max_open_files, false),
        field("use_direct_reads", &mut o.use_direct_reads, false),
        field(
            "use_direct_io_for_flush_and_compaction",
            &mut o.use_direct_io_for_flush_and_compaction,
            false,
        ),
        field(
            "max_bgerror_resume_count",
            &mut o.max_bgerror_resume_count,
            false,
        ),
        field(
            "bgerror_resume_retry_interval",
            &mut o.bgerror_resume_retry_interval,
            false,
        ),
        field(
            "compaction_readahead_size",
            &mut o.compaction_readahead_size,
            true,
        ),
        field("info_log_level", &mut o.info_log_level, false),
        field("max_log_file_size", &mut o.max_log_file_size, false),
        field("keep_log_file_num", &mut o.keep_log_file_num, false),
    ]
}

/// The DB-wide options written in the `default` family's
/// `[TableOptions/BlockBasedTable]` section (RocksDB keeps the block cache
/// and readahead there), in file order.
pub(super) fn table_fields(o: &mut Options) -> [DbField<'_>; 3] {
    [
        field("cache_size", &mut o.cache_size, false),
        field("cache_type", &mut o.cache_type, false),
        field(
            "max_auto_readahead_size",
            &mut o.max_auto_readahead_size,
            false,
        ),
    ]
}

/// `(name, text)` of every `[DBOptions]` option of `o`, in file order.
pub(crate) fn db_lines(o: &Options) -> Vec<(&'static str, String)> {
    let mut c = o.clone();
    db_fields(&mut c)
        .iter()
        .map(|f| (f.name, f.value.text()))
        .collect()
}

/// `(name, text)` of the DB-wide options of the `default` family's table
/// section, in file order.
pub(crate) fn table_lines(o: &Options) -> Vec<(&'static str, String)> {
    let mut c = o.clone();
    table_fields(&mut c)
        .iter()
        .map(|f| (f.name, f.value.text()))
        .collect()
}

/// The DB-wide options written in the `default` family's `[CFOptions]`
/// section (RocksDB's place for them).
pub(super) fn cf_section_fields(o: &mut Options) -> [DbField<'_>; 1] {
    [field("num_levels", &mut o.num_levels, false)]
}

/// True when `name` is a DB-wide option written in one of the `default`
/// family's sections (not a family option).
pub(crate) fn is_db_option_of_default_family(name: &str) -> bool {
    let mut o = Options::default();
    let mut c = Options::default();
    table_fields(&mut o)
        .iter()
        .chain(cf_section_fields(&mut c).iter())
        .any(|f| f.name == name)
}

/// Sets the DB-wide option `name` (of either list) of `o` from its OPTIONS
/// file text; an unknown name or a bad value is `InvalidArgument`.
pub(crate) fn set_db_option(o: &mut Options, name: &str, value: &str) -> Result<()> {
    let bad = || Error::InvalidArgument(format!("option {name}: bad value {value:?}"));
    if let Some(f) = db_fields(o).iter_mut().find(|f| f.name == name) {
        return f.value.set(value).ok_or_else(bad);
    }
    if let Some(f) = table_fields(o).iter_mut().find(|f| f.name == name) {
        return f.value.set(value).ok_or_else(bad);
    }
    if let Some(f) = cf_section_fields(o).iter_mut().find(|f| f.name == name) {
        return f.value.set(value).ok_or_else(bad);
    }
    Err(Error::InvalidArgument(format!(
        "unknown DB option {name:?}"
    )))
}

impl TextValue for WalRecoveryMode {
    fn text(&self) -> String {
        format!("{self:?}")
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = [
            WalRecoveryMode::TolerateCorruptedTailRecords,
            WalRecoveryMode::AbsoluteConsistency,
            WalRecoveryMode::PointInTime,
            WalRecoveryMode::SkipAnyCorruptedRecords,
        ]
        .into_iter()
        .find(|m| format!("{m:?}") == v)?;
        Some(())
    }
}

impl TextValue for InfoLogLevel {
    fn text(&self) -> String {
        self.name().to_string()
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = [
            InfoLogLevel::Debug,
            InfoLogLevel::Info,
            InfoLogLevel::Warn,
            InfoLogLevel::Error,
            InfoLogLevel::Fatal,
            InfoLogLevel::Header,
        ]
        .into_iter()
        .find(|l| l.name() == v)?;
        Some(())
    }
}

impl TextValue for CacheType {
    fn text(&self) -> String {
        format!("{self:?}")
    }
    fn set(&mut self, v: &str) -> Option<()> {
        *self = match v {
            "Lru" => CacheType::Lru,
            "Clock" => CacheType::Clock,
            _ => return None,
        };
        Some(())
    }
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
mod tests;
