//! `shale dump DB`: every key and value of one family (`--cf`) or of every
//! family (each under a `# column family NAME` line; in JSON each object
//! names its `cf`).

use std::io::Write;

use super::scan::{print_entry, Scan};
use super::Format;
use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// Only this column family (default: all).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    #[command(flatten)]
    fmt: Format,
}

/// Runs `dump`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = a.fmt.render();
    let db = a.db.open_read_only()?;
    let cfs = match &a.cf {
        Some(n) => vec![family(&db, Some(n))?],
        None => db.cfs(),
    };
    let all = Scan {
        lower: None,
        upper: None,
        limit: None,
        reverse: false,
    };
    for cf in &cfs {
        let name = cf.name().to_string();
        if !a.fmt.json {
            writeln!(out, "# column family {name}")?;
        }
        all.run(&db, cf, out, &mut |out, k, v| {
            print_entry(out, r, a.fmt.json, Some(&name), k, v)
        })?;
    }
    Ok(Outcome::Ok)
}
