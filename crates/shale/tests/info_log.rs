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
