//! One module per subcommand; each has its clap `Args` and a `run` that
//! writes to `out` and says how it went.

pub mod advise;
pub mod backup;
pub mod check;
pub mod checkpoint;
pub mod compact;
pub mod delete;
pub mod dump;
pub mod export_cf;
pub mod get;
pub mod ingest;
pub mod list_cfs;
pub mod manifest;
pub mod options;
pub mod put;
pub mod render_stats;
pub mod repair;
pub mod scan;
pub mod sst;
pub mod sst_write;
pub mod stats;
pub mod wal;

use std::io::Write;

use crate::cli::{BackupCommand, Command, ManifestCommand, OptionsCommand, SstCommand, WalCommand};
use crate::error::{CliError, Outcome};

/// Runs `c`.
pub fn run(c: Command, out: &mut dyn Write) -> Result<Outcome, CliError> {
    match c {
        Command::Advise(a) => advise::run(&a, out),
        Command::Get(a) => get::run(&a, out),
        Command::Put(a) => put::run(&a, out),
        Command::Delete(a) => delete::run(&a, out),
        Command::Scan(a) => scan::run(&a, out),
        Command::Dump(a) => dump::run(&a, out),
        Command::ListCfs(a) => list_cfs::run(&a, out),
        Command::Manifest(ManifestCommand::Dump(a)) => manifest::run(&a, out),
        Command::Wal(WalCommand::Dump(a)) => wal::run(&a, out),
        Command::Sst(SstCommand::Dump(a)) => sst::run(&a, out),
        Command::Sst(SstCommand::Write(a)) => sst_write::run(&a, out),
        Command::Ingest(a) => ingest::run(&a, out),
        Command::Check(a) => check::run(&a, out),
        Command::Compact(a) => compact::run(&a, out),
        Command::Checkpoint(a) => checkpoint::run(&a, out),
        Command::ExportCf(a) => export_cf::export(&a, out),
        Command::ImportCf(a) => export_cf::import(&a, out),
        Command::Backup(BackupCommand::Create(a)) => backup::create(&a, out),
        Command::Backup(BackupCommand::List(a)) => backup::list(&a, out),
        Command::Backup(BackupCommand::Verify(a)) => backup::verify(&a, out),
        Command::Backup(BackupCommand::Restore(a)) => backup::restore(&a, out),
        Command::Backup(BackupCommand::Purge(a)) => backup::purge(&a, out),
        Command::Backup(BackupCommand::Wals(a)) => backup::wals(&a, out),
        Command::Stats(a) => stats::run(&a, out),
        Command::RenderStats(a) => render_stats::run(&a, out),
        Command::Options(OptionsCommand::Show(a)) => options::show(&a, out),
        Command::Options(OptionsCommand::Diff(a)) => options::diff(&a, out),
        Command::Repair(a) => repair::run(&a, out),
    }
}

/// `--hex` and `--json`, for commands that print keys or values.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Format {
    /// Keys and values as hex, in the arguments and in the output (default:
    /// UTF-8, other bytes escaped as \xNN).
    #[arg(long)]
    pub hex: bool,
    /// JSON output (one object per line for listings).
    #[arg(long)]
    pub json: bool,
}

impl Format {
    /// How bytes are shown and read.
    pub fn render(&self) -> crate::render::Render {
        crate::render::Render { hex: self.hex }
    }
}

/// Prints `v` as one JSON line.
pub fn json_line(out: &mut dyn Write, v: &serde_json::Value) -> Result<(), CliError> {
    writeln!(out, "{v}")?;
    Ok(())
}

/// Reports a damage found while dumping on stderr (the dump goes on).
pub fn report(e: &shale::Error) {
    eprintln!("shale: {e}");
}

/// `Ok` when `dir` is a directory holding a file a DB has (CURRENT, a
/// MANIFEST, a table or a WAL): damage is then reported as damage, and a
/// wrong path as a usage error (and never repaired into a new DB).
pub fn require_db_files(dir: &std::path::Path) -> Result<(), CliError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CliError::Usage(format!("{}: {e}", dir.display())))?;
    let found = entries.filter_map(|e| e.ok()).any(|e| {
        let n = e.file_name().to_string_lossy().into_owned();
        n == "CURRENT" || n.starts_with("MANIFEST-") || n.ends_with(".sst") || n.ends_with(".log")
    });
    if found {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "{}: not a Shale DB (no CURRENT, MANIFEST, table or WAL)",
            dir.display()
        )))
    }
}
