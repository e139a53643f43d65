use super::*;
use crate::base::make_internal_key;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// A sorted vector as an `InternalIterator`; optionally fails (turns
/// invalid with an error) when it would land on entry `fail_at`.
struct VecIter {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    /// `entries.len()` means invalid.
    pos: usize,
    fail_at: Option<usize>,
    err: Option<Error>,
}

impl VecIter {
    fn new(mut entries: Vec<(Vec<u8>, Vec<u8>)>) -> VecIter {
        entries.sort_by(|a, b| compare_internal(&a.0, &b.0));
        let pos = entries.len();
        VecIter {
            entries,
            pos,
            fail_at: None,
            err: None,
        }
    }
    fn land(&mut self, pos: Option<usize>) {
        self.err = None;
        self.pos = pos.unwrap_or(self.entries.len());
        if self.fail_at.is_some() && self.fail_at == pos {
            self.err = Some(Error::corruption(
                "child.sst",
                pos.unwrap_or(0) as u64,
                "test",
            ));
            self.pos = self.entries.len();
        }
    }
    fn lower_bound(&self, t: &[u8]) -> usize {
        self.entries
            .partition_point(|(k, _)| compare_internal(k, t) == Ordering::Less)
    }
}

impl InternalIterator for VecIter {
    fn valid(&self) -> bool {
        self.pos < self.entries.len()
    }
    fn seek_to_first(&mut self) {
        self.land((!self.entries.is_empty()).then_some(0));
    }
    fn seek_to_last(&mut self) {
        self.land(self.entries.len().checked_sub(1));
    }
    fn seek(&mut self, t: &[u8]) {
        let p = self.lower_bound(t);
        self.land((p < self.entries.len()).then_some(p));
    }
    fn seek_for_prev(&mut self, t: &[u8]) {
        let p = self
            .entries
            .partition_point(|(k, _)| compare_internal(k, t) != Ordering::Greater);
        self.land(p.checked_sub(1));
    }
    fn next(&mut self) {
        assert!(self.valid());
        let p = self.pos + 1;
        self.land((p < self.entries.len()).then_some(p));
    }
    fn prev(&mut self) {
        assert!(self.valid());
        self.land(self.pos.checked_sub(1));
    }
    fn key(&self) -> &[u8] {
        &self.entries[self.pos].0
    }
    fn value(&self) -> &[u8] {
        &self.entries[self.pos].1
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

fn ikey(uk: &[u8], seq: u64) -> Vec<u8> {
    let mut k = Vec::new();
    make_internal_key(&mut k, uk, seq, 1);
    k
}

fn random_key(rng: &mut SmallRng) -> Vec<u8> {
    let uk = [rng.gen_range(b'a'..b'h'), rng.gen_range(b'a'..b'h')];
    ikey(&uk[..rng.gen_range(1..=2)], rng.gen_range(0..4))
}

fn collect_forward(it: &mut MergingIterator) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next();
    }
    out
}

#[test]
fn no_children_and_empty_children() {
    let mut it = MergingIterator::new(Vec::new());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek(&ikey(b"a", 1));
    assert!(!it.valid());
    assert!(it.status().is_ok());
    let mut it = MergingIterator::new(vec![
        Box::new(VecIter::new(vec![])),
        Box::new(VecIter::new(vec![(ikey(b"b", 1), b"x".to_vec())])),
        Box::new(VecIter::new(vec![])),
    ]);
    assert_eq!(collect_forward(&mut it), vec![ikey(b"b", 1)]);
    it.seek_to_last();
    assert_eq!(it.value(), b"x");
    it.prev();
    assert!(!it.valid());
}

#[test]
fn newer_versions_first_and_ties_by_child_index() {
    let mut it = MergingIterator::new(vec![
        Box::new(VecIter::new(vec![
            (ikey(b"a", 5), b"c0".to_vec()),
            (ikey(b"b", 1), b"c0".to_vec()),
        ])),
        Box::new(VecIter::new(vec![
            (ikey(b"a", 9), b"c1".to_vec()),
            (ikey(b"b", 1), b"c1".to_vec()),
        ])),
    ]);
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(
        got,
        vec![
            (ikey(b"a", 9), b"c1".to_vec()),
            (ikey(b"a", 5), b"c0".to_vec()),
            (ikey(b"b", 1), b"c0".to_vec()),
            (ikey(b"b", 1), b"c1".to_vec()),
        ]
    );
    // Backward retraces forward, and switching in the middle of the tie works.
    it.seek_to_last();
    assert_eq!(it.value(), b"c1");
    it.prev();
    assert_eq!(it.value(), b"c0");
    assert_eq!(it.key(), &ikey(b"b", 1)[..]);
    it.next();
    assert_eq!(it.value(), b"c1");
    it.prev();
    it.prev();
    assert_eq!(it.key(), &ikey(b"a", 5)[..]);
}

/// Random children (with some keys shared between children), random
/// seeks and next/prev walks, checked against the merged sorted vector.
#[test]
fn randomized_against_model() {
    let seed: u64 = rand::random();
    println!("seed = {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let (rounds, steps) = if cfg!(miri) { (4, 60) } else { (40, 300) };
    for _round in 0..rounds {
        let nchildren = rng.gen_range(0..6);
        let mut model: Vec<(Vec<u8>, usize)> = Vec::new();
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
        for c in 0..nchildren {
            let mut keys: Vec<Vec<u8>> = (0..rng.gen_range(0..30))
                .map(|_| random_key(&mut rng))
                .collect();
            keys.sort_by(|a, b| compare_internal(a, b));
            keys.dedup();
            for k in &keys {
                model.push((k.clone(), c));
            }
            children.push(Box::new(VecIter::new(
                keys.into_iter()
                    .map(|k| (k, c.to_string().into_bytes()))
                    .collect(),
            )));
        }
        model.sort_by(|a, b| compare_internal(&a.0, &b.0).then(a.1.cmp(&b.1)));
        let mut it = MergingIterator::new(children);
        let mut pos: Option<usize> = None;
        for _step in 0..steps {
            match rng.gen_range(0..10) {
                0 => {
                    it.seek_to_first();
                    pos = (!model.is_empty()).then_some(0);
                }
                1 => {
                    it.seek_to_last();
                    pos = model.len().checked_sub(1);
                }
                2 => {
                    let t = random_key(&mut rng);
                    it.seek(&t);
                    let p =
                        model.partition_point(|(k, _)| compare_internal(k, &t) == Ordering::Less);
                    pos = (p < model.len()).then_some(p);
                }
                3 => {
                    let t = random_key(&mut rng);
                    it.seek_for_prev(&t);
                    let p = model
                        .partition_point(|(k, _)| compare_internal(k, &t) != Ordering::Greater);
                    pos = p.checked_sub(1);
                }
                4..=6 => {
                    if let Some(p) = pos {
                        it.next();
                        pos = (p + 1 < model.len()).then_some(p + 1);
                    }
                }
                _ => {
                    if let Some(p) = pos {
                        it.prev();
                        pos = p.checked_sub(1);
                    }
                }
            }
            match pos {
                None => assert!(!it.valid()),
                Some(p) => {
                    assert!(it.valid());
                    assert_eq!(it.key(), &model[p].0[..], "seed {seed}");
                    assert_eq!(it.value(), model[p].1.to_string().as_bytes(), "seed {seed}");
                }
            }
            assert!(it.status().is_ok());
        }
    }
}

#[test]
fn child_error_stops_iteration_and_is_reported() {
    let mut bad = VecIter::new(
        (0..5u8)
            .map(|i| (ikey(&[b'a' + 2 * i], 1), vec![]))
            .collect(),
    );
    bad.fail_at = Some(3); // fails when reaching "g"
    let good = VecIter::new(
        (0..5u8)
            .map(|i| (ikey(&[b'b' + 2 * i], 1), vec![]))
            .collect(),
    );
    let mut it = MergingIterator::new(vec![Box::new(good), Box::new(bad)]);
    it.seek_to_first();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key()[0]);
        it.next();
    }
    // Leaving "e" the bad child fails: "f" must not be returned as if the
    // bad child had nothing more; the iterator stops with the error.
    assert_eq!(seen, b"abcde".to_vec());
    let err = it.status().unwrap_err();
    assert!(err.is_corruption());
    // A seek that avoids the bad entry works again.
    it.seek(&ikey(b"h", 9));
    assert!(it.status().is_ok());
    assert!(it.valid());
    assert_eq!(it.key()[0], b'h');
    it.next();
    assert_eq!(it.key()[0], b'i');
    // Seeking onto the bad entry fails again.
    it.seek(&ikey(b"f", 9));
    assert!(!it.valid());
    assert!(it.status().is_err());
}
