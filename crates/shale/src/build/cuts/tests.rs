use super::*;

#[test]
fn fixed_prefix_cuts_where_the_prefix_changes() {
    let p = SstPartitioner::FixedPrefix(2);
    assert!(p.must_cut(b"aa1", b"ab0"));
    assert!(!p.must_cut(b"aa1", b"aa2"));
    // Shorter than the prefix: never forces a cut (RocksDB's rule).
    assert!(!p.must_cut(b"a", b"bb"));
    assert!(!p.must_cut(b"aa", b"b"));
    assert!(p.can_move(b"aa0", b"aa9"));
    assert!(!p.can_move(b"aa0", b"ab0"));
}

#[test]
fn partitioner_names_round_trip_and_bad_ones_are_refused() {
    let p = SstPartitioner::FixedPrefix(8);
    assert_eq!(p.name(), "{id=SstPartitionerFixedPrefixFactory;length=8;}");
    assert_eq!(SstPartitioner::parse(&p.name()).unwrap(), p);
    assert_eq!(
        SstPartitioner::parse("{length=4;id=SstPartitionerFixedPrefixFactory}").unwrap(),
        SstPartitioner::FixedPrefix(4)
    );
    for bad in [
        "",
        "{}",
        "SstPartitionerFixedPrefixFactory",
        "{id=SstPartitionerFixedPrefixFactory}",
        "{id=Other;length=4}",
        "{id=SstPartitionerFixedPrefixFactory;length=x}",
        "{id=SstPartitionerFixedPrefixFactory;length=4;color=red}",
    ] {
        assert!(
            matches!(SstPartitioner::parse(bad), Err(Error::InvalidArgument(_))),
            "{bad:?}"
        );
    }
    assert!(SstPartitioner::FixedPrefix(0).validate().is_err());
    assert!(SstPartitioner::FixedPrefix(1).validate().is_ok());
}

/// Feeds `n` streams of `per` keys each, interleaved round-robin in
/// insertion order, in key order (stream by stream), 1 KiB a key;
/// returns the key indexes where the detector cut.
fn cuts_for_streams(n: u64, per: u64, min_run_bytes: u64) -> Vec<u64> {
    let mut d = StreamDetector::new(min_run_bytes);
    let mut bytes = 0u64;
    let mut cuts = Vec::new();
    for s in 0..n {
        for k in 0..per {
            let seq = 1 + k * n + s;
            if d.should_cut(seq, bytes) {
                cuts.push(s * per + k);
                d.output_ended();
                bytes = 0;
            }
            bytes += 1024;
        }
    }
    cuts
}

#[test]
fn interleaved_streams_are_cut_at_each_stream_start() {
    assert_eq!(cuts_for_streams(4, 100, 64 << 10), vec![100, 200, 300]);
    assert!(cuts_for_streams(1, 1000, 64 << 10).is_empty());
    // Runs of 100 KiB do not fill 200 KiB: no cut.
    assert!(cuts_for_streams(4, 100, 200 << 10).is_empty());
    // Runs shorter than MIN_RUN_KEYS never cut, whatever their bytes.
    assert!(cuts_for_streams(8, MIN_RUN_KEYS - 1, 1).is_empty());
    assert_eq!(cuts_for_streams(3, MIN_RUN_KEYS, 1).len(), 2);
}

#[test]
fn the_run_size_follows_the_memtable_size() {
    let min = |wbs: u64| StreamDetector::for_output_size(wbs).min_run_bytes;
    assert_eq!(min(64 << 20), 512 << 10);
    assert_eq!(min(4 << 20), 64 << 10);
    assert_eq!(min(256 << 10), 32 << 10);
    assert_eq!(min(4096), 512);
}

#[test]
fn random_inserts_are_never_cut() {
    // Sequence numbers in random order along the keys: runs of ~2.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut d = StreamDetector::new(1);
    for i in 0..200_000u64 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        assert!(!d.should_cut(state >> 8, i * 100), "cut at key {i}");
    }
}

#[test]
fn a_cut_for_another_reason_restarts_the_run_s_byte_count() {
    let mut d = StreamDetector::new(10 << 10);
    // 20 rising keys of 1 KiB: the output is cut by size after the
    // 15th, so the run fills only 5 KiB of the new output.
    let mut bytes = 0;
    for seq in 100..120 {
        assert!(!d.should_cut(seq, bytes));
        bytes += 1024;
        if seq == 114 {
            d.output_ended();
            bytes = 0;
        }
    }
    assert!(!d.should_cut(1, bytes), "5 KiB < 10 KiB of this output");
}
