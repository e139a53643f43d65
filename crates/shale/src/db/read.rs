//! The read path: point reads, multi-gets and iterator construction.
//!
//! A read pins the super version first and takes the visible sequence
//! number second, as RocksDB's `GetImpl` does. The pinned memtables and
//! tables cannot lose a version while the read holds them, and every write
//! the sequence number admits is either in them or went to a newer memtable
//! after the pin (then the read is ordered before that write: what it sees
//! is a prefix of commit order). The other order is wrong: a flush and a
//! compaction between taking the sequence number and loading the super
//! version may drop the only version visible at that sequence number
//! (regression test `read_pins_the_super_version_before_the_sequence`).
//! No DB mutex is taken.
//! Sources are searched newest first: memtable, immutable memtables, L0 files
//! (newest first), then one file per deeper level by binary search.

use super::DbInner;
use crate::base::{make_internal_key, PrefixExtractor, SeqNo, ValueKind, KIND_FOR_SEEK};
use crate::blob::source::Fill;
use crate::blob::BlobIndex;
use crate::cf::ColumnFamily;
use crate::cf::SuperVersion;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::memtable::{MemGet, MemTable};
use crate::options::ReadOptions;
use crate::sst::{BlockMemo, PointEntry, ReadaheadPolicy};
use crate::table_cache::TableCache;
use crate::version::FileMeta;
use std::ops::Deref;
use std::sync::Arc;

const INLINE_CAP: usize = 128;

enum Repr {
    Inline {
        len: u8,
        buf: [u8; INLINE_CAP],
    },
    Owned(Vec<u8>),
    Table(PointEntry),
    /// A blob value, shared with the block cache.
    Blob(Arc<[u8]>),
    /// A blob reference `multi_get` resolves after every lookup (the
    /// index's bytes; never returned to the user).
    PendingBlob(PointEntry),
}

/// A value returned by a read. Small values and values from memtables are
/// held inline or owned; values found in an SST are served from the cached
/// block without a copy (in the spirit of RocksDB's `PinnableSlice`).
pub struct PinnableValue(Repr);

impl PinnableValue {
    fn from_slice(v: &[u8]) -> Self {
        if v.len() <= INLINE_CAP {
            let mut buf = [0u8; INLINE_CAP];
            buf[..v.len()].copy_from_slice(v);
            PinnableValue(Repr::Inline {
                len: v.len() as u8,
                buf,
            })
        } else {
            PinnableValue(Repr::Owned(v.to_vec()))
        }
    }

    /// The value bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, buf } => &buf[..*len as usize],
            Repr::Owned(v) => v,
            Repr::Table(e) => e.value(),
            Repr::Blob(b) => b,
            Repr::PendingBlob(_) => &[],
        }
    }

    /// Copies the value into a `Vec`.
    pub fn to_vec(&self) -> Vec<u8> {
        self.as_slice().to_vec()
    }
}

impl Deref for PinnableValue {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for PinnableValue {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl std::fmt::Debug for PinnableValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "PinnableValue({:?})",
            String::from_utf8_lossy(self.as_slice())
        )
    }
}

impl PartialEq<[u8]> for PinnableValue {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

/// A lookup key built on the stack for keys up to 248 bytes.
struct LookupKey {
    small: [u8; 256],
    len: usize,
    big: Vec<u8>,
}

impl LookupKey {
    fn new(user_key: &[u8], seq: SeqNo) -> Self {
        let n = user_key.len() + 8;
        if n <= 256 {
            let mut small = [0u8; 256];
            small[..user_key.len()].copy_from_slice(user_key);
            let t = crate::base::pack_trailer(seq, KIND_FOR_SEEK);
            small[user_key.len()..n].copy_from_slice(&t.to_le_bytes());
            LookupKey {
                small,
                len: n,
                big: Vec::new(),
            }
        } else {
            let mut big = Vec::with_capacity(n);
            make_internal_key(&mut big, user_key, seq, KIND_FOR_SEEK);
            LookupKey {
                small: [0u8; 256],
                len: 0,
                big,
            }
        }
    }

    fn ikey(&self) -> &[u8] {
        if self.big.is_empty() {
            &self.small[..self.len]
        } else {
            &self.big
        }
    }
}

pub(super) fn read_seq(db: &DbInner, opts: &ReadOptions<'_>) -> SeqNo {
    match opts.snapshot {
        Some(s) => s.sequence(),
        None => db.last_visible(),
    }
}

pub(crate) fn get(
    db: &DbInner,
    cf: &ColumnFamily,
    key: &[u8],
    opts: &ReadOptions<'_>,
) -> Result<Option<PinnableValue>> {
    db.check_open()?;
    opts.validate_point()?;
    db.stats.keys_read.add(1);
    let sv = cf.super_version.load();
    crate::sync_point!("Read::AfterSuperVersion");
    let seq = read_seq(db, opts);
    get_at(
        db,
        cf,
        &sv,
        key,
        seq,
        point_filter(cf, opts),
        None,
        false,
        Vec::new(),
    )
}

/// `get`, with merge `operands` (newest first) stacked above what the DB
/// holds for `key`: the value a write of them would leave, merged in one
/// call of the family's operator as a read after that write merges them
/// (`WriteBatchWithIndex::get_from_batch_and_db`).
pub(crate) fn get_under_operands(
    db: &DbInner,
    cf: &ColumnFamily,
    key: &[u8],
    opts: &ReadOptions<'_>,
    operands: Vec<Vec<u8>>,
) -> Result<Option<PinnableValue>> {
    db.check_open()?;
    opts.validate_point()?;
    db.stats.keys_read.add(1);
    let sv = cf.super_version.load();
    crate::sync_point!("Read::AfterSuperVersion");
    let seq = read_seq(db, opts);
    let pf = point_filter(cf, opts);
    get_at(db, cf, &sv, key, seq, pf, None, false, operands)
}

/// How a point read filters: the read's fill-cache choice and the
/// extractor whose prefix-only table filters it may consult (`None` with
/// `total_order_seek`).
#[derive(Clone, Copy)]
struct PointFilter {
    fill_cache: bool,
    prefix: Option<PrefixExtractor>,
}

fn point_filter(cf: &ColumnFamily, opts: &ReadOptions<'_>) -> PointFilter {
    PointFilter {
        fill_cache: opts.fill_cache,
        prefix: cf
            .opts()
            .prefix_extractor
            .filter(|_| !opts.total_order_seek),
    }
}

/// What one source (a memtable or a table) holds for a key: the newest
/// entry at or below the read's sequence number.
enum Found {
    Value(PinnableValue),
    /// A blob reference (the table entry holding the index).
    Blob(PointEntry),
    Deleted,
    /// A merge operand: the source's older entries are collected by
    /// [`collect_operands`].
    Merge,
}

/// One source of a point read, newest first.
enum Source<'a> {
    Mem(&'a Arc<MemTable>),
    Table(&'a FileMeta),
}

#[allow(clippy::too_many_arguments)]
fn get_at(
    db: &DbInner,
    cf: &ColumnFamily,
    sv: &SuperVersion,
    key: &[u8],
    seq: SeqNo,
    pf: PointFilter,
    mut memo: Option<&mut BlockMemo>,
    defer_blobs: bool,
    // Merge operands met so far, newest first (none for a plain read; no
    // allocation without).
    mut operands: Vec<Vec<u8>>,
) -> Result<Option<PinnableValue>> {
    let fill_cache = pf.fill_cache;
    let fill = if fill_cache { Fill::Yes } else { Fill::No };
    let blob = |e: &PointEntry| -> Result<PinnableValue> {
        Ok(PinnableValue(Repr::Blob(db.blobs.get(
            e.value(),
            key,
            fill,
            "<point read>",
        )?)))
    };
    let version = &sv.version;
    let lookup = LookupKey::new(key, seq);
    // Newest first: the memtables, every L0 file whose range holds the key,
    // then at most one file per deeper level (binary search over the
    // level's ranges).
    let mems = std::iter::once(&sv.mem)
        .chain(sv.imm.iter())
        .map(Source::Mem);
    let l0 = version
        .files(0)
        .iter()
        .filter(|f| key >= f.smallest_user_key() && key <= f.largest_user_key());
    let deeper = (1..version.num_levels())
        .filter_map(|level| version.find_file(level, key))
        .filter(|f| key >= f.smallest_user_key());
    let tables = l0.chain(deeper).map(|f| Source::Table(f));
    // The newest range tombstone over the key in the sources searched so
    // far (0: none). An entry older than it is deleted; so is everything in
    // older sources (module docs of `range_del`).
    let mut covering: SeqNo = 0;
    // The clock, read once and only for an expiring entry.
    let mut now: Option<u64> = None;
    let mut live = |expiry: u64| {
        !crate::base::expiry::expired(expiry, *now.get_or_insert_with(|| db.opts.clock.now_secs()))
    };
    for src in mems.chain(tables) {
        let (found, entry_seq) = match src {
            Source::Mem(m) => {
                if m.has_range_dels() {
                    if let Some(t) = m.range_fragments().and_then(|f| f.max_covering(key, seq)) {
                        covering = covering.max(t);
                    }
                }
                match m.get_with_seq(key, seq) {
                    None => (None, 0),
                    Some((MemGet::Value(v), s)) => {
                        (Some(Found::Value(PinnableValue::from_slice(v))), s)
                    }
                    Some((MemGet::Deleted, s)) => (Some(Found::Deleted), s),
                    Some((MemGet::Merge(_), s)) => (Some(Found::Merge), s),
                    Some((MemGet::Expiring(v, expiry), s)) if live(expiry) => {
                        (Some(Found::Value(PinnableValue::from_slice(v))), s)
                    }
                    Some((MemGet::Expiring(..), s)) => (Some(Found::Deleted), s),
                }
            }
            Source::Table(f) => get_from_table(
                &db.table_cache,
                f,
                key,
                lookup.ikey(),
                seq,
                &mut covering,
                &mut live,
                pf,
                memo.as_deref_mut(),
            )?,
        };
        let found = match found {
            Some(_) if entry_seq < covering => Found::Deleted,
            Some(found) => found,
            None if covering > 0 => Found::Deleted,
            None => continue,
        };
        let base = match found {
            Found::Value(v) if operands.is_empty() => return Ok(Some(v)),
            Found::Blob(e) if operands.is_empty() && defer_blobs => {
                return Ok(Some(PinnableValue(Repr::PendingBlob(e))))
            }
            Found::Blob(e) if operands.is_empty() => return blob(&e).map(Some),
            Found::Deleted if operands.is_empty() => return Ok(None),
            Found::Value(v) => Some(Some(v)),
            Found::Blob(e) => Some(Some(blob(&e)?)),
            Found::Deleted => Some(None),
            Found::Merge => {
                let mut it: Box<dyn InternalIterator> = match src {
                    Source::Mem(m) => Box::new(m.iter()),
                    Source::Table(f) => Box::new(
                        table_of(&db.table_cache, f)?
                            .iter_with(fill_cache, ReadaheadPolicy::Auto { max: 0 }),
                    ),
                };
                collect_operands(
                    it.as_mut(),
                    lookup.ikey(),
                    key,
                    covering,
                    &mut live,
                    &mut operands,
                    &|index: &[u8]| db.blobs.get(index, key, fill, "<point read>"),
                )?
            }
        };
        if let Some(base) = base {
            return resolve_newest_first(cf, key, base.as_deref(), &operands).map(Some);
        }
    }
    if operands.is_empty() {
        return Ok(None);
    }
    resolve_newest_first(cf, key, None, &operands).map(Some)
}

/// Reads the value a blob index points to (for the key being read).
type BlobResolver<'a> = &'a dyn Fn(&[u8]) -> Result<Arc<[u8]>>;

/// Walks `key`'s entries in one source from `lookup` on (newest first),
/// pushing merge operands onto `operands`. `Some(base)` when a value
/// (`Some(Some)`) or a tombstone (`Some(None)`, or an entry older than the
/// range tombstone at `covering`) ends the stack in this source; `None`
/// when the source holds no more entries of the key.
fn collect_operands(
    it: &mut dyn InternalIterator,
    lookup: &[u8],
    key: &[u8],
    covering: SeqNo,
    live: &mut dyn FnMut(u64) -> bool,
    operands: &mut Vec<Vec<u8>>,
    blob: BlobResolver<'_>,
) -> Result<Option<Option<PinnableValue>>> {
    it.seek(lookup);
    while it.valid() {
        let Some(p) = crate::base::parse_internal_key(it.key()) else {
            return Err(Error::corruption(
                "<point read>",
                0,
                "malformed internal key",
            ));
        };
        if p.user_key != key {
            break;
        }
        if p.seq < covering {
            return Ok(Some(None));
        }
        match p.kind {
            ValueKind::Merge => operands.push(it.value().to_vec()),
            ValueKind::Value => return Ok(Some(Some(PinnableValue::from_slice(it.value())))),
            ValueKind::BlobIndex => {
                return Ok(Some(Some(PinnableValue(Repr::Blob(blob(it.value())?)))))
            }
            ValueKind::ValueWithExpiry => {
                return Ok(Some(
                    crate::base::expiry::split_expiring(it.value())
                        .filter(|&(_, e)| live(e))
                        .map(|(v, _)| PinnableValue::from_slice(v)),
                ))
            }
            ValueKind::Deletion | ValueKind::SingleDeletion => return Ok(Some(None)),
            other => return Err(Error::NotSupported(format!("value kind {other:?}"))),
        }
        it.next();
    }
    it.status()?;
    Ok(None)
}

/// The open reader of `f` (see `TableCache::table_of`: pinned in `f` when
/// the table cache is unbounded, else a handle held while reading).
#[inline]
pub(super) fn table_of<'a>(
    cache: &TableCache,
    f: &'a FileMeta,
) -> Result<std::borrow::Cow<'a, Arc<crate::sst::Table>>> {
    cache.table_of(f)
}

/// The newest entry of `key` in table `f` and its sequence number (`None`
/// when it has none; an expiring value `live` says is gone reads as
/// deleted); raises `covering` to the table's newest range tombstone over
/// the key visible at `read_seq`.
#[allow(clippy::too_many_arguments)]
fn get_from_table(
    cache: &TableCache,
    f: &FileMeta,
    key: &[u8],
    lookup: &[u8],
    read_seq: SeqNo,
    covering: &mut SeqNo,
    live: &mut dyn FnMut(u64) -> bool,
    pf: PointFilter,
    memo: Option<&mut BlockMemo>,
) -> Result<(Option<Found>, SeqNo)> {
    let table = table_of(cache, f)?;
    if let Some(frags) = table.range_fragments() {
        if let Some(t) = frags.max_covering(key, read_seq) {
            *covering = (*covering).max(t);
        }
    }
    let Some(entry) = table.get_point(lookup, pf.fill_cache, memo, pf.prefix)? else {
        return Ok((None, 0));
    };
    let (entry_seq, kind) = crate::base::unpack_trailer(entry.trailer);
    let found = match ValueKind::from_u8(kind) {
        Some(ValueKind::Value) => Found::Value(PinnableValue(Repr::Table(entry))),
        Some(ValueKind::Deletion | ValueKind::SingleDeletion) => Found::Deleted,
        Some(ValueKind::Merge) => Found::Merge,
        Some(ValueKind::BlobIndex) => Found::Blob(entry),
        Some(ValueKind::ValueWithExpiry) => match entry.split_expiry() {
            Some((e, expiry)) if live(expiry) => Found::Value(PinnableValue(Repr::Table(e))),
            Some(_) => Found::Deleted,
            None => {
                return Err(Error::corruption(
                    crate::version::filename::table_file_name(f.number),
                    0,
                    format!("expiring value shorter than its expiry for key {key:?}"),
                ))
            }
        },
        Some(other) => return Err(Error::NotSupported(format!("value kind {other:?}"))),
        None => {
            return Err(Error::corruption(
                crate::version::filename::table_file_name(f.number),
                0,
                format!("unknown value kind {kind} for key {key:?}"),
            ))
        }
    };
    Ok((Some(found), entry_seq))
}

/// Resolves operands collected newest first.
fn resolve_newest_first(
    cf: &ColumnFamily,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &[Vec<u8>],
) -> Result<PinnableValue> {
    let ops: Vec<&[u8]> = operands.iter().rev().map(Vec::as_slice).collect();
    let v = crate::merge::resolve(cf.opts().merge_operator.as_ref(), key, base, &ops)?;
    Ok(PinnableValue::from_slice(&v))
}

pub(crate) fn multi_get(
    db: &DbInner,
    cf: &ColumnFamily,
    keys: &[&[u8]],
    opts: &ReadOptions<'_>,
) -> Vec<Result<Option<PinnableValue>>> {
    if let Err(e) = db.check_open().and_then(|()| opts.validate_point()) {
        return keys.iter().map(|_| Err(e.clone())).collect();
    }
    db.stats.keys_read.add(keys.len() as u64);
    let sv = cf.super_version.load();
    crate::sync_point!("Read::AfterSuperVersion");
    let seq = read_seq(db, opts);
    // Look keys up in sorted order so consecutive keys land in the same
    // blocks, which the memo hands out again without a cache lookup or a
    // second read (even with fill_cache off or no cache); then return them
    // in the caller's order.
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by(|&a, &b| keys[a].cmp(keys[b]));
    let mut out: Vec<Option<Result<Option<PinnableValue>>>> =
        (0..keys.len()).map(|_| None).collect();
    let mut memo = BlockMemo::default();
    for i in order {
        out[i] = Some(get_at(
            db,
            cf,
            &sv,
            keys[i],
            seq,
            point_filter(cf, opts),
            Some(&mut memo),
            true,
            Vec::new(),
        ));
    }
    let mut out: Vec<Result<Option<PinnableValue>>> =
        out.into_iter().map(|r| r.unwrap_or(Ok(None))).collect();
    resolve_pending_blobs(db, keys, &mut out, opts.fill_cache);
    out
}

/// Reads the blobs `multi_get` found references to, sorted by file and
/// offset (each file's blobs in file order, one read per blob), replacing
/// each pending reference with its value or error.
fn resolve_pending_blobs(
    db: &DbInner,
    keys: &[&[u8]],
    out: &mut [Result<Option<PinnableValue>>],
    fill_cache: bool,
) {
    let fill = if fill_cache { Fill::Yes } else { Fill::No };
    let mut pending: Vec<(BlobIndex, usize)> = Vec::new();
    for (i, r) in out.iter_mut().enumerate() {
        if let Ok(Some(PinnableValue(Repr::PendingBlob(e)))) = r {
            match BlobIndex::decode(e.value()) {
                Some(idx) => pending.push((idx, i)),
                None => {
                    *r = Err(Error::corruption(
                        "<point read>",
                        0,
                        format!("malformed blob index for key {:?}", keys[i]),
                    ))
                }
            }
        }
    }
    pending.sort_unstable_by_key(|(idx, _)| (idx.file_number, idx.offset));
    for (idx, i) in pending {
        out[i] = db
            .blobs
            .get_index(&idx, keys[i], fill)
            .map(|v| Some(PinnableValue(Repr::Blob(v))));
    }
}

/// Reads `(family, key)` pairs at one sequence number: every family's super
/// version is pinned first, the sequence number taken after, as for one
/// family. A family that fails its
/// check gives its keys that error.
pub(crate) fn multi_get_families(
    db: &DbInner,
    keys: &[(&ColumnFamily, Result<()>, &[u8])],
    opts: &ReadOptions<'_>,
) -> Vec<Result<Option<PinnableValue>>> {
    if let Err(e) = db.check_open().and_then(|()| opts.validate_point()) {
        return keys.iter().map(|_| Err(e.clone())).collect();
    }
    db.stats.keys_read.add(keys.len() as u64);
    // Families are told apart by id: every checked handle is of this DB.
    let mut pinned: std::collections::HashMap<u32, Arc<SuperVersion>> =
        std::collections::HashMap::new();
    for (cf, ok, _) in keys {
        if ok.is_ok() {
            pinned
                .entry(cf.id)
                .or_insert_with(|| cf.super_version.load_full());
        }
    }
    crate::sync_point!("Read::AfterSuperVersion");
    let seq = read_seq(db, opts);
    let mut memo = BlockMemo::default();
    keys.iter()
        .map(|(cf, ok, key)| {
            ok.clone()?;
            match pinned.get(&cf.id) {
                Some(sv) => get_at(
                    db,
                    cf,
                    sv,
                    key,
                    seq,
                    point_filter(cf, opts),
                    Some(&mut memo),
                    false,
                    Vec::new(),
                ),
                None => Ok(None),
            }
        })
        .collect()
}
