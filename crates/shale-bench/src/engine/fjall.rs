//! The fjall adapter (cargo feature `fjall`): one `fjall::Database` at
//! `--db` with a keyspace named "default" (plus, with
//! `--num_column_families=N`, keyspaces `column_family_name_000001..`: fjall's
//! keyspaces are its column families; all get the options of the flags),
//! the `Engine` trait mapped onto it, and the flag mapping. Flags fjall cannot honour are rejected when
//! set to a non-default value (fjall has no WAL-off write, no stall knobs,
//! a fixed level count, L1 size derived as `target size × L0 trigger`, ...).
//!
//! fjall has no raw cursor: `FjallIter` opens a new range iterator at every
//! seek and whenever the direction changes, and steps it in one direction
//! only (`next` or `next_back`), copying the current entry out.
//!
//! fjall 3.1 has no DeleteRange (`drop_range` of its tree only drops whole
//! tables): range deletions are refused before anything runs
//! (`benchmarks::range_del::check`), and `delete_range` keeps the trait's
//! failing default.
//!
//! Thread-safety: `fjall::Database` and `fjall::Keyspace` are `Send + Sync`
//! handles; the engine adds no state of its own.

use std::ops::Bound;
use std::path::Path;
use std::time::{Duration, Instant};

use fjall::compaction::Leveled;
use fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
    RestartIntervalPolicy,
};
use fjall::{
    CompressionType, Database, Keyspace, KeyspaceCreateOptions, KvSeparationOptions, PersistMode,
};

use super::{Batch, BatchOp, CreateTiming, Engine, EngineIter, IterOpts, Report, WriteOpts};
use crate::error::{bail, Error, Result};
use crate::flags::{Category, Flags};

/// The fjall release this adapter is built against (Cargo.lock).
const FJALL_VERSION: &str = "3.1.13";

/// fjall's fixed number of levels.
const FJALL_LEVELS: usize = 7;

fn err(e: fjall::Error) -> Error {
    Error(format!("fjall: {e}"))
}

/// Removes the fjall DB at `path`: fjall has no destroy call, so this
/// removes the entries of its layout (`version`, `lock`, `keyspaces/`,
/// `N.jnl`) while holding its lock, keeping anything else (see
/// `super::destroy`). A non-empty directory without fjall's `version`
/// marker is refused.
pub fn destroy(path: &Path) -> Result<()> {
    let Some(names) = super::destroy::entries(path)? else {
        return Ok(());
    };
    let marker = std::fs::read(path.join("version")).unwrap_or_default();
    if !names.is_empty() && !marker.starts_with(b"FJL") {
        return Err(super::destroy::not_a_db(path, "fjall", &names));
    }
    let _lock = if names.iter().any(|n| n == "lock") {
        match super::destroy::try_flock(&path.join("lock"))? {
            Some(f) => Some(f),
            None => return Err(super::destroy::in_use(path, "fjall")),
        }
    } else {
        None
    };
    let owned = |n: &str| {
        matches!(n, "version" | "lock" | "keyspaces")
            || n.strip_suffix(".jnl")
                .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
    };
    super::destroy::remove_owned(path, &names, owned)
}

fn compression(t: &str) -> Result<CompressionType> {
    Ok(match t.to_ascii_lowercase().as_str() {
        "none" => CompressionType::None,
        "lz4" => CompressionType::Lz4,
        other => bail!(
            "--compression_type={other} is not supported by --engine=fjall (none or lz4; note db_bench's \
             default is snappy, pass --compression_type explicitly)"
        ),
    })
}

/// Flags fjall has no equivalent for: accepted only at their default value.
const UNSUPPORTED: &[&str] = &[
    "block_size_deviation",
    "disable_auto_compactions",
    "compaction_style",
    "fifo_compaction_max_table_files_size_mb",
    "fifo_compaction_allow_compaction",
    "fifo_compaction_ttl",
    "bytes_per_sync",
    "wal_bytes_per_sync",
    "recycle_log_file_num",
    "wal_ttl_seconds",
    "wal_size_limit_MB",
    "max_write_buffer_number",
    "allow_concurrent_memtable_write",
    "memtable_bloom_size_ratio",
    "memtable_whole_key_filtering",
    "level0_slowdown_writes_trigger",
    "level0_stop_writes_trigger",
    "level_compaction_dynamic_level_bytes",
    "target_file_size_multiplier",
    "num_levels",
    "cache_type",
    "cache_numshardbits",
    "cache_index_and_filter_blocks",
    "db_write_buffer_size",
    "memory_budget",
    "advise_random_on_open",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "rate_limiter_bytes_per_sec",
    "rate_limiter_auto_tuned",
    "max_compaction_bytes",
    "subcompactions",
    "soft_pending_compaction_bytes_limit",
    "hard_pending_compaction_bytes_limit",
    "delayed_write_rate",
    "compaction_readahead_size",
    "readahead_size",
    "max_auto_readahead_size",
    "paranoid_checks",
    "wal_recovery_mode",
    "open_files",
    "merge_operator",
    "compaction_style",
    "universal_size_ratio",
    "universal_min_merge_width",
    "universal_max_merge_width",
    "universal_max_size_amplification_percent",
    "universal_compression_size_percent",
    "universal_allow_trivial_move",
    "universal_incremental",
    // No prefix extractor or prefix filters.
    "prefix_size",
    "prefix_same_as_start",
    "total_order_seek",
    // Key-value separation: blobs are separated by flushes only, with no
    // compaction readahead and no cache prepopulation (see `kv_separation`).
    "blob_compaction_readahead_size",
    "blob_file_starting_level",
    "prepopulate_blob_cache",
];

/// db_bench's blob flags as fjall's key-value separation
/// (`KeyspaceCreateOptions::with_kv_separation`, lsm-tree's
/// `KvSeparationOptions`): `--enable_blob_files=1` turns it on,
/// `--min_blob_size` is `separation_threshold` (both move values of at
/// least that size), `--blob_file_size` is `file_target_size`,
/// `--blob_compression_type` is `compression` (none or lz4). fjall caches
/// blobs in its block cache (a blob cache of its own is refused).
///
/// Garbage collection: fjall's rule is not RocksDB's. A compaction
/// rewrites, among the blob files its input tables reference, those whose
/// garbage share reaches `staleness_threshold`, oldest first, at most the
/// `age_cutoff` share of them; RocksDB relocates the oldest
/// `age_cutoff` share of all blob files whatever their garbage, and forces
/// compactions past `force_threshold`. So `--enable_blob_garbage_collection=1`
/// is refused, and its default 0 maps to `age_cutoff(0.0)`: no blob file
/// is rewritten (files that are entirely garbage are still dropped, as in
/// RocksDB).
fn kv_separation(f: &Flags) -> Result<Option<KvSeparationOptions>> {
    if f.use_blob_cache && !f.use_shared_block_and_blob_cache {
        bail!(
            "--use_shared_block_and_blob_cache=0 is not supported by --engine=fjall (blobs always share \
             its block cache)"
        );
    }
    if f.enable_blob_garbage_collection {
        bail!(
            "--enable_blob_garbage_collection=1 is not supported by --engine=fjall: fjall's blob garbage \
             collection rewrites the blob files referenced by a compaction's tables once their garbage \
             share reaches a staleness threshold, not RocksDB's oldest age_cutoff share of all blob files"
        );
    }
    if !f.enable_blob_files {
        return Ok(None);
    }
    let compression = match f.blob_compression_type.to_ascii_lowercase().as_str() {
        "none" => CompressionType::None,
        "lz4" => CompressionType::Lz4,
        other => bail!(
            "--blob_compression_type={other} is not supported by --engine=fjall (none or lz4)"
        ),
    };
    let Ok(threshold) = u32::try_from(f.min_blob_size) else {
        bail!(
            "--min_blob_size={} is out of range for --engine=fjall (at most {})",
            f.min_blob_size,
            u32::MAX
        );
    };
    Ok(Some(
        KvSeparationOptions::default()
            .compression(compression)
            .separation_threshold(threshold)
            .file_target_size(f.blob_file_size.max(1) as u64)
            .age_cutoff(0.0),
    ))
}

/// Everything needed to open the DB, derived from the flags.
struct Plan {
    cache_size: u64,
    workers: usize,
    manual_persist: bool,
    keyspace: KeyspaceCreateOptions,
}

fn u8_flag(name: &str, v: i64, min: i64) -> Result<u8> {
    match u8::try_from(v) {
        Ok(x) if v >= min => Ok(x),
        _ => bail!("--{name}={v} is out of range for --engine=fjall ({min}..=255)"),
    }
}

fn plan(f: &Flags) -> Result<Plan> {
    f.reject_category(Category::Rocks, "fjall")?;
    f.reject_category(Category::Shale, "fjall")?;
    for name in UNSUPPORTED {
        if !f.has_default(name) {
            bail!("--{name} is not supported by --engine=fjall (fjall has no such option)");
        }
    }
    if f.statistics {
        bail!("--statistics is not supported by --engine=fjall");
    }
    if f.disable_wal {
        bail!("--disable_wal is not supported by --engine=fjall (every fjall write goes to its journal)");
    }
    let l0 = u8_flag(
        "level0_file_num_compaction_trigger",
        f.level0_file_num_compaction_trigger,
        1,
    )?;
    if f.target_file_size_base <= 0 {
        bail!("--target_file_size_base must be positive");
    }
    // fjall sizes L1 as target_file_size × L0 trigger; accept the flag only
    // when it says the same.
    let l1 = f.target_file_size_base.saturating_mul(i64::from(l0));
    if f.max_bytes_for_level_base != l1 {
        bail!(
            "--max_bytes_for_level_base={} is not supported by --engine=fjall: fjall sizes L1 as \
             target_file_size_base x level0_file_num_compaction_trigger = {l1}",
            f.max_bytes_for_level_base
        );
    }
    if f.max_bytes_for_level_multiplier.is_nan() || f.max_bytes_for_level_multiplier <= 0.0 {
        bail!("--max_bytes_for_level_multiplier must be positive");
    }
    if f.write_buffer_size <= 0 {
        bail!("--write_buffer_size must be positive");
    }
    if f.cache_size <= 0 {
        bail!("--cache_size<=0 (no block cache) is not supported by --engine=fjall");
    }
    if !(1024..=(1 << 20)).contains(&f.block_size) {
        bail!(
            "--block_size={} is not supported by --engine=fjall (1 KiB..=1 MiB)",
            f.block_size
        );
    }
    if f.max_background_jobs < 1 {
        bail!("--max_background_jobs must be at least 1 for --engine=fjall");
    }
    let restart = u8_flag("block_restart_interval", f.block_restart_interval, 1)?;
    let c = compression(&f.compression_type)?;
    let data_compression = if f.min_level_to_compress >= 0 {
        let k = (f.min_level_to_compress as usize).min(FJALL_LEVELS);
        let mut per = vec![CompressionType::None; k];
        per.resize(FJALL_LEVELS, c);
        CompressionPolicy::new(per)
    } else {
        CompressionPolicy::all(c)
    };
    let filter = if f.bloom_bits > 0.0 {
        FilterPolicy::all(FilterPolicyEntry::Bloom(
            BloomConstructionPolicy::BitsPerKey(f.bloom_bits as f32),
        ))
    } else {
        FilterPolicy::disabled()
    };
    let strategy = Leveled::default()
        .with_l0_threshold(l0)
        .with_table_target_size(f.target_file_size_base as u64)
        .with_level_ratio_policy(vec![f.max_bytes_for_level_multiplier as f32]);
    let keyspace = KeyspaceCreateOptions::default()
        .max_memtable_size(f.write_buffer_size as u64)
        .data_block_size_policy(BlockSizePolicy::all(f.block_size as u32))
        .data_block_restart_interval_policy(RestartIntervalPolicy::all(restart))
        .data_block_compression_policy(data_compression)
        .filter_policy(filter)
        .manual_journal_persist(f.manual_wal_flush)
        .compaction_strategy(std::sync::Arc::new(strategy))
        .with_kv_separation(kv_separation(f)?);
    Ok(Plan {
        cache_size: f.cache_size as u64,
        workers: f.max_background_jobs as usize,
        manual_persist: f.manual_wal_flush,
        keyspace,
    })
}

/// Checks the flags without opening anything.
pub fn check_flags(f: &Flags) -> Result<()> {
    plan(f).map(|_| ())
}

/// An open fjall database with its "default" keyspace and the keyspaces
/// of families 1..N.
pub struct FjallEngine {
    db: Database,
    ks: Keyspace,
    others: Vec<Keyspace>,
}

fn open_db(p: &Plan, path: &Path) -> Result<Database> {
    Database::builder(path)
        .cache_size(p.cache_size)
        .worker_threads(p.workers)
        .manual_journal_persist(p.manual_persist)
        .open()
        .map_err(err)
}

/// See [`super::create_families`]. fjall has no batch call: keyspaces are
/// always created one by one (the result line says so).
pub fn create_families(
    f: &Flags,
    path: &Path,
    names: &[String],
    _batched: bool,
) -> Result<CreateTiming> {
    let p = plan(f)?;
    let db = open_db(&p, path)?;
    let opts = p.keyspace.clone();
    db.keyspace("default", || opts).map_err(err)?;
    let t = Instant::now();
    for name in names {
        if db.keyspace_exists(name) {
            bail!("fjall: keyspace {name} already exists");
        }
        let opts = p.keyspace.clone();
        db.keyspace(name, move || opts).map_err(err)?;
    }
    let secs = t.elapsed().as_secs_f64();
    db.persist(PersistMode::SyncAll).map_err(err)?;
    drop(db);
    Ok(CreateTiming {
        secs,
        how: "one Database::keyspace call each (fjall has no batch call)",
    })
}

impl FjallEngine {
    /// Opens (creating if missing) the DB at `path` with
    /// `--num_column_families` keyspaces.
    pub fn open(f: &Flags, path: &Path) -> Result<FjallEngine> {
        let p = plan(f)?;
        let db = open_db(&p, path)?;
        let opts = p.keyspace.clone();
        let ks = db.keyspace("default", move || opts).map_err(err)?;
        let mut others = Vec::new();
        for name in super::cf_names(f.num_column_families.max(1) as usize)
            .iter()
            .skip(1)
        {
            let opts = p.keyspace.clone();
            others.push(db.keyspace(name, move || opts).map_err(err)?);
        }
        Ok(FjallEngine { db, ks, others })
    }

    /// The keyspace of family `cf`.
    #[inline]
    fn part(&self, cf: usize) -> &Keyspace {
        if cf == 0 {
            &self.ks
        } else {
            &self.others[cf - 1]
        }
    }

    fn after_write(&self, o: &WriteOpts) -> Result<()> {
        if o.disable_wal {
            bail!("fjall: writes without the journal are not supported");
        }
        if o.sync {
            self.db.persist(PersistMode::SyncData).map_err(err)?;
        }
        Ok(())
    }
}

impl Engine for FjallEngine {
    fn name(&self) -> &'static str {
        "fjall"
    }

    fn version(&self) -> String {
        FJALL_VERSION.to_string()
    }

    fn num_cfs(&self) -> usize {
        self.others.len() + 1
    }

    fn put(&self, cf: usize, key: &[u8], value: &[u8], o: &WriteOpts) -> Result<()> {
        if o.disable_wal {
            bail!("fjall: writes without the journal are not supported");
        }
        self.part(cf).insert(key, value).map_err(err)?;
        self.after_write(o)
    }

    fn write(&self, batch: &Batch, o: &WriteOpts) -> Result<()> {
        if o.disable_wal {
            bail!("fjall: writes without the journal are not supported");
        }
        let mut b = self.db.batch();
        if o.sync {
            b = b.durability(Some(PersistMode::SyncData));
        }
        for op in batch.iter() {
            match op {
                BatchOp::Put(cf, k, v) => b.insert(self.part(cf), k, v),
                BatchOp::Delete(cf, k) => b.remove(self.part(cf), k),
                BatchOp::DeleteRange(..) => {
                    bail!("fjall: no DeleteRange (fjall {FJALL_VERSION} has no range deletion)")
                }
            }
        }
        b.commit().map_err(err)
    }

    fn delete(&self, cf: usize, key: &[u8], o: &WriteOpts) -> Result<()> {
        if o.disable_wal {
            bail!("fjall: writes without the journal are not supported");
        }
        self.part(cf).remove(key).map_err(err)?;
        self.after_write(o)
    }

    fn get(
        &self,
        cf: usize,
        key: &[u8],
        out: &mut Vec<u8>,
        _verify_checksums: bool,
    ) -> Result<bool> {
        Ok(super::copy_found(self.part(cf).get(key).map_err(err)?, out))
    }

    fn multi_get(
        &self,
        cf: usize,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<()> {
        let ks = self.part(cf);
        for (i, k) in keys.iter().enumerate() {
            if let Some(v) = ks.get(k).map_err(err)? {
                found(i, &v);
            }
        }
        Ok(())
    }

    fn new_iterator(&self, cf: usize, opts: &IterOpts) -> Result<Box<dyn EngineIter + '_>> {
        Ok(Box::new(FjallIter {
            ks: self.part(cf),
            lower: opts.lower.clone(),
            upper: opts.upper.clone(),
            iter: None,
            forward: true,
            valid: false,
            key: Vec::new(),
            value: Vec::new(),
            error: None,
        }))
    }

    fn flush(&self) -> Result<()> {
        self.ks.rotate_memtable_and_wait().map_err(err)
    }

    /// Flushes the memtable first (as RocksDB's CompactRange does); fjall's
    /// major compaction has no range: the whole keyspace is compacted
    /// whatever `start` / `end` say.
    fn compact_range(&self, _start: Option<&[u8]>, _end: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        self.ks.major_compact().map_err(err)
    }

    /// fjall has no "wait for compaction" call: polls its counters (queued
    /// flushes, sealed memtables, running compactions) until all are zero
    /// for several consecutive polls. A compaction fjall has decided on but
    /// not yet started between two polls can be missed.
    fn wait_for_compaction(&self) -> Result<()> {
        const POLL: Duration = Duration::from_millis(20);
        const QUIET_POLLS: u32 = 10;
        let deadline = Instant::now() + Duration::from_secs(3600);
        let mut quiet = 0;
        while quiet < QUIET_POLLS {
            if Instant::now() > deadline {
                bail!("fjall: compactions still running after an hour");
            }
            let busy = self.db.outstanding_flushes() > 0
                || self.ks.sealed_memtable_count() > 0
                || self.db.active_compactions() > 0;
            quiet = if busy { 0 } else { quiet + 1 };
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    fn property(&self, _name: &str) -> Option<String> {
        None
    }

    fn report(&self, which: Report) -> Option<String> {
        match which {
            Report::Stats | Report::LevelStats => Some(format!(
                "fjall: tables {} (L0 {}), disk {} bytes, journals {}, compactions completed {}, \
                 time compacting {:.3} s\n",
                self.ks.table_count(),
                self.ks.l0_table_count(),
                self.ks.disk_space(),
                self.db.journal_count(),
                self.db.compactions_completed(),
                self.db.time_compacting().as_secs_f64()
            )),
            Report::SsTables | Report::Bloom => None,
        }
    }

    fn stall_micros(&self) -> Option<u64> {
        None
    }

    fn close(&self) -> Result<()> {
        self.db.persist(PersistMode::SyncAll).map_err(err)
    }
}

/// A cursor built from fjall range iterators (see the module header).
struct FjallIter<'a> {
    ks: &'a Keyspace,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    iter: Option<fjall::Iter>,
    /// Direction `iter` is stepped in.
    forward: bool,
    valid: bool,
    key: Vec<u8>,
    value: Vec<u8>,
    error: Option<String>,
}

impl FjallIter<'_> {
    fn lower_bound(&self) -> Bound<Vec<u8>> {
        self.lower.clone().map_or(Bound::Unbounded, Bound::Included)
    }

    fn upper_bound(&self) -> Bound<Vec<u8>> {
        self.upper.clone().map_or(Bound::Unbounded, Bound::Excluded)
    }

    /// Opens `range` and positions on its first (`forward`) or last entry.
    fn open(&mut self, lo: Bound<Vec<u8>>, hi: Bound<Vec<u8>>, forward: bool) {
        self.error = None;
        // An empty or inverted range: nothing to return.
        let empty = match (&lo, &hi) {
            (Bound::Included(a), Bound::Excluded(b)) | (Bound::Excluded(a), Bound::Included(b)) => {
                a >= b
            }
            (Bound::Excluded(a), Bound::Excluded(b)) => a >= b,
            (Bound::Included(a), Bound::Included(b)) => a > b,
            _ => false,
        };
        if empty {
            self.iter = None;
            self.valid = false;
            return;
        }
        self.iter = Some(self.ks.range((lo, hi)));
        self.forward = forward;
        self.step();
    }

    /// Pulls the next entry of `iter` in its direction.
    fn step(&mut self) {
        let item = match self.iter.as_mut() {
            Some(it) if self.forward => it.next(),
            Some(it) => it.next_back(),
            None => None,
        };
        match item.map(|g| g.into_inner()) {
            Some(Ok((k, v))) => {
                self.key.clear();
                self.key.extend_from_slice(&k);
                self.value.clear();
                self.value.extend_from_slice(&v);
                self.valid = true;
            }
            Some(Err(e)) => {
                self.error = Some(format!("fjall: {e}"));
                self.valid = false;
                self.iter = None;
            }
            None => {
                self.valid = false;
                self.iter = None;
            }
        }
    }
}

impl EngineIter for FjallIter<'_> {
    fn seek(&mut self, key: &[u8]) {
        let lo = match &self.lower {
            Some(l) if l.as_slice() > key => l.clone(),
            _ => key.to_vec(),
        };
        let hi = self.upper_bound();
        self.open(Bound::Included(lo), hi, true);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        let hi = match &self.upper {
            Some(u) if u.as_slice() <= key => Bound::Excluded(u.clone()),
            _ => Bound::Included(key.to_vec()),
        };
        let lo = self.lower_bound();
        self.open(lo, hi, false);
    }

    fn seek_to_first(&mut self) {
        let (lo, hi) = (self.lower_bound(), self.upper_bound());
        self.open(lo, hi, true);
    }

    fn seek_to_last(&mut self) {
        let (lo, hi) = (self.lower_bound(), self.upper_bound());
        self.open(lo, hi, false);
    }

    fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.forward {
            self.step();
        } else {
            let lo = Bound::Excluded(self.key.clone());
            let hi = self.upper_bound();
            self.open(lo, hi, true);
        }
    }

    fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if self.forward {
            let lo = self.lower_bound();
            let hi = Bound::Excluded(self.key.clone());
            self.open(lo, hi, false);
        } else {
            self.step();
        }
    }

    fn valid(&self) -> bool {
        self.valid
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        &self.value
    }

    fn status(&self) -> Result<()> {
        match &self.error {
            Some(e) => Err(Error(e.clone())),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `destroy` keeps the contract of every engine's (issue 36, defect 1).
    #[test]
    fn destroy_keeps_what_is_not_the_dbs_and_refuses_a_db_in_use() {
        crate::engine::destroy::check_destroy_contract(
            "fjall",
            |dir: &Path| {
                let e = FjallEngine::open(&flags(&[]), dir).unwrap();
                e.put(0, b"k", b"v", &WriteOpts::default()).unwrap();
                e
            },
            destroy,
        );
    }

    fn flags(extra: &[&str]) -> Flags {
        let mut a = vec!["--engine=fjall", "--compression_type=none"];
        a.extend_from_slice(extra);
        Flags::parse(&a).unwrap()
    }

    #[test]
    fn rejects_what_fjall_cannot_do() {
        assert!(check_flags(&flags(&[])).is_ok());
        assert!(check_flags(&flags(&["--compression_type=lz4", "--bloom_bits=10"])).is_ok());
        assert!(check_flags(&Flags::parse(&["--engine=fjall"]).unwrap()).is_err()); // snappy
        assert!(check_flags(&flags(&["--disable_wal=1"])).is_err());
        assert!(check_flags(&flags(&["--num_levels=4"])).is_err());
        assert!(check_flags(&flags(&["--max_bytes_for_level_base=1000000"])).is_err());
        assert!(check_flags(&flags(&["--use_ribbon_filter=1"])).is_err());
        assert!(check_flags(&flags(&["--block_size=100"])).is_err());
        assert!(check_flags(&flags(&["--statistics=1"])).is_err());
        // fjall has no merge operator: the flag is refused, naming it.
        let e = check_flags(&flags(&["--merge_operator=uint64add"])).unwrap_err();
        assert!(e.0.contains("--merge_operator"), "{e}");
    }

    /// Blob flags with a fjall equivalent are mapped; the others refused,
    /// naming them.
    #[test]
    fn maps_blob_flags_to_kv_separation() {
        let f = flags(&[
            "--enable_blob_files=1",
            "--min_blob_size=100",
            "--blob_file_size=1048576",
            "--blob_compression_type=lz4",
        ]);
        let kv = kv_separation(&f).unwrap().unwrap();
        assert_eq!(kv.separation_threshold, 100);
        assert_eq!(kv.file_target_size, 1 << 20);
        assert_eq!(kv.compression, CompressionType::Lz4);
        assert_eq!(kv.age_cutoff, 0.0);
        assert!(kv_separation(&flags(&[])).unwrap().is_none());
        for (bad, name) in [
            (
                "--enable_blob_garbage_collection=1",
                "enable_blob_garbage_collection",
            ),
            ("--blob_compression_type=zstd", "blob_compression_type"),
            ("--blob_file_starting_level=1", "blob_file_starting_level"),
            (
                "--blob_compaction_readahead_size=4096",
                "blob_compaction_readahead_size",
            ),
            (
                "--use_shared_block_and_blob_cache=0",
                "use_shared_block_and_blob_cache",
            ),
            ("--blob_cache_size=1048576", "blob_cache_size"),
        ] {
            let mut a = vec!["--enable_blob_files=1", "--use_blob_cache=1", bad];
            if bad.contains("blob_cache_size") {
                a.push("--use_shared_block_and_blob_cache=0");
            }
            let e = check_flags(&flags(&a)).unwrap_err();
            assert!(e.0.contains(name), "{bad}: {e}");
        }
    }

    /// `--num_column_families=3`: one keyspace per family; every call
    /// reaches the keyspace it names, and a reopen finds them.
    #[test]
    fn column_families_are_keyspaces() {
        let d = tempfile::tempdir().unwrap();
        let f = flags(&["--num_column_families=3"]);
        let e = FjallEngine::open(&f, d.path()).unwrap();
        assert_eq!(e.num_cfs(), 3);
        let w = WriteOpts::default();
        e.put(2, b"k2", b"v2", &w).unwrap();
        let mut b = Batch::default();
        b.put(1, b"k1", b"v1");
        b.put(0, b"k0", b"v0");
        e.write(&b, &w).unwrap();
        let mut out = Vec::new();
        for (cf, key) in [(0, b"k0"), (1, b"k1"), (2, b"k2")] {
            for other in 0..3 {
                assert_eq!(e.get(other, key, &mut out, true).unwrap(), other == cf);
            }
        }
        let mut it = e.new_iterator(1, &IterOpts::default()).unwrap();
        it.seek_to_first();
        assert_eq!(it.key(), b"k1");
        it.next();
        assert!(!it.valid());
        drop(it);
        e.close().unwrap();
        drop(e);
        let e = FjallEngine::open(&f, d.path()).unwrap();
        assert!(e.get(2, b"k2", &mut out, true).unwrap());
        assert_eq!(out, b"v2");
        assert!(e.db.keyspace_exists("column_family_name_000002"));
        e.close().unwrap();
        drop(e);
        let other = d.path().join("other");
        let names = vec!["a".to_string(), "b".to_string()];
        create_families(&f, &other, &names, true).unwrap();
        let e = FjallEngine::open(&flags(&[]), &other).unwrap();
        assert!(e.db.keyspace_exists("b"));
    }

    #[test]
    fn round_trip_and_iteration() {
        let d = tempfile::tempdir().unwrap();
        let e = FjallEngine::open(&flags(&["--bloom_bits=10"]), d.path()).unwrap();
        let w = WriteOpts::default();
        for k in [b"a", b"b", b"c", b"d"] {
            e.put(0, k, k, &w).unwrap();
        }
        let mut b = Batch::default();
        b.put(0, b"e", b"5");
        b.delete(0, b"a");
        e.write(
            &b,
            &WriteOpts {
                sync: true,
                disable_wal: false,
            },
        )
        .unwrap();
        let mut out = Vec::new();
        assert!(!e.get(0, b"a", &mut out, true).unwrap());
        assert!(e.get(0, b"e", &mut out, true).unwrap());
        assert_eq!(out, b"5");
        e.flush().unwrap();
        e.compact_range(None, None).unwrap();
        e.wait_for_compaction().unwrap();
        let mut it = e.new_iterator(0, &IterOpts::default()).unwrap();
        it.seek_to_first();
        assert_eq!(it.key(), b"b");
        it.next();
        assert_eq!(it.key(), b"c");
        it.prev();
        assert_eq!(it.key(), b"b");
        it.prev();
        assert!(!it.valid());
        it.seek_for_prev(b"cc");
        assert_eq!(it.key(), b"c");
        it.next();
        assert_eq!(it.key(), b"d");
        it.seek_to_last();
        assert_eq!(it.key(), b"e");
        it.status().unwrap();
        drop(it);
        let opts = IterOpts {
            lower: Some(b"c".to_vec()),
            upper: Some(b"e".to_vec()),
            ..IterOpts::default()
        };
        let mut it = e.new_iterator(0, &opts).unwrap();
        it.seek(b"a");
        assert_eq!(it.key(), b"c");
        it.seek_to_last();
        assert_eq!(it.key(), b"d");
        it.seek_for_prev(b"z");
        assert_eq!(it.key(), b"d");
        it.next();
        assert!(!it.valid());
        drop(it);
        e.close().unwrap();
    }
}
