use super::super::format::MAX_FRAGMENT_LEN;
use super::super::test_util::{FailingFile, MemFile};
use super::*;

#[test]
fn header_bytes_of_a_small_record() {
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 42);
    w.add_record(b"hello").unwrap();
    w.add_record(b"").unwrap();
    let b = bytes.lock().clone();
    assert_eq!(b.len(), 2 * HEADER_LEN + 5);
    assert_eq!(w.file_size(), b.len() as u64);
    let crc = CrcSeeds::new(42).record_crc(1, b"hello");
    assert_eq!(&b[..4], &crc.to_le_bytes());
    assert_eq!(&b[4..7], &[5, 0, 1]);
    assert_eq!(&b[7..12], b"hello");
    let crc0 = CrcSeeds::new(42).record_crc(1, b"");
    assert_eq!(&b[12..16], &crc0.to_le_bytes());
    assert_eq!(&b[16..19], &[0, 0, 1]);
}

#[test]
fn golden_bytes_of_log_42() {
    // The example in docs/format/wal.md.
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 42);
    w.add_record(b"hello").unwrap();
    let want = [
        0xa3, 0xae, 0x4e, 0xbf, 5, 0, 1, b'h', b'e', b'l', b'l', b'o',
    ];
    assert_eq!(&bytes.lock()[..], &want[..]);
}

#[test]
fn fragments_and_pads() {
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 1);
    // Leave 3 bytes in the first block: they are zero padding.
    w.add_record(&vec![b'a'; BLOCK_SIZE - 3 - HEADER_LEN])
        .unwrap();
    w.add_record(&vec![b'b'; 2 * MAX_FRAGMENT_LEN + 10])
        .unwrap();
    let b = bytes.lock().clone();
    assert_eq!(&b[BLOCK_SIZE - 3..BLOCK_SIZE], &[0, 0, 0]);
    // FIRST fills block 2, MIDDLE fills block 3, LAST holds 10 bytes.
    assert_eq!(b[BLOCK_SIZE + 6], RecordType::First as u8);
    assert_eq!(
        &b[BLOCK_SIZE + 4..BLOCK_SIZE + 6],
        &(MAX_FRAGMENT_LEN as u16).to_le_bytes()
    );
    assert_eq!(b[2 * BLOCK_SIZE + 6], RecordType::Middle as u8);
    assert_eq!(b[3 * BLOCK_SIZE + 6], RecordType::Last as u8);
    assert_eq!(b.len(), 3 * BLOCK_SIZE + HEADER_LEN + 10);
}

#[test]
fn exactly_a_header_left_gives_an_empty_first_fragment() {
    let (file, bytes) = MemFile::new();
    let mut w = LogWriter::new(Box::new(file), 1);
    w.add_record(&vec![1; BLOCK_SIZE - 2 * HEADER_LEN]).unwrap();
    w.add_record(b"xyz").unwrap();
    let b = bytes.lock().clone();
    // Block 1 ends with an empty FIRST; the payload is in a LAST in block 2.
    assert_eq!(
        &b[BLOCK_SIZE - 3..BLOCK_SIZE],
        &[0, 0, RecordType::First as u8]
    );
    assert_eq!(b[BLOCK_SIZE + 6], RecordType::Last as u8);
}

#[test]
fn io_error_poisons() {
    let mut w = LogWriter::new(
        Box::new(FailingFile {
            fail_after: 10,
            len: 0,
        }),
        3,
    );
    assert!(w.add_record(b"0123456789abcdef").is_err());
    assert!(matches!(w.add_record(b"x"), Err(Error::Poisoned(_))));
    assert!(matches!(w.sync(), Err(Error::Poisoned(_))));
    assert!(matches!(w.flush(), Err(Error::Poisoned(_))));
    assert_eq!(w.log_number(), 3);
}
