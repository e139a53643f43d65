//! `shale sst dump FILE`: a table's properties, index entries, range
//! tombstones and every entry with its sequence number and kind (RocksDB's
//! `sst_dump --command=scan --show_properties`). `--verify` also reads
//! every data block and checks its checksum and key order. A damaged block
//! is reported on stderr and the entries of the next blocks follow; any
//! damage makes the exit code 1.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};
use shale::tools::{SstProperties, SstReader};

use super::{report, Format};
use crate::error::{CliError, Outcome};
use crate::render::error_json;

/// Flags of `sst dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table file.
    file: PathBuf,
    /// Read and check every block (checksums, decompression, key order).
    #[arg(long)]
    verify: bool,
    /// Do not print the entries (properties, index and tombstones only).
    #[arg(long)]
    no_entries: bool,
    #[command(flatten)]
    fmt: Format,
}

fn properties(p: &SstProperties) -> Vec<(&'static str, Value)> {
    vec![
        ("num_entries", json!(p.num_entries)),
        ("num_deletions", json!(p.num_deletions)),
        ("num_range_deletions", json!(p.num_range_deletions)),
        ("expiry_entries", json!(p.expiry_entries)),
        ("expiry_max", json!(p.expiry_max)),
        ("raw_key_size", json!(p.raw_key_size)),
        ("raw_value_size", json!(p.raw_value_size)),
        ("num_data_blocks", json!(p.num_data_blocks)),
        ("data_size", json!(p.data_size)),
        ("index_size", json!(p.index_size)),
        ("filter_size", json!(p.filter_size)),
        ("smallest_seqno", json!(p.smallest_seqno)),
        ("largest_seqno", json!(p.largest_seqno)),
        ("compression", json!(p.compression)),
        ("creation_time", json!(p.creation_time)),
        ("file_number", json!(p.file_number)),
        ("format_version", json!(p.format_version)),
        ("external_version", json!(p.external_version)),
        ("unique_id", json!(p.unique_id)),
        ("db_id", json!(p.db_id)),
        (
            "column_family_id",
            json!(p.column_family.as_ref().map(|(id, _)| id)),
        ),
        (
            "column_family_name",
            json!(p.column_family.as_ref().map(|(_, n)| n)),
        ),
    ]
}

/// Runs `sst dump`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = a.fmt.render();
    let sst = SstReader::open(&a.file)?;
    let props = properties(&sst.properties());
    let index = sst.index_entries()?;
    let tombstones = sst.range_tombstones();
    let mut problems = Vec::new();
    let mut entries = Vec::new();
    if !a.no_entries {
        for e in sst.entries()? {
            match e {
                Ok(e) => entries.push(e),
                Err(e) => problems.push(e),
            }
        }
    }
    if a.verify {
        for p in sst.verify()? {
            if !problems.contains(&p) {
                problems.push(p);
            }
        }
    }
    if a.fmt.json {
        let v = json!({
            "file": a.file.display().to_string(),
            "file_size": sst.file_size(),
            "properties": props.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<serde_json::Map<_, _>>(),
            "index": index.iter().map(|i| json!({
                "separator": r.bytes(&i.separator), "offset": i.offset, "size": i.size,
            })).collect::<Vec<_>>(),
            "range_tombstones": tombstones.iter().map(|t| json!({
                "start": r.bytes(&t.start), "end": r.bytes(&t.end), "seq": t.seq,
            })).collect::<Vec<_>>(),
            "entries": entries.iter().map(|e| json!({
                "key": r.bytes(&e.key.user_key), "seq": e.key.seq, "kind": e.key.kind.name(),
                "value": r.bytes(&e.value), "expiry": e.expiry,
            })).collect::<Vec<_>>(),
            "verified": a.verify,
            "problems": problems.iter().map(error_json).collect::<Vec<_>>(),
        });
        writeln!(out, "{v}")?;
    } else {
        writeln!(out, "{} ({} bytes)", a.file.display(), sst.file_size())?;
        writeln!(out, "properties:")?;
        for (k, v) in &props {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            writeln!(out, "  {k}: {v}")?;
        }
        writeln!(out, "index: {} data block(s)", index.len())?;
        for i in &index {
            writeln!(
                out,
                "  block at offset {} size {}: keys up to '{}'",
                i.offset,
                i.size,
                r.bytes(&i.separator)
            )?;
        }
        writeln!(out, "range tombstones: {}", tombstones.len())?;
        for t in &tombstones {
            writeln!(
                out,
                "  ['{}', '{}') @ {}",
                r.bytes(&t.start),
                r.bytes(&t.end),
                t.seq
            )?;
        }
        if !a.no_entries {
            writeln!(out, "entries: {}", entries.len())?;
            for e in &entries {
                let expiry = e.expiry.map_or(String::new(), |x| format!(" expires {x}"));
                writeln!(
                    out,
                    "  '{}' @ {} : {} => '{}'{expiry}",
                    r.bytes(&e.key.user_key),
                    e.key.seq,
                    e.key.kind.name(),
                    r.bytes(&e.value)
                )?;
            }
        }
        if a.verify {
            if problems.is_empty() {
                writeln!(out, "verify: every block is whole")?;
            } else {
                writeln!(out, "verify: {} problem(s)", problems.len())?;
            }
        }
    }
    for p in &problems {
        report(p);
    }
    Ok(if problems.is_empty() {
        Outcome::Ok
    } else {
        Outcome::CorruptionFound
    })
}
