use super::*;
use crate::build::user_filter::FilterDecision;
use crate::db::Db;
use crate::merge::UInt64AddOperator;
use crate::options::{CompactionStyle, Compression, WalRecoveryMode};

struct KeepAll;
impl CompactionFilter for KeepAll {
    fn name(&self) -> &str {
        "keep-all"
    }
    fn filter(&self, _level: usize, _key: &[u8], _value: &[u8]) -> FilterDecision {
        FilterDecision::Keep
    }
}

struct MyMerge;
impl MergeOperator for MyMerge {
    fn name(&self) -> &str {
        "my-merge"
    }
    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> crate::error::Result<Vec<u8>> {
        let mut v = existing.unwrap_or_default().to_vec();
        for o in operands {
            v.extend_from_slice(o);
        }
        Ok(v)
    }
}

fn configured() -> Options {
    let users = CfOptions {
        compression_per_level: vec![Compression::Zstd],
        write_buffer_size: 3 << 20,
        merge_operator: Some(Arc::new(MyMerge)),
        compaction_filter: Some(Arc::new(KeepAll)),
        compaction_style: CompactionStyle::Universal,
        ..CfOptions::default()
    };
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        max_background_jobs: 5,
        wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
        max_open_files: 321,
        cache_size: 7 << 20,
        cf: CfOptions {
            compression_per_level: vec![Compression::Lz4],
            bloom_bits_per_key: 7,
            write_buffer_size: 5 << 20,
            merge_operator: Some(Arc::new(UInt64AddOperator)),
            ..Default::default()
        },
        column_families: vec![("users".to_string(), users)],
        ..Options::default()
    }
}

#[test]
fn reads_back_what_the_db_was_opened_with() {
    let d = tempfile::tempdir().unwrap();
    Db::open(d.path(), configured()).unwrap().close().unwrap();
    let code = SuppliedCode {
        merge_operators: vec![Arc::new(MyMerge)],
        compaction_filters: vec![Arc::new(KeepAll)],
    };
    let l = load_latest_options(d.path(), &code).unwrap();
    l.require_all_code().unwrap();
    let o = &l.options;
    assert_eq!(o.max_background_jobs, 5);
    assert_eq!(o.wal_recovery_mode, WalRecoveryMode::AbsoluteConsistency);
    assert_eq!(o.max_open_files, 321);
    assert_eq!(o.cache_size, 7 << 20);
    assert_eq!(o.compression_per_level, vec![Compression::Lz4]);
    assert_eq!(o.bloom_bits_per_key, 7);
    assert_eq!(o.write_buffer_size, 5 << 20);
    assert_eq!(
        o.merge_operator.as_ref().map(|m| m.name()),
        Some("uint64add")
    );
    let (name, users) = &o.column_families[0];
    assert_eq!(name, "users");
    assert_eq!(users.compression_per_level, vec![Compression::Zstd]);
    assert_eq!(users.write_buffer_size, 3 << 20);
    assert_eq!(users.compaction_style, CompactionStyle::Universal);
    assert_eq!(
        users.merge_operator.as_ref().map(|m| m.name()),
        Some("my-merge")
    );
    assert_eq!(
        users.compaction_filter.as_ref().map(|f| f.name()),
        Some("keep-all")
    );
    // The loaded options render the same OPTIONS text as the originals.
    let render = |o: &Options| crate::options::file::render(o, &o.column_families);
    assert_eq!(render(o), render(&configured()));
    // And they reopen the DB.
    let mut reopen = l.options.clone();
    reopen.create_if_missing = false;
    Db::open(d.path(), reopen).unwrap().close().unwrap();
}

/// Families created and dropped while open are loaded, with their
/// options (from the MANIFEST: the OPTIONS file names only the families
/// of the last open and `set_options`).
#[test]
fn families_created_and_dropped_while_open_are_in_the_file() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), configured()).unwrap();
    let late = CfOptions {
        write_buffer_size: 9 << 20,
        ..CfOptions::default()
    };
    db.create_cf("late", late).unwrap();
    let names = |dir: &Path| -> Vec<String> {
        let l = load_latest_options(dir, &SuppliedCode::default()).unwrap();
        l.options
            .column_families
            .iter()
            .map(|(n, _)| n.clone())
            .collect()
    };
    assert_eq!(
        names(d.path()),
        vec!["users".to_string(), "late".to_string()]
    );
    let l = load_latest_options(d.path(), &SuppliedCode::default()).unwrap();
    assert_eq!(l.options.column_families[1].1.write_buffer_size, 9 << 20);
    let users = db.cf("users").unwrap();
    db.drop_cf(&users).unwrap();
    assert_eq!(names(d.path()), vec!["late".to_string()]);
    db.close().unwrap();
}

#[test]
fn code_not_supplied_is_listed_and_can_be_refused() {
    let d = tempfile::tempdir().unwrap();
    Db::open(d.path(), configured()).unwrap().close().unwrap();
    let l = load_latest_options(d.path(), &SuppliedCode::default()).unwrap();
    assert_eq!(
        l.unresolved,
        vec![
            "family \"users\": merge_operator \"my-merge\"".to_string(),
            "family \"users\": compaction_filter \"keep-all\"".to_string(),
        ]
    );
    let e = l.require_all_code().unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("my-merge")),
        "{e:?}"
    );
}

#[test]
fn unknown_names_newer_versions_and_missing_files_are_errors() {
    let d = tempfile::tempdir().unwrap();
    let none = load_latest_options(d.path(), &SuppliedCode::default()).unwrap_err();
    assert!(matches!(none, Error::InvalidArgument(_)), "{none:?}");
    let write = |text: &str| std::fs::write(d.path().join("OPTIONS-000007"), text).unwrap();
    write("[Version]\noptions_file_version=1\n[DBOptions]\nmax_open_files=12\nfrobnicate=1\n");
    let e = load_latest_options(d.path(), &SuppliedCode::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("OPTIONS-000007 [DBOptions]") && m.contains("frobnicate")),
        "{e:?}"
    );
    write("[Version]\noptions_file_version=2\n");
    let e = load_latest_options(d.path(), &SuppliedCode::default()).unwrap_err();
    assert!(matches!(e, Error::NotSupported(_)), "{e:?}");
    write("[CFOptions \"default\"]\nwrite_buffer_size=lots\n");
    let e = load_latest_options(d.path(), &SuppliedCode::default()).unwrap_err();
    assert!(
        matches!(&e, Error::InvalidArgument(m) if m.contains("write_buffer_size")),
        "{e:?}"
    );
    // An older, shorter file: what it does not name keeps its default.
    write("[DBOptions]\nmax_open_files=40\n[CFOptions \"default\"]\nwrite_buffer_size=1048576\n");
    let l = load_latest_options(d.path(), &SuppliedCode::default()).unwrap();
    assert_eq!(l.options.max_open_files, 40);
    assert_eq!(l.options.write_buffer_size, 1 << 20);
    assert_eq!(
        l.options.max_background_jobs,
        Options::default().max_background_jobs
    );
}
