//! Replaying a log under one of RocksDB's four [`WalRecoveryMode`]s: the one
//! policy deciding which damage is fatal, which is skipped and where replay
//! stops. Used by DB recovery (WALs) and by MANIFEST reading.
//!
//! | mode | torn tail, last log | torn tail, older log | corrupt record |
//! |---|---|---|---|
//! | `TolerateCorruptedTailRecords` | dropped, reported | error | error |
//! | `AbsoluteConsistency` | error | error | error |
//! | `PointInTime` | stop (reported) | stop (reported) | stop (reported) |
//! | `SkipAnyCorruptedRecords` | skip, reported | skip, reported | skip, reported |
//!
//! "stop" sets [`ReplayReport::stopped_early`]: the caller must then not
//! replay later logs, or the recovered state would have a hole. A record the
//! callback rejects with `Corruption` (say, a batch that does not decode) is
//! handled exactly like a corrupt record at its offset; any other callback
//! error is returned as is. Errors name the file and the offset of the damage.
//!
//! Thread safety: a plain function over a borrowed reader.

use super::reader::{LogReader, ReadOutcome};
use crate::error::{Error, Result};

/// What WAL recovery does with a damaged or incomplete log (RocksDB's
/// `WALRecoveryMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalRecoveryMode {
    /// Accept a torn last record only; any other damage fails open.
    TolerateCorruptedTailRecords,
    /// Any damage, even a torn tail, fails open.
    AbsoluteConsistency,
    /// Stop replay at the first damage and open at that consistent prefix;
    /// later WALs are not replayed. The default.
    PointInTime,
    /// Skip damaged records and go on (salvage; may leave holes).
    SkipAnyCorruptedRecords,
}

/// A stretch of a log that replay skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DroppedRange {
    /// File offset of the first byte skipped.
    pub offset: u64,
    /// Why (torn tail, checksum mismatch, bad batch, ...).
    pub what: String,
    /// Number of bytes skipped.
    pub bytes: u64,
}

/// What [`replay`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ReplayReport {
    /// Records handed to the callback and accepted by it.
    pub records: u64,
    /// Replay stopped at damage (`PointInTime`): later logs must not be
    /// replayed.
    pub stopped_early: bool,
    /// Everything skipped, in file order.
    pub dropped: Vec<DroppedRange>,
    /// File offset just past the last record read whole (`LogReader::valid_end`).
    pub valid_end: u64,
}

/// Damage found while replaying, before the mode decides about it.
enum Damage {
    Torn,
    Corrupt,
}

/// Reads every record of `reader` and hands `(payload, offset)` to
/// `on_record`, applying `mode` to damage (see the module comment).
/// `is_last_log` tells whether this is the newest log being replayed (the
/// only one whose tail may legitimately be torn).
pub(crate) fn replay(
    reader: &mut LogReader,
    mode: WalRecoveryMode,
    is_last_log: bool,
    mut on_record: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<ReplayReport> {
    let mut report = ReplayReport::default();
    let mut buf = Vec::new();
    loop {
        let (damage, offset, what, bytes) = match reader.read_record(&mut buf)? {
            ReadOutcome::Eof => {
                report.valid_end = reader.valid_end();
                return Ok(report);
            }
            ReadOutcome::Record { offset } => match on_record(&buf, offset) {
                Ok(()) => {
                    report.records += 1;
                    continue;
                }
                Err(Error::Corruption {
                    file,
                    offset: inner,
                    what,
                }) => {
                    let what = if file == reader.file_name() {
                        what
                    } else {
                        format!("{file}: {what} (at offset {inner})")
                    };
                    let bytes = reader.consumed().saturating_sub(offset);
                    (Damage::Corrupt, offset, what, bytes)
                }
                Err(e) => return Err(e),
            },
            ReadOutcome::TornTail { offset } => {
                let bytes = reader.consumed().saturating_sub(offset);
                let what = "torn record at the end of the log".to_string();
                (Damage::Torn, offset, what, bytes)
            }
            ReadOutcome::Corrupt {
                offset,
                what,
                dropped_bytes,
            } => (Damage::Corrupt, offset, what, dropped_bytes),
        };
        let fatal = match (mode, &damage) {
            (WalRecoveryMode::TolerateCorruptedTailRecords, Damage::Torn) => !is_last_log,
            (WalRecoveryMode::TolerateCorruptedTailRecords, Damage::Corrupt) => true,
            (WalRecoveryMode::AbsoluteConsistency, _) => true,
            (WalRecoveryMode::PointInTime, _) => false,
            (WalRecoveryMode::SkipAnyCorruptedRecords, _) => false,
        };
        if fatal {
            let what = match (damage, is_last_log) {
                (Damage::Torn, false) => format!("{what} (not the last log; {mode:?})"),
                _ => format!("{what} ({mode:?})"),
            };
            return Err(Error::corruption(reader.file_name(), offset, what));
        }
        report.dropped.push(DroppedRange {
            offset,
            what,
            bytes,
        });
        if mode == WalRecoveryMode::PointInTime {
            report.stopped_early = true;
            report.valid_end = reader.valid_end();
            return Ok(report);
        }
    }
}

#[cfg(test)]
mod tests;
