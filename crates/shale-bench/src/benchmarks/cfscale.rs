//! `cfscale`: what `--num_column_families=N` families cost the engine. Not
//! a db_bench benchmark; it runs inline in the main thread on fresh DBs of
//! its own at `--db` (the runner closes its handle first and reopens a
//! fresh one if more benchmarks follow) and prints one db_bench-style
//! result line per measurement (`name : X micros/op Y ops/sec S seconds
//! K operations; ...`, the op being one family or one put), each with the
//! raw seconds:
//!
//! * `cfscale.create_one`: families 1..K created with one `create_cf` call
//!   each in a fresh DB (K = `--cfscale_one_by_one`, default all N-1);
//! * `cfscale.create_batch`: families 1..N-1 created in one call
//!   (`Db::create_cfs`; the line says what an engine without one did) in
//!   another fresh DB, the one the next steps use;
//! * `cfscale.close` / `cfscale.reopen`: closing the DB with N families
//!   open, and opening it again with all N;
//! * `cfscale.rss`: VmRSS with the DB open with only `default` (before any
//!   family exists) and after the reopen with N idle families, and the
//!   delta per family (glibc's `malloc_trim(0)` runs before each sample so
//!   that memory freed by earlier steps is not counted);
//! * `cfscale.fill_idle` / `cfscale.fill_alone`: `--writes` (default
//!   `--num`) fillrandom-style puts (one thread, db_bench's key and value
//!   generators, one seed for both) into `default` with N-1 idle families
//!   present, then in a fresh DB with no other family; `cfscale.fill_ratio`
//!   is idle ops/s over alone ops/s.
//!
//! Single-threaded; owns every engine handle it opens.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use crate::engine::{self, Engine, WriteOpts};
use crate::error::{bail, Result};
use crate::flags::Flags;
use crate::keys::KeyGen;
use crate::mt19937::Mt19937_64;
use crate::sysinfo;
use crate::values::RandomGenerator;

/// One result line in db_bench's format (`ops` operations in `secs`),
/// followed by the raw seconds and `note`.
pub fn result_line(name: &str, secs: f64, ops: u64, note: &str) -> String {
    let secs_for_rate = secs.max(1e-9);
    format!(
        "{:<12} : {:11.3} micros/op {} ops/sec {:.3} seconds {} operations; raw {:.6} s{}{}",
        name,
        secs * 1e6 / ops.max(1) as f64,
        (ops as f64 / secs_for_rate) as i64,
        secs,
        ops,
        secs,
        if note.is_empty() { "" } else { "; " },
        note
    )
}

/// Gives freed heap back to the OS (glibc), so that VmRSS shows live memory.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

fn rss_after_trim() -> u64 {
    trim_heap();
    sysinfo::rss_bytes().unwrap_or(0)
}

fn with_families(flags: &Flags, n: usize) -> Flags {
    let mut f = flags.clone();
    f.num_column_families = n as i64;
    f
}

/// fillrandom's loop on one thread into family 0 (one DB-choice draw and
/// one key draw per put, as db_bench); returns the seconds.
fn fill_default(db: &dyn Engine, flags: &Flags, keys: &KeyGen, seed: u64) -> Result<f64> {
    let num = flags.num as u64;
    let value_size = flags.value_size as usize;
    let mut rng = Mt19937_64::new(seed);
    let mut values = RandomGenerator::new(seed as u32, flags.compression_ratio, value_size);
    let mut key = vec![0u8; keys.key_size()];
    let wo = WriteOpts {
        sync: flags.sync,
        disable_wal: flags.disable_wal,
    };
    let t = Instant::now();
    for _ in 0..flags.writes() {
        rng.next_u64(); // DB choice
        let v = rng.next_u64() % num;
        keys.fill(v, &mut key);
        db.put(0, &key, values.generate(value_size), &wo)?;
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Runs every cfscale measurement at `path` (destroyed first and left
/// holding the no-other-family DB) and returns the text to print.
pub fn run(flags: &Flags, path: &Path, keys: &KeyGen, seed: u64) -> Result<String> {
    let n = flags.num_column_families as usize;
    if n < 2 {
        bail!("cfscale needs --num_column_families >= 2 (got {n})");
    }
    let names: Vec<String> = engine::cf_names(n).into_iter().skip(1).collect();
    let created = names.len() as u64;
    let one = with_families(flags, 1);
    let all = with_families(flags, n);
    let mut out = String::new();

    // (d) baseline: the DB open with `default` only.
    engine::destroy(flags, path)?;
    let db = engine::open(&one, path)?;
    let rss_before = rss_after_trim();
    db.close()?;
    drop(db);

    // (b) one by one in a fresh DB.
    let k = match flags.cfscale_one_by_one as usize {
        0 => names.len(),
        k => k.min(names.len()),
    };
    let b = engine::create_families(flags, path, &names[..k], false)?;
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.create_one",
            b.secs,
            k as u64,
            &format!("{k} families, {}", b.how)
        )
    )?;

    // (a) batch creation in a fresh DB, kept for the next steps.
    engine::destroy(flags, path)?;
    let a = engine::create_families(flags, path, &names, true)?;
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.create_batch",
            a.secs,
            created,
            &format!("{created} families, {}", a.how)
        )
    )?;

    // (c) open with N families, close, reopen (timed); (d) RSS after.
    let db = engine::open(&all, path)?;
    if db.num_cfs() != n {
        bail!(
            "cfscale: engine opened {} families, expected {n}",
            db.num_cfs()
        );
    }
    let t = Instant::now();
    db.close()?;
    drop(db);
    let close_secs = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let db = engine::open(&all, path)?;
    let reopen_secs = t.elapsed().as_secs_f64();
    let rss_after = rss_after_trim();
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.close",
            close_secs,
            n as u64,
            &format!("close with {n} families open")
        )
    )?;
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.reopen",
            reopen_secs,
            n as u64,
            &format!("open with {n} families")
        )
    )?;
    let delta = rss_after as i64 - rss_before as i64;
    writeln!(
        out,
        "{:<12} : before {:.1} MiB (default only), after {:.1} MiB ({n} idle families), delta {:.1} MiB = {} bytes/family",
        "cfscale.rss",
        rss_before as f64 / 1_048_576.0,
        rss_after as f64 / 1_048_576.0,
        delta as f64 / 1_048_576.0,
        delta / created as i64
    )?;

    // (e) writes into `default` with N-1 idle families, then alone.
    let writes = flags.writes();
    let idle = fill_default(db.as_ref(), flags, keys, seed)?;
    db.close()?;
    drop(db);
    engine::destroy(flags, path)?;
    let db = engine::open(&one, path)?;
    let alone = fill_default(db.as_ref(), flags, keys, seed)?;
    db.close()?;
    drop(db);
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.fill_idle",
            idle,
            writes,
            &format!("puts into default, {created} idle families")
        )
    )?;
    writeln!(
        out,
        "{}",
        result_line(
            "cfscale.fill_alone",
            alone,
            writes,
            "puts into default, no other family"
        )
    )?;
    let (r_idle, r_alone) = (writes as f64 / idle, writes as f64 / alone);
    writeln!(
        out,
        "{:<12} : {:.3} (idle {} ops/sec / alone {} ops/sec)",
        "cfscale.fill_ratio",
        r_idle / r_alone,
        r_idle as i64,
        r_alone as i64
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_line_has_db_bench_fields() {
        let l = result_line("cfscale.create_one", 2.0, 1000, "note");
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f[0], "cfscale.create_one");
        assert_eq!(f[2], "2000.000");
        assert_eq!(f[3], "micros/op");
        assert_eq!(f[4], "500");
        assert_eq!(f[5], "ops/sec");
        assert_eq!(f[7], "seconds");
        assert!(l.ends_with("raw 2.000000 s; note"), "{l}");
    }

    #[test]
    fn needs_two_families() {
        let f = Flags::parse(&["--engine=memory", "--benchmarks=cfscale"]).unwrap();
        let k = KeyGen::new(16, 0, 0, 100).unwrap();
        let e = run(&f, Path::new("/nonexistent/cfscale"), &k, 1).unwrap_err();
        assert!(e.0.contains("--num_column_families"), "{e}");
    }
}
