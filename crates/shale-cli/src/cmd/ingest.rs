//! `shale ingest DB FILE.sst...`: ingests external table files (written by
//! `shale sst write` or `shale::SstFileWriter`) into one column family
//! (`Db::ingest_external_file_cf`; opens the DB for writing). The files are
//! copied into the DB directory, or moved with `--move`; all of them go in
//! or none.

use std::io::Write;
use std::path::PathBuf;

use shale::IngestOptions;

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `ingest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// The table files.
    #[arg(required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Column family (default: default).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    /// Move the files into the DB directory instead of copying them.
    #[arg(long = "move")]
    move_files: bool,
    /// Read and check every block of every file first.
    #[arg(long)]
    verify: bool,
}

/// Runs `ingest`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_for_writing()?;
    let cf = family(&db, a.cf.as_deref())?;
    let o = IngestOptions {
        move_files: a.move_files,
        verify_checksums_before_ingest: a.verify,
        ..IngestOptions::default()
    };
    db.ingest_external_file_cf(&cf, &a.files, &o)?;
    db.close()?;
    writeln!(out, "OK: {} files ingested", a.files.len())?;
    Ok(Outcome::Ok)
}
