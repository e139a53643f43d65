//! Merge operators: read-modify-write without the read.
//!
//! `Db::merge(key, operand)` stores an operand (`ValueKind::Merge`) instead
//! of a value. Readers combine the operands of a key, oldest first, with the
//! newest value or tombstone below them through the column family's
//! [`MergeOperator`]; flush and compaction combine them where no snapshot
//! needs the intermediate states (`build/filter.rs`).
//!
//! Invariants: operands are never dropped unresolved. When a merge cannot
//! be resolved (no operator configured, or the operator fails), readers get
//! `Error::MergeFailed` and flush and compaction keep the operands as they
//! are, so configuring a working operator later reads them all.
//!
//! The operators shipped (`operators.rs`) are rebuilt from the name
//! persisted with a family's options, so a family opened with its persisted
//! options keeps them; a user-defined operator must be passed again.

mod operators;

use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

pub use operators::{MaxOperator, StringAppendOperator, UInt64AddOperator};

/// Combines a key's merge operands with its base value.
///
/// Operands are passed oldest first. Both methods must be deterministic:
/// reads, flushes and compactions may apply them to the same operands at
/// different times and must agree.
pub trait MergeOperator: Send + Sync {
    /// The operator's name, persisted with the family's options. The shipped
    /// operators are rebuilt from it at open; others must be supplied.
    fn name(&self) -> &str;

    /// The value of `key` after applying `operands` (oldest first) to
    /// `existing` (`None`: no value, or a tombstone). An `Err` fails the
    /// read (`Error::MergeFailed`) and leaves the operands stored.
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>>;

    /// One operand equivalent to `operands` (oldest first, at least two),
    /// for when the base value is not known yet; `None` keeps them apart.
    /// Default: `None`.
    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let _ = (key, operands);
        None
    }
}

impl fmt::Debug for dyn MergeOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MergeOperator({})", self.name())
    }
}

/// Operators compare by name: options are equal when they name the same
/// operator.
impl PartialEq for dyn MergeOperator {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

/// A shipped operator rebuilt from its persisted name, if it is one.
pub(crate) use operators::from_name;

/// Resolves a merge of `operands` (oldest first) over `existing`.
pub(crate) fn resolve(
    op: Option<&Arc<dyn MergeOperator>>,
    key: &[u8],
    existing: Option<&[u8]>,
    operands: &[&[u8]],
) -> Result<Vec<u8>> {
    let Some(op) = op else {
        return Err(Error::MergeFailed(format!(
            "key {} has merge operands but the column family has no merge operator",
            printable(key)
        )));
    };
    op.full_merge(key, existing, operands).map_err(|e| {
        Error::MergeFailed(format!(
            "operator {} on key {}: {e}",
            op.name(),
            printable(key)
        ))
    })
}

/// A key for an error message: text when it is, else hex.
pub(crate) fn printable(key: &[u8]) -> String {
    match std::str::from_utf8(key) {
        Ok(s) if s.chars().all(|c| !c.is_control()) => format!("{s:?}"),
        _ => key.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

#[cfg(test)]
mod tests;
