//! Internal keys: `user_key ++ fixed64_le(seqno << 8 | kind)`.
//!
//! Ordering: user keys ascending (bytewise), then trailer descending, so the
//! newest version of a user key comes first. Every sorted structure (memtable,
//! SST blocks, index, version file ranges) uses [`compare_internal`].

use std::cmp::Ordering;

use super::{SeqNo, ValueKind, MAX_SEQNO};

/// Length of the (seqno, kind) trailer.
pub(crate) const TRAILER_LEN: usize = 8;

/// A decoded internal key borrowing the user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParsedInternalKey<'a> {
    pub user_key: &'a [u8],
    pub seq: SeqNo,
    pub kind: ValueKind,
}

#[inline]
pub(crate) fn pack_trailer(seq: SeqNo, kind: u8) -> u64 {
    debug_assert!(seq <= MAX_SEQNO);
    (seq << 8) | u64::from(kind)
}

#[inline]
pub(crate) fn unpack_trailer(t: u64) -> (SeqNo, u8) {
    (t >> 8, t as u8)
}

/// Appends the internal key for `(user_key, seq, kind)` to `dst`.
#[inline]
pub(crate) fn make_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SeqNo, kind: u8) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&pack_trailer(seq, kind).to_le_bytes());
}

/// The user-key part of an internal key. Requires `ikey.len() >= 8` (checked
/// by [`parse_internal_key`] for bytes from disk).
#[inline]
pub(crate) fn extract_user_key(ikey: &[u8]) -> &[u8] {
    debug_assert!(ikey.len() >= TRAILER_LEN);
    &ikey[..ikey.len().saturating_sub(TRAILER_LEN)]
}

#[inline]
fn trailer(ikey: &[u8]) -> u64 {
    let n = ikey.len();
    if n < TRAILER_LEN {
        return 0;
    }
    let mut b = [0u8; 8];
    b.copy_from_slice(&ikey[n - TRAILER_LEN..]);
    u64::from_le_bytes(b)
}

/// Decodes an internal key; `None` when it is too short or its kind is unknown.
#[inline]
pub(crate) fn parse_internal_key(ikey: &[u8]) -> Option<ParsedInternalKey<'_>> {
    if ikey.len() < TRAILER_LEN {
        return None;
    }
    let (seq, kind) = unpack_trailer(trailer(ikey));
    Some(ParsedInternalKey {
        user_key: &ikey[..ikey.len() - TRAILER_LEN],
        seq,
        kind: ValueKind::from_u8(kind)?,
    })
}

/// Total order on internal keys (see the module comment).
#[inline]
pub(crate) fn compare_internal(a: &[u8], b: &[u8]) -> Ordering {
    let ua = &a[..a.len().saturating_sub(TRAILER_LEN)];
    let ub = &b[..b.len().saturating_sub(TRAILER_LEN)];
    match compare_user_keys(ua, ub) {
        Ordering::Equal => trailer(b).cmp(&trailer(a)),
        o => o,
    }
}

/// Bytewise order of user keys, as `a.cmp(b)`. Keys of 8 bytes or more are
/// first told apart by their first 8 bytes read as one big-endian integer
/// (same order, one comparison instead of a `memcmp` call); most keys of a
/// memtable or block differ there.
#[inline]
pub(crate) fn compare_user_keys(a: &[u8], b: &[u8]) -> Ordering {
    if let (Some(pa), Some(pb)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        let (x, y) = (u64::from_be_bytes(*pa), u64::from_be_bytes(*pb));
        if x != y {
            return x.cmp(&y);
        }
        return a[8..].cmp(&b[8..]);
    }
    a.cmp(b)
}

#[cfg(test)]
mod tests;
