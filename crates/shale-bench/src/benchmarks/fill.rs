//! Write benchmarks: fillseq, fillrandom / overwrite, filluniquerandom
//! (db_bench's `DoWrite`), with its optional range tombstones
//! (range_del.rs).
//!
//! Draw order (§2.3): random mode draws once per batch (the DB choice,
//! unused with one DB) and once per entry; unique mode draws once per
//! batch; sequential mode never draws. A range tombstone takes one more
//! key from the same generator. Each batch is one engine write and one
//! latency sample; ops are counted per put.
//! Random and unique keys come from `[0, num + max_num_range_tombstones)`
//! (db_bench's `num_per_key_gen`).

use super::range_del::Schedule;
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

/// db_bench's `KeyGenerator`: the next key number of a fill.
struct KeyStream {
    mode: Mode,
    space: u64,
    next: u64,
    unique: Vec<u64>,
}

impl KeyStream {
    fn next(&mut self, rng: &mut Mt19937_64) -> u64 {
        match self.mode {
            Mode::Sequential => {
                self.next += 1;
                self.next - 1
            }
            Mode::Random => rng.next_u64() % self.space,
            Mode::Unique => {
                let i = self.next;
                self.next += 1;
                self.unique.get(i as usize).copied().unwrap_or(i)
            }
        }
    }
}

fn do_write(ctx: &Ctx<'_>, t: &mut ThreadState, mode: Mode) -> Result<()> {
    let f = ctx.flags;
    let num = f.num as u64;
    let writes = f.writes();
    let batch_size = f.batch_size as u64;
    let value_size = f.value_size as usize;
    let space = num + f.max_num_range_tombstones.max(0) as u64;
    let unique = if mode == Mode::Unique {
        if writes > num {
            bail!("filluniquerandom needs --writes ({writes}) <= --num ({num})");
        }
        unique_permutation(space, ctx.seeds.shuffle_seed(t.seed))
    } else {
        Vec::new()
    };
    let mut keys = KeyStream {
        mode,
        space,
        next: 0,
        unique,
    };
    let tombstones = Schedule::from_flags(f);
    let (mut begin_key, mut end_key) = (t.key.clone(), t.key.clone());
    let secs = if mode == Mode::Random {
        f.duration as u64
    } else {
        0
    };
    let mut limit = OpLimit::new(secs, writes, f.ops_between_duration_checks as u64);
    let mut batch = Batch::default();
    let mut num_written = 0u64;
    let mut bytes = 0u64;
    while !limit.done(batch_size) {
        t.pace();
        if mode != Mode::Sequential {
            t.rng.next_u64(); // DB choice (one DB)
        }
        batch.clear();
        for _ in 0..batch_size {
            let v = keys.next(&mut t.rng);
            ctx.keys.fill(v, &mut t.key);
            batch.put(ctx.cf_of(v), &t.key, t.values.generate(value_size));
            ctx.live.put(v);
            num_written += 1;
            if let Some(s) = tombstones.filter(|s| s.due(num_written)) {
                let begin = keys.next(&mut t.rng);
                s.add(ctx, &mut batch, begin, &mut begin_key, &mut end_key);
            }
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
