//! Regression tests of issue 36 ("Tools that never harm data"): the writing
//! commands keep a DB's persisted options, `shale check` never calls a DB
//! in use corrupt, and a path with no DB is said to be one (not repaired).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use shale::{CfOptions, Compression, Db, MergeOperator, Options};

/// The newest OPTIONS file's text, without its `[Version]` section.
fn options_text(dir: &std::path::Path) -> String {
    let p = shale::tools::OptionsFile::latest_in(dir).unwrap();
    let text = std::fs::read_to_string(p).unwrap();
    text.split("\n[")
        .filter(|s| !s.starts_with("Version]") && !s.contains("[Version]"))
        .collect::<Vec<_>>()
        .join("\n[")
}

/// Options that differ from the defaults in the DB-wide part, the default
/// family (LZ4, as in the report) and a second family.
fn tuned() -> Options {
    Options {
        create_if_missing: true,
        create_missing_column_families: true,
        cf: CfOptions {
            compression_per_level: vec![Compression::Lz4],
            bottommost_compression: Some(Compression::Zstd),
            write_buffer_size: 3 << 20,
            bloom_bits_per_key: 7,
            level0_file_num_compaction_trigger: 6,
            ..Default::default()
        },
        max_open_files: 400,
        max_background_jobs: 3,
        column_families: vec![(
            "users".to_string(),
            CfOptions {
                compression_per_level: vec![Compression::Zstd],
                block_size: 8192,
                ..CfOptions::default()
            },
        )],
        ..Options::default()
    }
}

#[test]
fn write_commands_keep_the_persisted_options() {
    let d = tempfile::tempdir().unwrap();
    let db = Db::open(d.path(), tuned()).unwrap();
    for i in 0..200u32 {
        db.put(format!("k{i:04}").as_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let before = options_text(d.path());
    let p = path_str(d.path());
    ok(&["put", p, "k9999", "v"]);
    assert_eq!(options_text(d.path()), before, "after shale put");
    ok(&["delete", p, "k0001"]);
    assert_eq!(options_text(d.path()), before, "after shale delete");
    ok(&["compact", p]);
    assert_eq!(options_text(d.path()), before, "after shale compact");
    // The tables compaction wrote use the persisted compression.
    let tables = files_with(d.path(), "sst");
    assert!(!tables.is_empty());
    for t in &tables {
        let dump = ok(&["sst", "dump", "--json", path_str(t)]);
        assert!(dump.contains("ZSTD") || dump.contains("LZ4"), "{dump}");
    }
    // Reading commands change nothing either.
    ok(&["get", p, "k9999"]);
    assert_eq!(options_text(d.path()), before);
}

#[test]
fn default_options_and_option_flags_override() {
    let d = tempfile::tempdir().unwrap();
    Db::open(d.path(), tuned()).unwrap().close().unwrap();
    let p = path_str(d.path());
    ok(&["put", p, "--option", "max_open_files=500", "k", "v"]);
    let o = shale::load_latest_options(d.path(), &Default::default()).unwrap();
    assert_eq!(o.options.max_open_files, 500);
    assert_eq!(o.options.compression_per_level, vec![Compression::Lz4]);
    let bad = shale(&["put", p, "--option", "no_such_option=1", "k", "v"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("no_such_option"), "{}", bad.stderr);
    ok(&["put", p, "--default-options", "k", "v"]);
    let o = shale::load_latest_options(d.path(), &Default::default()).unwrap();
    assert_eq!(
        o.options.compression_per_level,
        Options::default().compression_per_level
    );
}

struct Concat;
impl MergeOperator for Concat {
    fn name(&self) -> &str {
        "test-concat"
    }
    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> shale::Result<Vec<u8>> {
        let mut v = existing.unwrap_or_default().to_vec();
        operands.iter().for_each(|o| v.extend_from_slice(o));
        Ok(v)
    }
}

#[test]
fn a_write_command_refuses_a_db_whose_code_it_lacks() {
    let d = tempfile::tempdir().unwrap();
    let o = {
        let base = tuned();
        Options {
            cf: CfOptions {
                merge_operator: Some(Arc::new(Concat)),
                ..base.cf
            },
            ..base
        }
    };
    let db = Db::open(d.path(), o).unwrap();
    db.put(b"plain", b"value").unwrap();
    db.close().unwrap();
    let p = path_str(d.path());
    let r = shale(&["compact", p]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("test-concat"), "{}", r.stderr);
    // Reading works, with a note.
    let r = shale(&["get", p, "plain"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("test-concat"), "{}", r.stderr);
}

#[test]
fn a_missing_path_says_no_db_is_there_and_suggests_no_repair() {
    let d = tempfile::tempdir().unwrap();
    let missing = d.path().join("nothing-here");
    for args in [
        vec!["get", path_str(&missing), "k"],
        vec!["put", path_str(&missing), "k", "v"],
        vec!["scan", path_str(&missing)],
    ] {
        let r = shale(&args);
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.stderr.contains("no DB there"), "{args:?}: {}", r.stderr);
        assert!(!r.stderr.contains("repair"), "{args:?}: {}", r.stderr);
    }
    assert!(!missing.exists());
    // A directory with a DB's tables but no CURRENT may be repaired.
    make_db(d.path());
    std::fs::remove_file(d.path().join("CURRENT")).unwrap();
    let r = shale(&["get", path_str(d.path()), "a"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("shale repair"), "{}", r.stderr);
}

/// `shale check` beside a DB that flushes and compacts all the time (this
/// process holds its LOCK): never exit 1, and say the DB is in use. Before
/// the fix, tables the compactions deleted mid-check were reported as
/// `Corruption ... file has 0 bytes`.
#[test]
fn check_never_calls_a_db_in_use_corrupt() {
    let d = tempfile::tempdir().unwrap();
    let o = Options {
        create_if_missing: true,
        cf: CfOptions {
            write_buffer_size: 64 << 10,
            target_file_size_base: 64 << 10,
            max_bytes_for_level_base: 256 << 10,
            level0_file_num_compaction_trigger: 2,
            ..Default::default()
        },
        ..Options::default()
    };
    let db = Arc::new(Db::open(d.path(), o).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let k = format!("key{:08}", (i * 7919) % 20_000);
                db.put(k.as_bytes(), &[b'v'; 1000]).unwrap();
                i += 1;
                if i.is_multiple_of(2000) {
                    db.flush().unwrap();
                }
            }
        })
    };
    // A DB of some megabytes first, so a check takes long enough for
    // compactions to delete tables under it.
    while files_with(d.path(), "sst").len() < 12 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let p = path_str(d.path());
    let mut skipped = 0;
    for round in 0..8 {
        let r = shale(&["check", "--json", p]);
        let v: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("round {round}: {e}: {}{}", r.stdout, r.stderr));
        assert_eq!(r.code, 0, "round {round}: {v:#}");
        assert_eq!(v["in_use"], true, "{v:#}");
        assert_eq!(v["clean"], true, "{v:#}");
        skipped += v["skipped"].as_u64().unwrap();
        let text = ok(&["check", p]);
        assert!(text.contains("in use"), "{text}");
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    eprintln!("files skipped over 8 rounds: {skipped}");
    Arc::into_inner(db).unwrap().close().unwrap();
    // Closed: a complete check, not in use.
    let r = shale(&["check", "--json", p]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(r.code, 0, "{v:#}");
    assert_eq!(v["in_use"], false);
    assert_eq!(v["skipped"], 0);
}
