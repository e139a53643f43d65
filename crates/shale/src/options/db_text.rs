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
mod tests;
