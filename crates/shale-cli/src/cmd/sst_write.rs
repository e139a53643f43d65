//! `shale sst write OUT.sst [INPUT]`: writes an external table file
//! (`shale::SstFileWriter`, for `shale ingest`) from `key<TAB>value` lines
//! of INPUT or standard input, keys in strictly increasing byte order.
//! Without `--hex` a key is the bytes before the line's first TAB and the
//! value the bytes after it (a trailing CR is dropped); with `--hex` both
//! are hex. Empty lines are skipped. The table is written with Shale's
//! default table options, or a DB's (`--db`, from its newest OPTIONS file).

use std::io::{BufRead, Write};
use std::path::PathBuf;

use shale::SstFileWriter;

use crate::error::{CliError, Outcome};
use crate::open::DbArgs;

/// Flags of `sst write`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The table file to write (replaced if it exists).
    out: PathBuf,
    /// The sorted `key<TAB>value` lines (default: standard input).
    input: Option<PathBuf>,
    /// Keys and values are hex.
    #[arg(long)]
    hex: bool,
    /// Write with the default family's table options of this DB (its
    /// newest OPTIONS file; the DB is not opened).
    #[arg(long, value_name = "DB")]
    db: Option<PathBuf>,
}

/// Runs `sst write`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let opts = match &a.db {
        Some(db) => DbArgs::persisted(db.clone()).table_options()?,
        None => shale::Options::default(),
    };
    let input: Box<dyn BufRead> = match &a.input {
        Some(p) => Box::new(std::io::BufReader::new(
            std::fs::File::open(p).map_err(|e| CliError::Usage(format!("{}: {e}", p.display())))?,
        )),
        None => Box::new(std::io::stdin().lock()),
    };
    let r = crate::render::Render { hex: a.hex };
    let mut w = SstFileWriter::new(&opts);
    w.open(&a.out)?;
    for (n, line) in input.split(b'\n').enumerate() {
        let mut line = line.map_err(|e| CliError::Usage(format!("reading input: {e}")))?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.is_empty() {
            continue;
        }
        let at = |e: String| CliError::Usage(format!("input line {}: {e}", n + 1));
        let tab = line
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| at("no TAB between key and value".into()))?;
        let (k, v) = (&line[..tab], &line[tab + 1..]);
        let (k, v) = if a.hex {
            let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (r.parse(&text(k))?, r.parse(&text(v))?)
        } else {
            (k.to_vec(), v.to_vec())
        };
        w.put(&k, &v).map_err(|e| at(e.to_string()))?;
    }
    let info = w.finish()?;
    writeln!(
        out,
        "{}: {} entries, {} bytes, keys {} .. {}",
        info.file_path.display(),
        info.num_entries,
        info.file_size,
        r.bytes(&info.smallest_key),
        r.bytes(&info.largest_key)
    )?;
    Ok(Outcome::Ok)
}
