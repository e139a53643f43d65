//! Opening the DB a command works on: read-only (the default:
//! `Db::open_read_only`, which takes no LOCK and changes no byte of the
//! directory) or for writing (only `put`, `delete`, `compact`,
//! `checkpoint`).
//!
//! Every command opens the DB with the options it was last opened with
//! (`shale::load_latest_options`: the DB-wide options and every family's
//! from the newest OPTIONS file), so a write command never replaces a DB's
//! configuration with the defaults. `--default-options` opens with Shale's
//! defaults instead (a DB without an OPTIONS file always does, with a
//! note), and `--option NAME=VALUE` overrides one option. Code the file
//! names but the tool does not have (a custom merge operator or compaction
//! filter) is a note for reading commands and an error for writing ones,
//! since a compaction without its filter would keep what the filter drops.

use std::path::PathBuf;
use std::sync::Arc;

use shale::{
    Cf, Db, MaxOperator, MergeOperator, Options, StringAppendOperator, SuppliedCode,
    UInt64AddOperator,
};

use crate::error::CliError;

/// The DB a command opens.
#[derive(Debug, clap::Args)]
pub struct DbArgs {
    /// The DB directory.
    pub db: PathBuf,
    /// Merge operator of the default family, for a DB whose OPTIONS file
    /// names none (or to replace the one it names): uint64add, max, or
    /// stringappend[:DELIM] (DELIM a string, default ","). The shipped
    /// operators a DB was configured with come back without this flag.
    #[arg(long, value_name = "NAME")]
    pub merge_operator: Option<String>,
    /// Open with Shale's default options instead of the ones in the DB's
    /// newest OPTIONS file (a writing command then persists the defaults).
    #[arg(long)]
    pub default_options: bool,
    /// Override one option (repeatable): a DB-wide option, or a column
    /// family option, which is set for every family (e.g.
    /// `--option disable_auto_compactions=true`). Names as in the OPTIONS
    /// file.
    #[arg(long = "option", value_name = "NAME=VALUE")]
    pub options: Vec<String>,
}

impl DbArgs {
    /// Arguments for `db` with every option as the DB persisted it.
    pub fn persisted(db: PathBuf) -> DbArgs {
        DbArgs {
            db,
            merge_operator: None,
            default_options: false,
            options: Vec::new(),
        }
    }

    /// The options to open with (see the module comment); `writing`
    /// refuses code the tool does not have.
    fn options(&self, writing: bool) -> Result<Options, CliError> {
        let merge_operator = match self.merge_operator.as_deref() {
            None => None,
            Some(name) => Some(merge_operator(name)?),
        };
        let mut o = if self.default_options {
            Options::default()
        } else if !has_options_file(&self.db) {
            eprintln!(
                "shale: note: {} has no OPTIONS file; opening with the default options",
                self.db.display()
            );
            Options::default()
        } else {
            let code = SuppliedCode {
                merge_operators: merge_operator.iter().cloned().collect(),
                compaction_filters: Vec::new(),
            };
            let loaded = shale::load_latest_options(&self.db, &code)?;
            if writing {
                loaded.require_all_code().map_err(|e| {
                    CliError::Usage(format!(
                        "{e}; a writing command would run without it \
                         (use the program that owns this DB, or --default-options)"
                    ))
                })?;
            } else {
                for u in &loaded.unresolved {
                    eprintln!("shale: note: opening without {u} (not available to this tool)");
                }
            }
            loaded.options
        };
        if merge_operator.is_some() {
            o.merge_operator = merge_operator;
        }
        for kv in &self.options {
            set_option(&mut o, kv)?;
        }
        o.create_if_missing = false;
        o.validate()?;
        Ok(o)
    }

    /// Opens the DB without changing its directory.
    pub fn open_read_only(&self) -> Result<Db, CliError> {
        self.exists()?;
        Ok(Db::open_read_only(&self.db, self.options(false)?)?)
    }

    /// The options the DB would be opened with, without opening it (the
    /// table options of `shale sst write --db`).
    pub fn table_options(&self) -> Result<Options, CliError> {
        self.exists()?;
        self.options(false)
    }

    /// Opens the DB for writing (takes its LOCK).
    pub fn open_for_writing(&self) -> Result<Db, CliError> {
        self.exists()?;
        Ok(Db::open(&self.db, self.options(true)?)?)
    }

    fn exists(&self) -> Result<(), CliError> {
        if self.db.join("CURRENT").exists() {
            return Ok(());
        }
        if !self.db.exists() {
            return Err(CliError::Usage(format!(
                "{}: no DB there (the path does not exist)",
                self.db.display()
            )));
        }
        // A directory with DB files but no CURRENT can be repaired; any
        // other directory is not a DB.
        crate::cmd::require_db_files(&self.db)?;
        Err(CliError::Usage(format!(
            "{}: not a Shale DB (no CURRENT file; its tables and WALs remain: \
             `shale repair` rebuilds the MANIFEST and CURRENT from them)",
            self.db.display()
        )))
    }
}

/// True when `dir` holds an `OPTIONS-NNNNNN` file.
fn has_options_file(dir: &std::path::Path) -> bool {
    shale::tools::OptionsFile::latest_in(dir).is_ok()
}

/// Applies one `--option NAME=VALUE`: a DB-wide option, else a family
/// option set for the default family and every other one.
fn set_option(o: &mut Options, kv: &str) -> Result<(), CliError> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| CliError::Usage(format!("--option {kv:?}: expected NAME=VALUE")))?;
    if o.set_db_option(k, v).is_ok() {
        return Ok(());
    }
    o.cf.set_option(k, v)
        .map_err(|e| CliError::Usage(format!("--option {kv}: {e}")))?;
    for (_, cf) in &mut o.column_families {
        cf.set_option(k, v)?;
    }
    Ok(())
}

fn merge_operator(name: &str) -> Result<Arc<dyn MergeOperator>, CliError> {
    Ok(match name.split_once(':') {
        None if name == "uint64add" => Arc::new(UInt64AddOperator),
        None if name == "max" => Arc::new(MaxOperator),
        None if name == "stringappend" => Arc::new(StringAppendOperator::new(b",")),
        Some(("stringappend", d)) => Arc::new(StringAppendOperator::new(d.as_bytes())),
        _ => {
            return Err(CliError::Usage(format!(
                "unknown merge operator '{name}' (uint64add, max, stringappend[:DELIM])"
            )))
        }
    })
}

/// The family named `name` (`None`: the default family).
pub fn family(db: &Db, name: Option<&str>) -> Result<Cf, CliError> {
    match name {
        None => Ok(db.default_cf()),
        Some(n) => db.cf(n).ok_or_else(|| {
            let known: Vec<String> = db.cfs().iter().map(|c| c.name().to_string()).collect();
            CliError::Usage(format!(
                "no column family '{n}' (the DB has: {})",
                known.join(", ")
            ))
        }),
    }
}
