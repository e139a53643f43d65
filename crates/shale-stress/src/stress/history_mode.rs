//! History mode of `shale-stress` (`--history=DIR`): random concurrent
//! operations on few keys, each recorded in a [`HistoryDir`] that survives
//! `kill -9`; `--verify_only` then checks the whole history, across every
//! crash, per key for linearizability ([`lincheck::check`]) and across keys
//! for atomic batches and consistent snapshots ([`cut::check_cuts`]).
//!
//! A run: open the DB (options drawn from the seed; the number of levels is
//! fixed when the DB is created and kept in `DIR/num_levels`); start a new
//! history segment with the *recovery read*: one scan of all keys (a
//! snapshot read of every key) then a point read of each, so what survived
//! the last crash is part of the history; then `--threads` clients run until
//! `--ops_per_thread`, `--duration` or the kill, while a helper thread forces
//! flushes and full compactions. Client operations:
//! - get, put, delete of one key;
//! - batch: 2-4 distinct keys, each put with the batch's one value, or (1 in
//!   5) deleted;
//! - snapshot read: `snapshot()`, then half the time one more write by this
//!   client, then `multi_get` of 2-6 keys at the snapshot, recorded as a read
//!   over the interval of the `snapshot()` call, where its cut was taken;
//! - scan: an iterator over up to 8 consecutive keys, recorded as a read of
//!   each key of the range (absent if not returned) over the scan;
//! - range deletion (`--delrangepercent` of the operations, drawn from the
//!   seed unless given): `--range_deletion_width` consecutive keys of one
//!   family (fewer at the end of the key space) deleted by one
//!   `delete_range_cf`, recorded as a batch deleting each key of the range:
//!   a range deletion is, to every key's register, a delete at one point in
//!   time, the same point for all of them (the cut check holds it to that).
//!
//! With `--column_families=N` (kept in `DIR/column_families` from the first
//! run) the keys of every family are part of the history, named
//! `k0003` in `default` and `c1/k0003` in `cf1`, ...: single writes, reads
//! and scans pick a family; batches and snapshot reads pick keys across all
//! families (a batch is one `WriteBatch` over several families, a snapshot
//! read one `multi_get_cf` per family at one snapshot), so the cut check
//! covers atomicity and consistent cuts across families; the recovery read
//! scans and reads every family; the helper runs `flush_cf` and
//! `compact_range_cf` on one family at a time.
//!
//! With `--use_merge` (drawn from the seed unless given) every put, single
//! or in a batch, is a merge of an overwrite operand holding the value
//! (`merge_op.rs`), recorded as the put it stands for: the register model
//! then checks merges resolved over values, tombstones and other operands
//! in memtables and tables, across kills. Read-modify-write merges
//! (`--merge_percent`) and single deletes are not part of this mode.
//!
//! Values are unique in the history: `s<segment>.c<client>.<n>`, 1 in 4
//! padded with `.ppp...` to 16-136 bytes (so that blob files, issue 14,
//! hold some when the run's `min_blob_size` is small enough). Every DB
//! error is a failure (no faults are injected here). A write acknowledged
//! before a kill must be seen by the recovery read (with or without
//! `--sync`: a process crash loses nothing handed to the OS), and a write cut
//! by the kill is either wholly there or wholly absent, and stays so.
//!
//! Thread safety: each client owns its segment writer; the DB is shared.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use shale::{Cf, Db, ReadOptions, WriteBatch, WriteOptions};

use super::db_options;
use super::flags::Flags;
use super::merge_op;
use crate::clock::Clock;
use crate::history_log::{HistoryDir, KeyValue, SegmentWriter};
use crate::lincheck::porcupine_json::write_history;
use crate::lincheck::{check, cut, sub_history, CheckResult};

/// Time limit of the per-key linearizability check.
const CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// The key bytes of key number `k` (the same in every family).
fn key(k: u64) -> String {
    format!("k{k:04}")
}

/// The history's name of key `k` of family `cf`.
fn hkey(cf: u32, k: u64) -> String {
    if cf == 0 {
        key(k)
    } else {
        format!("c{cf}/{}", key(k))
    }
}

/// The family number and key bytes of a history name (see [`hkey`]).
fn split_hkey(name: &str) -> (u32, &str) {
    name.strip_prefix('c')
        .and_then(|r| r.split_once('/'))
        .and_then(|(cf, k)| Some((cf.parse().ok()?, k)))
        .unwrap_or((0, name))
}

/// The number of column families, fixed by the first run in
/// `DIR/column_families` (a history that predates the file has one).
fn num_cfs(flags: &Flags, hist: &HistoryDir) -> Result<u32, String> {
    let path = hist.path().join("column_families");
    match std::fs::read_to_string(&path) {
        Ok(s) => {
            let n = s
                .trim()
                .parse()
                .map_err(|_| format!("{}: not a number: {s:?}", path.display()))?;
            if n != flags.column_families {
                println!("note: using column_families={n} from {}", path.display());
            }
            Ok(n)
        }
        Err(_) if flags.db.exists() => Ok(1),
        Err(_) => {
            std::fs::write(&path, flags.column_families.to_string())
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(flags.column_families)
        }
    }
}

fn text(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// The DB's number of levels, chosen from the seed when the DB is created.
fn num_levels(flags: &Flags, hist: &HistoryDir) -> Result<u32, String> {
    let path = hist.path().join("num_levels");
    if flags.db.exists() {
        let s = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        s.trim()
            .parse()
            .map_err(|_| format!("{}: not a number: {s:?}", path.display()))
    } else if flags.verify_only {
        Err(format!("--verify_only: no DB at {}", flags.db.display()))
    } else {
        let n = db_options::random_num_levels(flags.seed);
        std::fs::write(&path, n.to_string()).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(n)
    }
}

/// Runs history mode; returns the number of failures.
pub fn run(flags: &Flags, dir: &Path) -> Result<u64, String> {
    let hist = HistoryDir::open(dir).map_err(|e| format!("history {}: {e}", dir.display()))?;
    let mut opts = db_options::random_options(
        flags.seed,
        num_levels(flags, &hist)?,
        flags.enable_blob_files,
    );
    db_options::keep_direct_io_if_supported(&mut opts, &flags.db);
    println!("seed: {}", flags.seed);
    println!(
        "options: {} use_merge={} delrangepercent={} range_deletion_width={}",
        db_options::describe(&opts),
        flags.use_merge,
        flags.delrangepercent,
        flags.range_deletion_width
    );
    let num_cfs = num_cfs(flags, &hist)?;
    let (db, cfs) = super::open_db(flags, &opts, num_cfs, false)?;
    let io = |e: std::io::Error| format!("history {}: {e}", dir.display());
    let segment = hist.next_segment().map_err(io)?;
    let clock = Clock::start();
    let mut recovery = Client {
        db: &db,
        cfs: &cfs,
        w: hist.writer(segment, 0).map_err(io)?,
        clock,
        segment,
        id: 0,
        n: 0,
        max_key: flags.max_key,
        wo: WriteOptions::default(),
        use_merge: flags.use_merge,
        ranges: (flags.delrangepercent, flags.range_deletion_width),
    };
    recovery.recovery_read()?;
    println!(
        "segment {segment}: recovery read of {} keys in {num_cfs} column families",
        flags.max_key
    );
    let mut failures = 0;
    if !flags.verify_only {
        failures += run_clients(&db, &cfs, &hist, flags, segment, clock)?;
    }
    drop(cfs);
    db.close().map_err(|e| format!("close: {e}"))?;
    if flags.verify_only {
        failures += check_history(&hist)?;
    }
    Ok(failures)
}

/// The client threads and the flush/compaction helper.
fn run_clients(
    db: &Db,
    cfs: &[Cf],
    hist: &HistoryDir,
    flags: &Flags,
    segment: u32,
    clock: Clock,
) -> Result<u64, String> {
    let stop = AtomicBool::new(false);
    let ops = AtomicU64::new(0);
    let failures = AtomicU64::new(0);
    let fail = |m: String| {
        eprintln!("FAILURE: {m}");
        failures.fetch_add(1, Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
    };
    let deadline = flags.duration.map(|d| Instant::now() + d);
    let wo = WriteOptions {
        sync: flags.sync,
        ..WriteOptions::default()
    };
    let mut clients = Vec::with_capacity(flags.threads);
    for t in 1..=flags.threads {
        clients.push(Client {
            db,
            cfs,
            w: hist
                .writer(segment, t)
                .map_err(|e| format!("history: {e}"))?,
            clock,
            segment,
            id: t,
            n: 0,
            max_key: flags.max_key,
            wo,
            use_merge: flags.use_merge,
            ranges: (flags.delrangepercent, flags.range_deletion_width),
        });
    }
    let left = AtomicU64::new(flags.threads as u64);
    std::thread::scope(|s| {
        let (stop, ops, left, fail) = (&stop, &ops, &left, &fail);
        s.spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) && left.load(Ordering::Relaxed) > 0 {
                std::thread::sleep(Duration::from_millis(25));
                let cf = &cfs[(i / 8) as usize % cfs.len()];
                let r = if i % 8 == 7 {
                    db.compact_range_cf(cf, None, None)
                } else {
                    db.flush_cf(cf)
                };
                if let Err(e) = r {
                    fail(format!("flush/compaction: {e}"));
                }
                i += 1;
            }
        });
        for mut c in clients {
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(
                    flags.seed ^ (u64::from(segment) << 40) ^ (c.id as u64) << 20,
                );
                for _ in 0..flags.ops_per_thread {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if let Err(m) = c.random_op(&mut rng) {
                        fail(format!("client {}: {m}", c.id));
                        break;
                    }
                    ops.fetch_add(1, Ordering::Relaxed);
                }
                left.fetch_sub(1, Ordering::Relaxed);
            });
        }
        let mut last_print = Instant::now();
        while left.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_millis(20));
            if deadline.is_some_and(|d| Instant::now() >= d) {
                stop.store(true, Ordering::Relaxed);
            }
            if last_print.elapsed() >= Duration::from_millis(500) {
                last_print = Instant::now();
                println!("progress: ops={}", ops.load(Ordering::Relaxed));
            }
        }
    });
    println!(
        "done: ops={} failures={}",
        ops.load(Ordering::Relaxed),
        failures.load(Ordering::Relaxed)
    );
    Ok(failures.load(Ordering::Relaxed))
}

/// One recording client.
struct Client<'a> {
    db: &'a Db,
    cfs: &'a [Cf],
    w: SegmentWriter,
    clock: Clock,
    segment: u32,
    id: usize,
    n: u64,
    max_key: u64,
    wo: WriteOptions,
    /// Puts are merges of overwrite operands.
    use_merge: bool,
    /// `--delrangepercent` and `--range_deletion_width`.
    ranges: (u32, u64),
}

impl Client<'_> {
    fn value(&mut self) -> String {
        self.n += 1;
        let v = format!("s{}.c{}.{}", self.segment, self.id, self.n);
        if !self.n.is_multiple_of(4) {
            return v;
        }
        // 1 value in 4 padded to 16-136 bytes, so the drawn
        // `min_blob_size`s move some values to blob files.
        let len = 16 + (self.n * 37 % 121) as usize;
        format!("{v}.{}", "p".repeat(len.saturating_sub(v.len() + 1)))
    }

    fn history(e: std::io::Error) -> String {
        format!("history file: {e}")
    }

    /// Writes `kvs` (one key: put/delete; several: one batch), recorded.
    fn write(&mut self, kvs: Vec<KeyValue>) -> Result<(), String> {
        let call = self.clock.now();
        let id = self.w.invoke_write(call, &kvs).map_err(Self::history)?;
        let mut b = WriteBatch::new();
        for (k, v) in &kvs {
            let (cf, k) = split_hkey(k);
            let cf = &self.cfs[cf as usize];
            match v {
                Some(v) if self.use_merge => {
                    b.merge_cf(cf, k.as_bytes(), &merge_op::overwrite(v.as_bytes()));
                }
                Some(v) => b.put_cf(cf, k.as_bytes(), v.as_bytes()),
                None => b.delete_cf(cf, k.as_bytes()),
            }
        }
        let r = self.db.write(b, &self.wo);
        let ret = self.clock.now();
        r.map_err(|e| format!("write {kvs:?}: {e}"))?;
        self.w.ack(id, ret).map_err(Self::history)
    }

    /// The history name of key index `i` over all families
    /// (`cf * max_key + k`).
    fn hkey_of(&self, i: u64) -> String {
        hkey((i / self.max_key) as u32, i % self.max_key)
    }

    /// Number of keys over all families.
    fn all_keys(&self) -> usize {
        self.max_key as usize * self.cfs.len()
    }

    fn get(&mut self, cf: u32, k: u64) -> Result<(), String> {
        let call = self.clock.now();
        let v = self.db.get_cf(&self.cfs[cf as usize], key(k).as_bytes());
        let ret = self.clock.now();
        let v = v.map_err(|e| format!("get {}: {e}", hkey(cf, k)))?;
        let kvs = vec![(hkey(cf, k), v.map(|v| text(&v)))];
        self.w.read(call, ret, kvs).map_err(Self::history)
    }

    /// Scans keys `lo..hi` of family `cf`, recorded as a read of each key of
    /// the range.
    fn scan(&mut self, cf: u32, lo: u64, hi: u64) -> Result<(), String> {
        let call = self.clock.now();
        let items: shale::Result<Vec<(Vec<u8>, Vec<u8>)>> = self
            .db
            .range_cf(
                &self.cfs[cf as usize],
                key(lo).into_bytes()..key(hi).into_bytes(),
            )
            .collect();
        let ret = self.clock.now();
        let items = items.map_err(|e| format!("scan cf {cf} {lo}..{hi}: {e}"))?;
        let mut kvs: Vec<KeyValue> = (lo..hi).map(|k| (hkey(cf, k), None)).collect();
        for (k, v) in items {
            let k = text(&k);
            let name = if cf == 0 { k } else { format!("c{cf}/{k}") };
            let slot = kvs
                .iter_mut()
                .find(|(n, _)| *n == name)
                .ok_or_else(|| format!("scan cf {cf} {lo}..{hi} returned key {name}"))?;
            if slot.1.is_some() {
                return Err(format!("scan cf {cf} {lo}..{hi} returned {name} twice"));
            }
            slot.1 = Some(text(&v));
        }
        self.w.read(call, ret, kvs).map_err(Self::history)
    }

    /// A snapshot, then maybe one more write, then 2-6 keys of any families
    /// read at the snapshot (one `multi_get_cf` per family).
    fn snapshot_read(&mut self, rng: &mut SmallRng) -> Result<(), String> {
        let call = self.clock.now();
        let snap = self.db.snapshot();
        let ret = self.clock.now();
        if rng.gen_bool(0.5) {
            let k = self.hkey_of(rng.gen_range(0..self.all_keys() as u64));
            let v = self.value();
            self.write(vec![(k, Some(v))])?;
        }
        let n = rng.gen_range(2..=6).min(self.all_keys());
        let mut picked: Vec<u64> = sample(rng, self.all_keys(), n)
            .iter()
            .map(|i| i as u64)
            .collect();
        picked.sort_unstable();
        let mut ro = ReadOptions::new();
        ro.snapshot = Some(&snap);
        let mut kvs = Vec::with_capacity(picked.len());
        for (cf, c) in self.cfs.iter().enumerate() {
            let keys: Vec<u64> = picked
                .iter()
                .filter(|&&i| i / self.max_key == cf as u64)
                .map(|&i| i % self.max_key)
                .collect();
            if keys.is_empty() {
                continue;
            }
            let names: Vec<String> = keys.iter().map(|&k| key(k)).collect();
            let refs: Vec<&[u8]> = names.iter().map(|k| k.as_bytes()).collect();
            let got = self.db.multi_get_cf(c, &refs, &ro);
            for (&k, v) in keys.iter().zip(got) {
                let name = hkey(cf as u32, k);
                let v = v.map_err(|e| format!("multi_get_cf {name} at snapshot: {e}"))?;
                kvs.push((name, v.map(|v| text(&v))));
            }
        }
        self.w.read(call, ret, kvs).map_err(Self::history)
    }

    /// Deletes keys `lo..hi` of family `cf` with one `delete_range_cf`,
    /// recorded as one batch deleting each of them. The end bound is key
    /// `hi`, or 1 time in 4 a point just past key `hi - 1` (the same keys).
    fn delete_range(
        &mut self,
        cf: u32,
        lo: u64,
        hi: u64,
        rng: &mut SmallRng,
    ) -> Result<(), String> {
        let kvs: Vec<KeyValue> = (lo..hi).map(|k| (hkey(cf, k), None)).collect();
        let start = key(lo);
        let end = if hi > lo && rng.gen_ratio(1, 4) {
            format!("{}.", key(hi - 1))
        } else {
            key(hi)
        };
        let call = self.clock.now();
        let id = self.w.invoke_write(call, &kvs).map_err(Self::history)?;
        let mut b = WriteBatch::new();
        b.delete_range_cf(&self.cfs[cf as usize], start.as_bytes(), end.as_bytes());
        let r = self.db.write(b, &self.wo);
        let ret = self.clock.now();
        r.map_err(|e| format!("delete_range cf {cf} {start}..{end}: {e}"))?;
        self.w.ack(id, ret).map_err(Self::history)
    }

    fn random_op(&mut self, rng: &mut SmallRng) -> Result<(), String> {
        let k = rng.gen_range(0..self.max_key);
        let cf = rng.gen_range(0..self.cfs.len() as u32);
        // Drawn only when on: histories without range deletions keep their
        // seeds' operations.
        let (percent, width) = self.ranges;
        if percent > 0 && rng.gen_range(0..100) < percent {
            let hi = (k + width).min(self.max_key);
            return self.delete_range(cf, k, hi, rng);
        }
        match rng.gen_range(0..100) {
            0..=29 => self.get(cf, k),
            30..=54 => {
                let v = self.value();
                self.write(vec![(hkey(cf, k), Some(v))])
            }
            55..=62 => self.write(vec![(hkey(cf, k), None)]),
            63..=79 => {
                let n = rng.gen_range(2..=4).min(self.all_keys());
                let v = self.value();
                let kvs = sample(rng, self.all_keys(), n)
                    .iter()
                    .map(|i| {
                        let put = !rng.gen_ratio(1, 5);
                        (self.hkey_of(i as u64), put.then(|| v.clone()))
                    })
                    .collect();
                self.write(kvs)
            }
            80..=91 => self.snapshot_read(rng),
            _ => self.scan(cf, k, (k + rng.gen_range(1..=8)).min(self.max_key)),
        }
    }

    /// The first operations of a segment: a scan of every key of each
    /// family, then a point read of each.
    fn recovery_read(&mut self) -> Result<(), String> {
        for cf in 0..self.cfs.len() as u32 {
            self.scan(cf, 0, self.max_key)?;
            for k in 0..self.max_key {
                self.get(cf, k)?;
            }
        }
        Ok(())
    }
}

/// Loads and checks the whole history; returns the number of failures.
fn check_history(hist: &HistoryDir) -> Result<u64, String> {
    let h = hist
        .load()
        .map_err(|e| format!("history {}: {e}", hist.path().display()))?;
    let report = check(&h.ops, CHECK_TIMEOUT);
    let start = Instant::now();
    let cuts = cut::check_cuts(&h.ops);
    println!(
        "history: segments={} writes={} acked={} cut_by_crash={} reads={} ops={} keys={}",
        h.segments,
        h.writes,
        h.acked,
        h.writes - h.acked,
        h.reads,
        report.operations,
        report.partitions
    );
    println!(
        "check: linearizability={:?} in {:.2?}; cut check: read_groups={} key_pairs={} violations={} in {:.2?}",
        report.result,
        report.elapsed,
        cuts.groups,
        cuts.pairs,
        cuts.violation_count,
        start.elapsed()
    );
    let mut failures = cuts.violation_count;
    for v in &cuts.violations {
        eprintln!("FAILURE: cut check: {v}");
    }
    if report.result != CheckResult::Ok {
        failures += 1;
        let keys: Vec<String> = report.illegal_keys.iter().map(|k| text(k)).collect();
        eprintln!(
            "FAILURE: linearizability {:?}; illegal keys {keys:?}",
            report.result
        );
        if let Some(k) = report.illegal_keys.first() {
            let mut ops = sub_history(&h.ops, k);
            ops.sort_by_key(|o| o.call);
            for o in ops.iter().take(200) {
                eprintln!("  {o:?}");
            }
        }
    }
    if failures > 0 {
        let path = hist.path().join("failed-history.json");
        match std::fs::File::create(&path)
            .map(|f| write_history(&h.ops, std::io::BufWriter::new(f)))
        {
            Ok(Ok(())) => eprintln!("history saved as Porcupine JSON: {}", path.display()),
            _ => eprintln!("could not save {}", path.display()),
        }
    }
    Ok(failures)
}
