//! `shale export-cf DB CF DIR` and `shale import-cf DB CF DIR`: one column
//! family out of a DB into a new directory (its tables and blob files
//! hard-linked, `EXPORT-METADATA.json`: `Db::export_column_family`), and
//! such a directory into a DB as a new family holding exactly those files
//! at their levels (`Db::create_column_family_with_import`). Both open the
//! DB for writing (an export flushes the family first).
//!
//! The imported family takes the `default` family's options (as the DB
//! persisted them, with `--option` overrides), and the merge operator the
//! export names when it is one of the shipped ones (uint64add, max,
//! stringappend); another one is an error naming it.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use shale::{ExportMetadata, ImportOptions, MaxOperator, MergeOperator, StringAppendOperator};

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `export-cf`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The column family to export.
    cf: String,
    /// Where the export goes (must not exist; built in DIR.tmp and renamed).
    dir: PathBuf,
}

/// Flags of `import-cf`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The new column family's name (must not exist).
    cf: String,
    /// An export directory (written by `shale export-cf` or
    /// `Db::export_column_family`).
    dir: PathBuf,
    /// Hard-link the files in and remove them from DIR, instead of copying.
    #[arg(long = "move")]
    move_files: bool,
}

/// Runs `export-cf`.
pub fn export(a: &ExportArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_for_writing()?;
    let cf = family(&db, Some(&a.cf))?;
    let meta = db.export_column_family(&cf, &a.dir)?;
    drop(cf);
    db.close()?;
    writeln!(
        out,
        "exported column family '{}' to {}: {} tables, {} blob files",
        a.cf,
        a.dir.display(),
        meta.tables.len(),
        meta.blob_files.len()
    )?;
    Ok(Outcome::Ok)
}

/// The shipped merge operator named `name` (`MergeOperator::name`).
fn shipped_merge_operator(name: &str) -> Option<Arc<dyn MergeOperator>> {
    match name {
        "uint64add" => Some(Arc::new(shale::UInt64AddOperator)),
        "max" => Some(Arc::new(MaxOperator)),
        _ => {
            let hex = name.strip_prefix("stringappend:")?;
            let delim: Option<Vec<u8>> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect();
            Some(Arc::new(StringAppendOperator::new(&delim?)))
        }
    }
}

/// Runs `import-cf`.
pub fn import(a: &ImportArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let meta = ExportMetadata::load(&a.dir)?;
    let db = a.db.open_for_writing()?;
    let mut opts = db.cf_options(&db.default_cf())?;
    opts.merge_operator = match meta.merge_operator.as_deref() {
        None => None,
        Some(name) => Some(shipped_merge_operator(name).ok_or_else(|| {
            CliError::Usage(format!(
                "the export's merge operator '{name}' is not one this tool has \
                 (use the program that owns the data)"
            ))
        })?),
    };
    let io = ImportOptions {
        move_files: a.move_files,
    };
    let cf = db.create_column_family_with_import(&a.cf, &opts, &meta, &io)?;
    drop(cf);
    db.close()?;
    writeln!(
        out,
        "imported {} tables, {} blob files as column family '{}'",
        meta.tables.len(),
        meta.blob_files.len(),
        a.cf
    )?;
    Ok(Outcome::Ok)
}
