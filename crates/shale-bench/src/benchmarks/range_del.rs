//! Range deletions: db_bench's range tombstones during fills (`DoWrite`:
//! `--writes_before_delete_range`, `--writes_per_range_tombstone`,
//! `--range_tombstone_width`, `--max_num_range_tombstones`,
//! `--expand_range_tombstones`), and [`check`], which refuses before
//! anything runs what an engine without DeleteRange cannot do.
//!
//! db_bench (7.8.3 `DoWrite`), per thread: after its `n`-th put (`n`
//! counted from 1 over the whole benchmark, across batches), when
//! `writes_per_range_tombstone > 0`, `n > writes_before_delete_range`,
//! `(n - before) % per == 0` and `(n - before) / per <=
//! max_num_range_tombstones`, the fill takes the next key number `b` from
//! its own key generator (so fillseq skips `b`, fillrandom draws once more,
//! filluniquerandom consumes a permutation entry) and adds, to the batch
//! being built and right after that put, `DeleteRange(key(b), key(b +
//! width))` or, with `--expand_range_tombstones`, `width` point Deletes of
//! `key(b) .. key(b + width - 1)`. The key generator's space is `num +
//! max_num_range_tombstones` (db_bench's `num_per_key_gen`, whether or not
//! tombstones are on). The result line counts only the puts, in ops and in
//! MB/s, as db_bench's `FinishedOps(entries_per_batch_)` does; the
//! tombstones are counted in `Ctx::range_tombstones` (summary line and
//! `--json`).
//!
//! Column families (shale-bench's rule, key `v` in family `v % N`): a
//! DeleteRange goes to every family, an expanded point Delete to the key's
//! family. db_bench sends both to the family of the preceding put.
//!
//! Plain data; `Schedule` is `Copy` and used by one thread at a time.

use std::sync::atomic::Ordering;

use super::Ctx;
use crate::engine::{Batch, RANGE_DEL_ENGINES};
use crate::error::{bail, Result};
use crate::flags::Flags;

/// The benchmarks that run db_bench's `DoWrite` (and so may add range
/// tombstones).
pub fn is_fill(name: &str) -> bool {
    matches!(
        name,
        "fillseq" | "fillrandom" | "filluniquerandom" | "overwrite"
    )
}

/// True when the flags make fills issue range tombstones.
pub fn fills_issue_tombstones(f: &Flags) -> bool {
    f.writes_per_range_tombstone > 0 && f.max_num_range_tombstones > 0
}

/// Refuses, before anything runs, a benchmark list that needs DeleteRange
/// on an engine without it: `deleterange`, or a fill with range tombstones
/// not expanded into point deletes. Also refuses `deleterange` with
/// `--keys_per_prefix` > 0 (key order is then not key-number order).
pub fn check<'a>(flags: &Flags, names: impl IntoIterator<Item = &'a str>) -> Result<()> {
    let engine = flags.engine.as_str();
    let has_delete_range = RANGE_DEL_ENGINES.contains(&engine);
    let supported = || {
        RANGE_DEL_ENGINES
            .iter()
            .filter(|e| **e != "memory")
            .map(|e| format!("--engine={e}"))
            .collect::<Vec<_>>()
            .join(" or ")
    };
    for name in names {
        if name == "deleterange" {
            if !has_delete_range {
                bail!(
                    "deleterange is not supported by --engine={engine} (it has no DeleteRange); use {}",
                    supported()
                );
            }
            if flags.keys_per_prefix > 0 {
                bail!(
                    "deleterange with --keys_per_prefix > 0 is not supported (the range [key(start), \
                     key(end)) would not be the key numbers [start, end))"
                );
            }
        }
        if is_fill(name)
            && fills_issue_tombstones(flags)
            && !flags.expand_range_tombstones
            && !has_delete_range
        {
            bail!(
                "{name} with --writes_per_range_tombstone > 0 needs DeleteRange, which --engine={engine} \
                 does not have; use {} or --expand_range_tombstones=1 (point deletes)",
                supported()
            );
        }
    }
    Ok(())
}

/// db_bench's range-tombstone rule for one fill thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    before: u64,
    per: u64,
    width: u64,
    max: u64,
    expand: bool,
}

impl Schedule {
    /// The rule of the flags, or None when `--writes_per_range_tombstone`
    /// is 0 (db_bench's `writes_per_range_tombstone_ > 0` guard).
    pub fn from_flags(f: &Flags) -> Option<Schedule> {
        (f.writes_per_range_tombstone > 0).then(|| Schedule {
            before: f.writes_before_delete_range.max(0) as u64,
            per: f.writes_per_range_tombstone as u64,
            width: f.range_tombstone_width.max(0) as u64,
            max: f.max_num_range_tombstones.max(0) as u64,
            expand: f.expand_range_tombstones,
        })
    }

    /// True when the thread's `num_written`-th put (1-based) is followed
    /// by a range tombstone.
    pub fn due(&self, num_written: u64) -> bool {
        if num_written <= self.before {
            return false;
        }
        let n = num_written - self.before;
        n.is_multiple_of(self.per) && n / self.per <= self.max
    }

    /// Adds the tombstone over key numbers `[begin, begin + width)` to
    /// `batch` (`a`, `b`: key-sized scratch buffers), clears them from the
    /// live-key estimate and counts it.
    pub fn add(&self, ctx: &Ctx<'_>, batch: &mut Batch, begin: u64, a: &mut [u8], b: &mut [u8]) {
        let end = begin.saturating_add(self.width);
        if self.expand {
            for v in begin..end {
                ctx.keys.fill(v, a);
                batch.delete(ctx.cf_of(v), a);
            }
        } else {
            ctx.keys.fill(begin, a);
            ctx.keys.fill(end, b);
            for cf in 0..ctx.num_cfs as usize {
                batch.delete_range(cf, a, b);
            }
        }
        for v in begin..end.min(ctx.flags.num as u64) {
            ctx.live.delete(v);
        }
        ctx.range_tombstones.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(args: &[&str]) -> Option<Schedule> {
        Schedule::from_flags(&Flags::parse(args).unwrap())
    }

    #[test]
    fn due_follows_db_bench_do_write() {
        assert_eq!(schedule(&[]), None);
        // Defaults except per: max 0 means never.
        let s = schedule(&["--writes_per_range_tombstone=10"]).unwrap();
        assert!((0..1000).all(|n| !s.due(n)));
        let s = schedule(&[
            "--writes_before_delete_range=5",
            "--writes_per_range_tombstone=10",
            "--max_num_range_tombstones=3",
        ])
        .unwrap();
        let due: Vec<u64> = (0..100).filter(|&n| s.due(n)).collect();
        assert_eq!(due, vec![15, 25, 35]);
        let s = schedule(&[
            "--writes_per_range_tombstone=1",
            "--max_num_range_tombstones=2",
        ])
        .unwrap();
        let due: Vec<u64> = (0..10).filter(|&n| s.due(n)).collect();
        assert_eq!(due, vec![1, 2]);
    }

    #[test]
    fn engines_without_delete_range_are_refused() {
        let tomb = [
            "--engine=fjall",
            "--writes_per_range_tombstone=10",
            "--max_num_range_tombstones=3",
        ];
        let f = Flags::parse(&tomb).unwrap();
        let e = check(&f, ["fillseq"]).unwrap_err();
        assert!(
            e.0.contains("--engine=fjall") && e.0.contains("--expand_range_tombstones"),
            "{e}"
        );
        // Reads never issue tombstones; expanded tombstones are point deletes.
        assert!(check(&f, ["readrandom"]).is_ok());
        let mut expanded = tomb.to_vec();
        expanded.push("--expand_range_tombstones=1");
        assert!(check(&Flags::parse(&expanded).unwrap(), ["fillrandom"]).is_ok());
        // max 0 (db_bench's default) issues none.
        let f = Flags::parse(&["--engine=fjall", "--writes_per_range_tombstone=10"]).unwrap();
        assert!(check(&f, ["fillseq"]).is_ok());
        let f = Flags::parse(&["--engine=fjall"]).unwrap();
        let e = check(&f, ["fillseq", "deleterange"]).unwrap_err();
        assert!(e.0.contains("deleterange") && e.0.contains("shale"), "{e}");
        let f = Flags::parse(&["--engine=shale", "--keys_per_prefix=10"]).unwrap();
        assert!(check(&f, ["deleterange"]).is_err());
        for engine in ["shale", "rocksdb", "memory"] {
            let f = Flags::parse(&[
                format!("--engine={engine}").as_str(),
                "--writes_per_range_tombstone=10",
                "--max_num_range_tombstones=3",
            ])
            .unwrap();
            assert!(check(&f, ["fillseq", "deleterange"]).is_ok(), "{engine}");
        }
    }
}
