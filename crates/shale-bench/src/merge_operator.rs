//! `--merge_operator`: the names db_bench accepts (RocksDB 7.8.3's
//! `MergeOperator::CreateFromString`, utilities/merge_operators.cc: each
//! operator's nickname or class name) and the operators' semantics on plain
//! bytes, for engines that take a merge operator as a callback.
//!
//! The `rocksdb` crate exposes none of RocksDB's native operators, only
//! Rust callbacks (`Options::set_merge_operator_associative`):
//! engine/rocksdb.rs passes [`MergeOp::merge`]. Shale ships uint64add, max
//! and stringappend itself; engine/shale.rs adds `put`. The semantics below
//! are RocksDB's (utilities/merge_operators/*.cc, 7.8.3):
//!
//! * `put`: the newest operand (`PutOperatorV2`; `put_v1` is the same
//!   result through the deprecated API);
//! * `uint64add`: the wrapping sum of 8-byte little-endian integers; a
//!   value or operand of another length counts as 0 (RocksDB logs it and
//!   goes on);
//! * `max`: the bytewise largest of the value and the operands;
//! * `stringappend`: the value and the operands joined by `,`; a missing
//!   value starts with the first operand.
//!
//! All four are associative, so one function serves full merges (existing
//! value, then the operands oldest first) and partial merges (operands
//! only, `existing` = None). Plain data; thread-safe.

use crate::error::{bail, Result};

/// The operators `--merge_operator` accepts, by db_bench nickname.
pub const SUPPORTED: &str = "put, uint64add, max, stringappend";

/// RocksDB's `StringAppendOperator` delimiter as db_bench builds it.
pub const STRING_APPEND_DELIMITER: u8 = b',';

/// A merge operator db_bench can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeOp {
    /// `put`: keeps the newest operand.
    Put,
    /// `uint64add`: adds 8-byte little-endian counters.
    UInt64Add,
    /// `max`: keeps the bytewise largest.
    Max,
    /// `stringappend`: appends with a `,` between.
    StringAppend,
}

impl MergeOp {
    /// Parses `--merge_operator` (`""` = none, db_bench's default).
    pub fn parse(name: &str) -> Result<Option<MergeOp>> {
        Ok(Some(match name {
            "" => return Ok(None),
            "put" | "PutOperator" | "put_v1" => MergeOp::Put,
            "uint64add" | "UInt64AddOperator" => MergeOp::UInt64Add,
            "max" | "MaxOperator" => MergeOp::Max,
            "stringappend" | "StringAppendOperator" => MergeOp::StringAppend,
            "stringappendtest" | "StringAppendTESTOperator" | "bytesxor" | "BytesXOR"
            | "sortlist" | "MergeSortOperator" => bail!(
                "--merge_operator={name} is a db_bench test operator shale-bench does not \
                 implement (supported: {SUPPORTED})"
            ),
            other => bail!(
                "invalid merge operator '{other}' for --merge_operator: expected one of {SUPPORTED} \
                 (or RocksDB's class names PutOperator, UInt64AddOperator, MaxOperator, \
                 StringAppendOperator)"
            ),
        }))
    }

    /// db_bench's nickname (`--merge_operator` value).
    pub fn nick_name(self) -> &'static str {
        match self {
            MergeOp::Put => "put",
            MergeOp::UInt64Add => "uint64add",
            MergeOp::Max => "max",
            MergeOp::StringAppend => "stringappend",
        }
    }

    /// RocksDB's class name (`MergeOperator::Name()`), which the RocksDB
    /// adapter gives its callback so the OPTIONS file reads as db_bench's.
    pub fn class_name(self) -> &'static str {
        match self {
            MergeOp::Put => "PutOperator",
            MergeOp::UInt64Add => "UInt64AddOperator",
            MergeOp::Max => "MaxOperator",
            MergeOp::StringAppend => "StringAppendOperator",
        }
    }

    /// The result of applying `operands` (oldest first) to `existing`
    /// (None: no value, or a partial merge). Never fails, as RocksDB's
    /// operators never do.
    pub fn merge<'a>(
        self,
        existing: Option<&'a [u8]>,
        operands: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<u8> {
        match self {
            MergeOp::Put => operands
                .into_iter()
                .last()
                .or(existing)
                .unwrap_or_default()
                .to_vec(),
            MergeOp::UInt64Add => {
                let sum = operands
                    .into_iter()
                    .fold(existing.map_or(0, decode_u64), |s, o| {
                        s.wrapping_add(decode_u64(o))
                    });
                sum.to_le_bytes().to_vec()
            }
            MergeOp::Max => existing
                .into_iter()
                .chain(operands)
                .max()
                .unwrap_or_default()
                .to_vec(),
            MergeOp::StringAppend => {
                let mut out: Option<Vec<u8>> = existing.map(<[u8]>::to_vec);
                for o in operands {
                    match &mut out {
                        Some(v) => {
                            v.push(STRING_APPEND_DELIMITER);
                            v.extend_from_slice(o);
                        }
                        None => out = Some(o.to_vec()),
                    }
                }
                out.unwrap_or_default()
            }
        }
    }
}

/// RocksDB's `UInt64AddOperator::DecodeInteger`: 8 bytes little endian,
/// anything else 0.
fn decode_u64(b: &[u8]) -> u64 {
    <[u8; 8]>::try_from(b).map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(n: u64) -> Vec<u8> {
        n.to_le_bytes().to_vec()
    }

    #[test]
    fn parses_db_bench_names() {
        assert_eq!(MergeOp::parse("").unwrap(), None);
        for (name, op) in [
            ("put", MergeOp::Put),
            ("PutOperator", MergeOp::Put),
            ("put_v1", MergeOp::Put),
            ("uint64add", MergeOp::UInt64Add),
            ("UInt64AddOperator", MergeOp::UInt64Add),
            ("max", MergeOp::Max),
            ("MaxOperator", MergeOp::Max),
            ("stringappend", MergeOp::StringAppend),
            ("StringAppendOperator", MergeOp::StringAppend),
        ] {
            assert_eq!(MergeOp::parse(name).unwrap(), Some(op), "{name}");
            assert_eq!(MergeOp::parse(op.nick_name()).unwrap(), Some(op));
            assert_eq!(MergeOp::parse(op.class_name()).unwrap(), Some(op));
        }
        let e = MergeOp::parse("nope").unwrap_err();
        assert!(e.0.contains("'nope'") && e.0.contains(SUPPORTED), "{e}");
        let e = MergeOp::parse("bytesxor").unwrap_err();
        assert!(e.0.contains("does not implement"), "{e}");
        // Case matters, as in RocksDB's registry.
        assert!(MergeOp::parse("UINT64ADD").is_err());
    }

    #[test]
    fn semantics_follow_rocksdb_operators() {
        let ops = |v: &[&'static [u8]]| v.to_vec();
        assert_eq!(MergeOp::Put.merge(Some(b"old"), ops(&[b"a", b"b"])), b"b");
        assert_eq!(MergeOp::Put.merge(None, ops(&[b"a"])), b"a");
        let (one, two, max) = (le(1), le(2), le(u64::MAX));
        let v = MergeOp::UInt64Add.merge(Some(&le(5)), [&two[..], &max[..]]);
        assert_eq!(v, le(6)); // wraps
        assert_eq!(MergeOp::UInt64Add.merge(None, [&one[..], &two[..]]), le(3));
        // Other lengths count as 0, never fail.
        assert_eq!(
            MergeOp::UInt64Add.merge(Some(b"abc"), [&one[..], &b"x"[..]]),
            le(1)
        );
        assert_eq!(MergeOp::Max.merge(Some(b"b"), ops(&[b"a", b"c"])), b"c");
        assert_eq!(MergeOp::Max.merge(Some(b"z"), ops(&[b"a"])), b"z");
        assert_eq!(MergeOp::Max.merge(None, ops(&[b"ab", b"b"])), b"b");
        let sa = MergeOp::StringAppend;
        assert_eq!(sa.merge(Some(b"a"), ops(&[b"b", b"c"])), b"a,b,c");
        assert_eq!(sa.merge(None, ops(&[b"b", b"c"])), b"b,c");
        assert_eq!(sa.merge(Some(b""), ops(&[b"x"])), b",x");
    }

    /// Associativity: merging a partial merge equals merging the operands.
    #[test]
    fn partial_then_full_equals_full() {
        let operands: [&[u8]; 4] = [b"12345678", b"q", b"87654321", b"zz"];
        for op in [
            MergeOp::Put,
            MergeOp::UInt64Add,
            MergeOp::Max,
            MergeOp::StringAppend,
        ] {
            let base: &[u8] = b"abcdefgh";
            let full = op.merge(Some(base), operands);
            let left = op.merge(None, operands[..2].iter().copied());
            let right = op.merge(None, operands[2..].iter().copied());
            let two = op.merge(Some(base), [&left[..], &right[..]]);
            assert_eq!(two, full, "{op:?}");
        }
    }
}
