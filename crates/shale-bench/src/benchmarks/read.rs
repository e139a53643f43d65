//! Point and sequential reads: readrandom, multireadrandom, readseq,
//! readreverse (db_bench's `ReadRandom`, `MultiReadRandom`,
//! `ReadSequential`, `ReadReverse`).
//!
//! readrandom draws twice per op (DB choice, key); multireadrandom once per
//! batch plus once per key. Found bytes (key + value) count toward MB/s.

use super::{Ctx, OpLimit, ThreadState};
use crate::engine::IterOpts;
use crate::error::Result;
use crate::stats::OpType;

/// readrandom: `reads` Gets of uniform random keys.
pub fn readrandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let mut limit = OpLimit::new(
        f.duration as u64,
        f.reads(),
        f.ops_between_duration_checks as u64,
    );
    let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
    let mut value = Vec::with_capacity(f.value_size as usize);
    while !limit.done(1) {
        t.pace();
        t.rng.next_u64(); // DB choice
        let v = ctx.random_key(&mut t.rng);
        ctx.keys.fill(v, &mut t.key);
        read += 1;
        if ctx
            .db
            .get(ctx.cf_of(v), &t.key, &mut value, f.verify_checksum)?
        {
            found += 1;
            bytes += (t.key.len() + value.len()) as u64;
        }
        if let Some(l) = &ctx.read_limiter {
            if read % 256 == 255 {
                l.request(256);
            }
        }
        t.stats.finished_ops(1, OpType::Read);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)\n"));
    Ok(())
}

/// multireadrandom: `reads` keys as MultiGets of `--batch_size` keys.
pub fn multireadrandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    // runner::run refuses multireadrandom with several families.
    debug_assert_eq!(ctx.num_cfs, 1);
    let batch = f.batch_size as usize;
    let ks = ctx.keys.key_size();
    let mut limit = OpLimit::new(
        f.duration as u64,
        f.reads(),
        f.ops_between_duration_checks as u64,
    );
    let (mut read, mut found, mut bytes, mut multireads) = (0u64, 0u64, 0u64, 0u64);
    let mut keybuf = vec![0u8; ks * batch];
    while !limit.done(batch as u64) {
        t.pace();
        t.rng.next_u64(); // DB choice
        for chunk in keybuf.chunks_mut(ks) {
            let v = ctx.random_key(&mut t.rng);
            ctx.keys.fill(v, chunk);
        }
        let keys: Vec<&[u8]> = keybuf.chunks(ks).collect();
        ctx.db.multi_get(0, &keys, &mut |_, value| {
            found += 1;
            bytes += (ks + value.len()) as u64;
        })?;
        read += batch as u64;
        multireads += 1;
        if let Some(l) = &ctx.read_limiter {
            if multireads % 256 == 255 {
                l.request(256 * batch as u64);
            }
        }
        t.stats.finished_ops(batch as u64, OpType::Read);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)"));
    Ok(())
}

fn scan(ctx: &Ctx<'_>, t: &mut ThreadState, reverse: bool) -> Result<()> {
    let f = ctx.flags;
    let reads = f.reads();
    let opts = IterOpts {
        verify_checksums: f.verify_checksum,
        readahead_size: f.readahead_size.max(0) as usize,
        ..IterOpts::default()
    };
    let (mut i, mut bytes) = (0u64, 0u64);
    // Families in turn (0, 1, …; reverse: last first), sharing `reads`.
    for n in 0..ctx.num_cfs as usize {
        let cf = if reverse {
            ctx.num_cfs as usize - 1 - n
        } else {
            n
        };
        let mut it = ctx.db.new_iterator(cf, &opts)?;
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while i < reads && it.valid() {
            bytes += (it.key().len() + it.value().len()) as u64;
            t.stats.finished_ops(1, OpType::Read);
            i += 1;
            if let Some(l) = &ctx.read_limiter {
                if i % 1024 == 1023 {
                    l.request(1024);
                }
            }
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        if i >= reads {
            break;
        }
    }
    t.stats.add_bytes(bytes);
    Ok(())
}

/// readseq: SeekToFirst then Next, up to `reads` entries.
pub fn readseq(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    scan(ctx, t, false)
}

/// readreverse: SeekToLast then Prev, up to `reads` entries.
pub fn readreverse(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    scan(ctx, t, true)
}
