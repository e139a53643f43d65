//! `shale options show PATH` and `shale options diff A B`: an OPTIONS file
//! parsed into sections, and the options that differ between two (each
//! PATH a file or a DB directory, whose newest OPTIONS file is used).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use shale::tools::OptionsFile;

use crate::error::{CliError, Outcome};

/// Flags of `options show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// An OPTIONS-NNNNNN file, or a DB directory (its newest).
    path: PathBuf,
    /// JSON output (section -> name -> value).
    #[arg(long)]
    json: bool,
}

/// Flags of `options diff`.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// An OPTIONS-NNNNNN file, or a DB directory (its newest).
    a: PathBuf,
    /// An OPTIONS-NNNNNN file, or a DB directory (its newest).
    b: PathBuf,
    /// JSON output (a list of {section, name, a, b}; absent is null).
    #[arg(long)]
    json: bool,
}

fn read(path: &Path) -> Result<OptionsFile, CliError> {
    let file = if path.is_dir() {
        OptionsFile::latest_in(path)?
    } else {
        path.to_path_buf()
    };
    Ok(OptionsFile::read(&file)?)
}

/// Runs `options show`.
pub fn show(a: &ShowArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let o = read(&a.path)?;
    if a.json {
        let mut m = Map::new();
        for s in &o.sections {
            let entries: Map<String, Value> = s
                .entries
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            m.insert(s.name.clone(), Value::Object(entries));
        }
        writeln!(out, "{}", Value::Object(m))?;
    } else {
        for s in &o.sections {
            writeln!(out, "[{}]", s.name)?;
            for (k, v) in &s.entries {
                writeln!(out, "  {k} = {v}")?;
            }
        }
    }
    Ok(Outcome::Ok)
}

/// Runs `options diff`.
pub fn diff(a: &DiffArgs, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let (x, y) = (read(&a.a)?, read(&a.b)?);
    let mut keys = BTreeSet::new();
    for o in [&x, &y] {
        for s in &o.sections {
            for (k, _) in &s.entries {
                keys.insert((s.name.clone(), k.clone()));
            }
        }
    }
    let mut diffs = Vec::new();
    for (section, name) in keys {
        let (va, vb) = (x.get(&section, &name), y.get(&section, &name));
        if va != vb {
            diffs.push((
                section,
                name,
                va.map(str::to_string),
                vb.map(str::to_string),
            ));
        }
    }
    if a.json {
        let v: Vec<Value> = diffs
            .iter()
            .map(|(s, n, va, vb)| json!({"section": s, "name": n, "a": va, "b": vb}))
            .collect();
        writeln!(out, "{}", Value::Array(v))?;
    } else {
        for (s, n, va, vb) in &diffs {
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
            writeln!(out, "[{s}] {n}: {} => {}", show(va), show(vb))?;
        }
    }
    Ok(Outcome::Ok)
}
