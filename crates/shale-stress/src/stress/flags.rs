//! Command-line flags of `shale-stress`, db_stress style: `--name=value` or
//! `--name value`; booleans also as a bare `--name`.

use std::path::PathBuf;
use std::time::Duration;

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
}

/// Largest `--column_families`.
pub const MAX_COLUMN_FAMILIES: u32 = 64;

/// Largest `--max_key` in history mode (the recovery read of every key is
/// one snapshot read, checked pairwise by the cut check).
pub const MAX_HISTORY_KEYS: u64 = 1000;

/// The usage text.
pub const USAGE: &str = "usage: shale-stress --db=DIR [--threads=4] [--max_key=10000] \
[--ops_per_thread=100000] [--duration=SECS] [--seed=N] [--verify_only] [--reopen=0] \
[--sync] [--expected=FILE] [--history=DIR] [--column_families=1]";

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
        };
        let mut max_key_given = false;
        let mut it = args.iter().peekable();
        while let Some(arg) = it.next() {
            let Some(body) = arg.strip_prefix("--") else {
                return Err(format!("unexpected argument {arg:?}"));
            };
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let is_bool = matches!(name, "verify_only" | "sync");
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
        if f.history.is_some() {
            if !max_key_given {
                f.max_key = 64;
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
}
