//! The benchmark registry and what every benchmark body shares: the run
//! context (`Ctx`, shared by the threads of one benchmark), the per-thread
//! state, and db_bench's `Duration` op/time limit.
//!
//! Bodies live in one file per family (fill, delete, read, seek, mixed,
//! merge, meta); range_del.rs holds db_bench's range tombstones of fills.
//! Every body follows db_bench's draw order (DB_BENCH.md §2.3) so that key
//! streams equal db_bench's for equal per-thread seeds.
//!
//! Column families (`--num_column_families=N`): key number `v` lives in
//! family `v % N` ([`Ctx::cf_of`], db_bench's `GetCfh(key_rand)`), for
//! writes, deletes, point reads and seeks; readseq / readreverse walk the
//! families one after another. db_bench itself spreads only fills,
//! overwrite and readrandom; here every key-addressed step follows the same
//! rule so that reads find what the writes put. multireadrandom refuses
//! N > 1 (its keys would span families; no per-key-family MultiGet in Shale).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::clock::now_micros;
use crate::engine::{Engine, WriteOpts};
use crate::error::Result;
use crate::flags::Flags;
use crate::keys::KeyGen;
use crate::livekeys::LiveKeys;
use crate::mt19937::Mt19937_64;
use crate::pacer::Pacer;
use crate::ratelimit::RateLimiter;
use crate::stats::Stats;
use crate::values::RandomGenerator;

pub mod cfscale;
pub mod delete;
pub mod fill;
pub mod merge;
pub mod meta;
pub mod mixed;
pub mod range_del;
pub mod read;
pub mod seek;

/// A benchmark body run by every thread.
pub type Method = fn(&Ctx<'_>, &mut ThreadState) -> Result<()>;

/// How a benchmark runs.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// Threads run `Method`; `fresh` destroys the DB first; `writer` adds a
    /// background writer thread (tid 0); `single` forces one thread.
    Method {
        /// The body.
        method: Method,
        /// Destroy and reopen the DB first.
        fresh: bool,
        /// Add a background writer as thread 0.
        writer: bool,
        /// Force one thread.
        single: bool,
    },
    /// Runs inline in the main thread, no result line.
    Meta,
    /// `cfscale`: runs inline in the main thread on fresh DBs of its own
    /// (cfscale.rs), printing one result line per measurement.
    Scale,
}

/// Looks a benchmark name up.
pub fn lookup(name: &str) -> Option<Kind> {
    let m = |method: Method| {
        Some(Kind::Method {
            method,
            fresh: false,
            writer: false,
            single: false,
        })
    };
    match name {
        "fillseq" => Some(Kind::Method {
            method: fill::fillseq,
            fresh: true,
            writer: false,
            single: false,
        }),
        "fillrandom" => Some(Kind::Method {
            method: fill::fillrandom,
            fresh: true,
            writer: false,
            single: false,
        }),
        "filluniquerandom" => Some(Kind::Method {
            method: fill::filluniquerandom,
            fresh: true,
            writer: false,
            single: true,
        }),
        "overwrite" => m(fill::fillrandom),
        "deleteseq" => m(delete::deleteseq),
        "deleterandom" => m(delete::deleterandom),
        "deleterange" => Some(Kind::Method {
            method: delete::deleterange,
            fresh: false,
            writer: false,
            single: true,
        }),
        "readrandom" => m(read::readrandom),
        "multireadrandom" => m(read::multireadrandom),
        "readseq" => m(read::readseq),
        "readreverse" => m(read::readreverse),
        "seekrandom" => m(seek::seekrandom),
        "readrandomwriterandom" => m(mixed::readrandomwriterandom),
        "updaterandom" => m(mixed::updaterandom),
        "mergerandom" => m(merge::mergerandom),
        "readrandommergerandom" => m(merge::readrandommergerandom),
        "readwhilewriting" => Some(Kind::Method {
            method: mixed::readwhilewriting,
            fresh: false,
            writer: true,
            single: false,
        }),
        "seekrandomwhilewriting" => Some(Kind::Method {
            method: mixed::seekrandomwhilewriting,
            fresh: false,
            writer: true,
            single: false,
        }),
        "compact" => m(meta::compact),
        "cfscale" => Some(Kind::Scale),
        "flush" | "compactall" | "waitforcompaction" | "stats" | "levelstats" | "sstables"
        | "bloomstats" => Some(Kind::Meta),
        _ => None,
    }
}

/// Everything the threads of one benchmark share.
pub struct Ctx<'a> {
    /// The flags.
    pub flags: &'a Flags,
    /// The DB.
    pub db: &'a dyn Engine,
    /// Key layout.
    pub keys: KeyGen,
    /// Write options from the flags.
    pub wo: WriteOpts,
    /// `--benchmark_write_rate_limit` (bytes/s), shared.
    pub write_limiter: Option<RateLimiter>,
    /// `--benchmark_read_rate_limit` (ops/s), shared.
    pub read_limiter: Option<RateLimiter>,
    /// Live-key estimate.
    pub live: &'a LiveKeys,
    /// Threads (including a writer) that have returned.
    pub num_done: AtomicUsize,
    /// Threads started (including a writer).
    pub num_threads: usize,
    /// Σ key+value bytes put or deleted-key bytes by all threads.
    pub user_bytes_written: AtomicU64,
    /// Range tombstones issued by all threads (fills' db_bench tombstones,
    /// expanded or not, and deleterange).
    pub range_tombstones: AtomicU64,
    /// The per-thread filluniquerandom permutation seed source.
    pub seeds: &'a crate::seeds::Seeds,
    /// Column families of `db` (≥ 1).
    pub num_cfs: u64,
}

impl Ctx<'_> {
    /// True once every thread but the caller has returned.
    pub fn others_done(&self) -> bool {
        self.num_done.load(Ordering::Acquire) + 1 >= self.num_threads
    }

    /// The column family of key number `v`: `v % num_cfs`.
    #[inline]
    pub fn cf_of(&self, v: u64) -> usize {
        (v % self.num_cfs) as usize
    }

    /// Key number `rand % num`.
    #[inline]
    pub fn random_key(&self, rng: &mut Mt19937_64) -> u64 {
        rng.next_u64() % self.flags.num as u64
    }
}

/// The state of one bench thread.
pub struct ThreadState {
    /// Thread id (0 = the writer of *whilewriting).
    pub tid: usize,
    /// This thread's seed (base + counter).
    pub seed: u64,
    /// This thread's MT19937-64 (db_bench's `thread->rand`).
    pub rng: Mt19937_64,
    /// Measurements.
    pub stats: Stats,
    /// Value bytes.
    pub values: RandomGenerator,
    /// Open-loop schedule, if `--arrival_rate` > 0.
    pub pacer: Option<Pacer>,
    /// Key buffer (`key_size` bytes).
    pub key: Vec<u8>,
    /// User bytes (key+value) this thread wrote.
    pub user_bytes_written: u64,
}

impl ThreadState {
    /// Open loop: waits for the next intended start and measures from it.
    #[inline]
    pub fn pace(&mut self) {
        if let Some(p) = &mut self.pacer {
            let due = p.next_op();
            self.stats.set_op_start(due);
        }
    }

    /// After a rate-limiter sleep: restart the latency clock (closed loop
    /// only; open loop keeps measuring from the intended start).
    pub fn after_limiter_sleep(&mut self) {
        if self.pacer.is_none() {
            self.stats.reset_last_op_time();
        }
    }
}

/// db_bench's `Duration`: stops after `max_ops` ops, or after `max_secs`
/// seconds (clock checked every `granularity` ops) when `max_secs` > 0.
#[derive(Debug)]
pub struct OpLimit {
    max_secs: u64,
    max_ops: u64,
    ops: u64,
    start: u64,
    granularity: u64,
}

impl OpLimit {
    /// A limit starting now.
    pub fn new(max_secs: u64, max_ops: u64, granularity: u64) -> OpLimit {
        OpLimit {
            max_secs,
            max_ops,
            ops: 0,
            start: now_micros(),
            granularity: granularity.max(1),
        }
    }

    /// Counts `inc` more ops and says whether to stop *before* doing them.
    pub fn done(&mut self, inc: u64) -> bool {
        let inc = inc.max(1);
        self.ops += inc;
        if self.max_secs > 0 {
            if self.ops / self.granularity != (self.ops - inc) / self.granularity {
                return (now_micros() - self.start) / 1_000_000 >= self.max_secs;
            }
            false
        } else {
            self.ops > self.max_ops
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_limit_runs_floor_of_ops_over_batch() {
        let mut l = OpLimit::new(0, 10, 1000);
        let mut n = 0;
        while !l.done(3) {
            n += 1;
        }
        assert_eq!(n, 3);
        let mut l = OpLimit::new(0, 5, 1000);
        let mut n = 0;
        while !l.done(1) {
            n += 1;
        }
        assert_eq!(n, 5);
        let mut l = OpLimit::new(0, 0, 1000);
        assert!(l.done(1));
    }

    #[test]
    fn registry_knows_the_issue_list() {
        for n in [
            "fillseq",
            "fillrandom",
            "filluniquerandom",
            "overwrite",
            "readrandom",
            "readseq",
            "readreverse",
            "seekrandom",
            "readwhilewriting",
            "seekrandomwhilewriting",
            "readrandomwriterandom",
            "updaterandom",
            "multireadrandom",
            "deleterandom",
            "deleteseq",
            "deleterange",
            "mergerandom",
            "readrandommergerandom",
            "flush",
            "compact",
            "compactall",
            "waitforcompaction",
            "stats",
            "levelstats",
            "sstables",
        ] {
            assert!(lookup(n).is_some(), "{n}");
        }
        assert!(lookup("readwhilemerging").is_none());
        assert!(matches!(
            lookup("mergerandom"),
            Some(Kind::Method {
                fresh: false,
                writer: false,
                ..
            })
        ));
        assert!(matches!(
            lookup("fillseq"),
            Some(Kind::Method { fresh: true, .. })
        ));
        assert!(matches!(
            lookup("overwrite"),
            Some(Kind::Method { fresh: false, .. })
        ));
        assert!(matches!(
            lookup("readwhilewriting"),
            Some(Kind::Method { writer: true, .. })
        ));
        assert!(matches!(
            lookup("deleterange"),
            Some(Kind::Method {
                single: true,
                fresh: false,
                ..
            })
        ));
    }
}
