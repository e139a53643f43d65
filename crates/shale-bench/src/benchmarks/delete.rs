//! Delete benchmarks: deleteseq and deleterandom (db_bench's `DoDelete`),
//! and deleterange (shale-bench only: db_bench has no such benchmark).
//!
//! * deleteseq / deleterandom: `--deletes` Deletes per thread in batches of
//!   `--batch_size` (one engine write and one latency sample per batch;
//!   ops counted per key, no bytes). Each batch draws once for the DB
//!   choice (unused with one DB); deleterandom then draws once per key
//!   (`rand % num`), deleteseq deletes key numbers `i, i + 1, …` with `i`
//!   from `--delete_range_start` (0, db_bench's start, by default); every
//!   thread deletes the same keys. deleterandom stops on `--duration`,
//!   deleteseq does not.
//! * deleterange: one DeleteRange over the key numbers
//!   `[--delete_range_start, --delete_range_end)` (default `[0, num)`), in
//!   every column family, on one thread (the registry forces it); the
//!   result line counts 1 delete op and names the range.
//!
//! Key `v` lives in family `v % N` (see the module above).

use std::sync::atomic::Ordering;

use super::{Ctx, OpLimit, ThreadState};
use crate::engine::Batch;
use crate::error::Result;
use crate::stats::OpType;

/// deleteseq: `deletes` keys from `--delete_range_start` on, in order.
pub fn deleteseq(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    do_delete(ctx, t, true)
}

/// deleterandom: `deletes` random keys.
pub fn deleterandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    do_delete(ctx, t, false)
}

fn do_delete(ctx: &Ctx<'_>, t: &mut ThreadState, seq: bool) -> Result<()> {
    let f = ctx.flags;
    let batch_size = f.batch_size as u64;
    let secs = if seq { 0 } else { f.duration as u64 };
    let mut limit = OpLimit::new(secs, f.deletes(), f.ops_between_duration_checks as u64);
    let mut batch = Batch::default();
    let mut cf = 0;
    let mut i = f.delete_range_start.max(0) as u64;
    while !limit.done(batch_size) {
        t.pace();
        t.rng.next_u64(); // DB choice
        batch.clear();
        for j in 0..batch_size {
            let v = if seq {
                i + j
            } else {
                ctx.random_key(&mut t.rng)
            };
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
        i += batch_size;
    }
    Ok(())
}

/// deleterange: one DeleteRange over `[--delete_range_start,
/// --delete_range_end)` in every family.
pub fn deleterange(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let (a, b) = ctx.flags.delete_range_bounds();
    t.pace();
    let start = ctx.keys.key(a);
    let end = ctx.keys.key(b);
    if ctx.num_cfs == 1 {
        ctx.db.delete_range(0, &start, &end, &ctx.wo)?;
    } else {
        let mut batch = Batch::default();
        for cf in 0..ctx.num_cfs as usize {
            batch.delete_range(cf, &start, &end);
        }
        ctx.db.write(&batch, &ctx.wo)?;
    }
    for v in a..b.min(ctx.flags.num as u64) {
        ctx.live.delete(v);
    }
    ctx.range_tombstones.fetch_add(1, Ordering::Relaxed);
    t.stats.finished_ops(1, OpType::Delete);
    t.stats
        .add_message(&format!("(key numbers [{a}, {b}) in one DeleteRange)"));
    Ok(())
}
