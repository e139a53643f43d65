//! `shale list-cfs DB`: the names of the DB's column families, read from
//! its MANIFEST (the DB is not opened).

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;

use super::json_line;
use crate::error::{CliError, Outcome};

/// Flags of `list-cfs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The DB directory.
    db: PathBuf,
    /// JSON output (an array of names).
    #[arg(long)]
    json: bool,
}

/// Runs `list-cfs`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let names = shale::Db::list_cfs(&a.db, &shale::Options::default())?;
    if a.json {
        json_line(out, &json!(names))?;
    } else {
        for n in names {
            writeln!(out, "{n}")?;
        }
    }
    Ok(Outcome::Ok)
}
