//! `shale compact DB`: compacts one family (`--cf`, default: every family)
//! over `[--from, --to]` (default: everything), waiting for the result
//! (opens the DB for writing).

use std::io::Write;

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `compact`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// First key of the range.
    #[arg(long, value_name = "KEY")]
    from: Option<String>,
    /// Last key of the range.
    #[arg(long, value_name = "KEY")]
    to: Option<String>,
    /// Only this column family (default: all).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    /// --from and --to are hex.
    #[arg(long)]
    hex: bool,
}

/// Runs `compact`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = crate::render::Render { hex: a.hex };
    let from = a.from.as_deref().map(|k| r.parse(k)).transpose()?;
    let to = a.to.as_deref().map(|k| r.parse(k)).transpose()?;
    let db = a.db.open_for_writing()?;
    let cfs = match &a.cf {
        Some(n) => vec![family(&db, Some(n))?],
        None => db.cfs(),
    };
    for cf in &cfs {
        db.compact_range_cf(cf, from.as_deref(), to.as_deref())?;
        writeln!(out, "compacted column family {}", cf.name())?;
    }
    db.close()?;
    Ok(Outcome::Ok)
}
