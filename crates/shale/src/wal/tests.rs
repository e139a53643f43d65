//! Writer + reader tests of the log format: round trips of every size class,
//! truncation at every byte, single-byte damage at every byte, checksums
//! bound to the log number, zero-filled space, and the reader's handling of
//! irregular fragment sequences.
//!
//! Randomized tests print their seed in every failure message.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::format::{CrcSeeds, RecordType, MAX_FRAGMENT_LEN};
use super::test_util::{MemFile, MemSeqFile};
use super::{LogReader, LogWriter, ReadOutcome, BLOCK_SIZE, HEADER_LEN};
use crate::fs::{FileSystem, PosixFileSystem};

/// A written record: file extent `[start, end)` and payload.
#[derive(Debug, Clone)]
struct Written {
    start: u64,
    end: u64,
    payload: Vec<u8>,
}

/// Writes `payloads` as log `log_number`; returns the bytes and extents.
fn write_log(log_number: u64, payloads: &[Vec<u8>]) -> (Vec<u8>, Vec<Written>) {
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), log_number);
    let mut out = Vec::new();
    for p in payloads {
        let before = w.file_size();
        // The writer pads a block tail shorter than a header first.
        let left = BLOCK_SIZE as u64 - before % BLOCK_SIZE as u64;
        let start = if left < HEADER_LEN as u64 {
            before + left
        } else {
            before
        };
        w.add_record(p).unwrap();
        out.push(Written {
            start,
            end: w.file_size(),
            payload: p.clone(),
        });
    }
    w.flush().unwrap();
    let b = bytes.lock().clone();
    (b, out)
}

fn reader(data: Vec<u8>, log_number: u64) -> LogReader {
    LogReader::new(
        Box::new(MemSeqFile::new(data)),
        "000005.log".into(),
        log_number,
    )
}

/// Reads until `Eof`, returning every outcome with the record payloads.
fn read_all(mut r: LogReader) -> Vec<(ReadOutcome, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    for _ in 0..100_000 {
        let o = r.read_record(&mut buf).unwrap();
        if o == ReadOutcome::Eof {
            // Eof is sticky.
            assert_eq!(r.read_record(&mut buf).unwrap(), ReadOutcome::Eof);
            return out;
        }
        out.push((o, buf.clone()));
    }
    panic!("reader does not terminate");
}

fn payload(rng: &mut SmallRng, len: usize) -> Vec<u8> {
    (0..len).map(|_| rng.gen()).collect()
}

fn assert_roundtrip(data: Vec<u8>, written: &[Written], max_read: usize, ctx: &str) {
    let mut f = MemSeqFile::new(data);
    f.max_read = max_read;
    let r = LogReader::new(Box::new(f), "x".into(), 5);
    let got = read_all(r);
    assert_eq!(got.len(), written.len(), "{ctx}");
    for (i, ((o, p), w)) in got.iter().zip(written).enumerate() {
        assert_eq!(
            o,
            &ReadOutcome::Record { offset: w.start },
            "{ctx} record {i}"
        );
        assert!(p == &w.payload, "{ctx} record {i}: payload differs");
    }
}

#[test]
fn sizes_roundtrip() {
    let b = BLOCK_SIZE;
    let h = HEADER_LEN;
    let sizes = [
        0,
        1,
        100,
        b - h - 1,
        b - h, // exactly one block
        b - h + 1,
        b - 2 * h,     // leaves exactly a header's room
        b - 2 * h - 3, // leaves 3 bytes of padding
        b,
        2 * (b - h), // exactly two blocks
        3 * b,       // spans 4 blocks
        3 * (b - h) - 1,
        0,
        100_000,
        1,
    ];
    let mut rng = SmallRng::seed_from_u64(1);
    let payloads: Vec<Vec<u8>> = sizes.iter().map(|&n| payload(&mut rng, n)).collect();
    let (data, written) = write_log(5, &payloads);
    for max_read in [usize::MAX, 1, 7, 1000, BLOCK_SIZE - 1] {
        assert_roundtrip(
            data.clone(),
            &written,
            max_read,
            &format!("max_read {max_read}"),
        );
    }
    // Each size alone, and after a prefix that shifts it across a boundary.
    for &n in &sizes {
        for prefix in [0, 1, b - 2 * h - 1, b - 2 * h, b - 2 * h + 1] {
            let ps = vec![payload(&mut rng, prefix), payload(&mut rng, n), vec![7]];
            let (data, written) = write_log(5, &ps);
            assert_roundtrip(
                data,
                &written,
                usize::MAX,
                &format!("size {n} prefix {prefix}"),
            );
        }
    }
}

#[test]
fn randomized_roundtrip() {
    for seed in 0..40u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let n = rng.gen_range(0..60);
        let payloads: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let len = match rng.gen_range(0..10) {
                    0 => rng.gen_range(0..3 * BLOCK_SIZE),
                    1..=3 => rng.gen_range(0..HEADER_LEN * 3),
                    _ => rng.gen_range(0..3000),
                };
                payload(&mut rng, len)
            })
            .collect();
        let (data, written) = write_log(5, &payloads);
        let max_read = rng.gen_range(1..2 * BLOCK_SIZE);
        assert_roundtrip(data, &written, max_read, &format!("seed {seed}"));
    }
}

#[test]
fn posix_file_roundtrip() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let path = dir.path().join("000005.log");
    let mut rng = SmallRng::seed_from_u64(3);
    let payloads: Vec<Vec<u8>> = [10, 0, 70_000, 5, BLOCK_SIZE]
        .iter()
        .map(|&n| payload(&mut rng, n))
        .collect();
    let mut w = LogWriter::new(fs.create(&path).unwrap(), 5);
    for p in &payloads {
        w.add_record(p).unwrap();
    }
    w.sync().unwrap();
    let size = w.file_size();
    drop(w);
    assert_eq!(fs.file_size(&path).unwrap(), size);
    let mut r = LogReader::new(fs.open_sequential(&path).unwrap(), "000005.log".into(), 5);
    let mut buf = Vec::new();
    for p in &payloads {
        assert!(matches!(
            r.read_record(&mut buf).unwrap(),
            ReadOutcome::Record { .. }
        ));
        assert!(&buf == p);
    }
    assert_eq!(r.read_record(&mut buf).unwrap(), ReadOutcome::Eof);
    assert_eq!(r.consumed(), size);
}

/// The same through a memory-mapped WAL file: a clean close leaves exactly
/// the records; a crash (the writer never dropped) leaves them followed by
/// the reserved zeros, which read as a clean end.
#[test]
fn mapped_file_roundtrip_and_crash_tail() {
    let dir = tempfile::tempdir().unwrap();
    let fs = PosixFileSystem::default();
    let mut rng = SmallRng::seed_from_u64(4);
    let payloads: Vec<Vec<u8>> = [10, 0, 70_000, 5, BLOCK_SIZE, 1_200_000, 3]
        .iter()
        .map(|&n| payload(&mut rng, n))
        .collect();
    for crash in [false, true] {
        let path = dir.path().join(format!("00000{}.log", u8::from(crash)));
        let mut w = LogWriter::new(fs.create_mapped(&path).unwrap(), 5);
        for p in &payloads {
            w.add_record(p).unwrap();
        }
        w.flush().unwrap();
        let size = w.file_size();
        if crash {
            // The process dies: no unmap, no truncation.
            std::mem::forget(w);
            assert!(fs.file_size(&path).unwrap() > size);
        } else {
            w.sync().unwrap();
            drop(w);
            assert_eq!(fs.file_size(&path).unwrap(), size);
        }
        let mut r = LogReader::new(fs.open_sequential(&path).unwrap(), "x.log".into(), 5);
        let mut buf = Vec::new();
        for p in &payloads {
            assert!(matches!(
                r.read_record(&mut buf).unwrap(),
                ReadOutcome::Record { .. }
            ));
            assert!(&buf == p, "crash: {crash}");
        }
        assert_eq!(
            r.read_record(&mut buf).unwrap(),
            ReadOutcome::Eof,
            "crash: {crash}"
        );
    }
}

/// Ten records, ~64 KiB: empty ones, one spanning blocks 0 and 1, one
/// leaving a 3-byte zero-padded tail in block 1.
fn ten_records() -> Vec<Vec<u8>> {
    let mut rng = SmallRng::seed_from_u64(10);
    let h = HEADER_LEN;
    let prefix: usize = [0, 20, 3000, 1].iter().map(|n| n + h).sum();
    let spanning = 31_000;
    let in_block1 = h + spanning - (BLOCK_SIZE - prefix - h);
    let padded = BLOCK_SIZE - 3 - in_block1 - h;
    [0, 20, 3000, 1, spanning, padded, 0, 5, 40, 9]
        .iter()
        .map(|&n| payload(&mut rng, n))
        .collect()
}

#[test]
fn truncation_at_every_byte() {
    let (data, written) = write_log(5, &ten_records());
    // The fixture exercises padding and a record spanning two blocks.
    assert!(written
        .iter()
        .any(|w| w.start % BLOCK_SIZE as u64 == 0 && w.start > 0));
    assert!(written
        .iter()
        .any(|w| w.start / BLOCK_SIZE as u64 != (w.end - 1) / BLOCK_SIZE as u64));
    for cut in 0..=data.len() {
        let got = read_all(reader(data[..cut].to_vec(), 5));
        let complete = written.iter().take_while(|w| w.end <= cut as u64).count();
        let records: Vec<_> = got
            .iter()
            .filter(|(o, _)| matches!(o, ReadOutcome::Record { .. }))
            .collect();
        assert_eq!(records.len(), complete, "cut {cut}: {got:?}");
        for ((o, p), w) in records.iter().zip(&written) {
            assert_eq!(o, &ReadOutcome::Record { offset: w.start }, "cut {cut}");
            assert!(p == &w.payload, "cut {cut}");
        }
        // After the complete records: nothing, or one torn tail at the start
        // of the first incomplete record.
        let rest = &got[complete..];
        match rest {
            [] => {
                // Clean end: the cut is at a record end or inside padding,
                // or inside a header whose bytes so far are all zero.
                if let Some(next) = written.get(complete) {
                    let s = next.start as usize;
                    let lo = s.min(cut);
                    let tail = &data[lo..cut];
                    let at_boundary = cut as u64 <= next.start;
                    assert!(
                        at_boundary || tail.iter().all(|&b| b == 0),
                        "cut {cut}: Eof mid-record"
                    );
                }
            }
            [(ReadOutcome::TornTail { offset }, _)] => {
                assert_eq!(
                    Some(*offset),
                    written.get(complete).map(|w| w.start),
                    "cut {cut}"
                );
            }
            other => panic!("cut {cut}: unexpected {other:?}"),
        }
    }
}

/// Checks the outcomes of reading the damaged log `data`: every record
/// returned is a written one, in order, at its offset; every written record is
/// returned, or lies in a reported dropped range, or lies in zeros that run to
/// the end of the file (indistinguishable from preallocated space, like a
/// truncation).
fn check_damaged(got: &[(ReadOutcome, Vec<u8>)], written: &[Written], data: &[u8], ctx: &str) {
    let file_len = data.len() as u64;
    let mut next = 0usize;
    let mut dropped: Vec<(u64, u64)> = Vec::new();
    let mut returned = vec![false; written.len()];
    for (o, p) in got {
        match o {
            ReadOutcome::Record { offset } => {
                let i = written[next..]
                    .iter()
                    .position(|w| w.start == *offset)
                    .map(|i| i + next)
                    .unwrap_or_else(|| panic!("{ctx}: record at unknown offset {offset}"));
                assert!(p == &written[i].payload, "{ctx}: wrong payload at {offset}");
                returned[i] = true;
                next = i + 1;
            }
            ReadOutcome::TornTail { offset } => dropped.push((*offset, file_len)),
            ReadOutcome::Corrupt {
                offset,
                dropped_bytes,
                what,
            } => {
                assert!(!what.is_empty());
                assert!(*dropped_bytes > 0, "{ctx}: empty drop {what}");
                dropped.push((*offset, offset + dropped_bytes));
            }
            ReadOutcome::Eof => unreachable!(),
        }
    }
    for (w, ret) in written.iter().zip(&returned) {
        let covered = dropped.iter().any(|&(s, e)| s < w.end && w.start < e);
        let zero_tail = data
            .get(w.start as usize..)
            .is_some_and(|t| t.iter().all(|&b| b == 0));
        assert!(
            *ret || covered || zero_tail,
            "{ctx}: record at {} silently lost ({got:?})",
            w.start
        );
    }
}

#[test]
fn single_byte_damage_at_every_byte() {
    let (data, written) = write_log(5, &ten_records());
    for i in 0..data.len() {
        let mut d = data.clone();
        d[i] ^= 1 << (i % 8);
        let ctx = format!("flip at {i}");
        let got = read_all(reader(d.clone(), 5));
        check_damaged(&got, &written, &d, &ctx);
        if let Some(hit) = written
            .iter()
            .position(|w| w.start <= i as u64 && (i as u64) < w.end)
        {
            let damage = got
                .iter()
                .any(|(o, _)| !matches!(o, ReadOutcome::Record { .. }));
            assert!(damage, "{ctx}: damage to record {hit} not reported");
            let returned = got.iter().any(|(o, _)| {
                o == &ReadOutcome::Record {
                    offset: written[hit].start,
                }
            });
            assert!(!returned, "{ctx}: damaged record {hit} returned");
        }
    }
}

#[test]
fn random_multi_byte_damage() {
    for seed in 0..300u64 {
        let mut rng = SmallRng::seed_from_u64(seed);
        let payloads: Vec<Vec<u8>> = (0..rng.gen_range(1..30))
            .map(|_| {
                let n = if rng.gen_bool(0.1) {
                    rng.gen_range(0..70_000)
                } else {
                    rng.gen_range(0..500)
                };
                payload(&mut rng, n)
            })
            .collect();
        let (mut data, written) = write_log(5, &payloads);
        for _ in 0..rng.gen_range(1..6) {
            let i = rng.gen_range(0..data.len());
            match rng.gen_range(0..3) {
                0 => data[i] = rng.gen(),
                1 => data[i] = 0,
                _ => {
                    // Zero a whole run, as a lost page would look.
                    let end = (i + rng.gen_range(1..5000)).min(data.len());
                    data[i..end].fill(0);
                }
            }
        }
        let got = read_all(reader(data.clone(), 5));
        check_damaged(&got, &written, &data, &format!("seed {seed}"));
    }
}

#[test]
fn records_from_another_log_fail_the_check() {
    let payloads = vec![b"alpha".to_vec(), b"beta".to_vec(), b"gamma".to_vec()];
    let (a, wa) = write_log(5, &payloads);
    let (b, wb) = write_log(6, &payloads);
    // Same bytes except the checksums.
    assert_eq!(a.len(), b.len());
    assert_ne!(a, b);
    // Reading log 6's bytes as log 5: nothing passes.
    let got = read_all(reader(b.clone(), 5));
    assert!(
        matches!(&got[0].0, ReadOutcome::Corrupt { offset: 0, what, .. } if what.contains("checksum"))
    );
    assert!(got
        .iter()
        .all(|(o, _)| !matches!(o, ReadOutcome::Record { .. })));
    // Splice record 1 of log 6 into log 5: only that record fails.
    let mut spliced = a.clone();
    let (s, e) = (wb[1].start as usize, wb[1].end as usize);
    spliced[s..e].copy_from_slice(&b[s..e]);
    let got = read_all(reader(spliced, 5));
    assert_eq!(
        got[0].0,
        ReadOutcome::Record {
            offset: wa[0].start
        }
    );
    assert!(matches!(&got[1].0, ReadOutcome::Corrupt { offset, .. } if *offset == wa[1].start));
    assert!(got.iter().all(|(_, p)| p.as_slice() != b"beta"));
}

#[test]
fn zero_filled_tail_is_clean_eof() {
    let payloads = vec![vec![1u8; 100], vec![2u8; 40_000]];
    let (mut data, written) = write_log(5, &payloads);
    let len = data.len();
    data.resize(len + 3 * BLOCK_SIZE + 5, 0); // preallocated space
    let got = read_all(reader(data.clone(), 5));
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[1].0,
        ReadOutcome::Record {
            offset: written[1].start
        }
    );

    // A FIRST fragment followed by zeros: the writer died mid-record.
    let (mut data, written) = write_log(5, &[vec![1u8; 10], vec![2u8; 40_000]]);
    data.truncate(BLOCK_SIZE);
    data.resize(3 * BLOCK_SIZE, 0);
    let got = read_all(reader(data, 5));
    assert_eq!(got.len(), 2);
    assert_eq!(
        got[1].0,
        ReadOutcome::TornTail {
            offset: written[1].start
        }
    );
}

#[test]
fn zero_filled_gap_inside_the_log_is_corruption() {
    let payloads: Vec<Vec<u8>> = (0..60).map(|i| vec![i as u8; 1500]).collect();
    let (mut data, written) = write_log(5, &payloads);
    // Lose block 1 (zeroed, as after a crash on some file systems).
    data[BLOCK_SIZE..2 * BLOCK_SIZE].fill(0);
    let got = read_all(reader(data.clone(), 5));
    check_damaged(&got, &written, &data, "gap");
    let gap = got
        .iter()
        .find_map(|(o, _)| match o {
            ReadOutcome::Corrupt { offset, what, .. } if what.contains("zero-filled gap") => {
                Some(*offset)
            }
            _ => None,
        })
        .expect("gap reported");
    // The gap report starts at the record cut by it (its FIRST is in block 0).
    let cut = written.iter().find(|w| w.end > BLOCK_SIZE as u64).unwrap();
    assert_eq!(gap, cut.start);
    // Records after the gap come back.
    let last = written.last().unwrap().start;
    assert!(got
        .iter()
        .any(|(o, _)| o == &ReadOutcome::Record { offset: last }));
}

/// Builds a log by hand from (type, payload) physical records in one block.
fn hand_log(log_number: u64, records: &[(u8, &[u8])]) -> Vec<u8> {
    let seeds = CrcSeeds::new(log_number);
    let mut d = Vec::new();
    for (t, p) in records {
        d.extend_from_slice(&seeds.record_crc(*t, p).to_le_bytes());
        d.extend_from_slice(&(p.len() as u16).to_le_bytes());
        d.push(*t);
        d.extend_from_slice(p);
    }
    d
}

#[test]
fn irregular_fragment_sequences() {
    let full = RecordType::Full as u8;
    let first = RecordType::First as u8;
    let middle = RecordType::Middle as u8;
    let last = RecordType::Last as u8;

    // FIRST then FULL: the partial record is reported, the FULL returned.
    let d = hand_log(5, &[(first, b"ab"), (full, b"x")]);
    let got = read_all(reader(d, 5));
    assert_eq!(
        got[0].0,
        ReadOutcome::Corrupt {
            offset: 0,
            what: "record without its LAST fragment".into(),
            dropped_bytes: 9
        }
    );
    assert_eq!(got[1], (ReadOutcome::Record { offset: 9 }, b"x".to_vec()));
    assert_eq!(got.len(), 2);

    // MIDDLE and LAST without FIRST: one report covering both.
    let d = hand_log(5, &[(middle, b"m"), (last, b"l"), (full, b"y")]);
    let got = read_all(reader(d, 5));
    assert_eq!(
        got[0].0,
        ReadOutcome::Corrupt {
            offset: 0,
            what: "fragments without a FIRST fragment".into(),
            dropped_bytes: 16
        }
    );
    assert_eq!(got[1], (ReadOutcome::Record { offset: 16 }, b"y".to_vec()));

    // MIDDLE without FIRST, then FULL.
    let d = hand_log(5, &[(middle, b"m"), (full, b"y")]);
    let got = read_all(reader(d, 5));
    assert!(matches!(
        got[0].0,
        ReadOutcome::Corrupt {
            offset: 0,
            dropped_bytes: 8,
            ..
        }
    ));
    assert_eq!(got[1].0, ReadOutcome::Record { offset: 8 });

    // FIRST MIDDLE at end of file: torn tail at the FIRST.
    let d = hand_log(5, &[(full, b"z"), (first, b"a"), (middle, b"b")]);
    let got = read_all(reader(d, 5));
    assert_eq!(got[1].0, ReadOutcome::TornTail { offset: 8 });
    assert_eq!(got.len(), 2);

    // A valid-checksum record of unknown type: reported, reading goes on
    // right after it (its length is trustworthy).
    let d = hand_log(5, &[(9, b"future"), (full, b"ok")]);
    let got = read_all(reader(d, 5));
    assert_eq!(
        got[0].0,
        ReadOutcome::Corrupt {
            offset: 0,
            what: "unknown record type 9".into(),
            dropped_bytes: 13
        }
    );
    assert_eq!(got[1], (ReadOutcome::Record { offset: 13 }, b"ok".to_vec()));

    // FIRST, FIRST+LAST: first partial reported, second record returned.
    let d = hand_log(5, &[(first, b"a"), (first, b"b"), (last, b"c")]);
    let got = read_all(reader(d, 5));
    assert!(matches!(
        got[0].0,
        ReadOutcome::Corrupt {
            offset: 0,
            dropped_bytes: 8,
            ..
        }
    ));
    assert_eq!(got[1], (ReadOutcome::Record { offset: 8 }, b"bc".to_vec()));
}

#[test]
fn length_past_a_full_block_is_corruption_not_torn() {
    let (mut data, written) = write_log(5, &[vec![1; 10], vec![2; 40_000], vec![3; 10]]);
    // Record 0's length now runs past the end of block 0 (a full block).
    data[4..6].copy_from_slice(&(MAX_FRAGMENT_LEN as u16 + 1).to_le_bytes());
    let got = read_all(reader(data.clone(), 5));
    assert!(
        matches!(&got[0].0, ReadOutcome::Corrupt { offset: 0, what, dropped_bytes }
        if what.contains("exceeds") && *dropped_bytes == BLOCK_SIZE as u64)
    );
    check_damaged(&got, &written, &data, "long length");
    assert_eq!(
        got.last().unwrap().0,
        ReadOutcome::Record {
            offset: written[2].start
        }
    );
}

#[test]
fn zero_header_followed_by_data_is_corruption() {
    let mut d = vec![0u8; HEADER_LEN];
    d.extend_from_slice(&hand_log(5, &[(RecordType::Full as u8, b"x")]));
    let got = read_all(reader(d, 5));
    assert!(
        matches!(&got[0].0, ReadOutcome::Corrupt { offset: 0, what, .. } if what.contains("zero header"))
    );
    assert_eq!(got.len(), 1);
}

#[test]
fn empty_file_and_short_garbage() {
    assert!(read_all(reader(Vec::new(), 5)).is_empty());
    assert!(read_all(reader(vec![0; 3], 5)).is_empty());
    let got = read_all(reader(vec![1, 2, 3], 5));
    assert_eq!(got[0].0, ReadOutcome::TornTail { offset: 0 });
}

/// The predecessor-WAL record is read, not returned; `valid_end` covers it
/// and every whole record; a truncated copy ends earlier.
#[test]
fn predecessor_record_and_valid_end() {
    use super::format::PredecessorWal;
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 5);
    let p = PredecessorWal {
        log_number: 4,
        size: 1234,
        last_sequence: 99,
    };
    w.add_predecessor(&p).unwrap();
    assert!(w.has_no_records());
    let meta_end = w.file_size();
    assert_eq!(meta_end, (HEADER_LEN + PredecessorWal::LEN) as u64);
    w.add_record(&[1u8; 40_000]).unwrap(); // fragmented
    assert!(!w.has_no_records());
    w.add_record(b"b").unwrap();
    let full_end = w.file_size();
    w.flush().unwrap();
    let data = bytes.lock().clone();

    let mut r = reader(data.clone(), 5);
    let mut buf = Vec::new();
    assert!(
        matches!(r.read_record(&mut buf).unwrap(), ReadOutcome::Record { offset } if offset == meta_end)
    );
    assert_eq!(r.predecessor(), Some(p));
    assert_eq!(buf.len(), 40_000);
    assert_eq!(
        r.read_record(&mut buf).unwrap(),
        ReadOutcome::Record {
            offset: full_end - 8
        }
    );
    assert_eq!(r.read_record(&mut buf).unwrap(), ReadOutcome::Eof);
    assert_eq!(r.valid_end(), full_end);

    // Cut inside the last record: whole records end before it.
    let mut r = reader(data[..full_end as usize - 3].to_vec(), 5);
    while !matches!(
        r.read_record(&mut buf).unwrap(),
        ReadOutcome::Eof | ReadOutcome::TornTail { .. }
    ) {}
    assert_eq!(r.valid_end(), full_end - 8);
    // Only the predecessor record survived.
    let mut r = reader(data[..meta_end as usize].to_vec(), 5);
    assert_eq!(r.read_record(&mut buf).unwrap(), ReadOutcome::Eof);
    assert_eq!((r.predecessor(), r.valid_end()), (Some(p), meta_end));
}

/// Metadata types this version does not know are skipped; a predecessor
/// record of the wrong length, or metadata inside a fragmented record, is
/// corruption.
#[test]
fn unknown_metadata_is_skipped_and_bad_metadata_is_corruption() {
    let full = RecordType::Full as u8;
    let first = RecordType::First as u8;
    let last = RecordType::Last as u8;
    let got = read_all(reader(hand_log(5, &[(0x99, b"future"), (full, b"x")]), 5));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, b"x");
    let got = read_all(reader(hand_log(5, &[(130, b"short"), (full, b"x")]), 5));
    assert!(
        matches!(&got[0].0, ReadOutcome::Corrupt { offset: 0, what, .. } if what.contains("predecessor"))
    );
    assert_eq!(got[1].1, b"x");
    let got = read_all(reader(
        hand_log(5, &[(first, b"a"), (0x99, b"m"), (last, b"b")]),
        5,
    ));
    assert!(
        matches!(&got[0].0, ReadOutcome::Corrupt { offset: 0, what, .. } if what.contains("LAST"))
    );
}

/// Reads `path` of `fs` as log `number` until its end: the records, and
/// the outcome that ended the reading.
fn read_log_file(fs: &dyn FileSystem, path: &str, number: u64) -> (Vec<Vec<u8>>, ReadOutcome) {
    let file = fs.open_sequential(std::path::Path::new(path)).unwrap();
    let mut r = LogReader::new(file, path.into(), number);
    let mut got = Vec::new();
    let mut buf = Vec::new();
    loop {
        match r.read_record(&mut buf).unwrap() {
            ReadOutcome::Record { .. } => got.push(buf.clone()),
            other => return (got, other),
        }
    }
}

/// A recycled log (issue 16): log 9 written over log 5's file ends where its
/// own records end. Log 5's records after them read as the end of the log,
/// never as records nor as corruption, live and in every power-loss image
/// taken while 9 is written (dropped blocks read as 5's bytes): an image
/// holds a prefix of 9's records, at least the synced ones. Only an image
/// that lost 9's first block (nothing synced yet) reads as damage at 0.
#[test]
fn recycled_log_ends_at_the_old_records() {
    use super::format::PredecessorWal;
    use crate::fs::MemFileSystem;
    use std::path::Path;
    let fs = MemFileSystem::new();
    fs.create_dir_all(Path::new("/d")).unwrap();
    let mut rng = SmallRng::seed_from_u64(16);
    let old: Vec<Vec<u8>> = (0..300)
        .map(|i| vec![i as u8; rng.gen_range(1..3000)])
        .collect();
    let mut w = LogWriter::new(fs.create(Path::new("/d/5.log")).unwrap(), 5);
    for p in &old {
        w.add_record(p).unwrap();
    }
    w.finish().unwrap();
    w.sync().unwrap();
    drop(w);
    fs.sync_dir(Path::new("/d")).unwrap();

    let file = fs
        .reuse_writable(Path::new("/d/5.log"), Path::new("/d/9.log"), true)
        .unwrap();
    fs.sync_dir(Path::new("/d")).unwrap();
    let mut w = LogWriter::new(file, 9);
    let pred = PredecessorWal {
        log_number: 8,
        size: 0,
        last_sequence: 0,
    };
    w.add_predecessor(&pred).unwrap();
    w.add_recycled(5).unwrap();
    assert!(w.has_no_records());
    let new: Vec<Vec<u8>> = (0..40)
        .map(|i| vec![100 + i as u8; rng.gen_range(1..9000)])
        .collect();
    let mut synced = 0;
    for (i, p) in new.iter().enumerate() {
        w.add_record(p).unwrap();
        if i % 7 == 6 {
            w.sync().unwrap();
            synced = i + 1;
        } else {
            w.flush().unwrap();
        }
        let (got, end) = read_log_file(&fs, "/d/9.log", 9);
        assert_eq!((got.as_slice(), &end), (&new[..=i], &ReadOutcome::Eof));
        for seed in 0..8 {
            let img = fs.crash(0.5, seed * 1000 + i as u64);
            let (got, end) = read_log_file(&img, "/d/9.log", 9);
            let ctx = format!("record {i} seed {seed}: {} records, {end:?}", got.len());
            if synced == 0 && matches!(end, ReadOutcome::Corrupt { offset: 0, .. }) {
                assert!(got.is_empty(), "{ctx}");
                continue;
            }
            assert!(
                matches!(end, ReadOutcome::Eof | ReadOutcome::TornTail { .. }),
                "{ctx}"
            );
            assert!(got.len() >= synced, "{ctx}: synced {synced}");
            assert_eq!(got.as_slice(), &new[..got.len()], "{ctx}");
        }
    }
    w.finish().unwrap();
    w.sync().unwrap();
    let file = fs.open_sequential(Path::new("/d/9.log")).unwrap();
    let mut r = LogReader::new(file, "9".into(), 9);
    let mut buf = Vec::new();
    while let ReadOutcome::Record { .. } = r.read_record(&mut buf).unwrap() {}
    assert_eq!(r.recycled_from(), Some(5));
    assert_eq!(r.predecessor(), Some(pred));
    // Cut to its records once finished: nothing old is left.
    assert_eq!(fs.file_size(Path::new("/d/9.log")).unwrap(), w.file_size());
}

/// Without the recycled-log record the same old bytes are corruption: the
/// rule applies to recycled logs only.
#[test]
fn old_records_in_a_log_not_marked_recycled_are_corruption() {
    let (mut old, _) = write_log(5, &[vec![1u8; 500], vec![2u8; 500], vec![3u8; 500]]);
    let (new, _) = write_log(9, &[vec![7u8; 600]]);
    old[..new.len()].copy_from_slice(&new);
    let got = read_all(reader(old, 9));
    assert_eq!(got[0].1, vec![7u8; 600]);
    assert!(
        matches!(got[1].0, ReadOutcome::Corrupt { .. }),
        "{:?}",
        got[1].0
    );
}

/// Time, unlogged-writes and ingestion records (WAL version 4) between
/// logical records, at every position in a block (so some need a padding
/// record or a zero tail first): every logical record reads back, the
/// marks come out in log order before the record that follows them, and a
/// reader that does not collect marks reads the same records.
#[test]
fn metadata_marks_read_back_in_order_at_every_block_position() {
    use super::format::{SeqTime, FAMILY_TYPE, INGESTED_TYPE, TIME_TYPE, UNLOGGED_TYPE};
    use super::Mark;
    let mut rng = SmallRng::seed_from_u64(4);
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 9);
    /// (type, first sequence number) of each mark before a record, and the
    /// record.
    type Expected = (Vec<(u8, u64)>, Vec<u8>);
    let mut want: Vec<Expected> = Vec::new();
    for i in 0..2000u64 {
        let mut marks = Vec::new();
        for k in 0..rng.gen_range(0..3u64) {
            let typ =
                [TIME_TYPE, UNLOGGED_TYPE, INGESTED_TYPE, FAMILY_TYPE][((i + k) % 4) as usize];
            let p = SeqTime {
                first: i * 10 + k,
                second: i * 10 + k + 1,
            };
            w.add_metadata(typ, &p.encode()).unwrap();
            marks.push((typ, p.first));
        }
        let len = rng.gen_range(0..64usize);
        let p = payload(&mut rng, len);
        w.add_record(&p).unwrap();
        want.push((marks, p));
    }
    w.flush().unwrap();
    let data = bytes.lock().clone();
    let plain: Vec<Vec<u8>> = read_all(reader(data.clone(), 9))
        .into_iter()
        .map(|(o, p)| {
            assert!(matches!(o, ReadOutcome::Record { .. }), "{o:?}");
            p
        })
        .collect();
    assert_eq!(
        plain,
        want.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>()
    );
    let mut r = reader(data, 9);
    r.collect_marks();
    let mut buf = Vec::new();
    for (marks, p) in &want {
        let o = r.read_record(&mut buf).unwrap();
        assert!(matches!(o, ReadOutcome::Record { .. }), "{o:?}");
        assert_eq!(&buf, p);
        let got: Vec<(u8, u64)> = r
            .take_marks()
            .into_iter()
            .map(|m| match m {
                Mark::Time { seq, .. } => (TIME_TYPE, seq),
                Mark::Unlogged { first, .. } => (UNLOGGED_TYPE, first),
                Mark::Ingested { first, .. } => (INGESTED_TYPE, first),
                Mark::Family { seq, .. } => (FAMILY_TYPE, seq),
            })
            .collect();
        assert_eq!(&got, marks);
    }
    assert_eq!(r.read_record(&mut buf).unwrap(), ReadOutcome::Eof);
}
