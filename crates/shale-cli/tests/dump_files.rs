//! manifest dump, wal dump, sst dump and options show/diff on files the
//! engine wrote: every edit, batch and entry decoded, in text, hex and JSON.

mod common;

use common::*;
use serde_json::Value;

#[test]
fn wal_dump_shows_every_kind_with_sequences_and_families() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let wals = files_with(d.path(), "log");
    let batches: Vec<Value> = wals
        .iter()
        .flat_map(|w| json_lines(&ok(&["wal", "dump", "--json", path_str(w)])))
        .collect();
    let entries: Vec<&Value> = batches
        .iter()
        .flat_map(|b| b["entries"].as_array().unwrap())
        .collect();
    let find = |kind: &str| {
        entries
            .iter()
            .find(|e| e["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} in {entries:#?}"))
    };
    let rd = find("range_delete");
    assert_eq!(
        (rd["key"].as_str(), rd["value"].as_str()),
        (Some("k010"), Some("k021"))
    );
    assert_eq!(rd["cf"], 0);
    let m = find("merge");
    assert_eq!(m["key"], "c");
    assert_eq!(m["value"], "\\x02\\x00\\x00\\x00\\x00\\x00\\x00\\x00");
    assert_ne!(m["cf"], 0);
    assert_eq!(m["cf_name"], "counters", "names from the DB's MANIFEST");
    assert_eq!(find("single_delete")["key"], "gone");
    assert_eq!(find("delete")["key"], "u2");
    let e = find("expiring_put");
    assert_eq!(e["value"], "soon");
    assert!(e["expiry"].as_u64().unwrap() > 1_600_000_000);
    // The batch of five records has consecutive sequence numbers.
    let five = batches
        .iter()
        .find(|b| b["count"] == 5)
        .expect("the 5-record batch");
    let seqs: Vec<u64> = five["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    let first = five["sequence"].as_u64().unwrap();
    assert_eq!(seqs, (first..first + 5).collect::<Vec<_>>());

    let text = ok(&["wal", "dump", path_str(wals.last().unwrap())]);
    assert!(
        text.contains("cf 0 (default) range_delete ['k010', 'k021')"),
        "{text}"
    );
    assert!(text.contains("(users) put 'u3' => 'carol'"), "{text}");
    // Away from its DB, ids alone.
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere
        .path()
        .join(wals.last().unwrap().file_name().unwrap());
    std::fs::copy(wals.last().unwrap(), &copy).unwrap();
    let bare = ok(&["wal", "dump", path_str(&copy)]);
    assert!(bare.contains("cf 1 put 'u3'"), "{bare}");
    let hex = ok(&["wal", "dump", "--hex", path_str(wals.last().unwrap())]);
    assert!(
        hex.contains("range_delete ['6b303130', '6b303231')"),
        "{hex}"
    );
}

#[test]
fn manifest_dump_shows_files_families_and_counters() {
    let d = tempfile::tempdir().unwrap();
    make_db(d.path());
    let edits = json_lines(&ok(&["manifest", "dump", "--json", path_str(d.path())]));
    assert!(!edits.is_empty());
    let added: Vec<&Value> = edits
        .iter()
        .flat_map(|e| e["new_files"].as_array().unwrap())
        .collect();
    assert!(added.len() >= 3, "{edits:#?}");
    for f in &added {
        assert!(f["file_size"].as_u64().unwrap() > 0);
        assert!(
            f["smallest"]["user_key"].as_str().unwrap()
                <= f["largest"]["user_key"].as_str().unwrap()
        );
        assert!(f["smallest_seq"].as_u64() <= f["largest_seq"].as_u64());
    }
    let families: Vec<&str> = edits.iter().filter_map(|e| e["cf_add"].as_str()).collect();
    assert!(
        families.contains(&"users") && families.contains(&"counters"),
        "{families:?}"
    );
    assert!(edits.iter().any(|e| e["cf_options"]
        .as_str()
        .is_some_and(|o| o.contains("merge_operator"))));
    assert!(edits.iter().any(|e| e["last_sequence"].is_u64()));
    assert!(edits.iter().any(|e| e["log_number"].is_u64()));
    assert!(edits
        .iter()
        .any(|e| e["comparator"] == "leveldb.BytewiseComparator"));

    let text = ok(&["manifest", "dump", path_str(d.path())]);
    assert!(text.contains("add column family 'users'"), "{text}");
    assert!(text.contains("+ L0 #"), "{text}");
}

#[test]
fn manifest_dump_shows_blob_files_their_garbage_and_oldest_references() {
    let d = tempfile::tempdir().unwrap();
    make_blob_db(d.path());
    let on_disk: Vec<u64> = files_with(d.path(), "blob")
        .iter()
        .map(|p| p.file_stem().unwrap().to_str().unwrap().parse().unwrap())
        .collect();
    let edits = json_lines(&ok(&["manifest", "dump", "--json", path_str(d.path())]));
    let added: Vec<&Value> = edits
        .iter()
        .flat_map(|e| e["blob_file_additions"].as_array().unwrap())
        .collect();
    for b in &added {
        assert!(b["count"].as_u64().unwrap() > 0, "{b}");
        assert!(b["bytes"].as_u64() < b["file_size"].as_u64(), "{b}");
    }
    let numbers: std::collections::BTreeSet<u64> = added
        .iter()
        .map(|b| b["number"].as_u64().unwrap())
        .collect();
    assert_eq!(numbers.into_iter().collect::<Vec<_>>(), on_disk);
    let garbage: Vec<&Value> = edits
        .iter()
        .flat_map(|e| e["blob_file_garbage"].as_array().unwrap())
        .collect();
    assert!(
        garbage.iter().any(|g| g["number"] == on_disk[0]),
        "the overwrites' garbage in the first blob file: {edits:#?}"
    );
    let oldest: Vec<u64> = edits
        .iter()
        .flat_map(|e| e["new_files"].as_array().unwrap())
        .map(|f| f["oldest_blob_file"].as_u64().unwrap())
        .collect();
    assert!(oldest.contains(&on_disk[0]), "{oldest:?}");

    let text = ok(&["manifest", "dump", path_str(d.path())]);
    assert!(text.contains(&format!("+ blob #{} ", on_disk[0])), "{text}");
    assert!(
        text.contains(&format!("~ blob #{} garbage: ", on_disk[0])),
        "{text}"
    );
    assert!(
        text.contains(&format!("oldest_blob_file #{}", on_disk[0])),
        "{text}"
    );
}

#[test]
fn sst_dump_shows_properties_index_entries_and_tombstones() {
    let d = tempfile::tempdir().unwrap();
    let db = shale::Db::open(d.path(), options()).unwrap();
    for i in 0..300 {
        db.put(format!("key{i:04}").as_bytes(), &[b'x'; 100])
            .unwrap();
    }
    db.delete(b"key0001").unwrap();
    db.merge(b"m", b"op").unwrap_err(); // no operator on default: refused
    db.delete_range(b"key0100", b"key0200").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let sst = files_with(d.path(), "sst").pop().unwrap();
    let v: Value =
        serde_json::from_str(&ok(&["sst", "dump", "--json", "--verify", path_str(&sst)])).unwrap();
    // The flush dropped the range-deleted puts and the put under the delete.
    assert_eq!(v["properties"]["num_entries"], 200);
    assert_eq!(v["properties"]["num_deletions"], 1);
    assert_eq!(v["properties"]["num_range_deletions"], 1);
    let blocks = v["index"].as_array().unwrap();
    assert!(blocks.len() > 3, "several data blocks: {}", blocks.len());
    assert_eq!(v["properties"]["num_data_blocks"], blocks.len());
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 200);
    assert_eq!(entries[0]["key"], "key0000");
    assert_eq!(entries[1]["key"], "key0001");
    assert_eq!(entries[1]["kind"], "delete");
    assert!(entries[1]["seq"].as_u64() > entries[2]["seq"].as_u64());
    let t = &v["range_tombstones"][0];
    assert_eq!(
        (t["start"].as_str(), t["end"].as_str()),
        (Some("key0100"), Some("key0200"))
    );
    assert_eq!(v["problems"], serde_json::json!([]));

    let text = ok(&["sst", "dump", "--verify", path_str(&sst)]);
    assert!(text.contains("verify: every block is whole"), "{text}");
    assert!(text.contains("'key0001' @ "), "{text}");
    assert!(text.contains(": delete => ''"), "{text}");
    let short = ok(&["sst", "dump", "--no-entries", "--hex", path_str(&sst)]);
    assert!(!short.contains("\nentries:"), "{short}");
    assert!(
        short.contains("['6b657930313030', '6b657930323030')"),
        "{short}"
    );
}

#[test]
fn options_show_and_diff() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    shale::Db::open(a.path(), options())
        .unwrap()
        .close()
        .unwrap();
    shale::Db::open(b.path(), {
        let base = options();
        shale::Options {
            cf: shale::CfOptions {
                write_buffer_size: 1 << 20,
                ..base.cf
            },
            max_open_files: 100,
            ..base
        }
    })
    .unwrap()
    .close()
    .unwrap();
    let shown: Value =
        serde_json::from_str(&ok(&["options", "show", "--json", path_str(a.path())])).unwrap();
    assert_eq!(shown["Version"]["options_file_version"], "1");
    assert_eq!(
        shown["TableOptions/BlockBasedTable \"default\""]["block_size"],
        "4096"
    );
    let text = ok(&["options", "show", path_str(a.path())]);
    assert!(text.contains("[DBOptions]"), "{text}");

    let diff: Value = serde_json::from_str(&ok(&[
        "options",
        "diff",
        "--json",
        path_str(a.path()),
        path_str(b.path()),
    ]))
    .unwrap();
    let names: Vec<&str> = diff
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    // Sorted by section, then name.
    assert_eq!(names, ["write_buffer_size", "max_open_files"], "{diff:#}");
    let wb = &diff[0];
    assert_eq!(wb["section"], "CFOptions \"default\"");
    assert_eq!(wb["b"], "1048576");
    let same = ok(&["options", "diff", path_str(a.path()), path_str(a.path())]);
    assert_eq!(same, "");
    let text = ok(&["options", "diff", path_str(a.path()), path_str(b.path())]);
    assert!(text.contains("[DBOptions] max_open_files: "), "{text}");
}

#[test]
fn compressed_tables_dump_and_verify() {
    for (c, name) in [
        (shale::Compression::Lz4, "LZ4"),
        (shale::Compression::Zstd, "ZSTD"),
    ] {
        let d = tempfile::tempdir().unwrap();
        let db = shale::Db::open(d.path(), {
            let base = options();
            shale::Options {
                cf: shale::CfOptions {
                    compression_per_level: vec![c],
                    ..base.cf
                },
                ..base
            }
        })
        .unwrap();
        for i in 0..500 {
            db.put(
                format!("key{i:04}").as_bytes(),
                &[b'a' + (i % 7) as u8; 200],
            )
            .unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
        let sst = files_with(d.path(), "sst").pop().unwrap();
        let v: Value =
            serde_json::from_str(&ok(&["sst", "dump", "--json", "--verify", path_str(&sst)]))
                .unwrap();
        assert_eq!(v["properties"]["compression"], name);
        assert!(
            v["properties"]["data_size"].as_u64().unwrap() < 500 * 200 / 2,
            "{name}"
        );
        assert_eq!(v["entries"].as_array().unwrap().len(), 500);
        assert_eq!(v["entries"][499]["value"], "c".repeat(200)); // 499 % 7 = 2
        let m = json_lines(&ok(&["manifest", "dump", "--json", path_str(d.path())]));
        assert!(
            m.iter().any(|e| e["new_files"][0]["compression"] == name),
            "{m:?}"
        );
        // A flipped byte inside a compressed block.
        flip_byte(&sst, 30);
        let r = shale(&["sst", "dump", "--verify", path_str(&sst)]);
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert!(r.stderr.contains("at offset 0"), "{}", r.stderr);
    }
}
