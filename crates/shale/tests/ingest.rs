//! Bulk load (issue 39): `SstFileWriter` writes external table files and
//! `Db::ingest_external_file` links them into the LSM, with RocksDB's
//! placement, global sequence numbers and atomicity, checked against a
//! model where it matters.

use std::path::{Path, PathBuf};

use shale::{Error, Options, SstFileWriter};

fn k(i: u32) -> Vec<u8> {
    format!("k{i:06}").into_bytes()
}

/// Writes `path` with puts of `keys` (sorted) to value `v{i}-{tag}`.
fn write_sst(path: &Path, keys: impl IntoIterator<Item = u32>, tag: &str) -> PathBuf {
    let mut w = SstFileWriter::new(&Options::default());
    w.open(path).unwrap();
    for i in keys {
        w.put(&k(i), format!("v{i}-{tag}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

#[test]
fn writer_rejects_keys_out_of_order_and_duplicates() {
    let d = tempfile::tempdir().unwrap();
    let mut w = SstFileWriter::new(&Options::default());
    w.open(d.path().join("a.sst")).unwrap();
    w.put(b"b", b"1").unwrap();
    assert!(matches!(w.put(b"a", b"2"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.put(b"b", b"2"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.delete(b"b"), Err(Error::InvalidArgument(_))));
    // Range deletions come in any order.
    w.delete_range(b"x", b"z").unwrap();
    w.delete_range(b"a", b"c").unwrap();
    assert!(matches!(
        w.delete_range(b"c", b"a"),
        Err(Error::InvalidArgument(_))
    ));
    w.merge(b"c", b"m").unwrap();
    let info = w.finish().unwrap();
    assert_eq!(info.smallest_key, b"b");
    assert_eq!(info.largest_key, b"c");
    assert_eq!(info.smallest_range_del_key, b"a");
    assert_eq!(info.largest_range_del_key, b"z");
    assert_eq!(info.num_entries, 2);
    assert_eq!(info.num_range_del_entries, 2);
    assert_eq!(
        info.file_size,
        std::fs::metadata(&info.file_path).unwrap().len()
    );
    // An empty file is refused; so is finish without open.
    w.open(d.path().join("b.sst")).unwrap();
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    assert!(!d.path().join("b.sst").exists());
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
}

#[test]
fn written_files_read_back_with_the_sst_reader() {
    let d = tempfile::tempdir().unwrap();
    let p = write_sst(&d.path().join("x.sst"), 0..1000, "a");
    let r = shale::tools::SstReader::open(&p).unwrap();
    assert!(r.verify().unwrap().is_empty());
    let props = r.properties();
    assert_eq!(props.external_version, 1);
    assert_eq!(props.format_version, 3);
    assert_eq!(props.num_entries, 1000);
    assert_eq!((props.smallest_seqno, props.largest_seqno), (0, 0));
    let got: Vec<(Vec<u8>, Vec<u8>)> = r
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.key.user_key, e.value)
        })
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = (0..1000)
        .map(|i| (k(i), format!("v{i}-a").into_bytes()))
        .collect();
    assert_eq!(got, want);
}
