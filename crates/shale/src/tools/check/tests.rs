use super::*;

/// A table deleted under a DB another handle holds open is skipped with
/// a note, not reported as damage; the same loss in a closed DB is a
/// problem.
#[test]
fn a_file_gone_from_a_db_in_use_is_skipped_not_damage() {
    let d = tempfile::tempdir().unwrap();
    let o = crate::options::Options {
        create_if_missing: true,
        ..Default::default()
    };
    let db = crate::db::Db::open(d.path(), o).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    let r = check_db(d.path()).unwrap();
    assert!(r.in_use && r.is_clean() && r.skipped == 0, "{r:?}");
    let table = default_fs()
        .list(d.path())
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".sst"))
        .unwrap();
    std::fs::remove_file(d.path().join(&table)).unwrap();
    let r = check_db(d.path()).unwrap();
    assert!(r.in_use && r.is_clean(), "{r:?}");
    assert_eq!(r.skipped, 1, "{r:?}");
    assert!(r.notes[0].contains("in use"), "{r:?}");
    assert!(r.notes.iter().any(|n| n.starts_with(&table)), "{r:?}");
    drop(db);
    let r = check_db(d.path()).unwrap();
    assert!(!r.in_use && r.skipped == 0, "{r:?}");
    assert_eq!(r.problems.len(), 1, "{r:?}");
}

fn listed(cf: u32, size: u64) -> LiveBlobFile {
    LiveBlobFile {
        cf,
        count: 1,
        bytes: 100,
        size,
        garbage_count: 0,
        garbage_bytes: 0,
        added_at: 0,
    }
}

fn idx(offset: u64, size: u64) -> BlobIndex {
    BlobIndex {
        file_number: 7,
        offset,
        size,
        compression: 0,
    }
}

#[test]
fn blob_references_must_lie_in_a_listed_file_of_their_family() {
    let problem = |i: &BlobIndex, cf, b: Option<&LiveBlobFile>| {
        blob_ref_problem(i, 3, cf, b, "MANIFEST-000001")
    };
    // Header 24, record header 13 + key 3 + value 100: a 168-byte file
    // (28-byte footer) holds exactly one record at 24.
    let file = listed(2, 24 + 116 + 28);
    assert_eq!(problem(&idx(24, 100), 2, Some(&file)), None);
    let past = problem(&idx(24, 101), 2, Some(&file)).unwrap();
    assert!(past.contains("bytes 24..141 of 000007.blob"), "{past}");
    assert!(past.contains("outside its records (24..140"), "{past}");
    let before = problem(&idx(10, 10), 2, Some(&file)).unwrap();
    assert!(before.contains("outside its records"), "{before}");
    let huge = problem(&idx(u64::MAX, u64::MAX), 2, Some(&file)).unwrap();
    assert!(huge.contains("outside its records"), "{huge}");
    let other = problem(&idx(24, 100), 1, Some(&file)).unwrap();
    assert!(
        other.contains("lists for column family 2, not 1"),
        "{other}"
    );
    let unlisted = problem(&idx(24, 100), 2, None).unwrap();
    assert_eq!(
        unlisted,
        "point into 000007.blob, which MANIFEST-000001 does not list"
    );
}
