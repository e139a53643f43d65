//! `shale stats DB`: the engine's properties (`Db::property_cf`), for one
//! family (`--cf`) or every family: by default the level shape
//! (`shale.levelstats`), the compaction statistics (`shale.stats`), the
//! tables per level (`shale.sstables`) and a few counters; `--property`
//! names others (an unknown name is an error). The DB is opened read-only,
//! so what it shows is the state after recovery (WAL data flushed to L0 in
//! memory).

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Properties printed when none is named.
const DEFAULT_PROPERTIES: &[&str] = &[
    "shale.levelstats",
    "shale.stats",
    "shale.sstables",
    "shale.estimate-num-keys",
    "shale.total-sst-files-size",
    "shale.estimate-pending-compaction-bytes",
    "shale.estimate-reclaimable-bytes",
    "shale.last-sequence",
];

/// Flags of `stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// Only this column family (default: all).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    /// A property to print (repeatable), e.g. shale.num-files-at-level0.
    #[arg(long, value_name = "NAME")]
    property: Vec<String>,
    /// JSON output (one object per family: property name -> text).
    #[arg(long)]
    json: bool,
}

/// Runs `stats`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_read_only()?;
    let cfs = match &a.cf {
        Some(n) => vec![family(&db, Some(n))?],
        None => db.cfs(),
    };
    let names: Vec<&str> = if a.property.is_empty() {
        DEFAULT_PROPERTIES.to_vec()
    } else {
        a.property.iter().map(String::as_str).collect()
    };
    for cf in &cfs {
        let mut props = Map::new();
        for &n in &names {
            let v = db.property_cf(cf, n).ok_or_else(|| {
                CliError::Usage(format!(
                    "unknown property '{n}' (see crates/shale/src/db/properties.rs)"
                ))
            })?;
            props.insert(n.to_string(), Value::String(v));
        }
        if a.json {
            writeln!(out, "{}", json!({"cf": cf.name(), "properties": props}))?;
        } else {
            writeln!(out, "# column family {}", cf.name())?;
            for (n, v) in &props {
                let v = v.as_str().unwrap_or_default();
                if v.contains('\n') {
                    writeln!(out, "{n}:\n{}", v.trim_end())?;
                } else {
                    writeln!(out, "{n}: {v}")?;
                }
            }
        }
    }
    Ok(Outcome::Ok)
}
