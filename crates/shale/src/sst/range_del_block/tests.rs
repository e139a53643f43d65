use super::*;
use crate::base::{make_internal_key, SeqNo};
use crate::sst::block_builder::BlockBuilder;

fn block(entries: &[(&str, SeqNo, u8, &str)]) -> Arc<Block> {
    let mut b = BlockBuilder::new(1);
    for (start, seq, kind, end) in entries {
        let mut k = Vec::new();
        make_internal_key(&mut k, start.as_bytes(), *seq, *kind);
        b.add(&k, end.as_bytes());
    }
    Arc::new(Block::new(b.finish().to_vec(), Arc::from("7.sst"), 4096).unwrap())
}

const R: u8 = ValueKind::RangeDeletion as u8;

#[test]
fn decodes_pieces_with_their_sequence_numbers() {
    let f = decode(block(&[
        ("b", 5, R, "d"),
        ("d", 9, R, "f"),
        ("d", 5, R, "f"),
        ("f", 9, R, "h"),
    ]))
    .unwrap();
    let got: Vec<(&[u8], &[u8], &[SeqNo])> = f
        .fragments()
        .iter()
        .map(|p| (p.start.as_slice(), p.end.as_slice(), p.seqs.as_slice()))
        .collect();
    assert_eq!(
        got,
        vec![
            (&b"b"[..], &b"d"[..], &[5][..]),
            (&b"d"[..], &b"f"[..], &[9, 5][..]),
            (&b"f"[..], &b"h"[..], &[9][..]),
        ]
    );
}

#[test]
fn damage_is_corruption_naming_file_and_offset() {
    for (entries, what) in [
        (vec![("b", 5, ValueKind::Value as u8, "d")], "another kind"),
        (vec![("d", 5, R, "b")], "reversed"),
        (vec![("b", 5, R, "b")], "empty"),
        (vec![("b", 9, R, "d"), ("b", 5, R, "e")], "two ends"),
        (vec![("b", 5, R, "f"), ("c", 9, R, "g")], "overlap"),
    ] {
        match decode(block(&entries)) {
            Err(Error::Corruption {
                file,
                offset,
                what: w,
            }) => {
                assert_eq!((file.as_str(), offset), ("7.sst", 4096), "{what}");
                assert!(w.starts_with("range-deletion block"), "{what}: {w}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}
