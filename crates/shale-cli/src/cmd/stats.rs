//! `shale stats DB`: the engine's properties (`Db::property_cf`), for one
//! family (`--cf`) or every family: by default the level shape
//! (`shale.levelstats`), the compaction statistics (`shale.stats`), the
//! tables per level (`shale.sstables`) and a few counters; `--property`
//! names others (an unknown name is an error). Then (not with `--json`) the
//! write stalls in force (`Db::stats().stalls_now`), one line each.
//! `--typed` prints the typed `Db::stats()` as one JSON object instead;
//! `--svg FILE` writes the LSM shape picture of it instead (see
//! `lsm_picture`; `shale render-stats` draws a saved `--typed` output).
//! The DB is opened read-only,
//! so what it shows is the state after recovery (WAL data flushed to L0 in
//! memory).

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use crate::error::{CliError, Outcome};
use crate::lsm_picture;
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
    /// JSON output (one object per family: property name -> text; the
    /// stall explanations are in `--typed`'s output).
    #[arg(long)]
    json: bool,
    /// Print the typed statistics (`Db::stats()`: every family, flushes,
    /// compactions, stalls, cache, memory, WAL, stall explanations) as one
    /// JSON object, and nothing else.
    #[arg(long, conflicts_with_all = ["json", "property", "cf"])]
    typed: bool,
    /// Write the LSM shape as an SVG picture to FILE (per family, L0 on
    /// top: files, bytes and compaction score per level), and print
    /// nothing else. With --cf, only that family.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["json", "property", "typed"])]
    svg: Option<PathBuf>,
}

/// Runs `stats`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_read_only()?;
    if a.typed {
        serde_json::to_writer(&mut *out, &db.stats()).map_err(|e| CliError::Output(e.into()))?;
        writeln!(out)?;
        return Ok(Outcome::Ok);
    }
    if let Some(path) = &a.svg {
        let stats = serde_json::to_value(db.stats()).map_err(|e| CliError::Output(e.into()))?;
        let source = a.db.db.display().to_string();
        let title = format!("LSM shape of {source}");
        let fig = lsm_picture::figure(stats, &title, a.cf.as_deref(), &source)?;
        lsm_picture::write(path, &fig)?;
        return Ok(Outcome::Ok);
    }
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
                    "unknown property '{n}' (see crates/shale/src/observe/properties.rs)"
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
    if !a.json {
        let stalls = db.stats().stalls_now;
        writeln!(out, "# write stalls now")?;
        if stalls.is_empty() {
            writeln!(out, "none: writes run freely")?;
        }
        for e in &stalls {
            writeln!(out, "{}", e.message)?;
        }
    }
    Ok(Outcome::Ok)
}
