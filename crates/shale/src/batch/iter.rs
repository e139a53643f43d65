//! Decoding the records of a batch: [`BatchIter`] yields one [`BatchEntry`]
//! per record, borrowing key and value from the batch bytes.
//!
//! Thread safety: borrows the batch immutably. Never panics on bad bytes: an
//! unknown tag, a truncated record, a column-family id or length that does not
//! fit in 32 bits, or a record count that differs from the header's yields one
//! `Err(Corruption)` naming [`BATCH_ERROR_FILE`] and the byte offset inside
//! the batch, after which the iterator is finished.

use std::iter::FusedIterator;

use super::{tag, BATCH_ERROR_FILE, BATCH_HEADER_LEN};
use crate::base::ValueKind;
use crate::codec::{decode_fixed32, get_length_prefixed, get_varint32};
use crate::error::{Error, Result};

/// One decoded record of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BatchEntry<'a> {
    /// `Value`, `Deletion`, `Merge`, `SingleDeletion` or `RangeDeletion`
    /// (key = start, value = end).
    pub kind: ValueKind,
    /// Column family id (0 = default).
    pub cf: u32,
    /// The user key.
    pub key: &'a [u8],
    /// The value; empty for deletions.
    pub value: &'a [u8],
}

/// Iterator over the records of a batch (see the module comment).
pub(crate) struct BatchIter<'a> {
    /// Undecoded records.
    rest: &'a [u8],
    /// Offset of `rest` inside the batch.
    pos: usize,
    /// Count from the header.
    expected: u32,
    /// Records decoded so far.
    seen: u32,
    done: bool,
    /// The slice was shorter than a header: the first call reports it.
    short_header: bool,
}

impl<'a> BatchIter<'a> {
    /// Iterates over `rep` (header + records). A header shorter than
    /// [`BATCH_HEADER_LEN`] yields one error.
    pub(crate) fn new(rep: &'a [u8]) -> Self {
        BatchIter {
            rest: rep.get(BATCH_HEADER_LEN..).unwrap_or_default(),
            pos: BATCH_HEADER_LEN,
            expected: rep.get(8..).and_then(decode_fixed32).unwrap_or(0),
            seen: 0,
            done: false,
            short_header: rep.len() < BATCH_HEADER_LEN,
        }
    }

    /// Decodes the one record at byte `offset` of `rep` (an offset a
    /// batch handed out for a record it holds): its first `next` yields
    /// it, or the damage found there.
    pub(crate) fn at(rep: &'a [u8], offset: usize) -> Self {
        BatchIter {
            rest: rep.get(offset..).unwrap_or_default(),
            pos: offset,
            expected: u32::MAX,
            seen: 0,
            done: false,
            short_header: rep.len() < BATCH_HEADER_LEN,
        }
    }

    /// Byte offset (inside the batch) of the record the next `next`
    /// decodes.
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    fn fail(&mut self, offset: usize, what: String) -> Option<Result<BatchEntry<'a>>> {
        self.done = true;
        Some(Err(Error::corruption(
            BATCH_ERROR_FILE,
            offset as u64,
            what,
        )))
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.short_header {
            return self.fail(0, "batch shorter than its 12-byte header".into());
        }
        let rec_off = self.pos;
        let Some((&tag_byte, body)) = self.rest.split_first() else {
            self.done = true;
            if self.seen != self.expected {
                let what = format!("header count {} but {} records", self.expected, self.seen);
                return self.fail(rec_off, what);
            }
            return None;
        };
        if self.seen == self.expected {
            let what = format!("more records than the header count {}", self.expected);
            return self.fail(rec_off, what);
        }
        let (kind, has_cf) = match tag_byte {
            tag::VALUE => (ValueKind::Value, false),
            tag::DELETION => (ValueKind::Deletion, false),
            tag::CF_VALUE => (ValueKind::Value, true),
            tag::CF_DELETION => (ValueKind::Deletion, true),
            tag::MERGE => (ValueKind::Merge, false),
            tag::CF_MERGE => (ValueKind::Merge, true),
            tag::SINGLE_DELETION => (ValueKind::SingleDeletion, false),
            tag::CF_SINGLE_DELETION => (ValueKind::SingleDeletion, true),
            tag::RANGE_DELETION => (ValueKind::RangeDeletion, false),
            tag::CF_RANGE_DELETION => (ValueKind::RangeDeletion, true),
            tag::VALUE_WITH_EXPIRY => (ValueKind::ValueWithExpiry, false),
            tag::CF_VALUE_WITH_EXPIRY => (ValueKind::ValueWithExpiry, true),
            t => return self.fail(rec_off, format!("unknown record tag 0x{t:02x}")),
        };
        let mut cur = body;
        let cf = if has_cf {
            match get_varint32(&mut cur) {
                Some(cf) => cf,
                None => return self.fail(rec_off, "bad column family id".into()),
            }
        } else {
            0
        };
        let Some(key) = get_length_prefixed(&mut cur) else {
            return self.fail(rec_off, "truncated or bad key".into());
        };
        let value: &'a [u8] = if matches!(
            kind,
            ValueKind::Value
                | ValueKind::Merge
                | ValueKind::RangeDeletion
                | ValueKind::ValueWithExpiry
        ) {
            match get_length_prefixed(&mut cur) {
                Some(v) => v,
                None => return self.fail(rec_off, "truncated or bad value".into()),
            }
        } else {
            &[]
        };
        if kind == ValueKind::ValueWithExpiry && value.len() < crate::base::expiry::EXPIRY_LEN {
            return self.fail(rec_off, "expiring value shorter than its expiry".into());
        }
        self.pos += self.rest.len() - cur.len();
        self.rest = cur;
        self.seen += 1;
        Some(Ok(BatchEntry {
            kind,
            cf,
            key,
            value,
        }))
    }
}

impl FusedIterator for BatchIter<'_> {}

#[cfg(test)]
mod tests;
