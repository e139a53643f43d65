//! Tests of the builder and reader together: round trips through the
//! in-memory file system with every codec, a sweep of single-byte damage
//! and truncation over whole files, and indexes that point anywhere.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::format::{FOOTER_LEN, HEADER_LEN, RECORD_HEADER_LEN};
use super::reader::decode_record;
use super::{BlobFileBuilder, BlobFileInfo, BlobFileReader, BlobIndex};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, MemFileSystem, RandomAccessFile, WritableFile};
use crate::sst::compression::{TYPE_LZ4, TYPE_NONE, TYPE_ZSTD};
use crate::sst::Compression;
use crate::version::filename::blob_file_name;

const NUMBER: u64 = 12;
const FILE: &str = "000012.blob";
const CODECS: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd];

fn compressible(n: usize) -> Vec<u8> {
    (0..n).map(|i| b"blobvalue"[(i / 5) % 9]).collect()
}

fn incompressible(n: usize, mut seed: u32) -> Vec<u8> {
    (0..n)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        })
        .collect()
}

/// The values of the round trip: empty, one byte, 64 KiB compressible and
/// incompressible, and many small ones.
fn values() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v = vec![
        (b"empty".to_vec(), Vec::new()),
        (b"one".to_vec(), b"x".to_vec()),
        (b"big-compressible".to_vec(), compressible(64 << 10)),
        (b"big-random".to_vec(), incompressible(64 << 10, 7)),
        (Vec::new(), b"empty key".to_vec()),
    ];
    for i in 0..200u32 {
        let value = match i % 3 {
            0 => compressible(100 + i as usize * 7),
            1 => incompressible(i as usize, i + 1),
            _ => format!("value-{i}").into_bytes(),
        };
        v.push((format!("key{i:04}").into_bytes(), value));
    }
    v
}

/// A read-only file over a vector that remembers the longest read asked
/// of it (the reader allocates exactly what it reads).
struct VecFile {
    data: Vec<u8>,
    longest_read: AtomicUsize,
}

impl VecFile {
    fn new(data: Vec<u8>) -> Arc<VecFile> {
        Arc::new(VecFile {
            data,
            longest_read: AtomicUsize::new(0),
        })
    }
}

impl RandomAccessFile for VecFile {
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
            None => Err(Error::io(
                "read",
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
}

/// Writes `kvs` into `path` of `fs` as blob file `number`.
fn build_in(
    fs: &MemFileSystem,
    path: &Path,
    number: u64,
    compression: Compression,
    kvs: &[(Vec<u8>, Vec<u8>)],
) -> (BlobFileInfo, Vec<BlobIndex>) {
    let name = blob_file_name(number);
    let mut b = BlobFileBuilder::new(
        fs.create(path).unwrap(),
        name.clone(),
        number,
        3,
        compression,
    )
    .unwrap();
    assert_eq!((b.number(), b.name(), b.count()), (number, &name[..], 0));
    assert_eq!(b.file_size(), HEADER_LEN as u64);
    let mut idxs = Vec::new();
    for (k, v) in kvs {
        let before = b.file_size();
        let idx = b.add(k, v).unwrap();
        assert_eq!(idx.offset, before);
        assert_eq!(idx.file_number, number);
        assert_eq!(b.file_size(), before + idx.record_len(k.len()));
        idxs.push(idx);
    }
    assert_eq!(b.count(), kvs.len() as u64);
    (b.finish().unwrap(), idxs)
}

/// The bytes of blob file [`NUMBER`] holding `kvs`, and the indexes.
fn build(compression: Compression, kvs: &[(Vec<u8>, Vec<u8>)]) -> (Vec<u8>, Vec<BlobIndex>) {
    let fs = MemFileSystem::new();
    let path = Path::new("/b");
    let (_, idxs) = build_in(&fs, path, NUMBER, compression, kvs);
    (fs.read_all(path).unwrap(), idxs)
}

/// Asserts `e` is `Corruption` in [`FILE`] at an offset inside `len` bytes.
fn assert_corruption_in_file(e: &Error, len: usize) {
    match e {
        Error::Corruption { file, offset, .. } => {
            assert_eq!(file, FILE, "{e}");
            assert!(*offset <= len as u64, "{e}");
        }
        other => panic!("expected corruption in {FILE}, got {other:?}"),
    }
}

/// `read_shared`, copied out (the tests compare with `Vec`s).
fn read(r: &BlobFileReader, idx: &BlobIndex, key: &[u8]) -> Result<Vec<u8>> {
    r.read_shared(idx, key).map(|v| v.to_vec())
}

#[test]
fn roundtrip_every_codec_through_mem_fs() {
    let kvs = values();
    for compression in CODECS {
        let fs = MemFileSystem::new();
        fs.create_dir_all(Path::new("/db")).unwrap();
        let path = Path::new("/db").join(FILE);
        let (info, idxs) = build_in(&fs, &path, NUMBER, compression, &kvs);
        // What a power loss leaves once the directory entry is synced too:
        // `finish` synced the file.
        fs.sync_dir(Path::new("/db")).unwrap();
        let fs = fs.crash(0.0, 1);

        let records: u64 = kvs
            .iter()
            .zip(&idxs)
            .map(|((k, _), i)| i.record_len(k.len()))
            .sum();
        assert_eq!(
            info,
            BlobFileInfo {
                number: NUMBER,
                file_size: (HEADER_LEN + FOOTER_LEN) as u64 + records,
                count: kvs.len() as u64,
                bytes: records,
            }
        );
        assert_eq!(fs.file_size(&path).unwrap(), info.file_size);

        let r = BlobFileReader::open(fs.open_random(&path).unwrap(), FILE, NUMBER).unwrap();
        assert_eq!((r.number(), r.name()), (NUMBER, FILE));
        assert_eq!(
            (r.record_count(), r.total_bytes()),
            (info.count, info.bytes)
        );
        assert_eq!(r.verify_all().unwrap(), info.count);
        for ((k, v), idx) in kvs.iter().zip(&idxs) {
            assert_eq!(&read(&r, idx, k).unwrap(), v, "{compression:?} {k:?}");
        }

        // Compression is per value: kept only where it pays.
        let of = |key: &[u8]| idxs[kvs.iter().position(|(k, _)| k == key).unwrap()];
        let want = match compression {
            Compression::None => TYPE_NONE,
            Compression::Lz4 => TYPE_LZ4,
            Compression::Zstd => TYPE_ZSTD,
        };
        let big = of(b"big-compressible");
        assert_eq!(big.compression, want);
        if want != TYPE_NONE {
            assert!(big.size < (64 << 10) / 4, "{compression:?}: {}", big.size);
        }
        for key in [&b"big-random"[..], b"empty", b"one"] {
            assert_eq!(of(key).compression, TYPE_NONE, "{key:?}");
        }
    }
}

#[test]
fn empty_file_opens_and_verifies() {
    for compression in CODECS {
        let (bytes, _) = build(compression, &[]);
        assert_eq!(bytes.len(), HEADER_LEN + FOOTER_LEN);
        let r = BlobFileReader::open(VecFile::new(bytes), FILE, NUMBER).unwrap();
        assert_eq!((r.record_count(), r.total_bytes()), (0, 0));
        assert_eq!(r.verify_all().unwrap(), 0);
    }
}

#[test]
fn reader_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<BlobFileReader>();
}

/// A small file for the sweeps: a bit of everything, compressed or not.
fn sweep_values() -> Vec<(Vec<u8>, Vec<u8>)> {
    vec![
        (b"a".to_vec(), Vec::new()),
        (b"bb".to_vec(), b"v".to_vec()),
        (b"c".to_vec(), compressible(200)),
        (b"dd".to_vec(), incompressible(40, 3)),
    ]
}

/// Opens `bytes` and reads every index: each read must give the original
/// value or `Corruption` in [`FILE`]. Returns whether anything noticed
/// damage (open, a read or `verify_all`).
fn open_and_read_all(bytes: Vec<u8>, kvs: &[(Vec<u8>, Vec<u8>)], idxs: &[BlobIndex]) -> bool {
    let len = bytes.len();
    let r = match BlobFileReader::open(VecFile::new(bytes), FILE, NUMBER) {
        Ok(r) => r,
        Err(e) => {
            assert_corruption_in_file(&e, len);
            return true;
        }
    };
    let mut noticed = false;
    for ((k, v), idx) in kvs.iter().zip(idxs) {
        match read(&r, idx, k) {
            Ok(got) => assert_eq!(&got, v, "wrong value for {k:?}"),
            Err(e) => {
                assert_corruption_in_file(&e, len);
                noticed = true;
            }
        }
    }
    match r.verify_all() {
        Ok(n) => assert_eq!(n, kvs.len() as u64),
        Err(e) => {
            assert_corruption_in_file(&e, len);
            noticed = true;
        }
    }
    noticed
}

#[test]
fn every_flipped_byte_is_caught_and_never_gives_a_wrong_value() {
    let kvs = sweep_values();
    for compression in CODECS {
        let (good, idxs) = build(compression, &kvs);
        assert!(!open_and_read_all(good.clone(), &kvs, &idxs));
        for i in 0..good.len() {
            for mask in [0x01, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= mask;
                assert!(
                    open_and_read_all(bad, &kvs, &idxs),
                    "{compression:?}: flipping byte {i} with {mask:#x} went unnoticed"
                );
            }
        }
    }
}

#[test]
fn every_truncation_and_extension_is_corruption() {
    let kvs = sweep_values();
    for compression in CODECS {
        let (good, idxs) = build(compression, &kvs);
        for n in 0..good.len() {
            let len = n;
            match BlobFileReader::open(VecFile::new(good[..n].to_vec()), FILE, NUMBER) {
                Err(e) => assert_corruption_in_file(&e, len),
                Ok(_) => panic!("{compression:?}: truncated to {n} bytes and opened"),
            }
            assert!(open_and_read_all(good[..n].to_vec(), &kvs, &idxs));
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(open_and_read_all(longer, &kvs, &idxs));
    }
}

#[test]
fn a_header_naming_another_file_is_corruption() {
    let (bytes, _) = build(Compression::None, &sweep_values());
    let e = BlobFileReader::open(VecFile::new(bytes), "000013.blob", 13)
        .err()
        .unwrap();
    assert!(
        matches!(&e, Error::Corruption { file, offset: 0, what }
            if file == "000013.blob" && what.contains("names file 12")),
        "{e:?}"
    );
}

/// Reads `idx` for `key` and checks the result is `Corruption` in [`FILE`]
/// at the index's offset, and that nothing longer than the file was read
/// (hence allocated).
fn assert_bad_index(r: &BlobFileReader, file: &VecFile, idx: BlobIndex, key: &[u8], why: &str) {
    match read(r, &idx, key) {
        Err(Error::Corruption {
            file: f, offset, ..
        }) => {
            assert_eq!((f.as_str(), offset), (FILE, idx.offset), "{why}");
        }
        other => panic!("{why}: {idx:?} gave {other:?}"),
    }
    let longest = file.longest_read.load(Ordering::Relaxed);
    assert!(longest <= file.data.len(), "{why}: read {longest} bytes");
}

#[test]
fn indexes_pointing_anywhere_are_corruption_without_large_reads() {
    let kvs = sweep_values();
    let (bytes, idxs) = build(Compression::None, &kvs);
    let len = bytes.len() as u64;
    let file = VecFile::new(bytes.clone());
    let r =
        BlobFileReader::open(Arc::clone(&file) as Arc<dyn RandomAccessFile>, FILE, NUMBER).unwrap();
    let key = &kvs[1].0;
    let good = idxs[1];
    assert_eq!(read(&r, &good, key).unwrap(), kvs[1].1);
    let footer_at = len - FOOTER_LEN as u64;
    let cases = [
        (
            BlobIndex {
                offset: len,
                ..good
            },
            "past the file",
        ),
        (
            BlobIndex {
                offset: u64::MAX,
                ..good
            },
            "offset u64::MAX",
        ),
        (
            BlobIndex {
                offset: u64::MAX - 5,
                size: 10,
                ..good
            },
            "offset + len overflows",
        ),
        (
            BlobIndex {
                size: u64::MAX,
                ..good
            },
            "huge size",
        ),
        (BlobIndex { size: len, ..good }, "size of the whole file"),
        (BlobIndex { offset: 0, ..good }, "in the header"),
        (
            BlobIndex {
                offset: HEADER_LEN as u64 - 1,
                ..good
            },
            "overlapping the header",
        ),
        (
            BlobIndex {
                offset: footer_at,
                size: 0,
                ..good
            },
            "in the footer",
        ),
        (
            BlobIndex {
                offset: footer_at - RECORD_HEADER_LEN as u64 - 1,
                size: 1,
                ..good
            },
            "into the footer",
        ),
        (
            BlobIndex {
                size: good.size + 1,
                ..good
            },
            "size one too large",
        ),
        (BlobIndex { size: 0, ..good }, "size too small"),
        (
            BlobIndex {
                offset: good.offset + 1,
                ..good
            },
            "offset off by one",
        ),
        (idxs[0], "another record"),
        (
            BlobIndex {
                compression: TYPE_LZ4,
                ..good
            },
            "wrong compression",
        ),
        (
            BlobIndex {
                file_number: NUMBER + 1,
                ..good
            },
            "another file's index",
        ),
    ];
    for (idx, why) in cases {
        assert_bad_index(&r, &file, idx, key, why);
    }
    // A wrong key of the same length, and of another length.
    assert_bad_index(&r, &file, good, b"bx", "wrong key");
    assert_bad_index(&r, &file, good, b"bbb", "longer key");
    assert_bad_index(&r, &file, good, b"", "empty key");
    assert_eq!(read(&r, &good, key).unwrap(), kvs[1].1);
}

#[test]
fn a_record_copied_from_another_file_or_offset_is_corruption() {
    // Files 12 and 13 with the same records: each record sits at the same
    // offset in both and differs only in its checksum.
    let kvs = sweep_values();
    let fs = MemFileSystem::new();
    let (_, idxs) = build_in(&fs, Path::new("/12"), 12, Compression::None, &kvs);
    build_in(&fs, Path::new("/13"), 13, Compression::None, &kvs);
    let mut twelve = fs.read_all(Path::new("/12")).unwrap();
    let thirteen = fs.read_all(Path::new("/13")).unwrap();
    let (k, v) = &kvs[2];
    let idx = idxs[2];
    let at = idx.offset as usize..(idx.offset + idx.record_len(k.len())) as usize;
    assert_ne!(twelve[at.clone()], thirteen[at.clone()]);
    twelve[at.clone()].copy_from_slice(&thirteen[at.clone()]);
    let r = BlobFileReader::open(VecFile::new(twelve.clone()), FILE, 12).unwrap();
    let e = read(&r, &idx, k).unwrap_err();
    assert!(
        matches!(&e, Error::Corruption { file, offset, what }
            if file == FILE && *offset == idx.offset && what.contains("checksum")),
        "{e:?}"
    );
    assert!(r.verify_all().unwrap_err().is_corruption());
    // The pure decoder gives the same answers.
    let rec = &twelve[at.clone()];
    assert!(decode_record(rec, 12, idx.offset, &idx, k, FILE).is_err());
    assert_eq!(
        &decode_record(rec, 13, idx.offset, &idx, k, FILE).unwrap(),
        v
    );
    assert!(decode_record(rec, 13, idx.offset + 1, &idx, k, FILE).is_err());
    // The same record moved to another offset of its own file.
    let good = fs.read_all(Path::new("/12")).unwrap();
    let rec = &good[at];
    assert_eq!(
        &decode_record(rec, 12, idx.offset, &idx, k, FILE).unwrap(),
        v
    );
    assert!(decode_record(rec, 12, idxs[3].offset, &idx, k, FILE).is_err());
}

#[test]
fn decode_record_never_panics_on_garbage() {
    let kvs = sweep_values();
    let (bytes, idxs) = build(Compression::Lz4, &kvs);
    let mut x = 0x9e37_79b9_u32;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let i = (x as usize) % idxs.len();
        let (k, _) = &kvs[i];
        let start = (x >> 8) as usize % bytes.len();
        let end = start + (x >> 20) as usize % 64;
        let buf = bytes.get(start..end.min(bytes.len())).unwrap_or_default();
        if let Err(e) = decode_record(buf, NUMBER, start as u64, &idxs[i], k, FILE) {
            assert_corruption_in_file(&e, bytes.len());
        }
    }
}

/// A writable file whose appends fail from the `fail_at`-th on.
struct FailingFile {
    appends: usize,
    fail_at: usize,
    len: u64,
}

impl WritableFile for FailingFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.appends += 1;
        if self.appends >= self.fail_at {
            return Err(Error::io(
                "append",
                std::io::Error::from(std::io::ErrorKind::StorageFull),
            ));
        }
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

#[test]
fn a_failed_write_poisons_the_builder() {
    // Appends: the header, three per record (3 records), the footer.
    for fail_at in 1..=11 {
        let f = FailingFile {
            appends: 0,
            fail_at,
            len: 0,
        };
        let mut b =
            match BlobFileBuilder::new(Box::new(f), FILE.into(), NUMBER, 0, Compression::None) {
                Ok(b) => b,
                Err(e) => {
                    assert!(fail_at == 1 && e.is_no_space(), "{e:?}");
                    continue;
                }
            };
        let mut first: Option<Error> = None;
        for i in 0..3 {
            match (b.add(format!("k{i}").as_bytes(), b"v"), &first) {
                (Ok(_), None) => {}
                (Err(e), None) => {
                    assert!(e.is_no_space(), "{e:?}");
                    first = Some(e);
                }
                (r, Some(f)) => assert_eq!(r.err().as_ref(), Some(f), "poisoned"),
            }
        }
        let done = b.finish();
        match first {
            Some(e) => assert_eq!(done.unwrap_err(), e),
            None => assert!(fail_at == 11 && done.unwrap_err().is_no_space()),
        }
    }
    let nonempty = FailingFile {
        appends: 0,
        fail_at: usize::MAX,
        len: 1,
    };
    let e = BlobFileBuilder::new(Box::new(nonempty), FILE.into(), 1, 0, Compression::None);
    assert!(matches!(e, Err(Error::InvalidArgument(_))));
}
