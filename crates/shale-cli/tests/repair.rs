//! `shale repair`: a DB whose MANIFEST was deleted, or with a flipped byte
//! in one table, opens again afterwards with every key that survived; the
//! report names what was lost and every file set aside is in `lost/`.

mod common;

use common::*;
use serde_json::Value;

fn repair_json(dir: &std::path::Path) -> (i32, Value) {
    let r = shale(&["repair", "--json", path_str(dir)]);
    assert!(r.code == 0 || r.code == 1, "{}{}", r.stdout, r.stderr);
    (
        r.code,
        serde_json::from_str(&r.stdout).expect("one JSON object"),
    )
}

#[test]
fn a_deleted_manifest_is_rebuilt_from_tables_and_wal() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 300, 100);
    // Some keys only in the WAL, overwriting table keys.
    let db = shale::Db::open(d.path(), options()).unwrap();
    db.put(b"k005", b"newer").unwrap();
    db.delete(b"k006").unwrap();
    db.flush_wal(true).unwrap();
    drop(db);
    let manifest = shale::tools::current_manifest(d.path()).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    assert_ne!(shale(&["check", path_str(d.path())]).code, 0);

    let (code, v) = repair_json(d.path());
    assert_eq!(code, 0, "nothing lost: {v:#}");
    assert_eq!(v["lost"], serde_json::json!([]));
    assert!(
        v["wals"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["batches"].as_u64() >= Some(2)),
        "{v:#}"
    );
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no MANIFEST")),
        "{v:#}"
    );
    assert_eq!(shale(&["check", path_str(d.path())]).code, 0);

    let db = shale::Db::open(d.path(), options()).unwrap();
    assert_eq!(db.get(b"k005").unwrap().unwrap().as_slice(), b"newer");
    assert!(db.get(b"k006").unwrap().is_none());
    for i in (0..300).filter(|&i| i != 5 && i != 6) {
        let k = format!("k{i:03}");
        assert_eq!(
            db.get(k.as_bytes()).unwrap().unwrap().as_slice(),
            format!("value{i}").as_bytes(),
            "{k}"
        );
    }
    assert_eq!(db.range(..).count(), 299);
    // Written after repair, and read back after a reopen.
    db.put(b"after", b"repair").unwrap();
    db.close().unwrap();
    let db = shale::Db::open(d.path(), options()).unwrap();
    assert_eq!(db.get(b"after").unwrap().unwrap().as_slice(), b"repair");
}

#[test]
fn a_damaged_table_is_set_aside_and_the_rest_stays_readable() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    // The table of family users (the second flushed).
    let users_table = files_with(d.path(), "sst").remove(1);
    let name = users_table
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    flip_byte(&users_table, 5);
    let (code, v) = repair_json(d.path());
    assert_eq!(code, 1, "a table was lost: {v:#}");
    let lost = v["lost"].as_array().unwrap();
    assert_eq!(lost.len(), 1, "{v:#}");
    assert_eq!(lost[0]["file"], name);
    assert_eq!(lost[0]["error"]["kind"], "corruption");
    assert!(d.path().join("lost").join(&name).exists());
    assert!(!users_table.exists());
    let text_lost = v.to_string();
    assert!(
        text_lost.contains("families and table owners taken from MANIFEST-"),
        "{v:#}"
    );

    assert_eq!(shale(&["check", path_str(d.path())]).code, 0);
    assert_eq!(
        ok(&["list-cfs", path_str(d.path())]),
        "default\nusers\ncounters\n"
    );
    let db = path_str(d.path());
    // The default family and counters are whole; users keeps what its WAL
    // held (u3, u2's delete) and lost the table (u1, u2).
    assert_eq!(ok(&["get", db, "k005"]), "v5\n");
    assert_eq!(shale(&["get", db, "k015"]).code, 1, "still range-deleted");
    assert_eq!(ok(&["get", db, "ttl"]), "soon\n");
    assert_eq!(
        ok(&["get", db, "--cf", "counters", "--hex", "63"]),
        "0500000000000000\n"
    );
    assert_eq!(
        ok(&["dump", db, "--cf", "users"]),
        "# column family users\nu3 ==> carol\n"
    );
}

#[test]
fn repair_text_report_says_what_was_lost() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 200, 100);
    let sst = files_with(d.path(), "sst").remove(0);
    flip_byte(&sst, 50);
    let r = shale(&["repair", path_str(d.path())]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let name = sst.file_name().unwrap().to_str().unwrap();
    assert!(
        r.stdout
            .contains(&format!("LOST {name} (moved to lost/): Corruption")),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("kept "), "{}", r.stdout);
    assert!(r.stdout.contains("set aside MANIFEST-"), "{}", r.stdout);
    let db = shale::Db::open(d.path(), options()).unwrap();
    assert_eq!(db.range(..).count(), 100, "the other table's keys");
}

#[test]
fn the_engine_error_for_a_missing_table_names_a_repair_that_works() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 300, 100);
    let sst = files_with(d.path(), "sst").remove(1);
    std::fs::remove_file(&sst).unwrap();
    let err = shale::Db::open(d.path(), options())
        .unwrap_err()
        .to_string();
    let hint = format!("shale repair {}", d.path().display());
    assert!(err.contains(&hint), "{err}");

    let (code, v) = repair_json(d.path());
    assert_eq!(code, 1, "{v:#}");
    let name = sst.file_name().unwrap().to_str().unwrap();
    assert_eq!(v["lost"][0]["file"], name);
    assert!(v["lost"][0]["error"]["what"]
        .as_str()
        .unwrap()
        .contains("not in the directory"));
    let db = shale::Db::open(d.path(), options()).unwrap();
    assert_eq!(db.range(..).count(), 200);
}

#[test]
fn tables_overlapping_in_keys_and_sequences_are_compacted_after_repair() {
    let d = tempfile::tempdir().unwrap();
    // Three levels: the compaction after repair must use the DB's count.
    let three = || shale::Options {
        num_levels: 3,
        ..options()
    };
    let db = shale::Db::open(d.path(), three()).unwrap();
    for i in 0..300 {
        db.put(
            format!("k{i:03}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
        if i % 100 == 99 {
            db.flush().unwrap();
        }
    }
    db.close().unwrap();
    // Keep the flushed tables, then let a compaction replace them by one
    // output spanning all their keys and sequence numbers.
    let saved: Vec<(std::path::PathBuf, Vec<u8>)> = files_with(d.path(), "sst")
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    let db = shale::Db::open(d.path(), three()).unwrap();
    db.put(b"k000", b"newest").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    // The inputs come back as orphans (as after a crash before their
    // deletion) and the MANIFEST is gone.
    for (p, b) in &saved {
        std::fs::write(p, b).unwrap();
    }
    std::fs::remove_file(shale::tools::current_manifest(d.path()).unwrap()).unwrap();
    let (code, v) = repair_json(d.path());
    assert_eq!(code, 0, "{v:#}");
    let notes = v["notes"].to_string();
    assert!(notes.contains("compacted default"), "{v:#}");
    let db = shale::Db::open(d.path(), three()).unwrap();
    assert_eq!(db.get(b"k000").unwrap().unwrap().as_slice(), b"newest");
    assert_eq!(db.range(..).count(), 300);
    assert_eq!(
        db.property("shale.num-files-at-level0").as_deref(),
        Some("0")
    );
}

#[test]
fn tables_a_whole_manifest_does_not_list_are_set_aside() {
    let d = tempfile::tempdir().unwrap();
    make_tables_db(d.path(), 300, 100);
    let first = files_with(d.path(), "sst").remove(0);
    let stale = std::fs::read(&first).unwrap();
    // Delete k000..k049 and compact to the last level: the tombstones and
    // the values are gone, and so is the first table.
    let db = shale::Db::open(d.path(), options()).unwrap();
    db.delete_range(b"k000", b"k050").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    assert!(!first.exists());
    // The old input comes back (as after a crash before its deletion), and
    // an empty table an output was just created as.
    std::fs::write(&first, &stale).unwrap();
    std::fs::write(d.path().join("000999.sst"), b"").unwrap();

    let (code, v) = repair_json(d.path());
    assert_eq!(code, 0, "nothing lost: {v:#}");
    let aside = v["set_aside"].to_string();
    assert!(
        aside.contains(first.file_name().unwrap().to_str().unwrap()),
        "{v:#}"
    );
    assert!(aside.contains("000999.sst"), "{v:#}");
    let db = shale::Db::open(d.path(), options()).unwrap();
    assert!(
        db.get(b"k000").unwrap().is_none(),
        "a deleted key came back"
    );
    assert_eq!(db.range(..).count(), 250);
}

#[test]
fn repair_refuses_what_is_not_a_db() {
    let empty = tempfile::tempdir().unwrap();
    let r = shale(&["repair", path_str(empty.path())]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("not a Shale DB"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_dir(empty.path()).unwrap().count(),
        0,
        "nothing written"
    );
    assert_eq!(shale(&["repair", "/nonexistent/shale-db"]).code, 2);
}

/// The blob properties repair must rebuild exactly: files, their bytes,
/// and the garbage in them.
fn blob_properties(db: &shale::Db) -> Vec<(&'static str, u64)> {
    [
        "shale.num-blob-files",
        "shale.total-blob-file-size",
        "shale.live-blob-file-size",
        "shale.live-blob-file-garbage-size",
    ]
    .into_iter()
    .map(|p| (p, num_property(db, p)))
    .collect()
}

#[test]
fn blob_files_and_their_garbage_survive_repair() {
    for delete_manifest in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let model = make_blob_db(d.path());
        let db = shale::Db::open(d.path(), blob_options()).unwrap();
        let before = blob_properties(&db);
        db.close().unwrap();
        assert_eq!(before[0].1, 3, "{before:?}");
        assert!(before[3].1 > 0, "the overwrites left garbage: {before:?}");
        if delete_manifest {
            std::fs::remove_file(shale::tools::current_manifest(d.path()).unwrap()).unwrap();
        }
        // A blob file no table references (a flush cut short).
        std::fs::write(d.path().join("000999.blob"), b"torn").unwrap();

        let (code, v) = repair_json(d.path());
        let ctx = format!("MANIFEST deleted: {delete_manifest}: {v:#}");
        assert_eq!(code, 0, "nothing lost: {ctx}");
        let kept = v["blob_files"].as_array().unwrap();
        assert_eq!(kept.len(), 3, "{ctx}");
        assert!(kept.iter().all(|b| b["cf"] == "default"), "{ctx}");
        assert!(
            kept.iter()
                .any(|b| b["referenced"].as_u64() < b["blobs"].as_u64()),
            "garbage found: {ctx}"
        );
        assert!(v["set_aside"].to_string().contains("000999.blob"), "{ctx}");
        assert!(d.path().join("lost").join("000999.blob").exists());
        assert_eq!(files_with(d.path(), "blob").len(), 3, "{ctx}");
        assert_eq!(shale(&["check", path_str(d.path())]).code, 0, "{ctx}");
        let text = ok(&["manifest", "dump", path_str(d.path())]);
        assert_eq!(text.matches("+ blob #").count(), 3, "{text}");

        let db = shale::Db::open(d.path(), blob_options()).unwrap();
        assert_reads(&db, &model);
        assert_eq!(blob_properties(&db), before, "{ctx}");
        // The garbage counts are right: a full compaction drops the
        // shadowed references, counts them, and deletes no live blob.
        db.compact_range(None, None).unwrap();
        assert_reads(&db, &model);
        assert_eq!(
            num_property(&db, "shale.num-blob-files"),
            files_with(d.path(), "blob").len() as u64
        );
        db.close().unwrap();
        assert_eq!(shale(&["check", path_str(d.path())]).code, 0, "{ctx}");
    }
}

#[test]
fn a_damaged_or_missing_blob_file_is_lost_and_its_tables_kept() {
    for missing in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let model = make_blob_db(d.path());
        // The newest blob file: the last overwrites (every fifth key).
        let blob = files_with(d.path(), "blob").pop().unwrap();
        let name = blob.file_name().unwrap().to_str().unwrap().to_string();
        if missing {
            std::fs::remove_file(&blob).unwrap();
        } else {
            flip_byte(&blob, 40);
        }
        let (code, v) = repair_json(d.path());
        let ctx = format!("missing: {missing}: {v:#}");
        assert_eq!(code, 1, "blobs were lost: {ctx}");
        let lost = v["lost"].as_array().unwrap();
        assert_eq!(lost.len(), 1, "{ctx}");
        assert_eq!(lost[0]["file"], name, "{ctx}");
        assert_eq!(lost[0]["error"]["kind"], "corruption", "{ctx}");
        assert_eq!(d.path().join("lost").join(&name).exists(), !missing);
        assert!(
            v["notes"]
                .to_string()
                .contains("kept tables still reference it"),
            "{ctx}"
        );
        assert_eq!(v["blob_files"].as_array().unwrap().len(), 2, "{ctx}");

        let db = shale::Db::open(d.path(), blob_options()).unwrap();
        assert_eq!(num_property(&db, "shale.num-blob-files"), 2);
        // The keys of the last round whose values were in that file fail;
        // every other key reads its value.
        let mut failed = 0;
        for (k, want) in &model {
            match db.get(k) {
                Ok(v) => assert_eq!(v.as_deref(), Some(&want[..]), "{ctx}"),
                Err(e) => {
                    assert!(e.to_string().contains(&name), "{e}");
                    assert!(want.starts_with(b"v") && want.windows(3).any(|w| w == b"-r2"));
                    failed += 1;
                }
            }
        }
        assert!(failed > 0, "{ctx}");
        // Regression: overwriting those keys and compacting dropped
        // references into the lost file; the compaction recorded garbage
        // for a blob file the MANIFEST no longer lists, which it refused,
        // and the DB stopped taking writes (Poisoned).
        for k in model.keys() {
            db.put(k, b"fresh").unwrap();
        }
        db.flush().unwrap();
        db.compact_range(None, None).unwrap();
        db.put(b"after", b"ok").unwrap();
        for k in model.keys() {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(&b"fresh"[..]), "{ctx}");
        }
    }
}

#[test]
fn blob_files_rejoin_the_family_whose_tables_reference_them() {
    let d = tempfile::tempdir().unwrap();
    let db = shale::Db::open(d.path(), options()).unwrap();
    let blob_cf = shale::CfOptions {
        blob: blob_options().cf.blob,
        ..shale::CfOptions::default()
    };
    let users = db.create_cf("users", blob_cf).unwrap();
    for i in 0..30 {
        let k = format!("u{i:02}");
        db.put_cf(&users, k.as_bytes(), &blob_value(i, 0)).unwrap();
        db.put(k.as_bytes(), &blob_value(i, 1)).unwrap(); // inline in default
    }
    db.flush_cf(&users).unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    assert_eq!(files_with(d.path(), "blob").len(), 1);

    let (code, v) = repair_json(d.path());
    assert_eq!(code, 0, "{v:#}");
    let kept = v["blob_files"].as_array().unwrap();
    assert_eq!(kept.len(), 1, "{v:#}");
    assert_eq!(kept[0]["cf"], "users", "{v:#}");
    assert_eq!(kept[0]["referenced"], kept[0]["blobs"], "{v:#}");
    assert_eq!(shale(&["check", path_str(d.path())]).code, 0);

    // The family opens with the options the repaired MANIFEST kept for it.
    let db = shale::Db::open(d.path(), options()).unwrap();
    let users = db.cf("users").unwrap();
    assert_eq!(
        db.property_cf(&users, "shale.num-blob-files").as_deref(),
        Some("1")
    );
    for i in 0..30 {
        let k = format!("u{i:02}");
        assert_eq!(
            db.get_cf(&users, k.as_bytes()).unwrap().as_deref(),
            Some(&blob_value(i, 0)[..])
        );
        assert_eq!(
            db.get(k.as_bytes()).unwrap().as_deref(),
            Some(&blob_value(i, 1)[..])
        );
    }
}

/// Without a MANIFEST, every table rejoins the family it records (SST
/// format version 2), created with the options the OPTIONS file has for
/// it, and every key reads from its own family (issue 37: all tables went
/// to `default` before, serving one family's values under another's keys).
#[test]
fn families_come_back_from_the_tables_with_their_options() {
    use shale::{CfOptions, Compression, Db, Options};
    let d = tempfile::tempdir().unwrap();
    let o = Options {
        create_if_missing: true,
        create_missing_column_families: true,
        column_families: vec![(
            "users".to_string(),
            CfOptions {
                compression_per_level: vec![Compression::Zstd],
                ..CfOptions::default()
            },
        )],
        ..Options::default()
    };
    let db = Db::open(d.path(), o).unwrap();
    let users = db.cf("users").unwrap();
    for i in 0..100u32 {
        let k = format!("k{i:03}");
        db.put(k.as_bytes(), b"in-default").unwrap();
        db.put_cf(&users, k.as_bytes(), b"in-users").unwrap();
    }
    db.flush().unwrap();
    db.flush_cf(&users).unwrap();
    db.close().unwrap();
    for e in std::fs::read_dir(d.path()).unwrap() {
        let p = e.unwrap().path();
        let n = p.file_name().unwrap().to_string_lossy().into_owned();
        if n == "CURRENT" || n.starts_with("MANIFEST-") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let (code, v) = repair_json(d.path());
    assert_eq!(code, 0, "{v:#}");
    let loaded = shale::load_latest_options(d.path(), &Default::default()).unwrap();
    let (name, cf) = &loaded.options.column_families[0];
    assert_eq!(name, "users");
    assert_eq!(cf.compression_per_level, vec![Compression::Zstd]);
    let db = Db::open(d.path(), loaded.options).unwrap();
    let users = db.cf("users").unwrap();
    for i in 0..100u32 {
        let k = format!("k{i:03}");
        assert_eq!(
            db.get(k.as_bytes()).unwrap().as_deref(),
            Some(&b"in-default"[..])
        );
        assert_eq!(
            db.get_cf(&users, k.as_bytes()).unwrap().as_deref(),
            Some(&b"in-users"[..])
        );
    }
    db.close().unwrap();
}
