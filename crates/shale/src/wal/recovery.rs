//! Replaying a log under one of RocksDB's four [`WalRecoveryMode`]s: the one
//! policy deciding which damage is fatal, which is skipped and where replay
//! stops. Used by DB recovery (WALs) and by MANIFEST reading.
//!
//! | mode | torn tail, last log | torn tail, older log | corrupt record |
//! |---|---|---|---|
//! | `TolerateCorruptedTailRecords` | dropped, reported | error | error |
//! | `AbsoluteConsistency` | error | error | error |
//! | `PointInTime` | stop (reported) | stop (reported) | stop (reported) |
//! | `SkipAnyCorruptedRecords` | skip, reported | skip, reported | skip, reported |
//!
//! "stop" sets [`ReplayReport::stopped_early`]: the caller must then not
//! replay later logs, or the recovered state would have a hole. A record the
//! callback rejects with `Corruption` (say, a batch that does not decode) is
//! handled exactly like a corrupt record at its offset; any other callback
//! error is returned as is. Errors name the file and the offset of the damage.
//!
//! Thread safety: a plain function over a borrowed reader.

use super::reader::{LogReader, ReadOutcome};
use crate::error::{Error, Result};

/// What WAL recovery does with a damaged or incomplete log (RocksDB's
/// `WALRecoveryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalRecoveryMode {
    /// Accept a torn last record only; any other damage fails open.
    TolerateCorruptedTailRecords,
    /// Any damage, even a torn tail, fails open.
    AbsoluteConsistency,
    /// Stop replay at the first damage and open at that consistent prefix;
    /// later WALs are not replayed. The default.
    PointInTime,
    /// Skip damaged records and go on (salvage; may leave holes).
    SkipAnyCorruptedRecords,
}

/// A stretch of a log that replay skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DroppedRange {
    /// File offset of the first byte skipped.
    pub offset: u64,
    /// Why (torn tail, checksum mismatch, bad batch, ...).
    pub what: String,
    /// Number of bytes skipped.
    pub bytes: u64,
}

/// What [`replay`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReplayReport {
    /// Records handed to the callback and accepted by it.
    pub records: u64,
    /// Replay stopped at damage (`PointInTime`): later logs must not be
    /// replayed.
    pub stopped_early: bool,
    /// Everything skipped, in file order.
    pub dropped: Vec<DroppedRange>,
    /// File offset just past the last record read whole (`LogReader::valid_end`).
    pub valid_end: u64,
}

/// Damage found while replaying, before the mode decides about it.
enum Damage {
    Torn,
    Corrupt,
}

/// Reads every record of `reader` and hands `(payload, offset)` to
/// `on_record`, applying `mode` to damage (see the module comment).
/// `is_last_log` tells whether this is the newest log being replayed (the
/// only one whose tail may legitimately be torn).
pub(crate) fn replay(
    reader: &mut LogReader,
    mode: WalRecoveryMode,
    is_last_log: bool,
    mut on_record: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<ReplayReport> {
    let mut report = ReplayReport::default();
    let mut buf = Vec::new();
    loop {
        let (damage, offset, what, bytes) = match reader.read_record(&mut buf)? {
            ReadOutcome::Eof => {
                report.valid_end = reader.valid_end();
                return Ok(report);
            }
            ReadOutcome::Record { offset } => match on_record(&buf, offset) {
                Ok(()) => {
                    report.records += 1;
                    continue;
                }
                Err(Error::Corruption {
                    file,
                    offset: inner,
                    what,
                }) => {
                    let what = if file == reader.file_name() {
                        what
                    } else {
                        format!("{file}: {what} (at offset {inner})")
                    };
                    let bytes = reader.consumed().saturating_sub(offset);
                    (Damage::Corrupt, offset, what, bytes)
                }
                Err(e) => return Err(e),
            },
            ReadOutcome::TornTail { offset } => {
                let bytes = reader.consumed().saturating_sub(offset);
                let what = "torn record at the end of the log".to_string();
                (Damage::Torn, offset, what, bytes)
            }
            ReadOutcome::Corrupt {
                offset,
                what,
                dropped_bytes,
            } => (Damage::Corrupt, offset, what, dropped_bytes),
        };
        let fatal = match (mode, &damage) {
            (WalRecoveryMode::TolerateCorruptedTailRecords, Damage::Torn) => !is_last_log,
            (WalRecoveryMode::TolerateCorruptedTailRecords, Damage::Corrupt) => true,
            (WalRecoveryMode::AbsoluteConsistency, _) => true,
            (WalRecoveryMode::PointInTime, _) => false,
            (WalRecoveryMode::SkipAnyCorruptedRecords, _) => false,
        };
        if fatal {
            let what = match (damage, is_last_log) {
                (Damage::Torn, false) => format!("{what} (not the last log; {mode:?})"),
                _ => format!("{what} ({mode:?})"),
            };
            return Err(Error::corruption(reader.file_name(), offset, what));
        }
        report.dropped.push(DroppedRange {
            offset,
            what,
            bytes,
        });
        if mode == WalRecoveryMode::PointInTime {
            report.stopped_early = true;
            report.valid_end = reader.valid_end();
            return Ok(report);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::format::{BLOCK_SIZE, HEADER_LEN};
    use super::super::test_util::{MemFile, MemSeqFile};
    use super::super::writer::LogWriter;
    use super::*;

    const ALL: [WalRecoveryMode; 4] = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTime,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ];

    fn payload(i: usize) -> Vec<u8> {
        // Records 0..6 of 2000 bytes: about 15 per 32 KiB block.
        vec![i as u8; 2000]
    }

    /// A log of `n` records; returns the bytes and each record's offset.
    fn build(n: usize) -> (Vec<u8>, Vec<u64>) {
        let (file, bytes) = MemFile::new();
        let mut w = LogWriter::new(Box::new(file), 9);
        let mut offs = Vec::new();
        for i in 0..n {
            offs.push(w.file_size());
            w.add_record(&payload(i)).unwrap();
        }
        let b = bytes.lock().clone();
        (b, offs)
    }

    fn run(
        data: Vec<u8>,
        mode: WalRecoveryMode,
        last: bool,
    ) -> (Result<ReplayReport>, Vec<(u8, u64)>) {
        let mut r = LogReader::new(Box::new(MemSeqFile::new(data)), "000009.log".into(), 9);
        let mut seen = Vec::new();
        let res = replay(&mut r, mode, last, |p, off| {
            assert_eq!(p, &payload(p[0] as usize)[..]);
            seen.push((p[0], off));
            Ok(())
        });
        (res, seen)
    }

    fn ids(seen: &[(u8, u64)]) -> Vec<u8> {
        seen.iter().map(|s| s.0).collect()
    }

    fn corruption_at(res: Result<ReplayReport>) -> (String, u64, String) {
        match res {
            Err(Error::Corruption { file, offset, what }) => (file, offset, what),
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn clean_log_in_every_mode() {
        let (data, offs) = build(6);
        for mode in ALL {
            for last in [true, false] {
                let (res, seen) = run(data.clone(), mode, last);
                let rep = res.unwrap();
                assert_eq!(rep.records, 6);
                assert!(!rep.stopped_early && rep.dropped.is_empty());
                assert_eq!(ids(&seen), vec![0, 1, 2, 3, 4, 5]);
                assert_eq!(seen.iter().map(|s| s.1).collect::<Vec<_>>(), offs);
            }
        }
    }

    #[test]
    fn torn_tail() {
        let (mut data, offs) = build(6);
        data.truncate(data.len() - 100); // inside record 5
        let torn_bytes = data.len() as u64 - offs[5];
        for mode in ALL {
            for last in [true, false] {
                let (res, seen) = run(data.clone(), mode, last);
                let fail = match mode {
                    WalRecoveryMode::TolerateCorruptedTailRecords => !last,
                    WalRecoveryMode::AbsoluteConsistency => true,
                    _ => false,
                };
                assert_eq!(ids(&seen), vec![0, 1, 2, 3, 4], "{mode:?} last={last}");
                if fail {
                    let (file, off, what) = corruption_at(res);
                    assert_eq!((file.as_str(), off), ("000009.log", offs[5]), "{mode:?}");
                    assert!(what.contains("torn"), "{what}");
                    continue;
                }
                let rep = res.unwrap();
                assert_eq!(rep.records, 5);
                assert_eq!(rep.stopped_early, mode == WalRecoveryMode::PointInTime);
                assert_eq!(rep.dropped.len(), 1, "{mode:?}");
                assert_eq!(
                    (rep.dropped[0].offset, rep.dropped[0].bytes),
                    (offs[5], torn_bytes)
                );
            }
        }
    }

    #[test]
    fn corruption_in_the_middle() {
        let (mut data, offs) = build(40); // spans 3 blocks
        assert!(data.len() > 2 * BLOCK_SIZE);
        // Damage record 3's payload (block 0): the rest of block 0 is lost.
        data[offs[3] as usize + HEADER_LEN + 10] ^= 0x40;
        let first_in_block1 = offs.iter().position(|&o| o >= BLOCK_SIZE as u64).unwrap();
        for mode in ALL {
            for last in [true, false] {
                let (res, seen) = run(data.clone(), mode, last);
                match mode {
                    WalRecoveryMode::TolerateCorruptedTailRecords
                    | WalRecoveryMode::AbsoluteConsistency => {
                        let (file, off, what) = corruption_at(res);
                        assert_eq!((file.as_str(), off), ("000009.log", offs[3]));
                        assert!(what.contains("checksum"), "{what}");
                        assert_eq!(ids(&seen), vec![0, 1, 2]);
                    }
                    WalRecoveryMode::PointInTime => {
                        let rep = res.unwrap();
                        assert!(rep.stopped_early);
                        assert_eq!(ids(&seen), vec![0, 1, 2]);
                        assert_eq!(rep.dropped[0].offset, offs[3]);
                    }
                    WalRecoveryMode::SkipAnyCorruptedRecords => {
                        let rep = res.unwrap();
                        assert!(!rep.stopped_early);
                        // Records 3.. up to the one that crosses into block 1
                        // are lost; that one's tail is reported separately.
                        let mut want: Vec<u8> = vec![0, 1, 2];
                        want.extend((first_in_block1 as u8)..40);
                        assert_eq!(ids(&seen), want);
                        assert_eq!(rep.records, want.len() as u64);
                        assert_eq!(rep.dropped[0].offset, offs[3]);
                        assert_eq!(rep.dropped[0].bytes, BLOCK_SIZE as u64 - offs[3]);
                        assert!(rep.dropped.len() <= 2, "{:?}", rep.dropped);
                    }
                }
            }
        }
    }

    #[test]
    fn callback_corruption_is_a_corrupt_record() {
        let (data, offs) = build(5);
        for mode in ALL {
            let mut r = LogReader::new(Box::new(MemSeqFile::new(data.clone())), "w".into(), 9);
            let mut seen = Vec::new();
            let res = replay(&mut r, mode, true, |p, _| {
                if p[0] == 2 {
                    return Err(Error::corruption(
                        "write batch",
                        12,
                        "unknown record tag 0x09",
                    ));
                }
                seen.push(p[0]);
                Ok(())
            });
            match mode {
                WalRecoveryMode::PointInTime => {
                    let rep = res.unwrap();
                    assert!(rep.stopped_early);
                    assert_eq!(seen, vec![0, 1]);
                    assert_eq!(rep.dropped[0].offset, offs[2]);
                    assert_eq!(rep.dropped[0].bytes, offs[3] - offs[2]);
                    assert!(rep.dropped[0]
                        .what
                        .contains("write batch: unknown record tag"));
                }
                WalRecoveryMode::SkipAnyCorruptedRecords => {
                    let rep = res.unwrap();
                    assert_eq!(seen, vec![0, 1, 3, 4]);
                    assert_eq!(rep.records, 4);
                    assert_eq!(rep.dropped.len(), 1);
                }
                _ => {
                    let (file, off, what) = corruption_at(res);
                    assert_eq!((file.as_str(), off), ("w", offs[2]));
                    assert!(what.contains("tag 0x09"), "{what}");
                    assert_eq!(seen, vec![0, 1]);
                }
            }
        }
    }

    #[test]
    fn callback_other_errors_propagate() {
        let (data, _) = build(3);
        for mode in ALL {
            let mut r = LogReader::new(Box::new(MemSeqFile::new(data.clone())), "w".into(), 9);
            let res = replay(&mut r, mode, true, |_, _| Err(Error::ShutdownInProgress));
            assert_eq!(res, Err(Error::ShutdownInProgress));
        }
    }

    #[test]
    fn io_errors_propagate() {
        let (data, _) = build(40);
        for mode in ALL {
            let mut f = MemSeqFile::new(data.clone());
            f.fail_at = Some(BLOCK_SIZE);
            let mut r = LogReader::new(Box::new(f), "w".into(), 9);
            let mut n = 0;
            let res = replay(&mut r, mode, true, |_, _| {
                n += 1;
                Ok(())
            });
            assert!(matches!(res, Err(Error::Io { .. })), "{mode:?}: {res:?}");
            assert!(n > 0);
        }
    }

    #[test]
    fn wrong_log_number_is_corruption() {
        let (data, offs) = build(3);
        for mode in ALL {
            let mut r = LogReader::new(Box::new(MemSeqFile::new(data.clone())), "w".into(), 10);
            let res = replay(&mut r, mode, true, |_, _| panic!("no record may pass"));
            match mode {
                WalRecoveryMode::PointInTime | WalRecoveryMode::SkipAnyCorruptedRecords => {
                    let rep = res.unwrap();
                    assert_eq!(rep.records, 0);
                    assert_eq!(rep.dropped[0].offset, offs[0]);
                }
                _ => assert_eq!(corruption_at(res).1, 0),
            }
        }
    }
}
