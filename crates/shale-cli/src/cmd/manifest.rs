//! `shale manifest dump PATH`: every edit of a MANIFEST (PATH is the file,
//! or a DB directory whose CURRENT names it), decoded: files added and
//! removed per level with key ranges, sizes and sequence numbers, log
//! numbers, the last sequence number, column families added and dropped,
//! their options records, blob files added (blob count and bytes, file
//! size) and the garbage found in them, and each table's oldest blob file.
//! Damage ends the dump with exit code 1.

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Value};
use shale::tools::{InternalKey, ManifestEdit, ManifestReader, NewFile};

use super::{json_line, report, Format};
use crate::error::{CliError, Outcome};
use crate::render::Render;

/// Flags of `manifest dump`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A MANIFEST-NNNNNN file, or a DB directory (its current MANIFEST).
    path: PathBuf,
    #[command(flatten)]
    fmt: Format,
}

/// Runs `manifest dump`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let path = if a.path.is_dir() {
        shale::tools::current_manifest(&a.path)?
    } else {
        a.path.clone()
    };
    let r = a.fmt.render();
    let mut reader = ManifestReader::open(&path)?;
    if !a.fmt.json {
        writeln!(out, "{}", path.display())?;
    }
    let mut outcome = Outcome::Ok;
    loop {
        match reader.next_edit() {
            Ok(Some(e)) if a.fmt.json => json_line(out, &edit_json(&e, r))?,
            Ok(Some(e)) => print_edit(out, &e, r)?,
            Ok(None) => break,
            Err(e) => {
                report(&e);
                outcome = Outcome::CorruptionFound;
            }
        }
    }
    if let Some(off) = reader.torn_tail() {
        eprintln!(
            "shale: {} ends inside a record at offset {off} (an edit cut short: never acknowledged)",
            path.display()
        );
    }
    Ok(outcome)
}

fn key_text(k: &InternalKey, r: Render) -> String {
    format!("'{}' @ {} : {}", r.bytes(&k.user_key), k.seq, k.kind.name())
}

fn key_json(k: &InternalKey, r: Render) -> Value {
    json!({"user_key": r.bytes(&k.user_key), "seq": k.seq, "kind": k.kind.name()})
}

fn print_edit(out: &mut dyn Write, e: &ManifestEdit, r: Render) -> Result<(), CliError> {
    writeln!(
        out,
        "--- edit at offset {} (column family {})",
        e.offset, e.column_family
    )?;
    if let Some(n) = &e.cf_add {
        writeln!(out, "  add column family '{n}'")?;
    }
    if e.cf_drop {
        writeln!(out, "  drop column family")?;
    }
    let fields = [
        ("comparator", e.comparator.clone()),
        ("db_id", e.db_id.clone()),
        ("log_number", e.log_number.map(|v| v.to_string())),
        ("prev_log_number", e.prev_log_number.map(|v| v.to_string())),
        (
            "min_log_number_to_keep",
            e.min_log_number_to_keep.map(|v| v.to_string()),
        ),
        (
            "next_file_number",
            e.next_file_number.map(|v| v.to_string()),
        ),
        ("last_sequence", e.last_sequence.map(|v| v.to_string())),
        (
            "max_column_family",
            e.max_column_family.map(|v| v.to_string()),
        ),
        (
            "atomic_group",
            e.atomic_group.map(|v| format!("{v} more edit(s)")),
        ),
    ];
    for (name, v) in fields {
        if let Some(v) = v {
            writeln!(out, "  {name}: {v}")?;
        }
    }
    if let Some(o) = &e.cf_options {
        writeln!(out, "  options:")?;
        for line in o.lines() {
            writeln!(out, "    {line}")?;
        }
    }
    for d in &e.deleted_files {
        writeln!(out, "  - L{} #{}", d.level, d.number)?;
    }
    for f in &e.new_files {
        writeln!(
            out,
            "  + L{} #{} {} bytes [{} .. {}] seqs {}..{} entries {} deletions {} range_deletions {}{} {}{}{}{}",
            f.level,
            f.number,
            f.file_size,
            key_text(&f.smallest, r),
            key_text(&f.largest, r),
            f.smallest_seq,
            f.largest_seq,
            f.num_entries,
            f.num_deletions,
            f.num_range_deletions,
            if f.expiry_entries > 0 {
                format!(" expiring {} (max {})", f.expiry_entries, f.expiry_max)
            } else {
                String::new()
            },
            f.compression,
            if f.oldest_blob_file > 0 {
                format!(" oldest_blob_file #{}", f.oldest_blob_file)
            } else {
                String::new()
            },
            f.global_seqno
                .map_or(String::new(), |g| format!(" global_seqno {g}")),
            if f.written_as > 0 {
                format!(" written_as #{}", f.written_as)
            } else {
                String::new()
            }
        )?;
    }
    for b in &e.blob_file_additions {
        writeln!(
            out,
            "  + blob #{} {} bytes: {} blobs, {} blob bytes",
            b.number, b.file_size, b.count, b.bytes
        )?;
    }
    for g in &e.blob_file_garbage {
        writeln!(
            out,
            "  ~ blob #{} garbage: {} blobs, {} blob bytes",
            g.number, g.count, g.bytes
        )?;
    }
    Ok(())
}

fn file_json(f: &NewFile, r: Render) -> Value {
    json!({
        "level": f.level,
        "number": f.number,
        "file_size": f.file_size,
        "smallest": key_json(&f.smallest, r),
        "largest": key_json(&f.largest, r),
        "smallest_seq": f.smallest_seq,
        "largest_seq": f.largest_seq,
        "num_entries": f.num_entries,
        "num_deletions": f.num_deletions,
        "num_range_deletions": f.num_range_deletions,
        "expiry_entries": f.expiry_entries,
        "expiry_max": f.expiry_max,
        "compression": f.compression,
        "oldest_blob_file": f.oldest_blob_file,
        "global_seqno": f.global_seqno,
        "written_as": f.written_as,
    })
}

fn edit_json(e: &ManifestEdit, r: Render) -> Value {
    json!({
        "offset": e.offset,
        "column_family": e.column_family,
        "cf_add": e.cf_add,
        "cf_drop": e.cf_drop,
        "cf_options": e.cf_options,
        "comparator": e.comparator,
        "db_id": e.db_id,
        "log_number": e.log_number,
        "prev_log_number": e.prev_log_number,
        "min_log_number_to_keep": e.min_log_number_to_keep,
        "next_file_number": e.next_file_number,
        "last_sequence": e.last_sequence,
        "max_column_family": e.max_column_family,
        "atomic_group": e.atomic_group,
        "deleted_files": e.deleted_files.iter()
            .map(|d| json!({"level": d.level, "number": d.number}))
            .collect::<Vec<_>>(),
        "new_files": e.new_files.iter().map(|f| file_json(f, r)).collect::<Vec<_>>(),
        "blob_file_additions": e.blob_file_additions.iter()
            .map(|b| json!({
                "number": b.number, "count": b.count, "bytes": b.bytes, "file_size": b.file_size,
            }))
            .collect::<Vec<_>>(),
        "blob_file_garbage": e.blob_file_garbage.iter()
            .map(|g| json!({"number": g.number, "count": g.count, "bytes": g.bytes}))
            .collect::<Vec<_>>(),
    })
}
