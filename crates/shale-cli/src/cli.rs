//! The command line: one variant per subcommand, each subcommand's flags in
//! its own module under `cmd/` (clap derive; `shale <cmd> --help`).

use clap::{Parser, Subcommand};

use crate::cmd;

/// Admin tool for Shale DBs (RocksDB's ldb and sst_dump). Reading commands
/// never change a DB; only put, delete, compact, checkpoint, backup create,
/// ingest, export-cf, import-cf and repair write.
#[derive(Debug, Parser)]
#[command(name = "shale", version, about, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the value of one key.
    Get(cmd::get::Args),
    /// Write one key (opens the DB for writing).
    Put(cmd::put::Args),
    /// Delete one key, or a range of keys with --to (opens the DB for writing).
    Delete(cmd::delete::Args),
    /// Print the keys and values of a range of one column family.
    Scan(cmd::scan::Args),
    /// Print every key and value of one column family, or of all.
    Dump(cmd::dump::Args),
    /// List the column families of a DB (read from its MANIFEST).
    ListCfs(cmd::list_cfs::Args),
    /// Inspect a MANIFEST.
    #[command(subcommand)]
    Manifest(ManifestCommand),
    /// Inspect a write-ahead log.
    #[command(subcommand)]
    Wal(WalCommand),
    /// Inspect a table file.
    #[command(subcommand)]
    Sst(SstCommand),
    /// Verify every checksum of every live file of a DB, and that every
    /// blob reference of its tables points into a listed blob file (exit 0
    /// clean, 1 corruption found, 2 other error).
    Check(cmd::check::Args),
    /// Compact a DB, or a key range of it (opens the DB for writing).
    Compact(cmd::compact::Args),
    /// Make an openable copy of a DB in a new directory, tables and blob
    /// files hard-linked (opens the DB for writing).
    Checkpoint(cmd::checkpoint::Args),
    /// Export one column family into a new directory: its tables and blob
    /// files hard-linked, and their metadata (opens the DB for writing).
    ExportCf(cmd::export_cf::ExportArgs),
    /// Create a column family from a directory `export-cf` wrote, holding
    /// exactly its files at their levels (opens the DB for writing).
    ImportCf(cmd::export_cf::ImportArgs),
    /// Back a DB up into a backup directory, and list, verify, restore or
    /// purge its backups.
    #[command(subcommand)]
    Backup(BackupCommand),
    /// Print the engine's properties (level shape, compaction statistics).
    Stats(cmd::stats::Args),
    /// Draw the LSM shape picture (SVG) from a saved `shale stats --typed`
    /// output.
    RenderStats(cmd::render_stats::Args),
    /// Show or compare OPTIONS files.
    #[command(subcommand)]
    Options(OptionsCommand),
    /// Predict write-, space- and read-amp, memory and device time of
    /// leveled, universal and FIFO configurations for a workload, rank
    /// them and print the options to set; or compare the prediction with a
    /// DB (--db) or a shale-bench --json run (--bench).
    Advise(Box<cmd::advise::Args>),
    /// Ingest table files written by `shale sst write` into a column
    /// family (opens the DB for writing).
    Ingest(cmd::ingest::Args),
    /// Rebuild the MANIFEST of a damaged DB from the tables, blob files and
    /// WALs present.
    Repair(cmd::repair::Args),
}

/// `shale manifest ...`
#[derive(Debug, Subcommand)]
pub enum ManifestCommand {
    /// Print every edit of a MANIFEST, decoded.
    Dump(cmd::manifest::Args),
}

/// `shale wal ...`
#[derive(Debug, Subcommand)]
pub enum WalCommand {
    /// Print every batch of a WAL with its sequence numbers and records.
    Dump(cmd::wal::Args),
}

/// `shale sst ...`
#[derive(Debug, Subcommand)]
pub enum SstCommand {
    /// Print a table's properties, index, range tombstones and entries.
    Dump(cmd::sst::Args),
    /// Write a table file for `shale ingest` from sorted `key<TAB>value`
    /// lines.
    Write(cmd::sst_write::Args),
}

/// `shale backup ...`
#[derive(Debug, Subcommand)]
pub enum BackupCommand {
    /// Back a DB up (incremental: tables and blob files an earlier backup
    /// holds are shared). Opens the DB for writing.
    Create(cmd::backup::CreateArgs),
    /// List the backups: id, time, sequence number, files, bytes.
    List(cmd::backup::DirArgs),
    /// Check every file of every backup (or of --id) against its size and
    /// checksum (exit 1 on damage, naming the file).
    Verify(cmd::backup::DirArgs),
    /// Restore a backup (the newest, or --id) into a new directory, or the
    /// DB as of a sequence number or time (--to-seq, --to-time).
    Restore(cmd::backup::RestoreArgs),
    /// Copy the WALs of a DB that archives them (option WAL_ttl_seconds
    /// or WAL_size_limit_MB) for point-in-time restore.
    Wals(cmd::backup::WalsArgs),
    /// Delete every backup but the newest --keep.
    Purge(cmd::backup::PurgeArgs),
}

/// `shale options ...`
#[derive(Debug, Subcommand)]
pub enum OptionsCommand {
    /// Print an OPTIONS file (or the newest of a DB), parsed.
    Show(cmd::options::ShowArgs),
    /// Print the options that differ between two OPTIONS files (or DBs).
    Diff(cmd::options::DiffArgs),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
