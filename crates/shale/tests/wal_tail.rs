//! WAL tail and mid-log damage under each `WalRecoveryMode` (RELIABILITY.md
//! test 8), on copies of a DB image in `MemFileSystem`.
//!
//! A DB gets N puts (one WAL record each) and is closed without a flush
//! (the write buffer is large, and `close` does not flush the memtable), so
//! every put lives only in the newest `.log`. Then:
//! - truncating that log at every byte offset of its last 3 records
//!   recovers exactly the complete records, in `PointInTime` and in
//!   `TolerateCorruptedTailRecords`; `AbsoluteConsistency` accepts only a cut
//!   at a record boundary;
//! - a damaged byte in the middle of the log: `AbsoluteConsistency` and
//!   `TolerateCorruptedTailRecords` fail with `Corruption` naming the log
//!   and the record's offset; `PointInTime` opens with exactly the records
//!   before the damage and reports it in `shale.wal-recovery`;
//!   `SkipAnyCorruptedRecords` also recovers the records after the damaged
//!   32 KiB block.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use shale::fs::{FileSystem, MemFileSystem};
use shale::{Db, Error, Options, WalRecoveryMode, WriteBatch, WriteOptions};

const DIR: &str = "/db";
const BLOCK: usize = 32 * 1024;
const HEADER: usize = 7;

fn opts(fs: &MemFileSystem, mode: WalRecoveryMode) -> Options {
    Options {
        create_if_missing: true,
        cf: shale::CfOptions {
            write_buffer_size: 64 << 20,
            ..Default::default()
        },
        wal_recovery_mode: mode,
        fs: Arc::new(fs.clone()),
        ..Options::default()
    }
}

fn kv(i: usize, value_len: usize) -> (Vec<u8>, Vec<u8>) {
    let mut v = format!("value{i}-").into_bytes();
    v.resize(value_len.max(v.len()), b'a' + (i % 26) as u8);
    (format!("key{i:04}").into_bytes(), v)
}

/// A closed DB holding `n` puts only in its WAL; returns the image and the
/// path of the log.
fn build(n: usize, value_len: usize) -> (MemFileSystem, PathBuf) {
    let fs = MemFileSystem::new();
    let db = Db::open(DIR, opts(&fs, WalRecoveryMode::PointInTime)).expect("create");
    for i in 0..n {
        let (k, v) = kv(i, value_len);
        let mut b = WriteBatch::new();
        b.put(&k, &v);
        db.write(b, &WriteOptions::default()).expect("put");
    }
    db.close().expect("close");
    let image = fs.crash_process();
    let logs = common::sorted_names(&image, DIR, |n| n.ends_with(".log"));
    let log = Path::new(DIR).join(logs.last().expect("a WAL"));
    (image, log)
}

/// Start (header of the first fragment) and end offsets of the logical
/// records of an undamaged log.
fn records(data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut first = None;
    let mut pos = 0;
    while pos + HEADER <= data.len() {
        if BLOCK - pos % BLOCK < HEADER {
            pos += BLOCK - pos % BLOCK;
            continue;
        }
        if data[pos..pos + HEADER].iter().all(|&b| b == 0) {
            break;
        }
        let len = usize::from(u16::from_le_bytes([data[pos + 4], data[pos + 5]]));
        let end = pos + HEADER + len;
        match data[pos + 6] {
            1 => out.push((pos, end)),
            2 => first = Some(pos),
            3 => {}
            4 => out.push((first.take().expect("FIRST before LAST"), end)),
            t => panic!("record type {t} at {pos}"),
        }
        pos = end;
    }
    out
}

/// A copy of `image` whose `log` holds `data`.
fn with_log(image: &MemFileSystem, log: &Path, data: &[u8]) -> MemFileSystem {
    let copy = image.crash(1.0, 0);
    copy.remove(log).expect("remove");
    let mut f = copy.create(log).expect("create");
    f.append(data).expect("append");
    f.sync().expect("sync");
    copy
}

/// Indices of the puts present, checking their values.
fn present(db: &Db, value_len: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for item in db.range(..) {
        let (k, v) = item.expect("scan");
        let i: usize = String::from_utf8_lossy(&k[3..]).parse().expect("key");
        assert_eq!(v, kv(i, value_len).1, "value of put {i}");
        out.push(i);
    }
    out
}

#[test]
fn truncated_tail_recovers_exactly_the_complete_records() {
    let n = 40;
    let (image, log) = build(n, 20);
    let data = image.read_all(&log).expect("read log");
    let recs = records(&data);
    assert_eq!(recs.len(), n, "one record per put");
    assert_eq!(recs.last().map(|r| r.1), Some(data.len()));
    let from = recs[n - 3].0;
    let mut opened = 0;
    for cut in from..=data.len() {
        let complete = recs.iter().filter(|r| r.1 <= cut).count();
        let want: Vec<usize> = (0..complete).collect();
        for mode in [
            WalRecoveryMode::PointInTime,
            WalRecoveryMode::TolerateCorruptedTailRecords,
        ] {
            let fs = with_log(&image, &log, &data[..cut]);
            let db = Db::open(DIR, opts(&fs, mode))
                .unwrap_or_else(|e| panic!("cut at {cut}, {mode:?}: open: {e}"));
            assert_eq!(present(&db, 20), want, "cut at {cut}, {mode:?}");
            let report = db.property("shale.wal-recovery").unwrap_or_default();
            let at_boundary = recs.iter().any(|r| r.1 == cut);
            assert_eq!(
                report.is_empty(),
                at_boundary,
                "cut at {cut}, {mode:?}: report {report:?}"
            );
            opened += 1;
        }
        // Strict mode: only a cut at a record boundary opens.
        let fs = with_log(&image, &log, &data[..cut]);
        let at_boundary = recs.iter().any(|r| r.1 == cut);
        match Db::open(DIR, opts(&fs, WalRecoveryMode::AbsoluteConsistency)) {
            Ok(db) => {
                assert!(
                    at_boundary,
                    "cut at {cut}: AbsoluteConsistency accepted a torn tail"
                );
                assert_eq!(present(&db, 20), want);
            }
            Err(e) => {
                assert!(!at_boundary, "cut at {cut}: {e}");
                assert!(e.is_corruption(), "cut at {cut}: {e}");
            }
        }
    }
    println!(
        "{} cuts, {opened} recoveries checked",
        data.len() - from + 1
    );
}

#[test]
fn mid_log_damage_in_every_mode() {
    // ~1 KiB records: about 30 per 32 KiB block, 4 blocks.
    let (n, vlen) = (120, 1000);
    let (image, log) = build(n, vlen);
    let mut data = image.read_all(&log).expect("read log");
    let recs = records(&data);
    assert_eq!(recs.len(), n);
    let bad = 10;
    let (start, _) = recs[bad];
    data[start + HEADER + 20] ^= 0x55;
    let log_name = log
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("")
        .to_string();

    for mode in [
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::TolerateCorruptedTailRecords,
    ] {
        let fs = with_log(&image, &log, &data);
        match Db::open(DIR, opts(&fs, mode)) {
            Err(Error::Corruption { file, offset, what }) => {
                assert!(file.ends_with(&log_name), "{mode:?}: names {file}");
                assert_eq!(offset, start as u64, "{mode:?}: {what}");
            }
            other => panic!("{mode:?}: expected Corruption, got {other:?}"),
        }
    }

    let fs = with_log(&image, &log, &data);
    let db = Db::open(DIR, opts(&fs, WalRecoveryMode::PointInTime)).expect("point in time");
    assert_eq!(present(&db, vlen), (0..bad).collect::<Vec<_>>());
    let report = db.property("shale.wal-recovery").unwrap_or_default();
    assert!(report.contains(&log_name), "report: {report:?}");
    // The DB is usable and the stop is durable: a reopen does not bring
    // back records after the damage.
    db.put(b"after", b"1").expect("put");
    db.close().expect("close");
    let db = Db::open(DIR, opts(&fs, WalRecoveryMode::PointInTime)).expect("reopen");
    assert_eq!(
        db.get(b"after").expect("get").map(|v| v.to_vec()),
        Some(b"1".to_vec())
    );
    db.delete(b"after").expect("delete");
    assert_eq!(present(&db, vlen), (0..bad).collect::<Vec<_>>());
    drop(db);

    // Salvage: everything but the damaged block's records from `bad` on.
    let fs = with_log(&image, &log, &data);
    let db = Db::open(DIR, opts(&fs, WalRecoveryMode::SkipAnyCorruptedRecords)).expect("skip");
    let block_end = (start / BLOCK + 1) * BLOCK;
    let want: Vec<usize> = (0..n)
        .filter(|&i| i < bad || recs[i].0 >= block_end)
        .collect();
    assert!(
        want.len() > bad + 30,
        "records after the damaged block exist"
    );
    assert_eq!(present(&db, vlen), want);
    assert!(!db
        .property("shale.wal-recovery")
        .unwrap_or_default()
        .is_empty());
}
