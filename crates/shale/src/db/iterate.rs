//! Building an iterator over a family: the internal iterator merging its
//! memtables and every level of its version at a sequence number
//! (`internal_iterator`: L0 tables one by one, deeper levels through
//! `LevelIterator`s that open one table at a time, prefix and range
//! tombstone gates), wrapped into the user's `DbIterator`
//! (`new_iterator`).

use super::db_iter::{DbIterator, Pinned};
use super::DbInner;
use crate::base::{PrefixExtractor, SeqNo};
use crate::cf::ColumnFamily;
use crate::error::{Error, Result};
use crate::iter::error::ErrorIterator;
use crate::iter::level::{LevelFiles, LevelIterator};
use crate::iter::merging::MergingIterator;
use crate::iter::prefix_gate::{PrefixGate, PrefixGated};
use crate::iter::InternalIterator;
use crate::options::ReadOptions;
use crate::range_del::Fragments;
use crate::sst::ReadaheadPolicy;
use crate::table_cache::TableCache;
use crate::version::{FileMeta, Version};
use std::sync::Arc;

use super::read::{read_seq, table_of};

/// The files of one sorted level, opened through the table cache.
pub(super) struct LevelTables {
    /// The version (shared, not copied: creating an iterator must not clone
    /// every file handle of every level).
    pub(super) version: Arc<Version>,
    pub(super) level: usize,
    pub(super) cache: Arc<TableCache>,
    pub(super) fill_cache: bool,
    pub(super) readahead: ReadaheadPolicy,
}

impl LevelFiles for LevelTables {
    fn len(&self) -> usize {
        self.version.files(self.level).len()
    }

    fn largest(&self, i: usize) -> &[u8] {
        &self.version.files(self.level)[i].largest
    }

    fn open(&self, i: usize) -> Result<Box<dyn InternalIterator>> {
        let t = table_of(&self.cache, &self.version.files(self.level)[i])?;
        Ok(Box::new(t.iter_with(self.fill_cache, self.readahead)))
    }
}

/// `it` over table `t`, gated by its prefix filter when `gate` is set and
/// the table's filter holds the gate's prefixes.
pub(super) fn gate_table<I: InternalIterator + 'static>(
    it: I,
    t: &Arc<crate::sst::Table>,
    gate: Option<&Arc<PrefixGate>>,
) -> Box<dyn InternalIterator> {
    match gate {
        Some(g) if t.has_prefix_filter(g.extractor()) => {
            let (t, e) = (Arc::clone(t), g.extractor());
            Box::new(PrefixGated::new(
                it,
                Arc::clone(g),
                Box::new(move |p| t.may_contain_prefix(p, e)),
            ))
        }
        _ => Box::new(it),
    }
}

/// False when no file of sorted `level` holds a key with `extractor`'s
/// prefix `prefix`: the files whose user-key range meets the prefix's run
/// of keys (`[prefix, successor)`; only `prefix` itself for a capped prefix
/// shorter than its cap) all have `extractor`'s prefix filter and it rules
/// the prefix out.
pub(super) fn level_may_contain_prefix(
    version: &Version,
    level: usize,
    cache: &TableCache,
    extractor: PrefixExtractor,
    prefix: &[u8],
) -> Result<bool> {
    let end: Option<Vec<u8>> = match extractor {
        PrefixExtractor::Capped(n) if prefix.len() < n => Some([prefix, &[0]].concat()),
        _ => super::db_iter::prefix_successor(prefix),
    };
    let files = version.files(level);
    let first = files.partition_point(|f| f.largest_user_key() < prefix);
    for f in files.get(first..).unwrap_or(&[]) {
        if end.as_deref().is_some_and(|e| f.smallest_user_key() >= e) {
            break;
        }
        let t = table_of(cache, f)?;
        if t.may_contain_prefix(prefix, extractor)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// An internal iterator over every source of the current super version,
/// hiding entries under range tombstones visible at `read_seq`. With a
/// `gate`, seeks skip the sources whose prefix filter rules the target's
/// prefix out while the gate is open (`iter::prefix_gate`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn internal_iterator(
    mem: &Arc<crate::memtable::MemTable>,
    imm: &[Arc<crate::memtable::MemTable>],
    version: &Arc<Version>,
    cache: &Arc<TableCache>,
    fill_cache: bool,
    readahead: ReadaheadPolicy,
    read_seq: SeqNo,
    gate: Option<&Arc<PrefixGate>>,
) -> Result<Box<dyn InternalIterator>> {
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut ranges: Vec<Option<Arc<Fragments>>> = Vec::new();
    for m in std::iter::once(mem).chain(imm.iter()) {
        match gate {
            Some(g) => {
                let (m2, e) = (Arc::clone(m), g.extractor());
                children.push(Box::new(PrefixGated::new(
                    m.iter(),
                    Arc::clone(g),
                    Box::new(move |p| Ok(m2.may_contain_prefix(p, e))),
                )));
            }
            None => children.push(Box::new(m.iter())),
        }
        ranges.push(m.range_fragments());
    }
    for f in version.files(0) {
        let t = table_of(cache, f)?;
        children.push(gate_table(t.iter_with(fill_cache, readahead), &t, gate));
        ranges.push(t.range_fragments().cloned());
    }
    for level in 1..version.num_levels() {
        let files = version.files(level);
        if files.is_empty() {
            continue;
        }
        let it = LevelIterator::new(LevelTables {
            version: Arc::clone(version),
            level,
            cache: Arc::clone(cache),
            fill_cache,
            readahead,
        });
        // A sorted level is gated as a whole: a seek skips it when no file
        // whose range meets the prefix's run may hold the prefix (gating
        // file by file would still read the next file's first block).
        match gate {
            Some(g) => {
                let (v, c, e) = (Arc::clone(version), Arc::clone(cache), g.extractor());
                children.push(Box::new(PrefixGated::new(
                    it,
                    Arc::clone(g),
                    Box::new(move |p| level_may_contain_prefix(&v, level, &c, e, p)),
                )));
            }
            None => children.push(Box::new(it)),
        }
        ranges.push(version.level_range_dels(level, |files| level_range_dels(cache, files))?);
    }
    Ok(Box::new(
        MergingIterator::new(children).with_range_dels(ranges, read_seq),
    ))
}

/// The range tombstones of a sorted level's files, as one fragment list
/// (its files are disjoint and sorted, so are their fragments). Opens
/// each table (cached).
pub(super) fn level_range_dels(
    cache: &TableCache,
    files: &[Arc<FileMeta>],
) -> Result<Option<Arc<Fragments>>> {
    let mut sets: Vec<Arc<Fragments>> = Vec::new();
    for f in files {
        if let Some(r) = table_of(cache, f)?.range_fragments() {
            sets.push(Arc::clone(r));
        }
    }
    Ok(match sets.len() {
        0 => None,
        1 => sets.pop(),
        _ => Some(Arc::new(Fragments::from_sorted(
            sets.iter()
                .flat_map(|s| s.fragments().iter().cloned())
                .collect(),
        ))),
    })
}

/// Readahead for user iterators: fixed when the caller asked for a size,
/// else automatic up to `max_auto_readahead_size`.
pub(crate) fn readahead_policy(db: &DbInner, readahead_size: usize) -> ReadaheadPolicy {
    if readahead_size > 0 {
        ReadaheadPolicy::Fixed(readahead_size)
    } else {
        ReadaheadPolicy::Auto {
            max: db.opts.max_auto_readahead_size,
        }
    }
}

/// An iterator over family `cf` as it is now: its current super version,
/// the sequence number `opts` asks for, and the clock's reading now (every
/// expiry the iterator judges, it judges at that time).
pub(crate) fn new_iterator(
    db: &Arc<DbInner>,
    cf: &ColumnFamily,
    opts: &ReadOptions<'_>,
) -> DbIterator {
    let sv = cf.super_version.load_full();
    crate::sync_point!("Read::AfterSuperVersion");
    let seq = read_seq(db, opts);
    let at = Pinned {
        sv,
        seq,
        now: db.opts.clock.now_secs(),
        merge_op: cf.opts().merge_operator.clone(),
    };
    new_iterator_in(db, at, opts, cf.opts().prefix_extractor)
}

/// An iterator over the pinned state `at` (its super version at its
/// sequence number, expiry judged at its `now`). Requires: `at.sv` was
/// loaded before `at.seq` was taken (module docs).
pub(crate) fn new_iterator_in(
    db: &Arc<DbInner>,
    at: Pinned,
    opts: &ReadOptions<'_>,
    prefix_extractor: Option<PrefixExtractor>,
) -> DbIterator {
    // prefix_same_as_start: bound by prefix; and unless total_order_seek,
    // gate the sources by their prefix filters.
    let prefix_mode = match (opts.prefix_same_as_start, prefix_extractor) {
        (false, _) => Ok(None),
        (true, Some(e)) => Ok(Some(e)),
        (true, None) => Err(Error::InvalidArgument(
            "ReadOptions::prefix_same_as_start on a family without a prefix_extractor".into(),
        )),
    };
    let gate = match prefix_mode {
        Ok(Some(e)) if !opts.total_order_seek => Some(PrefixGate::new(e)),
        _ => None,
    };
    let built = opts
        .validate()
        .and_then(|()| prefix_mode.as_ref().map(|_| ()).map_err(Clone::clone))
        .and_then(|()| {
            internal_iterator(
                &at.sv.mem,
                &at.sv.imm,
                &at.sv.version,
                &db.table_cache,
                opts.fill_cache,
                readahead_policy(db, opts.readahead_size),
                at.seq,
                gate.as_ref(),
            )
        });
    let inner: Box<dyn InternalIterator> = match built {
        Ok(it) => it,
        Err(e) => Box::new(ErrorIterator(e)),
    };
    DbIterator::new(
        inner,
        Arc::clone(db),
        at,
        opts.iterate_lower_bound.clone(),
        opts.iterate_upper_bound.clone(),
    )
    .with_prefix_mode(prefix_mode.ok().flatten(), gate)
    .with_blob_fill(opts.fill_cache)
}

/// A cursor that is never valid and reports `e` (a dropped family's
/// handle).
pub(crate) fn error_iterator(db: &Arc<DbInner>, e: Error) -> DbIterator {
    let at = Pinned {
        sv: db.default_cf.super_version.load_full(),
        seq: 0,
        now: db.opts.clock.now_secs(),
        merge_op: None,
    };
    DbIterator::new(Box::new(ErrorIterator(e)), Arc::clone(db), at, None, None)
}
