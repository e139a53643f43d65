use super::*;
use crate::base::{make_internal_key, ValueKind};

fn gp(lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
    let mut a = Vec::new();
    make_internal_key(&mut a, lo.as_bytes(), 1, ValueKind::Value as u8);
    let mut b = Vec::new();
    make_internal_key(&mut b, hi.as_bytes(), 1, ValueKind::Value as u8);
    Arc::new(FileMeta::new(1, size, a, b, 1, 1, 1, 0))
}

#[test]
fn grandparent_cutter_stops_after_the_overlap_limit() {
    let files = vec![
        gp("a", "b", 10),
        gp("c", "d", 10),
        gp("e", "f", 10),
        gp("g", "h", 10),
    ];
    // Without alignment only the overlap limit cuts: output + overlap
    // over 25.
    let mut c = GrandparentCutter::new(&files, 25, 1000, false);
    assert!(!c.should_stop_before(b"a0", None)); // inside a..b: 10
    assert!(!c.should_stop_before(b"c0", Some(1))); // c..d: 20 + 1
    assert!(c.should_stop_before(b"e0", Some(1))); // e..f: 30 + 1 > 25
    c.reset();
    assert!(!c.should_stop_before(b"e1", Some(0))); // still in e..f: 10
    assert!(!c.should_stop_before(b"g0", Some(1))); // g..h: 20 + 1
    assert!(c.should_stop_before(b"z", Some(6))); // past g..h: 20 + 6
                                                  // The first key never counts the files before it; no crossing, no cut.
    let mut c = GrandparentCutter::new(&files, 15, 1000, false);
    assert!(!c.should_stop_before(b"z", Some(100)));
    assert!(!c.should_stop_before(b"zz", Some(100)));
}

#[test]
fn aligned_outputs_end_at_grandparent_boundaries_past_half_the_target() {
    let files = vec![gp("b", "c", 10), gp("e", "f", 10), gp("h", "i", 10)];
    let mut c = GrandparentCutter::new(&files, u64::MAX, 100, true);
    assert!(!c.should_stop_before(b"a", None)); // gap before b..c
                                                // Entering b..c crosses one boundary; the output is small.
    assert!(!c.should_stop_before(b"b0", Some(10)));
    // Inside the same file: no boundary, never cut here.
    assert!(!c.should_stop_before(b"b5", Some(99)));
    // Leaving b..c with 2 boundaries seen: threshold 50 + 2 x 5 = 60%.
    assert!(!c.should_stop_before(b"d", Some(59)));
    assert!(!c.should_stop_before(b"d0", Some(0)));
    // Entering e..f (3 boundaries: 65%) with 70 bytes written: cut.
    assert!(c.should_stop_before(b"e0", Some(70)));
    c.reset();
    // The new output starts inside e..f; leaving it is its first
    // boundary: threshold 55%.
    assert!(!c.should_stop_before(b"g", Some(54)));
    assert!(c.should_stop_before(b"h", Some(60)));
    // Without alignment none of these cut.
    let mut c = GrandparentCutter::new(&files, u64::MAX, 100, false);
    for (k, size) in [
        (&b"a"[..], None),
        (b"b0", Some(10)),
        (b"d", Some(95)),
        (b"e0", Some(99)),
    ] {
        assert!(!c.should_stop_before(k, size));
    }
}

#[test]
fn aligned_outputs_end_before_skipping_over_a_large_grandparent() {
    // The output is small (far below 50%), but the next key jumps over
    // the whole of c..d (20 bytes > 100 / 8): ending here keeps c..d out
    // of the next compaction of this output.
    let files = vec![gp("a", "b", 5), gp("c", "d", 20), gp("f", "g", 5)];
    let mut c = GrandparentCutter::new(&files, u64::MAX, 100, true);
    assert!(!c.should_stop_before(b"a0", None));
    assert!(c.should_stop_before(b"f0", Some(1)));
    // A skipped file of 1/8 of the target or less does not cut.
    let files = vec![gp("a", "b", 5), gp("c", "d", 6), gp("f", "g", 5)];
    let mut c = GrandparentCutter::new(&files, u64::MAX, 100, true);
    assert!(!c.should_stop_before(b"a0", None));
    assert!(!c.should_stop_before(b"f0", Some(1)));
}

/// Internal keys `name(i)` for `i` in `0..n` at sequence 5, with values
/// of `value_len` bytes.
fn entries(n: u32, name: impl Fn(u32) -> String, value_len: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let mut k = Vec::new();
            make_internal_key(&mut k, name(i).as_bytes(), 5, ValueKind::Value as u8);
            (k, vec![b'v'; value_len])
        })
        .collect()
}

/// An in-memory file system holding the empty directory `/db`.
fn mem_db_dir() -> (Arc<dyn FileSystem>, &'static Path) {
    let fs: Arc<dyn FileSystem> = Arc::new(crate::fs::MemFileSystem::new());
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    (fs, dir)
}

/// Writes 2,000 keys (`k0000`..`k1999`, 100-byte values) through
/// `write_outputs_cut` with grandparents every 150 keys and a target of
/// about 500 keys per output; returns each output's user-key range.
fn outputs_over_grandparents(align: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    use crate::iter::level::tests::VecIter;
    let key = |i: u32| format!("k{i:04}");
    let entries = entries(2000, key, 100);
    // Grandparent files [k0000, k0149], [k0150, k0299], ...
    let gps: Vec<Arc<FileMeta>> = (0..2000 / 150 + 1)
        .map(|j| gp(&key(j * 150), &key(j * 150 + 149), 150 * 120))
        .collect();
    let (fs, dir) = mem_db_dir();
    let shutting_down = AtomicBool::new(false);
    let mut next = 10;
    let mut alloc = || {
        next += 1;
        next
    };
    let target = 500 * 120;
    let mut spec = OutputSpec {
        file_opts: FileOptions::default(),
        rate_limit: None,
        range_dels: Vec::new(),
        memory: None,
        builder_memory_limit: usize::MAX,
        fs: &fs,
        dir,
        table_opts: TableOptions::default(),
        target_file_size: target,
        new_file_number: &mut alloc,
        shutting_down: &shutting_down,
        bytes_per_sync: 0,
        blob: None,
        partitioner: None,
        streams: None,
    };
    let mut input = VecIter::new(entries);
    input.seek_to_first();
    let mut filter = EntryFilter::new(Vec::new(), None);
    let mut cutter = GrandparentCutter::new(&gps, u64::MAX, target, align);
    let out = write_outputs_cut(&mut input, &mut filter, &mut spec, Some(&mut cutter)).unwrap();
    out.files
        .iter()
        .map(|f| {
            (
                f.smallest_user_key().to_vec(),
                f.largest_user_key().to_vec(),
            )
        })
        .collect()
}

#[test]
fn aligned_compaction_outputs_end_where_grandparents_end() {
    let gp_end = |k: &[u8]| {
        let n: u32 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
        n % 150 == 149
    };
    let aligned = outputs_over_grandparents(true);
    assert!(aligned.len() > 1);
    // Every output but the last ends at a grandparent's last key, so no
    // grandparent file is split between two outputs.
    for (_, largest) in &aligned[..aligned.len() - 1] {
        assert!(
            gp_end(largest),
            "output ends at {:?}",
            String::from_utf8_lossy(largest)
        );
    }
    // Cut by size alone, outputs end wherever the target is reached.
    let unaligned = outputs_over_grandparents(false);
    assert!(unaligned[..unaligned.len() - 1]
        .iter()
        .any(|(_, l)| !gp_end(l)));
    // Both cover every key, in order, without overlap.
    for outs in [&aligned, &unaligned] {
        assert_eq!(outs.first().unwrap().0, b"k0000");
        assert_eq!(outs.last().unwrap().1, b"k1999");
        assert!(outs.windows(2).all(|w| w[0].1 < w[1].0));
    }
}

/// Under a memory budget an output is cut once its builder holds the
/// limit (the filter's key hashes grow 8 bytes a key), and the builder's
/// charge is released after the run.
#[test]
fn outputs_are_cut_at_the_builder_memory_limit_and_charged_meanwhile() {
    use crate::iter::level::tests::VecIter;
    use crate::memory::{Ledger, Part};
    let entries = entries(40_000, |i| format!("k{i:06}"), 8);
    let (fs, dir) = mem_db_dir();
    let shutting_down = AtomicBool::new(false);
    let mut next = 10;
    let mut alloc = || {
        next += 1;
        next
    };
    let ledger = Ledger::new(0);
    let limit = 128 << 10;
    let mut spec = OutputSpec {
        file_opts: FileOptions::default(),
        rate_limit: None,
        range_dels: Vec::new(),
        memory: Some(ledger.meter(Part::Buffers)),
        builder_memory_limit: limit,
        fs: &fs,
        dir,
        table_opts: TableOptions {
            bloom_bits_per_key: 10.0,
            ..TableOptions::default()
        },
        target_file_size: u64::MAX,
        new_file_number: &mut alloc,
        shutting_down: &shutting_down,
        bytes_per_sync: 0,
        blob: None,
        partitioner: None,
        streams: None,
    };
    let mut input = VecIter::new(entries);
    input.seek_to_first();
    let mut filter = EntryFilter::new(Vec::new(), None);
    let out = write_outputs(&mut input, &mut filter, &mut spec).unwrap();
    // 40,000 hashes are 320 KB: more than two outputs of at most
    // 128 KiB of builder each (the hash vector doubles: 8,192 keys).
    assert!(out.files.len() >= 3, "{} outputs", out.files.len());
    let keys: u64 = out.files.iter().map(|f| f.num_entries).sum();
    assert_eq!(keys, 40_000);
    for f in &out.files[..out.files.len() - 1] {
        assert!(
            f.num_entries <= 16_384,
            "{} keys in one output",
            f.num_entries
        );
    }
    assert_eq!(ledger.get(Part::Buffers), 0, "released after the run");
}
