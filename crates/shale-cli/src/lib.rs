//! The `shale` admin tool (RocksDB's `ldb` and `sst_dump`): one module per
//! subcommand under `cmd/`, built on the engine's public API (`Db`) and its
//! read-only inspection module `shale::tools`.
//!
//! - `advise`: the LSM cost model of `shale advise` (pure functions);
//! - `cli`: the command line (clap), one variant per subcommand;
//! - `error`: [`CliError`] and the exit codes;
//! - `render`: keys and values as escaped UTF-8 or hex, in text and JSON;
//! - `open`: opening a DB read-only (`Db::open_read_only`) or for writing;
//! - `lsm_picture`: the LSM shape of `Db::stats()` as an SVG picture;
//!
//! Exit codes: 0 success; 1 corruption found (or a key not found by
//! `get`); 2 usage or any other error. Output goes to the writer given to
//! [`run_with`]; diagnostics to stderr.

pub mod advise;
mod cli;
mod cmd;
mod error;
mod lsm_picture;
mod open;
mod render;

use std::ffi::OsString;
use std::io::Write;

use clap::Parser;

pub use error::{CliError, Outcome};

/// Parses `args` (program name first), runs the command on stdout and
/// returns the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let code = run_with(args, &mut out);
    let _ = out.flush();
    code
}

/// Like [`run`], writing the command's output to `out`.
pub fn run_with(args: impl IntoIterator<Item = OsString>, out: &mut dyn Write) -> i32 {
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let r = cmd::run(cli.command, out).and_then(|o| {
        out.flush().map_err(CliError::Output)?;
        Ok(o)
    });
    match r {
        Ok(o) => o.exit_code(),
        Err(e) => {
            if !e.is_broken_pipe() {
                eprintln!("shale: {e}");
            }
            e.exit_code()
        }
    }
}
