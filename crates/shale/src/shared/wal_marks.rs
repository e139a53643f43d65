//! Point-in-time restore's records in the WAL (WAL archiving only:
//! `Options::wal_ttl_seconds` / `wal_size_limit_mb`; docs/format/wal.md,
//! "Point-in-time records"): a time record with the first write group of
//! each WAL and then at most once a second, and a record for sequence
//! numbers no WAL holds (a write group made with `disable_wal`, an
//! ingestion) and for a column family created or dropped.
//!
//! Invariant: called under the WAL lock (`WalFiles::current`), before the
//! group's own records, so each record sits where its sequence numbers
//! would: every record before it has smaller ones, every one after larger.

use crate::base::SeqNo;
use crate::error::Result;
use crate::shared::wal_files::WalState;
use crate::shared::DbInner;

/// Time between two time records of one WAL (the accuracy of
/// `BackupEngine::restore_to_time` while writes go on).
const TIME_MARK_EVERY_MICROS: u64 = 1_000_000;

/// How the sequence numbers a `mark_wal` call announces are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logged {
    /// Their records follow in this WAL.
    Yes,
    /// In no WAL (`disable_wal`): an unlogged-writes record.
    No,
    /// By an ingestion, into the MANIFEST: an ingestion record.
    Ingested,
    /// None: family `0` was created or dropped after `first - 1`.
    Family(u32),
}

/// With WAL archiving, before group `first..=last` is appended: a time
/// record when the WAL has none yet or its last is a second old, and an
/// unlogged-writes or ingestion record when the group is not logged.
pub(crate) fn mark_wal(
    db: &DbInner,
    wal: &mut WalState,
    first: SeqNo,
    last: SeqNo,
    logged: Logged,
) -> Result<()> {
    use crate::wal::{SeqTime, FAMILY_TYPE, INGESTED_TYPE, TIME_TYPE, UNLOGGED_TYPE};
    let Some(w) = wal.writer.as_mut() else {
        return Err(crate::error::Error::ShutdownInProgress);
    };
    let now = db.opts.clock.now_micros();
    if wal.last_time_mark == 0 || now >= wal.last_time_mark + TIME_MARK_EVERY_MICROS {
        let mark = SeqTime {
            first: first - 1,
            second: now,
        };
        w.add_metadata(TIME_TYPE, &mark.encode())?;
        wal.last_time_mark = now.max(1);
    }
    let (typ, payload) = match logged {
        Logged::Yes => return Ok(()),
        Logged::No => (
            UNLOGGED_TYPE,
            SeqTime {
                first,
                second: last,
            },
        ),
        Logged::Ingested => (
            INGESTED_TYPE,
            SeqTime {
                first,
                second: last,
            },
        ),
        Logged::Family(id) => (
            FAMILY_TYPE,
            SeqTime {
                first: first - 1,
                second: u64::from(id),
            },
        ),
    };
    w.add_metadata(typ, &payload.encode())
}

/// With WAL archiving, after column family `id` was created or dropped
/// (its MANIFEST edit logged; the caller holds the DB mutex): the
/// family-change record, after every write allocated so far.
pub(crate) fn mark_family_change(db: &DbInner, id: u32) -> Result<()> {
    if !db.opts.archives_wals() {
        return Ok(());
    }
    let mut wal = db.wals.current.lock();
    let next = wal.last_allocated + 1;
    mark_wal(db, &mut wal, next, next, Logged::Family(id))
}
