//! `shale delete DB KEY [--to END]`: deletes one key, or with `--to` the
//! range `[KEY, END)`, synced (opens the DB for writing).

use std::io::Write;

use shale::{WriteBatch, WriteOptions};

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `delete`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// The key (the first key of the range with --to).
    key: String,
    /// Delete the range [KEY, END) with one range tombstone.
    #[arg(long, value_name = "END")]
    to: Option<String>,
    /// Column family (default: default).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    /// KEY and END are hex.
    #[arg(long)]
    hex: bool,
}

/// Runs `delete`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = crate::render::Render { hex: a.hex };
    let key = r.parse(&a.key)?;
    let end = a.to.as_deref().map(|e| r.parse(e)).transpose()?;
    if end.as_ref().is_some_and(|e| *e < key) {
        return Err(CliError::Usage("--to END sorts before KEY".into()));
    }
    let db = a.db.open_for_writing()?;
    let cf = family(&db, a.cf.as_deref())?;
    let mut b = WriteBatch::new();
    match &end {
        Some(end) => b.delete_range_cf(&cf, &key, end),
        None => b.delete_cf(&cf, &key),
    }
    db.write(
        b,
        &WriteOptions {
            sync: true,
            disable_wal: false,
        },
    )?;
    db.close()?;
    writeln!(out, "OK")?;
    Ok(Outcome::Ok)
}
