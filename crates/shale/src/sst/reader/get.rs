//! Point lookups in a table: the bloom and prefix filters
//! (`may_contain`, `may_contain_prefix`), and the newest entry of a user
//! key at a sequence number (`get_point`, `get`), reading one data block
//! through the block cache.

use crate::base::{
    extract_user_key, make_internal_key, pack_trailer, unpack_trailer, PrefixExtractor,
    KIND_FOR_SEEK, MAX_SEQNO, TRAILER_LEN,
};
use crate::error::Result;

use super::{BlockMemo, BlockRef, PointEntry, Table, KEY_BUF};
#[cfg(any(test, feature = "testing"))]
use {super::TableEntry, crate::iter::InternalIterator, crate::sst::block::BlockIterator};

impl Table {
    #[cfg(any(test, feature = "testing"))]
    /// False when the filter rules `user_key` out; true without a filter.
    /// A prefix-only filter is consulted (by `user_key`'s prefix) only when
    /// `prefix` is the extractor the table was written with.
    pub(crate) fn may_contain(
        &self,
        user_key: &[u8],
        prefix: Option<PrefixExtractor>,
    ) -> Result<bool> {
        Ok(self.filter_probe(user_key, prefix)?.unwrap_or(true))
    }

    /// `may_contain`, `None` when no filter was consulted.
    pub(super) fn filter_probe(
        &self,
        user_key: &[u8],
        prefix: Option<PrefixExtractor>,
    ) -> Result<Option<bool>> {
        let probe = if self.filter_whole_keys {
            user_key
        } else {
            match (prefix, self.filter_prefix) {
                (Some(want), Some(have)) if want == have => match have.prefix(user_key) {
                    Some(p) => p,
                    None => return Ok(None),
                },
                _ => return Ok(None),
            }
        };
        let Some(f) = self.filter()? else {
            return Ok(None);
        };
        self.stats.bump(|c| &c.filter_checks, 1);
        let r = f.may_contain(probe);
        if !r {
            self.stats.bump(|c| &c.filter_useful, 1);
        }
        Ok(Some(r))
    }

    /// True when the table's filter holds prefixes of `extractor`: only
    /// then may [`may_contain_prefix`](Self::may_contain_prefix) rule one
    /// out.
    pub(crate) fn has_prefix_filter(&self, extractor: PrefixExtractor) -> bool {
        self.filter_h.is_some() && self.filter_prefix == Some(extractor)
    }

    /// False when the table holds no key whose `extractor` prefix is
    /// `prefix`; true when unsure, and always when the table's filter was
    /// written with another extractor (or none).
    pub(crate) fn may_contain_prefix(
        &self,
        prefix: &[u8],
        extractor: PrefixExtractor,
    ) -> Result<bool> {
        if !self.has_prefix_filter(extractor) {
            return Ok(true);
        }
        let Some(f) = self.filter()? else {
            return Ok(true);
        };
        self.stats.bump(|c| &c.prefix_checks, 1);
        let r = f.may_contain(prefix);
        if !r {
            self.stats.bump(|c| &c.prefix_useful, 1);
        }
        Ok(r)
    }

    /// The newest entry of `lookup_ikey`'s user key at or below its
    /// sequence number: `(trailer, value)` served from the block. `None`
    /// when the table has no such entry. No allocation when the block is
    /// cached.
    ///
    /// With a `memo` (batched lookups), data blocks already fetched by the
    /// batch are reused, so each needed block is read once per batch even
    /// when it is not cached.
    pub(crate) fn get_point(
        &self,
        lookup_ikey: &[u8],
        fill_cache: bool,
        memo: Option<&mut BlockMemo>,
        prefix: Option<PrefixExtractor>,
    ) -> Result<Option<PointEntry>> {
        debug_assert!(lookup_ikey.len() >= TRAILER_LEN);
        let user_key = extract_user_key(lookup_ikey);
        let probed = self.filter_probe(user_key, prefix)?;
        if probed == Some(false) {
            return Ok(None);
        }
        let r = match self.global_seqno {
            None => self.get_point_unfiltered(lookup_ikey, user_key, fill_cache, memo),
            Some(g) => self.get_point_global(lookup_ikey, user_key, fill_cache, memo, g),
        };
        if probed == Some(true) && matches!(r, Ok(None)) {
            self.stats.bump(|c| &c.filter_false_positives, 1);
        }
        r
    }

    /// `get_point_unfiltered` in an ingested table read at global
    /// sequence number `g`: it holds at most one entry per user key
    /// (stored at 0), visible when `g` is at or below the lookup's
    /// sequence number, and returned with `g` in its trailer.
    fn get_point_global(
        &self,
        lookup_ikey: &[u8],
        user_key: &[u8],
        fill_cache: bool,
        memo: Option<&mut BlockMemo>,
        g: u64,
    ) -> Result<Option<PointEntry>> {
        let t = lookup_ikey
            .get(lookup_ikey.len() - TRAILER_LEN..)
            .and_then(crate::codec::decode_fixed64)
            .unwrap_or(0);
        if unpack_trailer(t).0 < g {
            return Ok(None);
        }
        let mut lookup = Vec::with_capacity(user_key.len() + TRAILER_LEN);
        make_internal_key(&mut lookup, user_key, MAX_SEQNO, KIND_FOR_SEEK);
        let found = self.get_point_unfiltered(&lookup, user_key, fill_cache, memo)?;
        Ok(found.map(|mut e| {
            e.trailer = pack_trailer(g, unpack_trailer(e.trailer).1);
            e
        }))
    }

    pub(super) fn get_point_unfiltered(
        &self,
        lookup_ikey: &[u8],
        user_key: &[u8],
        fill_cache: bool,
        memo: Option<&mut BlockMemo>,
    ) -> Result<Option<PointEntry>> {
        let index = self.index()?;
        KEY_BUF.with(|buf| {
            let mut key = buf.borrow_mut();
            let found = match (&self.index_search, &index) {
                (Some(search), BlockRef::Owned(b)) => search.seek(b, lookup_ikey)?,
                _ => index.seek_point(lookup_ikey, &mut key)?,
            };
            let Some(vr) = found else {
                return Ok(None);
            };
            let hv = index.data().get(vr).unwrap_or(&[]);
            let h = self.decode_handle(hv)?;
            let block = match memo {
                Some(m) => m.block(self, h, fill_cache)?,
                None => self.data_block(h, fill_cache)?,
            };
            let Some(value_range) = block.seek_point(lookup_ikey, &mut key)? else {
                return Ok(None);
            };
            if key.len() < TRAILER_LEN || extract_user_key(&key) != user_key {
                return Ok(None);
            }
            let mut t = [0u8; 8];
            t.copy_from_slice(&key[key.len() - TRAILER_LEN..]);
            Ok(Some(PointEntry {
                block,
                value_range,
                trailer: u64::from_le_bytes(t),
            }))
        })
    }

    /// Point lookup. `Some(e)`: `e` is the first entry with internal key ≥
    /// `lookup_ikey`; its user key may differ (the caller checks it). `None`:
    /// the table has no entry with `lookup_ikey`'s user key at or after
    /// `lookup_ikey` (filtered out, or past the block the index points to —
    /// that block's index key bounds every later entry's user key from
    /// below by something greater than the lookup's).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn get(&self, lookup_ikey: &[u8], fill_cache: bool) -> Result<Option<TableEntry>> {
        debug_assert!(lookup_ikey.len() >= TRAILER_LEN);
        if !self.may_contain(extract_user_key(lookup_ikey), None)? {
            return Ok(None);
        }
        let mut idx = BlockIterator::new(self.index_block()?);
        idx.seek(lookup_ikey);
        if !idx.valid() {
            idx.status()?;
            return Ok(None);
        }
        let h = self.decode_handle(idx.value())?;
        let block = self.data_block(h, fill_cache)?;
        let (_, buf, _) = idx.into_parts();
        let mut it = BlockIterator::with_key_buffer(block, buf);
        it.seek(lookup_ikey);
        if !it.valid() {
            it.status()?;
            return Ok(None);
        }
        let (block, key, value_range) = it.into_parts();
        Ok(Some(TableEntry {
            block,
            key,
            value_range,
        }))
    }
}
