//! `shale repair DB`: rebuilds the MANIFEST from the tables, blob files and
//! WALs present (RocksDB's RepairDB; `shale::tools::repair_db` says how)
//! and reports what was kept and what was lost. Files that could not be
//! read whole, blob files no kept table references, replayed WALs and old
//! MANIFESTs are moved to `DB/lost/`, never deleted. Exit code 0 when
//! nothing was lost, 1 when some data was (a table or a referenced blob
//! file set aside or gone, or a damaged WAL stretch), 2 when repair failed.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use shale::tools::repair_db;

use crate::error::{CliError, Outcome};
use crate::render::error_json;

/// Flags of `repair`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The DB directory (no process may have it open).
    db: PathBuf,
    /// JSON output (one object).
    #[arg(long)]
    json: bool,
}

/// Runs `repair`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    super::require_db_files(&a.db)?;
    let r = repair_db(&a.db)?;
    if a.json {
        let v = json!({
            "manifest": r.manifest,
            "last_sequence": r.last_sequence,
            "tables": r.tables.iter().map(|(f, cf, n)| json!({"file": f, "cf": cf, "entries": n})).collect::<Vec<_>>(),
            "blob_files": r.blob_files.iter().map(|(f, cf, n, live)| json!({"file": f, "cf": cf, "blobs": n, "referenced": live})).collect::<Vec<_>>(),
            "wals": r.wals.iter().map(|(f, b, t)| json!({"file": f, "batches": b, "tables": t})).collect::<Vec<_>>(),
            "lost": r.lost.iter().map(|(f, e)| json!({"file": f, "error": error_json(e)})).collect::<Vec<_>>(),
            "wal_damage": r.wal_damage.iter().map(error_json).collect::<Vec<_>>(),
            "set_aside": r.set_aside,
            "notes": r.notes,
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "new {} (last sequence {})",
            r.manifest, r.last_sequence
        )?;
        for (f, cf, n) in &r.tables {
            writeln!(out, "kept {f}: column family {cf}, {n} entries")?;
        }
        for (f, cf, n, live) in &r.blob_files {
            writeln!(
                out,
                "kept {f}: column family {cf}, {n} blobs, {live} referenced"
            )?;
        }
        for (f, b, t) in &r.wals {
            writeln!(out, "replayed {f}: {b} batch(es) into {}", t.join(", "))?;
        }
        for (f, e) in &r.lost {
            writeln!(out, "LOST {f} (moved to lost/): {e}")?;
        }
        for e in &r.wal_damage {
            writeln!(out, "LOST WAL records: {e}")?;
        }
        for f in &r.set_aside {
            writeln!(out, "set aside {f} (moved to lost/)")?;
        }
        for n in &r.notes {
            writeln!(out, "note: {n}")?;
        }
    }
    Ok(if r.lost.is_empty() && r.wal_damage.is_empty() {
        Outcome::Ok
    } else {
        Outcome::CorruptionFound
    })
}
