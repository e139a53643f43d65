//! Multi-threaded model test: bank transfers under concurrent readers and
//! background churn.
//!
//! Setup: `N` accounts `acct{i:04}`, each holding a balance (an absent key is
//! balance 0), initial total `T`. Account `i` belongs to writer `i % W`, so
//! each writer is the only one writing its accounts and knows their exact
//! values, while the key ranges of all writers interleave (every table and
//! every compaction mixes them). Each writer's batch moves money between its
//! own accounts (one to four legs, a key may be written twice in a batch,
//! a drained account may be deleted, a delete+recreate of the same key in one
//! batch) and sets its counter `ctr{w}` to the batch number. Before writing a
//! batch the writer publishes the state of its accounts after batch `n`, so a
//! reader that sees `ctr{w} = n` knows the exact value of every account of
//! writer `w` at that point.
//!
//! Range deletions: each writer also owns a *pool* of [`POOL`] consecutive
//! accounts (`acct0500 + 64 w` on; the pools lie side by side, after the
//! interleaved accounts), which transfers fill like any other account. Some
//! batches sweep a run of the pool with one `delete_range` (mostly 1-4
//! slots, now and then the whole pool; bounds on a key or between two) and
//! put the swept sum into one of the writer's accounts later in the same
//! batch (possibly a slot of the swept run: a put after a range deletion in
//! one batch must show), so the total holds. A drained interleaved account
//! is sometimes deleted by a range deletion of that key alone (its end, the
//! next account, belongs to another writer and is exclusive). Readers then
//! check range tombstones as they check everything else: at snapshots, in
//! every iteration direction and bound, through flushes, compactions
//! (delete-only ones too when a sweep covers whole tables; the summary line
//! shows their bytes) and the reopen.
//!
//! Invariants checked by the reader threads:
//! - every consistent read (a snapshot, or one read call at the latest state)
//!   sums to `T` and shows, for every writer, exactly the account values that
//!   go with the counter it shows (so no resurrected or stale value);
//! - counters never go back for one reader, and a read started after a write
//!   was acknowledged sees it;
//! - at one snapshot, `multi_get`, forward and reverse iteration, bounded
//!   iteration (random bounds, random walks in both directions), `get_opt` and
//!   `multi_get` of sub-ranges all agree;
//! - a snapshot read again later (after more writes, flushes and compactions)
//!   returns what it returned first;
//! - `range(..)` (forward, reverse created lazily, both ends at once),
//!   `prefix`, `multi_get` and a cursor without a snapshot are consistent too.
//!
//! Column families: every batch also sets its writer's counter in each of
//! two mirror families (and writes or deletes a tally key there), so a
//! batch spans three families. A reader at a snapshot must see each batch
//! in all of its families or in none: the counters a snapshot shows in the
//! mirrors (`multi_get_cf`, `get_cf_opt`, `iter_cf` or `prefix_cf`) equal
//! those of `default`; without a snapshot a mirror's counters never lag an
//! acknowledged batch.
//!
//! A churn thread runs `flush`, `compact_range` with random bounds (open
//! either side, between keys, beyond the key space) and
//! `wait_for_compaction`, and `flush_cf`/`compact_range_cf` on the mirrors,
//! while small memtables and tables keep automatic
//! flushes and compactions busy. At the end: exact final state, close,
//! reopen, exact state again, full compaction, exact state again.
//!
//! The seed fixes the options and each thread's sequence of operations (not
//! the thread interleaving): rerun one with
//! `SHALE_SEED=<seed> cargo test -p shale --test concurrent_model -- --nocapture`.

mod common;

use std::collections::BTreeMap;
use std::ops::Bound;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use shale::{
    CacheType, Cf, CfOptions, Compression, Db, DbIterator, Options, ReadOptions, Snapshot,
    WriteBatch, WriteOptions,
};

/// Raw key -> raw value, as one consistent read saw the DB.
type View = BTreeMap<Vec<u8>, Vec<u8>>;
type Check = Result<(), String>;
/// Entries in the order an iterator returned them.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Returns `Err(format!(..))` from the enclosing check when `cond` is false.
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err(format!($($arg)+));
        }
    };
}

fn acct(i: usize) -> Vec<u8> {
    format!("acct{i:04}").into_bytes()
}

/// Accounts in each writer's pool (see the module header).
const POOL: usize = 48;

/// The first account number of writer `w`'s pool (pools sit 64 numbers
/// apart from 500 on: after the at most 200 interleaved accounts, all
/// under the `acct0` prefix).
fn pool_base(w: usize) -> usize {
    500 + 64 * w
}

/// The account numbers writer `w` owns: its interleaved accounts
/// (`i % writers == w`), then its pool.
fn owned_accounts(w: usize, accounts: usize, writers: usize) -> Vec<usize> {
    (0..accounts)
        .filter(|i| i % writers == w)
        .chain(pool_base(w)..pool_base(w) + POOL)
        .collect()
}

fn ctr(w: usize) -> Vec<u8> {
    format!("ctr{w}").into_bytes()
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

/// `"<n>|<padding>"`: the padding varies the value sizes.
fn encode(n: u64, rng: &mut SmallRng) -> Vec<u8> {
    let mut v = format!("{n}|").into_bytes();
    let pad = rng.gen_range(0..48);
    v.resize(v.len() + pad, b'.');
    v
}

/// The value of account `i`: as [`encode`], but pool accounts get up to
/// 400 bytes of padding, so a pool spans whole tables (which a sweep of the
/// whole pool then leaves to delete-only compaction).
fn encode_account(i: usize, n: u64, rng: &mut SmallRng) -> Vec<u8> {
    let mut v = encode(n, rng);
    if i >= pool_base(0) {
        let pad = rng.gen_range(0..400);
        v.resize(v.len() + pad, b'.');
    }
    v
}

fn decode(k: &[u8], v: &[u8]) -> Result<u64, String> {
    let s = std::str::from_utf8(v).map_err(|_| format!("{}: value not UTF-8", show(k)))?;
    let (n, pad) = s
        .split_once('|')
        .ok_or_else(|| format!("{}: malformed value {s:?}", show(k)))?;
    ensure!(
        pad.bytes().all(|b| b == b'.'),
        "{}: malformed padding in {s:?}",
        show(k)
    );
    n.parse()
        .map_err(|_| format!("{}: malformed number in {s:?}", show(k)))
}

fn concurrent_options(rng: &mut SmallRng) -> Options {
    let mut o = Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: rng.gen_range(4096..48 * 1024),
            max_write_buffer_number: rng.gen_range(2..=4),
            block_size: [64, 256, 4096][rng.gen_range(0..3)],
            block_restart_interval: [1, 4, 16][rng.gen_range(0..3)],
            bloom_bits_per_key: [0, 10][rng.gen_range(0..2)],
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 8,
            level0_stop_writes_trigger: 12,
            max_bytes_for_level_base: [16 * 1024, 64 * 1024][rng.gen_range(0..2)],
            target_file_size_base: [4 * 1024, 16 * 1024][rng.gen_range(0..2)],
            level_compaction_dynamic_level_bytes: rng.gen_bool(0.5),
            level_compaction_dynamic_file_size: rng.gen_bool(0.7),
            ..Default::default()
        },
        max_subcompactions: rng.gen_range(1..=3),
        num_levels: rng.gen_range(2..=7),
        max_background_jobs: rng.gen_range(2..=4),
        allow_concurrent_memtable_write: rng.gen_bool(0.7),
        wal_mmap_writes: rng.gen_bool(0.7),
        recycle_log_file_num: [0, 2][rng.gen_range(0..2)],
        bytes_per_sync: [0, 4096][rng.gen_range(0..2)],
        wal_bytes_per_sync: [0, 4096][rng.gen_range(0..2)],
        ..Options::default()
    };
    let c = [Compression::None, Compression::Lz4, Compression::Zstd];
    o.compression_per_level = (0..rng.gen_range(1..=3))
        .map(|_| c[rng.gen_range(0..3)])
        .collect();
    o.bottommost_compression = rng.gen_bool(0.3).then(|| c[rng.gen_range(0..3)]);
    o.cache_size = [0, 16 << 10, 8 << 20][rng.gen_range(0..3)];
    o.cache_type = [CacheType::Lru, CacheType::Clock][rng.gen_range(0..2)];
    o.cache_index_and_filter_blocks = o.cache_size > 0 && rng.gen_bool(0.5);
    o.block_restart_bytes = [0, 64, 1024][rng.gen_range(0..3)];
    o.memtable_bloom_size_ratio = [0.0, 0.001, 0.02][rng.gen_range(0..3)];
    o
}

/// A key the test writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Account(usize),
    Counter(usize),
}

/// What every thread shares.
struct Shared {
    seed: u64,
    accounts: usize,
    writers: usize,
    total: u64,
    /// Per writer: the account numbers it owns ([`owned_accounts`]).
    owned: Vec<Vec<usize>>,
    /// Per writer: the state of its accounts (by index in `owned[w]`)
    /// after batch `n`, at index `n`. Pushed before the batch is written.
    history: Vec<RwLock<Vec<Vec<Option<u64>>>>>,
    /// Per writer: the last batch number whose `write` returned Ok.
    acked: Vec<AtomicU64>,
    /// Families each batch also writes its counter into.
    mirrors: Vec<Cf>,
    writers_running: AtomicUsize,
    stop: AtomicBool,
    failure: Mutex<Option<String>>,
    /// What the writers' range deletions did, summed as they finish.
    range_counts: Mutex<RangeCounts>,
}

impl Shared {
    fn fail(&self, msg: String) {
        let mut f = self.failure.lock().unwrap();
        if f.is_none() {
            *f = Some(msg);
        }
        self.stop.store(true, Ordering::SeqCst);
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Every key the test ever writes, in key order.
    fn universe(&self) -> Vec<Vec<u8>> {
        let mut numbers: Vec<usize> = self.owned.iter().flatten().copied().collect();
        numbers.sort_unstable();
        let mut u: Vec<Vec<u8>> = numbers.into_iter().map(acct).collect();
        u.extend((0..self.writers).map(ctr));
        u
    }

    /// True if account number `i` is one the test writes.
    fn is_account(&self, i: usize) -> bool {
        i < self.accounts
            || (pool_base(0)..pool_base(self.writers)).contains(&i)
                && (i - pool_base(0)) % 64 < POOL
    }

    /// Which test key `k` is, if it is one.
    fn key_index(&self, k: &[u8]) -> Option<Key> {
        let num = |digits: &[u8], width: Option<usize>| -> Option<usize> {
            if digits.is_empty() || width.is_some_and(|w| digits.len() != w) {
                return None;
            }
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            std::str::from_utf8(digits).ok()?.parse().ok()
        };
        if let Some(d) = k.strip_prefix(b"acct") {
            return num(d, Some(4))
                .filter(|&i| self.is_account(i))
                .map(Key::Account);
        }
        let w = num(k.strip_prefix(b"ctr")?, None)?;
        (w < self.writers && k == ctr(w).as_slice()).then_some(Key::Counter(w))
    }

    fn acked_now(&self) -> Vec<u64> {
        self.acked
            .iter()
            .map(|a| a.load(Ordering::SeqCst))
            .collect()
    }

    /// Checks that `view` is one consistent state: known keys and well-formed
    /// values only, total `T`, and for every writer exactly the account
    /// values published with the counter the view shows. Returns the counters.
    fn check_state(&self, view: &View) -> Result<Vec<u64>, String> {
        let mut total = 0u64;
        for (k, v) in view {
            ensure!(
                self.key_index(k).is_some(),
                "unknown key {} (value {:?})",
                show(k),
                show(v)
            );
            let n = decode(k, v)?;
            if k.starts_with(b"acct") {
                total += n;
            }
        }
        let mut ctrs = Vec::with_capacity(self.writers);
        let mut wrong: Vec<String> = Vec::new();
        for w in 0..self.writers {
            let c = match view.get(&ctr(w)) {
                Some(v) => decode(&ctr(w), v)?,
                None => {
                    return Err(format!(
                        "ctr{w} missing (total {total}, want {})",
                        self.total
                    ))
                }
            };
            let hist = self.history[w].read().unwrap();
            ensure!(
                (c as usize) < hist.len(),
                "ctr{w} = {c} but writer {w} has only prepared {} batches",
                hist.len() - 1
            );
            let want = &hist[c as usize];
            for (j, want_v) in want.iter().enumerate() {
                let i = self.owned[w][j];
                let got = match view.get(&acct(i)) {
                    Some(v) => Some(decode(&acct(i), v)?),
                    None => None,
                };
                if got != *want_v {
                    wrong.push(format!(
                        "acct{i:04} (writer {w}, ctr{w}={c}): expected {want_v:?} got {got:?}"
                    ));
                }
            }
            ctrs.push(c);
        }
        ensure!(
            total == self.total && wrong.is_empty(),
            "inconsistent state: total {total}, expected {}; counters {ctrs:?}; {} wrong accounts: {}",
            self.total,
            wrong.len(),
            wrong.iter().take(6).cloned().collect::<Vec<_>>().join("; ")
        );
        Ok(ctrs)
    }
}

/// Collects a whole cursor forward (from `seek_to_first` or `seek(from)`).
fn collect_forward(it: &mut DbIterator, from: Option<&[u8]>) -> Result<Entries, String> {
    match from {
        Some(t) => it.seek(t),
        None => it.seek_to_first(),
    }
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().map_err(|e| format!("iterator error: {e}"))?;
    Ok(out)
}

/// Collects a whole cursor backward (from `seek_to_last` or
/// `seek_for_prev(from)`), returned in descending order.
fn collect_reverse(it: &mut DbIterator, from: Option<&[u8]>) -> Result<Entries, String> {
    match from {
        Some(t) => it.seek_for_prev(t),
        None => it.seek_to_last(),
    }
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().map_err(|e| format!("iterator error: {e}"))?;
    Ok(out)
}

/// Builds a view from entries that must be strictly ascending.
fn ascending_view(entries: Entries, what: &str) -> Result<View, String> {
    for w in entries.windows(2) {
        ensure!(
            w[0].0 < w[1].0,
            "{what}: keys out of order or repeated: {} then {}",
            show(&w[0].0),
            show(&w[1].0)
        );
    }
    Ok(entries.into_iter().collect())
}

/// The first difference between two views, for messages.
fn diff(want: &View, got: &View) -> String {
    for (k, v) in want {
        match got.get(k) {
            None => return format!("{} missing (expected {:?})", show(k), show(v)),
            Some(g) if g != v => {
                return format!("{}: expected {:?} got {:?}", show(k), show(v), show(g))
            }
            _ => {}
        }
    }
    for (k, v) in got {
        if !want.contains_key(k) {
            return format!("{} present ({:?}) but expected absent", show(k), show(v));
        }
    }
    "no difference".into()
}

fn same(want: &View, got: &View, what: &str) -> Check {
    ensure!(want == got, "{what}: {}", diff(want, got));
    Ok(())
}

fn multi_get_view(db: &Db, keys: &[Vec<u8>], ro: &ReadOptions<'_>) -> Result<View, String> {
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let got = db.multi_get(&refs, ro);
    ensure!(
        got.len() == keys.len(),
        "multi_get returned {} results for {} keys",
        got.len(),
        keys.len()
    );
    let mut view = View::new();
    for (k, r) in keys.iter().zip(got) {
        match r {
            Ok(Some(v)) => {
                if let Some(prev) = view.insert(k.clone(), v.to_vec()) {
                    // A key asked twice must get the same answer.
                    ensure!(
                        prev == v.to_vec(),
                        "multi_get gave two values for {}: {:?} and {:?}",
                        show(k),
                        show(&prev),
                        show(&v)
                    );
                }
            }
            Ok(None) => {
                ensure!(
                    !view.contains_key(k),
                    "multi_get gave a value and None for {}",
                    show(k)
                );
            }
            Err(e) => return Err(format!("multi_get {}: {e}", show(k))),
        }
    }
    Ok(view)
}

/// A random iteration or compaction bound: an existing key, a point between
/// two keys, before or after the accounts, or beyond the whole key space.
/// One time in three the key or point is in (or just past) the pools.
fn random_bound(rng: &mut SmallRng, accounts: usize, writers: usize) -> Vec<u8> {
    let i = if rng.gen_ratio(1, 3) {
        rng.gen_range(pool_base(0)..pool_base(writers) + 2)
    } else {
        rng.gen_range(0..accounts + 2)
    };
    match rng.gen_range(0..10) {
        0..=3 => acct(i),
        4..=6 => {
            let mut k = acct(i);
            k.push(b'm');
            k
        }
        7 => ctr(rng.gen_range(0..writers + 1)),
        8 => [&b""[..], b"a", b"acct", b"acct00"][rng.gen_range(0..4)].to_vec(),
        _ => [&b"acct9999"[..], b"b", b"ctr", b"d", b"zzz"][rng.gen_range(0..5)].to_vec(),
    }
}

fn sub_view(view: &View, lo: Option<&[u8]>, hi: Option<&[u8]>) -> View {
    let lo = lo.map_or(Bound::Unbounded, Bound::Included);
    let hi = hi.map_or(Bound::Unbounded, Bound::Excluded);
    view.range::<[u8], _>((lo, hi))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn writer(db: &Db, sh: &Shared, w: usize, batches: u64) -> Check {
    let mut rng = SmallRng::seed_from_u64(sh.seed ^ (0x1000 + w as u64).wrapping_mul(0x9e37_79b9));
    let mut counts = RangeCounts::default();
    let mine: &[usize] = &sh.owned[w];
    // The pool's slots are the last `POOL` of `mine`.
    let pool_at = mine.len() - POOL;
    let mut state: Vec<Option<u64>> = sh.history[w].read().unwrap()[0].clone();
    for n in 1..=batches {
        if sh.stopped() {
            return Ok(());
        }
        let mut b = WriteBatch::new();
        for _ in 0..rng.gen_range(1..=4) {
            let from = rng.gen_range(0..mine.len());
            let mut to = rng.gen_range(0..mine.len() - 1);
            if to >= from {
                to += 1;
            }
            let bal = state[from].unwrap_or(0);
            let amount = if bal == 0 {
                0
            } else if rng.gen_bool(0.3) {
                bal
            } else {
                rng.gen_range(0..=bal)
            };
            let left = bal - amount;
            state[from] = if left == 0 && rng.gen_bool(0.6) {
                None
            } else {
                Some(left)
            };
            state[to] = match state[to] {
                None if amount == 0 && rng.gen_bool(0.5) => None,
                v => Some(v.unwrap_or(0) + amount),
            };
            for j in [from, to] {
                match state[j] {
                    Some(v) => b.put(&acct(mine[j]), &encode_account(mine[j], v, &mut rng)),
                    // An interleaved account by a range deletion of it
                    // alone, now and then: [acct(i), acct(i + 1)).
                    None if j < pool_at && rng.gen_bool(0.2) => {
                        b.delete_range(&acct(mine[j]), &acct(mine[j] + 1));
                        counts.range_deletions += 1;
                    }
                    None => b.delete(&acct(mine[j])),
                }
            }
        }
        if rng.gen_bool(0.15) {
            // Sweep a run of the pool into one account, in this batch.
            let width = if rng.gen_bool(0.9) {
                rng.gen_range(1..=4)
            } else {
                rng.gen_range(5..=POOL)
            };
            let a = rng.gen_range(0..=POOL - width);
            let run = pool_at + a..pool_at + a + width;
            let swept: u64 = state[run.clone()].iter().flatten().sum();
            for x in &mut state[run.clone()] {
                *x = None;
            }
            // Bounds on the run's first key and its end key, or between
            // the key before and the first / the last and the end key:
            // the same accounts either way (the end, at most the next
            // writer's first pool slot, is exclusive).
            let (first, end) = (mine[run.start], mine[run.start] + width);
            let lo = if rng.gen_ratio(1, 4) {
                let mut k = acct(first - 1);
                k.push(b'm');
                k
            } else {
                acct(first)
            };
            let hi = if rng.gen_ratio(1, 4) {
                let mut k = acct(end - 1);
                k.push(b'm');
                k
            } else {
                acct(end)
            };
            b.delete_range(&lo, &hi);
            counts.range_deletions += 1;
            counts.swept += swept;
            let to = if rng.gen_bool(0.3) {
                rng.gen_range(run)
            } else {
                rng.gen_range(0..mine.len())
            };
            if swept > 0 || state[to].is_some() {
                let v = state[to].unwrap_or(0) + swept;
                state[to] = Some(v);
                b.put(&acct(mine[to]), &encode_account(mine[to], v, &mut rng));
            }
        }
        if rng.gen_bool(0.05) {
            // Delete and recreate one account in the same batch.
            let j = rng.gen_range(0..mine.len());
            let k = acct(mine[j]);
            b.delete(&k);
            match state[j] {
                Some(v) => b.put(&k, &encode_account(mine[j], v, &mut rng)),
                None => b.delete(&k),
            }
        }
        b.put(&ctr(w), &encode(n, &mut rng));
        for m in &sh.mirrors {
            b.put_cf(m, &ctr(w), &encode(n, &mut rng));
            let tally = format!("tally{w}-{:02}", n % 32).into_bytes();
            if rng.gen_bool(0.8) {
                b.put_cf(m, &tally, &encode(n, &mut rng));
            } else {
                b.delete_cf(m, &tally);
            }
        }
        sh.history[w].write().unwrap().push(state.clone());
        // sync with disable_wal is rejected (nothing to sync).
        let disable_wal = rng.gen_bool(0.02);
        let wo = WriteOptions {
            sync: !disable_wal && rng.gen_bool(0.03),
            disable_wal,
        };
        db.write(b, &wo)
            .map_err(|e| format!("write of batch {n} failed: {e}"))?;
        sh.acked[w].store(n, Ordering::SeqCst);
    }
    sh.range_counts.lock().unwrap().add(&counts);
    Ok(())
}

/// Range deletions a writer wrote, and the money its pool sweeps moved.
#[derive(Default, Debug, Clone, Copy)]
struct RangeCounts {
    range_deletions: u64,
    swept: u64,
}

impl RangeCounts {
    fn add(&mut self, o: &RangeCounts) {
        self.range_deletions += o.range_deletions;
        self.swept += o.swept;
    }
}

/// Per reader: the counters seen last, for the monotonic-read check.
struct ReaderState {
    last: Vec<u64>,
}

impl ReaderState {
    /// Counters of a read that started after `acked_before` was loaded and
    /// after every earlier read of this reader.
    fn advance(&mut self, ctrs: &[u64], acked_before: &[u64], what: &str) -> Check {
        for w in 0..ctrs.len() {
            ensure!(
                ctrs[w] >= acked_before[w],
                "{what}: ctr{w} = {} but batch {} was acknowledged before the read started",
                ctrs[w],
                acked_before[w]
            );
            ensure!(
                ctrs[w] >= self.last[w],
                "{what}: ctr{w} went back from {} to {}",
                self.last[w],
                ctrs[w]
            );
        }
        self.last = ctrs.to_vec();
        Ok(())
    }
}

/// The writers' counters in mirror family `m` as one read at `ro` sees
/// them, read by a random one of `multi_get_cf`, `get_cf_opt`, a bounded
/// `iter_cf` or (without a snapshot) `prefix_cf`.
fn mirror_counters(
    db: &Db,
    sh: &Shared,
    m: &Cf,
    ro: &ReadOptions<'_>,
    rng: &mut SmallRng,
) -> Result<Vec<u64>, String> {
    let keys: Vec<Vec<u8>> = (0..sh.writers).map(ctr).collect();
    let mut got: View = View::new();
    let what = match rng.gen_range(0..if ro.snapshot.is_some() { 3 } else { 4 }) {
        0 => {
            let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
            for (k, r) in keys.iter().zip(db.multi_get_cf(m, &refs, ro)) {
                if let Some(v) = r.map_err(|e| format!("multi_get_cf {}: {e}", show(k)))? {
                    got.insert(k.clone(), v.to_vec());
                }
            }
            "multi_get_cf"
        }
        1 => {
            for k in &keys {
                let r = db.get_cf_opt(m, k, ro);
                if let Some(v) = r.map_err(|e| format!("get_cf_opt {}: {e}", show(k)))? {
                    got.insert(k.clone(), v.to_vec());
                }
            }
            "get_cf_opt"
        }
        2 => {
            let mut bounded = ReadOptions::new();
            bounded.snapshot = ro.snapshot;
            bounded.iterate_lower_bound = Some(b"ctr".to_vec());
            bounded.iterate_upper_bound = Some(b"cts".to_vec());
            let e = collect_forward(&mut db.iter_cf(m, &bounded), None)?;
            got = ascending_view(e, "iter_cf")?;
            "iter_cf"
        }
        _ => {
            let e: Result<Entries, _> = db.prefix_cf(m, b"ctr").collect();
            got = ascending_view(e.map_err(|e| format!("prefix_cf: {e}"))?, "prefix_cf")?;
            "prefix_cf"
        }
    };
    let mut out = Vec::new();
    for k in &keys {
        let v = got
            .remove(k)
            .ok_or_else(|| format!("{what} in {}: {} missing", m.name(), show(k)))?;
        out.push(decode(k, &v)?);
    }
    ensure!(got.is_empty(), "{what} in {}: stray keys", m.name());
    Ok(out)
}

/// At one snapshot: every batch is in all its families or in none, so the
/// mirrors show the counters of `default`.
fn check_mirrors_at(
    db: &Db,
    sh: &Shared,
    ro: &ReadOptions<'_>,
    ctrs: &[u64],
    rng: &mut SmallRng,
) -> Check {
    for m in &sh.mirrors {
        let got = mirror_counters(db, sh, m, ro, rng)?;
        ensure!(
            got == ctrs,
            "family {} shows counters {got:?}, default {ctrs:?}: a batch was seen in part",
            m.name()
        );
    }
    Ok(())
}

/// All checks at one new snapshot; returns the snapshot and its view.
fn check_new_snapshot(
    db: &Db,
    sh: &Shared,
    rs: &mut ReaderState,
    rng: &mut SmallRng,
) -> Result<(Snapshot, View), String> {
    let universe = sh.universe();
    let acked_before = sh.acked_now();
    let snap = db.snapshot();
    let seq = snap.sequence();
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(&snap);
    ro.fill_cache = rng.gen_bool(0.7);

    // (a) multi_get of every key, in random order, some asked twice.
    let mut keys = universe.clone();
    for _ in 0..rng.gen_range(0..4) {
        keys.push(universe[rng.gen_range(0..universe.len())].clone());
    }
    keys.shuffle(rng);
    let view = multi_get_view(db, &keys, &ro).map_err(|e| format!("(a) snapshot {seq}: {e}"))?;
    let ctrs = sh
        .check_state(&view)
        .map_err(|e| format!("(a) multi_get at snapshot {seq}: {e}"))?;
    rs.advance(&ctrs, &acked_before, &format!("(a) snapshot {seq}"))?;
    check_mirrors_at(db, sh, &ro, &ctrs, rng).map_err(|e| format!("(a) snapshot {seq}: {e}"))?;

    // (b) forward and (c) reverse full iteration at the snapshot.
    let fwd = collect_forward(&mut db.iter(&ro), None)
        .and_then(|e| ascending_view(e, "forward"))
        .map_err(|e| format!("(b) snapshot {seq}: {e}"))?;
    same(
        &view,
        &fwd,
        &format!("(b) forward iteration vs multi_get at snapshot {seq}"),
    )?;
    let mut rev =
        collect_reverse(&mut db.iter(&ro), None).map_err(|e| format!("(c) snapshot {seq}: {e}"))?;
    rev.reverse();
    let rev = ascending_view(rev, "reverse").map_err(|e| format!("(c) snapshot {seq}: {e}"))?;
    same(
        &view,
        &rev,
        &format!("(c) reverse iteration vs multi_get at snapshot {seq}"),
    )?;

    // (d) bounded iteration over random sub-ranges.
    for _ in 0..2 {
        check_bounded(db, sh, &ro, &view, rng).map_err(|e| format!("(d) snapshot {seq}: {e}"))?;
    }

    // Point reads at the snapshot.
    for _ in 0..4 {
        let k = &universe[rng.gen_range(0..universe.len())];
        let got = db
            .get_opt(k, &ro)
            .map_err(|e| format!("get_opt {} at snapshot {seq}: {e}", show(k)))?
            .map(|v| v.to_vec());
        ensure!(
            got.as_ref() == view.get(k),
            "get_opt {} at snapshot {seq}: expected {:?} got {:?}",
            show(k),
            view.get(k).map(|v| show(v)),
            got.map(|v| show(&v))
        );
    }
    drop(ro);
    Ok((snap, view))
}

/// A bounded cursor at the snapshot of `ro`: forward and reverse scans, a
/// random walk and `multi_get` of the same keys, all against `view`.
fn check_bounded(
    db: &Db,
    sh: &Shared,
    ro: &ReadOptions<'_>,
    view: &View,
    rng: &mut SmallRng,
) -> Check {
    let mut lo = rng
        .gen_bool(0.8)
        .then(|| random_bound(rng, sh.accounts, sh.writers));
    let mut hi = rng
        .gen_bool(0.8)
        .then(|| random_bound(rng, sh.accounts, sh.writers));
    if let (Some(l), Some(h)) = (&lo, &hi) {
        if l > h {
            std::mem::swap(&mut lo, &mut hi);
        }
    }
    let bounds = format!(
        "bounds [{:?}, {:?})",
        lo.as_deref().map(show),
        hi.as_deref().map(show)
    );
    let want = sub_view(view, lo.as_deref(), hi.as_deref());
    let mut bro = ro.clone();
    bro.iterate_lower_bound = lo.clone();
    bro.iterate_upper_bound = hi.clone();

    let fwd = collect_forward(&mut db.iter(&bro), None)
        .and_then(|e| ascending_view(e, "bounded forward"))
        .map_err(|e| format!("{bounds}: {e}"))?;
    same(&want, &fwd, &format!("bounded forward scan, {bounds}"))?;
    let mut rev =
        collect_reverse(&mut db.iter(&bro), None).map_err(|e| format!("{bounds}: {e}"))?;
    rev.reverse();
    let rev = ascending_view(rev, "bounded reverse").map_err(|e| format!("{bounds}: {e}"))?;
    same(&want, &rev, &format!("bounded reverse scan, {bounds}"))?;

    // multi_get of every universe key in the range (present or not).
    let keys: Vec<Vec<u8>> = sh
        .universe()
        .into_iter()
        .filter(|k| {
            lo.as_deref().is_none_or(|l| k.as_slice() >= l)
                && hi.as_deref().is_none_or(|h| k.as_slice() < h)
        })
        .collect();
    let mg = multi_get_view(db, &keys, ro).map_err(|e| format!("{bounds}: {e}"))?;
    same(&want, &mg, &format!("multi_get of the keys in {bounds}"))?;

    // A random walk from a random seek target, changing direction.
    let entries: Vec<(&Vec<u8>, &Vec<u8>)> = want.iter().collect();
    let mut it = db.iter(&bro);
    let target = random_bound(rng, sh.accounts, sh.writers);
    let mut pos: Option<usize> = if rng.gen_bool(0.5) {
        it.seek(&target);
        entries
            .iter()
            .position(|(k, _)| k.as_slice() >= target.as_slice())
    } else {
        it.seek_for_prev(&target);
        entries
            .iter()
            .rposition(|(k, _)| k.as_slice() <= target.as_slice())
    };
    for step in 0..rng.gen_range(5..40) {
        let Some(p) = pos else {
            ensure!(
                !it.valid(),
                "walk step {step} from {}, {bounds}: cursor at {} but the model is exhausted",
                show(&target),
                show(it.key())
            );
            it.status().map_err(|e| format!("walk, {bounds}: {e}"))?;
            break;
        };
        ensure!(
            it.valid(),
            "walk step {step} from {}, {bounds}: cursor invalid, expected {} (status {:?})",
            show(&target),
            show(entries[p].0),
            it.status()
        );
        ensure!(
            (it.key(), it.value()) == (entries[p].0.as_slice(), entries[p].1.as_slice()),
            "walk step {step} from {}, {bounds}: expected {} = {:?}, got {} = {:?}",
            show(&target),
            show(entries[p].0),
            show(entries[p].1),
            show(it.key()),
            show(it.value())
        );
        if rng.gen_bool(0.5) {
            it.next();
            pos = (p + 1 < entries.len()).then_some(p + 1);
        } else {
            it.prev();
            pos = p.checked_sub(1);
        }
    }
    Ok(())
}

/// Re-reads an old snapshot: it must return what it returned when taken.
fn recheck_old_snapshot(
    db: &Db,
    sh: &Shared,
    snap: &Snapshot,
    view: &View,
    rng: &mut SmallRng,
) -> Check {
    let seq = snap.sequence();
    let mut ro = ReadOptions::new();
    ro.snapshot = Some(snap);
    ro.fill_cache = rng.gen_bool(0.5);
    let universe = sh.universe();
    match rng.gen_range(0..4) {
        0 => {
            let got = multi_get_view(db, &universe, &ro)
                .map_err(|e| format!("old snapshot {seq}: {e}"))?;
            same(
                view,
                &got,
                &format!("multi_get at old snapshot {seq} vs when taken"),
            )
        }
        1 => {
            let got = collect_forward(&mut db.iter(&ro), None)
                .and_then(|e| ascending_view(e, "forward"))
                .map_err(|e| format!("old snapshot {seq}: {e}"))?;
            same(
                view,
                &got,
                &format!("forward iteration at old snapshot {seq} vs when taken"),
            )
        }
        2 => check_bounded(db, sh, &ro, view, rng)
            .map_err(|e| format!("old snapshot {seq} vs when taken: {e}")),
        _ => {
            for _ in 0..8 {
                let k = &universe[rng.gen_range(0..universe.len())];
                let got = db
                    .get_opt(k, &ro)
                    .map_err(|e| format!("get_opt {} at old snapshot {seq}: {e}", show(k)))?
                    .map(|v| v.to_vec());
                ensure!(
                    got.as_ref() == view.get(k),
                    "get_opt {} at old snapshot {seq}: expected {:?} (when taken) got {:?}",
                    show(k),
                    view.get(k).map(|v| show(v)),
                    got.map(|v| show(&v))
                );
            }
            Ok(())
        }
    }
}

/// (e) Reads of the latest state without a snapshot: each call is one
/// consistent read, so the invariants hold for it alone.
fn check_latest(db: &Db, sh: &Shared, rs: &mut ReaderState, rng: &mut SmallRng) -> Check {
    let acked_before = sh.acked_now();
    let kind = rng.gen_range(0..7);
    let (what, view) = match kind {
        0 => {
            let v: Result<Vec<_>, _> = db.range(..).collect();
            let v = v.map_err(|e| format!("range(..) forward: {e}"))?;
            ("range(..) forward", ascending_view(v, "range(..) forward")?)
        }
        1 => {
            // The reverse half is made on the first next_back: leave time for
            // flushes and compactions in between.
            let r = db.range(..);
            std::thread::sleep(Duration::from_micros(rng.gen_range(0..3000)));
            let v: Result<Vec<_>, _> = r.rev().collect();
            let mut v = v.map_err(|e| format!("range(..) reverse: {e}"))?;
            v.reverse();
            ("range(..) reverse", ascending_view(v, "range(..) reverse")?)
        }
        2 => {
            // Both ends at once until they meet.
            let mut r = db.range(..);
            let (mut front, mut back) = (Vec::new(), Vec::new());
            let (mut fdone, mut bdone) = (false, false);
            while !(fdone && bdone) {
                let from_front = if fdone || bdone {
                    !fdone
                } else {
                    rng.gen_bool(0.5)
                };
                if from_front {
                    match r.next() {
                        Some(x) => front.push(x.map_err(|e| format!("range(..) both ends: {e}"))?),
                        None => fdone = true,
                    }
                } else {
                    if rng.gen_bool(0.05) {
                        std::thread::sleep(Duration::from_micros(500));
                    }
                    match r.next_back() {
                        Some(x) => back.push(x.map_err(|e| format!("range(..) both ends: {e}"))?),
                        None => bdone = true,
                    }
                }
            }
            back.reverse();
            front.extend(back);
            (
                "range(..) both ends",
                ascending_view(front, "range(..) both ends")?,
            )
        }
        3 => {
            let ro = ReadOptions::new();
            let v = multi_get_view(db, &sh.universe(), &ro)?;
            ("multi_get without snapshot", v)
        }
        4 => {
            let ro = ReadOptions::new();
            let v = collect_forward(&mut db.iter(&ro), None)?;
            (
                "cursor without snapshot",
                ascending_view(v, "cursor without snapshot")?,
            )
        }
        5 => {
            let ro = ReadOptions::new();
            let mut v = collect_reverse(&mut db.iter(&ro), None)?;
            v.reverse();
            (
                "reverse cursor without snapshot",
                ascending_view(v, "reverse cursor")?,
            )
        }
        _ => {
            // prefix("acct") holds only the accounts: check the total; the
            // counters come from a later, separate read.
            let p = if rng.gen_bool(0.5) {
                &b"acct"[..]
            } else {
                b"acct0"
            };
            let reverse = rng.gen_bool(0.5);
            let what = format!(
                "prefix({}) {}",
                show(p),
                if reverse { "reverse" } else { "forward" }
            );
            let v: Result<Vec<_>, _> = if reverse {
                // As for range(..): the reverse half is made lazily.
                let r = db.prefix(p);
                std::thread::sleep(Duration::from_micros(rng.gen_range(0..2000)));
                r.rev().collect()
            } else {
                db.prefix(p).collect()
            };
            let v = v.map_err(|e| format!("(e) {what}: {e}"))?;
            let mut total = 0;
            for (k, val) in &v {
                ensure!(
                    k.starts_with(p) && sh.key_index(k).is_some(),
                    "(e) {what} returned {}",
                    show(k)
                );
                total += decode(k, val)?;
            }
            // "acct0" covers acct0000..acct0999: every account here.
            ensure!(
                total == sh.total,
                "(e) {what}: total {total}, expected {} ({} accounts present)",
                sh.total,
                v.len()
            );
            let c: Result<Vec<_>, _> = db.prefix(b"ctr").collect();
            let c = c.map_err(|e| format!("(e) prefix(ctr): {e}"))?;
            let mut ctrs: Vec<Option<u64>> = vec![None; sh.writers];
            for (k, val) in &c {
                match sh.key_index(k) {
                    Some(Key::Counter(w)) if ctrs[w].is_none() => ctrs[w] = Some(decode(k, val)?),
                    _ => return Err(format!("(e) prefix(ctr) returned {}", show(k))),
                }
            }
            let ctrs: Option<Vec<u64>> = ctrs.into_iter().collect();
            let ctrs =
                ctrs.ok_or_else(|| format!("(e) prefix(ctr): a counter is missing: {c:?}"))?;
            return rs.advance(&ctrs, &acked_before, "(e) prefix(ctr)");
        }
    };
    let ctrs = sh
        .check_state(&view)
        .map_err(|e| format!("(e) {what}: {e}"))?;
    rs.advance(&ctrs, &acked_before, &format!("(e) {what}"))?;
    // A mirror read without a snapshot: no acknowledged batch is missing.
    let m = &sh.mirrors[rng.gen_range(0..sh.mirrors.len())];
    let got = mirror_counters(db, sh, m, &ReadOptions::new(), rng)
        .map_err(|e| format!("(e) latest: {e}"))?;
    for (w, (g, a)) in got.iter().zip(&acked_before).enumerate() {
        ensure!(
            g >= a,
            "(e) latest: family {}: ctr{w} = {g} but batch {a} was acknowledged",
            m.name()
        );
    }
    Ok(())
}

fn reader(db: &Db, sh: &Shared, r: usize, rounds: &AtomicU64) -> Check {
    let mut rng = SmallRng::seed_from_u64(sh.seed ^ (0x2000 + r as u64).wrapping_mul(0x85eb_ca6b));
    let mut rs = ReaderState {
        last: vec![0; sh.writers],
    };
    let mut old: Vec<(Snapshot, View)> = Vec::new();
    let mut round = 0u64;
    while sh.writers_running.load(Ordering::SeqCst) > 0 && !sh.stopped() {
        round += 1;
        let ctx = |e: String| format!("round {round}: {e}");
        if rng.gen_bool(0.4) {
            let (snap, view) = check_new_snapshot(db, sh, &mut rs, &mut rng).map_err(ctx)?;
            if old.len() >= 4 {
                old.remove(rng.gen_range(0..old.len()));
            }
            old.push((snap, view));
        }
        if !old.is_empty() && rng.gen_bool(0.5) {
            let (snap, view) = &old[rng.gen_range(0..old.len())];
            recheck_old_snapshot(db, sh, snap, view, &mut rng).map_err(ctx)?;
        }
        check_latest(db, sh, &mut rs, &mut rng).map_err(ctx)?;
    }
    // Old snapshots once more, after everything the writers did.
    for (snap, view) in &old {
        recheck_old_snapshot(db, sh, snap, view, &mut rng)
            .map_err(|e| format!("after the writers: {e}"))?;
    }
    rounds.fetch_add(round, Ordering::SeqCst);
    Ok(())
}

#[derive(Default)]
struct ChurnCounts {
    flushes: AtomicU64,
    compact_ranges: AtomicU64,
    waits: AtomicU64,
}

fn churn(db: &Db, sh: &Shared, counts: &ChurnCounts) -> Check {
    let mut rng = SmallRng::seed_from_u64(sh.seed ^ 0x3000_c0ff);
    while sh.writers_running.load(Ordering::SeqCst) > 0 && !sh.stopped() {
        match rng.gen_range(0..10) {
            0..=2 => {
                db.flush().map_err(|e| format!("flush: {e}"))?;
                counts.flushes.fetch_add(1, Ordering::Relaxed);
            }
            3..=6 => {
                let a = rng
                    .gen_bool(0.8)
                    .then(|| random_bound(&mut rng, sh.accounts, sh.writers));
                let b = rng
                    .gen_bool(0.8)
                    .then(|| random_bound(&mut rng, sh.accounts, sh.writers));
                let (a, b) = match (a, b) {
                    (Some(a), Some(b)) if a > b => (Some(b), Some(a)),
                    x => x,
                };
                db.compact_range(a.as_deref(), b.as_deref()).map_err(|e| {
                    format!(
                        "compact_range({:?}, {:?}): {e}",
                        a.as_deref().map(show),
                        b.as_deref().map(show)
                    )
                })?;
                counts.compact_ranges.fetch_add(1, Ordering::Relaxed);
            }
            8 => {
                let m = &sh.mirrors[rng.gen_range(0..sh.mirrors.len())];
                if rng.gen_bool(0.5) {
                    db.flush_cf(m).map_err(|e| format!("flush_cf: {e}"))?;
                    counts.flushes.fetch_add(1, Ordering::Relaxed);
                } else {
                    let a = rng.gen_bool(0.5).then(|| b"ctr".to_vec());
                    let b = rng.gen_bool(0.5).then(|| b"tally2".to_vec());
                    db.compact_range_cf(m, a.as_deref(), b.as_deref())
                        .map_err(|e| format!("compact_range_cf: {e}"))?;
                    counts.compact_ranges.fetch_add(1, Ordering::Relaxed);
                }
            }
            7 => {
                db.wait_for_compaction()
                    .map_err(|e| format!("wait_for_compaction: {e}"))?;
                counts.waits.fetch_add(1, Ordering::Relaxed);
            }
            _ => std::thread::sleep(Duration::from_millis(rng.gen_range(1..5))),
        }
    }
    Ok(())
}

/// Runs `body` on its own thread; an `Err` or a panic becomes the test's
/// failure (the first one wins) and stops every other thread.
fn spawn(
    sh: &Arc<Shared>,
    name: String,
    body: impl FnOnce() -> Check + Send + 'static,
) -> std::thread::JoinHandle<()> {
    let sh = Arc::clone(sh);
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            let r = std::panic::catch_unwind(AssertUnwindSafe(body));
            let msg = match r {
                Ok(Ok(())) => return,
                Ok(Err(m)) => m,
                Err(p) => p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panic".into()),
            };
            sh.fail(format!("seed {}: {name}: {msg}", sh.seed));
        })
        .unwrap()
}

/// The exact final state the writers left: every account and counter.
fn final_view(sh: &Shared, batches: u64) -> View {
    let mut rng = SmallRng::seed_from_u64(0);
    let mut out = View::new();
    for w in 0..sh.writers {
        let hist = sh.history[w].read().unwrap();
        let last = hist.last().unwrap();
        assert_eq!(hist.len() as u64, batches + 1);
        for (j, v) in last.iter().enumerate() {
            if let Some(v) = v {
                out.insert(acct(sh.owned[w][j]), encode(*v, &mut rng));
            }
        }
        out.insert(ctr(w), encode(batches, &mut rng));
    }
    out
}

/// Checks the latest state against the exact final state (values compared
/// by number: the padding is random).
fn check_final(db: &Db, sh: &Shared, want: &View, when: &str) {
    let seed = sh.seed;
    let got = multi_get_view(db, &sh.universe(), &ReadOptions::new())
        .unwrap_or_else(|e| panic!("seed {seed}: {when}: {e}"));
    let iter = collect_forward(&mut db.iter(&ReadOptions::new()), None)
        .and_then(|e| ascending_view(e, "final scan"))
        .unwrap_or_else(|e| panic!("seed {seed}: {when}: {e}"));
    for (what, got) in [("multi_get", &got), ("forward scan", &iter)] {
        let num = |v: &View| -> BTreeMap<Vec<u8>, u64> {
            v.iter()
                .map(|(k, x)| (k.clone(), decode(k, x).unwrap()))
                .collect()
        };
        let (w, g) = (num(want), num(got));
        if w != g {
            let first = w
                .iter()
                .find(|(k, v)| g.get(*k) != Some(v))
                .map(|(k, v)| format!("{}: expected {v} got {:?}", show(k), g.get(k)))
                .or_else(|| {
                    g.iter()
                        .find(|(k, _)| !w.contains_key(*k))
                        .map(|(k, v)| format!("{} = {v} should be absent", show(k)))
                });
            panic!("seed {seed}: {when}: {what} differs from the writers' final state: {first:?}");
        }
    }
    sh.check_state(&got)
        .unwrap_or_else(|e| panic!("seed {seed}: {when}: {e}"));
    let mut rng = SmallRng::seed_from_u64(seed);
    for m in &sh.mirrors {
        // The handles of an earlier open are refused: look them up again.
        let m = db
            .cf(m.name())
            .unwrap_or_else(|| panic!("seed {seed}: {when}: no {m:?}"));
        let got = mirror_counters(db, sh, &m, &ReadOptions::new(), &mut rng)
            .unwrap_or_else(|e| panic!("seed {seed}: {when}: {e}"));
        let batches = sh.history[0].read().unwrap().len() as u64 - 1;
        assert_eq!(
            got,
            vec![batches; sh.writers],
            "seed {seed}: {when}: {}",
            m.name()
        );
    }
}

fn run_seed(seed: u64, batches: u64) {
    let started = Instant::now();
    let mut rng = SmallRng::seed_from_u64(seed);
    let opts = concurrent_options(&mut rng);
    let accounts = rng.gen_range(50..=200);
    let writers = rng.gen_range(2..=4);
    let readers = rng.gen_range(2..=3);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    // Mirrors hold little (counters and 32 tallies a writer): memtables
    // of their own size, so they flush at other times than `default`.
    let mirror_opts = |rng: &mut SmallRng| CfOptions {
        write_buffer_size: rng.gen_range(16 * 1024..96 * 1024),
        level0_file_num_compaction_trigger: 2,
        level0_slowdown_writes_trigger: 12,
        level0_stop_writes_trigger: 20,
        target_file_size_base: 8 * 1024,
        max_bytes_for_level_base: 32 * 1024,
        bloom_bits_per_key: [0, 10][rng.gen_range(0..2)],
        ..CfOptions::default()
    };
    let mirrors = db
        .create_cfs(&[("m0", mirror_opts(&mut rng)), ("m1", mirror_opts(&mut rng))])
        .unwrap();

    // Initial balances; about a tenth of the accounts start absent (0).
    let init: Vec<Option<u64>> = (0..accounts)
        .map(|_| rng.gen_bool(0.9).then(|| rng.gen_range(0..1000)))
        .collect();
    let total: u64 = init.iter().flatten().sum();
    let mut b = WriteBatch::new();
    for (i, v) in init.iter().enumerate() {
        if let Some(v) = v {
            b.put(&acct(i), &encode(*v, &mut rng));
        }
    }
    for w in 0..writers {
        b.put(&ctr(w), &encode(0, &mut rng));
        for m in &mirrors {
            b.put_cf(m, &ctr(w), &encode(0, &mut rng));
        }
    }
    db.write(b, &WriteOptions::default()).unwrap();
    let owned: Vec<Vec<usize>> = (0..writers)
        .map(|w| owned_accounts(w, accounts, writers))
        .collect();
    // Pools start empty.
    let history = owned
        .iter()
        .map(|mine| {
            let at0: Vec<Option<u64>> = mine
                .iter()
                .map(|&i| init.get(i).copied().flatten())
                .collect();
            RwLock::new(vec![at0])
        })
        .collect();
    let sh = Arc::new(Shared {
        seed,
        accounts,
        writers,
        total,
        owned,
        history,
        acked: (0..writers).map(|_| AtomicU64::new(0)).collect(),
        mirrors,
        writers_running: AtomicUsize::new(writers),
        stop: AtomicBool::new(false),
        failure: Mutex::new(None),
        range_counts: Mutex::new(RangeCounts::default()),
    });
    eprintln!(
        "seed {seed}: {accounts} accounts, total {total}, {writers} writers x {batches} batches, \
         {readers} readers; write_buffer_size {}, target_file_size_base {}, num_levels {}, \
         max_background_jobs {}, concurrent memtable writes {}, compression {:?}",
        opts.write_buffer_size,
        opts.target_file_size_base,
        opts.num_levels,
        opts.max_background_jobs,
        opts.allow_concurrent_memtable_write,
        opts.compression_per_level
    );

    let rounds = Arc::new(AtomicU64::new(0));
    let counts = Arc::new(ChurnCounts::default());
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let mut handles = Vec::new();
    for w in 0..writers {
        let (db, sh2, tx) = (db.clone(), Arc::clone(&sh), done_tx.clone());
        handles.push(spawn(&sh, format!("writer {w}"), move || {
            // Count the writer as finished however it ends.
            struct Done<'a>(&'a Shared, mpsc::Sender<()>);
            impl Drop for Done<'_> {
                fn drop(&mut self) {
                    self.0.writers_running.fetch_sub(1, Ordering::SeqCst);
                    let _ = self.1.send(());
                }
            }
            let _done = Done(&sh2, tx);
            writer(&db, &sh2, w, batches)
        }));
    }
    for r in 0..readers {
        let (db, sh2, rounds) = (db.clone(), Arc::clone(&sh), Arc::clone(&rounds));
        handles.push(spawn(&sh, format!("reader {r}"), move || {
            reader(&db, &sh2, r, &rounds)
        }));
    }
    {
        let (db, sh2, counts) = (db.clone(), Arc::clone(&sh), Arc::clone(&counts));
        handles.push(spawn(&sh, "churn".into(), move || {
            churn(&db, &sh2, &counts)
        }));
    }
    drop(done_tx);
    // A hang (a stall that never clears, a deadlock) is a failure too.
    let deadline = Instant::now() + Duration::from_secs(300);
    for _ in 0..writers {
        let left = deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            sh.stop.store(true, Ordering::SeqCst);
            panic!(
                "seed {seed}: writers did not finish within 300 s (acked {:?}); failure so far: {:?}",
                sh.acked_now(),
                sh.failure.lock().unwrap()
            );
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    if let Some(f) = sh.failure.lock().unwrap().take() {
        panic!("{f}\n(reproduce: SHALE_SEED={seed} cargo test -p shale --test concurrent_model -- --nocapture; the interleaving is not reproducible, rerun a few times)");
    }

    let want = final_view(&sh, batches);
    check_final(&db, &sh, &want, "end of run");
    let delete_only = db.property("shale.delete-only-bytes").unwrap_or_default();
    db.close()
        .unwrap_or_else(|e| panic!("seed {seed}: close: {e}"));
    let db =
        Db::open(dir.path(), opts.clone()).unwrap_or_else(|e| panic!("seed {seed}: reopen: {e}"));
    check_final(&db, &sh, &want, "after reopen");
    db.compact_range(None, None).unwrap();
    check_final(&db, &sh, &want, "after reopen and full compaction");
    db.close().unwrap();
    let ranges = *sh.range_counts.lock().unwrap();
    eprintln!(
        "seed {seed}: ok in {:.1} s: {} reader rounds, {} flushes, {} compact_range, {} wait_for_compaction, \
         {} range deletions (pool sweeps moved {}), {delete_only} bytes removed by delete-only compaction",
        started.elapsed().as_secs_f64(),
        rounds.load(Ordering::SeqCst),
        counts.flushes.load(Ordering::SeqCst),
        counts.compact_ranges.load(Ordering::SeqCst),
        counts.waits.load(Ordering::SeqCst),
        ranges.range_deletions,
        ranges.swept
    );
}

/// CI size: seeds x batches per writer (about 20 s in the test profile on
/// two shared cores; see docs/RELIABILITY.md).
const CI_SEEDS: u64 = 8;
const CI_BATCHES: u64 = 2500;

#[test]
fn concurrent_model_seeds() {
    if let Ok(s) = std::env::var("SHALE_SEED") {
        run_seed(s.parse().expect("SHALE_SEED must be a u64"), CI_BATCHES);
        return;
    }
    for seed in 0xc0_0000..0xc0_0000 + CI_SEEDS {
        run_seed(seed, CI_BATCHES);
    }
}

#[test]
#[ignore = "long: 50 seeds x 3000 batches per writer"]
fn concurrent_model_many_seeds() {
    let base = common::seed_base();
    for seed in base..base + 50 {
        run_seed(seed, 3000);
    }
}
