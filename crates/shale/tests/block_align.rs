//! Aligned data blocks (`block_align`, RocksDB's option): refused with
//! compression or an odd block size; tables written with and without it
//! mix across reopens; and a point read of an aligned 4 KiB block asks the
//! file system for bytes within one page, where unaligned blocks straddle
//! two (the device bytes per get that issue 16 counts).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use shale::fs::{FileSystem, PosixFileSystem};
use shale::{CfOptions, Compression, Db, Error, Options};

fn key(i: u32) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(2_654_435_761) % 1_000_000_007).into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-")
        .repeat(1 + (i % 17) as usize)
        .into_bytes()
}

fn options(fs: Arc<dyn FileSystem>, block_align: bool) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
        target_file_size_base: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        cache_size: 0,
        bloom_bits_per_key: 0,
        block_align,
        fs,
        ..Options::default()
    }
}

#[test]
fn block_align_with_compression_or_an_odd_block_size_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(PosixFileSystem::default());
    let refused = |o: Options, what: &str| match Db::open(dir.path(), o) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("block_align"), "{what}: {m}"),
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => panic!("{what}: {e}"),
    };
    refused(
        Options {
            compression_per_level: vec![Compression::None, Compression::Lz4],
            ..options(fs.clone(), true)
        },
        "lz4 on level 1",
    );
    refused(
        Options {
            bottommost_compression: Some(Compression::Zstd),
            ..options(fs.clone(), true)
        },
        "zstd at the bottom",
    );
    refused(
        Options {
            block_size: 3000,
            ..options(fs.clone(), true)
        },
        "block_size 3000",
    );
    // The same for a column family created later.
    let db = Db::open(dir.path(), options(fs.clone(), false)).unwrap();
    let cf = CfOptions {
        block_align: true,
        compression_per_level: vec![Compression::Lz4],
        ..CfOptions::default()
    };
    assert!(matches!(
        db.create_cf("c", cf),
        Err(Error::InvalidArgument(_))
    ));
    let cf = CfOptions {
        block_align: true,
        ..CfOptions::default()
    };
    db.create_cf("aligned", cf).unwrap();
}

/// Tables without, then with, then without alignment in one DB: every
/// value reads back by get and scan after each reopen and a full
/// compaction.
#[test]
fn aligned_and_unaligned_tables_mix_across_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn FileSystem> = Arc::new(PosixFileSystem::default());
    let mut model = BTreeMap::new();
    for (round, align) in [false, true, false, true].into_iter().enumerate() {
        let db = Db::open(dir.path(), options(fs.clone(), align)).unwrap();
        let r = round as u32;
        for i in r * 5_000..(r + 2) * 5_000 {
            db.put(&key(i), &value(i + r)).unwrap();
            model.insert(key(i), value(i + r));
        }
        db.flush().unwrap();
        if round == 2 {
            db.compact_range(None, None).unwrap();
        }
        for (k, v) in model.iter().step_by(7) {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]), "round {round}");
        }
        let scanned: Vec<(Vec<u8>, Vec<u8>)> = db
            .range(..)
            .map(|e| {
                let (k, v) = e.unwrap();
                (k.to_vec(), v.to_vec())
            })
            .collect();
        assert_eq!(scanned.len(), model.len(), "round {round}");
        assert!(scanned
            .iter()
            .zip(&model)
            .all(|(a, b)| (&a.0, &a.1) == (b.0, b.1)));
        db.close().unwrap();
    }
}

/// Point reads without a block cache, one table of 4 KiB blocks: the reads
/// of data blocks the file system sees (offset, length), and how many of
/// them touch two 4 KiB pages.
fn straddling_reads(block_align: bool) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let (fs, reads) = common::recording_table_reads();
    let db = Db::open(dir.path(), options(fs, block_align)).unwrap();
    for i in 0..2_000 {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    reads.lock().unwrap().clear();
    for i in (0..2_000).step_by(3) {
        assert_eq!(db.get(&key(i)).unwrap().as_deref(), Some(&value(i)[..]));
    }
    let reads = reads.lock().unwrap();
    // Data block reads: about a block (index, filter and footer reads are
    // made at open and kept by the table reader).
    let blocks: Vec<&(u64, usize)> = reads.iter().filter(|(_, len)| *len > 1024).collect();
    let straddling = blocks
        .iter()
        .filter(|(off, len)| off / 4096 != (off + *len as u64 - 1) / 4096)
        .count();
    (blocks.len(), straddling)
}

#[test]
fn a_point_read_of_an_aligned_block_stays_in_one_page() {
    let (n, straddling) = straddling_reads(true);
    assert!(n > 500, "{n} block reads");
    assert_eq!(
        straddling, 0,
        "{straddling} of {n} aligned block reads cross a page"
    );
    // Without alignment almost every 4 KiB block crosses a page boundary.
    let (n, straddling) = straddling_reads(false);
    assert!(
        straddling * 10 > n * 9,
        "{straddling} of {n} unaligned block reads cross a page"
    );
}
