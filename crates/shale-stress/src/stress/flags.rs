//! Command-line flags of `shale-stress`, db_stress style: `--name=value` or
//! `--name value`; booleans also as a bare `--name`.
//!
//! The merge, single-delete, range-deletion, TTL and compaction-filter
//! flags, when not given, are drawn from the seed ([`Flags::parse`]), so a
//! crash test that passes only seeds runs some iterations with merges,
//! range deletions or expiring puts and some DBs with single deletes or the
//! compaction filter.

use std::path::PathBuf;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Parsed flags.
#[derive(Debug, Clone)]
pub struct Flags {
    /// DB directory (required).
    pub db: PathBuf,
    /// Expected-state file; default `<db>.expected`.
    pub expected: PathBuf,
    /// Client threads.
    pub threads: usize,
    /// Keys are `0..max_key` (fixed when the expected state is created).
    pub max_key: u64,
    /// Operations per thread (over all phases).
    pub ops_per_thread: u64,
    /// Stop after this long even if operations remain.
    pub duration: Option<Duration>,
    /// Seed for options and operations; default: from the clock.
    pub seed: u64,
    /// Only verify the DB against the expected state, then exit.
    pub verify_only: bool,
    /// Close and reopen the DB this many times during the run.
    pub reopen: u32,
    /// Sync the WAL on every write.
    pub sync: bool,
    /// Column families the keys are spread over (`default`, `cf1`, ...);
    /// fixed when the expected state is created.
    pub column_families: u32,
    /// History mode: record every operation in this directory (surviving
    /// `kill -9`) instead of checking an expected state; `--verify_only`
    /// then checks the whole history for linearizability and consistent
    /// cuts. Keys are few (`--max_key` at most [`MAX_HISTORY_KEYS`],
    /// default 64) so that keys see contention.
    pub history: Option<PathBuf>,
    /// Puts become merges of an operand holding the whole value, which the
    /// merge operator keeps over anything below (RocksDB db_stress's
    /// `--use_merge`). Default: drawn from the seed, 1 run in 4.
    pub use_merge: bool,
    /// Percent of the writes that would put (single or in a batch) that
    /// merge a read-modify-write operand instead, whose result the expected
    /// state predicts (`merge_op.rs`). Default: drawn from the seed, 0 in
    /// half the runs, else 10 or 30. Not in history mode.
    pub merge_percent: u32,
    /// Percent of the keys that are never overwritten: put only while
    /// absent, removed with `single_delete` (db_stress's
    /// `--nooverwritepercent`). Fixed when the expected state is created;
    /// default: drawn from the seed, 0 in half the runs, else 5 or 20. Not in
    /// history mode.
    pub nooverwritepercent: u32,
    /// `--nooverwritepercent` was given (not drawn).
    pub nooverwritepercent_given: bool,
    /// Percent of the operations that are range deletions (db_stress's
    /// `--delrangepercent`), each of `--range_deletion_width` consecutive
    /// keys of one family, cut around no-overwrite keys (a single delete
    /// must meet only its put).
    /// Default: drawn from the seed, 0 in half the runs, else 2 or 5. In
    /// history mode too, recorded as one batch deleting every key of the
    /// range.
    pub delrangepercent: u32,
    /// Keys per range deletion (db_stress's `--range_deletion_width`),
    /// at least 1; default 10; at most `--max_key` keys are covered.
    pub range_deletion_width: u64,
    /// Percent of the writes that would put (single or in a batch, not
    /// no-overwrite keys) that put an expiring value instead: a quarter
    /// already expired at write time, a quarter expiring in 30 days, half
    /// 1-4 s after the write (so expiry passes during the run and across
    /// kills). Default: drawn from the seed, 0 in half the runs, else 10 or
    /// 30. Not in history mode (its register model has no clock).
    pub ttl_percent: u32,
    /// Open the DB with the stress compaction filter
    /// (`compaction_filter.rs`). Fixed when the expected state is created
    /// (every later run and verification reopens with the same filter);
    /// default: drawn from the seed, 1 DB in 2. Not in history mode.
    pub compaction_filter: bool,
    /// `--compaction_filter` was given (not drawn).
    pub compaction_filter_given: bool,
    /// db_bench's `--compaction_style`: 0 leveled, 2 FIFO (every family,
    /// with a cap no run reaches: see `db_options::use_fifo`). Fixed when
    /// the expected state is created; default: drawn from the seed, FIFO
    /// in 1 DB in 4. Not in history mode.
    pub compaction_style: u32,
    /// `--enable_blob_files` (db_stress's name): key-value separation on
    /// or off in every family of this run, with the other blob options
    /// drawn (`db_options::random_blob`); `None` (not given): drawn per
    /// run and family. Given as on, FIFO is not drawn (FIFO refuses blob
    /// files); a FIFO DB runs without them.
    pub enable_blob_files: Option<bool>,
}

/// Largest `--column_families`.
pub const MAX_COLUMN_FAMILIES: u32 = 64;

/// Largest `--max_key` in history mode (the recovery read of every key is
/// one snapshot read, checked pairwise by the cut check).
pub const MAX_HISTORY_KEYS: u64 = 1000;

/// The usage text.
pub const USAGE: &str = "usage: shale-stress --db=DIR [--threads=4] [--max_key=10000] \
[--ops_per_thread=100000] [--duration=SECS] [--seed=N] [--verify_only] [--reopen=0] \
[--sync] [--expected=FILE] [--history=DIR] [--column_families=1] [--use_merge] \
[--merge_percent=N] [--nooverwritepercent=N] [--delrangepercent=N] \
[--range_deletion_width=10] [--ttl_percent=N] [--compaction_filter] [--compaction_style=0|2] \
[--enable_blob_files[=0|1]]";

/// The `--help` text: the usage line, then each flag.
pub const HELP: &str = "\
  --db=DIR                 the DB (created with its expected state if missing)
  --expected=FILE          expected-state file [<db>.expected]
  --threads=N              client threads [4]
  --max_key=N              keys 0..N per family, fixed at creation [10000; history 64]
  --ops_per_thread=N       operations per thread [100000]
  --duration=SECS          stop after this long
  --seed=N                 options and operations [the clock]
  --verify_only            verify the DB (or check the history) and exit
  --reopen=N               close, reopen and verify N times during the run [0]
  --sync                   sync the WAL on every write
  --column_families=N      keys over N families, fixed at creation [1]
  --history=DIR            record a history for the linearizability check instead
  Drawn from the seed unless given:
  --use_merge              puts become merges of the whole value
  --merge_percent=N        read-modify-write merges among puts (not history)
  --nooverwritepercent=N   keys put once, single-deleted; fixed at creation (not history)
  --delrangepercent=N      range deletions among operations
  --range_deletion_width=N keys per range deletion [10]
  --ttl_percent=N          expiring puts among puts: expired at write, 1-4 s, 30 days;
                           verified by the clock, 1 s tolerance (not history)
  --compaction_filter      open with the stress filter (keys 3 mod 8 rewritten,
                           6 mod 8 removed); fixed at creation (not history)
  --compaction_style=N     0 leveled, 2 FIFO (every family, nothing dropped);
                           fixed at creation (not history)
  --enable_blob_files      blob files (key-value separation) in every family of the
                           run, other blob options drawn; =0 turns them off; never
                           with FIFO
Exit status: 0 ok, 1 verification failure, 2 usage or setup error.";

fn parse_num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("--{name}: not a number: {v:?}"))
}

fn parse_bool(name: &str, v: Option<&str>) -> Result<bool, String> {
    match v {
        None | Some("1") | Some("true") => Ok(true),
        Some("0") | Some("false") => Ok(false),
        Some(v) => Err(format!("--{name}: not a boolean: {v:?}")),
    }
}

impl Flags {
    /// Parses `args` (without the program name).
    pub fn parse(args: &[String]) -> Result<Flags, String> {
        let mut db = None;
        let mut expected = None;
        let mut f = Flags {
            db: PathBuf::new(),
            expected: PathBuf::new(),
            threads: 4,
            max_key: 10_000,
            ops_per_thread: 100_000,
            duration: None,
            seed: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            verify_only: false,
            reopen: 0,
            sync: false,
            history: None,
            column_families: 1,
            use_merge: false,
            merge_percent: 0,
            nooverwritepercent: 0,
            nooverwritepercent_given: false,
            delrangepercent: 0,
            range_deletion_width: 10,
            ttl_percent: 0,
            compaction_filter: false,
            compaction_filter_given: false,
            compaction_style: 0,
            enable_blob_files: None,
        };
        let mut max_key_given = false;
        let (mut use_merge, mut merge_percent, mut delrangepercent) = (None, None, None);
        let (mut ttl_percent, mut compaction_filter) = (None, None);
        let mut compaction_style: Option<u32> = None;
        let mut it = args.iter().peekable();
        while let Some(arg) = it.next() {
            let Some(body) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument {arg:?}"));
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let is_bool = matches!(
                name,
                "verify_only" | "sync" | "use_merge" | "compaction_filter" | "enable_blob_files"
            );
            let value = match inline {
                Some(v) => Some(v),
                None if is_bool => None,
                None => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| format!("--{name} needs a value"))?,
                ),
            };
            let v = value.as_deref().unwrap_or("");
            match name {
                "db" => db = Some(PathBuf::from(v)),
                "expected" => expected = Some(PathBuf::from(v)),
                "history" => f.history = Some(PathBuf::from(v)),
                "threads" => f.threads = parse_num(name, v)?,
                "max_key" => {
                    f.max_key = parse_num(name, v)?;
                    max_key_given = true;
                }
                "ops_per_thread" => f.ops_per_thread = parse_num(name, v)?,
                "duration" => f.duration = Some(Duration::from_secs_f64(parse_num(name, v)?)),
                "seed" => f.seed = parse_num(name, v)?,
                "column_families" => f.column_families = parse_num(name, v)?,
                "reopen" => f.reopen = parse_num(name, v)?,
                "verify_only" => f.verify_only = parse_bool(name, value.as_deref())?,
                "sync" => f.sync = parse_bool(name, value.as_deref())?,
                "use_merge" => use_merge = Some(parse_bool(name, value.as_deref())?),
                "merge_percent" => merge_percent = Some(parse_num(name, v)?),
                "nooverwritepercent" => {
                    f.nooverwritepercent = parse_num(name, v)?;
                    f.nooverwritepercent_given = true;
                }
                "delrangepercent" => delrangepercent = Some(parse_num(name, v)?),
                "range_deletion_width" => f.range_deletion_width = parse_num(name, v)?,
                "ttl_percent" => ttl_percent = Some(parse_num(name, v)?),
                "compaction_filter" => {
                    compaction_filter = Some(parse_bool(name, value.as_deref())?)
                }
                "compaction_style" => compaction_style = Some(parse_num(name, v)?),
                "enable_blob_files" => {
                    f.enable_blob_files = Some(parse_bool(name, value.as_deref())?)
                }
                _ => return Err(format!("unknown flag --{name}")),
            }
        }
        f.db = db.ok_or("--db is required")?;
        f.expected = expected.unwrap_or_else(|| {
            let mut p = f.db.clone().into_os_string();
            p.push(".expected");
            PathBuf::from(p)
        });
        if f.threads == 0 || f.max_key == 0 || f.max_key > u32::MAX as u64 {
            return Err("--threads must be > 0 and --max_key in 1..2^32".into());
        }
        if !(1..=MAX_COLUMN_FAMILIES).contains(&f.column_families) {
            return Err(format!(
                "--column_families must be in 1..={MAX_COLUMN_FAMILIES}"
            ));
        }
        // Drawn in a fixed order, so each depends on the seed alone.
        let mut draw = SmallRng::seed_from_u64(f.seed ^ 0x3e49_e0ad);
        let drawn_use_merge = draw.gen_ratio(1, 4);
        let drawn_merge_percent = *[0, 0, 10, 30].choose(&mut draw).unwrap_or(&0);
        let drawn_no_overwrite = *[0, 0, 5, 20].choose(&mut draw).unwrap_or(&0);
        let drawn_delrange = *[0, 0, 2, 5].choose(&mut draw).unwrap_or(&0);
        let drawn_ttl = *[0, 0, 10, 30].choose(&mut draw).unwrap_or(&0);
        let drawn_filter = draw.gen_ratio(1, 2);
        let drawn_style = if draw.gen_ratio(1, 4) { 2 } else { 0 };
        let history = f.history.is_some();
        f.use_merge = use_merge.unwrap_or(drawn_use_merge);
        f.merge_percent = merge_percent.unwrap_or(if history { 0 } else { drawn_merge_percent });
        if !f.nooverwritepercent_given && !history {
            f.nooverwritepercent = drawn_no_overwrite;
        }
        f.delrangepercent = delrangepercent.unwrap_or(drawn_delrange);
        f.ttl_percent = ttl_percent.unwrap_or(if history { 0 } else { drawn_ttl });
        f.compaction_filter_given = compaction_filter.is_some();
        f.compaction_filter = compaction_filter.unwrap_or(!history && drawn_filter);
        // Blob files forced on: FIFO (which refuses them) is not drawn.
        let blob_on = f.enable_blob_files == Some(true);
        f.compaction_style =
            compaction_style.unwrap_or(if history || blob_on { 0 } else { drawn_style });
        if blob_on && f.compaction_style == 2 {
            return Err(
                "--enable_blob_files with --compaction_style=2: FIFO compaction refuses blob files"
                    .into(),
            );
        }
        if f.compaction_style != 0 && f.compaction_style != 2 {
            return Err(format!(
                "--compaction_style={}: 0 (leveled) or 2 (FIFO); universal does not run yet",
                f.compaction_style
            ));
        }
        if f.merge_percent > 100
            || f.nooverwritepercent > 100
            || f.delrangepercent > 100
            || f.ttl_percent > 100
        {
            return Err(
                "--merge_percent, --nooverwritepercent, --delrangepercent and \
                 --ttl_percent must be at most 100"
                    .into(),
            );
        }
        if f.range_deletion_width == 0 {
            return Err("--range_deletion_width must be at least 1".into());
        }
        if history {
            if !max_key_given {
                f.max_key = 64;
            }
            if f.merge_percent > 0 || f.nooverwritepercent > 0 {
                return Err(
                    "--history: --merge_percent and --nooverwritepercent are not supported \
                     (the history's model is a register; --use_merge is)"
                        .into(),
                );
            }
            if f.compaction_style != 0 {
                return Err("--history: --compaction_style=2 is not supported".into());
            }
            if f.ttl_percent > 0 || f.compaction_filter {
                return Err(
                    "--history: --ttl_percent and --compaction_filter are not supported \
                     (values there change with the clock and with compactions, not only by \
                     operations of the history)"
                        .into(),
                );
            }
            if f.max_key > MAX_HISTORY_KEYS || f.reopen > 0 {
                return Err(format!(
                    "--history: --max_key must be at most {MAX_HISTORY_KEYS}, and --reopen is not supported"
                ));
            }
        }
        Ok(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_both_forms() {
        let f = Flags::parse(&args(
            "--db=/tmp/x --threads 8 --verify_only --seed=7 --sync=false",
        ))
        .unwrap();
        assert_eq!(f.db, PathBuf::from("/tmp/x"));
        assert_eq!(f.expected, PathBuf::from("/tmp/x.expected"));
        assert_eq!(
            (f.threads, f.seed, f.verify_only, f.sync),
            (8, 7, true, false)
        );
        assert!(Flags::parse(&args("--threads=2")).is_err());
        assert!(Flags::parse(&args("--db=/x --bogus=1")).is_err());
        assert!(Flags::parse(&args("--db=/x --threads=abc")).is_err());
        let h = Flags::parse(&args("--db=/x --history=/h")).unwrap();
        assert_eq!((h.history, h.max_key), (Some(PathBuf::from("/h")), 64));
        assert!(Flags::parse(&args("--db=/x --history=/h --max_key=5000")).is_err());
        assert!(Flags::parse(&args("--db=/x --history=/h --reopen=1")).is_err());
        assert_eq!(f.column_families, 1);
        let c = Flags::parse(&args("--db=/x --column_families=3")).unwrap();
        assert_eq!(c.column_families, 3);
        assert!(Flags::parse(&args("--db=/x --column_families=0")).is_err());
        assert!(Flags::parse(&args("--db=/x --column_families=65")).is_err());
    }

    #[test]
    fn merge_flags_given_or_drawn_from_the_seed() {
        let f = Flags::parse(&args(
            "--db=/x --use_merge --merge_percent=40 --nooverwritepercent=7",
        ))
        .unwrap();
        assert_eq!(
            (f.use_merge, f.merge_percent, f.nooverwritepercent),
            (true, 40, 7)
        );
        assert!(f.nooverwritepercent_given);
        assert!(Flags::parse(&args("--db=/x --merge_percent=101")).is_err());
        assert!(Flags::parse(&args("--db=/x --nooverwritepercent=101")).is_err());
        let drawn: Vec<(bool, u32, u32)> = (0..64)
            .map(|seed| {
                let f = Flags::parse(&args(&format!("--db=/x --seed={seed}"))).unwrap();
                assert!(!f.nooverwritepercent_given);
                (f.use_merge, f.merge_percent, f.nooverwritepercent)
            })
            .collect();
        assert!(drawn.iter().any(|d| d.0) && drawn.iter().any(|d| !d.0));
        assert!(drawn.iter().any(|d| d.1 > 0) && drawn.iter().any(|d| d.1 == 0));
        assert!(drawn.iter().any(|d| d.2 > 0) && drawn.iter().any(|d| d.2 == 0));
        let again = Flags::parse(&args("--db=/x --seed=5 --use_merge=false")).unwrap();
        let first = Flags::parse(&args("--db=/x --seed=5")).unwrap();
        assert!(!again.use_merge);
        assert_eq!(again.merge_percent, first.merge_percent);
        // History mode: only --use_merge.
        for seed in 0..16 {
            let h = Flags::parse(&args(&format!("--db=/x --history=/h --seed={seed}"))).unwrap();
            assert_eq!((h.merge_percent, h.nooverwritepercent), (0, 0));
        }
        assert!(Flags::parse(&args("--db=/x --history=/h --use_merge")).is_ok());
        assert!(Flags::parse(&args("--db=/x --history=/h --merge_percent=5")).is_err());
        assert!(Flags::parse(&args("--db=/x --history=/h --nooverwritepercent=5")).is_err());
    }

    #[test]
    fn ttl_and_filter_flags_given_or_drawn_from_the_seed() {
        let f = Flags::parse(&args("--db=/x --ttl_percent=40 --compaction_filter")).unwrap();
        assert_eq!((f.ttl_percent, f.compaction_filter), (40, true));
        assert!(f.compaction_filter_given);
        let f = Flags::parse(&args("--db=/x --compaction_filter=false")).unwrap();
        assert!(!f.compaction_filter && f.compaction_filter_given);
        assert!(Flags::parse(&args("--db=/x --ttl_percent=101")).is_err());
        let drawn: Vec<(u32, bool)> = (0..64)
            .map(|seed| {
                let f = Flags::parse(&args(&format!("--db=/x --seed={seed}"))).unwrap();
                assert!(!f.compaction_filter_given);
                (f.ttl_percent, f.compaction_filter)
            })
            .collect();
        assert!(drawn.iter().any(|d| d.0 > 0) && drawn.iter().any(|d| d.0 == 0));
        assert!(drawn.iter().any(|d| d.1) && drawn.iter().any(|d| !d.1));
        // The earlier draws of a seed are those it had before these flags.
        for seed in 0..16 {
            let a = Flags::parse(&args(&format!("--db=/x --seed={seed}"))).unwrap();
            let b = Flags::parse(&args(&format!(
                "--db=/x --seed={seed} --ttl_percent=0 --compaction_filter=false"
            )))
            .unwrap();
            assert_eq!(
                (
                    a.use_merge,
                    a.merge_percent,
                    a.nooverwritepercent,
                    a.delrangepercent
                ),
                (
                    b.use_merge,
                    b.merge_percent,
                    b.nooverwritepercent,
                    b.delrangepercent
                )
            );
        }
        // History mode: neither, drawn or given.
        for seed in 0..16 {
            let h = Flags::parse(&args(&format!("--db=/x --history=/h --seed={seed}"))).unwrap();
            assert_eq!((h.ttl_percent, h.compaction_filter), (0, false));
        }
        assert!(Flags::parse(&args("--db=/x --history=/h --ttl_percent=5")).is_err());
        assert!(Flags::parse(&args("--db=/x --history=/h --compaction_filter")).is_err());
        assert!(Flags::parse(&args("--db=/x --history=/h --compaction_filter=0")).is_ok());
    }

    #[test]
    fn blob_flag_given_or_drawn_and_never_with_fifo() {
        let f = Flags::parse(&args("--db=/x")).unwrap();
        assert_eq!(f.enable_blob_files, None);
        let f = Flags::parse(&args("--db=/x --enable_blob_files")).unwrap();
        assert_eq!(f.enable_blob_files, Some(true));
        let f = Flags::parse(&args("--db=/x --enable_blob_files=0")).unwrap();
        assert_eq!(f.enable_blob_files, Some(false));
        assert!(Flags::parse(&args("--db=/x --enable_blob_files --compaction_style=2")).is_err());
        assert!(Flags::parse(&args("--db=/x --enable_blob_files=0 --compaction_style=2")).is_ok());
        // Forced on, no seed draws FIFO; the other draws are unchanged.
        for seed in 0..64 {
            let a = Flags::parse(&args(&format!("--db=/x --seed={seed}"))).unwrap();
            let b =
                Flags::parse(&args(&format!("--db=/x --seed={seed} --enable_blob_files"))).unwrap();
            assert_eq!(b.compaction_style, 0);
            assert_eq!(
                (
                    a.use_merge,
                    a.merge_percent,
                    a.delrangepercent,
                    a.ttl_percent
                ),
                (
                    b.use_merge,
                    b.merge_percent,
                    b.delrangepercent,
                    b.ttl_percent
                )
            );
        }
    }

    #[test]
    fn range_deletion_flags_given_or_drawn_from_the_seed() {
        let f = Flags::parse(&args(
            "--db=/x --delrangepercent=7 --range_deletion_width=3",
        ))
        .unwrap();
        assert_eq!((f.delrangepercent, f.range_deletion_width), (7, 3));
        assert_eq!(
            Flags::parse(&args("--db=/x")).unwrap().range_deletion_width,
            10
        );
        assert!(Flags::parse(&args("--db=/x --delrangepercent=101")).is_err());
        assert!(Flags::parse(&args("--db=/x --range_deletion_width=0")).is_err());
        let drawn: Vec<u32> = (0..64)
            .map(|seed| {
                Flags::parse(&args(&format!("--db=/x --seed={seed}")))
                    .unwrap()
                    .delrangepercent
            })
            .collect();
        assert!(drawn.iter().any(|&d| d > 0) && drawn.contains(&0));
        // The merge draws of a seed are those it had before range deletions.
        let a = Flags::parse(&args("--db=/x --seed=9 --delrangepercent=0")).unwrap();
        let b = Flags::parse(&args("--db=/x --seed=9 --delrangepercent=50")).unwrap();
        assert_eq!(
            (a.use_merge, a.merge_percent, a.nooverwritepercent),
            (b.use_merge, b.merge_percent, b.nooverwritepercent)
        );
        // History mode takes them (a range deletion is recorded as a batch
        // of deletes) and draws them too.
        let h = Flags::parse(&args(
            "--db=/x --history=/h --delrangepercent=10 --range_deletion_width=4",
        ))
        .unwrap();
        assert_eq!((h.delrangepercent, h.range_deletion_width), (10, 4));
        assert!((0..64).any(|seed| {
            Flags::parse(&args(&format!("--db=/x --history=/h --seed={seed}")))
                .unwrap()
                .delrangepercent
                > 0
        }));
    }
}
