//! `WriteBatchWithIndex` (issue 40) against a model, randomized with
//! reproducible seeds (`WBWI_SEED=n` runs one seed, `WBWI_SEEDS=n` that
//! many).
//!
//! Each seed opens a DB with three families (string-append merge
//! operators) and runs rounds. A round writes random puts, deletes, merges
//! and range deletions to the DB (some flushed to tables, the rest left in
//! the memtable), takes a snapshot, writes more, then fills a WBWI
//! (random `overwrite_key`) with random puts, deletes, single deletes,
//! merges and range deletions over every family, with savepoints set,
//! popped and rolled back. It checks against the model (the list of the
//! batch's operations applied over the DB's model at the latest state and
//! at the snapshot): `get_from_batch` (the batch alone),
//! `get_from_batch_and_db` for every key, `batch_entries`, full scans both
//! ways, random cursor walks (seeks, moves that change direction) under
//! random bounds, and `range_with_base` from both ends. Then it writes the
//! batch with `Db::write` and checks that the DB reads what the batch's
//! reads predicted.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use shale::{
    BatchRead, Cf, CfOptions, Db, Error, Options, ReadOptions, Snapshot, StringAppendOperator,
    WbwiIterator, WriteBatchWithIndex, WriteOptions, WriteType,
};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

const FAMILIES: usize = 3;

fn cf_options() -> CfOptions {
    CfOptions {
        merge_operator: Some(Arc::new(StringAppendOperator::new(b","))),
        ..CfOptions::default()
    }
}

fn key(rng: &mut SmallRng) -> Vec<u8> {
    let mut k = format!("k{:02}", rng.gen_range(0..30)).into_bytes();
    if rng.gen_bool(0.1) {
        k.push(b'a');
    }
    k
}

fn value(rng: &mut SmallRng) -> Vec<u8> {
    format!("v{}", rng.gen_range(0..1000)).into_bytes()
}

/// The model's merge: string append with `,`.
fn append(old: Option<&[u8]>, operand: &[u8]) -> Vec<u8> {
    match old {
        Some(o) => [o, b",", operand].concat(),
        None => operand.to_vec(),
    }
}

/// One operation on the batch (or the DB), in a family.
#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    SingleDelete(Vec<u8>),
    Merge(Vec<u8>, Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

fn apply(m: &mut Map, op: &Op) {
    match op {
        Op::Put(k, v) => {
            m.insert(k.clone(), v.clone());
        }
        Op::Delete(k) | Op::SingleDelete(k) => {
            m.remove(k);
        }
        Op::Merge(k, v) => {
            let n = append(m.get(k).map(Vec::as_slice), v);
            m.insert(k.clone(), n);
        }
        Op::DeleteRange(s, e) => {
            let doomed: Vec<Vec<u8>> = m
                .range::<Vec<u8>, _>((Bound::Included(s), Bound::Excluded(e)))
                .map(|(k, _)| k.clone())
                .collect();
            for k in doomed {
                m.remove(&k);
            }
        }
    }
}

/// What the batch alone says of `k` (the model of `get_from_batch`).
fn batch_read(ops: &[(usize, Op)], cf: usize, k: &[u8]) -> BatchRead {
    let mut r = BatchRead::NotFound;
    for (_, op) in ops.iter().filter(|(c, _)| *c == cf) {
        r = match op {
            Op::Put(x, v) if x == k => BatchRead::Found(v.clone()),
            Op::Delete(x) | Op::SingleDelete(x) if x == k => BatchRead::Deleted,
            Op::DeleteRange(s, e) if s.as_slice() <= k && k < e.as_slice() => BatchRead::Deleted,
            Op::Merge(x, o) if x == k => match r {
                BatchRead::NotFound => BatchRead::MergeInProgress(vec![o.clone()]),
                BatchRead::MergeInProgress(mut os) => {
                    os.push(o.clone());
                    BatchRead::MergeInProgress(os)
                }
                BatchRead::Deleted => BatchRead::Found(o.clone()),
                BatchRead::Found(v) => BatchRead::Found(append(Some(&v), o)),
            },
            _ => r,
        };
    }
    r
}

/// The model of `batch_entries`: each key's point entries in batch order;
/// with `overwrite`, from its last put or deletion on.
fn entries(ops: &[(usize, Op)], cf: usize, overwrite: bool) -> Vec<(Vec<u8>, WriteType, Vec<u8>)> {
    let mut per_key: BTreeMap<Vec<u8>, Vec<(WriteType, Vec<u8>)>> = BTreeMap::new();
    for (_, op) in ops.iter().filter(|(c, _)| *c == cf) {
        let (k, e) = match op {
            Op::Put(k, v) => (k, (WriteType::Put, v.clone())),
            Op::Delete(k) => (k, (WriteType::Delete, Vec::new())),
            Op::SingleDelete(k) => (k, (WriteType::SingleDelete, Vec::new())),
            Op::Merge(k, v) => (k, (WriteType::Merge, v.clone())),
            Op::DeleteRange(..) => continue,
        };
        let list = per_key.entry(k.clone()).or_default();
        if overwrite && e.0 != WriteType::Merge {
            list.clear();
        }
        list.push(e);
    }
    per_key
        .into_iter()
        .flat_map(|(k, l)| l.into_iter().map(move |(kind, v)| (k.clone(), kind, v)))
        .collect()
}

/// A random operation in family `cf` (single deletes only with `sd`).
fn random_op(rng: &mut SmallRng, sd: bool) -> Op {
    match rng.gen_range(0..if sd { 10 } else { 9 }) {
        0..=3 => Op::Put(key(rng), value(rng)),
        4 => Op::Delete(key(rng)),
        5..=7 => Op::Merge(key(rng), value(rng)),
        8 => {
            let (a, b) = (key(rng), key(rng));
            let (s, mut e) = if a <= b { (a, b) } else { (b, a) };
            if rng.gen_bool(0.5) && e.len() > 2 {
                e.truncate(2); // wide: "k0" .. "k2" are not keys
                e.push(b'9');
            }
            Op::DeleteRange(s.clone(), e.max(s))
        }
        _ => Op::SingleDelete(key(rng)),
    }
}

struct Fixture {
    db: Db,
    cfs: Vec<Cf>,
    /// The DB's latest state per family.
    model: Vec<Map>,
}

impl Fixture {
    fn db_write(&mut self, rng: &mut SmallRng) {
        let c = rng.gen_range(0..FAMILIES);
        let op = random_op(rng, false);
        let cf = &self.cfs[c];
        match &op {
            Op::Put(k, v) => self.db.put_cf(cf, k, v).unwrap(),
            Op::Delete(k) => self.db.delete_cf(cf, k).unwrap(),
            Op::Merge(k, v) => self.db.merge_cf(cf, k, v).unwrap(),
            Op::DeleteRange(s, e) => self.db.delete_range_cf(cf, s, e).unwrap(),
            Op::SingleDelete(_) => unreachable!(),
        }
        apply(&mut self.model[c], &op);
    }
}

/// Adds `op` in family `c` to the batch, through the plain call for the
/// default family half of the time.
fn wb_add(wb: &mut WriteBatchWithIndex, rng: &mut SmallRng, cfs: &[Cf], c: usize, op: &Op) {
    let plain = c == 0 && rng.gen_bool(0.5);
    let cf = &cfs[c];
    match op {
        Op::Put(k, v) if plain => wb.put(k, v),
        Op::Put(k, v) => wb.put_cf(cf, k, v),
        Op::Delete(k) if plain => wb.delete(k),
        Op::Delete(k) => wb.delete_cf(cf, k),
        Op::SingleDelete(k) if plain => wb.single_delete(k),
        Op::SingleDelete(k) => wb.single_delete_cf(cf, k),
        Op::Merge(k, v) if plain => wb.merge(k, v),
        Op::Merge(k, v) => wb.merge_cf(cf, k, v),
        Op::DeleteRange(s, e) if plain => wb.delete_range(s, e),
        Op::DeleteRange(s, e) => wb.delete_range_cf(cf, s, e),
    }
}

/// The expected view of family `c`: the batch over `base`.
fn expected(base: &Map, ops: &[(usize, Op)], c: usize) -> Map {
    let mut m = base.clone();
    for (_, op) in ops.iter().filter(|(x, _)| *x == c) {
        apply(&mut m, op);
    }
    m
}

fn in_bounds(k: &[u8], lower: &Option<Vec<u8>>, upper: &Option<Vec<u8>>) -> bool {
    lower.as_deref().is_none_or(|l| k >= l) && upper.as_deref().is_none_or(|u| k < u)
}

fn random_bound(rng: &mut SmallRng) -> Option<Vec<u8>> {
    rng.gen_bool(0.4).then(|| key(rng))
}

/// Checks `it` at `pos` of `keys` (`None`: invalid).
fn check_at(it: &WbwiIterator<'_>, view: &[(Vec<u8>, Vec<u8>)], pos: Option<usize>, what: &str) {
    it.status().unwrap();
    match pos {
        None => assert!(!it.valid(), "{what}: valid at {:?}", it.key()),
        Some(i) => {
            assert!(it.valid(), "{what}: invalid, expected {:?}", view[i].0);
            assert_eq!(
                (it.key(), it.value()),
                (view[i].0.as_slice(), view[i].1.as_slice()),
                "{what}"
            );
        }
    }
}

/// Full scans both ways and a random walk of cursor moves, against `view`.
fn check_cursor(mut it: WbwiIterator<'_>, view: &Map, rng: &mut SmallRng, what: &str) {
    let v: Vec<(Vec<u8>, Vec<u8>)> = view.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut got = Vec::new();
    it.seek_to_first();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(got, v, "{what}: forward scan");
    got.clear();
    it.seek_to_last();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    got.reverse();
    assert_eq!(got, v, "{what}: reverse scan");
    let mut pos: Option<usize> = None;
    for step in 0..40 {
        let what = format!("{what}, step {step}");
        match rng.gen_range(0..6) {
            0 => {
                let t = key(rng);
                it.seek(&t);
                pos = v.iter().position(|(k, _)| *k >= t);
            }
            1 => {
                let t = key(rng);
                it.seek_for_prev(&t);
                pos = v.iter().rposition(|(k, _)| *k <= t);
            }
            2 => {
                it.seek_to_first();
                pos = (!v.is_empty()).then_some(0);
            }
            3 => {
                it.seek_to_last();
                pos = v.len().checked_sub(1);
            }
            4 if pos.is_some() => {
                it.next();
                pos = pos.map(|p| p + 1).filter(|&p| p < v.len());
            }
            _ if pos.is_some() => {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
            _ => continue,
        }
        check_at(&it, &v, pos, &what);
    }
}

fn read_opts<'a>(
    snap: Option<&'a Snapshot>,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
) -> ReadOptions<'a> {
    let mut ro = ReadOptions::new();
    ro.snapshot = snap;
    ro.iterate_lower_bound = lower;
    ro.iterate_upper_bound = upper;
    ro
}

/// Every read of `wb` against the model, at the latest state and at
/// `snap` (whose model is `at_snap`).
fn check_reads(
    f: &Fixture,
    wb: &WriteBatchWithIndex,
    ops: &[(usize, Op)],
    overwrite: bool,
    snap: &Snapshot,
    at_snap: &[Map],
    rng: &mut SmallRng,
) {
    let all_keys: Vec<Vec<u8>> = (0..30)
        .flat_map(|i| {
            [
                format!("k{i:02}").into_bytes(),
                format!("k{i:02}a").into_bytes(),
            ]
        })
        .collect();
    assert_eq!(wb.len(), ops.len());
    assert_eq!(wb.is_empty(), ops.is_empty());
    assert_eq!(wb.write_batch().len(), ops.len());
    for (c, cf) in f.cfs.iter().enumerate() {
        assert_eq!(
            wb.batch_entries(cf),
            entries(ops, c, overwrite),
            "cf {c}: entries"
        );
        let views = [
            (None, expected(&f.model[c], ops, c)),
            (Some(snap), expected(&at_snap[c], ops, c)),
        ];
        for (s, view) in &views {
            let ro = read_opts(*s, None, None);
            for k in &all_keys {
                assert_eq!(
                    wb.get_from_batch_and_db(&f.db, &ro, cf, k)
                        .unwrap()
                        .as_ref(),
                    view.get(k),
                    "cf {c}, key {:?}, snapshot {}",
                    String::from_utf8_lossy(k),
                    s.is_some()
                );
            }
            for _ in 0..3 {
                let (lower, upper) = (random_bound(rng), random_bound(rng));
                let bounded: Map = view
                    .iter()
                    .filter(|(k, _)| in_bounds(k, &lower, &upper))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let what = format!(
                    "cf {c}, snapshot {}, bounds {lower:?}..{upper:?}",
                    s.is_some()
                );
                let ro = read_opts(*s, lower, upper);
                check_cursor(wb.iter_with_base(&f.db, &ro, cf), &bounded, rng, &what);
            }
        }
        for k in &all_keys {
            assert_eq!(
                wb.get_from_batch(cf, k).unwrap(),
                batch_read(ops, c, k),
                "cf {c}: batch read of {:?}",
                String::from_utf8_lossy(k)
            );
        }
        // A range from both ends, at the latest state.
        let (a, b) = (key(rng), key(rng));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        let want: Vec<(Vec<u8>, Vec<u8>)> = views[0]
            .1
            .range(a.clone()..=b.clone())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut r = wb.range_with_base(&f.db, cf, a.as_slice()..=b.as_slice());
        let (mut front, mut back) = (Vec::new(), Vec::new());
        loop {
            let item = if rng.gen_bool(0.5) {
                r.next().map(|x| (x, true))
            } else {
                r.next_back().map(|x| (x, false))
            };
            match item {
                None => break,
                Some((x, true)) => front.push(x.unwrap()),
                Some((x, false)) => back.push(x.unwrap()),
            }
        }
        back.reverse();
        front.extend(back);
        assert_eq!(front, want, "cf {c}: range {a:?}..={b:?}");
    }
}

fn run(seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        cf: cf_options(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut cfs = vec![db.default_cf()];
    for name in ["one", "two"] {
        cfs.push(db.create_cf(name, cf_options()).unwrap());
    }
    let mut f = Fixture {
        db,
        cfs,
        model: vec![Map::new(); FAMILIES],
    };
    for round in 0..4 {
        // The DB: tables, then the memtable; a snapshot; newer writes.
        for _ in 0..rng.gen_range(20..80) {
            f.db_write(&mut rng);
        }
        if rng.gen_bool(0.7) {
            for cf in &f.cfs {
                f.db.flush_cf(cf).unwrap();
                if rng.gen_bool(0.3) {
                    f.db.compact_range_cf(cf, None, None).unwrap();
                }
            }
        }
        for _ in 0..rng.gen_range(0..40) {
            f.db_write(&mut rng);
        }
        let snap = f.db.snapshot();
        let at_snap = f.model.clone();
        for _ in 0..rng.gen_range(0..30) {
            f.db_write(&mut rng);
        }
        // The batch, with savepoints.
        let overwrite = rng.gen_bool(0.5);
        let mut wb = if overwrite || rng.gen_bool(0.5) {
            WriteBatchWithIndex::with_overwrite_key(overwrite)
        } else {
            WriteBatchWithIndex::new()
        };
        let mut ops: Vec<(usize, Op)> = Vec::new();
        let mut marks: Vec<usize> = Vec::new();
        for _ in 0..rng.gen_range(0..60) {
            match rng.gen_range(0..20) {
                0 => {
                    wb.set_savepoint();
                    marks.push(ops.len());
                }
                1 => {
                    let r = wb.pop_savepoint();
                    assert_eq!(r.is_ok(), marks.pop().is_some());
                }
                2 => {
                    let r = wb.rollback_to_savepoint();
                    match marks.pop() {
                        Some(n) => {
                            r.unwrap();
                            ops.truncate(n);
                        }
                        None => assert!(r.is_err()),
                    }
                }
                _ => {
                    let c = rng.gen_range(0..FAMILIES);
                    let op = random_op(&mut rng, true);
                    wb_add(&mut wb, &mut rng, &f.cfs, c, &op);
                    ops.push((c, op));
                }
            }
        }
        check_reads(&f, &wb, &ops, overwrite, &snap, &at_snap, &mut rng);
        // The write lands where the reads said.
        let predicted: Vec<Map> = (0..FAMILIES)
            .map(|c| expected(&f.model[c], &ops, c))
            .collect();
        let read: Vec<Map> = f
            .cfs
            .iter()
            .map(|cf| {
                wb.range_with_base(&f.db, cf, ..)
                    .map(Result::unwrap)
                    .collect()
            })
            .collect();
        let batch = if rng.gen_bool(0.5) {
            let b = wb.write_batch().clone();
            wb.clear();
            assert!(wb.is_empty() && wb.batch_entries(&f.cfs[0]).is_empty());
            b
        } else {
            wb.into_write_batch()
        };
        f.db.write(batch, &WriteOptions::default()).unwrap();
        for c in 0..FAMILIES {
            let got: Map = f.db.range_cf(&f.cfs[c], ..).map(Result::unwrap).collect();
            assert_eq!(
                got, read[c],
                "seed {seed}, round {round}, cf {c}: after the write"
            );
            assert_eq!(
                got, predicted[c],
                "seed {seed}, round {round}, cf {c}: the model"
            );
        }
        f.model = predicted;
        drop(snap);
        // Single deletes of the batch may have broken their contract (a
        // key written more than once): overwrite them with their state so
        // that later flushes cannot bring older values back.
        for (c, op) in &ops {
            if let Op::SingleDelete(k) = op {
                match f.model[*c].get(k) {
                    Some(v) => f.db.put_cf(&f.cfs[*c], k, v).unwrap(),
                    None => f.db.delete_cf(&f.cfs[*c], k).unwrap(),
                }
            }
        }
    }
}

#[test]
fn write_batch_with_index_matches_the_model() {
    let seeds: Vec<u64> = match std::env::var("WBWI_SEED") {
        Ok(s) => vec![s.parse().unwrap()],
        Err(_) => {
            let n = std::env::var("WBWI_SEEDS").map_or(12, |s| s.parse().unwrap());
            (0..n).collect()
        }
    };
    for seed in seeds {
        eprintln!("seed {seed}");
        run(seed);
    }
}

/// What the reads refuse: `prefix_same_as_start` on a cursor, a dropped
/// family's handle; merges without an operator fail the read, as
/// `Db::get` does.
#[test]
fn refusals_and_failed_merges() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"0").unwrap();
    let mut wb = WriteBatchWithIndex::new();
    wb.put(b"b", b"1");
    wb.merge(b"b", b"2");
    wb.merge(b"a", b"3");
    let merge_failed = |e: Error| assert!(matches!(e, Error::MergeFailed(_)), "{e}");
    merge_failed(wb.get_from_batch(&cf, b"b").unwrap_err());
    let ro = ReadOptions::new();
    merge_failed(wb.get_from_batch_and_db(&db, &ro, &cf, b"a").unwrap_err());
    merge_failed(wb.get_from_batch_and_db(&db, &ro, &cf, b"b").unwrap_err());
    let mut it = wb.iter_with_base(&db, &ro, &cf);
    it.seek_to_first();
    assert!(!it.valid());
    merge_failed(it.status().unwrap_err());
    drop(it);

    let mut prefix = ReadOptions::new();
    prefix.prefix_same_as_start = true;
    let mut it = wb.iter_with_base(&db, &prefix, &cf);
    it.seek(b"a");
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::InvalidArgument(_))));
    drop(it);

    let gone = db.create_cf("gone", CfOptions::default()).unwrap();
    db.drop_cf(&gone).unwrap();
    let mut wb = WriteBatchWithIndex::new();
    wb.put_cf(&gone, b"k", b"v");
    assert!(matches!(
        wb.get_from_batch_and_db(&db, &ro, &gone, b"k"),
        Err(Error::InvalidArgument(_))
    ));
    let mut it = wb.iter_with_base(&db, &ro, &gone);
    it.seek_to_first();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::InvalidArgument(_))));
    drop(it);
    let mut r = wb.range_with_base(&db, &gone, ..);
    assert!(matches!(r.next(), Some(Err(Error::InvalidArgument(_)))));
    assert!(r.next().is_none());
}

/// A cursor reads the snapshot it was given, whatever is written after;
/// it is unpositioned until a seek.
#[test]
fn cursors_read_their_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        create_if_missing: true,
        cf: cf_options(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let cf = db.default_cf();
    db.put(b"a", b"0").unwrap();
    db.put(b"c", b"0").unwrap();
    let snap = db.snapshot();
    db.put(b"a", b"1").unwrap();
    db.delete(b"c").unwrap();
    db.put(b"d", b"1").unwrap();
    let mut wb = WriteBatchWithIndex::new();
    wb.merge(b"a", b"m");
    wb.put(b"b", b"2");
    let scan = |ro: &ReadOptions<'_>| -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut it = wb.iter_with_base(&db, ro, &cf);
        assert!(!it.valid());
        let mut out = Vec::new();
        it.seek(b"");
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status().unwrap();
        out
    };
    let kv = |k: &str, v: &str| (k.as_bytes().to_vec(), v.as_bytes().to_vec());
    let mut at = ReadOptions::new();
    at.snapshot = Some(&snap);
    assert_eq!(scan(&at), vec![kv("a", "0,m"), kv("b", "2"), kv("c", "0")]);
    assert_eq!(
        scan(&ReadOptions::new()),
        vec![kv("a", "1,m"), kv("b", "2"), kv("d", "1")]
    );
}
