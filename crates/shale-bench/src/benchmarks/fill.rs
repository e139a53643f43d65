//! Write benchmarks: fillseq, fillrandom / overwrite, filluniquerandom,
//! deleterandom (db_bench's `DoWrite` and `DoDelete`).
//!
//! Draw order (§2.3): random mode draws once per batch (the DB choice,
//! unused with one DB) and once per entry; unique mode draws once per
//! batch; sequential mode never draws. Each batch is one engine write and
//! one latency sample; ops are counted per entry.

use super::{Ctx, OpLimit, ThreadState};
use crate::engine::{Batch, BatchOp};
use crate::error::{bail, Result};
use crate::mt19937::Mt19937_64;
use crate::stats::OpType;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sequential,
    Random,
    Unique,
}

/// fillseq: keys 0, 1, 2, … in order (every thread writes the same keys).
pub fn fillseq(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    do_write(ctx, t, Mode::Sequential)
}

/// fillrandom and overwrite: uniform random keys with replacement.
pub fn fillrandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    do_write(ctx, t, Mode::Random)
}

/// filluniquerandom: a shuffled permutation of [0, num), each key once.
pub fn filluniquerandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    do_write(ctx, t, Mode::Unique)
}

/// The permutation of `[0, num)` used by filluniquerandom: Fisher–Yates
/// driven by MT19937-64 seeded from the thread's shuffle seed (db_bench
/// uses libstdc++'s `std::shuffle`, not reproduced; DB_BENCH.md §10).
pub fn unique_permutation(num: u64, seed: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..num).collect();
    let mut rng = Mt19937_64::new(seed);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

fn do_write(ctx: &Ctx<'_>, t: &mut ThreadState, mode: Mode) -> Result<()> {
    let f = ctx.flags;
    let num = f.num as u64;
    let writes = f.writes();
    let batch_size = f.batch_size as u64;
    let value_size = f.value_size as usize;
    let unique = if mode == Mode::Unique {
        if writes > num {
            bail!("filluniquerandom needs --writes ({writes}) <= --num ({num})");
        }
        unique_permutation(num, ctx.seeds.shuffle_seed(t.seed))
    } else {
        Vec::new()
    };
    let secs = if mode == Mode::Random {
        f.duration as u64
    } else {
        0
    };
    let mut limit = OpLimit::new(secs, writes, f.ops_between_duration_checks as u64);
    let mut batch = Batch::default();
    let mut next = 0u64;
    let mut bytes = 0u64;
    while !limit.done(batch_size) {
        t.pace();
        if mode != Mode::Sequential {
            t.rng.next_u64(); // DB choice (one DB)
        }
        batch.clear();
        for _ in 0..batch_size {
            let v = match mode {
                Mode::Sequential => next,
                Mode::Random => t.rng.next_u64() % num,
                Mode::Unique => unique.get(next as usize).copied().unwrap_or(next),
            };
            next += 1;
            ctx.keys.fill(v, &mut t.key);
            batch.put(ctx.cf_of(v), &t.key, t.values.generate(value_size));
            ctx.live.put(v);
        }
        let batch_bytes = batch_size * (t.key.len() + value_size) as u64;
        if let Some(l) = &ctx.write_limiter {
            l.request(batch_bytes);
            t.after_limiter_sleep();
        }
        write_batch(ctx, &batch)?;
        bytes += batch_bytes;
        t.stats.finished_ops(batch_size, OpType::Write);
    }
    t.stats.add_bytes(bytes);
    t.user_bytes_written += bytes;
    Ok(())
}

/// One write: a plain put for a one-entry batch, else an atomic batch.
fn write_batch(ctx: &Ctx<'_>, batch: &Batch) -> Result<()> {
    if batch.len() == 1 {
        if let Some(BatchOp::Put(cf, k, v)) = batch.iter().next() {
            return ctx.db.put(cf, k, v, &ctx.wo);
        }
    }
    ctx.db.write(batch, &ctx.wo)
}

/// deleterandom: `deletes` random keys in batches of `--batch_size`.
pub fn deleterandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let batch_size = f.batch_size as u64;
    let mut limit = OpLimit::new(
        f.duration as u64,
        f.deletes(),
        f.ops_between_duration_checks as u64,
    );
    let mut batch = Batch::default();
    let mut cf = 0;
    while !limit.done(batch_size) {
        t.pace();
        t.rng.next_u64(); // DB choice
        batch.clear();
        for _ in 0..batch_size {
            let v = ctx.random_key(&mut t.rng);
            ctx.keys.fill(v, &mut t.key);
            cf = ctx.cf_of(v);
            batch.delete(cf, &t.key);
            ctx.live.delete(v);
        }
        if batch.len() == 1 {
            ctx.db.delete(cf, &t.key, &ctx.wo)?;
        } else {
            ctx.db.write(&batch, &ctx.wo)?;
        }
        t.stats.finished_ops(batch_size, OpType::Delete);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn permutation_is_a_permutation_and_seeded() {
        let p = unique_permutation(1000, 7);
        let s: BTreeSet<u64> = p.iter().copied().collect();
        assert_eq!(s.len(), 1000);
        assert_eq!(*s.iter().next_back().unwrap(), 999);
        assert_ne!(p, (0..1000).collect::<Vec<u64>>());
        assert_eq!(p, unique_permutation(1000, 7));
        assert_ne!(p, unique_permutation(1000, 8));
    }
}
