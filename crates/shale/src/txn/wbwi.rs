//! [`WriteBatchWithIndex`]: a [`WriteBatch`] that can be read before it is
//! written (RocksDB's `WriteBatchWithIndex`): point reads of the batch
//! alone (`get_from_batch`) or of the batch over the DB at a snapshot
//! (`get_from_batch_and_db`), and cursors over the batch laid over a DB
//! cursor (`iter_with_base`, `range_with_base`). Savepoints roll the batch
//! and its index back together.
//!
//! Reads see the batch as the DB will once it is written with
//! `Db::write(wbwi.into_write_batch(), ..)` (as long as nothing else is
//! written meanwhile): the newest entry of a key wins; merges are applied
//! with the family's merge operator over what is below them (in the batch,
//! else in the DB: the DB's operands and the batch's go to one call, as a
//! read after the write does); range deletions hide the DB's keys and the
//! batch's older entries in their range (RocksDB's WBWI refuses to read
//! them; Shale supports them: `index.rs` fragments them on the first read
//! after one is added). Single deletions read as deletions.
//!
//! Thread safety: a plain owned value (`Send + Sync`); cursors borrow it,
//! so it cannot change while one is open.
//! Invariant: the index holds exactly the batch's records (rebuilt from the
//! batch after a rollback).

use crate::base::ValueKind;
use crate::batch::{ColumnFamilyId, Mark, WriteBatch};
use crate::cf::Cf;
use crate::db::{bounds_to_cursor, Db, KeyRange};
use crate::error::{Error, Result};
use crate::options::ReadOptions;

use super::base_delta::{WbwiIterator, WbwiRange};
use super::index::{BatchIndex, Below};

/// A write batch with an ordered index of its keys (see the module docs).
///
/// ```
/// # fn main() -> shale::Result<()> {
/// use shale::{BatchRead, Db, Options, ReadOptions, WriteBatchWithIndex, WriteOptions};
/// # let dir = std::env::temp_dir().join(format!("shale-wbwi-doc-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&dir);
/// let db = Db::open(&dir, Options { create_if_missing: true, ..Options::default() })?;
/// db.put(b"a", b"1")?;
/// let cf = db.default_cf();
/// let mut wb = WriteBatchWithIndex::new();
/// wb.put(b"b", b"2");
/// wb.delete(b"a");
/// assert_eq!(wb.get_from_batch(&cf, b"b")?, BatchRead::Found(b"2".to_vec()));
/// assert_eq!(wb.get_from_batch_and_db(&db, &ReadOptions::new(), &cf, b"a")?, None);
/// db.write(wb.into_write_batch(), &WriteOptions::default())?;
/// assert!(db.get(b"a")?.is_none());
/// # drop(db);
/// # let _ = std::fs::remove_dir_all(&dir);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct WriteBatchWithIndex {
    batch: WriteBatch,
    index: BatchIndex,
    savepoints: Vec<Mark>,
}

/// What the batch alone says of a key (`get_from_batch`; RocksDB's
/// statuses of `GetFromBatch`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchRead {
    /// The batch sets the key to this value (merges in the batch over a
    /// put or a deletion in the batch are applied).
    Found(Vec<u8>),
    /// The batch deletes the key.
    Deleted,
    /// The batch holds nothing for the key.
    NotFound,
    /// The batch holds only merge operands for the key (oldest first): its
    /// value depends on the DB's.
    MergeInProgress(Vec<Vec<u8>>),
}

impl WriteBatchWithIndex {
    /// An empty batch that keeps every entry of a key in its index
    /// (RocksDB's default, `overwrite_key = false`).
    pub fn new() -> Self {
        Self::with_overwrite_key(false)
    }

    /// An empty batch; with `overwrite_key`, a put or a deletion replaces
    /// the entries its key had in the index (merges stack). Reads are the
    /// same either way; the index is smaller, and `batch_entries` lists
    /// only the entries still indexed. (RocksDB's flag repoints the key's
    /// last entry only; Shale drops every entry the new one shadows.)
    pub fn with_overwrite_key(overwrite_key: bool) -> Self {
        WriteBatchWithIndex {
            batch: WriteBatch::new(),
            index: BatchIndex::new(overwrite_key),
            savepoints: Vec::new(),
        }
    }

    /// Adds a record through `add` and indexes it (unless the batch
    /// refused it: see `WriteBatch::put`).
    fn add(&mut self, add: impl FnOnce(&mut WriteBatch)) {
        let (offset, pos) = (self.batch.size_in_bytes(), self.batch.len());
        add(&mut self.batch);
        if self.batch.len() > pos {
            match self.batch.entry_at(offset) {
                Ok(e) => self.index.insert(pos as u32, offset, &e),
                Err(_) => debug_assert!(false, "a record just added does not decode"),
            }
        }
    }

    /// Adds a put of `key` → `value` (default column family).
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.add(|b| b.put(key, value));
    }

    /// Adds a put in column family `cf` (see `WriteBatch::put_cf`).
    pub fn put_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8], value: &[u8]) {
        self.add(|b| b.put_cf(cf, key, value));
    }

    /// Adds a deletion of `key` (default column family).
    pub fn delete(&mut self, key: &[u8]) {
        self.add(|b| b.delete(key));
    }

    /// Adds a deletion in column family `cf`.
    pub fn delete_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8]) {
        self.add(|b| b.delete_cf(cf, key));
    }

    /// Adds a single deletion of `key` (default column family; see
    /// `WriteBatch::single_delete`). Reads treat it as a deletion.
    pub fn single_delete(&mut self, key: &[u8]) {
        self.add(|b| b.single_delete(key));
    }

    /// Adds a single deletion in column family `cf`.
    pub fn single_delete_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8]) {
        self.add(|b| b.single_delete_cf(cf, key));
    }

    /// Adds a merge operand for `key` (default column family).
    pub fn merge(&mut self, key: &[u8], operand: &[u8]) {
        self.add(|b| b.merge(key, operand));
    }

    /// Adds a merge operand in column family `cf`.
    pub fn merge_cf(&mut self, cf: &impl ColumnFamilyId, key: &[u8], operand: &[u8]) {
        self.add(|b| b.merge_cf(cf, key, operand));
    }

    /// Adds a deletion of every key in `[start, end)` (default column
    /// family): reads of the batch no longer see the DB's keys in the
    /// range, nor the batch's earlier entries there. `start >= end` hides
    /// nothing (`start > end` fails the write, as for `WriteBatch`).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        self.add(|b| b.delete_range(start, end));
    }

    /// Adds a range deletion in column family `cf`.
    pub fn delete_range_cf(&mut self, cf: &impl ColumnFamilyId, start: &[u8], end: &[u8]) {
        self.add(|b| b.delete_range_cf(cf, start, end));
    }

    /// Number of entries (every kind).
    pub fn len(&self) -> usize {
        self.batch.len()
    }

    /// True when the batch holds no entry.
    pub fn is_empty(&self) -> bool {
        self.batch.is_empty()
    }

    /// Removes every entry and every savepoint.
    pub fn clear(&mut self) {
        self.batch.clear();
        self.index.clear();
        self.savepoints.clear();
    }

    /// The batch, to write (`Db::write(wbwi.write_batch().clone(), ..)`) or
    /// inspect.
    pub fn write_batch(&self) -> &WriteBatch {
        &self.batch
    }

    /// The batch, to write with `Db::write`.
    pub fn into_write_batch(self) -> WriteBatch {
        self.batch
    }

    /// Remembers the batch as it is now, for `rollback_to_savepoint`.
    /// Savepoints nest.
    pub fn set_savepoint(&mut self) {
        self.savepoints.push(self.batch.mark());
    }

    /// Drops every entry added since the last savepoint, and that
    /// savepoint.
    ///
    /// # Errors
    /// `InvalidArgument` when there is no savepoint (RocksDB's
    /// `NotFound`).
    pub fn rollback_to_savepoint(&mut self) -> Result<()> {
        let mark = self.savepoints.pop().ok_or_else(no_savepoint)?;
        self.batch.rollback_to(&mark);
        self.index.rebuild(&self.batch)
    }

    /// Forgets the last savepoint, keeping the entries.
    ///
    /// # Errors
    /// `InvalidArgument` when there is no savepoint.
    pub fn pop_savepoint(&mut self) -> Result<()> {
        self.savepoints.pop().map(drop).ok_or_else(no_savepoint)
    }

    /// What the batch alone says of `key` in family `cf` (see
    /// [`BatchRead`]).
    ///
    /// # Errors
    /// `MergeFailed` when merges in the batch over a value or a deletion
    /// in the batch cannot be applied (no operator, or it failed).
    pub fn get_from_batch(&self, cf: &Cf, key: &[u8]) -> Result<BatchRead> {
        let d = self.index.resolve(&self.batch, cf.id(), key)?;
        let below = match d.below {
            Below::Db if d.operands.is_empty() => return Ok(BatchRead::NotFound),
            Below::Db => {
                let ops = d.operands.iter().map(|o| o.to_vec()).collect();
                return Ok(BatchRead::MergeInProgress(ops));
            }
            Below::Deleted if d.operands.is_empty() => return Ok(BatchRead::Deleted),
            Below::Value(v) if d.operands.is_empty() => return Ok(BatchRead::Found(v.to_vec())),
            Below::Deleted => None,
            Below::Value(v) => Some(v),
        };
        let op = cf.0.opts().merge_operator.clone();
        crate::merge::resolve(op.as_ref(), key, below, &d.operands).map(BatchRead::Found)
    }

    /// The value of `key` in family `cf` once the batch is written over the
    /// DB as `opts` reads it (its snapshot): what `Db::get_cf_opt` would
    /// return after `Db::write` of the batch.
    ///
    /// # Errors
    /// The DB read's (a dropped family, corruption, IO), and `MergeFailed`.
    pub fn get_from_batch_and_db(
        &self,
        db: &Db,
        opts: &ReadOptions<'_>,
        cf: &Cf,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>> {
        db.family(cf)?;
        opts.validate_point()?;
        let d = self.index.resolve(&self.batch, cf.id(), key)?;
        let below = match d.below {
            Below::Db if d.operands.is_empty() => {
                return Ok(db.get_cf_opt(cf, key, opts)?.map(|v| v.to_vec()))
            }
            Below::Db => {
                let ops = d.operands.iter().rev().map(|o| o.to_vec()).collect();
                return Ok(db
                    .get_cf_under_operands(cf, key, opts, ops)?
                    .map(|v| v.to_vec()));
            }
            Below::Deleted if d.operands.is_empty() => return Ok(None),
            Below::Value(v) if d.operands.is_empty() => return Ok(Some(v.to_vec())),
            Below::Deleted => None,
            Below::Value(v) => Some(v),
        };
        let op = cf.0.opts().merge_operator.clone();
        crate::merge::resolve(op.as_ref(), key, below, &d.operands).map(Some)
    }

    /// A cursor over family `cf` of the batch laid over the DB's cursor
    /// with `opts` (its snapshot and bounds; unpositioned: call a seek
    /// first). `prefix_same_as_start` is refused (`status` says
    /// `InvalidArgument`); so is a dropped family's handle.
    pub fn iter_with_base(&self, db: &Db, opts: &ReadOptions<'_>, cf: &Cf) -> WbwiIterator<'_> {
        let refused = db.family(cf).err().or_else(|| {
            opts.prefix_same_as_start.then(|| {
                Error::InvalidArgument(
                    "WriteBatchWithIndex iterators do not take prefix_same_as_start".into(),
                )
            })
        });
        WbwiIterator::new(
            &self.batch,
            &self.index,
            cf.id(),
            cf.0.opts().merge_operator.clone(),
            db.iter_cf(cf, opts),
            opts.iterate_lower_bound.clone(),
            opts.iterate_upper_bound.clone(),
            refused,
        )
    }

    /// A double-ended iterator over the keys of family `cf` in `range`
    /// (any Rust range of byte strings), the batch laid over the DB's
    /// latest state (both ends read one snapshot).
    pub fn range_with_base<R: KeyRange>(&self, db: &Db, cf: &Cf, range: R) -> WbwiRange<'_> {
        let (start, end) = range.key_bounds();
        let (lower, upper) = bounds_to_cursor(start, end);
        let snapshot = db.snapshot();
        let mut ro = ReadOptions::new();
        ro.snapshot = Some(&snapshot);
        ro.iterate_lower_bound = lower;
        ro.iterate_upper_bound = upper;
        WbwiRange::new(
            self.iter_with_base(db, &ro, cf),
            self.iter_with_base(db, &ro, cf),
        )
    }

    /// The batch's entries of family `cf` as its index holds them (RocksDB's
    /// `WBWIIterator`): by key, each key's entries oldest first, as
    /// (key, kind, value); range deletions are not listed.
    pub fn batch_entries(&self, cf: &impl ColumnFamilyId) -> Vec<(Vec<u8>, WriteType, Vec<u8>)> {
        let cf = cf.column_family_id();
        self.index
            .entries(cf)
            .filter_map(|(k, kind, offset)| {
                let e = self.batch.entry_at(offset).ok()?;
                let kind = match kind {
                    ValueKind::Value => WriteType::Put,
                    ValueKind::Merge => WriteType::Merge,
                    ValueKind::SingleDeletion => WriteType::SingleDelete,
                    _ => WriteType::Delete,
                };
                Some((k.to_vec(), kind, e.value.to_vec()))
            })
            .collect()
    }
}

/// The kind of an entry `batch_entries` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteType {
    /// A put.
    Put,
    /// A merge operand.
    Merge,
    /// A deletion.
    Delete,
    /// A single deletion.
    SingleDelete,
}

fn no_savepoint() -> Error {
    Error::InvalidArgument("WriteBatchWithIndex: no savepoint".into())
}

impl Default for WriteBatchWithIndex {
    fn default() -> Self {
        WriteBatchWithIndex::new()
    }
}

#[cfg(test)]
mod tests;
