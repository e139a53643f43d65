//! `shale backup ...`: the `BackupEngine` of a backup directory.
//! `create DB BACKUP_DIR` (opens the DB for writing: a backup is a
//! checkpoint), `list`, `verify [--id N]` (every backup by default; exit 1
//! on damage, naming the file), `restore BACKUP_DIR TARGET [--id N]`
//! (the newest by default; TARGET must not exist; `--to-seq S` or
//! `--to-time T` for a point-in-time restore), `purge --keep N`, and
//! `wals DB BACKUP_DIR` (copies the WALs of a DB that archives them, for
//! point-in-time restore). `list`, `verify` and `restore` open the backup
//! directory read-only.

use std::io::Write;
use std::path::{Path, PathBuf};

use shale::{BackupEngine, BackupInfo};

use crate::error::{CliError, Outcome};
use crate::open::DbArgs;

/// `shale backup create`.
#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The backup directory (created if missing).
    backup_dir: PathBuf,
    /// Text kept with the backup (shown by `list`).
    #[arg(long, default_value = "")]
    metadata: String,
    #[command(flatten)]
    pace: PaceArgs,
}

/// Pacing and progress of `create` and `restore`.
#[derive(Debug, clap::Args)]
pub struct PaceArgs {
    /// Read and copy at most this many bytes per second.
    #[arg(long, value_name = "BYTES_PER_SEC")]
    rate_limit: Option<u64>,
    /// Print a line per file to standard error: files and bytes done.
    #[arg(long)]
    progress: bool,
}

impl PaceArgs {
    fn options(&self) -> Result<shale::BackupEngineOptions, CliError> {
        let limiter = match self.rate_limit {
            Some(r) => Some(std::sync::Arc::new(shale::RateLimiter::new(r)?)),
            None => None,
        };
        let progress: Option<shale::ProgressCallback> = self.progress.then(|| {
            let f: shale::ProgressCallback = std::sync::Arc::new(|p: &shale::BackupProgress| {
                eprintln!(
                    "{}/{} files, {}/{} bytes",
                    p.files_done, p.files_total, p.bytes_done, p.bytes_total
                );
            });
            f
        });
        Ok(shale::BackupEngineOptions {
            backup_rate_limiter: limiter.clone(),
            restore_rate_limiter: limiter,
            progress,
        })
    }
}

/// `shale backup list` and `shale backup verify`.
#[derive(Debug, clap::Args)]
pub struct DirArgs {
    /// The backup directory.
    backup_dir: PathBuf,
    /// One backup (verify: every backup when absent).
    #[arg(long)]
    id: Option<u32>,
}

/// `shale backup restore`.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The backup directory.
    backup_dir: PathBuf,
    /// Where the DB is restored (must not exist).
    target: PathBuf,
    /// The backup to restore (default: the newest).
    #[arg(long, conflicts_with_all = ["to_seq", "to_time"])]
    id: Option<u32>,
    /// Restore the DB as it was right after the write with this sequence
    /// number (the newest backup before it, and the WALs `backup wals`
    /// kept, replayed up to it).
    #[arg(long, value_name = "S", conflicts_with = "to_time")]
    to_seq: Option<u64>,
    /// Restore the DB as it was at this time (Unix seconds, fractions
    /// allowed): the latest write the WALs' time records place at or
    /// before it (about a second early while writes went on).
    #[arg(long, value_name = "T")]
    to_time: Option<f64>,
    #[command(flatten)]
    pace: PaceArgs,
}

/// `shale backup wals`.
#[derive(Debug, clap::Args)]
pub struct WalsArgs {
    #[command(flatten)]
    db: DbArgs,
    /// The backup directory.
    backup_dir: PathBuf,
}

/// `shale backup purge`.
#[derive(Debug, clap::Args)]
pub struct PurgeArgs {
    /// The backup directory.
    backup_dir: PathBuf,
    /// How many of the newest backups to keep.
    #[arg(long)]
    keep: usize,
}

fn read_only(dir: &Path) -> Result<BackupEngine, CliError> {
    Ok(BackupEngine::open_read_only(dir, shale::fs::default_fs())?)
}

fn line(b: &BackupInfo) -> String {
    format!(
        "backup {}: time {} sequence {} files {} bytes {}{}",
        b.id,
        b.timestamp,
        b.sequence,
        b.file_count,
        b.size,
        if b.app_metadata.is_empty() {
            String::new()
        } else {
            format!(" metadata {:?}", b.app_metadata)
        }
    )
}

/// Runs `backup create`.
pub fn create(a: &CreateArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_for_writing()?;
    let engine =
        BackupEngine::open_with(&a.backup_dir, shale::fs::default_fs(), a.pace.options()?)?;
    let id = engine.create_backup_with_metadata(&db, &a.metadata)?;
    db.close()?;
    let info = engine.list()?;
    if let Some(b) = info.iter().find(|b| b.id == id) {
        writeln!(out, "created {}", line(b))?;
    }
    Ok(Outcome::Ok)
}

/// Runs `backup list`.
pub fn list(a: &DirArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    for b in read_only(&a.backup_dir)?.list()? {
        if a.id.is_none_or(|id| id == b.id) {
            writeln!(out, "{}", line(&b))?;
        }
    }
    Ok(Outcome::Ok)
}

/// Runs `backup verify`.
pub fn verify(a: &DirArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let engine = read_only(&a.backup_dir)?;
    let ids: Vec<u32> = match a.id {
        Some(id) => vec![id],
        None => engine.list()?.iter().map(|b| b.id).collect(),
    };
    let mut outcome = Outcome::Ok;
    for id in ids {
        match engine.verify(id) {
            Ok(()) => writeln!(out, "backup {id}: ok")?,
            Err(e @ shale::Error::Corruption { .. }) => {
                writeln!(out, "backup {id}: {e}")?;
                outcome = Outcome::CorruptionFound;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(outcome)
}

/// Runs `backup restore`.
pub fn restore(a: &RestoreArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let engine = BackupEngine::open_read_only_with(
        &a.backup_dir,
        shale::fs::default_fs(),
        a.pace.options()?,
    )?;
    let pitr = match (a.to_seq, a.to_time) {
        (Some(s), _) => Some(engine.restore_to(&a.target, s)?),
        (None, Some(t)) => {
            let at = std::time::Duration::try_from_secs_f64(t)
                .map_err(|e| CliError::Usage(format!("--to-time {t}: {e}")))?;
            Some(engine.restore_to_time(&a.target, std::time::UNIX_EPOCH + at)?)
        }
        (None, None) => None,
    };
    if let Some(r) = pitr {
        writeln!(
            out,
            "restored to sequence {} from backup {} ({} WALs replayed) at {}",
            r.sequence,
            r.backup_id,
            r.wal_files,
            a.target.display()
        )?;
        return Ok(Outcome::Ok);
    }
    let id = match a.id {
        Some(id) => id,
        None => engine
            .list()?
            .last()
            .map(|b| b.id)
            .ok_or_else(|| CliError::Usage(format!("{}: no backup", a.backup_dir.display())))?,
    };
    engine.restore(id, &a.target)?;
    writeln!(out, "restored backup {id} to {}", a.target.display())?;
    Ok(Outcome::Ok)
}

/// Runs `backup wals`.
pub fn wals(a: &WalsArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let db = a.db.open_for_writing()?;
    let engine = BackupEngine::open(&a.backup_dir, shale::fs::default_fs())?;
    let r = engine.backup_wals(&db)?;
    let seq = db.latest_sequence_number();
    db.close()?;
    writeln!(
        out,
        "copied {} WAL file(s), {} bytes; restorable up to sequence {seq}",
        r.files_copied, r.bytes_copied
    )?;
    Ok(Outcome::Ok)
}

/// Runs `backup purge`.
pub fn purge(a: &PurgeArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let engine = BackupEngine::open(&a.backup_dir, shale::fs::default_fs())?;
    engine.purge_old(a.keep)?;
    writeln!(out, "{} backup(s) kept", engine.list()?.len())?;
    Ok(Outcome::Ok)
}
