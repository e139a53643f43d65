//! `shale get DB KEY`: the value of one key (exit 1 when there is none).

use std::io::Write;

use serde_json::json;

use super::{json_line, Format};
use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `get`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// The key.
    key: String,
    /// Column family (default: default).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    #[command(flatten)]
    fmt: Format,
}

/// Runs `get`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = a.fmt.render();
    let key = r.parse(&a.key)?;
    let db = a.db.open_read_only()?;
    let cf = family(&db, a.cf.as_deref())?;
    let value = db.get_cf(&cf, &key)?;
    if a.fmt.json {
        let v = value.as_ref().map(|v| r.bytes(v.as_slice()));
        json_line(out, &json!({"key": r.bytes(&key), "value": v}))?;
    } else if let Some(v) = &value {
        writeln!(out, "{}", r.bytes(v.as_slice()))?;
    } else {
        eprintln!("shale: key {} not found", r.bytes(&key));
    }
    Ok(if value.is_some() {
        Outcome::Ok
    } else {
        Outcome::NotFound
    })
}
