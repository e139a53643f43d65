use super::*;

#[test]
fn names_match_rocksdb() {
    assert_eq!(manifest_file_name(5), "MANIFEST-000005");
    assert_eq!(log_file_name(7), "000007.log");
    assert_eq!(table_file_name(9), "000009.sst");
    assert_eq!(options_file_name(11), "OPTIONS-000011");
    assert_eq!(temp_file_name(3), "000003.dbtmp");
    assert_eq!(blob_file_name(12), "000012.blob");
    assert_eq!(table_file_name(12_345_678), "12345678.sst");
    let p = file_path(Path::new("/db"), FileType::Table, 9);
    assert_eq!(p, PathBuf::from("/db/000009.sst"));
    assert_eq!(
        file_path(Path::new("/db"), FileType::Current, 9),
        PathBuf::from("/db/CURRENT")
    );
}

#[test]
fn parse_roundtrip() {
    for n in [0u64, 1, 999_999, 1_000_000, u64::MAX] {
        for (ty, name) in [
            (FileType::Log, log_file_name(n)),
            (FileType::Table, table_file_name(n)),
            (FileType::Blob, blob_file_name(n)),
            (FileType::Manifest, manifest_file_name(n)),
            (FileType::Temp, temp_file_name(n)),
            (FileType::Options, options_file_name(n)),
        ] {
            assert_eq!(parse_file_name(&name), Some((ty, n)), "{name}");
        }
    }
    assert_eq!(parse_file_name("CURRENT"), Some((FileType::Current, 0)));
    assert_eq!(parse_file_name("LOCK"), Some((FileType::Lock, 0)));
    assert_eq!(parse_file_name("LOG"), Some((FileType::InfoLog, 0)));
    assert_eq!(
        parse_file_name("LOG.old.1234"),
        Some((FileType::InfoLog, 0))
    );
}

#[test]
fn parse_rejects_foreign_names() {
    for bad in [
        "",
        "foo",
        "MANIFEST-",
        "MANIFEST-12a",
        "MANIFEST--1",
        "MANIFEST-+1",
        "OPTIONS-",
        ".sst",
        "12.txt",
        "x12.sst",
        "12.sst.bak",
        "99999999999999999999999.sst",
        "CURRENT.bak",
        "000001.log ",
    ] {
        assert_eq!(parse_file_name(bad), None, "{bad:?}");
    }
}
