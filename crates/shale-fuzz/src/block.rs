//! The `block` check: an SST block (data, index, metaindex or properties;
//! uncompressed, as after decompression) iterated forwards, backwards and
//! by seeks, against a reference decoder of the block format
//! (docs/format/sst.md). Decompression is reached through `table`.
//!
//! Invariants checked for any input that `Block::new` accepts:
//! - the forward walk yields exactly the reference decoder's entries, and
//!   ends in an error iff the reference decoder failed, an error that is
//!   `Corruption` naming [`SST_FILE`];
//! - when every restart point is an entry boundary whose entry shares no
//!   key prefix, the backward walk succeeds and is the forward walk
//!   reversed;
//! - when moreover the keys strictly increase, `seek` and `seek_for_prev`
//!   find every key;
//! - every walk terminates.
//!
//! Thread-safety: plain functions.

use shale::testing::{compare_internal_keys, Block};
use shale::Result;

use crate::codec::{decode_fixed32, get_varint32};
use crate::{is_corruption_in, SST_FILE};

/// Iterates `data` as a block forwards, backwards and by seeks, against a
/// reference decoder. Returns the number of entries.
pub fn block(data: &[u8]) -> Result<usize> {
    check_block(data.to_vec())
}

/// One entry as the reference decoder sees it.
struct RefEntry {
    offset: usize,
    shared: usize,
    key: Vec<u8>,
    value: Vec<u8>,
}

/// A straightforward decoder of the block format, independent of the
/// engine's `BlockIterator`: the entries of the entry area in order, and
/// whether decoding failed before its end.
fn reference_entries(data: &[u8], restarts_offset: usize) -> (Vec<RefEntry>, bool) {
    let mut out: Vec<RefEntry> = Vec::new();
    let mut p = 0usize;
    let mut key: Vec<u8> = Vec::new();
    while p < restarts_offset {
        let Some(mut s) = data.get(p..restarts_offset) else {
            return (out, true);
        };
        let before = s.len();
        let (Some(shared), Some(unshared), Some(vlen)) = (
            get_varint32(&mut s),
            get_varint32(&mut s),
            get_varint32(&mut s),
        ) else {
            return (out, true);
        };
        let (shared, unshared, vlen) = (shared as usize, unshared as usize, vlen as usize);
        let ks = p + (before - s.len());
        let (Some(ke), Some(ve)) = (
            ks.checked_add(unshared),
            ks.checked_add(unshared).and_then(|k| k.checked_add(vlen)),
        ) else {
            return (out, true);
        };
        if shared > key.len() || ve > restarts_offset {
            return (out, true);
        }
        key.truncate(shared);
        key.extend_from_slice(data.get(ks..ke).unwrap_or_default());
        out.push(RefEntry {
            offset: p,
            shared,
            key: key.clone(),
            value: data.get(ke..ve).unwrap_or_default().to_vec(),
        });
        p = ve;
    }
    (out, false)
}

fn check_block(data: Vec<u8>) -> Result<usize> {
    let copy = data.clone();
    let block = Block::new(data, SST_FILE, 0)?;
    // Block::new accepted it: the restart array is well formed.
    let len = copy.len();
    let n = copy
        .get(len - 4..)
        .and_then(decode_fixed32)
        .unwrap_or_default() as usize;
    let restarts_offset = len - 4 - 4 * n;
    let restarts: Vec<usize> = (0..n)
        .map(|i| {
            copy.get(restarts_offset + 4 * i..)
                .and_then(decode_fixed32)
                .unwrap_or_default() as usize
        })
        .collect();
    let (reference, ref_failed) = reference_entries(&copy, restarts_offset);

    // Forward: exactly the reference entries, then an error iff it failed.
    let mut it = block.iter();
    it.seek_to_first();
    let mut fwd: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    while it.valid() {
        assert!(fwd.len() <= len, "block iterator does not terminate");
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(fwd.len(), reference.len(), "forward walk vs reference");
    for (a, r) in fwd.iter().zip(&reference) {
        assert!(a.0 == r.key && a.1 == r.value, "entry at {}", r.offset);
    }
    let status = it.status();
    assert_eq!(status.is_err(), ref_failed, "forward status {status:?}");
    if let Err(e) = status {
        assert!(is_corruption_in(&e, SST_FILE), "block error {e:?}");
        return Err(e);
    }

    // Backward: the same entries reversed, when every restart point is an
    // entry boundary whose entry shares nothing.
    let aligned = restarts
        .iter()
        .all(|&r| reference.iter().any(|e| e.offset == r && e.shared == 0));
    let mut bwd = Vec::new();
    it.seek_to_last();
    while it.valid() {
        assert!(
            bwd.len() <= len,
            "reverse block iteration does not terminate"
        );
        bwd.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    if aligned {
        assert!(
            it.status().is_ok(),
            "reverse walk failed: {:?}",
            it.status()
        );
        bwd.reverse();
        assert!(bwd == fwd, "reverse walk differs from forward walk");
    }

    // Seeks: with strictly increasing keys every key is found.
    let sorted = fwd
        .windows(2)
        .all(|w| compare_internal_keys(&w[0].0, &w[1].0).is_lt());
    for (i, (k, v)) in fwd.iter().enumerate() {
        it.seek(k);
        if aligned && sorted {
            assert!(
                it.valid() && it.key() == &k[..] && it.value() == &v[..],
                "seek #{i}"
            );
            it.seek_for_prev(k);
            assert!(it.valid() && it.key() == &k[..], "seek_for_prev #{i}");
        } else {
            it.seek_for_prev(k);
        }
        if it.valid() {
            it.prev();
        }
    }
    Ok(fwd.len())
}
