//! `shale-ops-bench`: the operations of issue 39 measured side by side with
//! RocksDB (built with `--features rocksdb`; Shale alone otherwise), in one
//! process, alternating the engines (A B A B) and printing medians and
//! ratios as a Markdown table:
//!
//! - `bulkload`: `--num` sorted keys (16 bytes) with 100-byte incompressible
//!   values written by `SstFileWriter` into 8 files and ingested (moved);
//!   time to write, to ingest, in all; bytes in the DB over raw bytes.
//!   Shale's `put` of the same keys in random order (one round) beside it.
//! - `checkpoint`: a DB prefilled with `--num` keys, a writer thread doing
//!   single puts of random keys throughout; a checkpoint (flush first) per
//!   round: its time, the bytes it copied (files with one link) and
//!   linked, and the writer's p99.9 put latency during the checkpoint
//!   against the same length of time just before it.
//! - `backup`: a full backup of the prefilled DB, 10% of the keys
//!   overwritten and flushed, an incremental backup (bytes it added), and
//!   a restore of it: times and bytes, "written" counting files with one
//!   link (copies) and "size" every file (Shale's backup on the DB's file
//!   system hard-links the tables).
//! - `secondary`: a secondary instance caught up after `--mib` MiB of
//!   primary writes: wall time and the calling thread's CPU time.
//!
//! Usage: `shale-ops-bench --bench=bulkload|checkpoint|backup|secondary
//! [--num=N] [--mib=M] [--rounds=R] [--dir=D]`. Not a timed test: figures
//! go in docs/perf/operations.md with the command.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Res<T> = Result<T, String>;

const VALUE: usize = 100;
const SST_FILES: u64 = 8;

struct Args {
    bench: String,
    num: u64,
    mib: u64,
    rounds: usize,
    dir: PathBuf,
}

fn args() -> Res<Args> {
    let mut a = Args {
        bench: String::new(),
        num: 1_000_000,
        mib: 64,
        rounds: 3,
        dir: std::env::temp_dir().join("shale-ops-bench"),
    };
    for arg in std::env::args().skip(1) {
        let (k, v) = arg
            .split_once('=')
            .ok_or_else(|| format!("{arg}: expected --name=value"))?;
        let n = || v.parse::<u64>().map_err(|e| format!("{arg}: {e}"));
        match k {
            "--bench" => a.bench = v.to_string(),
            "--num" => a.num = n()?,
            "--mib" => a.mib = n()?,
            "--rounds" => a.rounds = n()? as usize,
            "--dir" => a.dir = PathBuf::from(v),
            _ => return Err(format!("unknown flag {k}")),
        }
    }
    Ok(a)
}

fn key(i: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k.copy_from_slice(format!("{i:016}").as_bytes());
    k
}

/// An incompressible value for key `i` (xorshift bytes).
fn value(i: u64, salt: u64, out: &mut [u8; VALUE]) {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt ^ 0xD1B5_4A32_D192_ED03;
    for chunk in out.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
}

/// Bytes of the files under `dir` (recursively), split into files with
/// one link (written) and with more (hard links to another copy).
fn dir_bytes(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let (mut own, mut linked) = (0, 0);
    let Ok(rd) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    for e in rd.flatten() {
        let Ok(m) = e.metadata() else { continue };
        if m.is_dir() {
            let (o, l) = dir_bytes(&e.path());
            own += o;
            linked += l;
        } else if m.nlink() > 1 {
            linked += m.len();
        } else {
            own += m.len();
        }
    }
    (own, linked)
}

fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime writes the timespec it is given and reads
    // nothing else; CLOCK_THREAD_CPUTIME_ID exists on every Linux.
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn fresh(dir: &Path) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.parent().unwrap_or(dir)).ok();
    dir.to_path_buf()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One engine's operations.
trait Ops {
    fn name(&self) -> &'static str;
    /// Writes `files` external tables of the sorted keys and ingests them
    /// into a fresh DB at `db`: (write time, ingest time).
    fn bulkload(&self, db: &Path, tmp: &Path, num: u64) -> Res<(Duration, Duration)>;
    /// Opens (creating) a DB at `dir` as a shared handle.
    fn open(&self, dir: &Path) -> Res<Box<dyn Handle>>;
}

/// An open DB.
trait Handle: Send + Sync {
    fn put(&self, k: &[u8], v: &[u8]) -> Res<()>;
    /// Puts `keys` in batches of 1000 (prefill).
    fn fill(&self, keys: &mut dyn Iterator<Item = u64>, salt: u64) -> Res<()>;
    fn flush(&self) -> Res<()>;
    fn checkpoint(&self, to: &Path) -> Res<()>;
    /// Backs up into `dir` (flushed first); returns nothing.
    fn backup(&self, dir: &Path) -> Res<()>;
    /// Restores the latest backup of `dir` into `to`.
    fn restore(&self, dir: &Path, to: &Path) -> Res<()>;
    /// Opens a secondary of this DB at `sec`; returns its catch-up call.
    fn secondary(&self, sec: &Path) -> Res<Box<dyn Fn() -> Res<()>>>;
}

mod shale_ops {
    use super::*;
    use shale::{Db, IngestOptions, Options, SstFileWriter, WriteBatch, WriteOptions};

    fn opts() -> Options {
        let mut o = Options {
            create_if_missing: true,
            ..Options::default()
        };
        o.cf.compression_per_level = vec![shale::Compression::None];
        o.cf.bloom_bits_per_key = 10;
        o
    }

    pub struct Engine;

    impl Ops for Engine {
        fn name(&self) -> &'static str {
            "shale"
        }

        fn bulkload(&self, db: &Path, tmp: &Path, num: u64) -> Res<(Duration, Duration)> {
            let o = opts();
            std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
            let t = Instant::now();
            let mut files = Vec::new();
            let per = num.div_ceil(SST_FILES);
            let mut v = [0u8; VALUE];
            for f in 0..SST_FILES {
                let path = tmp.join(format!("s{f}.sst"));
                let mut w = SstFileWriter::new(&o);
                w.open(&path).map_err(|e| e.to_string())?;
                for i in f * per..((f + 1) * per).min(num) {
                    value(i, 0, &mut v);
                    w.put(&key(i), &v).map_err(|e| e.to_string())?;
                }
                w.finish().map_err(|e| e.to_string())?;
                files.push(path);
            }
            let written = t.elapsed();
            let d = Db::open(db, o).map_err(|e| e.to_string())?;
            let t = Instant::now();
            d.ingest_external_file(
                &files,
                &IngestOptions {
                    move_files: true,
                    ..IngestOptions::default()
                },
            )
            .map_err(|e| e.to_string())?;
            let ingested = t.elapsed();
            d.close().map_err(|e| e.to_string())?;
            Ok((written, ingested))
        }

        fn open(&self, dir: &Path) -> Res<Box<dyn Handle>> {
            Ok(Box::new(H(
                Db::open(dir, opts()).map_err(|e| e.to_string())?
            )))
        }
    }

    struct H(Db);

    impl Handle for H {
        fn put(&self, k: &[u8], v: &[u8]) -> Res<()> {
            self.0.put(k, v).map_err(|e| e.to_string())
        }

        fn fill(&self, keys: &mut dyn Iterator<Item = u64>, salt: u64) -> Res<()> {
            let mut v = [0u8; VALUE];
            loop {
                let mut b = WriteBatch::new();
                for i in (&mut *keys).take(1000) {
                    value(i, salt, &mut v);
                    b.put(&key(i), &v);
                }
                if b.is_empty() {
                    return Ok(());
                }
                self.0
                    .write(b, &WriteOptions::default())
                    .map_err(|e| e.to_string())?;
            }
        }

        fn flush(&self) -> Res<()> {
            self.0.flush().map_err(|e| e.to_string())
        }

        fn checkpoint(&self, to: &Path) -> Res<()> {
            self.0.checkpoint(to).map(|_| ()).map_err(|e| e.to_string())
        }

        fn backup(&self, dir: &Path) -> Res<()> {
            self.0.flush().map_err(|e| e.to_string())?;
            let e = shale::BackupEngine::open(dir, shale::fs::default_fs())
                .map_err(|e| e.to_string())?;
            e.create_backup(&self.0)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }

        fn restore(&self, dir: &Path, to: &Path) -> Res<()> {
            let e = shale::BackupEngine::open_read_only(dir, shale::fs::default_fs())
                .map_err(|e| e.to_string())?;
            let id = e.list().map_err(|e| e.to_string())?.last().map(|b| b.id);
            e.restore(id.ok_or("no backup")?, to)
                .map_err(|e| e.to_string())
        }

        fn secondary(&self, sec: &Path) -> Res<Box<dyn Fn() -> Res<()>>> {
            let s = Db::open_secondary(self.0.path(), sec, opts()).map_err(|e| e.to_string())?;
            Ok(Box::new(move || loop {
                match s.try_catch_up_with_primary() {
                    Err(shale::Error::TryAgain(_)) => continue,
                    r => return r.map_err(|e| e.to_string()),
                }
            }))
        }
    }
}

#[cfg(feature = "rocksdb")]
mod rocks_ops {
    use super::*;
    use rocksdb::{
        backup::{BackupEngine, BackupEngineOptions, RestoreOptions},
        checkpoint::Checkpoint,
        BlockBasedOptions, DBCompressionType, Env, IngestExternalFileOptions, Options,
        SstFileWriter, WriteBatch, DB,
    };

    fn opts() -> Options {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_compression_type(DBCompressionType::None);
        let mut t = BlockBasedOptions::default();
        t.set_bloom_filter(10.0, false);
        o.set_block_based_table_factory(&t);
        o
    }

    fn e(e: rocksdb::Error) -> String {
        e.to_string()
    }

    pub struct Engine;

    impl Ops for Engine {
        fn name(&self) -> &'static str {
            "rocksdb"
        }

        fn bulkload(&self, db: &Path, tmp: &Path, num: u64) -> Res<(Duration, Duration)> {
            let o = opts();
            std::fs::create_dir_all(tmp).map_err(|e| e.to_string())?;
            let t = Instant::now();
            let mut files = Vec::new();
            let per = num.div_ceil(SST_FILES);
            let mut v = [0u8; VALUE];
            for f in 0..SST_FILES {
                let path = tmp.join(format!("r{f}.sst"));
                let mut w = SstFileWriter::create(&o);
                w.open(&path).map_err(e)?;
                for i in f * per..((f + 1) * per).min(num) {
                    value(i, 0, &mut v);
                    w.put(key(i), v).map_err(e)?;
                }
                w.finish().map_err(e)?;
                files.push(path);
            }
            let written = t.elapsed();
            let d = DB::open(&o, db).map_err(e)?;
            let t = Instant::now();
            let mut io = IngestExternalFileOptions::default();
            io.set_move_files(true);
            d.ingest_external_file_opts(&io, files).map_err(e)?;
            let ingested = t.elapsed();
            drop(d);
            Ok((written, ingested))
        }

        fn open(&self, dir: &Path) -> Res<Box<dyn Handle>> {
            Ok(Box::new(H(DB::open(&opts(), dir).map_err(e)?)))
        }
    }

    struct H(DB);

    impl Handle for H {
        fn put(&self, k: &[u8], v: &[u8]) -> Res<()> {
            self.0.put(k, v).map_err(e)
        }

        fn fill(&self, keys: &mut dyn Iterator<Item = u64>, salt: u64) -> Res<()> {
            let mut v = [0u8; VALUE];
            loop {
                let mut b = WriteBatch::default();
                for i in (&mut *keys).take(1000) {
                    value(i, salt, &mut v);
                    b.put(key(i), v);
                }
                if b.is_empty() {
                    return Ok(());
                }
                self.0.write(b).map_err(e)?;
            }
        }

        fn flush(&self) -> Res<()> {
            self.0.flush().map_err(e)
        }

        fn checkpoint(&self, to: &Path) -> Res<()> {
            Checkpoint::new(&self.0)
                .and_then(|c| c.create_checkpoint(to))
                .map_err(e)
        }

        fn backup(&self, dir: &Path) -> Res<()> {
            let env = Env::new().map_err(e)?;
            let mut b =
                BackupEngine::open(&BackupEngineOptions::new(dir).map_err(e)?, &env).map_err(e)?;
            b.create_new_backup_flush(&self.0, true).map_err(e)
        }

        fn restore(&self, dir: &Path, to: &Path) -> Res<()> {
            let env = Env::new().map_err(e)?;
            let mut b =
                BackupEngine::open(&BackupEngineOptions::new(dir).map_err(e)?, &env).map_err(e)?;
            b.restore_from_latest_backup(to, to, &RestoreOptions::default())
                .map_err(e)
        }

        fn secondary(&self, sec: &Path) -> Res<Box<dyn Fn() -> Res<()>>> {
            let mut o = opts();
            o.set_max_open_files(-1);
            let s = DB::open_as_secondary(&o, self.0.path(), sec).map_err(e)?;
            Ok(Box::new(move || s.try_catch_up_with_primary().map_err(e)))
        }
    }
}

fn engines() -> Vec<Box<dyn Ops>> {
    #[allow(unused_mut)] // pushed to with the `rocksdb` feature
    let mut v: Vec<Box<dyn Ops>> = vec![Box::new(shale_ops::Engine)];
    #[cfg(feature = "rocksdb")]
    v.push(Box::new(rocks_ops::Engine));
    v
}

/// A deterministic shuffle of `0..n` (a multiplicative permutation).
fn shuffled(n: u64, salt: u64) -> impl Iterator<Item = u64> {
    let step = (2_654_435_761u64 % n.max(2)) | 1;
    let step = if gcd(step, n) == 1 { step } else { 1 };
    (0..n).map(move |i| (i.wrapping_mul(step) + salt) % n.max(1))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Rows of (metric, per-engine medians) printed as a table with the
/// ratio of the first engine's figure over each other's.
fn table(names: &[&str], rows: &[(String, Vec<f64>)]) {
    print!("| metric |");
    for n in names {
        print!(" {n} |");
    }
    println!();
    print!("|---|");
    for _ in names {
        print!("---|");
    }
    println!();
    for (m, vals) in rows {
        print!("| {m} |");
        for v in vals {
            print!(" {v:.3} |");
        }
        println!();
    }
}

fn main() {
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("shale-ops-bench: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&a) {
        eprintln!("shale-ops-bench: {e}");
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Res<()> {
    let es = engines();
    let names: Vec<&str> = es.iter().map(|e| e.name()).collect();
    std::fs::create_dir_all(&a.dir).map_err(|e| e.to_string())?;
    let mut samples: Vec<Vec<Vec<f64>>> = Vec::new(); // [engine][metric][round]
    let mut metric_names: Vec<String> = Vec::new();
    for (ei, _) in es.iter().enumerate() {
        samples.push(Vec::new());
        let _ = ei;
    }
    let mut record = |ei: usize, m: usize, name: &str, v: f64, names: &mut Vec<String>| {
        if names.len() <= m {
            names.push(name.to_string());
        }
        while samples[ei].len() <= m {
            samples[ei].push(Vec::new());
        }
        samples[ei][m].push(v);
    };
    let raw = (a.num * (16 + VALUE as u64)) as f64;
    match a.bench.as_str() {
        "bulkload" => {
            for round in 0..a.rounds {
                for (ei, e) in es.iter().enumerate() {
                    let db = fresh(&a.dir.join(format!("{}-bulk", e.name())));
                    let tmp = fresh(&a.dir.join(format!("{}-ssts", e.name())));
                    let (w, i) = e.bulkload(&db, &tmp, a.num)?;
                    let (own, _) = dir_bytes(&db);
                    eprintln!("round {round} {}: write {w:?} ingest {i:?}", e.name());
                    record(ei, 0, "write SSTs (s)", w.as_secs_f64(), &mut metric_names);
                    record(ei, 1, "ingest (s)", i.as_secs_f64(), &mut metric_names);
                    record(ei, 2, "total (s)", (w + i).as_secs_f64(), &mut metric_names);
                    record(ei, 3, "DB bytes / raw", own as f64 / raw, &mut metric_names);
                    let _ = std::fs::remove_dir_all(&db);
                    let _ = std::fs::remove_dir_all(&tmp);
                }
            }
            // Shale's put path, one round, random order.
            let db = fresh(&a.dir.join("shale-put"));
            let h = es[0].open(&db)?;
            let t = Instant::now();
            let mut v = [0u8; VALUE];
            for i in shuffled(a.num, 0) {
                value(i, 0, &mut v);
                h.put(&key(i), &v)?;
            }
            h.flush()?;
            println!(
                "shale put of the same keys in random order, flushed: {:.3} s; DB bytes / raw {:.3}",
                t.elapsed().as_secs_f64(),
                dir_bytes(&db).0 as f64 / raw
            );
            drop(h);
            let _ = std::fs::remove_dir_all(&db);
        }
        "checkpoint" => {
            let handles: Vec<Box<dyn Handle>> = es
                .iter()
                .map(|e| {
                    let dir = fresh(&a.dir.join(format!("{}-cp-db", e.name())));
                    let h = e.open(&dir)?;
                    h.fill(&mut shuffled(a.num, 1), 1)?;
                    Ok(h)
                })
                .collect::<Res<_>>()?;
            for round in 0..a.rounds {
                for (ei, h) in handles.iter().enumerate() {
                    let to = fresh(&a.dir.join(format!("{}-cp-{round}", names[ei])));
                    let (t, lat_before, lat_during) =
                        checkpoint_under_writes(h.as_ref(), &to, a.num)?;
                    let (own, linked) = dir_bytes(&to);
                    eprintln!("round {round} {}: checkpoint {t:?}", names[ei]);
                    record(ei, 0, "checkpoint (s)", t.as_secs_f64(), &mut metric_names);
                    record(
                        ei,
                        1,
                        "bytes copied (MB)",
                        own as f64 / 1e6,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        2,
                        "bytes linked (MB)",
                        linked as f64 / 1e6,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        3,
                        "put p99.9 before (µs)",
                        lat_before,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        4,
                        "put p99.9 during (µs)",
                        lat_during,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        5,
                        "p99.9 during / before",
                        lat_during / lat_before,
                        &mut metric_names,
                    );
                    let _ = std::fs::remove_dir_all(&to);
                }
            }
        }
        "backup" => {
            let handles: Vec<Box<dyn Handle>> = es
                .iter()
                .map(|e| {
                    let dir = fresh(&a.dir.join(format!("{}-bk-db", e.name())));
                    let h = e.open(&dir)?;
                    h.fill(&mut shuffled(a.num, 1), 1)?;
                    Ok(h)
                })
                .collect::<Res<_>>()?;
            for round in 0..a.rounds {
                for (ei, h) in handles.iter().enumerate() {
                    let bk = fresh(&a.dir.join(format!("{}-bk-{round}", names[ei])));
                    let t = Instant::now();
                    h.backup(&bk)?;
                    let full_t = t.elapsed();
                    let (full, full_linked) = dir_bytes(&bk);
                    // 10% of the keys overwritten.
                    h.fill(
                        &mut shuffled(a.num, 7).take((a.num / 10) as usize),
                        2 + round as u64,
                    )?;
                    let t = Instant::now();
                    h.backup(&bk)?;
                    let inc_t = t.elapsed();
                    let (own, linked) = dir_bytes(&bk);
                    let inc = own - full;
                    let inc_size = (own + linked) - (full + full_linked);
                    let to = fresh(&a.dir.join(format!("{}-bk-restored", names[ei])));
                    let t = Instant::now();
                    h.restore(&bk, &to)?;
                    let restore_t = t.elapsed();
                    eprintln!(
                        "round {round} {}: full {full_t:?} inc {inc_t:?} restore {restore_t:?}",
                        names[ei]
                    );
                    record(
                        ei,
                        0,
                        "full backup (s)",
                        full_t.as_secs_f64(),
                        &mut metric_names,
                    );
                    record(
                        ei,
                        1,
                        "full: written (MB)",
                        full as f64 / 1e6,
                        &mut metric_names,
                    );
                    let size = (full + full_linked) as f64 / 1e6;
                    record(ei, 2, "full: size (MB)", size, &mut metric_names);
                    record(
                        ei,
                        3,
                        "incremental (s)",
                        inc_t.as_secs_f64(),
                        &mut metric_names,
                    );
                    record(
                        ei,
                        4,
                        "incremental: written (MB)",
                        inc as f64 / 1e6,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        5,
                        "incremental: size (MB)",
                        inc_size as f64 / 1e6,
                        &mut metric_names,
                    );
                    record(
                        ei,
                        6,
                        "restore (s)",
                        restore_t.as_secs_f64(),
                        &mut metric_names,
                    );
                    let _ = std::fs::remove_dir_all(&to);
                    let _ = std::fs::remove_dir_all(&bk);
                }
            }
        }
        "secondary" => {
            let n = a.mib * (1 << 20) / (16 + VALUE as u64);
            for round in 0..a.rounds {
                for (ei, e) in es.iter().enumerate() {
                    let dir = fresh(&a.dir.join(format!("{}-sec-db", e.name())));
                    let sec = fresh(&a.dir.join(format!("{}-sec", e.name())));
                    let h = e.open(&dir)?;
                    h.put(b"start", b"1")?;
                    let catch_up = h.secondary(&sec)?;
                    catch_up()?;
                    h.fill(&mut shuffled(n, round as u64), 3)?;
                    let (t, c) = (Instant::now(), thread_cpu());
                    catch_up()?;
                    let (wall, cpu) = (t.elapsed(), thread_cpu() - c);
                    eprintln!("round {round} {}: catch-up {wall:?} cpu {cpu:?}", e.name());
                    record(
                        ei,
                        0,
                        "catch-up wall (s)",
                        wall.as_secs_f64(),
                        &mut metric_names,
                    );
                    record(
                        ei,
                        1,
                        "catch-up CPU (s)",
                        cpu.as_secs_f64(),
                        &mut metric_names,
                    );
                    drop(catch_up);
                    drop(h);
                    let _ = std::fs::remove_dir_all(&dir);
                    let _ = std::fs::remove_dir_all(&sec);
                }
            }
        }
        other => {
            return Err(format!(
                "--bench={other}: bulkload, checkpoint, backup or secondary"
            ))
        }
    }
    println!(
        "{} rounds, --num={} --mib={}; medians:",
        a.rounds, a.num, a.mib
    );
    let rows: Vec<(String, Vec<f64>)> = metric_names
        .iter()
        .enumerate()
        .map(|(m, name)| {
            let meds: Vec<f64> = samples
                .iter()
                .map(|s| s.get(m).map_or(f64::NAN, |v| median(v.clone())))
                .collect();
            (name.clone(), meds)
        })
        .collect();
    table(&names, &rows);
    Ok(())
}

/// Runs single puts of random keys on a thread while the main thread
/// waits one second, checkpoints, and stops the writer: the checkpoint's
/// time and the writer's p99.9 (µs) in the second before and during it.
fn checkpoint_under_writes(h: &dyn Handle, to: &Path, num: u64) -> Res<(Duration, f64, f64)> {
    let stop = AtomicBool::new(false);
    let lat: Arc<parking_lot_free::Lat> = Arc::new(parking_lot_free::Lat::default());
    let (t0, t1, t2) = std::thread::scope(|s| -> Res<_> {
        let w = s.spawn(|| -> Res<()> {
            let mut v = [0u8; VALUE];
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let k = (i.wrapping_mul(0x9E37_79B9) + 11) % num.max(1);
                value(k, 9, &mut v);
                let t = Instant::now();
                h.put(&key(k), &v)?;
                lat.push(t, t.elapsed());
                i += 1;
            }
            Ok(())
        });
        let t0 = Instant::now();
        std::thread::sleep(Duration::from_secs(2));
        let t1 = Instant::now();
        let r = h.checkpoint(to);
        let t2 = Instant::now();
        stop.store(true, Ordering::Relaxed);
        w.join().map_err(|_| "writer panicked".to_string())??;
        r?;
        Ok((t0, t1, t2))
    })?;
    let _ = t0;
    let during = t2 - t1;
    let before_start = t1
        .checked_sub(during.max(Duration::from_millis(200)))
        .unwrap_or(t1);
    let p = |from: Instant, to: Instant| lat.p999(from, to);
    Ok((during, p(before_start, t1), p(t1, t2)))
}

/// Latency samples (start, duration) of the writer.
mod parking_lot_free {
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    #[derive(Default)]
    pub struct Lat(Mutex<Vec<(Instant, Duration)>>);

    impl Lat {
        pub fn push(&self, at: Instant, d: Duration) {
            if let Ok(mut v) = self.0.lock() {
                v.push((at, d));
            }
        }

        /// p99.9 in µs of the samples started in `[from, to)`.
        pub fn p999(&self, from: Instant, to: Instant) -> f64 {
            let Ok(v) = self.0.lock() else {
                return f64::NAN;
            };
            let mut us: Vec<f64> = v
                .iter()
                .filter(|(at, _)| *at >= from && *at < to)
                .map(|(_, d)| d.as_secs_f64() * 1e6)
                .collect();
            if us.is_empty() {
                return f64::NAN;
            }
            us.sort_by(|a, b| a.total_cmp(b));
            us[((us.len() as f64 * 0.999) as usize).min(us.len() - 1)]
        }
    }
}
