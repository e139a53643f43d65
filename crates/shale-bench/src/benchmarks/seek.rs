//! seekrandom (db_bench's `SeekRandom`): a new iterator per seek, Seek to a
//! random key (one draw), then up to `--seek_nexts` Next() (Prev() with
//! `--reverse_iterator`). Found = positioned exactly on the key. Bytes of
//! every entry stepped over count toward MB/s. `--max_scan_distance` bounds
//! the iterator above (or, reverse, below). With several column families
//! the iterator is over the family of the sought key.
//! Shale-bench only: `--seek_key_range_start` / `--seek_key_range_end`
//! confine the sought key numbers to `[start, end)` (`start + rand % (end
//! - start)`, still one draw; the defaults `[0, num)` are db_bench's).

use super::{Ctx, OpLimit, ThreadState};
use crate::engine::IterOpts;
use crate::error::Result;
use crate::stats::OpType;

/// seekrandom.
pub fn seekrandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let f = ctx.flags;
    let num = f.num as u64;
    let dist = f.max_scan_distance as u64;
    let (lo, hi) = f.seek_key_range();
    let mut limit = OpLimit::new(
        f.duration as u64,
        f.reads(),
        f.ops_between_duration_checks as u64,
    );
    let (mut read, mut found, mut bytes) = (0u64, 0u64, 0u64);
    let mut opts = IterOpts {
        verify_checksums: f.verify_checksum,
        readahead_size: f.readahead_size.max(0) as usize,
        prefix_same_as_start: f.prefix_same_as_start,
        total_order_seek: f.total_order_seek,
        ..IterOpts::default()
    };
    while !limit.done(1) {
        t.pace();
        let pos = lo + t.rng.next_u64() % (hi - lo);
        ctx.keys.fill(pos, &mut t.key);
        if dist != 0 {
            if f.reverse_iterator {
                opts.lower = Some(ctx.keys.key(pos.saturating_sub(dist)));
            } else {
                opts.upper = Some(ctx.keys.key(num.max(hi).min(pos + dist)));
            }
        }
        let mut it = ctx.db.new_iterator(ctx.cf_of(pos), &opts)?;
        it.seek(&t.key);
        read += 1;
        if it.valid() && it.key() == t.key.as_slice() {
            found += 1;
        }
        let mut j = 0;
        while j < f.seek_nexts && it.valid() {
            bytes += (it.key().len() + it.value().len()) as u64;
            if f.reverse_iterator {
                it.prev();
            } else {
                it.next();
            }
            j += 1;
        }
        it.status()?;
        drop(it);
        if let Some(l) = &ctx.read_limiter {
            if read % 256 == 255 {
                l.request(256);
            }
        }
        t.stats.finished_ops(1, OpType::Seek);
    }
    t.stats.add_bytes(bytes);
    t.stats.add_message(&format!("({found} of {read} found)\n"));
    Ok(())
}
