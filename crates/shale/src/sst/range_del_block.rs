//! Decoding a table's range-deletion block (docs/format/sst.md): entries
//! `(start, seq, RangeDeletion) -> end` in internal-key order, one per
//! fragment and sequence number, fragments disjoint.
//!
//! Never panics on bad bytes: a malformed key, another kind, an empty or
//! reversed range, fragments out of order or overlapping, or one start
//! with two ends is `Corruption` naming the file and the block's offset.

use std::sync::Arc;

use crate::base::{parse_internal_key, ValueKind};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::range_del::{Fragment, Fragments};
use crate::sst::block::{Block, BlockIterator};

/// The fragments stored in `block`.
pub(crate) fn decode(block: Arc<Block>) -> Result<Fragments> {
    let (file, offset) = (block.file().to_string(), block.offset());
    let bad =
        |what: &str| Error::corruption(&file, offset, format!("range-deletion block: {what}"));
    let mut frags: Vec<Fragment> = Vec::new();
    let mut it = BlockIterator::new(block);
    it.seek_to_first();
    while it.valid() {
        let p = parse_internal_key(it.key()).ok_or_else(|| bad("malformed key"))?;
        if p.kind != ValueKind::RangeDeletion {
            return Err(bad("entry of another kind"));
        }
        let end = it.value();
        if p.user_key >= end {
            return Err(bad("empty or reversed range"));
        }
        match frags.last_mut() {
            Some(last) if last.start.as_slice() == p.user_key => {
                if last.end.as_slice() != end {
                    return Err(bad("one start with two ends"));
                }
                if last.seqs.last().is_some_and(|&s| s <= p.seq) {
                    return Err(bad("sequence numbers not descending"));
                }
                last.seqs.push(p.seq);
            }
            Some(last) if last.end.as_slice() > p.user_key => {
                return Err(bad("fragments overlap or are out of order"));
            }
            _ => frags.push(Fragment {
                start: p.user_key.to_vec(),
                end: end.to_vec(),
                seqs: vec![p.seq],
            }),
        }
        it.next();
    }
    it.status()?;
    Ok(Fragments::from_sorted(frags))
}

#[cfg(test)]
mod tests {
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
}
