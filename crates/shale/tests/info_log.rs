//! The LOG file: rotation by size (`max_log_file_size`) and at open, old
//! logs bounded by `keep_log_file_num`, lines filtered by `info_log_level`,
//! the options validated and persisted.

use std::path::Path;
use std::sync::Arc;

use shale::{Db, Error, EventListener, FlushJobInfo, InfoLogLevel, Options};

mod common;

/// (name, size) of `LOG` and every `LOG.old.*`, old ones oldest first.
fn logs(dir: &Path) -> (u64, Vec<(String, u64)>) {
    let mut live = 0;
    let mut old: Vec<(u64, String, u64)> = Vec::new();
    for e in std::fs::read_dir(dir).expect("list") {
        let e = e.expect("entry");
        let name = e.file_name().into_string().expect("utf-8");
        let size = e.metadata().expect("stat").len();
        if name == "LOG" {
            live = size;
        } else if let Some(micros) = name.strip_prefix("LOG.old.") {
            old.push((micros.parse().expect("micros suffix"), name, size));
        } else {
            assert!(!name.starts_with("LOG"), "unexpected {name}");
        }
    }
    old.sort();
    (live, old.into_iter().map(|(_, n, s)| (n, s)).collect())
}

fn flush_rounds(db: &Db, rounds: u32) {
    for r in 0..rounds {
        db.put(format!("key{r:05}").as_bytes(), b"value")
            .expect("put");
        db.flush().expect("flush");
    }
}

#[test]
fn rotation_keeps_the_log_within_its_bound_and_the_newest_old_logs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let max = 4096;
    let opts = Options {
        max_log_file_size: max,
        keep_log_file_num: 3,
        ..common::quiet_options()
    };
    let db = Db::open(dir.path(), opts.clone()).expect("open");
    flush_rounds(&db, 60);
    let (live, old) = logs(dir.path());
    assert_eq!(old.len(), 3, "{old:?}");
    assert!(live > 0 && live <= max, "LOG {live} bytes");
    for (name, size) in &old {
        assert!(*size <= max && *size > max / 2, "{name}: {size} bytes");
    }
    // The newest old log ends where LOG starts: its last line is an event
    // of a flush before the ones in LOG.
    let last_old =
        std::fs::read_to_string(dir.path().join(&old[2].0)).expect("read the newest old log");
    assert!(last_old.ends_with('\n'), "whole lines only");
    db.close().expect("close");

    // A reopen rotates the LOG too, and still keeps three old ones.
    let before = std::fs::read_to_string(dir.path().join("LOG")).expect("LOG");
    let db = Db::open(dir.path(), opts).expect("reopen");
    let (_, old2) = logs(dir.path());
    assert_eq!(old2.len(), 3, "{old2:?}");
    assert_eq!(old2[..2], old[1..], "the oldest was deleted");
    let rotated = std::fs::read_to_string(dir.path().join(&old2[2].0)).expect("read");
    assert_eq!(rotated, before, "the LOG of the first open, renamed");
    let now = std::fs::read_to_string(dir.path().join("LOG")).expect("LOG");
    assert!(now.contains("Opening "), "{now}");
    db.close().expect("close");
}

#[test]
fn unlimited_log_is_rotated_only_at_open() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), common::quiet_options()).expect("open");
    flush_rounds(&db, 20);
    assert!(logs(dir.path()).1.is_empty());
    db.close().expect("close");
    let db = Db::open(dir.path(), common::quiet_options()).expect("reopen");
    let (_, old) = logs(dir.path());
    assert_eq!(old.len(), 1, "{old:?}");
    db.close().expect("close");
}

struct Panics;

impl EventListener for Panics {
    fn on_flush_completed(&self, _: &FlushJobInfo) {
        panic!("listener boom");
    }
}

#[test]
fn warn_level_writes_no_info_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(
        dir.path(),
        Options {
            info_log_level: InfoLogLevel::Warn,
            listeners: vec![Arc::new(Panics) as Arc<dyn EventListener>],
            ..common::quiet_options()
        },
    )
    .expect("open");
    flush_rounds(&db, 3);
    db.close().expect("close");
    let log = std::fs::read_to_string(dir.path().join("LOG")).expect("LOG");
    assert!(!log.contains("[INFO]"), "{log}");
    assert!(!log.contains("EVENT_LOG_v1"), "{log}");
    // Lines at or above the level still are written.
    assert_eq!(
        log.matches("[ERROR] event listener panicked").count(),
        3,
        "{log}"
    );
    let options = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.starts_with("OPTIONS-"))
        .expect("an OPTIONS file");
    let text = std::fs::read_to_string(dir.path().join(options)).expect("OPTIONS");
    assert!(text.contains("\ninfo_log_level=WARN_LEVEL\n"), "{text}");
    assert!(text.contains("\nmax_log_file_size=0\n"), "{text}");
    assert!(text.contains("\nkeep_log_file_num=1000\n"), "{text}");
}

#[test]
fn bad_log_options_are_invalid() {
    let dir = tempfile::tempdir().expect("tempdir");
    for o in [
        Options {
            keep_log_file_num: 0,
            ..common::quiet_options()
        },
        Options {
            max_log_file_size: 100,
            ..common::quiet_options()
        },
    ] {
        let e = Db::open(dir.path(), o).expect_err("invalid");
        assert!(matches!(e, Error::InvalidArgument(_)), "{e:?}");
    }
}

/// The JSON objects of the `EVENT_LOG_v1` lines named `event` in `dir/LOG`.
fn events_named(dir: &Path, event: &str) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("LOG"))
        .expect("LOG")
        .lines()
        .filter_map(|l| l.split_once(" EVENT_LOG_v1 "))
        .map(|(_, json)| serde_json::from_str::<serde_json::Value>(json).expect("JSON"))
        .filter(|v| v["event"] == event)
        .collect()
}

/// The member names of `v`, those of nested objects as `outer.inner`.
fn field_names(v: &serde_json::Value) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for (k, x) in v.as_object().expect("an object") {
        names.insert(k.clone());
        if x.is_object() {
            names.extend(field_names(x).into_iter().map(|n| format!("{k}.{n}")));
        }
    }
    names
}

/// Regression (issue 38): the flush and the compaction wrote their
/// `table_file_creation` lines by hand, and the flush's had drifted (no
/// `num_deletions`). Both come from one record now: the same fields,
/// RocksDB's `table_properties` among them, and the same deletion counts
/// at the top and in `table_properties`.
#[test]
fn flush_and_compaction_table_file_creation_lines_carry_the_same_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Db::open(dir.path(), {
        let mut o = common::quiet_options();
        o.level0_file_num_compaction_trigger = 2;
        o
    })
    .expect("open");
    // The snapshot keeps the second round's deletions through the
    // compaction of the two flushes: it reads the values they delete.
    let mut snap = None;
    for round in 0..2u32 {
        for i in 0..100u32 {
            db.put(
                format!("k{i:04}").as_bytes(),
                format!("v{round}").as_bytes(),
            )
            .expect("put");
        }
        for i in (round..100u32).step_by(3) {
            db.delete(format!("k{i:04}").as_bytes()).expect("delete");
        }
        db.flush().expect("flush");
        snap.get_or_insert_with(|| db.snapshot());
    }
    db.wait_for_compaction().expect("idle");
    drop(snap);
    db.close().expect("close");

    let lines = events_named(dir.path(), "table_file_creation");
    let of = |reason: &str| -> Vec<&serde_json::Value> {
        lines.iter().filter(|l| l["reason"] == reason).collect()
    };
    let (flushed, compacted) = (of("Flush"), of("Compaction"));
    assert!(!flushed.is_empty() && !compacted.is_empty(), "{lines:?}");
    let names = field_names(flushed[0]);
    for l in flushed.iter().chain(&compacted) {
        assert_eq!(field_names(l), names, "{l}");
        assert_eq!(
            l["num_deletions"], l["table_properties"]["num_deletions"],
            "{l}"
        );
        assert_eq!(
            l["num_entries"], l["table_properties"]["num_entries"],
            "{l}"
        );
    }
    for name in [
        "cf_name",
        "job",
        "file_number",
        "file_size",
        "level",
        "num_entries",
        "num_deletions",
        "table_properties.num_entries",
        "table_properties.num_deletions",
        "table_properties.data_size",
        "status",
    ] {
        assert!(names.contains(name), "no {name} in {names:?}");
    }
    assert!(flushed
        .iter()
        .all(|l| l["num_deletions"].as_u64() > Some(0)));
    assert!(
        compacted
            .iter()
            .any(|l| l["num_deletions"].as_u64() > Some(0)),
        "{compacted:?}"
    );
}
