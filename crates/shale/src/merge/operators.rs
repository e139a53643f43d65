//! The merge operators Shale ships: 64-bit counters, string append with a
//! delimiter, and maximum. Each has a persisted name it is rebuilt from.

use std::sync::Arc;

use super::MergeOperator;
use crate::error::{Error, Result};

/// Adds unsigned 64-bit integers stored as 8 bytes little endian (RocksDB's
/// `uint64add` encoding), wrapping on overflow. A value or operand of
/// another length is an error (RocksDB logs it and counts it as 0).
#[derive(Debug, Clone, Copy, Default)]
pub struct UInt64AddOperator;

fn decode_u64(what: &str, b: &[u8]) -> Result<u64> {
    let arr: [u8; 8] = b.try_into().map_err(|_| {
        Error::InvalidArgument(format!(
            "uint64add {what} of {} bytes (must be 8, little endian)",
            b.len()
        ))
    })?;
    Ok(u64::from_le_bytes(arr))
}

impl MergeOperator for UInt64AddOperator {
    fn name(&self) -> &str {
        "uint64add"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>> {
        let mut sum = match existing {
            Some(v) => decode_u64("value", v)?,
            None => 0,
        };
        for o in operands {
            sum = sum.wrapping_add(decode_u64("operand", o)?);
        }
        Ok(sum.to_le_bytes().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let mut sum = 0u64;
        for o in operands {
            // A bad operand stays as it is, for the read to report.
            sum = sum.wrapping_add(decode_u64("operand", o).ok()?);
        }
        Some(sum.to_le_bytes().to_vec())
    }
}

/// Appends each operand to the value with a delimiter between
/// (`a`, merge `b`, merge `c` reads `a,b,c` with `,`); a missing value
/// starts with the first operand.
#[derive(Debug, Clone)]
pub struct StringAppendOperator {
    delimiter: Vec<u8>,
    name: String,
}

impl StringAppendOperator {
    /// An operator joining with `delimiter` (may be empty).
    pub fn new(delimiter: &[u8]) -> Self {
        let hex: String = delimiter.iter().map(|b| format!("{b:02x}")).collect();
        StringAppendOperator {
            delimiter: delimiter.to_vec(),
            name: format!("stringappend:{hex}"),
        }
    }
}

impl MergeOperator for StringAppendOperator {
    fn name(&self) -> &str {
        &self.name
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>> {
        let mut out = existing.map(<[u8]>::to_vec);
        for o in operands {
            match &mut out {
                Some(v) => {
                    v.extend_from_slice(&self.delimiter);
                    v.extend_from_slice(o);
                }
                None => out = Some(o.to_vec()),
            }
        }
        Ok(out.unwrap_or_default())
    }

    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        self.full_merge(key, None, operands).ok()
    }
}

/// Keeps the bytewise largest of the value and the operands.
#[derive(Debug, Clone, Copy, Default)]
pub struct MaxOperator;

impl MergeOperator for MaxOperator {
    fn name(&self) -> &str {
        "max"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>> {
        let max = existing.into_iter().chain(operands.iter().copied()).max();
        Ok(max.unwrap_or_default().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.iter().max().map(|m| m.to_vec())
    }
}

pub(crate) fn from_name(name: &str) -> Option<Arc<dyn MergeOperator>> {
    match name {
        "uint64add" => Some(Arc::new(UInt64AddOperator)),
        "max" => Some(Arc::new(MaxOperator)),
        _ => {
            let hex = name.strip_prefix("stringappend:")?;
            if hex.len() % 2 != 0 {
                return None;
            }
            let delim: Option<Vec<u8>> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect();
            Some(Arc::new(StringAppendOperator::new(&delim?)))
        }
    }
}

#[cfg(test)]
mod tests;
