//! `shale checkpoint DB DIR`: an openable copy of the DB in DIR (which
//! must not exist), tables and blob files hard-linked where DIR is on the
//! same file system (`Db::checkpoint`). Opens the DB for writing (a
//! checkpoint flushes the memtables first, unless `--log-size-for-flush`
//! says the WALs may be copied instead).

use std::io::Write;
use std::path::PathBuf;

use crate::error::{CliError, Outcome};
use crate::open::DbArgs;

/// Flags of `checkpoint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// Where the copy goes (must not exist; built in DIR.tmp and renamed).
    dir: PathBuf,
    /// RocksDB's log_size_for_flush: 0 (default) flushes first; otherwise
    /// flush only when the live WALs exceed this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    log_size_for_flush: u64,
}

/// Runs `checkpoint`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_for_writing()?;
    let opts = shale::CheckpointOptions {
        log_size_for_flush: a.log_size_for_flush,
    };
    let r = db.checkpoint_with(&a.dir, &opts)?;
    db.close()?;
    writeln!(
        out,
        "checkpoint {}: {} files linked ({} bytes), {} copied, {} WALs, {} bytes written{}",
        a.dir.display(),
        r.files_linked,
        r.bytes_linked,
        r.files_copied,
        r.wal_files,
        r.bytes_copied,
        if r.flushed { " (flushed first)" } else { "" }
    )?;
    Ok(Outcome::Ok)
}
