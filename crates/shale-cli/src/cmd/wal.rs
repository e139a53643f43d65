//! `shale wal dump FILE`: every batch of a WAL with its first sequence
//! number, and every record with its own sequence number, family, kind
//! (put, delete, merge, single_delete, range_delete, expiring_put), key
//! and value (a range delete's value is its exclusive end). Families are
//! shown by id, and by name when the WAL lies in a DB directory whose
//! MANIFEST reads (names of families dropped since are not known). A
//! damaged stretch is reported on stderr and the dump goes on after it;
//! any damage makes the exit code 1.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use shale::tools::{ManifestReader, WalBatch, WalReader};

use super::{json_line, report, Format};
use crate::error::{CliError, Outcome};
use crate::render::Render;

/// Flags of `wal dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A NNNNNN.log file (the number seeds its checksums).
    file: PathBuf,
    #[command(flatten)]
    fmt: Format,
}

/// Runs `wal dump`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = a.fmt.render();
    let names = family_names(&a.file);
    let mut reader = WalReader::open(&a.file)?;
    let mut outcome = Outcome::Ok;
    loop {
        match reader.next_batch() {
            Ok(Some(b)) if a.fmt.json => json_line(out, &batch_json(&b, r, &names))?,
            Ok(Some(b)) => print_batch(out, &b, r, &names)?,
            Ok(None) => break,
            Err(e) if e.is_corruption() => {
                report(&e);
                outcome = Outcome::CorruptionFound;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if let Some(off) = reader.torn_tail() {
        eprintln!(
            "shale: {} ends inside a record at offset {off} (a write cut short by a crash; recovery drops it)",
            a.file.display()
        );
    }
    Ok(outcome)
}

/// Family id -> name, from the MANIFEST of the DB holding `wal`, when it
/// reads whole (a best effort: without it ids alone are shown).
fn family_names(wal: &Path) -> HashMap<u32, String> {
    let mut names = HashMap::from([(0, "default".to_string())]);
    let Some(dir) = wal.parent().filter(|d| d.join("CURRENT").exists()) else {
        return names;
    };
    let Ok(reader) = shale::tools::current_manifest(dir).and_then(|m| ManifestReader::open(&m))
    else {
        return names;
    };
    for e in reader {
        match e {
            Ok(e) => {
                if let Some(n) = e.cf_add {
                    names.insert(e.column_family, n);
                }
            }
            Err(_) => return HashMap::from([(0, "default".to_string())]),
        }
    }
    names
}

fn print_batch(
    out: &mut dyn Write,
    b: &WalBatch,
    r: Render,
    names: &HashMap<u32, String>,
) -> Result<(), CliError> {
    writeln!(
        out,
        "--- batch at offset {}: sequence {}, {} record(s)",
        b.offset,
        b.sequence,
        b.entries.len()
    )?;
    for (seq, e) in (b.sequence..).zip(&b.entries) {
        let what = match e.kind {
            shale::tools::EntryKind::Delete | shale::tools::EntryKind::SingleDelete => {
                format!("'{}'", r.bytes(&e.key))
            }
            shale::tools::EntryKind::RangeDelete => {
                format!("['{}', '{}')", r.bytes(&e.key), r.bytes(&e.value))
            }
            _ => format!("'{}' => '{}'", r.bytes(&e.key), r.bytes(&e.value)),
        };
        let expiry = e.expiry.map_or(String::new(), |x| format!(" expires {x}"));
        let cf = match names.get(&e.cf) {
            Some(n) => format!("{} ({n})", e.cf),
            None => e.cf.to_string(),
        };
        writeln!(out, "  seq {seq} cf {cf} {} {what}{expiry}", e.kind.name())?;
    }
    Ok(())
}

fn batch_json(b: &WalBatch, r: Render, names: &HashMap<u32, String>) -> serde_json::Value {
    let entries: Vec<_> = (b.sequence..)
        .zip(&b.entries)
        .map(|(seq, e)| {
            json!({
                "seq": seq,
                "cf": e.cf,
                "cf_name": names.get(&e.cf),
                "kind": e.kind.name(),
                "key": r.bytes(&e.key),
                "value": r.bytes(&e.value),
                "expiry": e.expiry,
            })
        })
        .collect();
    json!({"offset": b.offset, "sequence": b.sequence, "count": b.entries.len(), "entries": entries})
}
