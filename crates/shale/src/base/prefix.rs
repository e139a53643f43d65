//! [`PrefixExtractor`]: how a column family maps a user key to its prefix,
//! for prefix bloom filters and prefix-bounded iteration (RocksDB's
//! `SliceTransform`: `NewFixedPrefixTransform`, `NewCappedPrefixTransform`).
//!
//! - `Fixed(n)` (`rocksdb.FixedPrefix.<n>`): the first `n` bytes; a key
//!   shorter than `n` is *out of domain*: it has no prefix, is never added
//!   to a prefix filter and a seek to it never uses one.
//! - `Capped(n)` (`rocksdb.CappedPrefix.<n>`): the first `min(n, len)`
//!   bytes; every key is in domain.
//!
//! Invariant (both kinds): the keys that share a prefix form one contiguous
//! run in bytewise order, so a prefix-bounded scan may stop at the first key
//! whose prefix differs, and a source whose filter rules a prefix out holds
//! nothing a prefix-bounded scan of it could return.
//!
//! The name is stored in SST properties and in the family's options text:
//! FROZEN (RocksDB's spelling), parse and name are inverses.
//!
//! Thread-safety: plain `Copy` data.

/// A prefix extractor. See the module comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixExtractor {
    /// The first `n` bytes; keys shorter than `n` are out of domain.
    Fixed(usize),
    /// The first `min(n, key length)` bytes.
    Capped(usize),
}

const FIXED: &str = "rocksdb.FixedPrefix.";
const CAPPED: &str = "rocksdb.CappedPrefix.";

impl PrefixExtractor {
    /// RocksDB's name: `rocksdb.FixedPrefix.8`, `rocksdb.CappedPrefix.8`.
    pub fn name(&self) -> String {
        match self {
            PrefixExtractor::Fixed(n) => format!("{FIXED}{n}"),
            PrefixExtractor::Capped(n) => format!("{CAPPED}{n}"),
        }
    }

    /// Parses [`name`](Self::name) output; `None` for anything else (an
    /// unknown or damaged name).
    pub fn parse(name: &str) -> Option<PrefixExtractor> {
        let num = |s: &str| -> Option<usize> {
            // Canonical decimal only: "08" or "+8" are not names we write.
            if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            if s.len() > 1 && s.starts_with('0') {
                return None;
            }
            s.parse().ok()
        };
        if let Some(n) = name.strip_prefix(FIXED) {
            num(n).map(PrefixExtractor::Fixed)
        } else if let Some(n) = name.strip_prefix(CAPPED) {
            num(n).map(PrefixExtractor::Capped)
        } else {
            None
        }
    }

    /// The prefix length `n`.
    pub fn len(&self) -> usize {
        match *self {
            PrefixExtractor::Fixed(n) | PrefixExtractor::Capped(n) => n,
        }
    }

    /// True for a zero-length prefix (rejected by option validation).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `key` has a prefix.
    #[inline]
    pub fn in_domain(&self, key: &[u8]) -> bool {
        match *self {
            PrefixExtractor::Fixed(n) => key.len() >= n,
            PrefixExtractor::Capped(_) => true,
        }
    }

    /// The prefix of `key`, `None` when it is out of domain.
    #[inline]
    pub fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            PrefixExtractor::Fixed(n) => key.get(..n),
            PrefixExtractor::Capped(n) => Some(&key[..n.min(key.len())]),
        }
    }
}

#[cfg(test)]
mod tests;
