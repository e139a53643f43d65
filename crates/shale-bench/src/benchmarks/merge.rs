//! Merge benchmarks: mergerandom and readrandommergerandom (db_bench's
//! `MergeRandom` and `ReadRandomMergeRandom`).
//!
//! Both run `readwrites` ops per thread (`--num` unless `--reads` or
//! `--writes` is set, then the larger) on the key space `[0, merge_keys)`
//! (`--merge_keys`, default `--num`; keys laid out with `merge_keys` as the
//! key count, as `GenerateKeyFromInt(v, merge_keys_)`), under `--duration`.
//! Each op draws once for the DB choice and once for the key; the operand is
//! the next `--value_size` bytes of the value generator (`gen.Generate()`),
//! whatever the operator: with uint64add db_bench expects `--value_size=8`.
//!
//! * mergerandom: one Merge per op; bytes counted as key + operand (MB/s);
//!   message `( updates:<readwrites>)`.
//! * readrandommergerandom: a third draw per op, `rand % 100 <
//!   --mergereadpercent`, picks Merge, else Get; no bytes counted; message
//!   `(reads:R merges:M total:T hits:H maxlength:L)` (L = the longest value
//!   a Get returned).
//!
//! Column families: key `v` lives in family `v % N` for both (db_bench's
//! readrandommergerandom uses `default` only; here reads follow the rule
//! of every other key-addressed step, so they find what the merges wrote).
//!
//! They need an engine with merge operators and `--merge_operator`;
//! [`check`] refuses them before anything runs (db_bench prints
//! `skipped (--merge_operator is unknown)` and exits).

use super::{Ctx, OpLimit, ThreadState};
use crate::engine::MERGE_ENGINES;
use crate::error::{bail, Error, Result};
use crate::flags::Flags;
use crate::keys::KeyGen;
use crate::merge_operator::SUPPORTED;
use crate::stats::OpType;

/// True for the benchmarks that merge.
pub fn is_merge_benchmark(name: &str) -> bool {
    matches!(name, "mergerandom" | "readrandommergerandom")
}

/// Refuses merge benchmark `name` when the engine has no merge operators
/// or `--merge_operator` is not set.
pub fn check(flags: &Flags, name: &str) -> Result<()> {
    if !MERGE_ENGINES.contains(&flags.engine.as_str()) {
        bail!(
            "{name} is not supported by --engine={} (it has no merge operator); use {}",
            flags.engine,
            MERGE_ENGINES
                .iter()
                .map(|e| format!("--engine={e}"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    if flags.merge_op()?.is_none() {
        bail!(
            "{name} needs --merge_operator (one of {SUPPORTED}); db_bench skips it too: \
             \"{name:<12} : skipped (--merge_operator is unknown)\""
        );
    }
    merge_keygen(flags).map(|_| ())
}

/// The key layout of the merge key space (`GenerateKeyFromInt(v,
/// merge_keys_)`: the key count matters for prefixes).
fn merge_keygen(f: &Flags) -> Result<KeyGen> {
    KeyGen::new(
        f.key_size as usize,
        f.prefix_size as usize,
        f.keys_per_prefix as u64,
        f.merge_keys(),
    )
    .map_err(|e| {
        Error(format!(
            "{e} (the merge benchmarks' key count is --merge_keys = {})",
            f.merge_keys()
        ))
    })
}

/// What both merge benchmarks set up from the flags.
struct MergeRun {
    value_size: usize,
    total: u64,
    merge_keys: u64,
    keys: KeyGen,
    limit: OpLimit,
}

impl MergeRun {
    fn new(f: &Flags) -> Result<MergeRun> {
        let total = f.readwrites();
        Ok(MergeRun {
            value_size: f.value_size as usize,
            total,
            merge_keys: f.merge_keys(),
            keys: merge_keygen(f)?,
            limit: OpLimit::new(
                f.duration as u64,
                total,
                f.ops_between_duration_checks as u64,
            ),
        })
    }
}

/// mergerandom: Merge(random key, next operand), `readwrites` times.
pub fn mergerandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let MergeRun {
        value_size,
        total,
        merge_keys,
        keys,
        mut limit,
    } = MergeRun::new(ctx.flags)?;
    let mut bytes = 0u64;
    while !limit.done(1) {
        t.pace();
        t.rng.next_u64(); // DB choice
        let v = t.rng.next_u64() % merge_keys;
        keys.fill(v, &mut t.key);
        let operand = t.values.generate(value_size);
        ctx.db.merge(ctx.cf_of(v), &t.key, operand, &ctx.wo)?;
        ctx.live.put(v);
        bytes += (t.key.len() + value_size) as u64;
        t.stats.finished_ops(1, OpType::Merge);
    }
    t.stats.add_bytes(bytes);
    t.user_bytes_written += bytes;
    t.stats.add_message(&format!("( updates:{total})"));
    Ok(())
}

/// readrandommergerandom: per op a Merge with chance `--mergereadpercent`
/// percent, else a Get, on a random key.
pub fn readrandommergerandom(ctx: &Ctx<'_>, t: &mut ThreadState) -> Result<()> {
    let MergeRun {
        value_size,
        total,
        merge_keys,
        keys,
        mut limit,
    } = MergeRun::new(ctx.flags)?;
    let (mut reads, mut merges, mut hits, mut max_length) = (0u64, 0u64, 0u64, 0usize);
    let mut value = Vec::with_capacity(value_size);
    while !limit.done(1) {
        t.pace();
        t.rng.next_u64(); // DB choice
        let v = t.rng.next_u64() % merge_keys;
        keys.fill(v, &mut t.key);
        let do_merge = (t.rng.next_u64() % 100) < ctx.flags.mergereadpercent as u64;
        let cf = ctx.cf_of(v);
        if do_merge {
            let operand = t.values.generate(value_size);
            ctx.db.merge(cf, &t.key, operand, &ctx.wo)?;
            ctx.live.put(v);
            t.user_bytes_written += (t.key.len() + value_size) as u64;
            merges += 1;
            t.stats.finished_ops(1, OpType::Merge);
        } else {
            if ctx
                .db
                .get(cf, &t.key, &mut value, ctx.flags.verify_checksum)?
            {
                hits += 1;
                max_length = max_length.max(value.len());
            }
            reads += 1;
            t.stats.finished_ops(1, OpType::Read);
        }
    }
    t.stats.add_message(&format!(
        "(reads:{reads} merges:{merges} total:{total} hits:{hits} maxlength:{max_length})"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_engines_without_merges_and_a_missing_operator() {
        let f = Flags::parse(&["--engine=memory", "--merge_operator=uint64add"]).unwrap();
        let e = check(&f, "mergerandom").unwrap_err();
        assert!(
            e.0.contains("--engine=memory") && e.0.contains("--engine=shale"),
            "{e}"
        );
        let f = Flags::parse(&["--engine=fjall"]).unwrap();
        assert!(check(&f, "readrandommergerandom").is_err());
        let f = Flags::parse(&["--engine=shale"]).unwrap();
        let e = check(&f, "readrandommergerandom").unwrap_err();
        assert!(e.0.contains("needs --merge_operator"), "{e}");
        assert!(e.0.contains("skipped (--merge_operator is unknown)"), "{e}");
        let f = Flags::parse(&["--engine=rocksdb", "--merge_operator=put"]).unwrap();
        assert!(check(&f, "mergerandom").is_ok());
        assert!(is_merge_benchmark("mergerandom"));
        assert!(!is_merge_benchmark("updaterandom"));
    }

    #[test]
    fn merge_keys_shape_the_prefix() {
        let f = Flags::parse(&[
            "--num=1000",
            "--merge_keys=100",
            "--keys_per_prefix=10",
            "--prefix_size=4",
        ])
        .unwrap();
        // 10 prefixes over the merge key space, not 100 over --num.
        let k = merge_keygen(&f).unwrap();
        assert_eq!(&k.key(99)[..4], &[0, 0, 0, 9]);
        let f = Flags::parse(&[
            "--engine=shale",
            "--merge_operator=max",
            "--num=1000",
            "--merge_keys=5",
            "--keys_per_prefix=10",
        ])
        .unwrap();
        let e = check(&f, "mergerandom").unwrap_err();
        assert!(e.0.contains("--merge_keys = 5"), "{e}");
    }
}
