//! The `blob_record` check: arbitrary bytes through every blob decoder
//! (docs/format/blob.md): `BlobIndex::decode`, the header and footer
//! decoders, `decode_record` on every record a reference walk finds, and
//! the bytes as a whole blob file ([`BLOB_FILE`]) through
//! `BlobFileReader::open`, `read` and `verify_all`; raw, then with the
//! checksums and footer totals recomputed ([`repair_blob`]).
//!
//! Invariants checked, against a reference decoder written from the doc:
//! - the index, header and footer decoders accept exactly what the
//!   reference accepts (same fields); a decoded index re-encodes to itself;
//! - a record passes `decode_record` only if its checksum and compression
//!   byte are good, and an uncompressed one always does, with its bytes;
//! - `open` succeeds exactly when the reference finds a good header naming
//!   [`BLOB_NUMBER`] and a footer whose totals fit the file;
//! - `read` of every record gives what `decode_record` gives, and
//!   `verify_all` succeeds exactly when the records fill the file to the
//!   footer, their count matches and each one decodes;
//! - no read is longer than the file (a read is the reader's allocation);
//! - every error is `Corruption` naming [`BLOB_FILE`].
//!
//! Thread-safety: plain functions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shale::fs::RandomAccessFile;
use shale::testing::{
    blob_decode_footer, blob_decode_header, blob_decode_record, BlobIndex, BlobReader,
    BLOB_FOOTER_LEN, BLOB_HEADER_LEN, BLOB_MAGIC, BLOB_RECORD_HEADER_LEN,
};
use shale::{Error, Result};

use crate::codec::{decode_fixed32, decode_fixed64, get_varint64, masked_crc32c};
use crate::{is_corruption_in, BLOB_FILE, BLOB_NUMBER};

/// Header bytes covered by its crc (docs/format/blob.md, "Header").
const HEADER_CRC_AT: usize = 20;
/// Footer bytes covered by its crc (docs/format/blob.md, "Footer").
const FOOTER_CRC_AT: usize = 16;
/// Highest compression type byte (0 none, 1 LZ4, 2 zstd).
const MAX_COMPRESSION: u8 = 2;

/// Decodes `data` as a blob index (an SST entry's value), then runs the
/// blob file decoders over it, raw and with the checksums and footer
/// totals repaired. Returns 1 when `data` is a blob index, else the number
/// of records `verify_all` found in the repaired file (no input is both: a
/// blob index starts with byte 1, a blob file with its magic).
pub fn blob_record(data: &[u8]) -> Result<usize> {
    let index = check_index(data);
    let _ = check_file(data);
    let mut fixed = data.to_vec();
    repair_blob(&mut fixed);
    let records = check_file(&fixed);
    match index {
        Some(_) => Ok(1),
        None => records,
    }
}

/// An in-memory `RandomAccessFile` remembering its longest read.
struct MemRandom {
    data: Vec<u8>,
    longest_read: AtomicUsize,
}

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.longest_read.fetch_max(buf.len(), Ordering::Relaxed);
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.data.get(o..)?.get(..buf.len()));
        match src {
            Some(s) => {
                buf.copy_from_slice(s);
                Ok(())
            }
            None => {
                let kind = std::io::ErrorKind::UnexpectedEof;
                Err(Error::Io {
                    context: "read".into(),
                    kind,
                    message: std::io::Error::from(kind).to_string(),
                })
            }
        }
    }
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

/// The reference blob index decoder: (file number, offset, size,
/// compression).
fn ref_index(src: &[u8]) -> Option<(u64, u64, u64, u8)> {
    let (&1, mut rest) = src.split_first()? else {
        return None;
    };
    let file = get_varint64(&mut rest)?;
    let offset = get_varint64(&mut rest)?;
    let size = get_varint64(&mut rest)?;
    match rest {
        [c] if *c <= MAX_COMPRESSION => Some((file, offset, size, *c)),
        _ => None,
    }
}

/// The reference header decoder: (compression, column family, file number).
fn ref_header(b: &[u8]) -> Option<(u8, u32, u64)> {
    let ok = b.len() == BLOB_HEADER_LEN
        && decode_fixed32(b) == Some(BLOB_MAGIC)
        && decode_fixed32(&b[HEADER_CRC_AT..]) == Some(masked_crc32c(&[&b[..HEADER_CRC_AT]]))
        && b[4] == 1
        && b[6..8] == [0, 0]
        && b[5] <= MAX_COMPRESSION;
    if !ok {
        return None;
    }
    Some((b[5], decode_fixed32(&b[8..])?, decode_fixed64(&b[12..])?))
}

/// The reference footer decoder: (record count, record bytes).
fn ref_footer(b: &[u8]) -> Option<(u64, u64)> {
    let ok = b.len() == BLOB_FOOTER_LEN
        && decode_fixed32(&b[24..]) == Some(BLOB_MAGIC)
        && decode_fixed32(&b[FOOTER_CRC_AT..]) == Some(masked_crc32c(&[&b[..FOOTER_CRC_AT]]))
        && b[20..24] == [0, 0, 0, 0];
    if !ok {
        return None;
    }
    Some((decode_fixed64(b)?, decode_fixed64(&b[8..])?))
}

/// One record found by [`ref_walk`].
struct Record<'a> {
    offset: u64,
    bytes: &'a [u8],
    key: &'a [u8],
    value: &'a [u8],
    compression: u8,
    /// Checksum good (bound to [`BLOB_NUMBER`] and `offset`) and
    /// compression byte known.
    good: bool,
}

impl Record<'_> {
    /// The index the engine would have handed out for this record.
    fn index(&self) -> BlobIndex {
        BlobIndex {
            file_number: BLOB_NUMBER,
            offset: self.offset,
            size: self.value.len() as u64,
            compression: self.compression,
        }
    }
}

/// Splits `data[HEADER_LEN..end]` into records back to back while each
/// one fits; returns them and where the walk stopped.
fn ref_walk(data: &[u8], end: usize) -> (Vec<Record<'_>>, usize) {
    let mut out = Vec::new();
    let mut o = BLOB_HEADER_LEN;
    let region = data.get(..end).unwrap_or_default();
    while let Some(h) = region.get(o..o + BLOB_RECORD_HEADER_LEN) {
        let (Some(klen), Some(vlen)) = (decode_fixed32(&h[4..]), decode_fixed32(&h[8..])) else {
            break;
        };
        let key_at = o + BLOB_RECORD_HEADER_LEN;
        let value_at = key_at + klen as usize;
        let Some(bytes) = region.get(o..value_at + vlen as usize) else {
            break;
        };
        let body = &bytes[BLOB_RECORD_HEADER_LEN..];
        let crc = masked_crc32c(&[
            &BLOB_NUMBER.to_le_bytes(),
            &(o as u64).to_le_bytes(),
            &bytes[4..],
        ]);
        let compression = h[12];
        out.push(Record {
            offset: o as u64,
            bytes,
            key: &body[..klen as usize],
            value: &body[klen as usize..],
            compression,
            good: decode_fixed32(h) == Some(crc) && compression <= MAX_COMPRESSION,
        });
        o += bytes.len();
    }
    (out, o)
}

fn assert_corruption_at(e: &Error, offset: u64, what: &str) {
    assert!(
        matches!(e, Error::Corruption { file, offset: o, .. } if file == BLOB_FILE && *o == offset),
        "{what}: {e:?} is not corruption in {BLOB_FILE} at {offset}"
    );
}

/// The index decoder against the reference; a decoded index must
/// re-encode to an equal one.
fn check_index(data: &[u8]) -> Option<BlobIndex> {
    let idx = BlobIndex::decode(data);
    let fields = idx.map(|i| (i.file_number, i.offset, i.size, i.compression));
    assert_eq!(fields, ref_index(data), "blob index decoders differ");
    if let Some(i) = idx {
        assert_eq!(BlobIndex::decode(&i.encode()), Some(i), "index round trip");
        let _ = i.record_len(data.len());
    }
    idx
}

/// The header, footer and record decoders, and the reader over the whole
/// of `data`.
fn check_file(data: &[u8]) -> Result<usize> {
    // Header and footer decoders.
    let head = data.get(..BLOB_HEADER_LEN).unwrap_or(data);
    let header = blob_decode_header(head, BLOB_FILE);
    match &header {
        Ok(h) => assert_eq!(
            Some((h.compression, h.column_family, h.file_number)),
            ref_header(head),
            "header decoders differ"
        ),
        Err(e) => {
            assert_eq!(ref_header(head), None, "header refused: {e:?}");
            assert_corruption_at(e, 0, "header");
        }
    }
    let fo = data.len().saturating_sub(BLOB_FOOTER_LEN);
    let tail = &data[fo..];
    let footer = blob_decode_footer(tail, BLOB_FILE, fo as u64);
    match &footer {
        Ok(f) => assert_eq!(Some(*f), ref_footer(tail), "footer decoders differ"),
        Err(e) => {
            assert_eq!(ref_footer(tail), None, "footer refused: {e:?}");
            assert_corruption_at(e, fo as u64, "footer");
        }
    }

    // Every record the reference walk finds, through the pure decoder.
    let whole = data.len() >= BLOB_HEADER_LEN + BLOB_FOOTER_LEN;
    let (records, walked_to) = ref_walk(data, if whole { fo } else { data.len() });
    let mut decoded = Vec::with_capacity(records.len());
    for r in &records {
        let got = blob_decode_record(r.bytes, BLOB_NUMBER, r.offset, &r.index(), r.key, BLOB_FILE);
        match &got {
            Ok(v) => {
                assert!(r.good, "bad record at {} decoded", r.offset);
                if r.compression == 0 {
                    assert_eq!(v[..], r.value[..], "record at {}", r.offset);
                }
            }
            Err(e) => {
                assert!(!r.good || r.compression != 0, "good record refused: {e:?}");
                assert_corruption_at(e, r.offset, "record");
            }
        }
        decoded.push(got);
    }

    // The bytes as a whole blob file.
    let file = Arc::new(MemRandom {
        data: data.to_vec(),
        longest_read: AtomicUsize::new(0),
    });
    let opened = BlobReader::open(
        Arc::clone(&file) as Arc<dyn RandomAccessFile>,
        BLOB_FILE,
        BLOB_NUMBER,
    );
    let region = fo.saturating_sub(BLOB_HEADER_LEN) as u64;
    let fits = |&(count, bytes): &(u64, u64)| bytes == region && count <= bytes / 13;
    let openable = whole
        && header.as_ref().is_ok_and(|h| h.file_number == BLOB_NUMBER)
        && footer.as_ref().is_ok_and(fits);
    let reader = match opened {
        Ok(r) => r,
        Err(e) => {
            assert!(!openable, "open refused a good file: {e:?}");
            assert!(is_corruption_in(&e, BLOB_FILE), "open error {e:?}");
            return Err(e);
        }
    };
    assert!(openable, "open accepted a bad file");
    let count = footer.as_ref().map_or(0, |f| f.0);
    assert_eq!(
        (reader.record_count(), reader.total_bytes()),
        (count, region)
    );

    for (r, want) in records.iter().zip(&decoded) {
        assert_eq!(
            &reader.read(&r.index(), r.key),
            want,
            "read at {}",
            r.offset
        );
        // Indexes that can never be right.
        let i = r.index();
        for bad in [
            BlobIndex {
                file_number: BLOB_NUMBER + 1,
                ..i
            },
            BlobIndex {
                size: u64::MAX,
                ..i
            },
            BlobIndex {
                offset: data.len() as u64,
                ..i
            },
        ] {
            let e = reader.read(&bad, r.key).unwrap_err();
            assert_corruption_at(&e, bad.offset, "bad index");
        }
        // Indexes that are very likely wrong: no panic, errors name the file.
        for other in [
            BlobIndex {
                size: i.size + 1,
                ..i
            },
            BlobIndex {
                offset: i.offset + 1,
                ..i
            },
        ] {
            if let Err(e) = reader.read(&other, r.key) {
                assert_corruption_at(&e, other.offset, "other index");
            }
        }
    }

    let verified = reader.verify_all();
    let all_good =
        walked_to == fo && records.len() as u64 == count && decoded.iter().all(|d| d.is_ok());
    match &verified {
        Ok(n) => {
            assert!(all_good, "verify_all accepted a bad file");
            assert_eq!(*n, count);
        }
        Err(e) => {
            assert!(!all_good, "verify_all refused a good file: {e:?}");
            assert!(is_corruption_in(e, BLOB_FILE), "verify_all error {e:?}");
        }
    }
    let longest = file.longest_read.load(Ordering::Relaxed);
    assert!(
        longest <= data.len(),
        "read {longest} bytes of a {}-byte file",
        data.len()
    );
    verified.map(|n| n as usize)
}

/// Forces the magic numbers and version, and recomputes the header crc,
/// the crc of every record the walk from the header reaches (bound to
/// [`BLOB_NUMBER`]), the footer totals (the walked records and the bytes
/// between header and footer) and the footer crc, so that mutations reach
/// the decoders behind the checks. Never panics. On a valid blob file
/// [`BLOB_NUMBER`] it changes nothing.
pub fn repair_blob(d: &mut [u8]) {
    let len = d.len();
    if let Some(h) = d.get_mut(..BLOB_HEADER_LEN) {
        h[..4].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
        h[4] = 1;
        let crc = masked_crc32c(&[&h[..HEADER_CRC_AT]]);
        h[HEADER_CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    }
    let Some(fo) = len.checked_sub(BLOB_FOOTER_LEN + BLOB_HEADER_LEN) else {
        return;
    };
    let fo = fo + BLOB_HEADER_LEN;
    let (records, _) = ref_walk(d, fo);
    let fixes: Vec<(usize, u32)> = records
        .iter()
        .map(|r| {
            let crc = masked_crc32c(&[
                &BLOB_NUMBER.to_le_bytes(),
                &r.offset.to_le_bytes(),
                &r.bytes[4..],
            ]);
            (r.offset as usize, crc)
        })
        .collect();
    for (o, crc) in fixes.iter().copied() {
        d[o..o + 4].copy_from_slice(&crc.to_le_bytes());
    }
    let f = &mut d[fo..];
    f[..8].copy_from_slice(&(fixes.len() as u64).to_le_bytes());
    f[8..16].copy_from_slice(&((fo - BLOB_HEADER_LEN) as u64).to_le_bytes());
    let crc = masked_crc32c(&[&f[..FOOTER_CRC_AT]]);
    f[FOOTER_CRC_AT..FOOTER_CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
    f[24..].copy_from_slice(&BLOB_MAGIC.to_le_bytes());
}
