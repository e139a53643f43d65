//! `shale render-stats STATS.json --svg FILE`: the LSM shape picture (see
//! `lsm_picture`) of a saved `shale stats DB --typed` output, `-` for
//! stdin; the same picture `shale stats DB --svg FILE` draws from the DB.
//! Reads no DB.

use std::io::{Read, Write};
use std::path::PathBuf;

use crate::error::{CliError, Outcome};
use crate::lsm_picture;

/// Flags of `render-stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The JSON printed by `shale stats DB --typed` (`-`: stdin).
    stats: PathBuf,
    /// Where to write the SVG picture.
    #[arg(long, value_name = "FILE")]
    svg: PathBuf,
    /// Only this column family (default: all).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
}

/// Runs `render-stats`.
pub fn run(a: &Args, _out: &mut dyn Write) -> Result<Outcome, CliError> {
    let source = a.stats.display().to_string();
    let mut text = String::new();
    let read = if source == "-" {
        std::io::stdin().read_to_string(&mut text).map(|_| ())
    } else {
        std::fs::read_to_string(&a.stats).map(|t| text = t)
    };
    read.map_err(|e| CliError::Usage(format!("{source}: {e}")))?;
    let stats: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        CliError::Usage(format!(
            "{source}: not the output of `shale stats --typed`: {e}"
        ))
    })?;
    let title = format!("LSM shape from {source}");
    let fig = lsm_picture::figure(stats, &title, a.cf.as_deref(), &source)?;
    lsm_picture::write(&a.svg, &fig)?;
    Ok(Outcome::Ok)
}
