//! The bottom vocabulary of the engine: sequence numbers, value kinds,
//! internal keys and their ordering, and striped counters; and the
//! machinery that declares options (`declare`: `declare_options!`, used by
//! `options` and `blob::options`). Depends on nothing above
//! `error`/`codec`.

pub(crate) mod declare;
pub(crate) mod expiry;
mod internal_key;
mod kind;
mod prefix;
pub(crate) mod snapshots;
mod striped;

pub(crate) use internal_key::{
    compare_internal, extract_user_key, make_internal_key, pack_trailer, parse_internal_key,
    unpack_trailer, TRAILER_LEN,
};
pub(crate) use kind::ValueKind;
pub use prefix::PrefixExtractor;
pub(crate) use striped::{Counter, Striped};

/// A sequence number: 56 bits, packed with the kind into an 8-byte trailer.
pub type SeqNo = u64;

/// The largest valid sequence number.
pub const MAX_SEQNO: SeqNo = (1 << 56) - 1;

/// Kind byte used in lookup keys: greater than every stored kind, so that a
/// lookup key `(k, s, KIND_FOR_SEEK)` sorts before every entry of `k` with
/// sequence number ≤ `s`.
pub(crate) const KIND_FOR_SEEK: u8 = 0xff;

/// Number of a file in the DB directory (`000123.sst`, `000124.log`, ...).
pub type FileNum = u64;
