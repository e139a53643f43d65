//! Operations a service runs beside its writers (issue 39), as stress
//! operations:
//!
//! - [`ingest`]: a write by bulk load: 1-8 consecutive keys of one family
//!   (keys written once and single-deleted are left out) locked, a new value
//!   base put for each into an external table (`SstFileWriter` with the
//!   family's options), ingested with `ingest_external_file_cf` (moved or
//!   copied), and the records committed, as `write` does for a batch.
//! - [`checkpoint`]: up to four keys of one family held still (locked)
//!   while `Db::checkpoint_with` copies the DB (flushed first or carrying
//!   the WALs) with every other thread writing; the copy, opened
//!   read-only, must read those keys as the expected state has them. One
//!   time in three it is a backup instead (`BackupEngine::create_backup`
//!   into a fresh backup directory, verified, restored), checked the same
//!   way on the restored DB.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use rand::rngs::SmallRng;
use rand::Rng;
use shale::{Cf, Db, IngestOptions, SstFileWriter};

use super::expect::{Expect, ReadWindow};
use super::expected::Record;
use super::value::{encode, key_bytes, owner};
use super::worker::Shared;

/// Opens a copy of the stress DB read-only, with the run's options: the DB
/// and its families by family number.
pub type OpenCopy<'a> = &'a (dyn Fn(&Path) -> Result<(Db, Vec<Cf>), String> + Sync);

/// A path beside the DB no other thread uses.
fn scratch(sh: &Shared<'_>, what: &str, rng: &mut SmallRng) -> PathBuf {
    let mut p = sh.db.path().as_os_str().to_owned();
    p.push(format!(".{what}-{:016x}", rng.gen::<u64>()));
    PathBuf::from(p)
}

/// Bulk load of a few keys (module docs).
pub fn ingest(sh: &Shared<'_>, cf: u32, key: u64, rng: &mut SmallRng) -> Result<(), String> {
    let max_key = sh.expected.max_key();
    let n = rng.gen_range(1..=8u64);
    let keys: Vec<u64> = (key..(key + n).min(max_key))
        .filter(|&k| !sh.expected.no_overwrite(k))
        .collect();
    if keys.is_empty() {
        return Ok(());
    }
    let mut idx: Vec<u64> = keys.iter().map(|&k| sh.expected.index(cf, k)).collect();
    let _held = sh.locks.lock_many(&mut idx);
    let io = |e: std::io::Error| format!("expected-state file: {e}");
    let base = rng.gen_range(1..1 << 31);
    let record = Record::lasting(base);
    let tag = if keys.len() > 1 {
        rng.gen::<u64>() | 1
    } else {
        0
    };
    let c = &sh.cfs[cf as usize];
    let path = scratch(sh, "ingest.sst", rng);
    let cf_opts = sh
        .db
        .cf_options(c)
        .map_err(|e| format!("cf_options: {e}"))?;
    let mut w = SstFileWriter::with_cf_options(&cf_opts);
    w.open(&path)
        .map_err(|e| format!("SstFileWriter::open: {e}"))?;
    for &k in &keys {
        w.put(&key_bytes(k), &encode(owner(cf, k), base))
            .map_err(|e| format!("SstFileWriter::put {k}: {e}"))?;
    }
    w.finish()
        .map_err(|e| format!("SstFileWriter::finish: {e}"))?;
    for &k in &keys {
        sh.expected
            .begin(sh.expected.index(cf, k), record, tag)
            .map_err(io)?;
    }
    let opts = IngestOptions {
        move_files: rng.gen_bool(0.5),
        verify_checksums_before_ingest: rng.gen_bool(0.3),
        ..IngestOptions::default()
    };
    let r = sh
        .db
        .ingest_external_file_cf(c, std::slice::from_ref(&path), &opts)
        .map_err(|e| format!("cf {cf} keys {keys:?}: {e}"));
    let _ = std::fs::remove_file(&path);
    r?;
    for &k in &keys {
        sh.expected
            .commit(sh.expected.index(cf, k), record)
            .map_err(io)?;
    }
    sh.written[0].fetch_add(keys.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// A checkpoint beside the writers (module docs).
pub fn checkpoint(
    sh: &Shared<'_>,
    open_copy: OpenCopy<'_>,
    cf: u32,
    key: u64,
    rng: &mut SmallRng,
) -> Result<(), String> {
    let max_key = sh.expected.max_key();
    let keys: Vec<u64> = std::iter::once(key)
        .chain((0..rng.gen_range(0..4)).map(|_| rng.gen_range(0..max_key)))
        .collect();
    let mut idx: Vec<u64> = keys.iter().map(|&k| sh.expected.index(cf, k)).collect();
    let held = sh.locks.lock_many(&mut idx);
    let expect: Vec<(u64, Expect)> = keys
        .iter()
        .map(|&k| {
            let record = sh.expected.get(sh.expected.index(cf, k)).committed;
            (
                k,
                Expect {
                    record,
                    class: sh.expected.filter_class(k),
                },
            )
        })
        .collect();
    let dir = scratch(sh, "checkpoint", rng);
    let backup_dir = rng.gen_ratio(1, 3).then(|| scratch(sh, "backup", rng));
    let what = if backup_dir.is_some() {
        "restored backup"
    } else {
        "checkpoint copy"
    };
    if let Some(bk) = &backup_dir {
        let engine = shale::BackupEngine::open(bk, shale::fs::default_fs())
            .map_err(|e| format!("BackupEngine::open: {e}"))?;
        let id = engine
            .create_backup(sh.db)
            .map_err(|e| format!("create_backup: {e}"))?;
        drop(held);
        engine
            .verify(id)
            .and_then(|()| engine.restore(id, &dir))
            .map_err(|e| format!("backup {id}: {e}"))?;
    } else {
        let log_size_for_flush = [0, 1 << 20, u64::MAX][rng.gen_range(0..3)];
        sh.db
            .checkpoint_with(&dir, &shale::CheckpointOptions { log_size_for_flush })
            .map_err(|e| format!("checkpoint_with({log_size_for_flush}): {e}"))?;
        drop(held);
    }
    let checked = (|| {
        let (copy, cfs) = open_copy(&dir)?;
        for (k, e) in &expect {
            let w = ReadWindow::open();
            let v = copy
                .get_cf(&cfs[cf as usize], &key_bytes(*k))
                .map_err(|e| format!("copy: cf {cf} key {k}: {e}"))?;
            e.check(cf, *k, owner(cf, *k), v.as_deref(), w.close())
                .map_err(|m| format!("{what}: {m}"))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    if let Some(bk) = backup_dir {
        let _ = std::fs::remove_dir_all(bk);
    }
    checked
}
