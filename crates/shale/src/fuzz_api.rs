//! Entry points for fuzzing the on-disk decoders (feature `fuzzing`, and
//! compiled for the crate's own tests). Hidden from the docs; not a stable
//! API. The cargo-fuzz crate in `/fuzz` calls only these functions.
//!
//! Each function takes arbitrary bytes, runs one decoder over them the way
//! the engine does, and returns the decoder's `Result`. Bad input must give
//! `Err` (normally `Corruption` naming the file); it must never panic, hang
//! or allocate without bound. The functions also check *differential*
//! invariants that hold for any input (a reference decoder, forward versus
//! backward iteration, re-encoding, the recovery-mode table) with `assert!`:
//! a panic here is always an engine bug, never a harness limitation.
//!
//! Checksums would stop almost every mutated input at the first check, so
//! `table` and `wal` run twice: on the raw bytes, then on a copy whose block
//! trailers / record headers were recomputed (`repair_sst`, `repair_wal`),
//! which lets the fuzzer reach the block, properties, filter, compression and
//! fragment-reassembly decoders behind the checksums.
//!
//! Thread-safety: plain functions over borrowed bytes; no shared state.

use std::sync::Arc;

use crate::base::{compare_internal, MAX_SEQNO, TRAILER_LEN};
use crate::batch::WriteBatch;
use crate::codec::{crc32c, crc32c_extend, decode_fixed32, get_varint32, mask_crc};
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, SequentialFile};
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::options::WalRecoveryMode;
use crate::sst::{Block, BlockHandle, BlockIterator, Table, FORMAT_VERSION, MAGIC};
use crate::version::VersionEdit;
use crate::wal::{replay, LogReader, ReadOutcome, BLOCK_SIZE, HEADER_LEN};

/// File name used in errors for fuzzed SSTs and blocks.
pub const SST_FILE: &str = "000001.sst";
/// File name used in errors for fuzzed logs.
pub const WAL_FILE: &str = "000007.log";
/// Log number the fuzzed logs are bound to (the seed corpus uses it too).
pub const WAL_NUMBER: u64 = 7;
/// Footer layout (docs/format/sst.md): 60 bytes, crc at 48, magic at 52.
const FOOTER_LEN: usize = 60;
const TRAILER: usize = 5;
/// Most entries a table walk visits before giving up (an index may point
/// many times at one block; that is legal-looking, not a hang).
const MAX_TABLE_STEPS: usize = 20_000;

/// Iterates a block (uncompressed bytes, as after decompression) forwards,
/// backwards and by seeks, against a reference decoder. Returns the number
/// of entries. (Decompression is reached through `table`.)
pub fn block(data: &[u8]) -> Result<usize> {
    check_block(data.to_vec())
}

/// Opens `data` as an SST (`Table::open`), iterates it both ways and looks
/// up every key found; then does the same with the checksums repaired.
/// Returns the number of entries of the repaired table.
pub fn table(data: &[u8]) -> Result<usize> {
    let _ = check_table(data.to_vec());
    let mut fixed = data.to_vec();
    repair_sst(&mut fixed);
    check_table(fixed)
}

/// Reads `data` as log `WAL_NUMBER` with `LogReader` and with `wal::replay`
/// in every recovery mode (batches decoded and inserted into a memtable as
/// recovery does); then the same with the record checksums repaired.
/// Returns the number of records of the repaired log.
pub fn wal(data: &[u8]) -> Result<usize> {
    let _ = check_wal(data);
    let mut fixed = data.to_vec();
    repair_wal(&mut fixed);
    check_wal(&fixed)
}

/// Decodes a MANIFEST record; a decoded edit must survive encode/decode.
pub fn version_edit(data: &[u8]) -> Result<usize> {
    let e = VersionEdit::decode(data, "MANIFEST-000001", 0)?;
    let mut again = Vec::new();
    e.encode(&mut again);
    let e2 = VersionEdit::decode(&again, "MANIFEST-000001", 0);
    assert_eq!(e2.as_ref(), Ok(&e), "version edit does not round-trip");
    Ok(e.new_files.len() + e.deleted_files.len())
}

/// Decodes a write batch (`from_data`, `iter`, `validate`); a valid batch
/// must re-encode to the same entries.
pub fn write_batch(data: &[u8]) -> Result<usize> {
    let b = WriteBatch::from_data(data.to_vec())?;
    let mut entries = Vec::new();
    let mut iter_err = None;
    for e in b.iter() {
        match e {
            Ok(e) => entries.push(e),
            Err(e) => {
                assert!(
                    is_corruption_in(&e, crate::batch::BATCH_ERROR_FILE),
                    "batch iterator error {e:?}"
                );
                iter_err = Some(e);
            }
        }
    }
    let v = b.validate(WAL_FILE, 123);
    // validate = every record decodes + sequence numbers fit in 56 bits.
    let seq_ok = matches!(
        b.sequence().checked_add(u64::from(b.count())),
        Some(end) if end <= MAX_SEQNO + 1
    );
    assert_eq!(v.is_ok(), iter_err.is_none() && seq_ok, "validate vs iter");
    if let Err(e) = v {
        assert!(is_corruption_in(&e, WAL_FILE), "validate error {e:?}");
        return Err(e);
    }
    assert_eq!(b.count() as usize, entries.len(), "count vs records");
    let mut again = WriteBatch::new();
    again.set_sequence(b.sequence().min(MAX_SEQNO));
    for e in &entries {
        match e.kind {
            crate::base::ValueKind::Value => again.put_cf(&e.cf, e.key, e.value),
            _ => again.delete_cf(&e.cf, e.key),
        }
    }
    let re: Vec<_> = again.iter().collect::<Result<_>>()?;
    assert_eq!(re, entries, "batch does not re-encode to the same entries");
    Ok(entries.len())
}

fn is_corruption_in(e: &Error, file: &str) -> bool {
    matches!(e, Error::Corruption { file: f, .. } if f == file)
}

// ---------------------------------------------------------------- blocks

/// One entry as the reference decoder sees it.
struct RefEntry {
    offset: usize,
    shared: usize,
    key: Vec<u8>,
    value: Vec<u8>,
}

/// A straightforward decoder of the block format (docs/format/sst.md),
/// independent of `BlockIterator`: the entries of the entry area in order,
/// and whether decoding failed before its end.
fn reference_entries(data: &[u8], restarts_offset: usize) -> (Vec<RefEntry>, bool) {
    let mut out: Vec<RefEntry> = Vec::new();
    let mut p = 0usize;
    let mut key: Vec<u8> = Vec::new();
    while p < restarts_offset {
        let Some(mut s) = data.get(p..restarts_offset) else {
            return (out, true);
        };
        let before = s.len();
        let (Some(shared), Some(unshared), Some(vlen)) = (
            get_varint32(&mut s),
            get_varint32(&mut s),
            get_varint32(&mut s),
        ) else {
            return (out, true);
        };
        let (shared, unshared, vlen) = (shared as usize, unshared as usize, vlen as usize);
        let ks = p + (before - s.len());
        let (Some(ke), Some(ve)) = (
            ks.checked_add(unshared),
            ks.checked_add(unshared).and_then(|k| k.checked_add(vlen)),
        ) else {
            return (out, true);
        };
        if shared > key.len() || ve > restarts_offset {
            return (out, true);
        }
        key.truncate(shared);
        key.extend_from_slice(data.get(ks..ke).unwrap_or_default());
        out.push(RefEntry {
            offset: p,
            shared,
            key: key.clone(),
            value: data.get(ke..ve).unwrap_or_default().to_vec(),
        });
        p = ve;
    }
    (out, false)
}

fn check_block(data: Vec<u8>) -> Result<usize> {
    let copy = data.clone();
    let block = Arc::new(Block::new(data, Arc::from(SST_FILE), 0)?);
    // Block::new accepted it: the restart array is well formed.
    let len = copy.len();
    let n = copy
        .get(len - 4..)
        .and_then(decode_fixed32)
        .unwrap_or_default() as usize;
    let restarts_offset = len - 4 - 4 * n;
    let restarts: Vec<usize> = (0..n)
        .map(|i| {
            copy.get(restarts_offset + 4 * i..)
                .and_then(decode_fixed32)
                .unwrap_or_default() as usize
        })
        .collect();
    let (reference, ref_failed) = reference_entries(&copy, restarts_offset);

    // Forward: exactly the reference entries, then an error iff it failed.
    let mut it = BlockIterator::new(Arc::clone(&block));
    it.seek_to_first();
    let mut fwd: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    while it.valid() {
        assert!(fwd.len() <= len, "block iterator does not terminate");
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(fwd.len(), reference.len(), "forward walk vs reference");
    for (a, r) in fwd.iter().zip(&reference) {
        assert!(a.0 == r.key && a.1 == r.value, "entry at {}", r.offset);
    }
    let status = it.status();
    assert_eq!(status.is_err(), ref_failed, "forward status {status:?}");
    if let Err(e) = status {
        assert!(is_corruption_in(&e, SST_FILE), "block error {e:?}");
        return Err(e);
    }

    // Backward: the same entries reversed, when every restart point is an
    // entry boundary whose entry shares nothing.
    let aligned = restarts
        .iter()
        .all(|&r| reference.iter().any(|e| e.offset == r && e.shared == 0));
    let mut bwd = Vec::new();
    it.seek_to_last();
    while it.valid() {
        assert!(
            bwd.len() <= len,
            "reverse block iteration does not terminate"
        );
        bwd.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    if aligned {
        assert!(
            it.status().is_ok(),
            "reverse walk failed: {:?}",
            it.status()
        );
        bwd.reverse();
        assert!(bwd == fwd, "reverse walk differs from forward walk");
    }

    // Seeks: with strictly increasing keys every key is found.
    let sorted = fwd
        .windows(2)
        .all(|w| compare_internal(&w[0].0, &w[1].0).is_lt());
    for (i, (k, v)) in fwd.iter().enumerate() {
        it.seek(k);
        if aligned && sorted {
            assert!(
                it.valid() && it.key() == &k[..] && it.value() == &v[..],
                "seek #{i}"
            );
            it.seek_for_prev(k);
            assert!(it.valid() && it.key() == &k[..], "seek_for_prev #{i}");
        } else {
            it.seek_for_prev(k);
        }
        if it.valid() {
            it.prev();
        }
    }
    Ok(fwd.len())
}

// ---------------------------------------------------------------- tables

/// An in-memory `RandomAccessFile`.
struct MemRandom(Vec<u8>);

impl RandomAccessFile for MemRandom {
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.0.get(o..)?.get(..buf.len()));
        match src {
            Some(s) => {
                buf.copy_from_slice(s);
                Ok(())
            }
            None => Err(Error::io(
                "read",
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

fn check_table(data: Vec<u8>) -> Result<usize> {
    let file: Arc<dyn RandomAccessFile> = Arc::new(MemRandom(data));
    let t = Table::open(file, SST_FILE.to_string(), 1, None, false)?;
    let mut it = t.iter(false);
    it.seek_to_first();
    let mut keys = Vec::new();
    while it.valid() && keys.len() < MAX_TABLE_STEPS {
        keys.push(it.key().to_vec());
        let _ = it.value();
        it.next();
    }
    let fwd_status = it.status();
    it.seek_to_last();
    let mut back = 0usize;
    while it.valid() && back < MAX_TABLE_STEPS {
        back += 1;
        it.prev();
    }
    for k in keys.iter().step_by(1 + keys.len() / 256) {
        if k.len() >= TRAILER_LEN {
            if let Ok(Some(e)) = t.get(k, false) {
                let _ = (e.ikey(), e.value());
            }
        }
        it.seek(k);
        it.seek_for_prev(k);
        let _ = t.approximate_offset_of(k);
    }
    let _ = (t.properties(), t.memory_usage(), t.may_contain(b"k"));
    for s in [&it.status(), &fwd_status] {
        if let Err(e) = s {
            assert!(
                matches!(e, Error::Corruption { file, .. } if file == SST_FILE),
                "table error {e:?}"
            );
        }
    }
    fwd_status.map(|()| keys.len())
}

/// Decompresses a stored block the way docs/format/sst.md describes, with a
/// small cap (only used to find handles while repairing).
fn decode_stored(ctype: u8, stored: &[u8]) -> Option<Vec<u8>> {
    if ctype == 0 {
        return Some(stored.to_vec());
    }
    let mut p = stored;
    let n = get_varint32(&mut p)? as usize;
    if n > (1 << 20) {
        return None;
    }
    match ctype {
        1 => lz4_flex::block::decompress(p, n).ok(),
        2 => zstd::bulk::decompress(p, n).ok(),
        _ => None,
    }
}

/// Recomputes the footer crc (after forcing the magic and version) and the
/// trailer checksum of every block reachable from the footer, metaindex and
/// index, so that mutations reach the decoders behind them. Best effort;
/// never panics.
pub fn repair_sst(d: &mut [u8]) {
    let Some(fo) = d.len().checked_sub(FOOTER_LEN) else {
        return;
    };
    let Some(footer) = d.get_mut(fo..) else {
        return;
    };
    footer[52..60].copy_from_slice(&MAGIC.to_le_bytes());
    footer[44..48].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    let crc = mask_crc(crc32c(&footer[..48]));
    footer[48..52].copy_from_slice(&crc.to_le_bytes());
    let base = decode_fixed32(&footer[40..44]).unwrap_or_default();
    let mut handles = &footer[..40];
    let (Some(meta), Some(index)) = (
        BlockHandle::decode_from(&mut handles),
        BlockHandle::decode_from(&mut handles),
    ) else {
        return;
    };
    for top in [meta, index] {
        let Some(raw) = fix_block(d, top, base, fo) else {
            continue;
        };
        let Ok(b) = Block::new(raw, Arc::from(SST_FILE), top.offset) else {
            continue;
        };
        let mut it = BlockIterator::new(Arc::new(b));
        it.seek_to_first();
        let mut n = 0;
        while it.valid() && n < 4096 {
            if let Some(h) = BlockHandle::decode_exact(it.value()) {
                fix_block(d, h, base, fo);
            }
            n += 1;
            it.next();
        }
    }
}

/// Rewrites the trailer checksum of the block at `h`; returns its
/// (decompressed) contents.
fn fix_block(d: &mut [u8], h: BlockHandle, base: u32, limit: usize) -> Option<Vec<u8>> {
    let start = usize::try_from(h.offset).ok()?;
    let end = start.checked_add(usize::try_from(h.size).ok()?)?;
    if end.checked_add(TRAILER)? > limit {
        return None;
    }
    let stored = d.get(start..end)?;
    let ctype = *d.get(end)?;
    let mut crc = crc32c(stored);
    crc = crc32c_extend(crc, &[ctype]);
    crc = crc32c_extend(crc, &h.offset.to_le_bytes());
    crc = crc32c_extend(crc, &base.to_le_bytes());
    let out = decode_stored(ctype, stored);
    d.get_mut(end + 1..end + TRAILER)?
        .copy_from_slice(&mask_crc(crc).to_le_bytes());
    out
}

// ---------------------------------------------------------------- logs

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
    LogReader::new(Box::new(f), WAL_FILE.to_string(), WAL_NUMBER)
}

/// What recovery does with a record: decode, validate, insert (mirrors
/// `db::open::replay_wals` and `db::write::insert_batch`).
fn apply_record(mem: &MemTable, payload: &[u8], offset: u64) -> Result<()> {
    let batch = WriteBatch::from_data(payload.to_vec())?;
    batch.validate(WAL_FILE, offset)?;
    let bad = |what: String| Error::corruption(WAL_FILE, offset, format!("bad batch: {what}"));
    // `validate` has checked that every sequence number fits in 56 bits.
    for (seq, e) in (batch.sequence()..).zip(batch.iter()) {
        let e = e?;
        if e.cf != 0 {
            return Err(bad(format!("column family {}", e.cf)));
        }
        mem.add(seq, e.kind, e.key, e.value);
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
                ReadOutcome::Eof => break,
                ReadOutcome::Record { offset } => {
                    assert!(offset + HEADER_LEN as u64 <= len);
                    seen.push((o.clone(), out.clone()));
                }
                ReadOutcome::TornTail { offset } => {
                    assert!(*offset < len);
                    seen.push((o.clone(), Vec::new()));
                    let next = r.read_record(&mut out)?;
                    assert_eq!(next, ReadOutcome::Eof, "torn tail not followed by EOF");
                    break;
                }
                ReadOutcome::Corrupt {
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
            ReadOutcome::Record { offset } => {
                if apply_record(&MemTable::new(0), payload, *offset).is_ok() {
                    Event::Good
                } else {
                    Event::BadBatch
                }
            }
            ReadOutcome::TornTail { .. } => Event::Torn,
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
            let mem = MemTable::new(0);
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
                    assert_eq!(rep.dropped.len() as u64, dropped, "{mode:?}: dropped");
                }
            }
        }
    }
    Ok(good as usize)
}

/// Recomputes the checksum of every physical record whose header and
/// payload lie inside its block, so mutated logs get past the crc.
pub fn repair_wal(d: &mut [u8]) {
    let seed = crc32c(&WAL_NUMBER.to_le_bytes());
    for block in d.chunks_mut(BLOCK_SIZE) {
        let mut p = 0usize;
        while let Some(h) = block.get(p..p + HEADER_LEN) {
            if h.iter().all(|&b| b == 0) {
                break;
            }
            let n = usize::from(u16::from_le_bytes([h[4], h[5]]));
            let typ = h[6];
            let Some(payload) = block.get(p + HEADER_LEN..p + HEADER_LEN + n) else {
                break;
            };
            // docs/format/wal.md: crc32c(log number ++ type ++ payload), masked.
            let crc = mask_crc(crc32c_extend(crc32c_extend(seed, &[typ]), payload));
            if let Some(c) = block.get_mut(p..p + 4) {
                c.copy_from_slice(&crc.to_le_bytes());
            }
            p += HEADER_LEN + n;
        }
    }
}

#[cfg(test)]
mod tests {
    //! Seed inputs (valid encodings built by the engine's own writers), the
    //! corpus writer for `/fuzz/corpus`, and a seeded mutation run so that
    //! `cargo test` exercises every decoder without cargo-fuzz.

    use std::path::PathBuf;

    use parking_lot::Mutex;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::base::{make_internal_key, ValueKind};
    use crate::fs::WritableFile;
    use crate::options::Compression;
    use crate::sst::{TableBuilder, TableOptions};
    use crate::version::FileMeta;
    use crate::wal::LogWriter;

    type Target = fn(&[u8]) -> Result<usize>;
    const TARGETS: [(&str, Target); 5] = [
        ("block", block),
        ("table", table),
        ("wal", wal),
        ("version_edit", version_edit),
        ("write_batch", write_batch),
    ];

    /// A writable file appending to a shared vector.
    struct VecFile(Arc<Mutex<Vec<u8>>>);
    impl WritableFile for VecFile {
        fn append(&mut self, data: &[u8]) -> Result<()> {
            self.0.lock().extend_from_slice(data);
            Ok(())
        }
        fn flush(&mut self) -> Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> Result<()> {
            Ok(())
        }
        fn len(&self) -> u64 {
            self.0.lock().len() as u64
        }
    }

    fn ikey(user: &[u8], seq: u64, kind: ValueKind) -> Vec<u8> {
        let mut k = Vec::new();
        make_internal_key(&mut k, user, seq, kind as u8);
        k
    }

    /// Sorted internal keys `key000..`, newest version first, some deletions.
    fn entries(n: usize, versions: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        for i in 0..n {
            for v in (1..=versions).rev() {
                let kind = if (i + v as usize) % 7 == 3 {
                    ValueKind::Deletion
                } else {
                    ValueKind::Value
                };
                let user = format!("key{i:03}");
                let value = format!("value-{i}-{v}-{}", "x".repeat(i % 13));
                out.push((ikey(user.as_bytes(), 100 + v, kind), value.into_bytes()));
            }
        }
        out
    }

    /// Encodes a block per docs/format/sst.md (prefix compression, a
    /// restart point every `interval` entries).
    fn encode_block(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Vec<u8> {
        use crate::codec::{put_fixed32, put_varint32};
        let (mut out, mut restarts, mut last) = (Vec::new(), Vec::new(), Vec::<u8>::new());
        for (i, (k, v)) in entries.iter().enumerate() {
            let shared = if i % interval == 0 {
                restarts.push(out.len() as u32);
                0
            } else {
                k.iter().zip(&last).take_while(|(a, b)| a == b).count()
            };
            put_varint32(&mut out, shared as u32);
            put_varint32(&mut out, (k.len() - shared) as u32);
            put_varint32(&mut out, v.len() as u32);
            out.extend_from_slice(&k[shared..]);
            out.extend_from_slice(v);
            last.clone_from(k);
        }
        if restarts.is_empty() {
            restarts.push(0);
        }
        for r in &restarts {
            put_fixed32(&mut out, *r);
        }
        put_fixed32(&mut out, restarts.len() as u32);
        out
    }

    fn block_seeds() -> Vec<Vec<u8>> {
        [(0, 16), (1, 1), (20, 1), (40, 4), (60, 16)]
            .iter()
            .map(|&(n, interval)| encode_block(&entries(n, 2)[..n], interval))
            .collect()
    }

    fn table_seeds() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let shapes = [
            (0, 0, Compression::None),
            (3, 10, Compression::None),
            (40, 10, Compression::None),
            (40, 0, Compression::Lz4),
            (40, 10, Compression::Zstd),
        ];
        for (n, bits, compression) in shapes {
            let bytes = Arc::new(Mutex::new(Vec::new()));
            let opts = TableOptions {
                block_size: 256,
                block_restart_interval: 4,
                block_restart_bytes: 0,
                bloom_bits_per_key: bits,
                compression,
                db_id: "fuzz".into(),
            };
            let file = Box::new(VecFile(Arc::clone(&bytes)));
            let mut tb = TableBuilder::new(file, SST_FILE.into(), 1, opts);
            for (k, v) in entries(n, 2) {
                tb.add(&k, &v).unwrap();
            }
            tb.finish().unwrap();
            out.push(bytes.lock().clone());
        }
        out
    }

    fn batch(seq: u64, n: usize, value_len: usize) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.set_sequence(seq);
        for i in 0..n {
            if i % 5 == 4 {
                b.delete(format!("k{i}").as_bytes());
            } else {
                b.put(
                    format!("k{i}").as_bytes(),
                    &vec![b'a' + (i % 26) as u8; value_len],
                );
            }
        }
        b
    }

    fn wal_seeds() -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        // (records, value length): small records; one spanning 2 blocks.
        for (records, value_len) in [(0, 0), (3, 10), (2, 12_000)] {
            let bytes = Arc::new(Mutex::new(Vec::new()));
            let mut w = LogWriter::new(Box::new(VecFile(Arc::clone(&bytes))), WAL_NUMBER);
            let mut seq = 1;
            for r in 0..records {
                let b = batch(seq, 1 + r % 4, value_len);
                seq += u64::from(b.count());
                w.add_record(b.data()).unwrap();
            }
            w.flush().unwrap();
            out.push(bytes.lock().clone());
        }
        out
    }

    fn version_edit_seeds() -> Vec<Vec<u8>> {
        let mut full = VersionEdit {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(7),
            prev_log_number: Some(0),
            next_file_number: Some(12),
            last_sequence: Some(1000),
            db_id: Some("db-1".into()),
            ..Default::default()
        };
        full.delete_file(1, 4);
        full.add_file(
            2,
            FileMeta {
                number: 9,
                file_size: 4096,
                smallest: ikey(b"a", 5, ValueKind::Value),
                largest: ikey(b"m", 900, ValueKind::Deletion),
                smallest_seq: 5,
                largest_seq: 900,
                num_entries: 10,
                num_deletions: 2,
                compression: 1,
                ..Default::default()
            },
        );
        let small = VersionEdit {
            log_number: Some(3),
            last_sequence: Some(7),
            ..Default::default()
        };
        [VersionEdit::default(), small, full]
            .iter()
            .map(|e| {
                let mut v = Vec::new();
                e.encode(&mut v);
                v
            })
            .collect()
    }

    fn write_batch_seeds() -> Vec<Vec<u8>> {
        let mut cf = batch(9, 2, 3);
        cf.put_cf(&3u32, b"cf-key", b"cf-value");
        cf.delete_cf(&300u32, b"gone");
        vec![
            WriteBatch::new().data().to_vec(),
            batch(1, 6, 5).data().to_vec(),
            cf.data().to_vec(),
        ]
    }

    fn seeds(target: &str) -> Vec<Vec<u8>> {
        match target {
            "block" => block_seeds(),
            "table" => table_seeds(),
            "wal" => wal_seeds(),
            "version_edit" => version_edit_seeds(),
            _ => write_batch_seeds(),
        }
    }

    fn corpus_dir(target: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../fuzz/corpus/{target}"))
    }

    fn mutate(rng: &mut SmallRng, input: &mut Vec<u8>) {
        for _ in 0..rng.gen_range(1..=4) {
            let len = input.len();
            match rng.gen_range(0..6) {
                0 if len > 0 => {
                    let i = rng.gen_range(0..len);
                    input[i] ^= 1 << rng.gen_range(0..8);
                }
                1 if len > 0 => {
                    let i = rng.gen_range(0..len);
                    input[i] = rng.gen();
                }
                2 => input.truncate(rng.gen_range(0..=len)),
                3 => {
                    let i = rng.gen_range(0..=len);
                    let n = rng.gen_range(1..16);
                    let junk: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                    input.splice(i..i, junk);
                }
                4 if len > 0 => {
                    let i = rng.gen_range(0..len);
                    let n = rng.gen_range(1..=8).min(len - i);
                    input[i..i + n].fill(0);
                }
                _ if len > 1 => {
                    // Copy a chunk over another place (misplaced data).
                    let n = rng.gen_range(1..=len.min(64));
                    let (a, b) = (rng.gen_range(0..=len - n), rng.gen_range(0..=len - n));
                    input.copy_within(a..a + n, b);
                }
                _ => input.push(rng.gen()),
            }
        }
    }

    #[test]
    fn valid_seeds_decode_and_repair_is_identity() {
        for (name, f) in TARGETS {
            for (i, s) in seeds(name).iter().enumerate() {
                let r = f(s);
                assert!(r.is_ok(), "{name} seed {i}: {r:?}");
            }
        }
        // The repair functions implement the documented checksums: on valid
        // files they change nothing.
        for s in table_seeds() {
            let mut c = s.clone();
            repair_sst(&mut c);
            assert!(c == s, "repair_sst changed a valid table");
        }
        for s in wal_seeds() {
            let mut c = s.clone();
            repair_wal(&mut c);
            assert!(c == s, "repair_wal changed a valid log");
        }
    }

    #[test]
    fn seed_corpus_plus_random_mutations() {
        let seed: u64 = std::env::var("SHALE_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0x5eed_f022);
        println!("SHALE_FUZZ_SEED={seed}");
        let mut rng = SmallRng::seed_from_u64(seed);
        for (name, f) in TARGETS {
            let mut inputs = seeds(name);
            if let Ok(dir) = std::fs::read_dir(corpus_dir(name)) {
                for e in dir.flatten() {
                    inputs.push(std::fs::read(e.path()).unwrap());
                }
            }
            let mut ok = 0;
            for s in &inputs {
                ok += usize::from(f(s).is_ok());
            }
            for _ in 0..2000 {
                let mut m = inputs[rng.gen_range(0..inputs.len())].clone();
                mutate(&mut rng, &mut m);
                ok += usize::from(f(&m).is_ok());
            }
            println!(
                "{name}: {} inputs + 2000 mutations, {ok} decoded",
                inputs.len()
            );
        }
    }

    /// Rewrites `/fuzz/corpus/<target>/seed-N` from the generators above.
    #[test]
    #[ignore = "writes the seed corpus into the source tree; run by hand"]
    fn write_seed_corpus() {
        for (name, _) in TARGETS {
            let dir = corpus_dir(name);
            std::fs::create_dir_all(&dir).unwrap();
            for (i, s) in seeds(name).iter().enumerate() {
                std::fs::write(dir.join(format!("seed-{i}")), s).unwrap();
            }
        }
    }
}
