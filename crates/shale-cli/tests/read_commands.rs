//! get, scan, dump, list-cfs, stats and the write commands (put, delete,
//! compact, checkpoint) on DBs the engine made, with text, hex and JSON output; and
//! that reading commands leave every byte of the DB as it was.

mod common;

use common::*;

#[test]
fn get_reads_every_family_and_source() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    assert_eq!(ok(&["get", db, "k005"]), "v5\n");
    assert_eq!(ok(&["get", db, "ttl"]), "soon\n");
    assert_eq!(ok(&["get", db, "--cf", "users", "u3"]), "carol\n");
    // 3 + 2 through the family's persisted uint64add operator.
    assert_eq!(
        ok(&["get", db, "--cf", "counters", "--hex", "63"]),
        "0500000000000000\n"
    );
    assert_eq!(ok(&["get", db, "--hex", "62ff"]), "62696e\n");
    let j = json_lines(&ok(&["get", db, "--json", "a"]));
    assert_eq!(j[0]["key"], "a");
    assert_eq!(j[0]["value"], "1");

    let miss = shale(&["get", db, "k015"]);
    assert_eq!(miss.code, 1, "range-deleted key: {}", miss.stdout);
    assert!(miss.stderr.contains("not found"), "{}", miss.stderr);
    let deleted = shale(&["get", db, "--cf", "users", "--json", "u2"]);
    assert_eq!(deleted.code, 1);
    assert_eq!(
        json_lines(&deleted.stdout)[0]["value"],
        serde_json::Value::Null
    );
    let bad_cf = shale(&["get", db, "--cf", "nope", "a"]);
    assert_eq!(bad_cf.code, 2);
    assert!(
        bad_cf.stderr.contains("no column family 'nope'"),
        "{}",
        bad_cf.stderr
    );
}

#[test]
fn scan_honours_range_prefix_limit_and_direction() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    let out = ok(&["scan", db, "--from", "k005", "--to", "k012"]);
    assert_eq!(
        out,
        "k005 ==> v5\nk006 ==> v6\nk007 ==> v7\nk008 ==> v8\nk009 ==> v9\n"
    );
    let out = ok(&["scan", db, "--prefix", "k02", "--limit", "3", "--reverse"]);
    assert_eq!(out, "k029 ==> v29\nk028 ==> v28\nk027 ==> v27\n");
    let j = json_lines(&ok(&[
        "scan", db, "--hex", "--json", "--from", "62", "--to", "63",
    ]));
    assert_eq!(j.len(), 1);
    assert_eq!(j[0]["key"], "62ff");
    assert_eq!(j[0]["value"], "62696e");
    // Escaped UTF-8 by default.
    assert!(ok(&["scan", db, "--limit", "2"]).contains("b\\xff ==> bin"));
    let conflict = shale(&["scan", db, "--prefix", "k", "--from", "a"]);
    assert_eq!(conflict.code, 2, "{}", conflict.stderr);
}

#[test]
fn dump_and_list_cfs_show_every_family() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    assert_eq!(ok(&["list-cfs", db]), "default\nusers\ncounters\n");
    let names = json_lines(&ok(&["list-cfs", db, "--json"]));
    assert_eq!(
        names[0],
        serde_json::json!(["default", "users", "counters"])
    );

    let all = json_lines(&ok(&["dump", db, "--json"]));
    let count = |cf: &str| all.iter().filter(|v| v["cf"] == cf).count();
    // 50 k-keys less 11 range-deleted, a, b\xff, ttl.
    assert_eq!(count("default"), 42);
    assert_eq!(count("users"), 2);
    assert_eq!(count("counters"), 1);
    let users = ok(&["dump", db, "--cf", "users"]);
    assert_eq!(users, "# column family users\nu1 ==> alice\nu3 ==> carol\n");
}

#[test]
fn reading_commands_change_no_byte_of_the_db() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    let before = snapshot_dir(d.path());
    ok(&["get", db, "a"]);
    ok(&["scan", db]);
    ok(&["dump", db]);
    ok(&["stats", db]);
    ok(&["list-cfs", db]);
    ok(&["check", db]);
    ok(&["manifest", "dump", db]);
    let after = snapshot_dir(d.path());
    let names = |s: &[(String, Vec<u8>)]| s.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&before), names(&after));
    assert!(before == after, "a reading command changed the DB");
}

#[test]
fn stats_prints_the_engine_properties() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 30, 10);
    let db = path_str(d.path());
    let out = ok(&["stats", db, "--cf", "default"]);
    assert!(out.contains("shale.levelstats:"), "{out}");
    assert!(out.contains("shale.stats:"), "{out}");
    let j = json_lines(&ok(&[
        "stats",
        db,
        "--json",
        "--property",
        "shale.num-files-at-level0",
        "--property",
        "shale.estimate-num-keys",
    ]));
    assert_eq!(j.len(), 1);
    assert_eq!(j[0]["cf"], "default");
    let files: u64 = j[0]["properties"]["shale.num-files-at-level0"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(files >= 1, "{j:?}");
    assert!(
        out.contains("# write stalls now\nnone: writes run freely"),
        "{out}"
    );
    let typed = json_lines(&ok(&["stats", db, "--typed"]));
    assert_eq!(typed.len(), 1);
    assert_eq!(typed[0]["families"][0]["name"], "default");
    let l0 = typed[0]["families"][0]["levels"][0]["files"]
        .as_u64()
        .unwrap();
    assert_eq!(l0, files);
    assert!(typed[0]["stalls_now"].as_array().unwrap().is_empty());
    let bad = shale(&["stats", db, "--property", "shale.no-such-thing"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("unknown property"), "{}", bad.stderr);
}

#[test]
fn put_delete_and_compact_write_through_the_engine() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let db = path_str(d.path());
    assert_eq!(ok(&["put", db, "new", "value"]), "OK\n");
    assert_eq!(
        ok(&["put", db, "--cf", "users", "--hex", "7534", "646f6e"]),
        "OK\n"
    );
    assert_eq!(ok(&["delete", db, "a"]), "OK\n");
    assert_eq!(ok(&["delete", db, "k030", "--to", "k040"]), "OK\n");
    let out = ok(&["compact", db]);
    assert!(out.contains("compacted column family users"), "{out}");
    ok(&[
        "compact", db, "--cf", "default", "--from", "k000", "--to", "k100",
    ]);

    let db2 = shale::Db::open(d.path(), options()).unwrap();
    assert_eq!(db2.get(b"new").unwrap().unwrap().as_slice(), b"value");
    assert!(db2.get(b"a").unwrap().is_none());
    assert!(db2.get(b"k035").unwrap().is_none());
    assert!(db2.get(b"k040").unwrap().is_some());
    let users = db2.cf("users").unwrap();
    assert_eq!(
        db2.get_cf(&users, b"u4").unwrap().unwrap().as_slice(),
        b"don"
    );
    assert_eq!(
        db2.property("shale.num-files-at-level0").as_deref(),
        Some("0"),
        "compact moved every table out of L0"
    );
}

#[test]
fn checkpoint_makes_a_copy_that_reads_like_the_db() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("db");
    make_db(&src);
    let cp = d.path().join("cp");
    let out = ok(&["checkpoint", path_str(&src), path_str(&cp)]);
    assert!(out.contains("files linked"), "{out}");
    assert!(out.contains("(flushed first)"), "{out}");
    for args in [
        vec!["dump", "--cf", "users"],
        vec!["dump", "--cf", "counters", "--hex"],
        vec!["dump"],
    ] {
        let with = |db: &str| {
            let mut a = vec![args[0], db];
            a.extend(&args[1..]);
            ok(&a)
        };
        assert_eq!(with(path_str(&src)), with(path_str(&cp)), "{args:?}");
    }
    // An existing target is a usage error; the WALs may be copied instead
    // of a flush.
    let again = shale(&["checkpoint", path_str(&src), path_str(&cp)]);
    assert_ne!(again.code, 0);
    assert!(again.stderr.contains("already exists"), "{}", again.stderr);
    let cp2 = d.path().join("cp2");
    let out = ok(&[
        "checkpoint",
        path_str(&src),
        path_str(&cp2),
        "--log-size-for-flush",
        "1000000000",
    ]);
    assert!(!out.contains("flushed first"), "{out}");
    assert_eq!(
        ok(&["get", path_str(&cp2), "--cf", "users", "u3"]),
        "carol\n"
    );
}

#[test]
fn backup_create_list_verify_restore_and_purge() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("db");
    make_db(&src);
    let bk = d.path().join("backups");
    let out = ok(&[
        "backup",
        "create",
        path_str(&src),
        path_str(&bk),
        "--metadata",
        "nightly",
    ]);
    assert!(out.starts_with("created backup 1:"), "{out}");
    ok(&["put", path_str(&src), "--cf", "users", "u9", "zed"]);
    ok(&["backup", "create", path_str(&src), path_str(&bk)]);
    let list = ok(&["backup", "list", path_str(&bk)]);
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(list.contains("metadata \"nightly\""), "{list}");
    assert_eq!(
        ok(&["backup", "verify", path_str(&bk)]),
        "backup 1: ok\nbackup 2: ok\n"
    );
    // The newest by default; --id for an older one.
    let r2 = d.path().join("r2");
    let r = shale(&[
        "backup",
        "restore",
        path_str(&bk),
        path_str(&r2),
        "--rate-limit",
        "100000000",
        "--progress",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .lines()
            .last()
            .is_some_and(|l| l.contains(" files, ")),
        "{}",
        r.stderr
    );
    assert_eq!(ok(&["get", path_str(&r2), "--cf", "users", "u9"]), "zed\n");
    let r1 = d.path().join("r1");
    ok(&[
        "backup",
        "restore",
        path_str(&bk),
        path_str(&r1),
        "--id",
        "1",
    ]);
    assert_eq!(
        shale(&["get", path_str(&r1), "--cf", "users", "u9"]).code,
        1
    );
    assert_eq!(
        ok(&["dump", path_str(&r1), "--cf", "counters", "--hex"]),
        ok(&["dump", path_str(&r2), "--cf", "counters", "--hex"])
    );
    assert_eq!(
        ok(&["backup", "purge", path_str(&bk), "--keep", "1"]),
        "1 backup(s) kept\n"
    );
    // A damaged shared file: verify exits 1 naming it.
    let table = files_with(&bk.join("shared"), "sst").remove(0);
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[50] ^= 1;
    std::fs::write(&table, bytes).unwrap();
    let v = shale(&["backup", "verify", path_str(&bk)]);
    assert_eq!(v.code, 1, "{}{}", v.stdout, v.stderr);
    let name = table.file_name().unwrap().to_str().unwrap();
    assert!(v.stdout.contains(name), "{}", v.stdout);
}

#[test]
fn backup_wals_and_restore_to_a_sequence_or_time() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("db");
    let bk = d.path().join("backups");
    // A DB that archives its WALs (the option is persisted: the CLI's
    // writing commands keep it).
    let db = shale::Db::open(
        &src,
        shale::Options {
            create_if_missing: true,
            wal_size_limit_mb: 1024,
            ..shale::Options::default()
        },
    )
    .unwrap();
    db.put(b"a", b"1").unwrap();
    db.close().unwrap();
    ok(&["backup", "create", path_str(&src), path_str(&bk)]);
    ok(&["put", path_str(&src), "b", "2"]);
    let out = ok(&["backup", "wals", path_str(&src), path_str(&bk)]);
    let seq: u64 = out
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{out}: {e}"));
    ok(&["put", path_str(&src), "c", "3"]);
    ok(&["backup", "wals", path_str(&src), path_str(&bk)]);
    let at = d.path().join("at-seq");
    let out = ok(&[
        "backup",
        "restore",
        path_str(&bk),
        path_str(&at),
        "--to-seq",
        &seq.to_string(),
    ]);
    assert!(
        out.starts_with(&format!("restored to sequence {seq}")),
        "{out}"
    );
    assert_eq!(ok(&["get", path_str(&at), "b"]), "2\n");
    assert_eq!(shale(&["get", path_str(&at), "c"]).code, 1);
    // Now: every write so far.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 5.0;
    let latest = d.path().join("latest");
    ok(&[
        "backup",
        "restore",
        path_str(&bk),
        path_str(&latest),
        "--to-time",
        &format!("{now}"),
    ]);
    assert_eq!(ok(&["get", path_str(&latest), "c"]), "3\n");
    // A point past the kept WALs: a clear error, nothing restored.
    let past = d.path().join("past");
    let r = shale(&[
        "backup",
        "restore",
        path_str(&bk),
        path_str(&past),
        "--to-seq",
        "999999",
    ]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("reach sequence"), "{}", r.stderr);
    assert!(!past.exists());
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let help = shale(&["scan", "--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("--prefix"), "{}", help.stdout);
    for sub in [
        "get",
        "put",
        "delete",
        "dump",
        "list-cfs",
        "check",
        "compact",
        "checkpoint",
        "stats",
        "render-stats",
    ] {
        assert_eq!(shale(&[sub, "--help"]).code, 0, "{sub} --help");
    }
    for sub in [
        ["manifest", "dump"],
        ["wal", "dump"],
        ["sst", "dump"],
        ["options", "diff"],
    ] {
        assert_eq!(shale(&[sub[0], sub[1], "--help"]).code, 0, "{sub:?} --help");
    }
    assert_eq!(shale(&["frobnicate"]).code, 2);
    assert_eq!(shale(&["put", "/nonexistent-dir-xyz", "k", "v"]).code, 2);
    let d = tempfile::tempdir().unwrap();
    let r = shale(&["get", path_str(d.path()), "k"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not a Shale DB"), "{}", r.stderr);
    let bad_hex = shale(&["get", path_str(d.path()), "--hex", "xyz"]);
    assert_eq!(bad_hex.code, 2);
}

#[test]
fn a_read_only_open_runs_no_compaction() {
    let d = tempfile::tempdir().unwrap();
    let db = shale::Db::open(d.path(), {
        let base = options();
        shale::Options {
            cf: shale::CfOptions {
                level0_file_num_compaction_trigger: 100,
                level0_slowdown_writes_trigger: 200,
                level0_stop_writes_trigger: 300,
                ..base.cf
            },
            ..base
        }
    })
    .unwrap();
    // Overlapping tables: no trivial move can take them down.
    for t in 0..8 {
        db.put(format!("k{t}").as_bytes(), b"v").unwrap();
        db.put(b"a", b"first").unwrap();
        db.put(b"z", b"last").unwrap();
        db.flush().unwrap();
    }
    db.close().unwrap();
    let before = snapshot_dir(d.path());
    let dir = path_str(d.path());
    // Opened with the default trigger (4), the view would compact the 8
    // L0 files; it must not (in memory or on disk) and must still read.
    for _ in 0..3 {
        assert_eq!(ok(&["get", dir, "k7"]), "v\n");
        let j = json_lines(&ok(&[
            "stats",
            dir,
            "--json",
            "--property",
            "shale.num-files-at-level0",
        ]));
        assert_eq!(j[0]["properties"]["shale.num-files-at-level0"], "8");
    }
    assert_eq!(ok(&["scan", dir]).lines().count(), 10);
    assert!(before == snapshot_dir(d.path()));
}
