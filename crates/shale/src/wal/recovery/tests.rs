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

fn run(data: Vec<u8>, mode: WalRecoveryMode, last: bool) -> (Result<ReplayReport>, Vec<(u8, u64)>) {
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
