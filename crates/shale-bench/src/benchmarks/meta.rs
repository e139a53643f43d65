//! Meta benchmarks run inline in the main thread (flush, compactall,
//! waitforcompaction, stats, levelstats, sstables) and the `compact`
//! method (every thread compacts the whole range; result line shows one op
//! per thread). Output lines follow db_bench. With several column
//! families they act on `default` only, as db_bench's do.

use super::{Ctx, ThreadState};
use crate::engine::{Engine, Report};
use crate::error::{bail, Result};

/// compact: CompactRange over everything, in every thread.
pub fn compact(ctx: &Ctx<'_>, _t: &mut ThreadState) -> Result<()> {
    ctx.db.compact_range(None, None)
}

/// Runs the meta benchmark `name` and returns what it prints on stdout.
pub fn run_meta(name: &str, db: &dyn Engine, db_path: &str) -> Result<String> {
    match name {
        "flush" => {
            db.flush()
                .map_err(|e| crate::error::Error(format!("Flush failed: {e}")))?;
            Ok("flush memtable\n".to_string())
        }
        "compactall" => {
            db.compact_range(None, None)?;
            Ok(String::new())
        }
        "waitforcompaction" => {
            let mut s = format!("waitforcompaction({db_path}): started\n");
            db.wait_for_compaction()?;
            s.push_str(&format!("waitforcompaction({db_path}): finished\n"));
            Ok(s)
        }
        "stats" => Ok(format!("\n{}\n", report(db, Report::Stats, name)?)),
        "levelstats" => Ok(format!("{}\n", report(db, Report::LevelStats, name)?)),
        "sstables" => Ok(format!("{}\n", report(db, Report::SsTables, name)?)),
        "bloomstats" => Ok(format!("{}\n", report(db, Report::Bloom, name)?)),
        other => bail!("unknown meta benchmark '{other}'"),
    }
}

fn report(db: &dyn Engine, which: Report, name: &str) -> Result<String> {
    match db.report(which) {
        Some(s) => Ok(s),
        None => bail!(
            "benchmark '{name}': engine '{}' does not provide this report",
            db.name()
        ),
    }
}
