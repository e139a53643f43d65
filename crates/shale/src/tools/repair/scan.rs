//! Reading one table for repair: every entry scanned (so a damaged table
//! is found, not trusted), its metadata rebuilt (key range, sequence
//! numbers, the blob files it references) and its family read from its
//! properties.

use crate::base::{compare_internal, make_internal_key, parse_internal_key, ValueKind, MAX_SEQNO};
use crate::blob::BlobIndex;
use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::iter::InternalIterator;
use crate::sst::{BlockHandle, BlockIterator, Compression, Table};
use crate::tools::repair_blobs::BlobRefs;
use crate::version::filename::table_file_name;
use crate::version::FileMeta;
use std::path::Path;

pub(super) fn raw_kind(k: crate::tools::keys::EntryKind) -> ValueKind {
    use crate::tools::keys::EntryKind as K;
    match k {
        K::Put => ValueKind::Value,
        K::Delete => ValueKind::Deletion,
        K::Merge => ValueKind::Merge,
        K::SingleDelete => ValueKind::SingleDeletion,
        K::RangeDelete => ValueKind::RangeDeletion,
        K::ExpiringPut => ValueKind::ValueWithExpiry,
        K::BlobIndex => ValueKind::BlobIndex,
    }
}

/// Reads table `num` whole and describes it as the MANIFEST does, with the
/// references its `BlobIndex` entries hold into each blob file (a
/// malformed blob index is damage of the table). `global`: an ingested
/// table's global sequence number, from the old MANIFEST (its entries are
/// stored at 0 and read at it).
pub(super) fn scan_table(
    fs: &dyn FileSystem,
    dir: &Path,
    num: u64,
    global: Option<u64>,
) -> Result<(FileMeta, BlobRefs)> {
    let path = dir.join(table_file_name(num));
    let name = path.display().to_string();
    let file = fs.open_random(&path)?;
    let file_size = file.len();
    let t = Table::open_at(file, name.clone(), num, None, false, global)?;
    let bad = |offset: u64, what: &str| Error::corruption(name.as_str(), offset, what);
    let (mut smallest, mut largest): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
    let (mut lo_seq, mut hi_seq) = (MAX_SEQNO, 0);
    let mut entries = 0u64;
    let mut refs = BlobRefs::new();
    let mut idx = BlockIterator::new(t.index_block()?);
    idx.seek_to_first();
    while idx.valid() {
        let h: BlockHandle = t.decode_handle(idx.value())?;
        let mut it = BlockIterator::new(t.data_block(h, false)?);
        it.seek_to_first();
        while it.valid() {
            let k = it.key();
            let p = parse_internal_key(k).ok_or_else(|| bad(h.offset, "malformed key"))?;
            if largest
                .as_deref()
                .is_some_and(|l| compare_internal(l, k) != std::cmp::Ordering::Less)
            {
                return Err(bad(h.offset, "keys out of order"));
            }
            lo_seq = lo_seq.min(p.seq);
            hi_seq = hi_seq.max(p.seq);
            if p.kind == ValueKind::BlobIndex {
                let b = BlobIndex::decode(it.value())
                    .ok_or_else(|| bad(h.offset, "malformed blob index"))?;
                let r = refs.entry(b.file_number).or_default();
                r.0 += 1;
                r.1 = r.1.saturating_add(b.record_len(p.user_key.len()));
            }
            if smallest.is_none() {
                smallest = Some(k.to_vec());
            }
            largest = Some(k.to_vec());
            entries += 1;
            it.next();
        }
        it.status()?;
        idx.next();
    }
    idx.status()?;
    if let Some(f) = t.range_fragments() {
        let frags = f.fragments();
        if let (Some(first), Some(last)) = (frags.first(), frags.last()) {
            let mut lo = Vec::new();
            make_internal_key(
                &mut lo,
                &first.start,
                first.seqs.first().copied().unwrap_or(0),
                ValueKind::RangeDeletion as u8,
            );
            let mut hi = Vec::new();
            make_internal_key(
                &mut hi,
                &last.end,
                MAX_SEQNO,
                ValueKind::RangeDeletion as u8,
            );
            if smallest
                .as_deref()
                .is_none_or(|s| compare_internal(&lo, s).is_lt())
            {
                smallest = Some(lo);
            }
            if largest
                .as_deref()
                .is_none_or(|l| compare_internal(&hi, l).is_gt())
            {
                largest = Some(hi);
            }
            for fr in frags {
                for &s in &fr.seqs {
                    lo_seq = lo_seq.min(s);
                    hi_seq = hi_seq.max(s);
                }
            }
        }
    }
    let (Some(mut smallest), Some(mut largest)) = (smallest, largest) else {
        return Err(bad(0, "table holds no entry"));
    };
    if let Some(g) = global {
        // The point entries' stored 0 reads as `g` (a range end's
        // sentinel stays).
        for k in [&mut smallest, &mut largest] {
            if let Some(p) = parse_internal_key(k).filter(|p| p.seq == 0) {
                let mut at = Vec::with_capacity(k.len());
                make_internal_key(&mut at, p.user_key, g, p.kind as u8);
                *k = at;
            }
        }
        (lo_seq, hi_seq) = (g, g);
    }
    let props = t.properties();
    if entries != props.num_entries {
        return Err(bad(
            0,
            &format!(
                "{entries} entries read, the properties say {}",
                props.num_entries
            ),
        ));
    }
    let mut m = FileMeta::new(
        num,
        file_size,
        smallest,
        largest,
        lo_seq,
        hi_seq,
        entries,
        props.num_deletions,
    );
    m.num_range_deletions = props.num_range_deletions;
    m.expiry_entries = props.expiry_entries;
    m.expiry_max = props.expiry_max;
    m.compression = Compression::parse(&props.compression_name).map_or(0, |c| c.code());
    m.oldest_blob_file = refs.keys().next().copied().unwrap_or(0);
    m.global_seqno = global;
    Ok((m, refs))
}
