//! `shale scan DB`: the keys and values of one family in a range
//! (`--from` inclusive, `--to` exclusive, or `--prefix`), forward or
//! `--reverse`, at most `--limit` of them. Text lines are `key ==> value`
//! (ldb's); JSON lines are `{"key", "value"}`.

use std::io::Write;

use serde_json::json;
use shale::{Cf, Db, ReadOptions};

use super::{json_line, Format};
use crate::error::{CliError, Outcome};
use crate::open::{family, DbArgs};
use crate::render::Render;

/// Flags of `scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArgs,
    /// First key (inclusive).
    #[arg(long, value_name = "KEY")]
    from: Option<String>,
    /// End key (exclusive).
    #[arg(long, value_name = "KEY")]
    to: Option<String>,
    /// Only keys starting with this (not with --from/--to).
    #[arg(long, value_name = "PREFIX", conflicts_with_all = ["from", "to"])]
    prefix: Option<String>,
    /// Print at most this many entries.
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// From the last key down.
    #[arg(long)]
    reverse: bool,
    /// Column family (default: default).
    #[arg(long, value_name = "NAME")]
    cf: Option<String>,
    #[command(flatten)]
    fmt: Format,
}

/// The smallest key greater than every key starting with `prefix` (`None`:
/// no such key, the prefix is all 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Runs `scan`.
pub fn run(a: &Args, out: &mut dyn Write) -> Result<Outcome, CliError> {
    let r = a.fmt.render();
    let (lower, upper) = match &a.prefix {
        Some(p) => {
            let p = r.parse(p)?;
            let end = prefix_end(&p);
            (Some(p), end)
        }
        None => (
            a.from.as_deref().map(|k| r.parse(k)).transpose()?,
            a.to.as_deref().map(|k| r.parse(k)).transpose()?,
        ),
    };
    let db = a.db.open_read_only()?;
    let cf = family(&db, a.cf.as_deref())?;
    let scan = Scan {
        lower,
        upper,
        limit: a.limit,
        reverse: a.reverse,
    };
    scan.run(&db, &cf, out, &mut |out, k, v| {
        print_entry(out, r, a.fmt.json, None, k, v)
    })?;
    Ok(Outcome::Ok)
}

/// Prints one entry (`cf`: the family, when several are printed).
pub fn print_entry(
    out: &mut dyn Write,
    r: Render,
    json: bool,
    cf: Option<&str>,
    k: &[u8],
    v: &[u8],
) -> Result<(), CliError> {
    if json {
        let mut o = json!({"key": r.bytes(k), "value": r.bytes(v)});
        if let Some(cf) = cf {
            o["cf"] = json!(cf);
        }
        json_line(out, &o)
    } else {
        writeln!(out, "{} ==> {}", r.bytes(k), r.bytes(v))?;
        Ok(())
    }
}

/// One pass over a family.
pub struct Scan {
    /// First key (inclusive).
    pub lower: Option<Vec<u8>>,
    /// End key (exclusive).
    pub upper: Option<Vec<u8>>,
    /// At most this many entries.
    pub limit: Option<u64>,
    /// Backwards.
    pub reverse: bool,
}

type Emit<'a> = dyn FnMut(&mut dyn Write, &[u8], &[u8]) -> Result<(), CliError> + 'a;

impl Scan {
    /// Calls `emit` for each entry in order.
    pub fn run(
        &self,
        db: &Db,
        cf: &Cf,
        out: &mut dyn Write,
        emit: &mut Emit<'_>,
    ) -> Result<(), CliError> {
        let mut ro = ReadOptions::new();
        ro.fill_cache = false;
        ro.iterate_lower_bound = self.lower.clone();
        ro.iterate_upper_bound = self.upper.clone();
        let mut it = db.iter_cf(cf, &ro);
        if self.reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        let mut n = 0u64;
        while it.valid() && self.limit.is_none_or(|l| n < l) {
            emit(out, it.key(), it.value())?;
            n += 1;
            if self.reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::prefix_end;

    #[test]
    fn prefix_ends() {
        assert_eq!(prefix_end(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), None);
        assert_eq!(prefix_end(b""), None);
    }
}
