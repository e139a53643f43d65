use super::*;
use crate::sst::Compression;

fn text_lines(b: &BlobOptions) -> Vec<(String, String)> {
    b.text_lines()
        .into_iter()
        .map(|l| (l.name, l.value))
        .collect()
}

fn parse_line(k: &str, v: &str, b: &mut BlobOptions) -> Result<bool> {
    b.set_text(k, k, v)
}

#[test]
fn text_round_trips_only_what_differs() {
    assert!(text_lines(&BlobOptions::default()).is_empty());
    let b = BlobOptions {
        enable_blob_files: true,
        min_blob_size: 4096,
        blob_file_size: 1 << 20,
        blob_compression_type: Compression::Lz4,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: 0.5,
        blob_garbage_collection_min_garbage_ratio: 0.2,
        blob_garbage_collection_force_threshold: 0.75,
        blob_compaction_readahead_size: 2 << 20,
        blob_file_starting_level: 2,
        prepopulate_blob_cache: PrepopulateBlobCache::FlushOnly,
    };
    let lines = text_lines(&b);
    assert_eq!(lines.len(), 11, "{lines:?}");
    let mut back = BlobOptions::default();
    for (k, v) in &lines {
        assert!(parse_line(k, v, &mut back).unwrap(), "{k}");
    }
    assert_eq!(back, b);
    assert!(!parse_line("write_buffer_size", "1", &mut back).unwrap());
}

#[test]
fn bad_values_and_combinations_are_refused() {
    let mut b = BlobOptions::default();
    for (k, v) in [
        ("enable_blob_files", "yes"),
        ("min_blob_size", "-1"),
        ("blob_compression_type", "Snappy"),
        ("prepopulate_blob_cache", "kAlways"),
    ] {
        assert!(
            matches!(parse_line(k, v, &mut b), Err(Error::InvalidArgument(_))),
            "{k}={v}"
        );
    }
    let check = |b: BlobOptions, style| validate(&b, style);
    assert!(check(BlobOptions::default(), CompactionStyle::Level).is_ok());
    for b in [
        BlobOptions {
            blob_file_size: 0,
            ..BlobOptions::default()
        },
        BlobOptions {
            blob_garbage_collection_age_cutoff: 1.5,
            ..BlobOptions::default()
        },
        BlobOptions {
            blob_garbage_collection_min_garbage_ratio: 1.01,
            ..BlobOptions::default()
        },
        BlobOptions {
            blob_garbage_collection_force_threshold: -0.1,
            ..BlobOptions::default()
        },
        BlobOptions {
            blob_garbage_collection_force_threshold: f64::NAN,
            ..BlobOptions::default()
        },
    ] {
        assert!(
            matches!(
                check(b.clone(), CompactionStyle::Level),
                Err(Error::InvalidArgument(_))
            ),
            "{b:?}"
        );
    }
    let on = BlobOptions {
        enable_blob_files: true,
        ..BlobOptions::default()
    };
    assert!(check(on.clone(), CompactionStyle::Universal).is_ok());
    match check(on, CompactionStyle::Fifo) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("FIFO"), "{m}"),
        other => panic!("{other:?}"),
    }
}
