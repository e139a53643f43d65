use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::super::info_log::event_json;
use super::*;
use crate::events::admin_records::*;
use crate::events::file_records::*;
use std::path::PathBuf;

fn parse<R: Record>(r: &R) -> Value {
    let v: Value = serde_json::from_str(&event_json(42, r)).expect("JSON");
    assert_eq!(v["time_micros"], 42);
    assert_eq!(v["event"], R::NAME);
    v
}

fn file(file_number: u64, level: usize, file_size: u64) -> TableFileInfo {
    TableFileInfo {
        file_number,
        level,
        file_size,
    }
}

fn numbers_of(files: &[TableFileInfo]) -> Value {
    json!(files.iter().map(|f| f.file_number).collect::<Vec<_>>())
}

// One sample per kind (optional members absent).

fn flush_started() -> FlushStarted {
    FlushStarted {
        job: 3,
        event: Kind::new(),
        num_memtables: 1,
        total_num_input_entries: 10,
        num_deletes: 4,
        memory_usage: 1 << 20,
        num_range_deletes: 1,
        cf_name: "a".into(),
        cf: 2,
        memtable_id: 9,
    }
}

fn flush_finished() -> FlushFinished {
    FlushFinished {
        job: 3,
        event: Kind::new(),
        output_compression: "LZ4",
        lsm_state: vec![1, 0, 2],
        blob_file_head: None,
        blob_file_tail: None,
        immutable_memtables: 1,
        cf_name: "a".into(),
        cf: 2,
        memtable_id: 9,
        num_entries: 10,
        num_deletes: 4,
        first_seq: Some(5),
        largest_seq: None,
        bytes_written: 4096,
        output_files: vec![file(12, 0, 4096)],
    }
}

fn flush_discarded() -> FlushDiscarded {
    FlushDiscarded {
        event: Kind::new(),
        job: 1,
        cf: 0,
        memtable_id: 2,
        reason: "r",
        cf_name: "default".into(),
    }
}

fn compaction_started() -> CompactionStarted {
    let inputs = JobInputs {
        input_level: 0,
        output_level: 3,
        files: vec![
            file(7, 0, 100),
            file(8, 0, 100),
            file(9, 2, 150),
            file(10, 3, 50),
        ],
    };
    CompactionStarted {
        job: 5,
        event: Kind::new(),
        cf_name: "de\"fault\n".into(),
        compaction_reason: CompactionReason::UniversalSizeRatio,
        input_data_size: inputs.bytes(),
        inputs,
        score: 1.23456,
        oldest_snapshot_seqno: -1,
        cf: 0,
        trivial_move: false,
        drops_records: None,
    }
}

fn compaction_finished() -> CompactionFinished {
    CompactionFinished {
        job: 5,
        event: Kind::new(),
        compaction_time_micros: 100,
        compaction_time_cpu_micros: 90,
        output_level: 3,
        num_output_files: 1,
        total_output_size: 300,
        num_blob_output_files: 0,
        total_blob_output_size: 0,
        num_input_records: 40,
        num_output_records: 30,
        num_subcompactions: 2,
        output_compression: "ZSTD",
        num_single_delete_mismatches: 0,
        lsm_state: vec![0, 0, 0, 1],
        blob_file_head: None,
        blob_file_tail: None,
        cf_name: "default".into(),
        cf: 0,
        compaction_reason: CompactionReason::UniversalSizeRatio,
        input_level: 0,
        inputs: compaction_started().inputs.files,
        output_files: vec![file(11, 3, 300)],
        subcompactions: 2,
        total_input_size: 400,
        num_dropped_records: 10,
        blob_bytes_relocated: 0,
        blob_garbage_bytes: 0,
    }
}

fn compaction_discarded() -> CompactionDiscarded {
    CompactionDiscarded {
        event: Kind::new(),
        job: 1,
        cf: 0,
        reason: "r",
        cf_name: "default".into(),
    }
}

fn trivial_move() -> TrivialMove {
    TrivialMove {
        job: 6,
        event: Kind::new(),
        destination_level: 6,
        files: vec![file(20, 0, 10), file(21, 0, 20)],
        total_files_size: 30,
        files_at_destination: Vec::new(),
        cf_name: "default".into(),
        cf: 0,
        compaction_reason: CompactionReason::LevelL0FilesNum,
        from_level: 0,
        to_level: 6,
        bytes: 30,
        lsm_state: vec![0, 0, 0, 0, 0, 0, 2],
    }
}

fn dropped() -> Vec<TableFileInfo> {
    vec![file(30, 5, 100), file(31, 6, 200)]
}

fn fifo_compaction() -> FifoCompaction {
    FifoCompaction {
        event: Kind::new(),
        cf: 1,
        reason: "ttl",
        compaction_reason: CompactionReason::FifoTtl,
        files: dropped(),
        bytes: 300,
        lsm_state: vec![2],
        job: 8,
        cf_name: "f".into(),
        num_dropped_records: 77,
    }
}

fn delete_only_compaction() -> DeleteOnlyCompaction {
    DeleteOnlyCompaction {
        event: Kind::new(),
        cf: 1,
        job: 8,
        compaction_reason: CompactionReason::DeleteOnly,
        files: dropped(),
        bytes: 300,
        lsm_state: vec![2],
        cf_name: "f".into(),
        num_dropped_records: 77,
    }
}

fn table_file_creation() -> TableFileCreation {
    TableFileCreation {
        cf_name: "default".into(),
        job: 4,
        event: Kind::new(),
        file_number: 15,
        file_size: 2048,
        smallest_seqno: 1,
        largest_seqno: 9,
        table_properties: TablePropertiesRecord {
            num_entries: 9,
            num_deletions: 2,
            ..TablePropertiesRecord::default()
        },
        oldest_blob_file_number: None,
        status: Ok(()),
        cf: 0,
        level: 1,
        num_entries: 9,
        num_deletions: 2,
        reason: TableFileCreationReason::Compaction,
        file_path: PathBuf::from("/db/000015.sst"),
    }
}

fn table_file_deletion() -> TableFileDeletion {
    TableFileDeletion {
        event: Kind::new(),
        file_number: 15,
        status: Err(Error::InvalidArgument("gone".into())),
        file_path: PathBuf::from("/db/000015.sst"),
    }
}

fn blob_file_deletion() -> BlobFileDeletion {
    BlobFileDeletion {
        event: Kind::new(),
        file_number: 3,
        status: Ok(()),
    }
}

fn stall_condition_changed() -> StallConditionChanged {
    StallConditionChanged {
        event: Kind::new(),
        cf: 3,
        prev: WriteStallCondition::Normal,
        cur: WriteStallCondition::Stopped,
        cause: "level0_stop",
        cf_name: "s".into(),
    }
}

fn column_family_created() -> ColumnFamilyCreated {
    ColumnFamilyCreated {
        event: Kind::new(),
        id: 1,
        name: "n\u{1b}".into(),
    }
}

fn column_family_dropped() -> ColumnFamilyDropped {
    ColumnFamilyDropped {
        event: Kind::new(),
        id: 1,
        name: "n".into(),
    }
}

fn options_changed() -> OptionsChanged {
    OptionsChanged {
        event: Kind::new(),
        cf: "default".into(),
        changes: "a=1 b=2".into(),
    }
}

fn db_options_changed() -> DbOptionsChanged {
    DbOptionsChanged {
        event: Kind::new(),
        changes: "a=1".into(),
    }
}

/// RocksDB's `JSONWriter` layout: `", "` between members, `": "` after
/// keys, the members in declaration order after `time_micros`, JSON
/// escapes in strings.
#[test]
fn lines_have_rocksdb_layout() {
    let r = TableFileDeletion {
        status: Ok(()),
        file_number: 12,
        ..table_file_deletion()
    };
    assert_eq!(
        event_json(7, &r),
        r#"{"time_micros": 7, "event": "table_file_deletion", "file_number": 12, "status": "OK"}"#
    );
    assert_eq!(
        event_json(1, &compaction_started()),
        concat!(
            r#"{"time_micros": 1, "job": 5, "event": "compaction_started", "#,
            r#""cf_name": "de\"fault\n", "compaction_reason": "UniversalSizeRatio", "#,
            r#""files_L0": [7, 8], "files_L2": [9], "files_L3": [10], "#,
            r#""input_level": 0, "output_level": 3, "middle_levels": {"L2": [9]}, "#,
            r#""score": 1.235, "input_data_size": 400, "oldest_snapshot_seqno": -1, "cf": 0}"#
        )
    );
}

#[test]
fn flush_lines_agree_with_the_listener_infos() {
    let s = flush_started();
    let v = parse(&s);
    for i in [s.begin_info(), s.completed(Err(Error::ShutdownInProgress))] {
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["total_num_input_entries"], i.num_entries);
        assert_eq!(v["num_deletes"], i.num_deletes);
        assert!(i.output_files.is_empty());
    }
    assert!(matches!(s.listener_event(), Some(Event::FlushBegin(_))));

    let f = flush_finished();
    let v = parse(&f);
    let i = f.info();
    assert_eq!(v["job"], i.job_id);
    assert_eq!(v["cf_name"], i.cf_name);
    assert_eq!(v["cf"], i.cf_id);
    assert_eq!(v["num_entries"], i.num_entries);
    assert_eq!(v["num_deletes"], i.num_deletes);
    assert_eq!(v["output_files"], numbers_of(&i.output_files));
    assert_eq!(v["lsm_state"], json!([1, 0, 2]));
    assert_eq!(v["largest_seq"], Value::Null);
    assert!(v.get("blob_file_head").is_none(), "{v}");
    assert!(i.status.is_ok());
    assert!(matches!(f.listener_event(), Some(Event::FlushCompleted(_))));
}

#[test]
fn compaction_lines_agree_with_the_listener_infos() {
    let s = compaction_started();
    let v = parse(&s);
    for i in [s.begin_info(), s.completed(Err(Error::ShutdownInProgress))] {
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["compaction_reason"], i.reason.name());
        assert_eq!(v["input_level"], i.base_input_level);
        assert_eq!(v["output_level"], i.output_level);
        for level in [0, 2, 3] {
            let at: Vec<TableFileInfo> = i
                .input_files
                .iter()
                .filter(|f| f.level == level)
                .cloned()
                .collect();
            assert_eq!(v[format!("files_L{level}")], numbers_of(&at));
        }
        let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
        assert_eq!(v["input_data_size"], size);
        assert_eq!(i.num_dropped_records, 0);
    }
    assert!(matches!(
        s.listener_event(),
        Some(Event::CompactionBegin(_))
    ));

    let f = CompactionFinished {
        blob_file_head: Some(3),
        blob_file_tail: Some(4),
        ..compaction_finished()
    };
    let v = parse(&f);
    let i = f.info();
    assert_eq!(v["job"], i.job_id);
    assert_eq!(v["cf_name"], i.cf_name);
    assert_eq!(v["cf"], i.cf_id);
    assert_eq!(v["compaction_reason"], i.reason.name());
    assert_eq!(v["input_level"], i.base_input_level);
    assert_eq!(v["output_level"], i.output_level);
    assert_eq!(v["num_input_files"], i.input_files.len());
    assert_eq!(v["output_files"], numbers_of(&i.output_files));
    assert_eq!(v["num_output_files"], i.output_files.len());
    assert_eq!(v["num_input_records"], i.num_input_records);
    assert_eq!(v["num_dropped_records"], i.num_dropped_records);
    assert_eq!(v["subcompactions"], v["num_subcompactions"]);
    assert_eq!(v["blob_file_head"], 3);
    assert!(!i.trivial_move && i.status.is_ok());
    assert!(matches!(
        f.listener_event(),
        Some(Event::CompactionCompleted(_))
    ));

    let t = trivial_move();
    let v = parse(&t);
    let i = t.info();
    assert_eq!(v["job"], i.job_id);
    assert_eq!(v["cf_name"], i.cf_name);
    assert_eq!(v["compaction_reason"], i.reason.name());
    assert_eq!(v["from_level"], i.base_input_level);
    assert_eq!(v["destination_level"], i.output_level);
    assert_eq!(v["to_level"], i.output_level);
    assert_eq!(v["files"], numbers_of(&i.input_files));
    assert_eq!(v["files"], numbers_of(&i.output_files));
    assert!(i.output_files.iter().all(|f| f.level == 6));
    let size: u64 = i.output_files.iter().map(|f| f.file_size).sum();
    assert_eq!(v["total_files_size"], size);
    assert_eq!(v["bytes"], size);
    assert!(i.trivial_move);
    assert!(v.get("files_at_destination").is_none(), "{v}");
    assert!(matches!(
        t.listener_event(),
        Some(Event::CompactionCompleted(_))
    ));
    let t = TrivialMove {
        files_at_destination: vec![file(22, 6, 5)],
        ..t
    };
    let v = parse(&t);
    let i = t.info();
    assert_eq!(v["files_at_destination"], json!([22]));
    assert_eq!(numbers_of(&i.input_files), json!([20, 21, 22]));
    assert_eq!(numbers_of(&i.output_files), json!([20, 21]));
}

#[test]
fn drop_lines_agree_with_the_listener_infos() {
    let (fifo, only) = (fifo_compaction(), delete_only_compaction());
    for (v, i) in [(parse(&fifo), fifo.info()), (parse(&only), only.info())] {
        assert_eq!(v["job"], i.job_id);
        assert_eq!(v["cf_name"], i.cf_name);
        assert_eq!(v["cf"], i.cf_id);
        assert_eq!(v["compaction_reason"], i.reason.name());
        assert_eq!(v["files"], numbers_of(&i.input_files));
        assert_eq!(v["num_dropped_records"], i.num_dropped_records);
        let size: u64 = i.input_files.iter().map(|f| f.file_size).sum();
        assert_eq!(v["bytes"], size);
        assert_eq!((i.base_input_level, i.output_level), (5, 6));
        assert!(i.output_files.is_empty());
    }
    assert!(matches!(
        only.listener_event(),
        Some(Event::CompactionCompleted(_))
    ));
}

#[test]
fn file_and_stall_lines_agree_with_the_listener_infos() {
    let c = table_file_creation();
    let v = parse(&c);
    let i = c.info();
    assert_eq!(v["cf_name"], i.cf_name);
    assert_eq!(v["cf"], i.cf_id);
    assert_eq!(v["job"], i.job_id);
    assert_eq!(v["file_number"], i.file.file_number);
    assert_eq!(v["file_size"], i.file.file_size);
    assert_eq!(v["level"], i.file.level);
    assert_eq!(v["num_entries"], i.num_entries);
    assert_eq!(v["table_properties"]["num_entries"], i.num_entries);
    assert_eq!(v["reason"], "Compaction");
    assert_eq!(v["status"], "OK");
    assert!(v.get("file_path").is_none() && v.get("oldest_blob_file_number").is_none());
    assert!(matches!(
        c.listener_event(),
        Some(Event::TableFileCreated(_))
    ));

    let d = table_file_deletion();
    let v = parse(&d);
    let i = d.info();
    assert_eq!(v["file_number"], i.file_number);
    assert_eq!(v["status"], i.status.unwrap_err().to_string());
    assert!(matches!(
        d.listener_event(),
        Some(Event::TableFileDeleted(_))
    ));

    let s = stall_condition_changed();
    let v = parse(&s);
    let i = s.info();
    assert_eq!(v["cf"], i.cf_id);
    assert_eq!(v["cf_name"], i.cf_name);
    assert_eq!(v["prev"], format!("{:?}", i.prev));
    assert_eq!(v["cur"], format!("{:?}", i.cur));
    assert!(matches!(
        s.listener_event(),
        Some(Event::StallConditionsChanged(_))
    ));
}

/// The kinds no listener hears still name themselves.
#[test]
fn log_only_kinds() {
    assert_eq!(parse(&flush_discarded())["memtable_id"], 2);
    parse(&compaction_discarded());
    let b = blob_file_deletion();
    assert!(b.listener_event().is_none());
    assert_eq!(parse(&b)["status"], "OK");
    assert_eq!(parse(&column_family_created())["name"], "n\u{1b}");
    parse(&column_family_dropped());
    assert_eq!(parse(&options_changed())["changes"], "a=1 b=2");
    parse(&db_options_changed());
}

/// The members of one line (`table_properties`' too; `files_L<n>` for
/// each `files_L` member), without `time_micros`.
fn members(v: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, x) in v.as_object().expect("an object") {
        if k == "time_micros" {
            continue;
        }
        if k.starts_with("files_L") {
            out.insert("files_L<n>".to_string());
        } else {
            out.insert(k.clone());
        }
        if k == "table_properties" {
            out.extend(x.as_object().expect("an object").keys().cloned());
        }
    }
    out
}

/// docs/format/log-events.md lists, under each kind's heading, exactly
/// the members its lines carry (every optional member set here).
#[test]
fn the_format_doc_lists_every_member() {
    let doc = include_str!("../../../../../docs/format/log-events.md");
    let section = |name: &str| -> BTreeSet<String> {
        let heading = doc
            .lines()
            .position(|l| l.starts_with("### ") && l.contains(&format!("`{name}`")))
            .unwrap_or_else(|| panic!("no heading for {name}"));
        doc.lines()
            .skip(heading + 1)
            .take_while(|l| !l.starts_with("## ") && !l.starts_with("### "))
            .filter_map(|l| l.strip_prefix("| `")?.split_once('`'))
            .map(|(m, _)| m.to_string())
            .collect()
    };
    let full_properties = TablePropertiesRecord {
        column_family_name: Some("default".into()),
        column_family_id: Some(0),
        ..TablePropertiesRecord::default()
    };
    let lines: Vec<(&str, Vec<Value>)> = vec![
        (FlushStarted::NAME, vec![parse(&flush_started())]),
        (
            FlushFinished::NAME,
            vec![parse(&FlushFinished {
                blob_file_head: Some(1),
                blob_file_tail: Some(2),
                ..flush_finished()
            })],
        ),
        (FlushDiscarded::NAME, vec![parse(&flush_discarded())]),
        (
            TableFileCreation::NAME,
            vec![parse(&TableFileCreation {
                oldest_blob_file_number: Some(3),
                table_properties: full_properties,
                ..table_file_creation()
            })],
        ),
        (TableFileDeletion::NAME, vec![parse(&table_file_deletion())]),
        (BlobFileDeletion::NAME, vec![parse(&blob_file_deletion())]),
        (CompactionStarted::NAME, vec![parse(&compaction_started())]),
        (
            CompactionFinished::NAME,
            vec![parse(&CompactionFinished {
                blob_file_head: Some(1),
                blob_file_tail: Some(2),
                ..compaction_finished()
            })],
        ),
        (
            TrivialMove::NAME,
            vec![parse(&TrivialMove {
                files_at_destination: vec![file(22, 6, 5)],
                ..trivial_move()
            })],
        ),
        (FifoCompaction::NAME, vec![parse(&fifo_compaction())]),
        (
            DeleteOnlyCompaction::NAME,
            vec![parse(&delete_only_compaction())],
        ),
        (
            CompactionDiscarded::NAME,
            vec![parse(&compaction_discarded())],
        ),
        (
            StallConditionChanged::NAME,
            vec![parse(&stall_condition_changed())],
        ),
        (
            ColumnFamilyCreated::NAME,
            vec![
                parse(&column_family_created()),
                parse(&column_family_dropped()),
            ],
        ),
        (
            OptionsChanged::NAME,
            vec![parse(&options_changed()), parse(&db_options_changed())],
        ),
    ];
    for (name, values) in &lines {
        let carried: BTreeSet<String> = values.iter().flat_map(members).collect();
        assert_eq!(section(name), carried, "docs/format/log-events.md, {name}");
    }
}
