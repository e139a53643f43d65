//! `shale check DB`: verifies every checksum of every live file (CURRENT,
//! MANIFEST, every table and blob file it lists, every WAL recovery would
//! replay, the OPTIONS file) and reports each problem with its file and
//! offset. Exit code 0 when clean, 1 when corruption (or a missing file)
//! was found, 2 when the check could not run.
//!
//! On a DB another process has open (its LOCK held) it never reports the
//! running DB's own changes as damage: files deleted or changed while they
//! were read are skipped with a note, and the summary says the DB is in
//! use (`shale::tools::check_db`).

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use shale::tools::check_db;

use crate::error::{CliError, Outcome};
use crate::render::error_json;

/// Flags of `check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The DB directory.
    db: PathBuf,
    /// JSON output (one object).
    #[arg(long)]
    json: bool,
}

/// Runs `check`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    super::require_db_files(&a.db)?;
    let r = check_db(&a.db)?;
    if a.json {
        let v = json!({
            "db": a.db.display().to_string(),
            "clean": r.is_clean(),
            "checked": r.checked.iter().map(|f| json!({
                "name": f.name, "kind": f.kind, "bytes": f.bytes,
            })).collect::<Vec<_>>(),
            "problems": r.problems.iter().map(error_json).collect::<Vec<_>>(),
            "notes": r.notes,
            "in_use": r.in_use,
            "skipped": r.skipped,
        });
        writeln!(out, "{v}")?;
    } else {
        for f in &r.checked {
            writeln!(out, "checked {:<8} {} ({} bytes)", f.kind, f.name, f.bytes)?;
        }
        for n in &r.notes {
            writeln!(out, "note: {n}")?;
        }
        for p in &r.problems {
            writeln!(out, "PROBLEM: {p}")?;
        }
        let in_use = if r.in_use {
            format!(
                " (the DB is in use: {} skipped as the running DB changed them)",
                r.skipped
            )
        } else {
            String::new()
        };
        writeln!(
            out,
            "{} file(s) checked, {} problem(s){in_use}",
            r.checked.len(),
            r.problems.len()
        )?;
    }
    Ok(if r.is_clean() {
        Outcome::Ok
    } else {
        Outcome::CorruptionFound
    })
}
