use super::*;
use crate::base::pack_trailer;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn ikey(user_key: &[u8], trailer: u64) -> Vec<u8> {
    let mut v = user_key.to_vec();
    v.extend_from_slice(&trailer.to_le_bytes());
    v
}

/// Model order for internal keys.
#[derive(PartialEq, Eq, Clone, Debug)]
struct K(Vec<u8>);
impl PartialOrd for K {
    fn partial_cmp(&self, o: &K) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for K {
    fn cmp(&self, o: &K) -> CmpOrdering {
        compare_internal(&self.0, &o.0)
    }
}

fn value_for(key: &[u8]) -> Vec<u8> {
    // Long enough to catch torn reads; derived from the key.
    let mut v = Vec::new();
    for i in 0..(key.len() * 3 % 50 + 1) {
        v.push(key[i % key.len()] ^ i as u8);
    }
    v
}

#[test]
fn empty_list() {
    let l = SkipList::new();
    assert_eq!(l.len(), 0);
    let mut it = Iter::new(&l);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"anything");
    assert!(!it.valid());
    it.seek_for_prev(b"anything");
    assert!(!it.valid());
    assert_eq!(it.key(), b"");
    assert!(l.get_ge(b"x").is_none());
}

/// Every key of `l` in list order, checked against `want` (sorted).
fn check_contents(l: &SkipList, want: &BTreeSet<K>) {
    let mut it = Iter::new(l);
    it.seek_to_first();
    let mut got = Vec::new();
    while it.valid() {
        assert_eq!(it.value(), value_for(it.key()).as_slice());
        got.push(K(it.key().to_vec()));
        it.next();
    }
    assert_eq!(got, want.iter().cloned().collect::<Vec<_>>());
    assert_eq!(l.len(), want.len());
}

/// Ascending runs use the thread's finger (its last insert), also when
/// two lists are filled in turn, when a run turns descending or jumps
/// back, and when another thread inserts in between: every level must
/// still be sorted and complete.
#[test]
fn ascending_runs_through_the_finger() {
    // Miri runs this ~1000x slower: fewer keys there.
    let n: u32 = if cfg!(miri) { 40 } else { 2000 };
    let (a, b) = (SkipList::new(), SkipList::new());
    let (mut wa, mut wb) = (BTreeSet::new(), BTreeSet::new());
    let put = |l: &SkipList, w: &mut BTreeSet<K>, k: u32| {
        let uk = k.to_be_bytes();
        let t = pack_trailer(u64::from(k), 1);
        let ik = ikey(&uk, t);
        l.insert(&uk, t, &value_for(&ik));
        w.insert(K(ik));
    };
    for k in 0..n {
        put(&a, &mut wa, k * 4);
        put(&b, &mut wb, k * 4 + 1);
    }
    for k in (0..n / 4).rev() {
        put(&a, &mut wa, k * 4 + 2); // descending: no finger
    }
    for k in 0..n / 4 {
        put(&a, &mut wa, 4 * n + k * 3); // jumps past the end, then ascends
        put(&a, &mut wa, k * 4 + 3); // back into the middle
    }
    check_contents(&a, &wa);
    check_contents(&b, &wb);
    // Another thread inserts ascending keys between this thread's.
    let a = Arc::new(a);
    let other = {
        let a = Arc::clone(&a);
        std::thread::spawn(move || {
            let mut w = BTreeSet::new();
            for k in 0..n {
                let uk = (100_000 + k * 2 + 1).to_be_bytes();
                let t = pack_trailer(1, 1);
                let ik = ikey(&uk, t);
                a.insert(&uk, t, &value_for(&ik));
                w.insert(K(ik));
            }
            w
        })
    };
    for k in 0..n {
        put(&a, &mut wa, 100_000 + k * 2);
    }
    wa.extend(other.join().unwrap());
    check_contents(&a, &wa);
    // Every level is sorted (a node linked at a level is after its
    // predecessor there).
    for level in 0..MAX_HEIGHT {
        let mut x = a.head;
        // SAFETY: walking published nodes of `a` at `level`.
        unsafe {
            loop {
                let n = x.next(level);
                if n.is_null() {
                    break;
                }
                if x != a.head {
                    assert_eq!(compare_internal(x.key(), n.key()), CmpOrdering::Less);
                }
                x = n;
            }
        }
    }
}

#[test]
fn randomized_against_model() {
    let seed: u64 = rand::random();
    println!("seed = {seed}");
    let mut rng = SmallRng::seed_from_u64(seed);
    let l = SkipList::with_arena(Arena::with_chunk_size(4096));
    let mut model = BTreeSet::new();
    let n = if cfg!(miri) { 60 } else { 2000 };
    for _ in 0..n {
        let uk: Vec<u8> = (0..rng.gen_range(0..6))
            .map(|_| rng.gen_range(b'a'..b'e'))
            .collect();
        let t = pack_trailer(rng.gen_range(0..1000), rng.gen_range(0..2));
        let k = ikey(&uk, t);
        if model.insert(K(k.clone())) {
            l.insert(&uk, t, &value_for(&k));
        }
    }
    assert_eq!(l.len(), model.len());
    let keys: Vec<Vec<u8>> = model.iter().map(|k| k.0.clone()).collect();
    // Forward and backward scans.
    let mut it = Iter::new(&l);
    it.seek_to_first();
    for k in &keys {
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        assert_eq!(it.value(), &value_for(k)[..]);
        it.next();
    }
    assert!(!it.valid());
    it.seek_to_last();
    for k in keys.iter().rev() {
        assert_eq!(it.key(), &k[..]);
        it.prev();
    }
    assert!(!it.valid());
    // Seeks to random targets.
    for _ in 0..n {
        let uk: Vec<u8> = (0..rng.gen_range(0..6))
            .map(|_| rng.gen_range(b'a'..b'e'))
            .collect();
        let t = ikey(
            &uk,
            pack_trailer(rng.gen_range(0..1000), rng.gen_range(0..=255)),
        );
        let ge = model.range(K(t.clone())..).next().map(|k| k.0.clone());
        it.seek(&t);
        assert_eq!(it.valid().then(|| it.key().to_vec()), ge, "seek");
        assert_eq!(l.get_ge(&t).map(|e| e.0.to_vec()), ge);
        let le = model
            .range(..=K(t.clone()))
            .next_back()
            .map(|k| k.0.clone());
        it.seek_for_prev(&t);
        assert_eq!(it.valid().then(|| it.key().to_vec()), le, "seek_for_prev");
    }
}

#[test]
#[cfg_attr(miri, ignore)] // statistics need many samples
fn heights_are_spread() {
    let l = SkipList::new();
    let mut counts = [0usize; MAX_HEIGHT + 1];
    for _ in 0..40_000 {
        counts[l.random_height()] += 1;
    }
    // About 3/4 at height 1, 3/16 at height 2.
    assert!((28_000..32_000).contains(&counts[1]), "{counts:?}");
    assert!((6_500..8_500).contains(&counts[2]), "{counts:?}");
    assert_eq!(counts[0], 0);
}

/// One writer inserts while readers scan: every scan is strictly sorted,
/// every entry intact, and a reader never loses an entry it saw before.
#[test]
fn concurrent_readers_one_writer() {
    concurrent(1, 3);
}

/// Several CAS inserters at once (plus readers).
#[test]
fn concurrent_writers() {
    concurrent(3, 1);
}

fn concurrent(writers: usize, readers: usize) {
    let seed: u64 = rand::random();
    println!("seed = {seed}");
    let per_writer = if cfg!(miri) { 40 } else { 20_000 };
    let list = Arc::new(SkipList::with_arena(Arena::with_chunk_size(1 << 14)));
    let done = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for r in 0..readers {
        let list = Arc::clone(&list);
        let done = Arc::clone(&done);
        handles.push(std::thread::spawn(move || {
            let mut rng = SmallRng::seed_from_u64(seed ^ (r as u64 + 100));
            let mut last_len = 0;
            let mut rounds = 0;
            while !done.load(Ordering::Acquire) || rounds < 2 {
                rounds += 1;
                let mut it = Iter::new(Arc::clone(&list));
                let mut n = 0;
                let mut prev: Option<Vec<u8>> = None;
                if rng.gen_bool(0.5) {
                    it.seek_to_first();
                    while it.valid() {
                        let (k, v) = it.entry();
                        assert_eq!(v, &value_for(k)[..], "torn entry");
                        if let Some(p) = &prev {
                            assert_eq!(compare_internal(p, k), CmpOrdering::Less);
                        }
                        prev = Some(k.to_vec());
                        n += 1;
                        it.next();
                    }
                    assert!(n >= last_len, "lost entries: {n} < {last_len}");
                    last_len = n;
                } else {
                    let target = ikey(&rng.gen::<[u8; 2]>(), 0);
                    it.seek(&target);
                    for _ in 0..20 {
                        if !it.valid() {
                            break;
                        }
                        let (k, v) = it.entry();
                        assert_eq!(v, &value_for(k)[..], "torn entry");
                        match &prev {
                            // The seek result is >= target ...
                            None => assert_ne!(compare_internal(k, &target), CmpOrdering::Less),
                            // ... and `prev` walks down strictly.
                            Some(p) => assert_eq!(compare_internal(p, k), CmpOrdering::Greater),
                        }
                        prev = Some(k.to_vec());
                        it.prev();
                    }
                }
            }
        }));
    }
    let mut writer_handles = Vec::new();
    for w in 0..writers {
        let list = Arc::clone(&list);
        writer_handles.push(std::thread::spawn(move || {
            let mut rng = SmallRng::seed_from_u64(seed ^ w as u64);
            let mut mine = Vec::new();
            for i in 0..per_writer {
                let uk: Vec<u8> = (0..rng.gen_range(1..12)).map(|_| rng.gen()).collect();
                // Distinct across writers: the seqno encodes (writer, i).
                let t = pack_trailer((i * writers + w) as u64, 1);
                let k = ikey(&uk, t);
                list.insert(&uk, t, &value_for(&k));
                mine.push(k);
            }
            mine
        }));
    }
    let mut all = BTreeSet::new();
    for h in writer_handles {
        for k in h.join().unwrap() {
            all.insert(K(k));
        }
    }
    done.store(true, Ordering::Release);
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(list.len(), writers * per_writer);
    let mut it = Iter::new(&*list);
    it.seek_to_first();
    for k in &all {
        assert_eq!(it.key(), &k.0[..]);
        it.next();
    }
    assert!(!it.valid());
}
