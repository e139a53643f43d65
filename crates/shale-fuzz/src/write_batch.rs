//! The `write_batch` check: a WAL record payload through
//! `WriteBatch::from_data`, its record iterator and `validate`.
//!
//! Invariants checked:
//! - `validate` succeeds iff every record decodes and the sequence numbers
//!   fit in 56 bits;
//! - iterator errors are `Corruption` naming the batch decoder's file,
//!   `validate` errors `Corruption` naming the log it was given;
//! - the header count equals the number of records;
//! - a valid batch re-encodes to the same records.
//!
//! Thread-safety: plain functions.

use shale::testing::{
    batch_count, batch_from_data, batch_push_record, batch_records, batch_sequence,
    batch_set_sequence, batch_validate, BATCH_ERROR_FILE, MAX_SEQNO,
};
use shale::{Result, WriteBatch};

use crate::{is_corruption_in, WAL_FILE};

/// Decodes a write batch (`from_data`, `iter`, `validate`); a valid batch
/// must re-encode to the same records. Returns the number of records.
pub fn write_batch(data: &[u8]) -> Result<usize> {
    let b = batch_from_data(data.to_vec())?;
    let mut records = Vec::new();
    let mut iter_err = None;
    for r in batch_records(&b) {
        match r {
            Ok(r) => records.push(r),
            Err(e) => {
                assert!(
                    is_corruption_in(&e, BATCH_ERROR_FILE),
                    "batch iterator error {e:?}"
                );
                iter_err = Some(e);
            }
        }
    }
    let v = batch_validate(&b, WAL_FILE, 123);
    // validate = every record decodes + sequence numbers fit in 56 bits.
    let seq_ok = matches!(
        batch_sequence(&b).checked_add(u64::from(batch_count(&b))),
        Some(end) if end <= MAX_SEQNO + 1
    );
    assert_eq!(v.is_ok(), iter_err.is_none() && seq_ok, "validate vs iter");
    if let Err(e) = v {
        assert!(is_corruption_in(&e, WAL_FILE), "validate error {e:?}");
        return Err(e);
    }
    assert_eq!(batch_count(&b) as usize, records.len(), "count vs records");
    let mut again = WriteBatch::new();
    batch_set_sequence(&mut again, batch_sequence(&b).min(MAX_SEQNO));
    // Every kind re-encoded as itself (a merge, a range deletion or a
    // single deletion is not a put or a delete: seed 22988856223325 decoded
    // a merge, which an earlier version of this check re-encoded as a
    // deletion).
    for r in &records {
        batch_push_record(&mut again, r);
    }
    let re: Vec<_> = batch_records(&again).collect::<Result<_>>()?;
    assert_eq!(re, records, "batch does not re-encode to the same records");
    Ok(records.len())
}
