use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::fs::{FileSystem, MemFileSystem};
use crate::{CfOptions, Options, StringAppendOperator, WriteOptions};

/// A DB in memory whose default family appends merges with `,`.
fn open() -> Db {
    let fs: Arc<dyn FileSystem> = Arc::new(MemFileSystem::new());
    let opts = Options {
        create_if_missing: true,
        fs,
        cf: CfOptions {
            merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
            ..CfOptions::default()
        },
        ..Options::default()
    };
    Db::open(Path::new("/db"), opts).unwrap()
}

fn found(v: &str) -> BatchRead {
    BatchRead::Found(v.as_bytes().to_vec())
}

#[test]
fn batch_reads_say_what_the_batch_alone_decides() {
    let db = open();
    let cf = db.default_cf();
    let mut wb = WriteBatchWithIndex::new();
    wb.put(b"a", b"1");
    wb.merge(b"a", b"2");
    wb.delete(b"b");
    wb.merge(b"c", b"x");
    wb.merge(b"c", b"y");
    wb.single_delete(b"d");
    wb.put(b"e", b"1");
    wb.delete_range(b"e", b"f");
    wb.merge(b"e", b"z");
    assert_eq!(wb.get_from_batch(&cf, b"a").unwrap(), found("1,2"));
    assert_eq!(wb.get_from_batch(&cf, b"b").unwrap(), BatchRead::Deleted);
    assert_eq!(
        wb.get_from_batch(&cf, b"c").unwrap(),
        BatchRead::MergeInProgress(vec![b"x".to_vec(), b"y".to_vec()])
    );
    assert_eq!(wb.get_from_batch(&cf, b"d").unwrap(), BatchRead::Deleted);
    assert_eq!(wb.get_from_batch(&cf, b"e").unwrap(), found("z"));
    assert_eq!(wb.get_from_batch(&cf, b"ee").unwrap(), BatchRead::Deleted);
    assert_eq!(wb.get_from_batch(&cf, b"g").unwrap(), BatchRead::NotFound);
    assert_eq!(wb.len(), 9);
    assert!(!wb.is_empty());
}

#[test]
fn reads_over_the_db_match_the_db_after_the_write() {
    let db = open();
    let cf = db.default_cf();
    for (k, v) in [("a", "0"), ("c", "0"), ("e", "0"), ("f", "0")] {
        db.put(k.as_bytes(), v.as_bytes()).unwrap();
    }
    db.merge(b"c", b"1").unwrap();
    let mut wb = WriteBatchWithIndex::new();
    wb.merge(b"c", b"2");
    wb.delete_range(b"e", b"f");
    wb.put(b"b", b"9");
    let ro = ReadOptions::new();
    let keys: [&[u8]; 6] = [b"a", b"b", b"c", b"d", b"e", b"f"];
    let predicted: Vec<_> = keys
        .iter()
        .map(|k| wb.get_from_batch_and_db(&db, &ro, &cf, k).unwrap())
        .collect();
    assert_eq!(predicted[2].as_deref(), Some(&b"0,1,2"[..]));
    assert_eq!(predicted[4], None);
    let mut it = wb.iter_with_base(&db, &ro, &cf);
    let mut scanned = Vec::new();
    it.seek_to_first();
    while it.valid() {
        scanned.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    drop(it);
    db.write(wb.into_write_batch(), &WriteOptions::default())
        .unwrap();
    for (k, p) in keys.iter().zip(&predicted) {
        assert_eq!(&db.get(k).unwrap().map(|v| v.to_vec()), p, "{k:?}");
    }
    let after: Vec<_> = db.range(..).map(Result::unwrap).collect();
    assert_eq!(scanned, after);
}

#[test]
fn savepoints_roll_the_batch_and_its_index_back() {
    let db = open();
    let cf = db.default_cf();
    let mut wb = WriteBatchWithIndex::new();
    assert!(wb.rollback_to_savepoint().is_err());
    assert!(wb.pop_savepoint().is_err());
    wb.put(b"a", b"1");
    wb.set_savepoint();
    wb.put(b"a", b"2");
    wb.delete_range(b"a", b"z");
    wb.set_savepoint();
    wb.put(b"b", b"3");
    wb.pop_savepoint().unwrap();
    assert_eq!(wb.get_from_batch(&cf, b"b").unwrap(), found("3"));
    wb.rollback_to_savepoint().unwrap();
    assert_eq!(wb.len(), 1);
    assert_eq!(wb.get_from_batch(&cf, b"a").unwrap(), found("1"));
    assert_eq!(wb.get_from_batch(&cf, b"b").unwrap(), BatchRead::NotFound);
    assert_eq!(wb.batch_entries(&0u32).len(), 1);
    wb.clear();
    assert!(wb.is_empty());
    assert_eq!(wb.get_from_batch(&cf, b"a").unwrap(), BatchRead::NotFound);
}

#[test]
fn batch_entries_list_the_index() {
    let mut wb = WriteBatchWithIndex::with_overwrite_key(false);
    wb.put(b"b", b"1");
    wb.merge(b"a", b"m");
    wb.delete(b"b");
    wb.single_delete_cf(&2u32, b"x");
    let e = wb.batch_entries(&0u32);
    assert_eq!(
        e,
        vec![
            (b"a".to_vec(), WriteType::Merge, b"m".to_vec()),
            (b"b".to_vec(), WriteType::Put, b"1".to_vec()),
            (b"b".to_vec(), WriteType::Delete, Vec::new()),
        ]
    );
    assert_eq!(wb.batch_entries(&2u32)[0].1, WriteType::SingleDelete);
    let mut ow = WriteBatchWithIndex::with_overwrite_key(true);
    ow.put(b"b", b"1");
    ow.delete(b"b");
    assert_eq!(ow.batch_entries(&0u32).len(), 1);
    assert_eq!(ow.write_batch().len(), 2);
}
