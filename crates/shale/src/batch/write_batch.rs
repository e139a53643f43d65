//! [`WriteBatch`]: an ordered list of puts and deletes applied atomically,
//! kept directly in its on-disk form (the WAL payload) so that the write path
//! never re-encodes it.
//!
//! Thread safety: a plain owned value. Invariant: `rep.len() >=
//! BATCH_HEADER_LEN` and, for batches built through this API, the header
//! count equals the number of records (batches from disk are checked by
//! [`WriteBatch::validate`] or while iterating).

use std::fmt;

use super::iter::BatchIter;
use super::{tag, BATCH_ERROR_FILE, BATCH_HEADER_LEN};
use crate::base::{SeqNo, MAX_SEQNO};
use crate::codec::{decode_fixed32, decode_fixed64, put_length_prefixed, put_varint32};
use crate::error::{Error, Result};

/// A set of writes (puts and deletes) applied to the DB atomically, in order.
///
/// Later entries for the same key win: a batch with `put(k, a)` then
/// `delete(k)` leaves `k` deleted.
///
/// ```
/// use shale::WriteBatch;
///
/// let mut batch = WriteBatch::new();
/// batch.put(b"key", b"value");
/// batch.delete(b"old");
/// assert_eq!(batch.len(), 2);
/// // Then: db.write(&WriteOptions::default(), &batch)
/// ```
#[derive(Clone)]
pub struct WriteBatch {
    /// Header (sequence, count) followed by the records, exactly as logged.
    rep: Vec<u8>,
    /// Some record may name a column family other than the default (set by
    /// `put_cf` / `delete_cf`, and for every batch read from disk).
    other_families: bool,
    /// The DB instance of the family handles `put_cf` / `delete_cf` were
    /// given (checked by the write: a handle of another DB is refused).
    owner: Owner,
    /// Some record may be a merge operand (the write checks that its
    /// family has a merge operator) or a range deletion (the write checks
    /// its bounds).
    merges: bool,
    /// The first entry refused (a key or value over [`MAX_KEY_LEN`] /
    /// [`MAX_VALUE_LEN`], or one entry too many): not recorded, and the
    /// write of this batch fails with `InvalidArgument` saying so, before
    /// any of it applies.
    refused: Option<String>,
}

/// A point in a batch's history to roll back to (RocksDB's save point):
/// its size, entry count and refusal then.
#[derive(Clone, Debug)]
pub(crate) struct Mark {
    bytes: usize,
    count: u32,
    refused: Option<String>,
}

/// The longest key a batch takes: its length and the 8-byte trailer of the
/// internal key fit the 32-bit lengths of the formats.
pub const MAX_KEY_LEN: usize = u32::MAX as usize - 8;
/// The longest value a batch takes (room for the 8-byte expiry of a TTL
/// put in the 32-bit length).
pub const MAX_VALUE_LEN: usize = u32::MAX as usize - 8;

/// Which open DB the handles a batch was built with belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// No handle that names its DB (raw ids, or none at all).
    Any,
    /// Every handle belongs to this DB instance.
    One(u64),
    /// Handles of different DB instances.
    Mixed,
}

impl PartialEq for WriteBatch {
    fn eq(&self, other: &Self) -> bool {
        self.rep == other.rep
    }
}

impl Eq for WriteBatch {}

/// A column family as a batch names it: by id. Implemented by
/// [`Cf`](crate::Cf) (pass a `&Cf` to [`WriteBatch::put_cf`]) and by `u32`
/// (a raw id, for tools that copy batches; the write checks that the
/// family is live).
pub trait ColumnFamilyId {
    /// The family's id.
    fn column_family_id(&self) -> u32;

    /// The open DB the handle belongs to, if it names one (a raw id does
    /// not).
    #[doc(hidden)]
    fn db_instance(&self) -> Option<u64> {
        None
    }
}

impl ColumnFamilyId for u32 {
    fn column_family_id(&self) -> u32 {
        *self
    }
}

impl WriteBatch {
    /// Creates an empty batch.
    pub fn new() -> Self {
        WriteBatch {
            rep: vec![0; BATCH_HEADER_LEN],
            other_families: false,
            owner: Owner::Any,
            merges: false,
            refused: None,
        }
    }

    /// A batch with no buffer at all (not even a header), to leave behind
    /// when a batch is moved out of a slot: allocates nothing. Only to be
    /// dropped or overwritten.
    pub(crate) fn moved_out() -> Self {
        WriteBatch {
            rep: Vec::new(),
            other_families: false,
            owner: Owner::Any,
            merges: false,
            refused: None,
        }
    }

    /// Creates an empty batch whose buffer can hold `bytes` bytes (header
    /// included) before it grows.
    pub fn with_capacity(bytes: usize) -> Self {
        // A size no batch can hold (an oversize key or value, refused when
        // added) reserves nothing.
        let bytes = if bytes > u32::MAX as usize { 0 } else { bytes };
        let mut rep = Vec::with_capacity(bytes.max(BATCH_HEADER_LEN));
        rep.resize(BATCH_HEADER_LEN, 0);
        WriteBatch {
            rep,
            other_families: false,
            owner: Owner::Any,
            merges: false,
            refused: None,
        }
    }

    /// Adds a put of `key` → `value` (default column family).
    ///
    /// # Errors
    /// A `key` over [`MAX_KEY_LEN`] bytes, a `value` over [`MAX_VALUE_LEN`],
    /// or an entry beyond `u32::MAX` is not added, and writing the batch
    /// fails with `InvalidArgument` (nothing of it applies).
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.put_in(0, key, value);
    }

    /// Adds a deletion of `key` (default column family).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn delete(&mut self, key: &[u8]) {
        self.delete_in(0, key);
    }

    /// Adds a put of `key` → `value` in column family `cf` (a
    /// [`Cf`](crate::Cf) of the DB the batch is written to; a batch naming a
    /// dropped family fails as a whole with `InvalidArgument`).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn put_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8], value: &[u8]) {
        self.note_owner(cf.db_instance());
        self.put_in(cf.column_family_id(), key, value);
    }

    /// Adds a deletion of `key` in column family `cf` (see `put_cf`).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn delete_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8]) {
        self.note_owner(cf.db_instance());
        self.delete_in(cf.column_family_id(), key);
    }

    /// Adds a merge operand for `key` (default column family): reads
    /// combine it with the key's value through the family's merge operator.
    /// Writing it to a family without one fails with `InvalidArgument`.
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) {
        self.merges = true;
        self.record_in(0, tag::MERGE, key, Some(operand));
    }

    /// Adds a merge operand in column family `cf` (see `merge`, `put_cf`).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn merge_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8], operand: &[u8]) {
        self.note_owner(cf.db_instance());
        self.merges = true;
        self.record_in(cf.column_family_id(), tag::MERGE, key, Some(operand));
    }

    /// Adds a single deletion of `key` (default column family), RocksDB's
    /// `SingleDelete`: for a key written exactly once (one put, no merges)
    /// since it was last deleted. The tombstone and the value vanish
    /// together at the first compaction that sees both. Anything else is
    /// undefined (a compaction that meets a misuse counts it in the
    /// `shale.single-delete-mismatches` property).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn single_delete(&mut self, key: &[u8]) {
        self.record_in(0, tag::SINGLE_DELETION, key, None);
    }

    /// Adds a single deletion in column family `cf` (see `single_delete`).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn single_delete_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8]) {
        self.note_owner(cf.db_instance());
        self.record_in(cf.column_family_id(), tag::SINGLE_DELETION, key, None);
    }

    /// Adds a put of `key` → `value` that expires at `expires_at` (Unix
    /// seconds of the DB's clock, `Options::clock`): from then on the key
    /// reads as deleted, and compaction reclaims it. `Db::put_with_ttl`
    /// computes the time from a TTL.
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn put_with_expiry(&mut self, key: &[u8], value: &[u8], expires_at: u64) {
        self.put_expiring_in(0, key, value, expires_at);
    }

    /// [`WriteBatch::put_with_expiry`] in column family `cf`.
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn put_cf_with_expiry(
        &mut self,
        cf: &impl ColumnFamilyId,
        key: &[u8],
        value: &[u8],
        expires_at: u64,
    ) {
        self.note_owner(cf.db_instance());
        self.put_expiring_in(cf.column_family_id(), key, value, expires_at);
    }

    /// Appends a decoded entry of another batch.
    pub(crate) fn push_entry(&mut self, e: &super::iter::BatchEntry<'_>) {
        use crate::base::ValueKind;
        let (plain, value) = match e.kind {
            ValueKind::Value => (tag::VALUE, Some(e.value)),
            ValueKind::Deletion => (tag::DELETION, None),
            ValueKind::Merge => (tag::MERGE, Some(e.value)),
            ValueKind::SingleDeletion => (tag::SINGLE_DELETION, None),
            ValueKind::RangeDeletion => (tag::RANGE_DELETION, Some(e.value)),
            ValueKind::ValueWithExpiry => (tag::VALUE_WITH_EXPIRY, Some(e.value)),
            ValueKind::BlobIndex => unreachable!("the decoder yields no blob index"),
        };
        if matches!(e.kind, ValueKind::Merge | ValueKind::RangeDeletion) {
            self.merges = true;
        }
        self.record_in(e.cf, plain, e.key, value);
    }

    /// Takes `other`'s owner (the DB instance its handles name).
    pub(crate) fn copy_owner(&mut self, other: &WriteBatch) {
        self.owner = other.owner;
    }

    /// An expiring put in family `cf`.
    pub(crate) fn put_expiring_in(&mut self, cf: u32, key: &[u8], value: &[u8], expires_at: u64) {
        if let Some(why) = refusal(self.count(), key, Some(value), MAX_VALUE_LEN) {
            self.refused.get_or_insert(why);
            return;
        }
        let mut stored = Vec::with_capacity(value.len() + crate::base::expiry::EXPIRY_LEN);
        stored.extend_from_slice(value);
        stored.extend_from_slice(&expires_at.to_le_bytes());
        self.record_in(cf, tag::VALUE_WITH_EXPIRY, key, Some(&stored));
    }

    /// Adds a deletion of every key in `[start, end)` (default column
    /// family), RocksDB's `DeleteRange`. `start == end` deletes nothing;
    /// `start > end` fails the write with `InvalidArgument`.
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        self.merges = true;
        self.record_in(0, tag::RANGE_DELETION, start, Some(end));
    }

    /// Adds a range deletion in column family `cf` (see `delete_range`).
    ///
    /// # Errors
    /// As [`WriteBatch::put`].
    pub fn delete_range_cf(&mut self, cf: &impl ColumnFamilyId, start: &[u8], end: &[u8]) {
        self.note_owner(cf.db_instance());
        self.merges = true;
        self.record_in(cf.column_family_id(), tag::RANGE_DELETION, start, Some(end));
    }

    fn note_owner(&mut self, instance: Option<u64>) {
        if let Some(i) = instance {
            self.owner = match self.owner {
                Owner::Any => Owner::One(i),
                Owner::One(o) if o == i => Owner::One(i),
                _ => Owner::Mixed,
            };
        }
    }

    /// The DB instance of the handles the batch was built with.
    pub(crate) fn owner(&self) -> Owner {
        self.owner
    }

    /// True if some record may be a merge operand or a range deletion.
    pub(crate) fn has_merges(&self) -> bool {
        self.merges
    }

    /// True if some record may name a family other than the default.
    pub(crate) fn names_other_families(&self) -> bool {
        self.other_families
    }

    /// Removes every entry (and resets the sequence number), keeping the
    /// allocated buffer.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(BATCH_HEADER_LEN, 0);
        self.other_families = false;
        self.owner = Owner::Any;
        self.merges = false;
    }

    /// Number of entries (puts and deletes).
    pub fn len(&self) -> usize {
        self.count() as usize
    }

    /// Why an entry was refused (see [`WriteBatch::put`]): writing the
    /// batch then fails with `InvalidArgument` and this text.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// True when the batch holds no entry.
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// Size of the encoded batch in bytes, header included: what it adds to
    /// the WAL (plus record headers) and roughly to the memtable.
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len()
    }

    /// Adds a put in column family `cf` (0 = default, written with the
    /// plain tag).
    pub(crate) fn put_in(&mut self, cf: u32, key: &[u8], value: &[u8]) {
        self.record_in(cf, tag::VALUE, key, Some(value));
    }

    /// Adds a deletion in column family `cf` (0 = default, written with the
    /// plain tag).
    pub(crate) fn delete_in(&mut self, cf: u32, key: &[u8]) {
        self.record_in(cf, tag::DELETION, key, None);
    }

    /// Adds one record: `plain_tag` (the default family's tag) becomes its
    /// column-family form (RocksDB's: `VALUE` 0x1 -> 0x5, `DELETION` 0x0 ->
    /// 0x4, `MERGE` 0x2 -> 0x6, `SINGLE_DELETION` 0x7 -> 0x8,
    /// `RANGE_DELETION` 0xF -> 0xE) for `cf != 0`.
    fn record_in(&mut self, cf: u32, plain_tag: u8, key: &[u8], value: Option<&[u8]>) {
        // An expiring value carries its 8-byte expiry (checked without it
        // by `put_expiring_in`).
        let value_limit = match plain_tag {
            tag::VALUE_WITH_EXPIRY => MAX_VALUE_LEN + crate::base::expiry::EXPIRY_LEN,
            _ => MAX_VALUE_LEN,
        };
        if let Some(why) = refusal(self.count(), key, value, value_limit) {
            self.refused.get_or_insert(why);
            return;
        }
        self.bump_count();
        if cf == 0 {
            self.rep.push(plain_tag);
        } else {
            self.other_families = true;
            self.rep.push(match plain_tag {
                tag::VALUE => tag::CF_VALUE,
                tag::DELETION => tag::CF_DELETION,
                tag::MERGE => tag::CF_MERGE,
                tag::RANGE_DELETION => tag::CF_RANGE_DELETION,
                tag::VALUE_WITH_EXPIRY => tag::CF_VALUE_WITH_EXPIRY,
                _ => tag::CF_SINGLE_DELETION,
            });
            put_varint32(&mut self.rep, cf);
        }
        put_length_prefixed(&mut self.rep, key);
        if let Some(v) = value {
            put_length_prefixed(&mut self.rep, v);
        }
    }

    /// The batch as it is now, to come back to with [`WriteBatch::rollback_to`].
    pub(crate) fn mark(&self) -> Mark {
        Mark {
            bytes: self.rep.len(),
            count: self.count(),
            refused: self.refused.clone(),
        }
    }

    /// Drops every entry added since `mark` was taken. Requires: `mark`
    /// was taken of this batch and no `clear` came after it. The flags
    /// (other families, merges, owner) stay as they are: they may only
    /// over-approximate.
    pub(crate) fn rollback_to(&mut self, mark: &Mark) {
        debug_assert!(mark.bytes <= self.rep.len() && mark.count <= self.count());
        self.rep.truncate(mark.bytes.max(BATCH_HEADER_LEN));
        self.set_count(mark.count);
        self.refused = mark.refused.clone();
    }

    /// The record at byte `offset` (an offset `size_in_bytes` gave just
    /// before the record was added).
    pub(crate) fn entry_at(&self, offset: usize) -> Result<super::BatchEntry<'_>> {
        BatchIter::at(&self.rep, offset).next().unwrap_or_else(|| {
            Err(Error::corruption(
                BATCH_ERROR_FILE,
                offset as u64,
                "no record at this offset",
            ))
        })
    }

    /// Sequence number of the first entry (entry `i` gets `sequence() + i`).
    pub(crate) fn sequence(&self) -> SeqNo {
        debug_assert!(self.rep.len() >= BATCH_HEADER_LEN);
        decode_fixed64(&self.rep).unwrap_or(0)
    }

    /// True when every entry's sequence number fits in 56 bits.
    pub(crate) fn sequence_fits(&self) -> bool {
        self.sequence()
            .checked_add(u64::from(self.count()))
            .is_some_and(|end| end <= crate::base::MAX_SEQNO + 1)
    }

    /// Sets the sequence number of the first entry (done by the write leader).
    pub(crate) fn set_sequence(&mut self, seq: SeqNo) {
        debug_assert!(seq <= MAX_SEQNO);
        if let Some(h) = self.rep.get_mut(..8) {
            h.copy_from_slice(&seq.to_le_bytes());
        }
    }

    /// The entry count stored in the header.
    pub(crate) fn count(&self) -> u32 {
        debug_assert!(self.rep.len() >= BATCH_HEADER_LEN);
        self.rep.get(8..).and_then(decode_fixed32).unwrap_or(0)
    }

    fn set_count(&mut self, n: u32) {
        if let Some(h) = self.rep.get_mut(8..BATCH_HEADER_LEN) {
            h.copy_from_slice(&n.to_le_bytes());
        }
    }

    fn bump_count(&mut self) {
        let n = self.count();
        assert!(n < u32::MAX, "a WriteBatch holds at most u32::MAX entries");
        self.set_count(n + 1);
    }

    /// The encoded batch (header and records): the WAL payload.
    pub(crate) fn data(&self) -> &[u8] {
        &self.rep
    }

    /// Wraps bytes read from a WAL record. Checks only that the header is
    /// complete; the records are checked by [`WriteBatch::validate`] or while
    /// iterating.
    pub(crate) fn from_data(data: Vec<u8>) -> Result<WriteBatch> {
        if data.len() < BATCH_HEADER_LEN {
            return Err(Error::corruption(
                BATCH_ERROR_FILE,
                0,
                format!(
                    "batch of {} bytes is shorter than its {BATCH_HEADER_LEN}-byte header",
                    data.len()
                ),
            ));
        }
        Ok(WriteBatch {
            rep: data,
            other_families: true,
            owner: Owner::Any,
            merges: true,
            refused: None,
        })
    }

    /// Appends the records of `other` after ours and adds its count (group
    /// commit). Our sequence number is kept; `other`'s is ignored.
    ///
    /// # Panics
    /// If the combined count exceeds `u32::MAX`.
    #[cfg(test)]
    pub(crate) fn append(&mut self, other: &WriteBatch) {
        let n = u64::from(self.count()) + u64::from(other.count());
        assert!(
            n <= u64::from(u32::MAX),
            "appended WriteBatch would exceed u32::MAX entries"
        );
        self.rep
            .extend_from_slice(other.rep.get(BATCH_HEADER_LEN..).unwrap_or_default());
        self.set_count(n as u32);
    }

    /// Iterates over the entries, decoding as it goes. Errors are
    /// `Corruption` naming [`BATCH_ERROR_FILE`] and the byte offset inside
    /// the batch; after an error the iterator ends. The count is checked at
    /// the end, so apply entries only after [`WriteBatch::validate`] when the
    /// batch comes from disk and partial application matters.
    pub(crate) fn iter(&self) -> BatchIter<'_> {
        BatchIter::new(&self.rep)
    }

    /// Walks every record and checks the count. Damage is reported as
    /// `Corruption` naming `file` and `offset` (the WAL record holding the
    /// batch), with the position inside the batch in the message.
    pub(crate) fn validate(&self, file: &str, offset: u64) -> Result<()> {
        if !self.sequence_fits() {
            return Err(Error::corruption(
                file,
                offset,
                format!(
                    "write batch sequence {} + count {} exceeds the largest sequence number",
                    self.sequence(),
                    self.count()
                ),
            ));
        }
        for entry in self.iter() {
            if let Err(e) = entry {
                return Err(relocate(e, file, offset));
            }
        }
        Ok(())
    }
}

/// Rewrites a batch-decoder corruption (which names [`BATCH_ERROR_FILE`] and
/// a batch-relative offset) to name `file` and `offset`.
fn relocate(e: Error, file: &str, offset: u64) -> Error {
    match e {
        Error::Corruption {
            file: f,
            offset: inner,
            what,
        } if f == BATCH_ERROR_FILE => Error::corruption(
            file,
            offset,
            format!("bad write batch: {what} at byte {inner} of the batch"),
        ),
        other => other,
    }
}

#[inline]
/// Why an entry cannot be added to a batch of `count` entries, if it
/// cannot.
fn refusal(count: u32, key: &[u8], value: Option<&[u8]>, value_limit: usize) -> Option<String> {
    if key.len() > MAX_KEY_LEN {
        return Some(format!(
            "WriteBatch: a key of {} bytes (at most {MAX_KEY_LEN})",
            key.len()
        ));
    }
    match value {
        Some(v) if v.len() > value_limit => Some(format!(
            "WriteBatch: a value of {} bytes (at most {MAX_VALUE_LEN})",
            v.len()
        )),
        _ if count == u32::MAX => Some("WriteBatch: more than u32::MAX entries".to_string()),
        _ => None,
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteBatch")
            .field("count", &self.count())
            .field("sequence", &self.sequence())
            .field("size_in_bytes", &self.rep.len())
            .finish()
    }
}

#[cfg(test)]
mod tests;
