use std::path::Path;
use std::sync::Weak;

use super::*;
use crate::base::{make_internal_key, ValueKind};
use crate::fs::MemFileSystem;
use crate::iter::InternalIterator;
use crate::sst::{TableBuilder, TableOptions};

const DIR: &str = "/db";

/// A file system holding tables 1..=n, each with 50 keys.
fn tables(n: u64) -> Arc<dyn FileSystem> {
    let fs: Arc<dyn FileSystem> = Arc::new(MemFileSystem::new());
    fs.create_dir_all(Path::new(DIR)).unwrap();
    for number in 1..=n {
        let name = table_file_name(number);
        let file = fs.create(&Path::new(DIR).join(&name)).unwrap();
        let mut b = TableBuilder::new(file, name, number, TableOptions::default());
        for i in 0..50u64 {
            let mut k = Vec::new();
            make_internal_key(
                &mut k,
                format!("k{number}-{i:03}").as_bytes(),
                1,
                ValueKind::Value as u8,
            );
            b.add(&k, b"v").unwrap();
        }
        b.finish().unwrap();
    }
    fs
}

fn cache(fs: &Arc<dyn FileSystem>, max_open_files: i32) -> TableCache {
    TableCache::new(
        PathBuf::from(DIR),
        Arc::clone(fs),
        None,
        false,
        max_open_files,
    )
}

fn count(t: &Arc<Table>) -> usize {
    let mut it = t.iter(false);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    n
}

#[test]
fn capacity_is_max_open_files_minus_ten() {
    let fs = tables(1);
    assert_eq!(cache(&fs, -1).capacity(), None);
    assert_eq!(cache(&fs, 20).capacity(), Some(10));
    assert_eq!(cache(&fs, 200).capacity(), Some(190));
    assert_eq!(effective_max_open_files(-1), -1);
    assert_eq!(effective_max_open_files(20), 20);
    let limit = fd_limit().unwrap_or(u64::MAX);
    let huge = effective_max_open_files(i32::MAX) as u64;
    assert!(huge <= limit.max(20), "{huge} > fd limit {limit}");
}

#[test]
fn bounded_cache_keeps_the_most_recent_readers_and_closes_the_rest() {
    let fs = tables(4);
    let c = cache(&fs, 12); // capacity 2
    let weak = |n: u64| -> Weak<Table> { Arc::downgrade(&c.get(&numbered(n)).unwrap()) };
    let (w1, w2) = (weak(1), weak(2));
    assert_eq!(c.num_open(), 2);
    c.get(&numbered(1)).unwrap(); // 2 is now the least recently used
    let w3 = weak(3);
    assert_eq!(c.num_open(), 2);
    assert!(
        w2.upgrade().is_none(),
        "evicted, unused: dropped (file closed)"
    );
    assert!(w1.upgrade().is_some() && w3.upgrade().is_some());
    // Reopening an evicted table gives a working reader again.
    assert_eq!(count(&c.get(&numbered(2)).unwrap()), 50);
    assert!(w1.upgrade().is_none(), "1 was the least recently used");
    assert_eq!(c.num_open(), 2);
}

#[test]
fn evicted_reader_in_use_stays_valid_until_dropped() {
    let fs = tables(4);
    let c = cache(&fs, 11); // capacity 1
    let held = c.get(&numbered(1)).unwrap();
    let mut it = held.iter(false);
    it.seek_to_first();
    for n in 2..=4 {
        c.get(&numbered(n)).unwrap();
    }
    assert_eq!(c.num_open(), 1);
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(n, 50);
    let w = Arc::downgrade(&held);
    drop(it);
    drop(held);
    assert!(w.upgrade().is_none(), "the last user closed it");
}

#[test]
fn eviction_frees_reader_memory_and_keeps_counters() {
    let fs = tables(6);
    let c = cache(&fs, 13); // capacity 3
    let mut blocks_read = 0;
    let one = c.get(&numbered(1)).unwrap().memory_usage();
    assert!(one > 0);
    for n in 1..=6 {
        count(&c.get(&numbered(n)).unwrap());
        let now = c.sum_stats().blocks_read;
        assert!(
            now > blocks_read,
            "counters only grow: {now} after {blocks_read}"
        );
        blocks_read = now;
        let open = n.min(3) as usize;
        assert_eq!(c.num_open(), open);
        // Equal-shaped tables: the cached readers' memory, no more.
        assert_eq!(c.readers_memory(), open * one);
    }
    c.evict(6);
    assert_eq!(c.num_open(), 2);
    assert_eq!(c.sum_stats().blocks_read, blocks_read);
}

#[test]
fn only_the_unbounded_cache_pins_readers_in_file_meta() {
    let fs = tables(1);
    let f = FileMeta {
        number: 1,
        ..FileMeta::default()
    };
    let bounded = cache(&fs, 20);
    assert!(matches!(bounded.table_of(&f).unwrap(), Cow::Owned(_)));
    assert!(f.table.get().is_none());
    let unbounded = cache(&fs, -1);
    assert!(matches!(unbounded.table_of(&f).unwrap(), Cow::Borrowed(_)));
    assert!(f.table.get().is_some());
}

#[test]
fn compaction_inputs_open_a_sorted_level_one_table_at_a_time() {
    let fs = tables(5);
    // Unbounded, so `num_open` counts every table opened so far.
    let c = Arc::new(cache(&fs, -1));
    let meta = |n: u64| {
        let ik = |i: u64| {
            let mut k = Vec::new();
            let u = format!("k{n}-{i:03}");
            make_internal_key(&mut k, u.as_bytes(), 1, ValueKind::Value as u8);
            k
        };
        Arc::new(FileMeta {
            number: n,
            smallest: ik(0),
            largest: ik(49),
            ..FileMeta::default()
        })
    };
    // Level 1 given out of order, and one L0 file.
    let l1: Vec<Arc<FileMeta>> = [4, 2, 3, 5].into_iter().map(meta).collect();
    let l0 = vec![meta(1)];
    let mut inputs = c
        .compaction_inputs(&[(0, &l0), (1, &l1)], ReadaheadPolicy::Fixed(4096))
        .unwrap();
    assert_eq!(inputs.len(), 2, "one per L0 file, one for level 1");
    assert_eq!(c.num_open(), 1, "only the L0 table is opened up front");
    let mut level = inputs.pop().unwrap();
    level.seek_to_first();
    let mut keys = Vec::new();
    let mut opened = Vec::new();
    while level.valid() {
        let k = level.key();
        keys.push(String::from_utf8_lossy(&k[..k.len() - 8]).into_owned());
        opened.push(c.num_open());
        level.next();
    }
    level.status().unwrap();
    assert_eq!(keys.len(), 200);
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "level order");
    assert_eq!(keys[0], "k2-000");
    // One more table opened every 50 keys, when the run reaches it.
    let want: Vec<usize> = (0..200).map(|i| 2 + i / 50).collect();
    assert_eq!(opened, want);
}

/// The metadata `get` needs of table `n` (its number alone).
fn numbered(n: u64) -> FileMeta {
    FileMeta {
        number: n,
        ..FileMeta::default()
    }
}
