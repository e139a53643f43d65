use super::*;
use crate::base::make_internal_key;

/// A sorted vector of (internal key, value) as an iterator; a test double
/// shared by iterator tests.
pub(crate) struct VecIter {
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
    pub pos: Option<usize>,
}

impl VecIter {
    pub(crate) fn new(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Self {
        VecIter { entries, pos: None }
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos.is_some()
    }
    fn seek_to_first(&mut self) {
        self.pos = if self.entries.is_empty() {
            None
        } else {
            Some(0)
        };
    }
    fn seek_to_last(&mut self) {
        self.pos = self.entries.len().checked_sub(1);
    }
    fn seek(&mut self, t: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| compare_internal(k, t) == Ordering::Less);
        self.pos = (i < self.entries.len()).then_some(i);
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        let i = self
            .entries
            .partition_point(|(k, _)| compare_internal(k, t) != Ordering::Greater);
        self.pos = i.checked_sub(1);
    }
    fn next(&mut self) {
        self.pos = self
            .pos
            .and_then(|p| (p + 1 < self.entries.len()).then_some(p + 1));
    }
    fn prev(&mut self) {
        self.pos = self.pos.and_then(|p| p.checked_sub(1));
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos.unwrap_or(0)].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos.unwrap_or(0)].1
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

struct Files(Vec<Vec<(Vec<u8>, Vec<u8>)>>);

impl LevelFiles for Files {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn largest(&self, i: usize) -> &[u8] {
        &self.0[i].last().unwrap().0
    }
    fn open(&self, i: usize) -> Result<Box<dyn InternalIterator>> {
        Ok(Box::new(VecIter::new(self.0[i].clone())))
    }
}

fn ik(n: u32) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, format!("k{n:05}").as_bytes(), 1, 1);
    k
}

#[test]
fn concatenates_and_seeks() {
    let files: Vec<Vec<(Vec<u8>, Vec<u8>)>> = (0..5)
        .map(|f| {
            (0..10)
                .map(|i| (ik(f * 20 + i * 2), vec![f as u8]))
                .collect()
        })
        .collect();
    let all: Vec<Vec<u8>> = files.iter().flatten().map(|(k, _)| k.clone()).collect();
    let mut it = LevelIterator::new(Files(files));
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push(it.key().to_vec());
        it.next();
    }
    assert_eq!(got, all);
    it.seek_to_last();
    let mut back = Vec::new();
    while it.valid() {
        back.push(it.key().to_vec());
        it.prev();
    }
    back.reverse();
    assert_eq!(back, all);
    // Seek into a gap between files: k00019 lies between file 0 and 1.
    it.seek(&ik(19));
    assert_eq!(it.key(), &ik(20)[..]);
    it.seek_for_prev(&ik(19));
    assert_eq!(it.key(), &ik(18)[..]);
    it.seek(&ik(1000));
    assert!(!it.valid());
    it.seek_for_prev(&ik(1000));
    assert_eq!(it.key(), &ik(98)[..]);
    it.prev();
    assert_eq!(it.key(), &ik(96)[..]);
    assert!(it.status().is_ok());
}
