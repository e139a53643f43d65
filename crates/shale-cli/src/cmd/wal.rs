//! `shale wal dump FILE`: every batch of a WAL with its first sequence
//! number, and every record with its own sequence number, family, kind
//! (put, delete, merge, single_delete, range_delete, expiring_put), key
//! and value (a range delete's value is its exclusive end). A damaged
//! stretch is reported on stderr and the dump goes on after it; any
//! damage makes the exit code 1.

use std::io::Write;
use std::path::PathBuf;

use serde_json::json;
use shale::tools::{WalBatch, WalReader};

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
    let mut reader = WalReader::open(&a.file)?;
    let mut outcome = Outcome::Ok;
    loop {
        match reader.next_batch() {
            Ok(Some(b)) if a.fmt.json => json_line(out, &batch_json(&b, r))?,
            Ok(Some(b)) => print_batch(out, &b, r)?,
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

fn print_batch(out: &mut dyn Write, b: &WalBatch, r: Render) -> Result<(), CliError> {
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
        writeln!(
            out,
            "  seq {seq} cf {} {} {what}{expiry}",
            e.cf,
            e.kind.name()
        )?;
    }
    Ok(())
}

fn batch_json(b: &WalBatch, r: Render) -> serde_json::Value {
    let entries: Vec<_> = (b.sequence..)
        .zip(&b.entries)
        .map(|(seq, e)| {
            json!({
                "seq": seq,
                "cf": e.cf,
                "kind": e.kind.name(),
                "key": r.bytes(&e.key),
                "value": r.bytes(&e.value),
                "expiry": e.expiry,
            })
        })
        .collect();
    json!({"offset": b.offset, "sequence": b.sequence, "count": b.entries.len(), "entries": entries})
}
