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
mod tests;
