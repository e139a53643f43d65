//! The `wal` check: a log file (the WAL / MANIFEST framing of
//! docs/format/wal.md) read by `LogReader` and replayed by `wal::replay` in
//! every recovery mode, with each record decoded as a write batch and
//! inserted into a memtable as recovery does; raw, then with the record
//! checksums recomputed ([`repair_wal`]).
//!
//! Invariants checked:
//! - whole reads and short reads give the same outcomes;
//! - the reader terminates, stays inside the file and ends at its size;
//! - a record lies inside the file; a torn tail is followed by `Eof`; every
//!   `Corrupt` drops at least one byte, inside the file;
//! - `replay` follows the recovery-mode table of docs/format/wal.md exactly
//!   (records accepted, ranges dropped, fatal or not) in all 4 modes, for
//!   the last log and for an older one; its errors are `Corruption` naming
//!   [`WAL_FILE`].
//!
//! Thread-safety: plain functions.

use shale::fs::SequentialFile;
use shale::testing::{
    batch_from_data, batch_records, batch_sequence, batch_validate, replay, LogReader, LogRecord,
    MemTable, WAL_BLOCK_SIZE, WAL_HEADER_LEN,
};
use shale::{Error, Result, WalRecoveryMode};

use crate::codec::masked_crc32c;
use crate::{is_corruption_in, WAL_FILE, WAL_NUMBER};

/// Reads `data` as log [`WAL_NUMBER`] with `LogReader` and with
/// `wal::replay` in every recovery mode (batches decoded and inserted into a
/// memtable as recovery does); then the same with the record checksums
/// repaired. Returns the number of good records of the repaired log.
pub fn wal(data: &[u8]) -> Result<usize> {
    let _ = check_wal(data);
    let mut fixed = data.to_vec();
    repair_wal(&mut fixed);
    check_wal(&fixed)
}

/// An in-memory `SequentialFile` returning reads of at most `chunk` bytes.
struct MemSeq {
    data: Vec<u8>,
    pos: usize,
    chunk: usize,
}

impl SequentialFile for MemSeq {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let n = buf.len().min(self.chunk).min(rest.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

fn reader(data: &[u8], chunk: usize) -> LogReader {
    let f = MemSeq {
        data: data.to_vec(),
        pos: 0,
        chunk,
    };
    LogReader::new(Box::new(f), WAL_FILE, WAL_NUMBER)
}

/// What recovery does with a record: decode, validate, insert (mirrors
/// `db::recover::replay_wals` and `db::write::insert_batch`).
fn apply_record(mem: &MemTable, payload: &[u8], offset: u64) -> Result<()> {
    let batch = batch_from_data(payload.to_vec())?;
    batch_validate(&batch, WAL_FILE, offset)?;
    let bad = |what: String| Error::Corruption {
        file: WAL_FILE.into(),
        offset,
        what: format!("bad batch: {what}"),
    };
    // `validate` has checked that every sequence number fits in 56 bits.
    for (seq, r) in (batch_sequence(&batch)..).zip(batch_records(&batch)) {
        let r = r?;
        if r.cf != 0 {
            return Err(bad(format!("column family {}", r.cf)));
        }
        mem.add(seq, &r);
    }
    Ok(())
}

/// One event of a log read, as the recovery modes see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Good,
    BadBatch,
    Torn,
    Corrupt,
}

fn check_wal(data: &[u8]) -> Result<usize> {
    let len = data.len() as u64;
    // The reader alone, with whole and with short reads: same outcomes.
    let chunk = 1 + data.first().map_or(0, |&b| usize::from(b) * 97);
    let mut outcomes = Vec::new();
    for c in [usize::MAX, chunk] {
        let mut r = reader(data, c);
        let mut out = Vec::new();
        let mut seen = Vec::new();
        loop {
            assert!(
                seen.len() as u64 <= len + 2,
                "log reader does not terminate"
            );
            let o = r.read_record(&mut out)?;
            assert!(r.consumed() <= len, "consumed past the end");
            match &o {
                LogRecord::Eof => break,
                LogRecord::Record { offset } => {
                    assert!(offset + WAL_HEADER_LEN as u64 <= len);
                    seen.push((o.clone(), out.clone()));
                }
                LogRecord::TornTail { offset } => {
                    assert!(*offset < len);
                    seen.push((o.clone(), Vec::new()));
                    let next = r.read_record(&mut out)?;
                    assert_eq!(next, LogRecord::Eof, "torn tail not followed by EOF");
                    break;
                }
                LogRecord::Corrupt {
                    offset,
                    dropped_bytes,
                    ..
                } => {
                    assert!(*dropped_bytes > 0 && offset + dropped_bytes <= len, "{o:?}");
                    seen.push((o.clone(), Vec::new()));
                }
            }
        }
        assert_eq!(r.consumed(), len, "EOF before the end of the log");
        outcomes.push(seen);
    }
    assert!(outcomes[0] == outcomes[1], "short reads change the outcome");
    let events: Vec<Event> = outcomes[0]
        .iter()
        .map(|(o, payload)| match o {
            LogRecord::Record { offset } => {
                if apply_record(&MemTable::new(), payload, *offset).is_ok() {
                    Event::Good
                } else {
                    Event::BadBatch
                }
            }
            LogRecord::TornTail { .. } => Event::Torn,
            _ => Event::Corrupt,
        })
        .collect();

    // `replay` must follow the recovery-mode table exactly.
    let good = events.iter().filter(|e| **e == Event::Good).count() as u64;
    let damaged = events.len() as u64 - good;
    let first_bad = events.iter().position(|e| *e != Event::Good);
    let modes = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTime,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ];
    for mode in modes {
        for is_last in [true, false] {
            let mem = MemTable::new();
            let mut r = reader(data, usize::MAX);
            let rep = replay(&mut r, mode, is_last, |p, off| apply_record(&mem, p, off));
            let fatal = match (mode, first_bad.map(|i| events[i])) {
                (_, None) => false,
                (WalRecoveryMode::TolerateCorruptedTailRecords, Some(Event::Torn)) => !is_last,
                (WalRecoveryMode::TolerateCorruptedTailRecords, _) => true,
                (WalRecoveryMode::AbsoluteConsistency, _) => true,
                _ => false,
            };
            match rep {
                Err(e) => {
                    assert!(fatal, "{mode:?} last={is_last}: unexpected {e:?}");
                    assert!(is_corruption_in(&e, WAL_FILE), "{mode:?}: error {e:?}");
                }
                Ok(rep) => {
                    assert!(
                        !fatal,
                        "{mode:?} last={is_last}: damage {events:?} accepted"
                    );
                    let (want, dropped) = match mode {
                        WalRecoveryMode::PointInTime => (
                            first_bad.unwrap_or(events.len()) as u64,
                            u64::from(first_bad.is_some()),
                        ),
                        _ => (good, damaged),
                    };
                    assert_eq!(rep.records, want, "{mode:?}: records");
                    assert_eq!(rep.dropped as u64, dropped, "{mode:?}: dropped");
                }
            }
        }
    }
    Ok(good as usize)
}

/// Recomputes the checksum of every physical record whose header and
/// payload lie inside its block, so mutated logs get past the crc. On a
/// valid log it changes nothing.
pub fn repair_wal(d: &mut [u8]) {
    let log_number = WAL_NUMBER.to_le_bytes();
    for block in d.chunks_mut(WAL_BLOCK_SIZE) {
        let mut p = 0usize;
        while let Some(h) = block.get(p..p + WAL_HEADER_LEN) {
            if h.iter().all(|&b| b == 0) {
                break;
            }
            let n = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let typ = h[6];
            let Some(payload) = block.get(p + WAL_HEADER_LEN..p + WAL_HEADER_LEN + n) else {
                break;
            };
            // docs/format/wal.md: crc32c(log number ++ type ++ payload), masked.
            let crc = masked_crc32c(&[&log_number, &[typ], payload]);
            if let Some(c) = block.get_mut(p..p + 4) {
                c.copy_from_slice(&crc.to_le_bytes());
            }
            p += WAL_HEADER_LEN + n;
        }
    }
}
