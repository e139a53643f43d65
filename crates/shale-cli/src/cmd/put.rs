//! `shale put DB KEY VALUE`: writes one key, synced (opens the DB for
//! writing, so it fails while another process has the DB open).

use std::io::Write;

use shale::{WriteBatch, WriteOptions};

use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};

/// Flags of `put`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// The key.
    key: String,
    /// The value.
    value: String,
    /// Column family (default: default).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    /// KEY and VALUE are hex.
    #[arg(long)]
    hex: bool,
}

/// Runs `put`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = crate::render::Render { hex: a.hex };
    let (key, value) = (r.parse(&a.key)?, r.parse(&a.value)?);
    let db = a.db.open_for_writing()?;
    let cf = family(&db, a.cf.as_deref())?;
    let mut b = WriteBatch::new();
    b.put_cf(&cf, &key, &value);
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
