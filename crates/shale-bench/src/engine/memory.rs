//! `--engine=memory`: a BTreeMap behind a RwLock, for tests and for
//! measuring the driver's own overhead. Nothing is persisted, but handles
//! opened on the same path in one process share the map (so "reopen"
//! keeps the data and "destroy" clears it, like an on-disk engine). A
//! range deletion removes the keys in its range at once (`start >= end`
//! removes nothing). Thread-safe: readers share the lock, writers take it exclusively.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use super::{Batch, BatchOp, Engine, EngineIter, IterOpts, Report, WriteOpts};
use crate::error::Result;

type Map = Arc<RwLock<BTreeMap<Vec<u8>, Vec<u8>>>>;

/// Removes every key in `[start, end)` of `m`.
fn remove_range(m: &mut BTreeMap<Vec<u8>, Vec<u8>>, start: &[u8], end: &[u8]) {
    if start >= end {
        return;
    }
    let doomed: Vec<Vec<u8>> = m
        .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
        .map(|(k, _)| k.clone())
        .collect();
    for k in doomed {
        m.remove(&k);
    }
}

fn registry() -> &'static Mutex<HashMap<PathBuf, Map>> {
    static R: OnceLock<Mutex<HashMap<PathBuf, Map>>> = OnceLock::new();
    R.get_or_init(Default::default)
}

/// The in-memory engine.
#[derive(Debug)]
pub struct MemoryEngine {
    map: Map,
}

impl MemoryEngine {
    /// Opens (or creates) the map for `path`.
    pub fn open(path: &Path) -> MemoryEngine {
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        let map = r.entry(path.to_path_buf()).or_default().clone();
        MemoryEngine { map }
    }

    /// Forgets the map for `path`.
    pub fn destroy(path: &Path) {
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(path);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_lock(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
}

impl Engine for MemoryEngine {
    fn name(&self) -> &'static str {
        "memory"
    }

    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").to_string()
    }

    /// One key space: `check_flags` refuses `--num_column_families` > 1, so
    /// every `cf` argument is 0.
    fn num_cfs(&self) -> usize {
        1
    }

    fn put(&self, cf: usize, key: &[u8], value: &[u8], _wo: &WriteOpts) -> Result<()> {
        debug_assert_eq!(cf, 0);
        self.write_lock().insert(key.to_vec(), value.to_vec());
        Ok(())
    }

    fn write(&self, batch: &Batch, _wo: &WriteOpts) -> Result<()> {
        let mut m = self.write_lock();
        for op in batch.iter() {
            match op {
                BatchOp::Put(_, k, v) => {
                    m.insert(k.to_vec(), v.to_vec());
                }
                BatchOp::Delete(_, k) => {
                    m.remove(k);
                }
                BatchOp::DeleteRange(_, s, e) => remove_range(&mut m, s, e),
            }
        }
        Ok(())
    }

    fn delete(&self, cf: usize, key: &[u8], _wo: &WriteOpts) -> Result<()> {
        debug_assert_eq!(cf, 0);
        self.write_lock().remove(key);
        Ok(())
    }

    fn delete_range(&self, cf: usize, start: &[u8], end: &[u8], _wo: &WriteOpts) -> Result<()> {
        debug_assert_eq!(cf, 0);
        remove_range(&mut self.write_lock(), start, end);
        Ok(())
    }

    fn get(&self, cf: usize, key: &[u8], out: &mut Vec<u8>, _verify: bool) -> Result<bool> {
        debug_assert_eq!(cf, 0);
        Ok(super::copy_found(self.read().get(key), out))
    }

    fn multi_get(
        &self,
        cf: usize,
        keys: &[&[u8]],
        found: &mut dyn FnMut(usize, &[u8]),
    ) -> Result<()> {
        debug_assert_eq!(cf, 0);
        let m = self.read();
        for (i, k) in keys.iter().enumerate() {
            if let Some(v) = m.get(*k) {
                found(i, v);
            }
        }
        Ok(())
    }

    fn new_iterator(&self, cf: usize, opts: &IterOpts) -> Result<Box<dyn EngineIter + '_>> {
        debug_assert_eq!(cf, 0);
        Ok(Box::new(MemIter {
            map: self.map.clone(),
            opts: opts.clone(),
            cur: None,
        }))
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn compact_range(&self, _start: Option<&[u8]>, _end: Option<&[u8]>) -> Result<()> {
        Ok(())
    }

    fn wait_for_compaction(&self) -> Result<()> {
        Ok(())
    }

    fn property(&self, name: &str) -> Option<String> {
        (name == "memory.num-entries").then(|| self.read().len().to_string())
    }

    fn report(&self, which: Report) -> Option<String> {
        let m = self.read();
        let bytes: usize = m.iter().map(|(k, v)| k.len() + v.len()).sum();
        Some(match which {
            Report::Stats => format!("memory engine: {} entries, {} bytes", m.len(), bytes),
            Report::LevelStats => "Level Files Size(MB)\n--------------------\n".to_string(),
            Report::SsTables | Report::Bloom => String::new(),
        })
    }

    fn stall_micros(&self) -> Option<u64> {
        Some(0)
    }

    fn close(&self) -> Result<()> {
        Ok(())
    }
}

/// Iterator over a snapshot-free view: it re-looks-up its position on every
/// step (simple and correct under concurrent writes, slow by design).
struct MemIter {
    map: Map,
    opts: IterOpts,
    cur: Option<(Vec<u8>, Vec<u8>)>,
}

impl MemIter {
    fn set(&mut self, e: Option<(&Vec<u8>, &Vec<u8>)>) {
        self.cur = e.and_then(|(k, v)| {
            let below = self.opts.lower.as_ref().is_some_and(|l| k < l);
            let above = self.opts.upper.as_ref().is_some_and(|u| k >= u);
            (!below && !above).then(|| (k.clone(), v.clone()))
        });
    }

    fn forward(&mut self, from: Bound<&[u8]>) {
        let m = self.map.clone();
        let g = m.read().unwrap_or_else(|e| e.into_inner());
        let from = match (from, &self.opts.lower) {
            (Bound::Unbounded, Some(l)) => Bound::Included(l.as_slice()),
            (Bound::Included(k), Some(l)) if k < l.as_slice() => Bound::Included(l.as_slice()),
            (b, _) => b,
        };
        self.set(g.range::<[u8], _>((from, Bound::Unbounded)).next());
    }

    fn backward(&mut self, to: Bound<&[u8]>) {
        let m = self.map.clone();
        let g = m.read().unwrap_or_else(|e| e.into_inner());
        let to = match (to, &self.opts.upper) {
            (Bound::Unbounded, Some(u)) => Bound::Excluded(u.as_slice()),
            (Bound::Included(k), Some(u)) if k >= u.as_slice() => Bound::Excluded(u.as_slice()),
            (b, _) => b,
        };
        self.set(g.range::<[u8], _>((Bound::Unbounded, to)).next_back());
    }
}

impl EngineIter for MemIter {
    fn seek(&mut self, key: &[u8]) {
        self.forward(Bound::Included(key));
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        self.backward(Bound::Included(key));
    }
    fn seek_to_first(&mut self) {
        self.forward(Bound::Unbounded);
    }
    fn seek_to_last(&mut self) {
        self.backward(Bound::Unbounded);
    }
    fn next(&mut self) {
        if let Some((k, _)) = self.cur.take() {
            self.forward(Bound::Excluded(&k));
        }
    }
    fn prev(&mut self) {
        if let Some((k, _)) = self.cur.take() {
            self.backward(Bound::Excluded(&k));
        }
    }
    fn valid(&self) -> bool {
        self.cur.is_some()
    }
    fn key(&self) -> &[u8] {
        self.cur.as_ref().map(|c| c.0.as_slice()).unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.cur.as_ref().map(|c| c.1.as_slice()).unwrap_or(&[])
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_operations_and_iteration() {
        let p = Path::new("/memtest/engine-model");
        let e = MemoryEngine::open(p);
        let wo = WriteOpts::default();
        for i in 0..10u8 {
            e.put(0, &[i], &[i, i], &wo).unwrap();
        }
        e.delete(0, &[3], &wo).unwrap();
        let mut out = Vec::new();
        assert!(e.get(0, &[4], &mut out, true).unwrap());
        assert_eq!(out, vec![4, 4]);
        assert!(!e.get(0, &[3], &mut out, true).unwrap());
        let mut found = Vec::new();
        e.multi_get(0, &[&[1], &[3], &[9]], &mut |i, v| {
            found.push((i, v.to_vec()))
        })
        .unwrap();
        assert_eq!(found, vec![(0, vec![1, 1]), (2, vec![9, 9])]);

        let mut it = e.new_iterator(0, &IterOpts::default()).unwrap();
        it.seek(&[3]);
        assert_eq!(it.key(), &[4]);
        it.prev();
        assert_eq!(it.key(), &[2]);
        it.seek_to_last();
        assert_eq!(it.key(), &[9]);
        it.next();
        assert!(!it.valid());
        drop(it);

        let bounded = IterOpts {
            lower: Some(vec![2]),
            upper: Some(vec![6]),
            verify_checksums: true,
            ..IterOpts::default()
        };
        let mut it = e.new_iterator(0, &bounded).unwrap();
        it.seek_to_first();
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(it.key()[0]);
            it.next();
        }
        assert_eq!(keys, vec![2, 4, 5]);
        it.seek_to_last();
        assert_eq!(it.key(), &[5]);
        it.seek_for_prev(&[9]);
        assert_eq!(it.key(), &[5]);
        drop(it);

        // Range deletions: [5, 7) goes, an empty or inverted range is a no-op.
        e.delete_range(0, &[5], &[7], &wo).unwrap();
        e.delete_range(0, &[8], &[8], &wo).unwrap();
        e.delete_range(0, &[9], &[1], &wo).unwrap();
        let mut b = Batch::default();
        b.put(0, &[5], &[0]);
        b.delete_range(0, &[1], &[2]);
        e.write(&b, &wo).unwrap();
        let mut it = e.new_iterator(0, &IterOpts::default()).unwrap();
        it.seek_to_first();
        let mut keys = Vec::new();
        while it.valid() {
            keys.push(it.key()[0]);
            it.next();
        }
        assert_eq!(keys, vec![0, 2, 4, 5, 7, 8, 9]);
        drop(it);

        // Same path shares the map; destroy clears it.
        let e2 = MemoryEngine::open(p);
        assert!(e2.get(0, &[0], &mut out, true).unwrap());
        MemoryEngine::destroy(p);
        let e3 = MemoryEngine::open(p);
        assert!(!e3.get(0, &[0], &mut out, true).unwrap());
    }
}
