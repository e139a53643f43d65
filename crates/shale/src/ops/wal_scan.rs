//! Reading a WAL's records for backups and point-in-time restore: each
//! write batch's sequence numbers and file offset, and the time,
//! unlogged-writes, ingestion and family-change records between them
//! (docs/format/wal.md, "Point-in-time records"), in log order.
//!
//! Pure reading; a damaged record is `Corruption` naming the file and
//! offset, a torn tail ends the scan (a WAL copied while written ends at a
//! record boundary; one cut by a crash may not).

use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::{LogReader, Mark, ReadOutcome};

/// What one WAL holds, in log order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Item {
    /// A write batch with sequence numbers `first..=last`; its record
    /// starts at file offset `start`.
    Batch { first: u64, last: u64, start: u64 },
    /// A time or unlogged-writes record.
    Mark(Mark),
}

/// A scanned WAL.
pub(super) struct WalScan {
    pub(super) items: Vec<Item>,
    /// The predecessor-WAL record's (number, size), if any.
    pub(super) predecessor: Option<(u64, u64)>,
}

/// Reads every record of WAL `number` at `path`: a damaged record is
/// `Corruption` naming the file and offset; a torn tail ends the scan.
pub(super) fn scan_wal(fs: &dyn FileSystem, path: &Path, number: u64) -> Result<WalScan> {
    let name = path.display().to_string();
    let mut reader = LogReader::new(fs.open_sequential(path)?, name.clone(), number);
    reader.collect_marks();
    let mut items = Vec::new();
    let mut buf = Vec::new();
    loop {
        let outcome = reader.read_record(&mut buf)?;
        items.extend(reader.take_marks().into_iter().map(Item::Mark));
        match outcome {
            ReadOutcome::Record { offset } => {
                let (Some(seq), Some(count)) = (
                    buf.get(..8)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_le_bytes),
                    buf.get(8..12)
                        .and_then(|b| b.try_into().ok())
                        .map(u32::from_le_bytes),
                ) else {
                    return Err(Error::corruption(
                        name,
                        offset,
                        "WAL record shorter than a batch header",
                    ));
                };
                let last = (seq + u64::from(count)).saturating_sub(1).max(seq);
                items.push(Item::Batch {
                    first: seq,
                    last,
                    start: offset,
                });
            }
            ReadOutcome::Eof | ReadOutcome::TornTail { .. } => break,
            ReadOutcome::Corrupt { offset, what, .. } => {
                return Err(Error::corruption(name, offset, what));
            }
        }
    }
    Ok(WalScan {
        items,
        predecessor: reader.predecessor().map(|p| (p.log_number, p.size)),
    })
}

/// The largest sequence number in WAL `number` at `path` (0: none).
pub(super) fn last_sequence(fs: &dyn FileSystem, path: &Path, number: u64) -> Result<u64> {
    Ok(scan_wal(fs, path, number)?
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Batch { last, .. } => Some(*last),
            _ => None,
        })
        .max()
        .unwrap_or(0))
}
