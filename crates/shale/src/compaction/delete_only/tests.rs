use super::*;
use crate::base::{make_internal_key, ValueKind};
use crate::range_del::RangeTombstone;

fn ik(k: &str, seq: SeqNo) -> Vec<u8> {
    let mut v = Vec::new();
    make_internal_key(&mut v, k.as_bytes(), seq, ValueKind::Value as u8);
    v
}

fn file(n: u64, lo: &str, hi: &str, seq: SeqNo) -> FileMeta {
    FileMeta::new(n, 100, ik(lo, seq), ik(hi, seq), 1, seq, 1, 0)
}

fn frags(ts: &[(&str, &str, SeqNo)]) -> Fragments {
    let ts: Vec<RangeTombstone> = ts
        .iter()
        .map(|(a, b, s)| RangeTombstone {
            start: a.as_bytes().to_vec(),
            end: b.as_bytes().to_vec(),
            seq: *s,
        })
        .collect();
    Fragments::build(&ts)
}

#[test]
fn a_file_is_covered_only_wholly_by_newer_visible_pieces() {
    let fr = frags(&[("b", "f", 50), ("f", "k", 60)]);
    assert!(covers_file(&fr, &file(1, "c", "j", 40), MAX_SEQNO));
    assert!(
        !covers_file(&fr, &file(1, "a", "j", 40), MAX_SEQNO),
        "starts before"
    );
    assert!(
        !covers_file(&fr, &file(1, "c", "k", 40), MAX_SEQNO),
        "end is exclusive"
    );
    assert!(
        !covers_file(&fr, &file(1, "c", "j", 55), MAX_SEQNO),
        "newer than a piece"
    );
    assert!(
        !covers_file(&fr, &file(1, "c", "j", 40), 55),
        "a snapshot before one piece"
    );
    let gap = frags(&[("b", "d", 50), ("e", "k", 60)]);
    assert!(
        !covers_file(&gap, &file(1, "c", "j", 40), MAX_SEQNO),
        "a gap"
    );
}
