//! Opening the DB a command works on: read-only (the default: every change
//! the open makes stays in an in-memory overlay, see `overlay_fs`) or for
//! writing (only `put`, `delete`, `compact`). Every family the MANIFEST
//! lists opens with its persisted options.

use std::path::PathBuf;
use std::sync::Arc;

use shale::{Cf, Db, MaxOperator, MergeOperator, Options, StringAppendOperator, UInt64AddOperator};

use crate::error::CliError;
use crate::overlay_fs::OverlayFs;

/// The DB a command opens.
#[derive(Debug, clap::Args)]
pub struct DbArgs {
    /// The DB directory.
    pub db: PathBuf,
    /// Merge operator of the default family, needed to read keys that hold
    /// merge operands there: uint64add, max, or stringappend[:DELIM] (DELIM
    /// a string, default ","). Other families use the operator persisted
    /// with their options.
    #[arg(long, value_name = "NAME")]
    pub merge_operator: Option<String>,
}

impl DbArgs {
    fn options(&self) -> Result<Options, CliError> {
        let merge_operator = match self.merge_operator.as_deref() {
            None => None,
            Some(name) => Some(merge_operator(name)?),
        };
        Ok(Options {
            create_if_missing: false,
            merge_operator,
            ..Options::default()
        })
    }

    /// Opens the DB without changing its directory.
    pub fn open_read_only(&self) -> Result<Db, CliError> {
        self.exists()?;
        let mut o = self.options()?;
        let fs = OverlayFs::new();
        o.fs = fs.clone();
        let db = Db::open(&self.db, o)?;
        fs.freeze();
        Ok(db)
    }

    /// Opens the DB for writing (takes its LOCK).
    pub fn open_for_writing(&self) -> Result<Db, CliError> {
        self.exists()?;
        Ok(Db::open(&self.db, self.options()?)?)
    }

    fn exists(&self) -> Result<(), CliError> {
        if self.db.join("CURRENT").exists() {
            Ok(())
        } else {
            Err(CliError::Usage(format!(
                "{}: not a Shale DB (no CURRENT file; `shale repair` rebuilds one)",
                self.db.display()
            )))
        }
    }
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
