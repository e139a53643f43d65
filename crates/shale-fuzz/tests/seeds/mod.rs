//! Seed inputs for every check: valid encodings, built by the engine's own
//! writers (tables, logs, batches, blob files) or, where the engine's encoder is
//! crate-private, from the byte layouts of `docs/format/` (blocks, version
//! edits, internal keys). `/fuzz/corpus/<target>/seed-N` holds these
//! (rewritten by the ignored test `write_seed_corpus`).

use std::sync::{Arc, Mutex};

use shale::fs::WritableFile;
use shale::testing::{
    batch_count, batch_data, batch_delete_cf, batch_put_cf, batch_set_sequence, BlobIndex,
    BlobWriter, LogWriter, SstWriter, SstWriterOptions,
};
use shale::{Compression, Result, WriteBatch};
use shale_fuzz::{BLOB_FILE, BLOB_NUMBER, SST_FILE, WAL_NUMBER};

/// Kind byte of a deletion / a value in an internal key (docs/format/sst.md).
const DELETION: u8 = 0x0;
const VALUE: u8 = 0x1;

/// A writable file appending to a shared vector.
struct VecFile(Arc<Mutex<Vec<u8>>>);

impl WritableFile for VecFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().unwrap().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().unwrap().len() as u64
    }
}

fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

fn put_bytes(dst: &mut Vec<u8>, b: &[u8]) {
    put_varint32(dst, b.len() as u32);
    dst.extend_from_slice(b);
}

/// `user ++ fixed64_le(seq << 8 | kind)`.
fn ikey(user: &[u8], seq: u64, kind: u8) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend_from_slice(&(seq << 8 | u64::from(kind)).to_le_bytes());
    k
}

/// Sorted internal keys `key000..`, newest version first, some deletions.
fn entries(n: usize, versions: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..n {
        for v in (1..=versions).rev() {
            let kind = if (i + v as usize) % 7 == 3 {
                DELETION
            } else {
                VALUE
            };
            let user = format!("key{i:03}");
            let value = format!("value-{i}-{v}-{}", "x".repeat(i % 13));
            out.push((ikey(user.as_bytes(), 100 + v, kind), value.into_bytes()));
        }
    }
    out
}

/// Encodes a block per docs/format/sst.md (prefix compression, a restart
/// point every `interval` entries).
fn encode_block(entries: &[(Vec<u8>, Vec<u8>)], interval: usize) -> Vec<u8> {
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
        out.extend_from_slice(&r.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    out
}

fn block_seeds() -> Vec<Vec<u8>> {
    [(0, 16), (1, 1), (20, 1), (40, 4), (60, 16)]
        .iter()
        .map(|&(n, interval)| encode_block(&entries(n, 2)[..n], interval))
        .collect()
}

/// Tables by `TableBuilder`: (entries, bloom bits, compression), 256-byte
/// blocks; then two with prefix filters (whole keys and prefixes, prefixes
/// only); then one with aligned, zero-padded data blocks (`block_align`).
pub fn table_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let shapes = [
        (0, 0, Compression::None),
        (3, 10, Compression::None),
        (40, 10, Compression::None),
        (40, 0, Compression::Lz4),
        (40, 10, Compression::Zstd),
    ];
    let fixed = shale::PrefixExtractor::Fixed(2);
    let shapes = shapes
        .into_iter()
        .map(|(n, bits, c)| (n, bits, c, None, true, false))
        .chain([
            (40, 10, Compression::None, Some(fixed), true, false),
            (40, 10, Compression::None, Some(fixed), false, false),
            (40, 10, Compression::None, None, true, true),
        ]);
    for (n, bits, compression, prefix_extractor, whole_key_filtering, block_align) in shapes {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let opts = SstWriterOptions {
            block_size: 256,
            block_restart_interval: 4,
            bloom_bits_per_key: bits,
            prefix_extractor,
            whole_key_filtering,
            compression,
            db_id: "fuzz".into(),
            block_align,
        };
        let file = Box::new(VecFile(Arc::clone(&bytes)));
        let mut tb = SstWriter::new(file, SST_FILE, 1, opts);
        for (k, v) in entries(n, 2) {
            tb.add(&k, &v).unwrap();
        }
        tb.finish().unwrap();
        out.push(bytes.lock().unwrap().clone());
    }
    out
}

fn batch(seq: u64, n: usize, value_len: usize) -> WriteBatch {
    let mut b = WriteBatch::new();
    batch_set_sequence(&mut b, seq);
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

/// Logs by `LogWriter`: empty, small records, a record spanning 2 blocks.
pub fn wal_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    // (records, value length)
    for (records, value_len) in [(0, 0), (3, 10), (2, 12_000)] {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let mut w = LogWriter::new(Box::new(VecFile(Arc::clone(&bytes))), WAL_NUMBER);
        let mut seq = 1;
        for r in 0..records {
            let b = batch(seq, 1 + r % 4, value_len);
            seq += u64::from(batch_count(&b));
            w.add_record(batch_data(&b)).unwrap();
        }
        w.flush().unwrap();
        out.push(bytes.lock().unwrap().clone());
    }
    out
}

/// Version edits per docs/format/manifest.md ("Version edit encoding"),
/// fields in the writers' order: an empty edit, a small one, and a
/// snapshot-like one with a deleted and a new file.
pub fn version_edit_seeds() -> Vec<Vec<u8>> {
    let header = |v: &mut Vec<u8>| {
        put_varint32(v, 1); // FORMAT_VERSION
        put_varint32(v, 2);
    };
    let empty = {
        let mut v = Vec::new();
        header(&mut v);
        v
    };
    let small = {
        let mut v = Vec::new();
        header(&mut v);
        for (tag, n) in [(3, 3), (6, 7)] {
            put_varint32(&mut v, tag); // LOG_NUMBER 3, LAST_SEQUENCE 7
            put_varint64(&mut v, n);
        }
        v
    };
    let mut full = Vec::new();
    header(&mut full);
    put_varint32(&mut full, 2); // COMPARATOR
    put_bytes(&mut full, b"leveldb.BytewiseComparator");
    // LOG_NUMBER, PREV_LOG_NUMBER, NEXT_FILE_NUMBER, LAST_SEQUENCE
    for (tag, n) in [(3, 7), (4, 0), (5, 12), (6, 1000)] {
        put_varint32(&mut full, tag);
        put_varint64(&mut full, n);
    }
    put_varint32(&mut full, 0x2001); // DB_ID
    put_bytes(&mut full, b"db-1");
    put_varint32(&mut full, 8); // DELETED_FILE L1 #4
    put_varint32(&mut full, 1);
    put_varint64(&mut full, 4);
    put_varint32(&mut full, 9); // NEW_FILE L2 #9, 4096 bytes
    put_varint32(&mut full, 2);
    put_varint64(&mut full, 9);
    put_varint64(&mut full, 4096);
    put_bytes(&mut full, &ikey(b"a", 5, VALUE));
    put_bytes(&mut full, &ikey(b"m", 900, DELETION));
    // seqs 5..900, 10 entries, 2 deletions
    for n in [5, 900, 10, 2] {
        put_varint64(&mut full, n);
    }
    full.push(1); // compression
    put_varint32(&mut full, 0); // end of sub-fields
                                // Column families (format 2): create family 5 "ab" in an atomic group
                                // of two, with options; then drop it.
    let mut add = Vec::new();
    header(&mut add);
    put_varint32(&mut add, 7); // COLUMN_FAMILY 5
    put_varint32(&mut add, 5);
    put_varint32(&mut add, 10); // COLUMN_FAMILY_ADD "ab"
    put_bytes(&mut add, b"ab");
    put_varint32(&mut add, 12); // MAX_COLUMN_FAMILY 5
    put_varint32(&mut add, 5);
    put_varint32(&mut add, 14); // ATOMIC_GROUP: one more edit follows
    put_varint32(&mut add, 1);
    put_varint32(&mut add, 0x2002); // CF_OPTIONS
    put_bytes(&mut add, b"write_buffer_size=4096\n");
    let mut drop = Vec::new();
    header(&mut drop);
    put_varint32(&mut drop, 7);
    put_varint32(&mut drop, 5);
    put_varint32(&mut drop, 11); // COLUMN_FAMILY_DROP
    vec![empty, small, full, add, drop]
}

fn write_batch_seeds() -> Vec<Vec<u8>> {
    let mut cf = batch(9, 2, 3);
    batch_put_cf(&mut cf, 3, b"cf-key", b"cf-value");
    batch_delete_cf(&mut cf, 300, b"gone");
    vec![
        batch_data(&WriteBatch::new()).to_vec(),
        batch_data(&batch(1, 6, 5)).to_vec(),
        batch_data(&cf).to_vec(),
    ]
}

/// Blob files by `BlobFileBuilder` (file [`BLOB_NUMBER`]): empty, small
/// records stored as is, and records with compressible values under LZ4
/// and zstd; then two blob index encodings (docs/format/blob.md).
pub fn blob_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (records, compression) in [
        (0, Compression::None),
        (4, Compression::None),
        (6, Compression::Lz4),
        (6, Compression::Zstd),
    ] {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let file = Box::new(VecFile(Arc::clone(&bytes)));
        let mut w = BlobWriter::new(file, BLOB_FILE, BLOB_NUMBER, 0, compression).unwrap();
        for i in 0..records {
            let value = match i % 3 {
                0 => Vec::new(),
                1 => format!("value-{i}").into_bytes(),
                _ => format!("blob-{i}-").repeat(40).into_bytes(),
            };
            w.add(format!("key{i:03}").as_bytes(), &value).unwrap();
        }
        w.finish().unwrap();
        out.push(bytes.lock().unwrap().clone());
    }
    for (file_number, offset, size, compression) in [(9, 24, 7, 0), (300, 1 << 20, 70_000, 2)] {
        let i = BlobIndex {
            file_number,
            offset,
            size,
            compression,
        };
        out.push(i.encode());
    }
    out
}

/// The seeds of the check named `target` (see `shale_fuzz::TARGETS`).
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "block" => block_seeds(),
        "table" => table_seeds(),
        "wal" => wal_seeds(),
        "version_edit" => version_edit_seeds(),
        "write_batch" => write_batch_seeds(),
        "blob_record" => blob_seeds(),
        _ => panic!("no seeds for {target}"),
    }
}
