//! Mixed workloads: readwhilewriting, seekrandomwhilewriting (readers plus
//! a background writer), readrandomwriterandom and updaterandom.
//!
//! The background writer is thread 0; it puts random keys (one draw for
//! the DB choice, one for the key), optionally throttled by its own
//! `--benchmark_write_rate_limit` bucket, until every reader has returned
//! (or, with `--finish_after_writes`, until it has done `--writes` puts).
//! Its stats are excluded from the result line but its ops count in the
//! interval report.

use super::{read, seek, Ctx, OpLimit, ThreadState};
use crate::error::Result;
use crate::ratelimit::RateLimiter;
use crate::stats::OpType;

/// readwhilewriting: readers run readrandom, thread 0 writes.
pub fn readwhilewriting(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    if t.tid > 0 {
        read::readrandom(ctx, t)
    } else {
        bg_writer(ctx, t)
    }
}

/// seekrandomwhilewriting: readers run seekrandom, thread 0 writes.
pub fn seekrandomwhilewriting(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    if t.tid > 0 {
        seek::seekrandom(ctx, t)
    } else {
        bg_writer(ctx, t)
    }
}

fn bg_writer(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let limiter = (f.benchmark_write_rate_limit > 0)
        .then(|| RateLimiter::new(f.benchmark_write_rate_limit as u64));
    t.stats.set_exclude_from_merge();
    let writes = f.writes();
    let value_size = f.value_size as usize;
    let mut written = 0u64;
    let mut bytes = 0u64;
    let mut hint_printed = false;
    loop {
        t.rng.next_u64(); // DB choice
        if f.finish_after_writes && written == writes {
            eprintln!("Exiting the writer after {written} writes...");
            break;
        }
        if ctx.others_done() {
            if !f.finish_after_writes {
                break;
            }
            if !hint_printed {
                eprintln!(
                    "Reads are finished. Have {} more writes to do",
                    writes - written
                );
                hint_printed = true;
            }
        }
        let v = ctx.random_key(&mut t.rng);
        ctx.keys.fill(v, &mut t.key);
        let val = t.values.generate(value_size);
        ctx.db.put(ctx.cf_of(v), &t.key, val, &ctx.wo)?;
        ctx.live.put(v);
        bytes += (t.key.len() + value_size) as u64;
        t.stats.finished_ops(1, OpType::Write);
        written += 1;
        if let Some(l) = &limiter {
            l.request((t.key.len() + value_size) as u64);
        }
    }
    t.stats.add_bytes(bytes);
    t.user_bytes_written += bytes;
    Ok(())
}

/// readrandomwriterandom: in each block of 100 ops the first
/// `--readwritepercent` are Gets, the rest Puts; each on a fresh random key.
pub fn readrandomwriterandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let value_size = f.value_size as usize;
    let total = f.readwrites();
    let mut limit = OpLimit::new(
        f.duration as u64,
        total,
        f.ops_between_duration_checks as u64,
    );
    let (mut get_weight, mut put_weight) = (0i64, 0i64);
    let (mut reads, mut writes, mut found) = (0u64, 0u64, 0u64);
    let mut value = Vec::with_capacity(value_size);
    while !limit.done(1) {
        t.pace();
        t.rng.next_u64(); // DB choice
        let v = ctx.random_key(&mut t.rng);
        ctx.keys.fill(v, &mut t.key);
        if get_weight == 0 && put_weight == 0 {
            get_weight = f.readwritepercent;
            put_weight = 100 - get_weight;
        }
        let cf = ctx.cf_of(v);
        if get_weight > 0 {
            if ctx.db.get(cf, &t.key, &mut value, f.verify_checksum)? {
                found += 1;
            }
            get_weight -= 1;
            reads += 1;
            t.stats.finished_ops(1, OpType::Read);
        } else if put_weight > 0 {
            ctx.db
                .put(cf, &t.key, t.values.generate(value_size), &ctx.wo)?;
            ctx.live.put(v);
            t.user_bytes_written += (t.key.len() + value_size) as u64;
            put_weight -= 1;
            writes += 1;
            t.stats.finished_ops(1, OpType::Write);
        }
    }
    t.stats.add_message(&format!(
        "( reads:{reads} writes:{writes} total:{total} found:{found})"
    ));
    Ok(())
}

/// updaterandom: Get(k) then Put(k, new value), one op each pair.
pub fn updaterandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let value_size = f.value_size as usize;
    let total = f.readwrites();
    let mut limit = OpLimit::new(
        f.duration as u64,
        total,
        f.ops_between_duration_checks as u64,
    );
    let (mut found, mut bytes) = (0u64, 0u64);
    let mut value = Vec::with_capacity(value_size);
    while !limit.done(1) {
        t.pace();
        t.rng.next_u64(); // DB choice
        let v = ctx.random_key(&mut t.rng);
        ctx.keys.fill(v, &mut t.key);
        let mut old = 0;
        let cf = ctx.cf_of(v);
        if ctx.db.get(cf, &t.key, &mut value, f.verify_checksum)? {
            found += 1;
            old = value.len();
            bytes += (t.key.len() + old) as u64;
        }
        if let Some(l) = &ctx.write_limiter {
            l.request((t.key.len() + old) as u64);
        }
        ctx.db
            .put(cf, &t.key, t.values.generate(value_size), &ctx.wo)?;
        ctx.live.put(v);
        bytes += (t.key.len() + value_size) as u64;
        t.user_bytes_written += (t.key.len() + value_size) as u64;
        t.stats.finished_ops(1, OpType::Update);
    }
    t.stats.add_bytes(bytes);
    t.stats
        .add_message(&format!("( updates:{total} found:{found})"));
    Ok(())
}
