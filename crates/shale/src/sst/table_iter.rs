//! [`TableIterator`]: the two-level iterator of one table. The first level
//! walks the index block; each index value is the handle of a data block,
//! which the second level walks. Data blocks come from the block cache or
//! the file (see `Table::data_block`); moving within one block never
//! touches either.
//!
//! Errors (IO, corruption) make the iterator invalid and are reported by
//! `status()`; the next `seek*` clears them and tries again. That includes
//! getting the index block, which comes from the block cache (and may be
//! read from the file) when the table does not own it: until it is loaded
//! every seek fails with the error.
//!
//! Thread-safety: owned by one thread; keeps its `Arc<Table>`, the index
//! block and the current `Arc<Block>` alive.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::base::{
    compare_internal, extract_user_key, make_internal_key, pack_trailer, KIND_FOR_SEEK, MAX_SEQNO,
    TRAILER_LEN,
};
use crate::codec::decode_fixed64;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sst::block::BlockIterator;
#[cfg(any(test, feature = "testing"))]
use crate::sst::readahead::MAX_AUTO_READAHEAD;
use crate::sst::readahead::{Readahead, ReadaheadPolicy};
use crate::sst::reader::Table;

pub(crate) struct TableIterator {
    table: Arc<Table>,
    fill_cache: bool,
    /// `None` until the index block has been loaded (see `load_index`).
    index: Option<BlockIterator>,
    data: Option<BlockIterator>,
    /// Offset of the block `data` iterates.
    data_offset: u64,
    readahead: Readahead,
    err: Option<Error>,
    /// The table's global sequence number (an ingested table), and the
    /// current key with it in its trailer.
    global: Option<u64>,
    gkey: Vec<u8>,
}

impl TableIterator {
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn new(table: Arc<Table>, fill_cache: bool) -> TableIterator {
        TableIterator::with_readahead(
            table,
            fill_cache,
            ReadaheadPolicy::Auto {
                max: MAX_AUTO_READAHEAD,
            },
        )
    }

    pub(crate) fn with_readahead(
        table: Arc<Table>,
        fill_cache: bool,
        policy: ReadaheadPolicy,
    ) -> TableIterator {
        let readahead = Readahead::new(policy).charged(table.buffer_charge());
        TableIterator {
            fill_cache,
            index: None,
            data: None,
            data_offset: u64::MAX,
            readahead,
            err: None,
            global: table.global_seqno(),
            gkey: Vec::new(),
            table,
        }
    }

    /// Reads data blocks through `file` (see `Table::iter_reading`).
    pub(crate) fn reading_from(mut self, file: Arc<dyn crate::fs::RandomAccessFile>) -> Self {
        self.readahead = self.readahead.reading_from(file);
        self
    }

    /// Clears the error and makes sure the index block is loaded; on
    /// failure the error is kept and the iterator stays invalid.
    fn start_seek(&mut self) -> Option<&mut BlockIterator> {
        self.err = None;
        if self.index.is_none() {
            match self.table.index_block() {
                Ok(b) => self.index = Some(BlockIterator::new(b)),
                Err(e) => {
                    self.set_err(e);
                    return None;
                }
            }
        }
        self.index.as_mut()
    }

    fn set_err(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.data = None;
    }

    /// Points `data` at the block of the current index entry (reusing it
    /// when it is the same block). Leaves `data` as `None` at the end of the
    /// index or on error.
    fn init_data_block(&mut self) {
        let Some(index) = &self.index else {
            self.data = None;
            return;
        };
        if !index.valid() {
            if let Err(e) = index.status() {
                self.set_err(e);
            }
            self.data = None;
            return;
        }
        let h = match self.table.decode_handle(index.value()) {
            Ok(h) => h,
            Err(e) => return self.set_err(e),
        };
        if self.data.is_some() && self.data_offset == h.offset {
            return;
        }
        match self
            .table
            .data_block_with(h, self.fill_cache, Some(&mut self.readahead))
        {
            Ok(b) => {
                let buf = self
                    .data
                    .take()
                    .map(|d| d.into_parts().1)
                    .unwrap_or_default();
                self.data = Some(BlockIterator::with_key_buffer(b, buf));
                self.data_offset = h.offset;
            }
            Err(e) => self.set_err(e),
        }
    }

    /// After a data-block move: if the block is exhausted, continue with the
    /// first entry of the following non-empty block.
    fn skip_empty_forward(&mut self) {
        self.skip_empty(true)
    }

    /// Like `skip_empty_forward`, backwards (last entry of the previous block).
    fn skip_empty_backward(&mut self) {
        self.skip_empty(false)
    }

    fn skip_empty(&mut self, forward: bool) {
        loop {
            match &self.data {
                None => return,
                Some(d) if d.valid() => return,
                Some(d) => {
                    if let Err(e) = d.status() {
                        return self.set_err(e);
                    }
                }
            }
            let Some(index) = &mut self.index else {
                self.data = None;
                return;
            };
            if forward {
                index.next();
            } else {
                index.prev();
            }
            self.init_data_block();
            if let Some(d) = &mut self.data {
                if forward {
                    d.seek_to_first();
                } else {
                    d.seek_to_last();
                }
            }
        }
    }

    fn data_mut(&mut self) -> Option<&mut BlockIterator> {
        self.data.as_mut()
    }

    /// With a global sequence number: copies the current key with it in
    /// its trailer (the kind kept) into `gkey`.
    fn present(&mut self) {
        let (Some(g), Some(d)) = (self.global, self.data.as_ref()) else {
            return;
        };
        if !d.valid() {
            return;
        }
        let k = d.key();
        let n = k.len().saturating_sub(TRAILER_LEN);
        let kind = k.get(n..).and_then(decode_fixed64).unwrap_or(0) as u8;
        self.gkey.clear();
        self.gkey.extend_from_slice(&k[..n]);
        self.gkey
            .extend_from_slice(&pack_trailer(g, kind).to_le_bytes());
    }
}

impl TableIterator {
    /// Seeks by the stored keys.
    fn seek_stored(&mut self, target: &[u8]) {
        let Some(index) = self.start_seek() else {
            return;
        };
        index.seek(target);
        self.init_data_block();
        if let Some(d) = self.data_mut() {
            d.seek(target);
        }
        self.skip_empty_forward();
        self.present();
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn seek_to_first(&mut self) {
        let Some(index) = self.start_seek() else {
            return;
        };
        index.seek_to_first();
        self.init_data_block();
        if let Some(d) = self.data_mut() {
            d.seek_to_first();
        }
        self.skip_empty_forward();
        self.present();
    }

    fn seek_to_last(&mut self) {
        let Some(index) = self.start_seek() else {
            return;
        };
        index.seek_to_last();
        self.init_data_block();
        if let Some(d) = self.data_mut() {
            d.seek_to_last();
        }
        self.skip_empty_backward();
        self.present();
    }

    fn seek(&mut self, target: &[u8]) {
        if self.global.is_some() {
            // Stored keys are at 0, presented at the global number: find
            // the user key's one entry, then step past it when it sorts
            // before the target (its number is above the target's).
            let mut t = Vec::with_capacity(target.len());
            make_internal_key(&mut t, extract_user_key(target), MAX_SEQNO, KIND_FOR_SEEK);
            self.seek_stored(&t);
            if self.valid() && compare_internal(self.key(), target) == Ordering::Less {
                self.next();
            }
            return;
        }
        self.seek_stored(target);
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            if compare_internal(self.key(), target) == Ordering::Greater {
                self.prev();
            }
        } else if self.err.is_none() {
            self.seek_to_last();
        }
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = self.data_mut() {
            d.next();
        }
        self.skip_empty_forward();
        self.present();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if let Some(d) = self.data_mut() {
            d.prev();
        }
        self.skip_empty_backward();
        self.present();
    }

    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        if self.global.is_some() {
            return &self.gkey;
        }
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
/// Iterators over a table (here, not in `reader.rs`: the iterator holds
/// its table, so the reader does not name the iterator).
impl Table {
    /// A two-level iterator over the whole table.
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn iter(self: &Arc<Self>, fill_cache: bool) -> TableIterator {
        TableIterator::new(Arc::clone(self), fill_cache)
    }

    /// An iterator with an explicit readahead policy.
    pub(crate) fn iter_with(
        self: &Arc<Self>,
        fill_cache: bool,
        policy: crate::sst::ReadaheadPolicy,
    ) -> TableIterator {
        TableIterator::with_readahead(Arc::clone(self), fill_cache, policy)
    }

    /// `iter_with`, reading data blocks through `file` (another handle on
    /// this table's file: a compaction's direct handle) instead of the
    /// table's own.
    pub(crate) fn iter_reading(
        self: &Arc<Self>,
        fill_cache: bool,
        policy: crate::sst::ReadaheadPolicy,
        file: Arc<dyn crate::fs::RandomAccessFile>,
    ) -> TableIterator {
        TableIterator::with_readahead(Arc::clone(self), fill_cache, policy).reading_from(file)
    }
}
