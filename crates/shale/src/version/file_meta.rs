//! `FileMeta`: what the MANIFEST records about one SST.
//!
//! Shared as `Arc<FileMeta>` between every `Version` that contains the file.
//! Immutable after construction except for `being_compacted`, an atomic flag
//! the compaction scheduler sets (under the DB mutex) while a job owns the
//! file, and `table`, the open reader, set once on first use (as RocksDB's
//! `FileDescriptor::table_reader`) so reads reach it without the table
//! cache's lock or a reference-count update — only when the table cache is
//! unbounded (`max_open_files = -1`); a bounded cache must be able to close
//! readers, so it never pins them here. Neither is persisted.
//!
//! Invariants (checked when decoded from the MANIFEST): `smallest` and
//! `largest` are internal keys (≥ 8 bytes) with `smallest ≤ largest` in
//! internal-key order, and `smallest_seq ≤ largest_seq`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::base::{extract_user_key, FileNum, SeqNo};
use crate::sst::Table;

/// Metadata of one SST file.
#[derive(Debug, Default)]
pub(crate) struct FileMeta {
    /// File number (`NNNNNN.sst`).
    pub number: FileNum,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// Largest internal key in the file.
    pub largest: Vec<u8>,
    /// Smallest sequence number of any entry.
    pub smallest_seq: SeqNo,
    /// Largest sequence number of any entry.
    pub largest_seq: SeqNo,
    /// Number of entries.
    pub num_entries: u64,
    /// Number of deletion entries.
    pub num_deletions: u64,
    /// Number of range tombstones (in the range-deletion block).
    pub num_range_deletions: u64,
    /// Expiring values among the entries, and the latest expiry among them
    /// (Unix seconds; 0: none): past it, all of them are gone.
    pub expiry_entries: u64,
    pub expiry_max: u64,
    /// An upper bound of the write time of the table's newest entry (Unix
    /// seconds by the DB's clock; 0: unknown, as in tables written by
    /// older builds): the flush's time, or the newest of a compaction's
    /// inputs. FIFO compaction's `ttl_secs` drops a table once this is
    /// older than the TTL; an unknown time is never dropped by age.
    pub newest_key_time: u64,
    /// The smallest blob file number among the table's blob references
    /// (0: none). Forced blob garbage collection compacts the tables that
    /// reference the oldest blob files.
    pub oldest_blob_file: FileNum,
    /// Compression type of the data blocks (the `Compression` tag byte).
    pub compression: u8,
    /// For a table ingested from an external file that needed one: the
    /// sequence number every entry reads as (stored ones are 0). Persisted
    /// (sub-field `GLOBAL_SEQNO`); `None` for every other table.
    pub global_seqno: Option<SeqNo>,
    /// Set while a compaction job has this file as an input. Not persisted.
    pub being_compacted: AtomicBool,
    /// The open reader, once a read has opened it through an unbounded
    /// table cache (see `table_cache`). Not persisted.
    pub table: OnceLock<Arc<Table>>,
    /// The user keys its range tombstones span (first start, last end),
    /// an estimate's input (`version::sizing::compensated_size`).
    /// Persisted (sub-field `RANGE_DEL_SPAN`); unknown for tables listed by
    /// a MANIFEST written before it was, whose whole key range stands in.
    pub range_del_span: OnceLock<(Vec<u8>, Vec<u8>)>,
    /// For a table imported from another family's export
    /// (`Db::create_column_family_with_import`): the number it was written
    /// as, which its properties record (0: its own number). Persisted
    /// (sub-field `WRITTEN_AS`).
    pub written_as: FileNum,
}

impl FileMeta {
    /// Metadata of a newly written file (compression 0 = none; set
    /// `compression` afterwards when the blocks are compressed).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        number: FileNum,
        file_size: u64,
        smallest: Vec<u8>,
        largest: Vec<u8>,
        smallest_seq: SeqNo,
        largest_seq: SeqNo,
        num_entries: u64,
        num_deletions: u64,
    ) -> FileMeta {
        debug_assert!(smallest_seq <= largest_seq);
        FileMeta {
            number,
            file_size,
            smallest,
            largest,
            smallest_seq,
            largest_seq,
            num_entries,
            num_deletions,
            ..Default::default()
        }
    }

    /// A copy of the persisted fields, not being compacted (for an edit that
    /// moves this file to another level).
    pub(crate) fn clone_meta(&self) -> FileMeta {
        self.clone()
    }

    /// The user key of `smallest`.
    #[inline]
    pub(crate) fn smallest_user_key(&self) -> &[u8] {
        extract_user_key(&self.smallest)
    }

    /// The user key of `largest`.
    #[inline]
    pub(crate) fn largest_user_key(&self) -> &[u8] {
        extract_user_key(&self.largest)
    }

    /// True when `largest` is a range tombstone's exclusive end (the
    /// sentinel `(end, MAX_SEQNO, RangeDeletion)`): the file holds nothing
    /// at that user key.
    #[inline]
    pub(crate) fn largest_is_range_end(&self) -> bool {
        let n = self.largest.len();
        n >= crate::base::TRAILER_LEN
            && self.largest[n - crate::base::TRAILER_LEN..]
                == crate::base::pack_trailer(
                    crate::base::MAX_SEQNO,
                    crate::base::ValueKind::RangeDeletion as u8,
                )
                .to_le_bytes()
    }

    /// True when every entry is an expiring value and all expired by `now`
    /// (and no range tombstone: those do not expire).
    pub(crate) fn wholly_expired(&self, now: u64) -> bool {
        self.expiry_entries > 0
            && self.expiry_entries == self.num_entries
            && self.num_range_deletions == 0
            && self.expiry_max <= now
    }

    /// True when over half the entries are expiring values, all expired by
    /// `now`.
    pub(crate) fn mostly_expired(&self, now: u64) -> bool {
        self.expiry_entries > 0
            && self.expiry_entries * 2 > self.num_entries
            && self.expiry_max <= now
    }

    /// True while a compaction owns this file.
    #[inline]
    pub(crate) fn is_being_compacted(&self) -> bool {
        self.being_compacted.load(Ordering::Acquire)
    }

    /// Marks or clears the file as a compaction input.
    #[inline]
    pub(crate) fn set_being_compacted(&self, v: bool) {
        self.being_compacted.store(v, Ordering::Release);
    }

    /// True when the user-key range `[smallest_user_key, largest_user_key]`
    /// of this file intersects `[lo, hi]` (`None` = unbounded).
    #[inline]
    pub(crate) fn overlaps_user_range(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> bool {
        let after_hi = hi.is_some_and(|hi| self.smallest_user_key() > hi);
        let before_lo = lo.is_some_and(|lo| self.largest_user_key() < lo);
        !after_hi && !before_lo
    }
}

/// Cloning copies the persisted fields; the clone is *not* being compacted
/// (the flag belongs to one shared `Arc<FileMeta>`, e.g. a trivially moved
/// file gets a fresh flag at its new level).
impl Clone for FileMeta {
    fn clone(&self) -> Self {
        FileMeta {
            number: self.number,
            file_size: self.file_size,
            smallest: self.smallest.clone(),
            largest: self.largest.clone(),
            smallest_seq: self.smallest_seq,
            largest_seq: self.largest_seq,
            num_entries: self.num_entries,
            num_deletions: self.num_deletions,
            num_range_deletions: self.num_range_deletions,
            expiry_entries: self.expiry_entries,
            expiry_max: self.expiry_max,
            newest_key_time: self.newest_key_time,
            oldest_blob_file: self.oldest_blob_file,
            compression: self.compression,
            global_seqno: self.global_seqno,
            being_compacted: AtomicBool::new(false),
            table: self.table.clone(),
            range_del_span: self.range_del_span.clone(),
            written_as: self.written_as,
        }
    }
}

/// Equality of the persisted fields (ignores `being_compacted`).
impl PartialEq for FileMeta {
    fn eq(&self, o: &Self) -> bool {
        self.number == o.number
            && self.file_size == o.file_size
            && self.smallest == o.smallest
            && self.largest == o.largest
            && self.smallest_seq == o.smallest_seq
            && self.largest_seq == o.largest_seq
            && self.num_entries == o.num_entries
            && self.num_deletions == o.num_deletions
            && self.num_range_deletions == o.num_range_deletions
            && self.expiry_entries == o.expiry_entries
            && self.expiry_max == o.expiry_max
            && self.newest_key_time == o.newest_key_time
            && self.oldest_blob_file == o.oldest_blob_file
            && self.compression == o.compression
            && self.global_seqno == o.global_seqno
            && self.range_del_span.get() == o.range_del_span.get()
            && self.written_as == o.written_as
    }
}

impl Eq for FileMeta {}

/// What a version knows of one blob file of its family: its size and
/// blob counts from its addition, and the garbage found in it since
/// (edits add to it). Blob files live at no level; tables point into them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BlobFileMeta {
    pub number: FileNum,
    pub file_size: u64,
    /// Blobs written, and their whole records' bytes.
    pub count: u64,
    pub bytes: u64,
    /// Of those, blobs no table references any more.
    pub garbage_count: u64,
    pub garbage_bytes: u64,
}

impl BlobFileMeta {
    /// Blob bytes some table still references.
    pub(crate) fn live_bytes(&self) -> u64 {
        self.bytes.saturating_sub(self.garbage_bytes)
    }

    /// True once every blob is garbage: the file leaves the version.
    pub(crate) fn is_all_garbage(&self) -> bool {
        self.garbage_count >= self.count
    }
}

#[cfg(test)]
mod tests;
