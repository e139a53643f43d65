use super::*;
use crate::wal::LogWriter;

fn write_manifest(path: &Path, edits: &[VersionEdit]) {
    let fs = default_fs();
    let mut w = LogWriter::new(fs.create(path).unwrap(), 3);
    for e in edits {
        let mut rec = Vec::new();
        e.encode(&mut rec);
        w.add_record(&rec).unwrap();
    }
    w.sync().unwrap();
}

#[test]
fn a_cut_atomic_group_is_left_out_as_recovery_leaves_it() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("MANIFEST-000003");
    let plain = VersionEdit {
        last_sequence: Some(7),
        ..Default::default()
    };
    let grouped = |rest, seq| VersionEdit {
        atomic_group: Some(rest),
        last_sequence: Some(seq),
        ..Default::default()
    };
    write_manifest(
        &path,
        &[plain.clone(), grouped(1, 8), grouped(0, 9), grouped(1, 10)],
    );
    let mut r = ManifestReader::open(&path).unwrap();
    let mut seqs = Vec::new();
    let (damage, left_out) = r.applied_edits(|e| seqs.push(e.last_sequence.unwrap()));
    assert!(damage.is_none());
    assert_eq!((seqs, left_out), (vec![7, 8, 9], 1));

    // Every edit is still shown by the plain reader, with its offset.
    let all: Vec<ManifestEdit> = ManifestReader::open(&path)
        .unwrap()
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].offset, 0);
    assert!(all[1].offset > 0);
    assert_eq!(all[3].atomic_group, Some(1));
}

#[test]
fn blob_files_and_a_tables_oldest_blob_file_are_shown() {
    use crate::base::{make_internal_key, ValueKind};
    use crate::version::{BlobFileAddition as Add, BlobFileGarbage as Garbage};
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("MANIFEST-000003");
    let key = |k: &[u8], seq| {
        let mut v = Vec::new();
        make_internal_key(&mut v, k, seq, ValueKind::BlobIndex as u8);
        v
    };
    let mut table = FileMeta::new(9, 500, key(b"a", 1), key(b"z", 2), 1, 2, 2, 0);
    table.oldest_blob_file = 8;
    let mut edit = VersionEdit {
        column_family: 0,
        blob_file_additions: vec![Add {
            number: 8,
            count: 2,
            bytes: 300,
            file_size: 352,
        }],
        blob_file_garbage: vec![Garbage {
            number: 8,
            count: 1,
            bytes: 150,
        }],
        ..Default::default()
    };
    edit.add_file(0, table);
    write_manifest(&path, &[edit]);
    let e = ManifestReader::open(&path)
        .unwrap()
        .next_edit()
        .unwrap()
        .unwrap();
    assert_eq!(e.new_files[0].oldest_blob_file, 8);
    assert_eq!(
        e.blob_file_additions,
        [BlobFileAddition {
            number: 8,
            count: 2,
            bytes: 300,
            file_size: 352
        }]
    );
    assert_eq!(
        e.blob_file_garbage,
        [BlobFileGarbage {
            number: 8,
            count: 1,
            bytes: 150
        }]
    );
}

#[test]
fn a_misnamed_file_is_refused_and_damage_is_corruption() {
    let d = tempfile::tempdir().unwrap();
    let odd = d.path().join("manifest.bak");
    std::fs::write(&odd, b"").unwrap();
    assert!(matches!(
        ManifestReader::open(&odd),
        Err(Error::InvalidArgument(_))
    ));
    let path = d.path().join("MANIFEST-000003");
    write_manifest(&path, &[VersionEdit::default(), VersionEdit::default()]);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[2] ^= 1; // the first record's checksum
    std::fs::write(&path, bytes).unwrap();
    match ManifestReader::open(&path).unwrap().next_edit() {
        Err(Error::Corruption { file, offset, .. }) => {
            assert!(file.ends_with("MANIFEST-000003"));
            assert_eq!(offset, 0);
        }
        other => panic!("{other:?}"),
    }
}
